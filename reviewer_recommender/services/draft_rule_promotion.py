"""A draft's own rules listed for the page and promoted to venue rules
(:mod:`reviewer_recommender.services.draft_rules` keeps and reads them): :func:`promote`
turns a draft's rules (all or some) into venue rules, an ``unpin`` removing the venue pin,
audited."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete
from sqlalchemy.orm import Session

from reviewer_recommender.errors import InvalidRequest, NotFound, StateConflict
from reviewer_recommender.services.draft_rules import (
    FORBID,
    KINDS,
    MAX_LOAD,
    PIN,
    UNPIN,
    rules,
)
from reviewer_recommender.services.limits import resolve_limits
from reviewer_recommender.storage.models import (
    AssignmentRow,
    Conflict,
    DraftRule,
    Pin,
    ReviewerMaxLoad,
)
from reviewer_recommender.storage.names import lookup
from reviewer_recommender.storage.repository import audit


def _out(session: Session, row: AssignmentRow, items: list[DraftRule]) -> list[dict[str, Any]]:
    names = lookup(
        session,
        row.venue_id,
        [i.paper_id for i in items if i.paper_id],
        [i.reviewer_id for i in items],
    )
    venue_max = resolve_limits(session, row.venue_id, {**(row.parameters or {}), "pool": row.pool})
    out = []
    for rule in items:
        item: dict[str, Any] = {
            "kind": rule.kind,
            "paper_id": rule.paper_id or None,
            "paper_title": names.title(rule.paper_id) if rule.paper_id else None,
            "reviewer_id": rule.reviewer_id,
            "reviewer_name": names.name(rule.reviewer_id),
            "value": rule.value,
            "venue_value": venue_max.max_of(rule.reviewer_id) if rule.kind == MAX_LOAD else None,
            "reason": rule.reason,
            "created_by": rule.created_by,
            "created_at": rule.created_at,
        }
        out.append(item)
    return out


def list_rules(session: Session, row: AssignmentRow) -> dict[str, Any]:
    """The run's own rules (``DraftRulesOut``): each with what it is at venue level."""
    items = rules(session, row.id)
    counts = {kind: sum(1 for i in items if i.kind == kind) for kind in KINDS}
    return {
        "assignment_id": row.id,
        "number": row.number,
        "items": _out(session, row, items),
        "counts": counts,
        "total": len(items),
    }


@dataclass(frozen=True)
class RuleKey:
    kind: str
    paper_id: str | None
    reviewer_id: str

    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.paper_id or "", self.reviewer_id)


def promote(
    session: Session,
    row: AssignmentRow,
    actor: str,
    chosen: Sequence[RuleKey] | None = None,
    *,
    reason: str = "",
) -> dict[str, Any]:
    """Make the run's own rules (``chosen``, or all) venue rules: pins, forbids (a forbid
    replaces a venue pin of its pair and a pin a venue forbid, as the edits do), max loads
    of the run's pool, and lifted pins (the venue pin is removed); the run then holds them
    as venue rules. Audited; nothing committed.
    422 for an empty choice, 404 for a rule the run does not have."""
    existing = {(r.kind, r.paper_id, r.reviewer_id): r for r in rules(session, row.id)}
    if chosen is None:
        picked = list(existing.values())
    else:
        if not chosen:
            raise InvalidRequest("validation_error", "name the rules to promote, or none for all")
        missing = [c for c in chosen if c.key() not in existing]
        if missing:
            first = missing[0]
            raise NotFound(
                "not_found",
                f"run {row.id} has no {first.kind} rule for "
                f"({first.paper_id or ''}, {first.reviewer_id})",
            )
        picked = [existing[c.key()] for c in dict.fromkeys(chosen)]
    if not picked:
        raise StateConflict("nothing_to_promote", f"run {row.id} has no rules of its own")
    venue_id = row.venue_id
    done = dict.fromkeys(KINDS, 0)
    for rule in picked:
        p, r = rule.paper_id, rule.reviewer_id
        if rule.kind == PIN:
            session.execute(
                delete(Conflict).where(
                    Conflict.venue_id == venue_id,
                    Conflict.paper_id == p,
                    Conflict.reviewer_id == r,
                    Conflict.source == FORBID,
                )
            )
            if session.get(Pin, (venue_id, p, r)) is None:
                session.add(Pin(venue_id=venue_id, paper_id=p, reviewer_id=r, created_by=actor))
        elif rule.kind == FORBID:
            session.execute(
                delete(Pin).where(Pin.venue_id == venue_id, Pin.paper_id == p, Pin.reviewer_id == r)
            )
            if session.get(Conflict, (venue_id, p, r, FORBID)) is None:
                session.add(
                    Conflict(
                        venue_id=venue_id,
                        paper_id=p,
                        reviewer_id=r,
                        source=FORBID,
                        reason=rule.reason or f"promoted from run {row.id} by {actor}",
                    )
                )
        elif rule.kind == UNPIN:
            session.execute(
                delete(Pin).where(Pin.venue_id == venue_id, Pin.paper_id == p, Pin.reviewer_id == r)
            )
        else:
            stored = session.get(ReviewerMaxLoad, (venue_id, row.pool, r))
            if stored is None:
                session.add(
                    ReviewerMaxLoad(
                        venue_id=venue_id, pool=row.pool, reviewer_id=r, max_load=rule.value or 0
                    )
                )
            else:
                stored.max_load = int(rule.value or 0)
        done[rule.kind] += 1
        session.delete(rule)
    session.flush()
    audit(
        session,
        venue_id,
        actor,
        "draft_rules.promote",
        assignment_id=row.id,
        number=row.number,
        pins=done[PIN],
        forbids=done[FORBID],
        max_loads=done[MAX_LOAD],
        unpins=done[UNPIN],
        reason=reason,
    )
    return {"assignment_id": row.id, "promoted": done, "total": sum(done.values())}
