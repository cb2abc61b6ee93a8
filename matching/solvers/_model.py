"""The assignment integer program as sparse matrices, built without per-row Python loops.

Columns: one binary per free (non-forced) candidate pair, in ``rest.free`` order; the
fairness model adds one continuous column ``t`` (the lowest paper score). Scores enter
divided by ``scale`` (their largest magnitude), so any finite scores give coefficients in
[-1, 1]; ``total_units`` / ``fair_units`` turn model values back into score units.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from matching import _flowgraph
from matching.constraints import (
    MaxPerGroup,
    RequireAttribute,
    attribute_mask,
    group_codes,
)
from matching.problem import AssignmentProblem, FloatArray, IntArray
from matching.solvers._highs import MatrixModel


@dataclass
class AssignmentModel:
    problem: AssignmentProblem
    rest: _flowgraph.Residual
    constraints: list[Any]
    free: IntArray
    scale: float
    unit: FloatArray
    forced_total: float
    forced_score: FloatArray
    matrix: sp.csc_matrix
    row_lower: FloatArray
    row_upper: FloatArray
    fair_papers: IntArray
    coupled: bool

    @classmethod
    def build(
        cls, problem: AssignmentProblem, rest: _flowgraph.Residual, constraints: list[Any]
    ) -> AssignmentModel:
        free = rest.free
        scores = problem.pair_score[free]
        largest = max(float(scores.max()), -float(scores.min())) if len(scores) else 0.0
        scale = largest if largest > 0 else 1.0
        papers = problem.pair_paper[free]
        reviewers = problem.pair_reviewer[free]
        forced_papers = problem.pair_paper[problem.forced]
        forced_score = np.bincount(
            forced_papers, weights=problem.pair_score[problem.forced], minlength=problem.n_papers
        ).astype(np.float64)
        rows = _Rows(len(free))
        rows.add(
            papers,
            np.arange(len(free)),
            np.ones(len(free)),
            problem.n_papers,
            rest.demand_left,
            rest.demand_left,
        )
        degree = np.bincount(reviewers, minlength=problem.n_reviewers)
        binding = (rest.max_left < degree) | (rest.min_left > 0)
        rank = np.cumsum(binding) - 1
        on = binding[reviewers]
        rows.add(
            rank[reviewers[on]],
            np.flatnonzero(on),
            np.ones(int(on.sum())),
            int(binding.sum()),
            rest.min_left[binding].astype(np.float64),
            np.where(rest.max_left < degree, rest.max_left, np.inf)[binding],
        )
        for constraint in constraints:
            if isinstance(constraint, MaxPerGroup):
                _group_rows(rows, problem, papers, reviewers, constraint)
            elif isinstance(constraint, RequireAttribute):
                _attribute_rows(rows, problem, papers, reviewers, constraint)
        matrix, low, high = rows.matrix()
        return cls(
            problem=problem,
            rest=rest,
            constraints=list(constraints),
            free=free,
            scale=scale,
            unit=scores / scale,
            forced_total=float(problem.pair_score[problem.forced].sum()),
            forced_score=forced_score,
            matrix=matrix,
            row_lower=low,
            row_upper=high,
            fair_papers=np.flatnonzero(problem.demand > 0),
            coupled=any(isinstance(c, MaxPerGroup | RequireAttribute) for c in constraints),
        )

    @property
    def total_units(self) -> tuple[float, float]:
        return self.scale, self.forced_total

    @property
    def fair_units(self) -> tuple[float, float]:
        return self.scale, 0.0

    def total_model(self) -> MatrixModel:
        """Maximize the total (normalized) score."""
        return self._binary(self.unit)

    def feasibility_model(self) -> MatrixModel:
        return self._binary(np.zeros(len(self.free)))

    def fairness_model(self) -> MatrixModel:
        """Maximize ``t`` subject to every paper's score (normalized) >= ``t``."""
        base = self._binary(np.zeros(len(self.free)))
        n = len(self.free)
        fair_rows, columns, values = self._paper_score_entries()
        extra = sp.coo_matrix(
            (
                np.concatenate([values, -np.ones(len(self.fair_papers))]),
                (
                    np.concatenate([fair_rows, np.arange(len(self.fair_papers))]),
                    np.concatenate([columns, np.full(len(self.fair_papers), n)]),
                ),
            ),
            shape=(len(self.fair_papers), n + 1),
        )
        top = sp.hstack([base.matrix, sp.csc_matrix((base.matrix.shape[0], 1))])
        return MatrixModel(
            cost=np.concatenate([np.zeros(n), [1.0]]),
            lower=np.concatenate([base.lower, [-np.inf]]),
            upper=np.concatenate([base.upper, [np.inf]]),
            integer=np.concatenate([base.integer, [False]]),
            matrix=sp.vstack([top, extra]).tocsc(),
            row_lower=np.concatenate(
                [base.row_lower, -self.forced_score[self.fair_papers] / self.scale]
            ),
            row_upper=np.concatenate([base.row_upper, np.full(len(self.fair_papers), np.inf)]),
        )

    def floor_model(self, floor: float) -> MatrixModel:
        """Maximize the total subject to every paper's score >= ``floor`` (score units)."""
        base = self.total_model()
        fair_rows, columns, values = self._paper_score_entries()
        extra = sp.coo_matrix(
            (values, (fair_rows, columns)), shape=(len(self.fair_papers), len(self.free))
        )
        return replace(
            base,
            matrix=sp.vstack([base.matrix, extra]).tocsc(),
            row_lower=np.concatenate(
                [base.row_lower, (floor - self.forced_score[self.fair_papers]) / self.scale]
            ),
            row_upper=np.concatenate([base.row_upper, np.full(len(self.fair_papers), np.inf)]),
        )

    def selection(self, values: FloatArray) -> IntArray:
        """Indices (into the problem's pairs, sorted) of the forced pairs and the free
        pairs whose column is 1 in ``values``."""
        chosen = self.free[np.asarray(values[: len(self.free)]) > 0.5]
        return np.sort(np.concatenate([np.flatnonzero(self.problem.forced), chosen]))

    def paper_scores(self, values: FloatArray) -> FloatArray:
        """Every paper's score (sum of its assigned scores, forced included), score units."""
        chosen = np.asarray(values[: len(self.free)]) > 0.5
        return self.forced_score + np.bincount(
            self.problem.pair_paper[self.free[chosen]],
            weights=self.problem.pair_score[self.free[chosen]],
            minlength=self.problem.n_papers,
        )

    def lowest_paper_score(self, values: FloatArray) -> float:
        if not len(self.fair_papers):
            return 0.0
        return float(self.paper_scores(values)[self.fair_papers].min())

    def with_lowest(self, values: FloatArray, lowest: float) -> FloatArray:
        """A start for :meth:`fairness_model`: ``values`` and its ``t``."""
        return np.concatenate(
            [np.asarray(values[: len(self.free)], dtype=np.float64), [lowest / self.scale]]
        )

    def _binary(self, cost: FloatArray) -> MatrixModel:
        n = len(self.free)
        return MatrixModel(
            cost=np.asarray(cost, dtype=np.float64),
            lower=np.zeros(n),
            upper=np.ones(n),
            integer=np.ones(n, dtype=bool),
            matrix=self.matrix,
            row_lower=self.row_lower,
            row_upper=self.row_upper,
        )

    def _paper_score_entries(self) -> tuple[IntArray, IntArray, FloatArray]:
        """(row among fair papers, column, normalized score) of every free pair of a paper
        with positive demand."""
        rank = np.full(self.problem.n_papers, -1)
        rank[self.fair_papers] = np.arange(len(self.fair_papers))
        rows = rank[self.problem.pair_paper[self.free]]
        keep = rows >= 0
        return rows[keep], np.flatnonzero(keep), self.unit[keep]


