"""A chair's edits of a solved assignment, as standing constraints that survive re-solves.

Every edit is a change of the venue's pins (forced pairs) and forbids (chair-made conflicts):

- **pin** (paper, reviewer): pin it; lift a forbid of it;
- **forbid** (paper, reviewer): forbid it; drop a pin of it;
- **swap** (paper, old -> new): forbid (paper, old) and unpin it, pin (paper, new) and lift a
  forbid of it. The next solve keeps the new reviewer and never brings the old one back.

A face stores :class:`ConstraintEdit` in its own way (the API as pin and forbid rows, a file
user as a constraints CSV via :func:`apply_edit`). :func:`edited_summary` recomputes the
figures of an edited assignment and says what its bound refers to.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from services.params import AssignParams

Pair = tuple[str, str]


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


def edited_summary(
    solved: dict[str, Any],
    pairs: pd.DataFrame,
    params: AssignParams,
    paper_ids: Iterable[str],
    reviewer_ids: Iterable[str],
) -> dict[str, Any]:
    """Figures of an edited assignment (``pairs``: ``paper_id, reviewer_id, score``) next
    to those of the solve (``solved``, the stored summary).

    The objective is recomputed from the pairs. The solver's upper bound stays a valid bound
    for every assignment that respects the edits, because pins and forbids only restrict the
    solved problem; when an edit broke a load or demand limit (a forced edit), the edited
    assignment is outside that problem and the bound says nothing about it: ``upper_bound``
    and ``gap`` are then null and ``limits_broken`` lists why."""
    from services.assignment import json_safe

    papers = list(paper_ids)
    reviewers = list(reviewer_ids)
    scores = pairs["score"].astype(float)
    objective = float(scores.sum())
    per_paper = pairs.groupby("paper_id").size().reindex(papers, fill_value=0)
    per_reviewer = pairs.groupby("reviewer_id").size().reindex(reviewers, fill_value=0)
    broken: list[str] = []
    for paper, count in per_paper.items():
        need = params.demand.get(str(paper), params.reviewers_per_paper)
        if count != need:
            broken.append(f"paper {paper} has {count} reviewers, demand {need}")
    for reviewer, load in per_reviewer.items():
        top = params.custom_max_load.get(str(reviewer), params.max_load)
        low = min(params.min_load, top)
        if not low <= load <= top:
            broken.append(f"reviewer {reviewer} has {load} papers, allowed {low}..{top}")
    stored = solved.get("upper_bound")
    bound = None if stored is None else float(stored)
    valid = bound is not None and not broken
    gap = (
        max(0.0, (bound - objective) / max(1.0, abs(bound)))
        if valid and bound is not None
        else None
    )
    return json_safe(
        {
            **solved,
            "edited": True,
            "objective": objective,
            "upper_bound": bound if valid else None,
            "gap": gap,
            "bound_refers_to": (
                "the solved problem before the edits; pins and forbids only restrict it, so "
                "the bound holds for every assignment that respects them"
                if valid
                else "nothing: an edit broke a load or demand limit, so the edited assignment "
                "is outside the solved problem"
            ),
            "solved_objective": solved.get("objective"),
            "pairs_assigned": len(pairs),
            "mean_score": float(scores.mean()) if len(scores) else None,
            "min_score": float(scores.min()) if len(scores) else None,
            "load_min": int(per_reviewer.min()) if len(per_reviewer) else 0,
            "load_max": int(per_reviewer.max()) if len(per_reviewer) else 0,
            "limits_broken": broken[:50],
        }
    )
