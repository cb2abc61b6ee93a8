"""A draft's own rules: the pins and forbids its edits make, the max loads a
re-assignment sets and the venue pins it lifts, kept with that run
(:class:`~reviewer_recommender.storage.models.DraftRule`) until a chair promotes them to
venue rules.

Two levels, one reading:

- **venue rules** (pins, forbid conflicts, stored max loads) hold in every solve and every
  run of the venue;
- **draft rules** hold in their run only: its checks, its previews, a re-solve of it (which
  copies them into the new run). Another draft, a new solve or a perturbed run never sees
  them.

A draft edit changes the draft's rules only; it never lifts a venue rule (409
``venue_rule``: lift it at venue level first). Only a re-assignment lifts venue pins in its
own draft (an ``unpin`` rule): those of the reviewers it withdraws and of the pairs it
removes, which the draft cannot hold. Listing and promoting them to venue rules (all or
some; an ``unpin`` removes the venue pin), audited: :mod:`.draft_rule_promotion`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

import pandas as pd
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import StateConflict
from reviewer_recommender.services.edits import ConstraintEdit
from reviewer_recommender.services.limits import Limits, resolve_limits
from reviewer_recommender.storage.models import (
    AssignmentRow,
    Conflict,
    DraftRule,
    Pin,
)
from reviewer_recommender.storage.repository import pool_members

Pair = tuple[str, str]
PIN, FORBID, MAX_LOAD, UNPIN = "pin", "forbid", "max_load", "unpin"
KINDS = (PIN, FORBID, MAX_LOAD, UNPIN)
CHUNK = 500


# ---- reading --------------------------------------------------------------------------------


def rules(session: Session, assignment_id: int, kind: str | None = None) -> list[DraftRule]:
    query = select(DraftRule).where(DraftRule.assignment_id == assignment_id)
    if kind is not None:
        query = query.where(DraftRule.kind == kind)
    return list(
        session.scalars(query.order_by(DraftRule.kind, DraftRule.paper_id, DraftRule.reviewer_id))
    )


def draft_pairs(session: Session, assignment_id: int, kind: str) -> pd.DataFrame:
    """The run's own ``kind`` (pin / forbid) pairs: ``paper_id, reviewer_id, reason``."""
    rows = session.execute(
        select(DraftRule.paper_id, DraftRule.reviewer_id, DraftRule.reason).where(
            DraftRule.assignment_id == assignment_id, DraftRule.kind == kind
        )
    ).all()
    return pd.DataFrame(rows, columns=["paper_id", "reviewer_id", "reason"])


def draft_max_loads(session: Session, assignment_id: int) -> dict[str, int]:
    """The run's own reviewer max loads (over the venue's)."""
    return {
        str(r): int(v or 0)
        for r, v in session.execute(
            select(DraftRule.reviewer_id, DraftRule.value).where(
                DraftRule.assignment_id == assignment_id, DraftRule.kind == MAX_LOAD
            )
        )
    }


@contextmanager
def limits_held(session: Session, row: AssignmentRow) -> Iterator[None]:
    """Within: :func:`run_limits` of ``row`` is read once, for changes that touch no limit
    (a bulk file's pairs, pins and forbids: each row's checks read the same limits)."""
    key = ("run-limits", row.id)
    session.info[key] = run_limits(session, row)
    try:
        yield
    finally:
        session.info.pop(key, None)


def rule_of(session: Session, row: AssignmentRow, kind: str, pair: Pair) -> DraftRule | None:
    return session.get(DraftRule, (row.id, kind, pair[0], pair[1]))


def run_limits(session: Session, row: AssignmentRow) -> Limits:
    """The demand and loads ``row`` is held to now: its parameters, its pool's stored venue
    tables, then its own max loads (a re-assignment's withdrawals) over those."""
    held: Limits | None = session.info.get(("run-limits", row.id))
    if held is not None:
        return held
    limits = resolve_limits(session, row.venue_id, {**(row.parameters or {}), "pool": row.pool})
    own = draft_max_loads(session, row.id)
    if not own:
        return limits
    return replace(limits, max_load={**limits.max_load, **own}, draft_max_load=own)


def lifted_pins(session: Session, assignment_id: int) -> set[Pair]:
    """The venue pins run ``assignment_id`` lifts (its ``unpin`` rules)."""
    return {
        (str(p), str(r))
        for p, r in session.execute(
            select(DraftRule.paper_id, DraftRule.reviewer_id).where(
                DraftRule.assignment_id == assignment_id, DraftRule.kind == UNPIN
            )
        )
    }


