"""Why a problem is infeasible, in a program chair's terms.

:func:`diagnose` runs cheap counting checks first (totals, per-paper and per-reviewer
counts, forced pairs, side constraints). When they find nothing and the problem has no
side constraint that couples pairs, it runs a max-flow feasibility check; if that fails it
looks for a Hall-type violator with a min cut: a set of papers whose eligible reviewers
cannot cover their demand (or a set of reviewers whose candidate papers cannot fill their
minimum loads).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from ortools.graph.python import max_flow

from matching import _flowgraph
from matching.constraints import (
    MaxPerGroup,
    RequireAttribute,
    apply_pair_filters,
    attribute_mask,
    group_codes,
    model_constraints,
)
from matching.problem import AssignmentProblem, IntArray

_LISTED = 10


@dataclass(frozen=True)
class Cause:
    """One reason for infeasibility.

    ``kind`` is a stable machine name (``capacity``, ``min_load_total``, ``paper_eligible``,
    ``reviewer_min``, ``forced_reviewer``, ``forced_paper``, ``attribute``,
    ``attribute_capacity``, ``group``, ``forced_group``, ``hall_papers``, ``hall_reviewers``,
    ``flow``; from the solvers: ``side_constraint``, ``probability_cap``, and ``time_limit``
    for :class:`~matching.solvers.ilp.SolverTimeout`, which does not prove infeasibility);
    ``ids`` the papers or reviewers involved; ``relaxation`` the smallest change that
    removes this cause."""

    kind: str
    message: str
    ids: tuple[str, ...]
    relaxation: str


@dataclass
class Diagnosis:
    """Causes found; ``flow_checked`` says whether the max-flow feasibility check ran and
    ``feasible`` its verdict (None when it could not decide, e.g. with coupling side
    constraints and no counting cause)."""

    causes: list[Cause] = field(default_factory=list)
    flow_checked: bool = False
    feasible: bool | None = None
    notes: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.causes)

    def __str__(self) -> str:
        if not self.causes:
            verdict = {True: "feasible", False: "infeasible", None: "not decided"}[self.feasible]
            lines = [f"no infeasibility cause found (max-flow check: {verdict})"]
        else:
            lines = [f"{c.message} (fix: {c.relaxation})" for c in self.causes]
        return "; ".join(lines + self.notes)


def diagnose(problem: AssignmentProblem, *, flow_check: bool = True) -> Diagnosis:
    """Every cause of infeasibility the checks can name (empty when none is found)."""
    problem = apply_pair_filters(problem)
    result = Diagnosis()
    paper_ids = np.asarray(problem.paper_ids, dtype=object)
    reviewer_ids = np.asarray(problem.reviewer_ids, dtype=object)
    rest = _flowgraph.residual(problem)

    over_reviewers = np.flatnonzero(rest.max_left < 0)
    if len(over_reviewers):
        forced = problem.max_load[over_reviewers] - rest.max_left[over_reviewers]
        details = [
            f"reviewer {reviewer_ids[r]} has {f} forced pairs, max load {problem.max_load[r]}"
            for r, f in zip(over_reviewers, forced, strict=True)
        ]
        result.causes.append(
            Cause(
                "forced_reviewer",
                _listing(details),
                tuple(reviewer_ids[over_reviewers]),
                "raise those max loads to the forced count or unforce pairs",
            )
        )
    over_papers = np.flatnonzero(rest.demand_left < 0)
    if len(over_papers):
        details = [
            f"paper {paper_ids[p]} has {problem.demand[p] - rest.demand_left[p]} forced pairs, "
            f"demand {problem.demand[p]}"
            for p in over_papers
        ]
        result.causes.append(
            Cause(
                "forced_paper",
                _listing(details),
                tuple(paper_ids[over_papers]),
                "raise those demands to the forced count or unforce pairs",
            )
        )

    total_demand = int(problem.demand.sum())
    total_capacity = int(problem.max_load.sum())
    if total_demand > total_capacity:
        missing = total_demand - total_capacity
        result.causes.append(
            Cause(
                "capacity",
                f"total demand {total_demand} exceeds total capacity {total_capacity}",
                (),
                f"add {missing} reviewer slots (raise max loads or recruit) or lower demand by "
                f"{missing}",
            )
        )
    total_min = int(problem.min_load.sum())
    if total_min > total_demand:
        excess = total_min - total_demand
        result.causes.append(
            Cause(
                "min_load_total",
                f"total minimum load {total_min} exceeds total demand {total_demand}",
                (),
                f"lower minimum loads by {excess} in total",
            )
        )

    usable = problem.max_load[problem.pair_reviewer] > 0
    eligible = np.bincount(problem.pair_paper[usable], minlength=problem.n_papers)
    short = np.flatnonzero(eligible < problem.demand)
    if len(short):
        details = [
            f"paper {paper_ids[p]} has {eligible[p]} eligible reviewers, needs {problem.demand[p]}"
            for p in short
        ]
        result.causes.append(
            Cause(
                "paper_eligible",
                _listing(details),
                tuple(paper_ids[short]),
                f"add {int((problem.demand[short] - eligible[short]).sum())} candidate reviewers "
                "to those papers or lower their demand to the eligible count",
            )
        )
    wanted = problem.demand[problem.pair_paper] > 0
    candidates = np.bincount(problem.pair_reviewer[wanted], minlength=problem.n_reviewers)
    starved = np.flatnonzero(candidates < problem.min_load)
    if len(starved):
        details = [
            f"reviewer {reviewer_ids[r]} has {candidates[r]} candidate papers, min load "
            f"{problem.min_load[r]}"
            for r in starved
        ]
        result.causes.append(
            Cause(
                "reviewer_min",
                _listing(details),
                tuple(reviewer_ids[starved]),
                "lower those minimum loads to the candidate count",
            )
        )

    coupling = model_constraints(problem)
    for constraint in coupling:
        if isinstance(constraint, RequireAttribute):
            result.causes.extend(_attribute_causes(problem, constraint, paper_ids))
        elif isinstance(constraint, MaxPerGroup):
            result.causes.extend(_group_causes(problem, constraint, paper_ids))

    if result.causes or not flow_check:
        return result
    status, _ = _flowgraph.solve_flow(problem, rest, None)
    result.flow_checked = True
    result.feasible = status == _flowgraph.OPTIMAL
    if result.feasible and coupling:
        result.feasible = None
        result.notes.append(
            "max-flow check passed without side constraints; the side constraints together "
            "may still be infeasible"
        )
    if result.feasible is False:
        result.causes.extend(_hall_causes(problem, rest, paper_ids, reviewer_ids))
        result.notes.append("found by the max-flow feasibility check")
    return result


def _listing(details: list[str]) -> str:
    shown = "; ".join(details[:_LISTED])
    if len(details) > _LISTED:
        shown += f"; and {len(details) - _LISTED} more"
    return shown


def _attribute_causes(
    problem: AssignmentProblem, constraint: RequireAttribute, paper_ids: np.ndarray
) -> list[Cause]:
    mask = attribute_mask(constraint, problem.n_reviewers)
    holders = mask[problem.pair_reviewer] & (problem.max_load[problem.pair_reviewer] > 0)
    count = np.bincount(problem.pair_paper[holders], minlength=problem.n_papers)
    needed = np.where(problem.demand > 0, constraint.min_count, 0)
    causes = []
    short = np.flatnonzero(count < needed)
    if len(short):
        details = [
            f"paper {paper_ids[p]} has {count[p]} eligible reviewers with {constraint.name}, "
            f"needs {needed[p]}"
            for p in short
        ]
        causes.append(
            Cause(
                "attribute",
                _listing(details),
                tuple(paper_ids[short]),
                f"add candidate reviewers with {constraint.name} to those papers or lower "
                f"min_count to {int(count[short].min())}",
            )
        )
    too_many = np.flatnonzero((problem.demand > 0) & (problem.demand < constraint.min_count))
    if len(too_many):
        details = [
            f"paper {paper_ids[p]} needs {constraint.min_count} reviewers with "
            f"{constraint.name} but has demand {problem.demand[p]}"
            for p in too_many
        ]
        causes.append(
            Cause(
                "attribute",
                _listing(details),
                tuple(paper_ids[too_many]),
                f"raise those demands to {constraint.min_count} or lower min_count",
            )
        )
    if not causes:
        causes.extend(_attribute_capacity_causes(problem, constraint, mask, paper_ids))
    return causes


def _attribute_capacity_causes(
    problem: AssignmentProblem,
    constraint: RequireAttribute,
    mask: np.ndarray,
    paper_ids: np.ndarray,
) -> list[Cause]:
    """Whether the reviewers with the attribute have enough slots for the papers that
    need them: in total (counting holders' max loads) and, by a min cut on the holders'
    candidate pairs, for a subset of papers (Hall's condition)."""
    rest = _flowgraph.residual(problem)
    forced_holders = np.bincount(
        problem.pair_paper[problem.forced][mask[problem.pair_reviewer[problem.forced]]],
        minlength=problem.n_papers,
    )
    needed = np.maximum(np.where(problem.demand > 0, constraint.min_count, 0) - forced_holders, 0)
    capacity = np.where(mask, np.maximum(rest.max_left, 0), 0)
    holders = np.flatnonzero(mask & (capacity > 0))
    wanting = np.flatnonzero(needed > 0)
    name = constraint.name
    each = "one" if constraint.min_count == 1 else str(constraint.min_count)
    if int(capacity.sum()) < int(needed.sum()):
        loads = capacity[holders]
        slots = (
            f"{_count(len(holders), 'reviewer')} with {name} × max {int(loads[0])} = "
            f"{int(loads.sum())} slots"
            if len(holders) and loads.min() == loads.max()
            else f"{_count(len(holders), 'reviewer')} with {name} have "
            f"{int(loads.sum())} free slots in total"
        )
        return [
            Cause(
                "attribute_capacity",
                f"{slots} for {_count(len(wanting), 'paper')} that each need {each} "
                f"({int(needed.sum())} in all)",
                tuple(paper_ids[wanting][:_LISTED]),
                f"raise the max loads of reviewers with {name} by "
                f"{int(needed.sum() - capacity.sum())} in total, add reviewers with {name}, "
                "or lower the minimum",
            )
        ]
    free = rest.free
    usable = mask[problem.pair_reviewer[free]] & (needed[problem.pair_paper[free]] > 0)
    pairs = free[usable]
    side = _min_cut_side(
        problem.pair_paper[pairs],
        problem.pair_reviewer[pairs],
        needed,
        capacity,
        problem.n_papers,
        problem.n_reviewers,
    )
    if side is None:
        return []
    candidates = np.unique(problem.pair_reviewer[pairs][np.isin(problem.pair_paper[pairs], side)])
    supply = int(capacity[candidates].sum())
    need = int(needed[side].sum())
    reviewer_ids = np.asarray(problem.reviewer_ids, dtype=object)
    return [
        Cause(
            "attribute_capacity",
            f"papers {_names(paper_ids[side])} together need {need} reviewers with {name} but "
            f"the {_count(len(candidates), 'reviewer')} with {name} among their candidates "
            f"({_names(reviewer_ids[candidates])}) {'has' if len(candidates) == 1 else 'have'} "
            f"{supply} free slots",
            tuple(paper_ids[side]),
            f"raise those reviewers' max loads by {need - supply} in total or add candidate "
            f"reviewers with {name} to those papers",
        )
    ]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _group_causes(
    problem: AssignmentProblem, constraint: MaxPerGroup, paper_ids: np.ndarray
) -> list[Cause]:
    codes = group_codes(constraint, problem.n_reviewers)
    labels = np.asarray(constraint.groups, dtype=object)
    usable = problem.max_load[problem.pair_reviewer] > 0
    papers = problem.pair_paper[usable]
    pair_groups = codes[problem.pair_reviewer[usable]]
    grouped = pair_groups >= 0
    n_groups = int(codes.max()) + 1 if len(codes) else 0
    per_group = np.bincount(
        papers[grouped] * max(n_groups, 1) + pair_groups[grouped],
        minlength=problem.n_papers * max(n_groups, 1),
    ).reshape(problem.n_papers, max(n_groups, 1))
    reachable = np.minimum(per_group, constraint.limit).sum(axis=1) + np.bincount(
        papers[~grouped], minlength=problem.n_papers
    )
    causes = []
    short = np.flatnonzero(reachable < problem.demand)
    if len(short):
        details = [
            f"paper {paper_ids[p]} can get {reachable[p]} reviewers with at most "
            f"{constraint.limit} per group, needs {problem.demand[p]}"
            for p in short
        ]
        causes.append(
            Cause(
                "group",
                _listing(details),
                tuple(paper_ids[short]),
                "raise the per-group limit or add candidate reviewers from other groups",
            )
        )
    forced = problem.forced
    forced_groups = codes[problem.pair_reviewer[forced]]
    keep = forced_groups >= 0
    if keep.any():
        key = problem.pair_paper[forced][keep] * n_groups + forced_groups[keep]
        unique, counts = np.unique(key, return_counts=True)
        excess = counts > constraint.limit
        over = unique[excess]
        if len(over):
            group_names = {int(c): labels[np.flatnonzero(codes == c)[0]] for c in over % n_groups}
            details = [
                f"paper {paper_ids[k // n_groups]} has {int(n)} forced reviewers from group "
                f"{group_names[int(k % n_groups)]}, limit {constraint.limit}"
                for k, n in zip(over, counts[excess], strict=True)
            ]
            causes.append(
                Cause(
                    "forced_group",
                    _listing(details),
                    tuple(paper_ids[over // n_groups]),
                    "raise the per-group limit to the forced count or unforce pairs",
                )
            )
    return causes


def _hall_causes(
    problem: AssignmentProblem,
    rest: _flowgraph.Residual,
    paper_ids: np.ndarray,
    reviewer_ids: np.ndarray,
) -> list[Cause]:
    """Min-cut certificates of infeasibility on each side, or a generic flow cause."""
    pairs = rest.free[rest.max_left[problem.pair_reviewer[rest.free]] > 0]
    papers = problem.pair_paper[pairs]
    reviewers = problem.pair_reviewer[pairs]
    causes = []
    short = _hall_violation(
        papers, reviewers, rest.demand_left, rest.max_left, problem.n_papers, problem.n_reviewers
    )
    if short is not None:
        side, need, supply = short
        causes.append(
            Cause(
                "hall_papers",
                f"papers {_names(paper_ids[side])} together need {need} more reviews but their "
                f"eligible reviewers can give at most {supply}",
                tuple(paper_ids[side]),
                f"add {need - supply} reviewer slots among their candidates or lower their "
                f"demand by {need - supply}",
            )
        )
    short = _hall_violation(
        reviewers, papers, rest.min_left, rest.demand_left, problem.n_reviewers, problem.n_papers
    )
    if short is not None:
        side, need, supply = short
        causes.append(
            Cause(
                "hall_reviewers",
                f"reviewers {_names(reviewer_ids[side])} together need at least {need} more papers "
                f"but their candidate papers can take at most {supply}",
                tuple(reviewer_ids[side]),
                f"lower their minimum loads by {need - supply} in total",
            )
        )
    if not causes:
        causes.append(
            Cause(
                "flow",
                "no assignment meets every demand and every load bound at once (max-flow check)",
                (),
                "lower minimum loads or raise maximum loads",
            )
        )
    return causes


def _hall_violation(
    left: IntArray,
    right: IntArray,
    left_need: IntArray,
    right_capacity: IntArray,
    n_left: int,
    n_right: int,
) -> tuple[IntArray, int, int] | None:
    """Left nodes (pairs ``left[i]``-``right[i]``) that together need more than their right
    neighbours can give, as ``(side, need, supply)``; None when every need can be met."""
    side = _min_cut_side(left, right, left_need, right_capacity, n_left, n_right)
    if side is None:
        return None
    degree = np.bincount(right[np.isin(left, side)], minlength=n_right)
    supply = int(np.minimum(degree, right_capacity).sum())
    need = int(left_need[side].sum())
    return side, need, supply


def _min_cut_side(
    left: IntArray,
    right: IntArray,
    left_need: IntArray,
    right_capacity: IntArray,
    n_left: int,
    n_right: int,
) -> IntArray | None:
    """Left nodes on the source side of a min cut when max flow < sum(left_need)."""
    source, sink = n_left + n_right, n_left + n_right + 1
    solver = max_flow.SimpleMaxFlow()
    solver.add_arcs_with_capacity(
        np.concatenate([np.full(n_left, source), left, np.arange(n_right) + n_left]),
        np.concatenate([np.arange(n_left), right + n_left, np.full(n_right, sink)]),
        np.concatenate(
            [np.maximum(left_need, 0), np.ones(len(left), np.int64), np.maximum(right_capacity, 0)]
        ).astype(np.int64),
    )
    if solver.solve(source, sink) != solver.OPTIMAL:
        return None
    if solver.optimal_flow() >= int(np.maximum(left_need, 0).sum()):
        return None
    nodes = np.asarray(solver.get_source_side_min_cut(), dtype=np.int64)
    side = np.sort(nodes[nodes < n_left])
    return side if len(side) else None


def _names(ids: np.ndarray) -> str:
    shown = ", ".join(str(x) for x in ids[:_LISTED])
    if len(ids) > _LISTED:
        shown += f" and {len(ids) - _LISTED} more"
    return shown