class _Rows:
    """Rows accumulated as COO triplets with their bounds."""

    def __init__(self, n_cols: int) -> None:
        self.n_cols = n_cols
        self.n_rows = 0
        self.parts: list[tuple[IntArray, IntArray, FloatArray]] = []
        self.lower: list[FloatArray] = []
        self.upper: list[FloatArray] = []

    def add(
        self,
        rows: IntArray,
        columns: IntArray,
        values: FloatArray,
        count: int,
        lower: Any,
        upper: Any,
    ) -> None:
        """``count`` rows; ``rows`` are 0..count-1 within them."""
        self.parts.append(
            (
                np.asarray(rows) + self.n_rows,
                np.asarray(columns),
                np.asarray(values, dtype=np.float64),
            )
        )
        self.lower.append(np.broadcast_to(np.asarray(lower, dtype=np.float64), (count,)))
        self.upper.append(np.broadcast_to(np.asarray(upper, dtype=np.float64), (count,)))
        self.n_rows += count

    def matrix(self) -> tuple[sp.csc_matrix, FloatArray, FloatArray]:
        if self.parts:
            rows = np.concatenate([p[0] for p in self.parts]).astype(np.int64)
            columns = np.concatenate([p[1] for p in self.parts]).astype(np.int64)
            values = np.concatenate([p[2] for p in self.parts])
        else:
            rows = columns = np.zeros(0, dtype=np.int64)
            values = np.zeros(0)
        matrix = sp.coo_matrix((values, (rows, columns)), shape=(self.n_rows, self.n_cols))
        lower = np.concatenate(self.lower) if self.lower else np.zeros(0)
        upper = np.concatenate(self.upper) if self.upper else np.zeros(0)
        return matrix.tocsc(), lower, upper