def without_lifted(session: Session, assignment_id: int, pins: pd.DataFrame) -> pd.DataFrame:
    """``pins`` (``paper_id, reviewer_id`` rows of venue pins) less those run
    ``assignment_id`` lifts."""
    lifted = lifted_pins(session, assignment_id)
    if not lifted or not len(pins):
        return pins
    keep = [
        (str(p), str(r)) not in lifted
        for p, r in zip(pins["paper_id"], pins["reviewer_id"], strict=True)
    ]
    return pins[keep]


def venue_pin_holds(session: Session, row: AssignmentRow, pair: Pair) -> bool:
    """Whether a venue pin of ``pair`` holds in ``row`` (one the run has not lifted)."""
    return (
        session.get(Pin, (row.venue_id, *pair)) is not None
        and rule_of(session, row, UNPIN, pair) is None
    )


def pins_with_draft(session: Session, row: AssignmentRow) -> pd.DataFrame:
    """The pins ``row`` must hold: the venue's (of its pool) less those it lifts, and its
    own (``paper_id, reviewer_id``, sorted)."""
    members = pool_members(row.venue_id, row.pool)
    venue = session.execute(
        select(Pin.paper_id, Pin.reviewer_id).where(
            Pin.venue_id == row.venue_id, Pin.reviewer_id.in_(members)
        )
    ).all()
    lifted = lifted_pins(session, row.id)
    own = session.execute(
        select(DraftRule.paper_id, DraftRule.reviewer_id).where(
            DraftRule.assignment_id == row.id, DraftRule.kind == PIN
        )
    ).all()
    held = [(p, r) for p, r in venue if (str(p), str(r)) not in lifted]
    frame = pd.DataFrame([*held, *own], columns=["paper_id", "reviewer_id"])
    return frame.drop_duplicates().sort_values(["paper_id", "reviewer_id"]).reset_index(drop=True)


def own_pairs(session: Session, row: AssignmentRow, kind: str, pairs: Iterable[Pair]) -> set[Pair]:
    """Which of ``pairs`` the run holds as its own ``kind`` rule."""
    wanted = set(pairs)
    papers = sorted({p for p, _ in wanted})
    found: set[Pair] = set()
    for start in range(0, len(papers), CHUNK):
        for p, r in session.execute(
            select(DraftRule.paper_id, DraftRule.reviewer_id).where(
                DraftRule.assignment_id == row.id,
                DraftRule.kind == kind,
                DraftRule.paper_id.in_(papers[start : start + CHUNK]),
            )
        ):
            if (p, r) in wanted:
                found.add((p, r))
    return found


def own_forbid_rows(
    session: Session, row: AssignmentRow, papers: Sequence[str]
) -> list[tuple[str, str, str, str]]:
    """The run's own forbids among ``papers`` as stored conflict rows
    ``(paper_id, reviewer_id, "forbid", reason)``."""
    found: list[tuple[str, str, str, str]] = []
    for start in range(0, len(papers), CHUNK):
        found += [
            (str(p), str(r), FORBID, reason or "")
            for p, r, reason in session.execute(
                select(DraftRule.paper_id, DraftRule.reviewer_id, DraftRule.reason).where(
                    DraftRule.assignment_id == row.id,
                    DraftRule.kind == FORBID,
                    DraftRule.paper_id.in_(list(papers[start : start + CHUNK])),
                )
            )
        ]
    return found


# ---- writing (a draft's edits) --------------------------------------------------------------


@dataclass(frozen=True)
class Stored:
    """What storing a :class:`ConstraintEdit` removed: a forbid lifted, a pin dropped
    (either relaxes the solved problem, so the solver's bound stops holding)."""

    lifted_forbid: bool
    dropped_pin: bool


def _venue_rule(kind: str, pair: Pair, reason: str) -> StateConflict:
    p, r = pair
    what = "forbidden" if kind == FORBID else "pinned"
    where = "forbids" if kind == FORBID else "pins"
    because = f" ({reason})" if reason else ""
    return StateConflict(
        "venue_rule",
        f"({p}, {r}) is {what} by a venue rule{because}, which holds in every run: a draft "
        f"edit cannot change it. Remove it from the venue's {where} first",
        kind=kind,
        paper_id=p,
        reviewer_id=r,
    )


