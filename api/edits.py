"""Hand edits of a draft: pin, unpin, forbid, swap.

Pins become forced pairs and forbids conflicts in every later solve of the venue; a swap is
stored as both (a forbid of the pair it removes and a pin of the pair it adds), so re-solves
keep it. Every edit bumps the draft's version atomically (a concurrent edit or publication
gets 409) and recomputes the draft's objective and statistics (see
:func:`api.publishing.edited_summary`).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from api.errors import ApiError
from api.explain import ExplainerCache
from api.models import AssignmentPair, AssignmentRow, Conflict, Pin
from api.pairs import pair_score
from api.publishing import claim_version, edited_summary, solve_candidate
from api.runs import run_limits
from api.store import audit, not_found


def _conflicts(session: Session, venue_id: str, paper_id: str, reviewer_id: str) -> list[Conflict]:
    return list(
        session.scalars(
            select(Conflict).where(
                Conflict.venue_id == venue_id,
                Conflict.paper_id == paper_id,
                Conflict.reviewer_id == reviewer_id,
            )
        )
    )


def refuse_conflict(session: Session, venue_id: str, paper_id: str, reviewer_id: str) -> None:
    """409 if the pair is a conflict of interest or a Not Willing bid (a chair's forbid is
    not: adding the pair lifts it)."""
    blocking = [
        c for c in _conflicts(session, venue_id, paper_id, reviewer_id) if c.source != "forbid"
    ]
    if blocking:
        reasons = "; ".join(f"{c.source}: {c.reason}" for c in blocking)
        raise ApiError(
            409,
            "conflict_of_interest",
            f"({paper_id}, {reviewer_id}) is a conflict of interest ({reasons})",
            reasons=[f"{c.source}: {c.reason}" if c.reason else c.source for c in blocking],
        )


def overfilled_limits(
    session: Session,
    row: AssignmentRow,
    paper_id: str,
    reviewer_id: str,
    *,
    adds_reviewer_to_paper: bool = True,
) -> list[str]:
    """The limits adding (paper, reviewer) to the draft would break: the reviewer's max load
    and, unless another reviewer of the paper leaves (a swap), the paper's demand. Empty if
    the pair is already there."""
    if session.get(AssignmentPair, (row.id, paper_id, reviewer_id)) is not None:
        return []

    def count(*where: Any) -> int:
        return int(
            session.scalar(
                select(func.count()).where(AssignmentPair.assignment_id == row.id, *where)
            )
            or 0
        )

    limits = run_limits(session, row)
    found = []
    max_load = limits.max_of(reviewer_id)
    load = count(AssignmentPair.reviewer_id == reviewer_id)
    if load + 1 > max_load:
        found.append(
            f"reviewer {reviewer_id!r} would review {load + 1} papers, over their max load "
            f"of {max_load}"
        )
    demand = limits.demand_of(paper_id)
    reviewers = count(AssignmentPair.paper_id == paper_id)
    if adds_reviewer_to_paper and reviewers + 1 > demand:
        found.append(
            f"paper {paper_id!r} would get {reviewers + 1} reviewers, over its demand of {demand}"
        )
    return found


def _refuse_overfill(action: str, row: AssignmentRow, limits: list[str], advice: str) -> None:
    raise ApiError(
        409,
        "would_overfill",
        f"{action} would overfill draft {row.id}: {'; '.join(limits)}. {advice}",
        force_allowed=True,
        limits=limits,
    )


def _add_pair(
    explainers: ExplainerCache,
    session: Session,
    row: AssignmentRow,
    paper_id: str,
    reviewer_id: str,
    *,
    pinned: bool,
) -> bool:
    """Put (paper, reviewer) in the draft (scored on demand if the latest affinity run did
    not store it), lifting a chair's forbid of it. True if a forbid was lifted."""
    venue_id = row.venue_id
    lifted = session.get(Conflict, (venue_id, paper_id, reviewer_id, "forbid")) is not None
    session.execute(
        delete(Conflict).where(
            Conflict.venue_id == venue_id,
            Conflict.paper_id == paper_id,
            Conflict.reviewer_id == reviewer_id,
            Conflict.source == "forbid",
        )
    )
    score = pair_score(
        explainers, session, venue_id, paper_id, reviewer_id, explain=False, store=True
    ).score
    existing = session.get(AssignmentPair, (row.id, paper_id, reviewer_id))
    if existing is None:
        session.add(
            AssignmentPair(
                assignment_id=row.id,
                paper_id=paper_id,
                reviewer_id=reviewer_id,
                score=score,
                pinned=pinned,
            )
        )
    elif pinned:
        existing.pinned = True
    return lifted


