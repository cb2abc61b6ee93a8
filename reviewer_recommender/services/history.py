"""A draft's edit history and undo.

Every change of a draft (an edit, a bulk change) is an
:class:`reviewer_recommender.storage.models.AssignmentEdit`
holding what it did. Undo reverts the newest change not yet undone: the pairs it added
leave, the pairs it removed come back with their scores, pin flags, pins and forbids are
put back as they were, the summary is the one from before the change (its constraint
check refreshed against the venue as it is now), and the version is bumped. Repeating
undo walks further back. Pins and forbids are the draft's own rules
(:mod:`reviewer_recommender.services.draft_rules`): undo puts back exactly the rules the change
touched.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import StateConflict
from reviewer_recommender.services.audit_text import summarize
from reviewer_recommender.services.draft_rules import add_rule, drop_rule
from reviewer_recommender.services.edits import constraints_summary
from reviewer_recommender.services.publishing import claim_version, violations
from reviewer_recommender.services.runs import run_limits
from reviewer_recommender.storage.models import (
    AssignmentEdit,
    AssignmentPair,
    AssignmentRow,
    utcnow,
)
from reviewer_recommender.storage.names import Names, lookup
from reviewer_recommender.storage.repository import audit, paginate


def edit_out(entry: AssignmentEdit, names: Names, number: int | None) -> dict[str, Any]:
    """A history entry as ``EditOut``."""
    change = (
        entry.objective_after - entry.objective_before
        if entry.objective_after is not None and entry.objective_before is not None
        else None
    )
    detail = dict(entry.detail or {})
    audit_detail = {
        "paper_id": entry.paper_id,
        "reviewer_id": entry.reviewer_id,
        "reason": entry.reason,
        "number": number,
        "assignment_id": entry.assignment_id,
        "version": entry.version_after,
        "rows": entry.rows,
        **detail,
    }
    if entry.action == "swap":
        audit_detail.update(removed=entry.other_reviewer_id, added=entry.reviewer_id)
    return {
        "id": entry.id,
        "seq": entry.seq,
        "action": entry.action,
        "paper_id": entry.paper_id,
        "paper_title": names.title(entry.paper_id),
        "reviewer_id": entry.reviewer_id,
        "reviewer_name": names.name(entry.reviewer_id),
        "remove_reviewer_id": entry.other_reviewer_id,
        "remove_reviewer_name": names.name(entry.other_reviewer_id),
        "rows": entry.rows,
        "reason": entry.reason,
        "detail": detail,
        "actor": entry.actor,
        "at": entry.at,
        "version_before": entry.version_before,
        "version_after": entry.version_after,
        "objective_change": change,
        "summary": summarize(f"assignment.{entry.action}", audit_detail, names),
        "undone": entry.undone,
        "undone_at": entry.undone_at,
        "undone_by": entry.undone_by,
    }


def edits_out(
    session: Session, row: AssignmentRow, entries: list[AssignmentEdit]
) -> list[dict[str, Any]]:
    names = lookup(
        session,
        row.venue_id,
        [e.paper_id for e in entries],
        [r for e in entries for r in (e.reviewer_id, e.other_reviewer_id)],
    )
    return [edit_out(e, names, row.number) for e in entries]


def history_page(session: Session, row: AssignmentRow, limit: int, offset: int) -> dict[str, Any]:
    """The run's changes, newest first."""
    query = (
        select(AssignmentEdit)
        .where(AssignmentEdit.assignment_id == row.id)
        .order_by(AssignmentEdit.seq.desc())
    )
    items, total = paginate(session, query, limit, offset)
    return {
        "items": edits_out(session, row, items),
        "total": total,
        "limit": limit,
        "offset": offset,
    }