def store_constraints(
    session: Session, row: AssignmentRow, edit: ConstraintEdit, *, actor: str, reason: str
) -> Stored:
    """Store ``edit`` (the pins and forbids an edit changes,
    :mod:`reviewer_recommender.services.edits`) as ``row``'s own rules. Refuses (409
    ``venue_rule``) to lift a venue forbid or drop a venue pin (one the run has not lifted
    already: a re-assignment's ``unpin`` rule)."""
    venue_id = row.venue_id
    lifted = dropped = False
    for pair in edit.unforbid:
        own = rule_of(session, row, FORBID, pair)
        if own is not None:
            session.delete(own)
            lifted = True
            continue
        venue = session.get(Conflict, (venue_id, *pair, FORBID))
        if venue is not None:
            raise _venue_rule(FORBID, pair, venue.reason)
    for pair in edit.unpin:
        own = rule_of(session, row, PIN, pair)
        if own is not None:
            session.delete(own)
            dropped = True
            continue
        if venue_pin_holds(session, row, pair):
            raise _venue_rule(PIN, pair, "")
    for kind, pairs, why in ((FORBID, edit.forbid, reason), (PIN, edit.pin, "")):
        for p, r in pairs:
            if rule_of(session, row, kind, (p, r)) is None:
                session.add(
                    DraftRule(
                        assignment_id=row.id,
                        kind=kind,
                        paper_id=p,
                        reviewer_id=r,
                        reason=why,
                        created_by=actor,
                    )
                )
    session.flush()
    return Stored(lifted, dropped)


def add_rule(
    session: Session,
    assignment_id: int,
    kind: str,
    paper_id: str,
    reviewer_id: str,
    *,
    actor: str,
    reason: str = "",
    value: int | None = None,
) -> None:
    """Give run ``assignment_id`` its own rule (replacing one of the same pair and kind)."""
    existing = session.get(DraftRule, (assignment_id, kind, paper_id, reviewer_id))
    if existing is not None:
        existing.value, existing.reason, existing.created_by = value, reason, actor
        return
    session.add(
        DraftRule(
            assignment_id=assignment_id,
            kind=kind,
            paper_id=paper_id,
            reviewer_id=reviewer_id,
            value=value,
            reason=reason,
            created_by=actor,
        )
    )


def drop_rule(
    session: Session, assignment_id: int, kind: str, paper_id: str, reviewer_id: str
) -> None:
    session.execute(
        delete(DraftRule).where(
            DraftRule.assignment_id == assignment_id,
            DraftRule.kind == kind,
            DraftRule.paper_id == paper_id,
            DraftRule.reviewer_id == reviewer_id,
        )
    )


# why a re-assignment's draft lifts a venue pin
LIFTED_WITHDRAWN = "reviewer withdrawn by the re-assignment"
LIFTED_REMOVED = "removed by the re-assignment"


def lift_venue_pins(
    session: Session,
    row: AssignmentRow,
    withdrawn: Sequence[str],
    removed: Sequence[Pair],
    *,
    actor: str,
) -> int:
    """Give the re-assignment draft ``row`` an ``unpin`` rule for each venue pin of its
    ``withdrawn`` reviewers and ``removed`` pairs (which it cannot hold); how many. The
    venue and every other run keep the pins."""
    lift: dict[Pair, str] = {}
    gone = sorted(set(withdrawn))
    for start in range(0, len(gone), CHUNK):
        for p, r in session.execute(
            select(Pin.paper_id, Pin.reviewer_id).where(
                Pin.venue_id == row.venue_id, Pin.reviewer_id.in_(gone[start : start + CHUNK])
            )
        ):
            lift[(str(p), str(r))] = LIFTED_WITHDRAWN
    for pair in removed:
        if pair not in lift and session.get(Pin, (row.venue_id, *pair)) is not None:
            lift[pair] = LIFTED_REMOVED
    for (p, r), why in sorted(lift.items()):
        add_rule(session, row.id, UNPIN, p, r, actor=actor, reason=why)
    session.flush()
    return len(lift)


def copy_rules(session: Session, source_id: int, target_id: int) -> int:
    """Give run ``target_id`` the rules of run ``source_id`` (a re-solve of a draft keeps the
    draft's edits); how many."""
    copied = rules(session, source_id)
    for rule in copied:
        add_rule(
            session,
            target_id,
            rule.kind,
            rule.paper_id,
            rule.reviewer_id,
            actor=rule.created_by,
            reason=rule.reason,
            value=rule.value,
        )
    session.flush()
    return len(copied)
