"""Emergency re-assignment: repair a live assignment with as few changes as possible.

After deployment some reviewers withdraw and some pairs must go. The chair wants the papers
left short filled again at the best affinity, and nobody else's assignment touched.
:func:`reassign` takes the problem as it is NOW (candidate pairs without the withdrawn
reviewers' and the removed pairs, current loads, demands, conflicts, pins) and the live
pairs still standing (``keep``), and returns the assignment that

1. keeps as many of the ``keep`` pairs as any assignment meeting the hard constraints can
   (every one of them whenever that is possible), and among those
2. has the maximum total score.

It changes as few pairs as possible: every assignment with the paper demands has
``sum(demand)`` pairs, so the pairs it adds are ``sum(demand) - kept``; maximizing the kept
pairs minimizes both the pairs removed and the pairs added.

**Stage 1 (fill).** Every ``keep`` pair is forced, so only the vacated slots are free: the
exact min-cost flow (:class:`~matching.solvers.FlowSolver`) fills each paper's
``demand - kept`` slots at maximum affinity within the reviewers' remaining loads. The
pairs it adds are exactly the vacated slots, the fewest any assignment keeping the pairs
can add, and its total is the maximum among such assignments.

**Stage 2 (moves), only if stage 1 is infeasible** (a short paper's remaining candidates
are all at their maximum load, a lowered demand or load, ...). Stage A: a min-cost flow with
cost -1 on every ``keep`` pair and 0 elsewhere gives the largest number of them any
feasible assignment keeps (integral: a network flow). Its dual potentials (shortest paths
on the optimal residual network, :func:`matching._flowgraph.potentials`) characterize ALL
stage-A optima by complementary slackness: an arc with positive reduced cost is at its
lower bound and one with negative reduced cost at its upper bound in every optimum, the
others are free. Stage B fixes those arcs (pairs left out or forced, reviewer loads pinned
to their minimum or maximum) and maximizes the total score over what is left, again an
exact min-cost flow. The result is the lexicographic optimum: fewest moves first, then the
maximum affinity; no big-M weights, no integer program.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from matching import _flowgraph
from matching.assignment import Assignment
from matching.diagnose import diagnose
from matching.monitor import SolveMonitor, check_stop
from matching.problem import AssignmentProblem, BoolArray, Infeasible, IntArray
from matching.solvers.flow import FlowSolver
from matching.validate import OptionError


@dataclass(frozen=True)
class Reassignment:
    """The repaired assignment and how it differs from the pairs to keep.

    ``assignment`` is over the problem given (``solver`` is ``"reassign"``; its bound is
    the flow's bound on the best assignment keeping the pairs it keeps). ``kept``,
    ``moved`` and ``added`` index the problem's pairs: the ``keep`` pairs in the result,
    the ``keep`` pairs that had to go (empty after stage 1), and the result's pairs that
    were not ``keep`` pairs. ``stage`` is ``"fill"`` or ``"moves"``."""

    assignment: Assignment
    kept: IntArray
    moved: IntArray
    added: IntArray
    stage: str
    parameters: dict[str, Any] = field(default_factory=dict)


def reassign(
    problem: AssignmentProblem,
    keep: npt.ArrayLike,
    *,
    monitor: SolveMonitor | None = None,
) -> Reassignment:
    """Repair with the fewest changes (see the module docstring). ``keep`` is a boolean
    mask (n_pairs,) of the live pairs to keep; ``problem.forced`` pairs are hard (pins)
    whether live or not. Raises :class:`Infeasible` (with a diagnosis) when no assignment
    exists even moving every pair, :class:`OptionError` for side constraints (a
    re-assignment honours demands, loads, conflicts and pins only)."""
    began = time.perf_counter()
    keep_mask = np.asarray(keep, dtype=bool)
    if keep_mask.shape != (problem.n_pairs,):
        raise ValueError(f"keep mask has shape {keep_mask.shape}, expected ({problem.n_pairs},)")
    if problem.side_constraints:
        raise OptionError(
            "side_constraints",
            "a re-assignment honours demands, loads, conflicts, bids and pins; it cannot "
            "also enforce side constraints (solve a new assignment for those)",
        )
    check_stop(monitor)
    stage = "fill"
    filled = replace(problem, forced=problem.forced | keep_mask)
    if monitor is not None:
        monitor.report("re-assignment: filling the vacated slots", fraction=0.1)
    try:
        result = _solve_if_feasible(filled, monitor)
    except Infeasible:
        result = None
    details: dict[str, Any] = {
        "bound_refers_to": "the best total score among assignments that keep every live pair"
    }
    if result is None:
        stage = "moves"
        if monitor is not None:
            monitor.report("re-assignment: finding the fewest moves", fraction=0.4)
        result, details = _fewest_moves(problem, keep_mask, monitor)
    chosen = result.mask
    kept = np.flatnonzero(chosen & keep_mask)
    moved = np.flatnonzero(~chosen & keep_mask)
    added = np.flatnonzero(chosen & ~keep_mask)
    parameters = {
        **result.parameters,
        "stage": stage,
        "kept": len(kept),
        "moved": len(moved),
        "added": len(added),
        **details,
    }
    assignment = Assignment(
        problem=problem,
        selected=result.selected,
        objective=result.objective,
        upper_bound=result.upper_bound,
        solver="reassign",
        parameters=parameters,
        solve_seconds=time.perf_counter() - began,
    )
    return Reassignment(assignment, kept, moved, added, stage, parameters)


def _solve_if_feasible(problem: AssignmentProblem, monitor: SolveMonitor | None) -> Assignment:
    quick = diagnose(problem, flow_check=False)
    if quick:
        raise Infeasible(quick)
    return FlowSolver().solve(problem, monitor=monitor)


def _fewest_moves(
    problem: AssignmentProblem, keep: BoolArray, monitor: SolveMonitor | None
) -> tuple[Assignment, dict[str, Any]]:
    """Stage 2: lexicographic (most ``keep`` pairs kept, then maximum score), exactly."""
    rest = _flowgraph.residual(problem)
    free = rest.free
    costs = -keep[free].astype(np.int64)
    status, flows = _flowgraph.solve_flow(problem, rest, costs, free)
    check_stop(monitor)
    if status != _flowgraph.OPTIMAL:
        raise Infeasible(diagnose(problem))
    distance = _flowgraph.potentials(problem, rest, free, costs, flows)
    if distance is None:  # the flow was not optimal: never expected from the solver
        raise RuntimeError("re-assignment: the min-cost flow returned a non-optimal flow")
    n_papers = problem.n_papers
    sink = n_papers + problem.n_reviewers
    reduced = (
        costs
        + distance[problem.pair_paper[free]]
        - distance[problem.pair_reviewer[free] + n_papers]
    )
    left_out = np.zeros(problem.n_pairs, dtype=bool)
    left_out[free[reduced > 0]] = True
    forced = problem.forced.copy()
    forced[free[reduced < 0]] = True
    reviewer_reduced = distance[n_papers:sink] - distance[sink]
    forced_load = np.bincount(problem.pair_reviewer[problem.forced], minlength=problem.n_reviewers)
    lowest = np.maximum(problem.min_load, forced_load)
    min_load = np.where(reviewer_reduced < 0, problem.max_load, problem.min_load)
    max_load = np.where(reviewer_reduced > 0, lowest, problem.max_load)
    best_kept = int(keep[problem.forced].sum() + (flows * -costs).sum())
    restricted = replace(problem, forced=forced, min_load=min_load, max_load=max_load)
    survivors = ~left_out
    restricted = restricted.keep_pairs(survivors)
    result = FlowSolver().solve(restricted, monitor=monitor)
    selected = np.flatnonzero(survivors)[result.selected]
    if int(keep[selected].sum()) != best_kept:  # the face is exact; guard the invariant
        raise RuntimeError("re-assignment: the second stage lost kept pairs")
    assignment = Assignment(
        problem=problem,
        selected=np.sort(selected),
        objective=result.objective,
        upper_bound=result.upper_bound,
        solver="reassign",
        parameters=dict(result.parameters),
    )
    return assignment, {
        "bound_refers_to": "the best total score among assignments that keep the most "
        "live pairs possible"
    }