def _put_back(session: Session, row: AssignmentRow, changes: dict[str, list[Any]]) -> None:
    for p, r, _score, _pinned in changes.get("pairs_added", []):
        session.execute(
            delete(AssignmentPair).where(
                AssignmentPair.assignment_id == row.id,
                AssignmentPair.paper_id == p,
                AssignmentPair.reviewer_id == r,
            )
        )
    for p, r, score, pinned in changes.get("pairs_removed", []):
        if session.get(AssignmentPair, (row.id, p, r)) is None:
            session.add(
                AssignmentPair(
                    assignment_id=row.id,
                    paper_id=p,
                    reviewer_id=r,
                    score=float(score) if score is not None else 0.0,
                    pinned=bool(pinned),
                )
            )
    for key, flag in (("pinned", False), ("unpinned", True)):
        for p, r in changes.get(key, []):
            pair = session.get(AssignmentPair, (row.id, p, r))
            if pair is not None:
                pair.pinned = flag
    for key, kind in (("pins_added", "pin"), ("forbids_added", "forbid")):
        for p, r, _by_or_reason in changes.get(key, []):
            drop_rule(session, row.id, kind, p, r)
    for p, r, by in changes.get("pins_removed", []):
        add_rule(session, row.id, "pin", p, r, actor=by or "")
    for p, r, reason in changes.get("forbids_removed", []):
        add_rule(session, row.id, "forbid", p, r, actor="", reason=reason or "")
    session.flush()


def _inverse(changes: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """The changes an undo makes (for describing its effect)."""
    swap = {
        "pairs_added": "pairs_removed",
        "pairs_removed": "pairs_added",
        "pinned": "unpinned",
        "unpinned": "pinned",
        "pins_added": "pins_removed",
        "pins_removed": "pins_added",
        "forbids_added": "forbids_removed",
        "forbids_removed": "forbids_added",
    }
    return {swap[k]: list(v) for k, v in changes.items() if k in swap}


def undo_last(
    session: Session, row: AssignmentRow, *, version: int, actor: str, reason: str = ""
) -> tuple[AssignmentEdit, dict[str, Any]]:
    """Revert the newest change of ``row`` not yet undone (see the module rules), in the
    session (the caller commits). Returns the undone entry and the undo's effect."""
    from reviewer_recommender.services.edit_effects import (
        describe_effect,
        objective,
        paper_counts,
        reviewer_loads,
    )

    if version != row.version:
        raise StateConflict(
            "stale_version",
            f"assignment {row.id} is at version {row.version}, not {version}: it changed "
            "since you looked; reload it",
            version=row.version,
        )
    entry = session.scalar(
        select(AssignmentEdit)
        .where(AssignmentEdit.assignment_id == row.id, AssignmentEdit.undone.is_(False))
        .order_by(AssignmentEdit.seq.desc())
        .limit(1)
    )
    if entry is None:
        raise StateConflict("nothing_to_undo", f"assignment {row.id} has no change left to undo")
    changes = dict(entry.changes or {})
    touched = {(item[0], item[1]) for items in changes.values() for item in items if len(item) >= 2}
    papers = sorted({p for p, _ in touched})
    reviewers = sorted({r for _, r in touched})
    objective_before = objective(session, row)
    found_before = violations(session, row)
    counts_before = paper_counts(session, row, papers)
    loads_before = reviewer_loads(session, row, reviewers)
    claim_version(session, row, states=("draft",))
    _put_back(session, row, changes)
    found = violations(session, row)
    summary = dict(entry.summary_before or {})
    if summary.get("edited") or found:
        summary["constraints"] = constraints_summary(found)
    row.summary = summary
    entry.undone = True
    entry.undone_at = utcnow()
    entry.undone_by = actor
    entry.undo_version = row.version
    session.flush()
    audit(
        session,
        row.venue_id,
        actor,
        "assignment.undo",
        assignment_id=row.id,
        number=row.number,
        version=row.version,
        seq=entry.seq,
        undone_action=entry.action,
        reason=reason,
    )
    limits = run_limits(session, row)
    effect = describe_effect(
        session,
        row,
        action="undo",
        changes=_inverse(changes),
        objective_before=objective_before,
        objective_after=objective(session, row),
        counts=(counts_before, paper_counts(session, row, papers)),
        loads=(loads_before, reviewer_loads(session, row, reviewers)),
        demand={p: limits.demand_of(p) for p in papers},
        max_load={r: limits.max_of(r) for r in reviewers},
        violations=(found_before, found),
    )
    return entry, effect
