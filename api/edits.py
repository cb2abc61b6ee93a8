"""Hand edits of a draft: pin, unpin, forbid, unforbid, swap, assign, remove; their
preview; their history.

Pins become forced pairs and forbids conflicts in every later solve of the venue
(:mod:`services.edits` says which standing constraints each edit changes); a swap is stored
as both (a forbid of the pair it removes and a pin of the pair it adds), so re-solves keep
it. ``assign`` and ``remove`` change this draft only. Every edit bumps the draft's version
atomically (a concurrent edit or publication gets 409 ``stale_version``), recomputes the
draft's objective and statistics (:func:`api.publishing.edited_summary`) and is recorded in
the run's edit history with what undoing it needs (:mod:`api.history`).

A preview runs the very same code in a transaction that is then rolled back, so what it
shows is what applying does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from api.errors import ApiError
from api.explain import ExplainerCache
from api.models import AssignmentEdit, AssignmentPair, AssignmentRow, Conflict, Pin
from api.names import Names, lookup
from api.pairs import pair_score
from api.publishing import claim_version, edited_summary, solve_candidate, violations
from api.runs import run_limits
from api.store import audit, not_found, require_paper, require_reviewer
from services.edits import (
    ConstraintEdit,
    forbid_edit,
    pin_edit,
    swap_edit,
)

Pair = tuple[str, str]
ACTIONS = ("pin", "unpin", "forbid", "unforbid", "swap", "assign", "remove")
# what each action does to the venue's standing constraints (pins, forbids)
STANDING: dict[str, Callable[..., ConstraintEdit]] = {
    "pin": pin_edit,
    "forbid": forbid_edit,
    "swap": swap_edit,
    "unpin": lambda p, r: ConstraintEdit(unpin=((p, r),)),
    "unforbid": lambda p, r: ConstraintEdit(unforbid=((p, r),)),
    "assign": lambda p, r: ConstraintEdit(unforbid=((p, r),)),
    "remove": lambda _p, _r: ConstraintEdit(),
}


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
        if self.action == "swap":
            assert self.remove_reviewer_id is not None
            return swap_edit(self.paper_id, self.remove_reviewer_id, self.reviewer_id)
        return STANDING[self.action](self.paper_id, self.reviewer_id)


@dataclass
class Outcome:
    """What a mutation did besides the rows: whether the edited problem is a restriction of
    the solved one (``tightening``: the solver's bound still holds), the limits it broke
    (forced), and words for the audit entry."""

    tightening: bool = True
    overfilled: list[str] = field(default_factory=list)
    audit: dict[str, Any] = field(default_factory=dict)


# ---- reading the state of some pairs --------------------------------------------------------


@dataclass
class PairState:
    in_run: bool = False
    score: float | None = None
    pinned: bool = False
    pin_by: str | None = None  # a pin row exists (created_by)
    forbid_reason: str | None = None  # a forbid row exists (its reason)


def snapshot(session: Session, row: AssignmentRow, pairs: Iterable[Pair]) -> dict[Pair, PairState]:
    """The run's and the venue's state of ``pairs``: in the run (score, pinned), pinned at
    venue level (pin row), forbidden (forbid row)."""
    wanted = set(pairs)
    states = {pair: PairState() for pair in wanted}
    papers = sorted({p for p, _ in wanted})
    for start in range(0, len(papers), 500):
        chunk = papers[start : start + 500]
        for p, r, score, pinned in session.execute(
            select(
                AssignmentPair.paper_id,
                AssignmentPair.reviewer_id,
                AssignmentPair.score,
                AssignmentPair.pinned,
            ).where(AssignmentPair.assignment_id == row.id, AssignmentPair.paper_id.in_(chunk))
        ):
            if (p, r) in wanted:
                state = states[(p, r)]
                state.in_run, state.score, state.pinned = True, float(score), bool(pinned)
        for p, r, by in session.execute(
            select(Pin.paper_id, Pin.reviewer_id, Pin.created_by).where(
                Pin.venue_id == row.venue_id, Pin.paper_id.in_(chunk)
            )
        ):
            if (p, r) in wanted:
                states[(p, r)].pin_by = by or ""
        for p, r, reason in session.execute(
            select(Conflict.paper_id, Conflict.reviewer_id, Conflict.reason).where(
                Conflict.venue_id == row.venue_id,
                Conflict.source == "forbid",
                Conflict.paper_id.in_(chunk),
            )
        ):
            if (p, r) in wanted:
                states[(p, r)].forbid_reason = reason or ""
    return states


def diff(before: dict[Pair, PairState], after: dict[Pair, PairState]) -> dict[str, list[Any]]:
    """What changed between two snapshots of the same pairs, as :class:`AssignmentEdit`
    records it (enough to undo it)."""
    changes: dict[str, list[Any]] = {
        key: []
        for key in (
            "pairs_added",
            "pairs_removed",
            "pinned",
            "unpinned",
            "pins_added",
            "pins_removed",
            "forbids_added",
            "forbids_removed",
        )
    }
    for (p, r), old in sorted(before.items()):
        new = after[(p, r)]
        if new.in_run and not old.in_run:
            changes["pairs_added"].append([p, r, new.score, new.pinned])
        elif old.in_run and not new.in_run:
            changes["pairs_removed"].append([p, r, old.score, old.pinned])
        elif old.in_run and new.in_run and old.pinned != new.pinned:
            changes["pinned" if new.pinned else "unpinned"].append([p, r])
        if new.pin_by is not None and old.pin_by is None:
            changes["pins_added"].append([p, r, new.pin_by])
        elif old.pin_by is not None and new.pin_by is None:
            changes["pins_removed"].append([p, r, old.pin_by])
        if new.forbid_reason is not None and old.forbid_reason is None:
            changes["forbids_added"].append([p, r, new.forbid_reason])
        elif old.forbid_reason is not None and new.forbid_reason is None:
            changes["forbids_removed"].append([p, r, old.forbid_reason])
    return changes


def objective(session: Session, row: AssignmentRow) -> float:
    """Sum of the run's pair scores."""
    return float(
        session.scalar(
            select(func.coalesce(func.sum(AssignmentPair.score), 0.0)).where(
                AssignmentPair.assignment_id == row.id
            )
        )
        or 0.0
    )


def _counts(
    session: Session, row: AssignmentRow, column: Any, ids: Sequence[str]
) -> dict[str, int]:
    found: dict[str, int] = {}
    ordered = sorted(set(ids))
    for start in range(0, len(ordered), 500):
        chunk = ordered[start : start + 500]
        found.update(
            {
                str(k): int(n)
                for k, n in session.execute(
                    select(column, func.count())
                    .where(AssignmentPair.assignment_id == row.id, column.in_(chunk))
                    .group_by(column)
                )
            }
        )
    return {i: found.get(i, 0) for i in ordered}


def reviewer_loads(session: Session, row: AssignmentRow, ids: Sequence[str]) -> dict[str, int]:
    return _counts(session, row, AssignmentPair.reviewer_id, ids)


def paper_counts(session: Session, row: AssignmentRow, ids: Sequence[str]) -> dict[str, int]:
    return _counts(session, row, AssignmentPair.paper_id, ids)


# ---- the mutations (no version claim, no commit) -------------------------------------------


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
    """409 ``conflict_of_interest`` if the pair is a conflict of interest or a Not Willing
    bid (a chair's forbid is not: adding the pair lifts it)."""
    blocking = [
        c for c in _conflicts(session, venue_id, paper_id, reviewer_id) if c.source != "forbid"
    ]
    if blocking:
        reasons = [f"{c.source}: {c.reason}" if c.reason else c.source for c in blocking]
        raise ApiError(
            409,
            "conflict_of_interest",
            f"({paper_id}, {reviewer_id}) is a conflict of interest ({'; '.join(reasons)})",
            reasons=reasons,
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
    limits = run_limits(session, row)
    found = []
    max_load = limits.max_of(reviewer_id)
    load = reviewer_loads(session, row, [reviewer_id])[reviewer_id]
    if load + 1 > max_load:
        found.append(
            f"reviewer {reviewer_id!r} would review {load + 1} papers, over their max load "
            f"of {max_load}"
        )
    demand = limits.demand_of(paper_id)
    reviewers = paper_counts(session, row, [paper_id])[paper_id]
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
    existing = session.get(AssignmentPair, (row.id, paper_id, reviewer_id))
    if existing is None:
        score = pair_score(
            explainers, session, venue_id, paper_id, reviewer_id, explain=False, store=True
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
    """Apply ``edit`` to the draft's rows (refusals are :class:`ApiError`; nothing is
    committed). ``check_limits=False`` skips the per-edit max load / demand refusal (a
    bulk change checks its final state instead)."""
    venue_id, p, r = row.venue_id, edit.paper_id, edit.reviewer_id
    action = edit.action
    if action in ("pin", "assign"):
        refuse_conflict(session, venue_id, p, r)
        already = session.get(AssignmentPair, (row.id, p, r)) is not None
        if action == "assign" and already:
            raise ApiError(409, "already_assigned", f"{r!r} already reviews {p!r}")
        limits = overfilled_limits(session, row, p, r) if check_limits else []
        if limits and not edit.force:
            verb = "pinning" if action == "pin" else "adding"
            _refuse_overfill(
                f"{verb} ({p}, {r})",
                row,
                limits,
                "Swap a reviewer out instead, or send force=true to do it anyway",
            )
        lifted = _add_pair(explainers, session, row, p, r, pinned=action == "pin")
        if action == "pin":
            _ensure_pin(session, venue_id, p, r, actor)
            tightening = already or (
                not limits and not lifted and solve_candidate(session, row, p, r)
            )
        else:
            # the problem is unchanged unless a forbid was lifted: the bound still bounds it
            tightening = not lifted
        return Outcome(tightening, limits, {"overfilled": limits})
    if action == "unpin":
        pin_row = session.get(Pin, (venue_id, p, r))
        if pin_row is None:
            raise not_found("pin", f"{p}/{r}")
        session.delete(pin_row)
        pair = session.get(AssignmentPair, (row.id, p, r))
        if pair is not None:
            pair.pinned = False
        # the solve may have forced this pair: without it the bound is no longer proven
        return Outcome(tightening=False)
    if action == "forbid":
        dropped_pin = _forbid(session, venue_id, p, r, edit.reason or f"forbidden by {actor}")
        _drop_pair(session, row, p, r)
        return Outcome(tightening=not dropped_pin)
    if action == "unforbid":
        forbid_row = session.get(Conflict, (venue_id, p, r, "forbid"))
        if forbid_row is None:
            raise not_found("forbid", f"{p}/{r}")
        session.delete(forbid_row)
        return Outcome(tightening=False)
    if action == "remove":
        pair = session.get(AssignmentPair, (row.id, p, r))
        if pair is None:
            raise ApiError(409, "not_assigned", f"{r!r} does not review {p!r} in this run")
        if pair.pinned or session.get(Pin, (venue_id, p, r)) is not None:
            raise ApiError(
                409,
                "pinned_pair",
                f"({p}, {r}) is pinned: unpin it first (or forbid it, which drops the pin)",
            )
        session.delete(pair)
        return Outcome(tightening=True)
    if action == "swap":
        old_id = edit.remove_reviewer_id
        assert old_id is not None
        if old_id == r:
            raise ApiError(422, "validation_error", "a swap needs two different reviewers")
        old = session.get(AssignmentPair, (row.id, p, old_id))
        if old is None:
            raise ApiError(409, "not_assigned", f"{old_id!r} does not review {p!r} in this run")
        if session.get(AssignmentPair, (row.id, p, r)) is not None:
            raise ApiError(409, "already_assigned", f"{r!r} already reviews {p!r}")
        if old.pinned:
            raise ApiError(409, "pinned_pair", f"({p}, {old_id}) is pinned; unpin it first")
        refuse_conflict(session, venue_id, p, r)
        limits = (
            overfilled_limits(session, row, p, r, adds_reviewer_to_paper=False)
            if check_limits
            else []
        )
        if limits and not edit.force:
            _refuse_overfill(
                f"swapping {r!r} into {p!r}", row, limits, "Send force=true to swap anyway"
            )
        session.delete(old)
        dropped_pin = _forbid(
            session, venue_id, p, old_id, edit.reason or f"swapped out for {r} by {actor}"
        )
        lifted = _add_pair(explainers, session, row, p, r, pinned=True)
        _ensure_pin(session, venue_id, p, r, actor)
        tightening = (
            not limits and not lifted and not dropped_pin and solve_candidate(session, row, p, r)
        )
        return Outcome(tightening, limits, {"removed": old_id, "added": r, "overfilled": limits})
    raise ApiError(422, "validation_error", f"unknown action {action!r}")


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
) -> Applied:
    """Claim the draft's next version, ``run`` the mutation, recompute the summary,
    record the history entry and the audit entry, and describe the effect. Nothing is
    committed: the caller commits (apply) or rolls back (preview)."""
    if expected_version is not None and expected_version != row.version:
        raise ApiError(
            409,
            "stale_version",
            f"assignment {row.id} is at version {row.version}, not {expected_version}: it "
            "changed since you looked; reload it",
            version=row.version,
        )
    version_before = row.version
    before = snapshot(session, row, touched)
    objective_before = objective(session, row)
    violations_before = len(violations(session, row))
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
    row.summary = edited_summary(session, row, tightening=outcome.tightening)
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
    audit(
        session,
        row.venue_id,
        actor,
        audit_action,
        assignment_id=row.id,
        number=row.number,
        version=row.version,
        seq=entry.seq,
        **{k: v for k, v in record.items() if k in ("paper_id", "reviewer_id", "reason", "rows")},
        **outcome.audit,
    )
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
        violations=(violations_before, int(row.summary["constraints"]["violations"])),
        overfilled=outcome.overfilled,
        bound_lost=bound_held and not row.summary.get("bound_holds", True),
        listed=listed,
    )
    return Applied(entry, effect)


def _pair_out(item: Sequence[Any], names: Names) -> dict[str, Any]:
    p, r, score, pinned = item
    return {
        "paper_id": p,
        "paper_title": names.title(p),
        "reviewer_id": r,
        "reviewer_name": names.name(r),
        "score": score,
        "pinned": bool(pinned),
    }


def describe_effect(
    session: Session,
    row: AssignmentRow,
    *,
    action: str,
    changes: dict[str, list[Any]],
    objective_before: float,
    objective_after: float,
    counts: tuple[dict[str, int], dict[str, int]],
    loads: tuple[dict[str, int], dict[str, int]],
    demand: dict[str, int],
    max_load: dict[str, int],
    violations: tuple[int, int],
    overfilled: Sequence[str] = (),
    bound_lost: bool = False,
    listed: int | None = None,
) -> dict[str, Any]:
    """The effect of a change in numbers and sentences (``EditEffectOut``)."""
    added, removed = changes["pairs_added"], changes["pairs_removed"]
    paper_changes = [p for p in counts[0] if counts[0][p] != counts[1][p]]
    reviewer_changes = [r for r in loads[0] if loads[0][r] != loads[1][r]]
    cut = slice(0, listed)
    names = lookup(
        session,
        row.venue_id,
        [*(a[0] for a in added[cut]), *(a[0] for a in removed[cut]), *paper_changes[cut]],
        [*(a[1] for a in added[cut]), *(a[1] for a in removed[cut]), *reviewer_changes[cut]],
    )
    warnings: list[str] = list(overfilled)
    delta = objective_after - objective_before
    if action == "swap" and added and removed:
        old, new = removed[0][2], added[0][2]
        if new < old:
            warnings.append(f"swap replaces a {old:.3f} pair by a {new:.3f} one ({new - old:+.3f})")
    elif delta < -1e-12 and added:
        warnings.append(f"the objective falls by {-delta:.3f} (from {objective_before:.3f})")
    for p in paper_changes:
        if counts[1][p] < demand[p] <= counts[0][p]:
            warnings.append(f"paper {p} keeps {counts[1][p]} of the {demand[p]} reviewers it needs")
    if bound_lost:
        warnings.append(
            "the solver's bound no longer bounds the edited problem: the gap is not claimed"
        )
    if violations[1] > violations[0]:
        warnings.append(
            f"the run breaks {violations[1]} hard constraint{'s' if violations[1] != 1 else ''}"
            f" after this change ({violations[0]} before): publishing will list them"
        )
    return {
        "action": action,
        "allowed": True,
        "code": None,
        "detail": None,
        "force_allowed": False,
        "added": [_pair_out(a, names) for a in added[cut]],
        "added_total": len(added),
        "removed": [_pair_out(a, names) for a in removed[cut]],
        "removed_total": len(removed),
        "objective_before": objective_before,
        "objective_after": objective_after,
        "objective_change": delta,
        "loads": [
            {
                "reviewer_id": r,
                "reviewer_name": names.name(r),
                "before": loads[0][r],
                "after": loads[1][r],
                "max_load": max_load[r],
            }
            for r in reviewer_changes[cut]
        ],
        "papers": [
            {
                "paper_id": p,
                "paper_title": names.title(p),
                "before": counts[0][p],
                "after": counts[1][p],
                "demand": demand[p],
            }
            for p in paper_changes[cut]
        ],
        "constraints": {
            key: len(changes[key])
            for key in ("pins_added", "pins_removed", "forbids_added", "forbids_removed")
        },
        "violations_before": violations[0],
        "violations_after": violations[1],
        "warnings": warnings,
        "version": row.version,
    }


def refused_effect(row: AssignmentRow, action: str, error: ApiError) -> dict[str, Any]:
    """The effect of an edit that would be refused: nothing changes."""
    objective_now = float((row.summary or {}).get("objective") or 0.0)
    return {
        "action": action,
        "allowed": False,
        "code": error.code,
        "detail": error.detail if isinstance(error.detail, str) else str(error.detail),
        "force_allowed": bool(error.extra.get("force_allowed", False)),
        "added": [],
        "added_total": 0,
        "removed": [],
        "removed_total": 0,
        "objective_before": objective_now,
        "objective_after": objective_now,
        "objective_change": 0.0,
        "loads": [],
        "papers": [],
        "constraints": {
            "pins_added": 0,
            "pins_removed": 0,
            "forbids_added": 0,
            "forbids_removed": 0,
        },
        "violations_before": None,
        "violations_after": None,
        "warnings": [str(w) for w in error.extra.get("limits", [])],
        "version": row.version,
    }


def check_request(session: Session, row: AssignmentRow, edit: EditRequest) -> None:
    """422 for an unknown action or a swap without the reviewer it removes; 404 for ids
    the venue does not have."""
    if edit.action not in ACTIONS:
        raise ApiError(422, "validation_error", f"unknown action {edit.action!r}")
    if edit.action == "swap" and edit.remove_reviewer_id is None:
        raise ApiError(422, "validation_error", "a swap names remove_reviewer_id")
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
    except ApiError as error:
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
