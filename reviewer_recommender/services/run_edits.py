"""Hand edits of a draft: pin, unpin, forbid, unforbid, swap, assign, remove; their
preview; their history.

Pins and forbids are the draft's own rules (:mod:`reviewer_recommender.services.draft_rules`):
they hold in this draft and in a re-solve of it, never in another run, until the chair
promotes them to venue rules (:mod:`reviewer_recommender.services.edits` says which pins and
forbids each edit changes); a swap is stored as both (a forbid of the pair it removes and a
pin of the pair it adds), so a re-solve of the draft keeps it. ``assign`` and ``remove``
change the pairs only. Every edit bumps the draft's version
atomically (a concurrent edit or publication gets 409 ``stale_version``), recomputes the
draft's objective and statistics (:func:`reviewer_recommender.services.publishing.edited_summary`)
and is recorded in
the run's edit history with what undoing it needs (:mod:`api.history`).

A preview runs the very same code in a transaction that is then rolled back, so what it
shows is what applying does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from matching.additions import LIMIT_OBSTACLES, Obstacle
from reviewer_recommender.errors import DomainError, InvalidRequest, StateConflict
from reviewer_recommender.services.draft_rules import (
    FORBID,
    PIN,
    Stored,
    rule_of,
    store_constraints,
    venue_pin_holds,
)
from reviewer_recommender.services.edit_effects import (
    describe_effect,
    diff,
    objective,
    pairs_after,
    paper_counts,
    refused_effect,
    reviewer_loads,
    snapshot,
)
from reviewer_recommender.services.edits import ConstraintEdit, standing_edit
from reviewer_recommender.services.explain import ExplainerCache
from reviewer_recommender.services.pair_rules import addition_obstacles
from reviewer_recommender.services.pairs import batched_score, pair_score
from reviewer_recommender.services.publishing import (
    claim_version,
    edited_summary,
    run_pairs,
    solve_candidate,
    violations,
)
from reviewer_recommender.services.runs import run_limits
from reviewer_recommender.storage.models import (
    AssignmentEdit,
    AssignmentPair,
    AssignmentRow,
    Conflict,
)
from reviewer_recommender.storage.repository import (
    audit,
    not_found,
    require_paper,
    require_reviewer,
)

Pair = tuple[str, str]
ACTIONS = ("pin", "unpin", "forbid", "unforbid", "swap", "assign", "remove")


@dataclass(frozen=True)
class EditRequest:
    """One edit: ``reviewer_id`` is the reviewer added (swap: the incoming one),
    ``remove_reviewer_id`` the one a swap takes out."""

    action: str
    paper_id: str
    reviewer_id: str
    remove_reviewer_id: str | None = None
    reason: str = ""
    force: bool = False

    def touched(self) -> list[Pair]:
        pairs = [(self.paper_id, self.reviewer_id)]
        if self.remove_reviewer_id is not None:
            pairs.append((self.paper_id, self.remove_reviewer_id))
        return pairs

    def standing(self) -> ConstraintEdit:
        """The pins and forbids this edit changes
        (:func:`reviewer_recommender.services.edits.standing_edit`)."""
        return standing_edit(self.action, self.paper_id, self.reviewer_id, self.remove_reviewer_id)


@dataclass
class Outcome:
    """What a mutation did besides the rows: whether the edited problem is a restriction of
    the solved one (``tightening``: the solver's bound still holds), the limits it broke
    (forced), and words for the audit entry."""

    tightening: bool = True
    overfilled: list[str] = field(default_factory=list)
    audit: dict[str, Any] = field(default_factory=dict)


# ---- the mutations (no version claim, no commit) -------------------------------------------


def obstacles(
    session: Session,
    row: AssignmentRow,
    paper_id: str,
    reviewer_id: str,
    *,
    replacing: bool = False,
) -> list[Obstacle]:
    """Why (paper, reviewer) cannot simply be added to the draft
    (:func:`reviewer_recommender.services.pair_rules.addition_obstacles`, the one rule)."""
    pair = (paper_id, reviewer_id)
    return addition_obstacles(session, row, [pair], replacing=replacing)[pair]


def refuse_excluded(paper_id: str, reviewer_id: str, found: list[Obstacle]) -> None:
    """409 ``conflict_of_interest`` if the pair is a conflict of interest or an excluding
    bid (a chair's forbid is not: adding the pair lifts it)."""
    blocking = [o.detail for o in found if o.kind in ("conflict", "bid")]
    if blocking:
        raise StateConflict(
            "conflict_of_interest",
            f"({paper_id}, {reviewer_id}) cannot be added: {'; '.join(blocking)}",
            reasons=blocking,
        )


def limits_broken(found: list[Obstacle]) -> list[str]:
    """The limits adding the pair would break (max load, demand), in words."""
    return [o.detail for o in found if o.kind in LIMIT_OBSTACLES]


def _refuse_overfill(action: str, row: AssignmentRow, limits: list[str], advice: str) -> None:
    raise StateConflict(
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
) -> None:
    """Put (paper, reviewer) in the draft (scored on demand if the latest affinity run did
    not store it); an existing pair is pinned when ``pinned``."""
    existing = session.get(AssignmentPair, (row.id, paper_id, reviewer_id))
    if existing is None:
        score = batched_score(session, row.venue_id, row.pool, paper_id, reviewer_id)
        if score is None:
            score = pair_score(
                explainers,
                session,
                row.venue_id,
                paper_id,
                reviewer_id,
                explain=False,
                store=True,
                marks=False,  # only the score is needed
                pool=row.pool,
            ).score
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
    session.flush()


def _drop_pair(session: Session, row: AssignmentRow, paper_id: str, reviewer_id: str) -> None:
    session.execute(
        delete(AssignmentPair).where(
            AssignmentPair.assignment_id == row.id,
            AssignmentPair.paper_id == paper_id,
            AssignmentPair.reviewer_id == reviewer_id,
        )
    )


def mutate(
    explainers: ExplainerCache,
    session: Session,
    row: AssignmentRow,
    edit: EditRequest,
    actor: str,
    *,
    check_limits: bool = True,
) -> Outcome:
    """Apply ``edit`` to the draft: its standing constraints (:meth:`EditRequest.standing`,
    from :mod:`reviewer_recommender.services.edits`) stored as pin and forbid rows, and its pairs
    in the run.
    Refusals are :class:`~reviewer_recommender.errors.DomainError`; nothing is committed.
    ``check_limits=False`` skips the
    per-edit max load / demand refusal (a bulk change checks its final state instead)."""
    venue_id, p, r = row.venue_id, edit.paper_id, edit.reviewer_id
    action = edit.action

    def store(reason: str = "") -> Stored:
        return store_constraints(session, row, edit.standing(), actor=actor, reason=reason)

    if action in ("pin", "assign"):
        found = obstacles(session, row, p, r)
        refuse_excluded(p, r, found)
        there = [o for o in found if o.kind == "assigned"]
        if action == "assign" and there:
            raise StateConflict("already_assigned", there[0].detail)
        already = bool(there)
        limits = limits_broken(found) if check_limits else []
        if limits and not edit.force:
            verb = "pinning" if action == "pin" else "adding"
            _refuse_overfill(
                f"{verb} ({p}, {r})",
                row,
                limits,
                "Swap a reviewer out instead, or send force=true to do it anyway",
            )
        stored = store()
        _add_pair(explainers, session, row, p, r, pinned=action == "pin")
        if action == "pin":
            tightening = already or (
                not limits and not stored.lifted_forbid and solve_candidate(session, row, p, r)
            )
        else:
            # the problem is unchanged unless a forbid was lifted: the bound still bounds it
            tightening = not stored.lifted_forbid
        return Outcome(tightening, limits, {"overfilled": limits})
    if action == "unpin":
        if rule_of(session, row, PIN, (p, r)) is None and not venue_pin_holds(session, row, (p, r)):
            raise not_found("pin", f"{p}/{r}")
        store()
        pair = session.get(AssignmentPair, (row.id, p, r))
        if pair is not None:
            pair.pinned = False
        # the solve may have forced this pair: without it the bound is no longer proven
        return Outcome(tightening=False)
    if action == "forbid":
        stored = store(edit.reason or f"forbidden by {actor}")
        _drop_pair(session, row, p, r)
        return Outcome(tightening=not stored.dropped_pin)
    if action == "unforbid":
        if (
            rule_of(session, row, FORBID, (p, r)) is None
            and session.get(Conflict, (venue_id, p, r, "forbid")) is None
        ):
            raise not_found("forbid", f"{p}/{r}")
        store()
        return Outcome(tightening=False)
    if action == "remove":
        pair = session.get(AssignmentPair, (row.id, p, r))
        if pair is None:
            raise StateConflict("not_assigned", f"{r!r} does not review {p!r} in this run")
        if (
            pair.pinned
            or rule_of(session, row, PIN, (p, r)) is not None
            or venue_pin_holds(session, row, (p, r))
        ):
            raise StateConflict(
                "pinned_pair",
                f"({p}, {r}) is pinned: unpin it first (or forbid it, which drops the pin)",
            )
        store()
        session.delete(pair)
        return Outcome(tightening=True)
    if action == "swap":
        old_id = edit.remove_reviewer_id
        assert old_id is not None
        if old_id == r:
            raise InvalidRequest("validation_error", "a swap needs two different reviewers")
        old = session.get(AssignmentPair, (row.id, p, old_id))
        if old is None:
            raise StateConflict("not_assigned", f"{old_id!r} does not review {p!r} in this run")
        found = obstacles(session, row, p, r, replacing=True)
        there = [o for o in found if o.kind == "assigned"]
        if there:
            raise StateConflict("already_assigned", there[0].detail)
        if old.pinned:
            raise StateConflict("pinned_pair", f"({p}, {old_id}) is pinned; unpin it first")
        refuse_excluded(p, r, found)
        limits = limits_broken(found) if check_limits else []
        if limits and not edit.force:
            _refuse_overfill(
                f"swapping {r!r} into {p!r}", row, limits, "Send force=true to swap anyway"
            )
        session.delete(old)
        stored = store(edit.reason or f"swapped out for {r} by {actor}")
        _add_pair(explainers, session, row, p, r, pinned=True)
        tightening = (
            not limits
            and not stored.lifted_forbid
            and not stored.dropped_pin
            and solve_candidate(session, row, p, r)
        )
        return Outcome(tightening, limits, {"removed": old_id, "added": r, "overfilled": limits})
    raise InvalidRequest("validation_error", f"unknown action {action!r}")


# ---- applying with history and effect ---------------------------------------------------------


@dataclass
class Applied:
    """A change applied in the session (not committed): its history row and effect."""

    edit: AssignmentEdit
    effect: dict[str, Any]


def _next_seq(session: Session, row: AssignmentRow) -> int:
    return (
        int(
            session.scalar(
                select(func.coalesce(func.max(AssignmentEdit.seq), 0)).where(
                    AssignmentEdit.assignment_id == row.id
                )
            )
            or 0
        )
        + 1
    )


def change(
    session: Session,
    row: AssignmentRow,
    touched: Sequence[Pair],
    run: Callable[[], Outcome],
    *,
    action: str,
    actor: str,
    expected_version: int | None,
    record: dict[str, Any],
    audit_action: str,
    listed: int | None = None,
    audit_counts: bool = False,
) -> Applied:
    """Claim the draft's next version, ``run`` the mutation, recompute the summary,
    record the history entry and the audit entry, and describe the effect. Nothing is
    committed: the caller commits (apply) or rolls back (preview). ``audit_counts``: the
    audit entry counts the pairs added and removed (as the history does)."""
    if expected_version is not None and expected_version != row.version:
        raise StateConflict(
            "stale_version",
            f"assignment {row.id} is at version {row.version}, not {expected_version}: it "
            "changed since you looked; reload it",
            version=row.version,
        )
    version_before = row.version
    before = snapshot(session, row, touched)
    objective_before = objective(session, row)
    # the run's pairs read once: the check before, and (with the change applied) after
    pairs_before = run_pairs(session, row.id)
    found_before = violations(session, row, pairs_before)
    papers = sorted({p for p, _ in touched})
    reviewers = sorted({r for _, r in touched})
    counts_before = paper_counts(session, row, papers)
    loads_before = reviewer_loads(session, row, reviewers)
    summary_before = dict(row.summary or {})
    bound_held = bool(summary_before.get("bound_holds", True))
    claim_version(session, row, states=("draft",))
    outcome = run()
    session.flush()
    after = snapshot(session, row, touched)
    changes = diff(before, after)
    changed_pairs = pairs_after(pairs_before, changes)
    found = violations(session, row, changed_pairs)
    row.summary = edited_summary(
        session, row, tightening=outcome.tightening, found=found, pairs=changed_pairs
    )
    objective_after = objective(session, row)
    entry = AssignmentEdit(
        assignment_id=row.id,
        seq=_next_seq(session, row),
        action=action,
        actor=actor,
        version_before=version_before,
        version_after=row.version,
        objective_before=objective_before,
        objective_after=objective_after,
        changes=changes,
        summary_before=summary_before,
        **record,
    )
    session.add(entry)
    session.flush()
    detail: dict[str, Any] = {
        "assignment_id": row.id,
        "number": row.number,
        "version": row.version,
        "seq": entry.seq,
        **{k: v for k, v in record.items() if k in ("paper_id", "reviewer_id", "reason", "rows")},
    }
    # the mutation's words win (a bulk file's rows that applied)
    detail.update(outcome.audit)
    if audit_counts:
        # the pairs the run gained and lost: what the history entry counts
        detail["added"] = len(changes.get("pairs_added", []))
        detail["removed"] = len(changes.get("pairs_removed", []))
    audit(session, row.venue_id, actor, audit_action, **detail)
    limits = run_limits(session, row)
    effect = describe_effect(
        session,
        row,
        action=action,
        changes=changes,
        objective_before=objective_before,
        objective_after=objective_after,
        counts=(counts_before, paper_counts(session, row, papers)),
        loads=(loads_before, reviewer_loads(session, row, reviewers)),
        demand={p: limits.demand_of(p) for p in papers},
        max_load={r: limits.max_of(r) for r in reviewers},
        violations=(found_before, found),
        overfilled=outcome.overfilled,
        bound_lost=bound_held and not row.summary.get("bound_holds", True),
        listed=listed,
    )
    return Applied(entry, effect)


def check_request(session: Session, row: AssignmentRow, edit: EditRequest) -> None:
    """422 for an unknown action or a swap without the reviewer it removes; 404 for ids
    the venue does not have."""
    if edit.action not in ACTIONS:
        raise InvalidRequest("validation_error", f"unknown action {edit.action!r}")
    if edit.action == "swap" and edit.remove_reviewer_id is None:
        raise InvalidRequest("validation_error", "a swap names remove_reviewer_id")
    require_paper(session, row.venue_id, edit.paper_id)
    require_reviewer(session, row.venue_id, edit.reviewer_id)
    if edit.remove_reviewer_id is not None:
        require_reviewer(session, row.venue_id, edit.remove_reviewer_id)


def apply_edit(
    explainers: ExplainerCache,
    session: Session,
    row: AssignmentRow,
    edit: EditRequest,
    actor: str,
    *,
    expected_version: int | None = None,
) -> Applied:
    """One edit of a draft, in the session (the caller commits or rolls back)."""
    check_request(session, row, edit)
    record = {
        "paper_id": edit.paper_id,
        "reviewer_id": edit.reviewer_id,
        "other_reviewer_id": edit.remove_reviewer_id,
        "reason": edit.reason,
        "rows": 1,
        "detail": {"force": edit.force},
    }
    return change(
        session,
        row,
        edit.touched(),
        lambda: mutate(explainers, session, row, edit, actor),
        action=edit.action,
        actor=actor,
        expected_version=expected_version,
        record=record,
        audit_action=f"assignment.{edit.action}",
    )


def preview_edit(
    explainers: ExplainerCache,
    session: Session,
    row: AssignmentRow,
    edit: EditRequest,
    actor: str,
    *,
    expected_version: int | None = None,
) -> dict[str, Any]:
    """What applying ``edit`` would do (rolled back). A refused edit answers
    ``allowed: false`` with its code; one refused only for breaking a limit shows the
    effect it would have with ``force``."""
    check_request(session, row, edit)
    try:
        try:
            return apply_edit(
                explainers, session, row, edit, actor, expected_version=expected_version
            ).effect
        finally:
            session.rollback()
    except DomainError as error:
        if error.code != "would_overfill":
            return refused_effect(row, edit.action, error)
        forced = EditRequest(**{**edit.__dict__, "force": True})
        try:
            effect = apply_edit(
                explainers, session, row, forced, actor, expected_version=expected_version
            ).effect
        finally:
            session.rollback()
        return {
            **effect,
            "allowed": False,
            "code": error.code,
            "detail": error.detail,
            "force_allowed": True,
            "version": row.version,
        }