def _group_rows(
    rows: _Rows,
    problem: AssignmentProblem,
    papers: IntArray,
    reviewers: IntArray,
    constraint: MaxPerGroup,
) -> None:
    """At most ``limit`` free reviewers of one group per paper, less the forced ones;
    rows only where a paper has more candidates of a group than that room."""
    codes = group_codes(constraint, problem.n_reviewers)
    n_groups = int(codes.max()) + 1 if len(codes) else 0
    if n_groups == 0:
        return
    forced_codes = codes[problem.pair_reviewer[problem.forced]]
    forced_keys = problem.pair_paper[problem.forced] * n_groups + forced_codes
    forced_unique, forced_count = np.unique(forced_keys[forced_codes >= 0], return_counts=True)
    pair_codes = codes[reviewers]
    grouped = np.flatnonzero(pair_codes >= 0)
    keys = papers[grouped] * n_groups + pair_codes[grouped]
    unique, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    forced_in = np.zeros(len(unique), dtype=np.int64)
    if len(forced_unique):
        at = np.minimum(np.searchsorted(forced_unique, unique), len(forced_unique) - 1)
        hit = forced_unique[at] == unique
        forced_in[hit] = forced_count[at[hit]]
    room = constraint.limit - forced_in
    needed = counts > room
    rank = np.cumsum(needed) - 1
    members = needed[inverse]
    rows.add(
        rank[inverse[members]],
        grouped[members],
        np.ones(int(members.sum())),
        int(needed.sum()),
        -np.inf,
        room[needed].astype(np.float64),
    )


def _attribute_rows(
    rows: _Rows,
    problem: AssignmentProblem,
    papers: IntArray,
    reviewers: IntArray,
    constraint: RequireAttribute,
) -> None:
    """At least ``min_count`` reviewers with the attribute per paper with positive
    demand, less the forced ones."""
    mask = attribute_mask(constraint, problem.n_reviewers)
    forced_holders = np.bincount(
        problem.pair_paper[problem.forced][mask[problem.pair_reviewer[problem.forced]]],
        minlength=problem.n_papers,
    )
    needed = np.where(problem.demand > 0, constraint.min_count, 0) - forced_holders
    wanting = needed > 0
    rank = np.cumsum(wanting) - 1
    members = np.flatnonzero(mask[reviewers] & wanting[papers])
    rows.add(
        rank[papers[members]],
        members,
        np.ones(len(members)),
        int(wanting.sum()),
        needed[wanting].astype(np.float64),
        np.inf,
    )