def _ensure_pin(session: Session, venue_id: str, paper_id: str, reviewer_id: str, by: str) -> None:
    if session.get(Pin, (venue_id, paper_id, reviewer_id)) is None:
        session.add(
            Pin(venue_id=venue_id, paper_id=paper_id, reviewer_id=reviewer_id, created_by=by)
        )


def _forbid(session: Session, venue_id: str, paper_id: str, reviewer_id: str, reason: str) -> bool:
    """Store a chair's forbid of the pair and drop its pin. True if a pin was dropped."""
    if session.get(Conflict, (venue_id, paper_id, reviewer_id, "forbid")) is None:
        session.add(
            Conflict(
                venue_id=venue_id,
                paper_id=paper_id,
                reviewer_id=reviewer_id,
                source="forbid",
                reason=reason,
            )
        )
    pin = session.get(Pin, (venue_id, paper_id, reviewer_id))
    if pin is not None:
        session.delete(pin)
    return pin is not None


def _finish(session: Session, row: AssignmentRow, *, tightening: bool) -> None:
    session.flush()
    row.summary = edited_summary(session, row, tightening=tightening)


def pin(
    explainers: ExplainerCache,
    session: Session,
    row: AssignmentRow,
    paper_id: str,
    reviewer_id: str,
    *,
    force: bool,
    reason: str,
    actor: str,
) -> AssignmentPair:
    """Require a pair: added to this draft and forced in every later solve. 409 if it is a
    conflict of interest, or if adding it would exceed the reviewer's max load or the
    paper's demand (the message names the limits) unless ``force``."""
    venue_id = row.venue_id
    refuse_conflict(session, venue_id, paper_id, reviewer_id)
    limits = overfilled_limits(session, row, paper_id, reviewer_id)
    if limits and not force:
        _refuse_overfill(
            f"pinning ({paper_id}, {reviewer_id})",
            row,
            limits,
            "Swap a reviewer out instead, or send force=true to pin anyway",
        )
    claim_version(session, row, states=("draft",))
    already = session.get(AssignmentPair, (row.id, paper_id, reviewer_id)) is not None
    lifted = _add_pair(explainers, session, row, paper_id, reviewer_id, pinned=True)
    _ensure_pin(session, venue_id, paper_id, reviewer_id, actor)
    tightening = already or (
        not limits and not lifted and solve_candidate(session, row, paper_id, reviewer_id)
    )
    _finish(session, row, tightening=tightening)
    audit(
        session,
        venue_id,
        actor,
        "assignment.pin",
        assignment_id=row.id,
        version=row.version,
        paper_id=paper_id,
        reviewer_id=reviewer_id,
        reason=reason,
        overfilled=limits,
    )
    session.commit()
    pair = session.get(AssignmentPair, (row.id, paper_id, reviewer_id))
    assert pair is not None
    return pair


def unpin(
    session: Session,
    row: AssignmentRow,
    paper_id: str,
    reviewer_id: str,
    *,
    reason: str,
    actor: str,
) -> AssignmentPair:
    """Drop a pin: the pair stays in this draft but is no longer forced."""
    venue_id = row.venue_id
    pin_row = session.get(Pin, (venue_id, paper_id, reviewer_id))
    pair = session.get(AssignmentPair, (row.id, paper_id, reviewer_id))
    if pin_row is None or pair is None:
        raise not_found("pin", f"{paper_id}/{reviewer_id}")
    claim_version(session, row, states=("draft",))
    session.delete(pin_row)
    pair.pinned = False
    # the solve may have forced this pair: without it the bound is no longer proven
    _finish(session, row, tightening=False)
    audit(
        session,
        venue_id,
        actor,
        "assignment.unpin",
        assignment_id=row.id,
        version=row.version,
        paper_id=paper_id,
        reviewer_id=reviewer_id,
        reason=reason,
    )
    session.commit()
    return pair


