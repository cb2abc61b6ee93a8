"""A chair's edits of a solved assignment, as standing constraints that survive re-solves.

Every edit is a change of the venue's pins (forced pairs) and forbids (chair-made conflicts):

- **pin** (paper, reviewer): pin it; lift a forbid of it;
- **forbid** (paper, reviewer): forbid it; drop a pin of it;
- **swap** (paper, old -> new): forbid (paper, old) and unpin it, pin (paper, new) and lift a
  forbid of it. The next solve keeps the new reviewer and never brings the old one back;
- **unpin** / **unforbid**: drop the pin / the forbid;
- **assign** (one assignment only): lift a forbid of it; **remove**: no standing change.

A face stores :class:`ConstraintEdit` in its own way (the API as pin and forbid rows, a file
user as a constraints CSV via :func:`apply_edit`). :func:`edited_summary` recomputes the
figures of an edited assignment, says what its bound refers to and whether it still holds,
and reports the hard constraints the edited pairs break (:class:`matching.Violation`, from
:func:`matching.check_assignment`); the API's edits and this module's file users share it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from matching.violations import Violation
from reviewer_recommender.services.params import AssignParams

Pair = tuple[str, str]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class ConstraintEdit:
    """Pairs to pin, unpin, forbid and unforbid (each a (paper_id, reviewer_id))."""

    pin: tuple[Pair, ...] = ()
    unpin: tuple[Pair, ...] = ()
    forbid: tuple[Pair, ...] = ()
    unforbid: tuple[Pair, ...] = ()


def pin_edit(paper_id: str, reviewer_id: str) -> ConstraintEdit:
    pair = (paper_id, reviewer_id)
    return ConstraintEdit(pin=(pair,), unforbid=(pair,))


def forbid_edit(paper_id: str, reviewer_id: str) -> ConstraintEdit:
    pair = (paper_id, reviewer_id)
    return ConstraintEdit(forbid=(pair,), unpin=(pair,))


def swap_edit(paper_id: str, remove_reviewer_id: str, add_reviewer_id: str) -> ConstraintEdit:
    """Replace ``remove_reviewer_id`` by ``add_reviewer_id`` on ``paper_id`` for good: a
    forbid of the old pair plus a pin of the new one."""
    if remove_reviewer_id == add_reviewer_id:
        raise ValueError("a swap needs two different reviewers")
    old, new = (paper_id, remove_reviewer_id), (paper_id, add_reviewer_id)
    return ConstraintEdit(pin=(new,), unforbid=(new,), forbid=(old,), unpin=(old,))


def unpin_edit(paper_id: str, reviewer_id: str) -> ConstraintEdit:
    return ConstraintEdit(unpin=((paper_id, reviewer_id),))


def unforbid_edit(paper_id: str, reviewer_id: str) -> ConstraintEdit:
    return ConstraintEdit(unforbid=((paper_id, reviewer_id),))


def assign_edit(paper_id: str, reviewer_id: str) -> ConstraintEdit:
    """Add a pair to one assignment only: a chair's forbid of it is lifted (adding it is an
    explicit choice), nothing is pinned, so a re-solve may drop it."""
    return ConstraintEdit(unforbid=((paper_id, reviewer_id),))


def remove_edit(_paper_id: str, _reviewer_id: str) -> ConstraintEdit:
    """Drop a pair from one assignment only: no standing change, so a re-solve may bring
    it back (forbid it to keep it out)."""
    return ConstraintEdit()


EDITS = {
    "pin": pin_edit,
    "unpin": unpin_edit,
    "forbid": forbid_edit,
    "unforbid": unforbid_edit,
    "assign": assign_edit,
    "remove": remove_edit,
}


def standing_edit(
    action: str, paper_id: str, reviewer_id: str, remove_reviewer_id: str | None = None
) -> ConstraintEdit:
    """The standing constraints an edit changes: ``action`` is one of :data:`EDITS` or
    ``swap`` (``reviewer_id`` in, ``remove_reviewer_id`` out). ValueError otherwise."""
    if action == "swap":
        if remove_reviewer_id is None:
            raise ValueError("a swap names the reviewer it removes")
        return swap_edit(paper_id, remove_reviewer_id, reviewer_id)
    if action not in EDITS:
        raise ValueError(f"unknown edit {action!r}")
    return EDITS[action](paper_id, reviewer_id)


def apply_edit(
    pins: pd.DataFrame, forbids: pd.DataFrame, edit: ConstraintEdit
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """New ``(pins, forbids)`` tables (``paper_id, reviewer_id``; other columns are kept for
    the rows that stay) after ``edit``."""
    return (
        _apply(pins, remove=edit.unpin, add=edit.pin),
        _apply(forbids, remove=edit.unforbid, add=edit.forbid),
    )


def _apply(table: pd.DataFrame, *, remove: Iterable[Pair], add: Iterable[Pair]) -> pd.DataFrame:
    gone = set(remove)
    keys = list(zip(table["paper_id"], table["reviewer_id"], strict=True))
    kept = table.loc[np.array([key not in gone for key in keys], dtype=bool)]
    present = set(zip(kept["paper_id"], kept["reviewer_id"], strict=True))
    new = [pair for pair in dict.fromkeys(add) if pair not in present]
    if not new:
        return kept.reset_index(drop=True)
    added = pd.DataFrame(new, columns=["paper_id", "reviewer_id"])
    return pd.concat([kept, added], ignore_index=True)


def params_limits(
    params: AssignParams, paper_ids: Sequence[str], reviewer_ids: Sequence[str]
) -> tuple[IntArray, IntArray, IntArray]:
    """``(demand per paper, min load per reviewer, max load per reviewer)`` under ``params``
    alone (its maps over its defaults; a max below ``min_load`` lowers that minimum)."""
    demand = np.array(
        [params.demand.get(p, params.reviewers_per_paper) for p in paper_ids], dtype=np.int64
    )
    max_load = np.array(
        [params.custom_max_load.get(r, params.max_load) for r in reviewer_ids], dtype=np.int64
    )
    return demand, np.minimum(params.min_load, max_load), max_load


def _counts(pairs: pd.DataFrame, column: str, ids: list[str]) -> IntArray:
    if not ids:
        return np.zeros(0, dtype=np.int64)
    counts = pairs.groupby(column).size().reindex(ids, fill_value=0)
    return counts.to_numpy(dtype=np.int64)


def constraints_summary(violations: Sequence[Violation], listed: int = 5) -> dict[str, Any]:
    """Whether an assignment satisfies every hard constraint, how many it breaks and the
    first ``listed`` in words (the ``constraints`` of an edited run's summary)."""
    return {
        "satisfied": not violations,
        "violations": len(violations),
        "first": [v.describe() for v in violations[:listed]],
    }


def edited_summary(
    summary: Mapping[str, Any],
    pairs: pd.DataFrame,
    reviewer_ids: Iterable[str],
    violations: Sequence[Violation],
    *,
    tightening: bool,
    bound_of: str,
) -> dict[str, Any]:
    """An assignment's summary after one more edit: figures recomputed from its ``pairs``
    (``paper_id, reviewer_id, score``), the solver's bound kept and labelled.

    ``summary`` is the stored summary (the solve's, or that of earlier edits);
    ``violations`` the hard constraints the edited pairs break now; ``tightening`` whether
    this edit only removed candidate pairs or forced candidate pairs within the limits
    (the edited problem is then a restriction of the solved one); ``bound_of`` names the
    problem the bound was proven for.

    - ``objective`` is recomputed; ``solver_objective`` keeps the solve's.
    - ``upper_bound`` stays the solver's, labelled by ``bound_of``; ``bound_holds`` says
      whether it still bounds the edited problem: only while *every* edit so far was
      tightening (a forced or non-candidate pin, an unpin, a lifted forbid relax the
      problem, and then the bound proves nothing, for good).
    - ``constraints``: whether the pairs satisfy every hard constraint, how many they break
      and the first few, in words.
    - ``gap`` is recomputed when the bound holds and the constraints are satisfied, null
      otherwise (no gap is claimed for an assignment outside the problem).
    """
    from reviewer_recommender.services.assignment import json_safe

    edited = dict(summary)
    scores = pairs["score"].to_numpy(dtype=np.float64)
    objective = float(scores.sum())
    if not edited.get("edited"):
        edited["solver_objective"] = edited.get("objective")
        edited["bound_holds"] = True
        edited["edits"] = 0
    holds = bool(edited.get("bound_holds", True)) and tightening
    bound = edited.get("upper_bound")
    per_paper = pairs.groupby("paper_id")["score"].mean() if len(pairs) else pd.Series()
    loads = _counts(pairs, "reviewer_id", list(reviewer_ids))
    satisfied = not violations
    gap = None
    if holds and satisfied and isinstance(bound, int | float):
        gap = max(0.0, (float(bound) - objective) / max(1.0, abs(float(bound))))
    randomness = edited.get("randomness")
    if isinstance(randomness, Mapping) and "after_edits" not in randomness:
        # the metrics describe the distribution the solve sampled from; an edited run is
        # no longer a sample of it
        edited["randomness"] = {
            **randomness,
            "after_edits": "these figures describe the distribution the solve sampled "
            "from, before the edits",
        }
    edited.update(
        {
            "edited": True,
            "edits": int(edited.get("edits", 0)) + 1,
            "objective": objective,
            "pairs_assigned": len(pairs),
            "mean_score": float(scores.mean()) if len(scores) else None,
            "min_score": float(scores.min()) if len(scores) else None,
            "min_paper_mean_score": float(per_paper.min()) if len(per_paper) else None,
            "load_min": int(loads.min()) if len(loads) else 0,
            "load_max": int(loads.max()) if len(loads) else 0,
            "bound_of": bound_of,
            "bound_holds": holds,
            "gap": gap,
            "constraints": constraints_summary(violations),
        }
    )
    return dict(json_safe(edited))
