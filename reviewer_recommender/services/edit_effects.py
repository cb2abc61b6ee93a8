"""What a change of a draft did: the state of the pairs it touched before and after, the
difference (what undo needs), and its effect in numbers and sentences (``EditEffectOut``).
Shared by single edits (:mod:`api.edits`), bulk changes (:mod:`api.bulk`) and undo
(:mod:`api.history`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from matching.violations import Violation
from reviewer_recommender.errors import DomainError
from reviewer_recommender.storage.models import AssignmentPair, AssignmentRow, DraftRule
from reviewer_recommender.storage.names import Names, lookup

Pair = tuple[str, str]


# ---- reading the state of some pairs --------------------------------------------------------


@dataclass
class PairState:
    in_run: bool = False
    score: float | None = None
    pinned: bool = False
    pin_by: str | None = None  # the draft pins it (created_by)
    forbid_reason: str | None = None  # the draft forbids it (its reason)


def snapshot(session: Session, row: AssignmentRow, pairs: Iterable[Pair]) -> dict[Pair, PairState]:
    """The run's state of ``pairs``: in the run (score, pinned), pinned or forbidden by the
    run's own rules (:mod:`reviewer_recommender.services.draft_rules`: what edits change)."""
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
        for kind, p, r, by, reason in session.execute(
            select(
                DraftRule.kind,
                DraftRule.paper_id,
                DraftRule.reviewer_id,
                DraftRule.created_by,
                DraftRule.reason,
            ).where(
                DraftRule.assignment_id == row.id,
                DraftRule.kind.in_(("pin", "forbid")),
                DraftRule.paper_id.in_(chunk),
            )
        ):
            if (p, r) not in wanted:
                continue
            if kind == "pin":
                states[(p, r)].pin_by = by or ""
            else:
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


def pairs_after(pairs: pd.DataFrame, changes: dict[str, list[Any]]) -> pd.DataFrame:
    """A run's pairs (``paper_id, reviewer_id, score, pinned``, as
    :func:`reviewer_recommender.services.publishing.run_pairs` reads them) after a change
    whose :func:`diff` is ``changes``: the change touches only the pairs it snapshots, so
    the whole run need not be read again (the slow part of an edit at 10,000 papers)."""
    keys = pd.MultiIndex.from_arrays([pairs["paper_id"], pairs["reviewer_id"]])

    def marked(key: str) -> npt.NDArray[np.bool_]:
        listed = changes.get(key) or []
        if not listed:
            return np.zeros(len(pairs), dtype=bool)
        wanted = pd.MultiIndex.from_tuples([(item[0], item[1]) for item in listed])
        return np.asarray(keys.isin(wanted), dtype=bool)

    kept = pairs.loc[~marked("pairs_removed")].copy()
    if len(kept):
        kept_keys = pd.MultiIndex.from_arrays([kept["paper_id"], kept["reviewer_id"]])
        for key, value in (("pinned", True), ("unpinned", False)):
            if changes.get(key):
                listed = pd.MultiIndex.from_tuples([(p, r) for p, r, *_ in changes[key]])
                kept.loc[np.asarray(kept_keys.isin(listed), dtype=bool), "pinned"] = value
    added = pd.DataFrame(
        [tuple(item[:4]) for item in changes.get("pairs_added") or []],
        columns=["paper_id", "reviewer_id", "score", "pinned"],
    )
    if not len(added):
        return kept.reset_index(drop=True)
    added = added.astype({"score": np.float64, "pinned": bool})
    return pd.concat([kept, added], ignore_index=True)


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


#: Broken (or mended) hard constraints an effect names one by one; the totals count them all.
VIOLATIONS_LISTED = 50


def _violation_out(violation: Violation, names: Names) -> dict[str, Any]:
    """A broken hard constraint as an effect lists it: its kind (matching.violations'
    vocabulary), the paper and reviewer it is about (with title and name) and its detail."""
    return {
        **violation.to_dict(),
        "paper_title": names.title(violation.paper_id),
        "reviewer_name": names.name(violation.reviewer_id),
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
    violations: tuple[Sequence[Violation], Sequence[Violation]],
    overfilled: Sequence[str] = (),
    bound_lost: bool = False,
    listed: int | None = None,
) -> dict[str, Any]:
    """The effect of a change in numbers and sentences (``EditEffectOut``)."""
    added, removed = changes["pairs_added"], changes["pairs_removed"]
    paper_changes = [p for p in counts[0] if counts[0][p] != counts[1][p]]
    reviewer_changes = [r for r in loads[0] if loads[0][r] != loads[1][r]]
    cut = slice(0, listed)
    earlier, later = set(violations[0]), set(violations[1])
    broken = [v for v in violations[1] if v not in earlier]
    mended = [v for v in violations[0] if v not in later]
    named = [*broken[:VIOLATIONS_LISTED], *mended[:VIOLATIONS_LISTED]]
    names = lookup(
        session,
        row.venue_id,
        [
            *(a[0] for a in added[cut]),
            *(a[0] for a in removed[cut]),
            *paper_changes[cut],
            *(v.paper_id for v in named),
        ],
        [
            *(a[1] for a in added[cut]),
            *(a[1] for a in removed[cut]),
            *reviewer_changes[cut],
            *(v.reviewer_id for v in named),
        ],
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
    before, after = len(violations[0]), len(violations[1])
    if after > before:
        newly = [v.describe() for v in broken]
        shown = "; ".join(newly[:3]) + (f"; and {len(newly) - 3} more" if len(newly) > 3 else "")
        warnings.append(
            f"the run breaks {after} hard constraint{'s' if after != 1 else ''} after this "
            f"change ({before} before): publishing will list them"
            + (f"; newly broken: {shown}" if newly else "")
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
        "violations_before": before,
        "violations_after": after,
        "violations_new": [_violation_out(v, names) for v in broken[:VIOLATIONS_LISTED]],
        "violations_new_total": len(broken),
        "violations_fixed": [_violation_out(v, names) for v in mended[:VIOLATIONS_LISTED]],
        "violations_fixed_total": len(mended),
        "warnings": warnings,
        "version": row.version,
    }


def refused_effect(row: AssignmentRow, action: str, error: DomainError) -> dict[str, Any]:
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
        "violations_new": [],
        "violations_new_total": 0,
        "violations_fixed": [],
        "violations_fixed_total": 0,
        "warnings": [str(w) for w in error.extra.get("limits", [])],
        "version": row.version,
    }