def forbid(
    session: Session,
    row: AssignmentRow,
    paper_id: str,
    reviewer_id: str,
    *,
    reason: str,
    actor: str,
) -> AssignmentRow:
    """Forbid a pair: removed from this draft and a conflict in every later solve."""
    venue_id = row.venue_id
    claim_version(session, row, states=("draft",))
    dropped_pin = _forbid(
        session, venue_id, paper_id, reviewer_id, reason or f"forbidden by {actor}"
    )
    session.execute(
        delete(AssignmentPair).where(
            AssignmentPair.assignment_id == row.id,
            AssignmentPair.paper_id == paper_id,
            AssignmentPair.reviewer_id == reviewer_id,
        )
    )
    _finish(session, row, tightening=not dropped_pin)
    audit(
        session,
        venue_id,
        actor,
        "assignment.forbid",
        assignment_id=row.id,
        version=row.version,
        paper_id=paper_id,
        reviewer_id=reviewer_id,
        reason=reason,
    )
    session.commit()
    return row


def swap(
    explainers: ExplainerCache,
    session: Session,
    row: AssignmentRow,
    paper_id: str,
    remove_reviewer_id: str,
    add_reviewer_id: str,
    *,
    force: bool,
    reason: str,
    actor: str,
) -> AssignmentPair:
    """Replace one reviewer of a paper with another in this draft, stored as a forbid of
    the old pair and a pin of the new one (so every later solve keeps the swap). 409 if the
    incoming reviewer is in conflict or would go over their max load (unless ``force``)."""
    venue_id = row.venue_id
    old = session.get(AssignmentPair, (row.id, paper_id, remove_reviewer_id))
    if old is None:
        raise not_found("assigned pair", f"{paper_id}/{remove_reviewer_id}")
    if session.get(AssignmentPair, (row.id, paper_id, add_reviewer_id)) is not None:
        raise ApiError(409, "already_assigned", f"{add_reviewer_id!r} already reviews {paper_id!r}")
    if old.pinned:
        raise ApiError(
            409, "pinned_pair", f"({paper_id}, {remove_reviewer_id}) is pinned; unpin it first"
        )
    refuse_conflict(session, venue_id, paper_id, add_reviewer_id)
    limits = overfilled_limits(
        session, row, paper_id, add_reviewer_id, adds_reviewer_to_paper=False
    )
    if limits and not force:
        _refuse_overfill(
            f"swapping {add_reviewer_id!r} into {paper_id!r}",
            row,
            limits,
            "Send force=true to swap anyway",
        )
    claim_version(session, row, states=("draft",))
    session.delete(old)
    dropped_pin = _forbid(
        session,
        venue_id,
        paper_id,
        remove_reviewer_id,
        reason or f"swapped out for {add_reviewer_id} by {actor}",
    )
    lifted = _add_pair(explainers, session, row, paper_id, add_reviewer_id, pinned=True)
    _ensure_pin(session, venue_id, paper_id, add_reviewer_id, actor)
    tightening = (
        not limits
        and not lifted
        and not dropped_pin
        and solve_candidate(session, row, paper_id, add_reviewer_id)
    )
    _finish(session, row, tightening=tightening)
    audit(
        session,
        venue_id,
        actor,
        "assignment.swap",
        assignment_id=row.id,
        version=row.version,
        paper_id=paper_id,
        removed=remove_reviewer_id,
        added=add_reviewer_id,
        reason=reason,
        overfilled=limits,
    )
    session.commit()
    pair = session.get(AssignmentPair, (row.id, paper_id, add_reviewer_id))
    assert pair is not None
    return pair
