"""Shared min-cost-flow encoding of an assignment problem without side constraints.

Nodes: papers ``0..P-1``, reviewers ``P..P+R-1``, sink ``P+R``. Forced pairs are
pre-assigned (they reduce the paper's demand and the reviewer's loads) and are not arcs.

Reviewer lower bounds use the standard lower-bound transformation, which is exact: an arc
``r -> sink`` with flow in ``[l, u]`` is replaced by an arc with capacity ``u - l`` plus a
demand of ``l`` units at ``r`` and a supply of ``l`` at the sink. Any feasible flow of the
transformed network plus ``l`` on that arc is a feasible flow of the original network with
the same cost, and conversely, so optima (and infeasibility) coincide. Papers supply their
remaining demand; the sink absorbs ``sum(demand) - sum(min_load)``. Pair arcs have
capacity 1, so an integral min-cost flow (which the network simplex / cost-scaling
algorithms return for integral data) is a 0/1 assignment.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from ortools.graph.python import min_cost_flow

from matching.problem import AssignmentProblem, IntArray


@dataclass(frozen=True)
class Residual:
    """What is left to decide once the forced pairs are assigned.

    ``free`` indexes the non-forced candidate pairs; the ``*_left`` arrays may be negative
    when forced pairs already exceed a demand or a maximum load (the problem is then
    infeasible)."""

    free: IntArray
    demand_left: IntArray
    min_left: IntArray
    max_left: IntArray


def residual(problem: AssignmentProblem) -> Residual:
    forced_papers = problem.pair_paper[problem.forced]
    forced_reviewers = problem.pair_reviewer[problem.forced]
    paper_forced = np.bincount(forced_papers, minlength=problem.n_papers)
    reviewer_forced = np.bincount(forced_reviewers, minlength=problem.n_reviewers)
    return Residual(
        free=np.flatnonzero(~problem.forced),
        demand_left=problem.demand - paper_forced,
        min_left=np.maximum(problem.min_load - reviewer_forced, 0),
        max_left=problem.max_load - reviewer_forced,
    )


def solve_flow(
    problem: AssignmentProblem,
    rest: Residual,
    costs: IntArray | None,
    pairs: IntArray | None = None,
) -> tuple[int, IntArray]:
    """Min-cost flow over ``pairs`` (indices of free pairs of ``problem``; default all of
    ``rest.free``). ``costs`` (len(pairs),) integer unit costs or None for a pure
    feasibility check. Returns (OR-Tools status, flow per pair of ``pairs``)."""
    pairs = rest.free if pairs is None else pairs
    return solve_arcs(
        problem.n_papers,
        problem.n_reviewers,
        problem.pair_paper[pairs],
        problem.pair_reviewer[pairs],
        np.ones(len(pairs), np.int64),
        np.zeros(len(pairs), np.int64) if costs is None else costs,
        rest,
    )


def solve_arcs(
    n_papers: int,
    n_reviewers: int,
    arc_paper: IntArray,
    arc_reviewer: IntArray,
    capacities: IntArray,
    costs: IntArray,
    rest: Residual,
) -> tuple[int, IntArray]:
    """Min-cost flow on paper -> reviewer arcs (parallel arcs allowed) with integer
    ``capacities`` and unit ``costs``; papers supply ``rest.demand_left``, reviewers take
    between ``rest.min_left`` and ``rest.max_left`` (the lower-bound transformation of the
    module docstring), all in the same integer units as the capacities. Returns (OR-Tools
    status, flow per arc)."""
    sink = n_papers + n_reviewers
    if np.any(rest.demand_left < 0) or np.any(rest.max_left < rest.min_left):
        return int(min_cost_flow.SimpleMinCostFlow.INFEASIBLE), np.zeros(len(arc_paper), np.int64)
    tails = np.concatenate([arc_paper, np.arange(n_reviewers) + n_papers])
    heads = np.concatenate([arc_reviewer + n_papers, np.full(n_reviewers, sink)])
    all_capacities = np.concatenate(
        [
            np.asarray(capacities, dtype=np.int64),
            (rest.max_left - rest.min_left).astype(np.int64),
        ]
    )
    unit_costs = np.concatenate(
        [np.asarray(costs, dtype=np.int64), np.zeros(n_reviewers, np.int64)]
    )
    supplies = np.concatenate(
        [
            rest.demand_left.astype(np.int64),
            -rest.min_left.astype(np.int64),
            [int(rest.min_left.sum() - rest.demand_left.sum())],
        ]
    )
    flow = min_cost_flow.SimpleMinCostFlow()
    arcs = flow.add_arcs_with_capacity_and_unit_cost(tails, heads, all_capacities, unit_costs)
    flow.set_nodes_supplies(np.arange(sink + 1), supplies)
    status = flow.solve()
    if status != flow.OPTIMAL:
        return int(status), np.zeros(len(arc_paper), np.int64)
    return int(status), np.asarray(flow.flows(arcs[: len(arc_paper)]), dtype=np.int64)


def potentials(
    problem: AssignmentProblem,
    rest: Residual,
    pairs: IntArray,
    costs: IntArray,
    flows: IntArray,
) -> IntArray | None:
    """Node potentials ``d`` (papers, reviewers, sink; int64) proving a min-cost flow
    optimal, or None if the flow is not optimal (a negative cycle in its residual network).

    ``d`` are shortest-path distances on the residual network of the flow over ``pairs``
    (with ``costs`` and ``flows`` per pair) from a virtual node joined to every node by a
    0-cost arc, by vectorized Bellman-Ford. Every residual arc (i, j) then has reduced cost
    ``cost + d[i] - d[j] >= 0``; in LP terms ``u[p] = d[p] - d[sink]`` and
    ``v[r] = d[sink] - d[P + r]`` are optimal duals of the demand and load rows, and a pair
    (p, r) left out of ``pairs`` can improve the flow only if ``cost + d[p] - d[P + r] < 0``
    (its reduced cost; see :func:`improving_pairs`)."""
    n_papers, n_reviewers = problem.n_papers, problem.n_reviewers
    sink = n_papers + n_reviewers
    papers = problem.pair_paper[pairs]
    reviewers = problem.pair_reviewer[pairs] + n_papers
    used = flows > 0
    load = np.bincount(problem.pair_reviewer[pairs][used], minlength=n_reviewers)
    room = np.flatnonzero(load < rest.max_left)  # arc reviewer -> sink can take more
    above = np.flatnonzero(load > rest.min_left)  # arc reviewer -> sink can give back
    tails = np.concatenate(
        [np.where(used, reviewers, papers), room + n_papers, np.full(len(above), sink)]
    )
    heads = np.concatenate(
        [np.where(used, papers, reviewers), np.full(len(room), sink), above + n_papers]
    )
    weights = np.concatenate(
        [np.where(used, -costs, costs), np.zeros(len(room) + len(above), np.int64)]
    )
    distance = np.zeros(sink + 1, dtype=np.int64)
    if len(tails) == 0:
        return distance
    order = np.argsort(heads, kind="stable")
    tails, heads, weights = tails[order], heads[order], weights[order]
    targets, starts = np.unique(heads, return_index=True)
    for _ in range(sink + 2):
        best = np.minimum.reduceat(distance[tails] + weights, starts)
        improved = best < distance[targets]
        if not improved.any():
            return distance
        distance[targets[improved]] = best[improved]
    return None


def improving_pairs(
    problem: AssignmentProblem, distance: IntArray, pairs: IntArray, costs: IntArray
) -> IntArray:
    """The pairs among ``pairs`` (with ``costs``) whose reduced cost under the potentials
    ``distance`` is negative: the only pairs that could improve the flow."""
    n_papers = problem.n_papers
    reduced = (
        costs
        + distance[problem.pair_paper[pairs]]
        - distance[problem.pair_reviewer[pairs] + n_papers]
    )
    return pairs[reduced < 0]


OPTIMAL = int(min_cost_flow.SimpleMinCostFlow.OPTIMAL)
INFEASIBLE = int(min_cost_flow.SimpleMinCostFlow.INFEASIBLE)
BAD_COST_RANGE = int(min_cost_flow.SimpleMinCostFlow.BAD_COST_RANGE)
