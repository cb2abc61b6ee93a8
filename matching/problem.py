"""One encoding of the reviewer-assignment problem, shared by every solver.

Candidate pairs are parallel arrays ``(pair_paper, pair_reviewer, pair_score)``; a pair
that is not a candidate can never be assigned (conflicts are simply never candidates).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


class Infeasible(Exception):
    """No assignment satisfies the hard constraints; ``diagnosis`` says why in a chair's terms."""

    def __init__(self, diagnosis: Any):
        self.diagnosis = diagnosis
        super().__init__(str(diagnosis))


@dataclass(frozen=True, eq=False)
class AssignmentProblem:
    """Papers, reviewers, candidate pairs and the hard constraints over them.

    Shapes: ``demand`` (n_papers,), ``min_load``/``max_load`` (n_reviewers,), every
    ``pair_*`` and ``forced`` array (n_pairs,). ``pair_score`` is the affinity a solver
    maximizes (any real units; higher is better). Each (paper, reviewer) pair appears at
    most once. ``side_constraints`` holds optional extra constraints understood by the
    solvers that support them.
    """

    paper_ids: tuple[str, ...]
    reviewer_ids: tuple[str, ...]
    pair_paper: IntArray
    pair_reviewer: IntArray
    pair_score: FloatArray
    demand: IntArray
    min_load: IntArray
    max_load: IntArray
    forced: BoolArray
    side_constraints: tuple[Any, ...] = field(default=())

    def __post_init__(self) -> None:
        n_pairs = len(self.pair_paper)
        for name in ("pair_reviewer", "pair_score", "forced"):
            if len(getattr(self, name)) != n_pairs:
                raise ValueError(f"{name} has {len(getattr(self, name))} entries, expected {n_pairs}")
        if len(self.demand) != self.n_papers:
            raise ValueError(f"demand has {len(self.demand)} entries for {self.n_papers} papers")
        for name in ("min_load", "max_load"):
            if len(getattr(self, name)) != self.n_reviewers:
                raise ValueError(
                    f"{name} has {len(getattr(self, name))} entries for {self.n_reviewers} reviewers"
                )
        if n_pairs:
            if self.pair_paper.min() < 0 or self.pair_paper.max() >= self.n_papers:
                raise ValueError("pair_paper holds an index outside 0..n_papers-1")
            if self.pair_reviewer.min() < 0 or self.pair_reviewer.max() >= self.n_reviewers:
                raise ValueError("pair_reviewer holds an index outside 0..n_reviewers-1")
            if not np.all(np.isfinite(self.pair_score)):
                raise ValueError("pair_score holds NaN or infinite values")
            keys = self.pair_paper * self.n_reviewers + self.pair_reviewer
            if len(np.unique(keys)) != n_pairs:
                raise ValueError("a (paper, reviewer) pair appears more than once")
        if np.any(self.demand < 0) or np.any(self.min_load < 0):
            raise ValueError("demand and min_load must be non-negative")
        bad = np.flatnonzero(self.max_load < self.min_load)
        if len(bad):
            r = self.reviewer_ids[bad[0]]
            raise ValueError(
                f"reviewer {r}: max load {self.max_load[bad[0]]} below min load {self.min_load[bad[0]]}"
            )
        if len(set(self.paper_ids)) != self.n_papers:
            raise ValueError("paper ids are not unique")
        if len(set(self.reviewer_ids)) != self.n_reviewers:
            raise ValueError("reviewer ids are not unique")

    @property
    def n_papers(self) -> int:
        return len(self.paper_ids)

    @property
    def n_reviewers(self) -> int:
        return len(self.reviewer_ids)

    @property
    def n_pairs(self) -> int:
        return len(self.pair_paper)

    @classmethod
    def from_dense(
        cls,
        scores: npt.ArrayLike,
        *,
        paper_ids: Sequence[str],
        reviewer_ids: Sequence[str],
        demand: int | npt.ArrayLike,
        min_load: int | npt.ArrayLike = 0,
        max_load: int | npt.ArrayLike,
        conflicts: npt.ArrayLike | None = None,
        forced: npt.ArrayLike | None = None,
        side_constraints: Sequence[Any] = (),
    ) -> AssignmentProblem:
        """Build from a dense (n_papers, n_reviewers) score matrix; every non-conflicted pair
        is a candidate. ``conflicts`` and ``forced`` are boolean masks of the same shape.
        A pair both forced and conflicted is an error."""
        score_matrix = np.asarray(scores, dtype=np.float64)
        n_papers, n_reviewers = score_matrix.shape
        if (n_papers, n_reviewers) != (len(paper_ids), len(reviewer_ids)):
            raise ValueError(
                f"scores have shape {score_matrix.shape}, ids give ({len(paper_ids)}, {len(reviewer_ids)})"
            )
        conflict_mask = _mask(conflicts, score_matrix.shape, "conflicts")
        forced_mask = _mask(forced, score_matrix.shape, "forced")
        both = np.argwhere(conflict_mask & forced_mask)
        if len(both):
            p, r = both[0]
            raise ValueError(
                f"pair ({paper_ids[p]}, {reviewer_ids[r]}) is both forced and a conflict"
            )
        pair_paper, pair_reviewer = np.nonzero(~conflict_mask)
        return cls(
            paper_ids=tuple(paper_ids),
            reviewer_ids=tuple(reviewer_ids),
            pair_paper=pair_paper.astype(np.int64),
            pair_reviewer=pair_reviewer.astype(np.int64),
            pair_score=score_matrix[pair_paper, pair_reviewer],
            demand=_per_item(demand, n_papers, "demand"),
            min_load=_per_item(min_load, n_reviewers, "min_load"),
            max_load=_per_item(max_load, n_reviewers, "max_load"),
            forced=forced_mask[pair_paper, pair_reviewer],
            side_constraints=tuple(side_constraints),
        )

    def score_matrix(self, fill: float = np.nan) -> FloatArray:
        """Dense (n_papers, n_reviewers) view of the candidate scores; ``fill`` elsewhere."""
        dense = np.full((self.n_papers, self.n_reviewers), fill, dtype=np.float64)
        dense[self.pair_paper, self.pair_reviewer] = self.pair_score
        return dense


def _mask(value: npt.ArrayLike | None, shape: tuple[int, int], name: str) -> BoolArray:
    if value is None:
        return np.zeros(shape, dtype=bool)
    mask = np.asarray(value, dtype=bool)
    if mask.shape != shape:
        raise ValueError(f"{name} mask has shape {mask.shape}, expected {shape}")
    return mask


def _per_item(value: int | npt.ArrayLike, n: int, name: str) -> IntArray:
    array = np.asarray(value)
    if array.ndim == 0:
        return np.full(n, int(array), dtype=np.int64)
    if array.shape != (n,):
        raise ValueError(f"{name} has shape {array.shape}, expected ({n},)")
    return array.astype(np.int64)
