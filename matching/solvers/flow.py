"""Exact min-cost-flow solver (OR-Tools) for problems without coupling side constraints."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from matching import _flowgraph
from matching.assignment import Assignment, total_score
from matching.constraints import apply_pair_filters, model_constraints
from matching.diagnose import diagnose
from matching.monitor import SolveMonitor, check_stop
from matching.problem import AssignmentProblem, BoolArray, FloatArray, Infeasible, IntArray
from matching.validate import OptionError, needs_ilp_message, option_name

# |integer cost| * (nodes + 1)^2 stays below this, which keeps OR-Tools' cost scaling
# (it multiplies costs by the node count) and its potentials clear of int64 overflow.
_COST_HEADROOM = 2.0**61
_MAX_SCALE = 1e12
# Below this many free pairs a problem is solved on all its pairs at once.
_RESTRICT_FROM = 200_000
# Dense per-row thresholds (float32 matrix) up to this many cells, sorting beyond.
_DENSE_CELLS = 16_000_000
_MAX_ROUNDS = 8


class FlowSolver:
    """Maximum-affinity assignment by min-cost flow; exact for demands, [min, max] loads,
    forced pairs and pair filters (``MinScore``).

    Encoding: see :mod:`matching._flowgraph` (papers supply demand, pair arcs of capacity 1,
    reviewer lower bounds by the lower-bound transformation, forced pairs pre-assigned).

    Integer costs: each free pair costs ``-round(score * 2**e)``, with the power of two
    ``2**e`` chosen so that the largest |score| maps to at most ``min(max_scale, 2**61 /
    (nodes + 1)**2)``: any finite scores work (1e308 or 1e-300 alike) and integer scores
    scale exactly. The flow is optimal for the rounded scores; with ``delta`` the largest
    rounding error (in score units, <= 0.5 / 2**e) and ``n`` free assigned pairs, its true
    objective is within ``2 * n * delta`` of the true optimum.

    Candidate pairs and the certificate: a large problem (``restrict=None``: from 200,000
    free pairs; ``True``: always; ``False``: never) is first solved on a subset of its pairs,
    each paper's ``demand + k`` and each reviewer's ``max load + k`` best ones (default
    ``k=4``). The flow's dual potentials (shortest paths on its residual network, see
    :func:`matching._flowgraph.potentials`) then give every left-out pair a reduced cost;
    if none is negative, the subset's optimum is optimal over ALL pairs (LP duality: the
    potentials are a feasible dual of the full problem with the same value). Otherwise the
    improving pairs join the subset and it is solved again (after 8 rounds, or if the
    subset is infeasible, the solver falls back to every pair).

    Result: ``objective`` is the sum of the original scores of the chosen pairs;
    ``upper_bound = objective + 2 * n * delta`` bounds the optimum of the full problem
    (equal to the objective when scores scale exactly, e.g. integers). ``parameters``:
    ``certificate`` (in words), ``pairs_solved``, ``rounds``, ``rounding_bound``,
    ``cost_scale_log2`` (``e``), ``exact: True``.
    """

    name = "flow"

    def __init__(
        self, *, max_scale: float = _MAX_SCALE, restrict: bool | None = None, k: int = 4
    ) -> None:
        if not max_scale >= 1.0:
            raise ValueError(f"max_scale must be at least 1, got {max_scale}")
        if k < 0:
            raise ValueError(f"k must be non-negative, got {k}")
        self.max_scale = max_scale
        self.restrict = restrict
        self.k = k

    def solve(
        self,
        problem: AssignmentProblem,
        *,
        time_limit: float | None = None,
        seed: int | None = None,
        monitor: SolveMonitor | None = None,
    ) -> Assignment:
        """``time_limit`` and ``seed`` are accepted for the common interface; min-cost flow
        is deterministic. ``monitor`` is told each round and polled between rounds (one
        OR-Tools solve is not interruptible; it takes seconds only at 20k x 20k)."""
        start = time.perf_counter()
        check_stop(monitor)
        filtered = apply_pair_filters(problem)
        coupling = model_constraints(filtered)
        if coupling:
            raise OptionError(option_name(coupling[0]), needs_ilp_message(coupling[0], "flow"))
        rest = _flowgraph.residual(filtered)
        free = _FreePairs.of(filtered, rest, self.max_scale)
        restrict = self.restrict
        if restrict is None:
            restrict = len(free.pairs) >= _RESTRICT_FROM
        subset = free.initial_subset(rest, self.k) if restrict else None
        rounds = 0
        while True:
            rounds += 1
            pairs = free.pairs if subset is None else free.pairs[subset]
            if monitor is not None:
                monitor.report(
                    f"min-cost flow on {len(pairs)} of {len(free.pairs)} candidate pairs "
                    f"(round {rounds})"
                )
            costs = free.costs if subset is None else free.costs[subset]
            status, flows = _flowgraph.solve_flow(filtered, rest, costs, pairs)
            check_stop(monitor)
            if subset is None:
                break
            if status != _flowgraph.OPTIMAL:
                subset = None  # the subset is too small to be feasible: use every pair
                continue
            distance = _flowgraph.potentials(filtered, rest, pairs, costs, flows)
            if distance is None:  # not optimal on its subset (never expected): be safe
                subset = None
                continue
            improving = free.improving(distance, subset)
            if len(improving) == 0:
                break
            if rounds >= _MAX_ROUNDS:
                subset = None
                continue
            subset[improving] = True
        if status != _flowgraph.OPTIMAL:
            raise Infeasible(diagnose(filtered))
        chosen = np.concatenate([np.flatnonzero(filtered.forced), pairs[flows > 0]])
        selected = _original_index(problem, filtered, np.sort(chosen))
        objective = total_score(problem.pair_score[selected])
        rounding_bound = 2.0 * int(flows.sum()) * free.delta
        n_all = filtered.n_pairs
        n_forced = int(filtered.forced.sum())
        certificate = (
            f"optimal over all {n_all} candidate pairs (min-cost flow on every pair)"
            if subset is None
            else f"certified optimal over all {n_all} candidate pairs: min-cost flow on "
            f"{len(pairs) + n_forced} pairs, no other pair has a negative reduced cost under "
            "its dual potentials"
        )
        if rounding_bound > 0:
            certificate += f", up to score rounding of at most {rounding_bound:.3g}"
        return Assignment(
            problem=problem,
            selected=selected,
            objective=objective,
            upper_bound=objective + rounding_bound,
            solver=self.name,
            parameters={
                "certificate": certificate,
                "pairs_solved": len(pairs) + n_forced,
                "rounds": rounds,
                "rounding_bound": rounding_bound,
                "cost_scale_log2": free.exponent,
                "exact": True,
            },
            seed=seed,
            solve_seconds=time.perf_counter() - start,
        )


@dataclass
class _FreePairs:
    """The free (non-forced) candidate pairs with their integer costs.

    ``pairs`` indexes the problem's pairs; ``scaled`` is ``score * 2**exponent`` and
    ``costs = -round(scaled)``; ``delta`` the largest rounding error in score units.
    ``complete`` is true when the free pairs are every (paper, reviewer) pair in row-major
    order (a dense scores table without conflicts or pins): per-pair work then runs on
    (papers x reviewers) matrix views instead of gathers."""

    problem: AssignmentProblem
    pairs: IntArray
    papers: IntArray
    reviewers: IntArray
    scaled: FloatArray
    costs: IntArray
    exponent: int
    delta: float
    complete: bool

    @classmethod
    def of(
        cls, problem: AssignmentProblem, rest: _flowgraph.Residual, max_scale: float
    ) -> _FreePairs:
        everything = not problem.forced.any()
        pairs = rest.free
        # Without forced pairs the free pairs are all pairs: use views, not gathers.
        scores = problem.pair_score if everything else problem.pair_score[pairs]
        papers = problem.pair_paper if everything else problem.pair_paper[pairs]
        reviewers = problem.pair_reviewer if everything else problem.pair_reviewer[pairs]
        nodes = problem.n_papers + problem.n_reviewers + 1
        exponent = _scale_exponent(scores, min(max_scale, _COST_HEADROOM / (nodes + 1) ** 2))
        factor = 2.0**exponent if abs(exponent) < 1000 else None
        scaled = scores * factor if factor is not None else np.ldexp(scores, exponent)
        rounded = np.rint(scaled)
        delta = 0.0
        if len(pairs):
            error = rounded - scaled
            np.abs(error, out=error)
            delta = float(np.ldexp(error.max(), -exponent))
        costs = rounded.astype(np.int64)
        np.negative(costs, out=costs)
        complete = (
            everything
            and problem.n_pairs == problem.n_papers * problem.n_reviewers
            and bool(getattr(problem, "pairs_in_order", False))
        )
        return cls(problem, pairs, papers, reviewers, scaled, costs, exponent, delta, complete)

    def initial_subset(self, rest: _flowgraph.Residual, k: int) -> BoolArray:
        """Mask over the free pairs: each paper's ``demand_left + k`` and each reviewer's
        ``max_left + k`` best pairs (ties may add a few)."""
        problem = self.problem
        k_paper = int(max(rest.demand_left.max(initial=0), 0)) + k
        k_reviewer = int(max(rest.max_left.max(initial=0), 0)) + k
        shape = (problem.n_papers, problem.n_reviewers)
        if self.complete:
            matrix = self.scaled.reshape(shape)
            chosen = (matrix >= _row_threshold(matrix, k_paper)[:, None]) | (
                matrix >= _row_threshold(matrix.T, k_reviewer)[None, :]
            )
            return chosen.reshape(-1)
        if shape[0] * shape[1] <= _DENSE_CELLS:
            dense = np.full(shape, -np.inf, dtype=np.float32)
            dense[self.papers, self.reviewers] = self.scaled
            value: npt.NDArray[np.floating] = dense[self.papers, self.reviewers]
            paper_floor = _row_threshold(dense, k_paper)
            reviewer_floor = _row_threshold(dense.T, k_reviewer)
        else:
            value = self.scaled
            paper_floor = _group_threshold(self.papers, self.scaled, shape[0], k_paper)
            reviewer_floor = _group_threshold(self.reviewers, self.scaled, shape[1], k_reviewer)
        return (value >= paper_floor[self.papers]) | (value >= reviewer_floor[self.reviewers])

    def improving(self, distance: IntArray, subset: BoolArray) -> IntArray:
        """Positions (into the free pairs) of the pairs outside ``subset`` whose reduced
        cost under the potentials ``distance`` is negative."""
        n_papers = self.problem.n_papers
        paper_part = distance[:n_papers]
        reviewer_part = distance[n_papers : n_papers + self.problem.n_reviewers]
        if self.complete:
            reduced = self.costs.reshape(n_papers, len(reviewer_part)) + paper_part[:, None]
            reduced -= reviewer_part[None, :]
            negative = reduced.reshape(-1) < 0
        else:
            negative = self.costs + paper_part[self.papers] - reviewer_part[self.reviewers] < 0
        negative &= ~subset
        return np.flatnonzero(negative)


def _scale_exponent(scores: FloatArray, cap: float) -> int:
    """The largest ``e`` with ``max|scores| * 2**e <= cap`` (0 for no or zero scores)."""
    if len(scores) == 0:
        return 0
    largest = max(float(scores.max()), -float(scores.min()))
    if largest == 0.0:
        return 0
    return math.floor(math.log2(cap) - math.log2(largest))


def _row_threshold(matrix: npt.NDArray[np.floating], k: int) -> npt.NDArray[np.floating]:
    """Per row, the k-th largest value (-inf when the row has fewer than k cells)."""
    if matrix.shape[1] <= k or matrix.shape[0] == 0:
        return np.full(matrix.shape[0], -np.inf, dtype=matrix.dtype)
    return -np.partition(-matrix, k - 1, axis=1)[:, k - 1]


def _group_threshold(group: IntArray, value: FloatArray, n_groups: int, k: int) -> FloatArray:
    """Per group, the k-th largest of its values (-inf when it has fewer than k), by one
    sort on a composite key (group, then value descending)."""
    floor = np.full(n_groups, -np.inf)
    if len(value) == 0 or k == 0:
        return floor
    low, high = float(value.min()), float(value.max())
    spread = (high - value) / (high - low) if high > low else np.zeros(len(value))
    order = np.argsort(group + 0.999 * spread)
    sorted_group = group[order]
    starts = np.searchsorted(sorted_group, np.arange(n_groups))
    ends = np.searchsorted(sorted_group, np.arange(n_groups), side="right")
    has_k = ends - starts >= k
    floor[has_k] = value[order[starts[has_k] + k - 1]]
    return floor


def _original_index(
    original: AssignmentProblem, filtered: AssignmentProblem, selected: IntArray
) -> IntArray:
    """Map pair indices of ``filtered`` (a pair-filtered copy) back to ``original``."""
    if filtered is original:
        return selected.astype(np.int64)
    keys = original.pair_paper * original.n_reviewers + original.pair_reviewer
    wanted = filtered.pair_paper[selected] * original.n_reviewers + filtered.pair_reviewer[selected]
    if len(keys) > 1 and bool(np.all(keys[1:] > keys[:-1])):
        return np.searchsorted(keys, wanted).astype(np.int64)
    order = np.argsort(keys, kind="stable")
    return np.sort(order[np.searchsorted(keys[order], wanted)]).astype(np.int64)
