"""Integer program (PuLP) with side constraints: fairness, group limits, required attributes."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pulp

from matching import _flowgraph
from matching.assignment import Assignment
from matching.constraints import (
    Fairness,
    MaxPerGroup,
    RequireAttribute,
    apply_pair_filters,
    attribute_mask,
    group_codes,
    model_constraints,
)
from matching.diagnose import Cause, Diagnosis, diagnose
from matching.monitor import SolveMonitor, check_stop
from matching.problem import AssignmentProblem, Infeasible, IntArray
from matching.solvers.flow import _original_index

BACKENDS = ("highs", "cbc")


class SolverTimeout(Infeasible):
    """The time limit ran out before the solver found any feasible assignment.

    A subclass of :class:`Infeasible` so that every face reports it like infeasibility
    (CLI exit 2, the diagnosis on stderr), but the problem was NOT proven infeasible: the
    diagnosis has one cause of kind ``time_limit`` ("no feasible assignment found in T s")
    whose relaxation is to allow more time or relax the side constraints, and
    ``diagnosis.feasible`` is None (undecided)."""

    def __init__(self, time_limit: float | None):
        self.time_limit = time_limit
        seconds = "the time allowed" if time_limit is None else f"{time_limit:g} s"
        super().__init__(
            Diagnosis(
                causes=[
                    Cause(
                        "time_limit",
                        f"no feasible assignment found in {seconds} (the problem is not proven "
                        "infeasible)",
                        (),
                        "allow more time (a higher time limit) or relax the side constraints",
                    )
                ],
                feasible=None,
            )
        )


@dataclass
class _Model:
    prob: pulp.LpProblem
    variables: list[pulp.LpVariable]
    paper_rows: list[tuple[int, list[tuple[pulp.LpVariable, float]], float]]


class IlpSolver:
    """Maximum-affinity assignment as a 0/1 integer program built with PuLP.

    One binary per non-forced candidate pair (forced pairs are constants). Rows: demand
    per paper (equality), min/max load per reviewer (only the rows that can bind), then the
    side constraints of :mod:`matching.constraints`. ``backend`` is ``"highs"`` (default,
    ``pulp.HiGHS`` through highspy) or ``"cbc"`` (``PULP_CBC_CMD``). ``gap`` is the relative
    MIP gap at which the solver may stop (default 1e-9, i.e. prove optimality).

    Certificate: ``upper_bound`` is HiGHS' MIP dual bound (never weaker than the LP
    relaxation); with CBC it is the LP relaxation optimum, solved separately. With
    ``Fairness`` the bound is that of the second stage (total affinity given the fairness
    floor); the time limit then applies to each stage.
    """

    name = "ilp"

    def __init__(
        self,
        *,
        backend: str = "highs",
        gap: float = 1e-9,
        fairness_gap: float = 1e-3,
        msg: bool = False,
        threads: int | None = None,
    ) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"unknown ILP backend {backend!r}; choose one of {BACKENDS}")
        self.backend = backend
        self.gap = gap
        self.fairness_gap = fairness_gap
        self.msg = msg
        self.threads = threads

    def solve(
        self,
        problem: AssignmentProblem,
        *,
        time_limit: float | None = None,
        seed: int | None = None,
        monitor: SolveMonitor | None = None,
    ) -> Assignment:
        start = time.perf_counter()
        check_stop(monitor)
        filtered = apply_pair_filters(problem)
        constraints = model_constraints(filtered)
        quick = diagnose(filtered, flow_check=False)
        if quick:
            raise Infeasible(quick)
        rest = _flowgraph.residual(filtered)
        model = self._build(filtered, rest, constraints)
        scores = filtered.pair_score[rest.free]
        forced_total = float(filtered.pair_score[filtered.forced].sum())
        total = pulp.LpAffineExpression(zip(model.variables, scores.tolist(), strict=True))
        parameters: dict[str, Any] = {"backend": self.backend, "gap_tolerance": self.gap}
        fairness = [c for c in constraints if isinstance(c, Fairness)]
        if fairness:
            start_values = self._max_total_values(
                filtered, rest, constraints, model, total, time_limit
            )
            floor, min_bound = self._fair_floor(
                model, filtered, rest, fairness[0], time_limit, start_values
            )
            parameters.update(
                fairness_keep=fairness[0].keep,
                min_paper_score_floor=floor,
                min_paper_score_bound=min_bound,
            )
        model.prob.setObjective(total)
        status, values, bound = self._run(model, time_limit)
        if status == pulp.LpStatusInfeasible:
            raise Infeasible(self._explain(filtered, constraints, time_limit))
        if values is None:
            raise SolverTimeout(time_limit)
        chosen = np.concatenate([np.flatnonzero(filtered.forced), rest.free[values > 0.5]])
        selected = _original_index(problem, filtered, np.sort(chosen))
        objective = float(problem.pair_score[selected].sum())
        parameters["status"] = pulp.LpStatus[status]
        return Assignment(
            problem=problem,
            selected=selected,
            objective=objective,
            upper_bound=max(objective, bound + forced_total),
            solver=self.name,
            parameters=parameters,
            seed=seed,
            solve_seconds=time.perf_counter() - start,
        )

    def _build(
        self, problem: AssignmentProblem, rest: _flowgraph.Residual, constraints: list[Any]
    ) -> _Model:
        prob = pulp.LpProblem("assignment", pulp.LpMaximize)
        free = rest.free
        variables = [prob.add_variable(f"x{i}", 0, 1, cat=pulp.LpBinary) for i in range(len(free))]
        papers = problem.pair_paper[free]
        reviewers = problem.pair_reviewer[free]
        scores = problem.pair_score[free]

        paper_groups = _groups(papers, problem.n_papers)
        forced_score = np.bincount(
            problem.pair_paper[problem.forced],
            weights=problem.pair_score[problem.forced],
            minlength=problem.n_papers,
        )
        paper_rows = []
        for p, members in enumerate(paper_groups):
            ones = [(variables[i], 1.0) for i in members]
            prob.addConstraint(
                pulp.LpConstraint(
                    pulp.LpAffineExpression(ones), pulp.LpConstraintEQ, rhs=int(rest.demand_left[p])
                ),
                name=f"demand_{p}",
            )
            if problem.demand[p] > 0:
                weighted = [(variables[i], float(scores[i])) for i in members]
                paper_rows.append((p, weighted, float(forced_score[p])))

        degree = np.bincount(reviewers, minlength=problem.n_reviewers)
        for r, members in enumerate(_groups(reviewers, problem.n_reviewers)):
            ones = [(variables[i], 1.0) for i in members]
            if rest.max_left[r] < degree[r]:
                prob.addConstraint(
                    pulp.LpConstraint(
                        pulp.LpAffineExpression(ones),
                        pulp.LpConstraintLE,
                        rhs=int(rest.max_left[r]),
                    ),
                    name=f"max_{r}",
                )
            if rest.min_left[r] > 0:
                prob.addConstraint(
                    pulp.LpConstraint(
                        pulp.LpAffineExpression(ones),
                        pulp.LpConstraintGE,
                        rhs=int(rest.min_left[r]),
                    ),
                    name=f"min_{r}",
                )

        for index, constraint in enumerate(constraints):
            if isinstance(constraint, MaxPerGroup):
                _add_group_rows(prob, problem, variables, papers, reviewers, constraint, index)
            elif isinstance(constraint, RequireAttribute):
                _add_attribute_rows(prob, problem, variables, papers, reviewers, constraint, index)
        return _Model(prob=prob, variables=variables, paper_rows=paper_rows)

    def _fair_floor(
        self,
        model: _Model,
        problem: AssignmentProblem,
        rest: _flowgraph.Residual,
        fairness: Fairness,
        time_limit: float | None,
        start_values: np.ndarray,
    ) -> tuple[float, float]:
        """Stage 1: the floor (best minimum paper score found, loosened by ``keep``) and a
        proven upper bound on the minimum paper score."""
        if not model.paper_rows:
            return 0.0, 0.0
        lowest = model.prob.add_variable("min_paper_score")
        for index, (paper, terms, constant) in enumerate(model.paper_rows):
            model.prob.addConstraint(
                pulp.LpConstraint(
                    pulp.LpAffineExpression([*terms, (lowest, -1.0)]),
                    pulp.LpConstraintGE,
                    rhs=-constant,
                ),
                name=f"fair_{index}_{paper}",
            )
        model.prob.setObjective(pulp.LpAffineExpression([(lowest, 1.0)]))
        fair_papers = [p for p, _, _ in model.paper_rows]
        start_min = float(_paper_totals(problem, rest, start_values)[fair_papers].min())
        for variable, value in zip(model.variables, start_values, strict=True):
            variable.varValue = float(value)
        lowest.varValue = start_min
        _, values, min_bound = self._run(model, time_limit, warm=True, gap=self.fairness_gap)
        best = start_min
        if values is not None:
            best = max(best, float(_paper_totals(problem, rest, values)[fair_papers].min()))
        # Stage 2 keeps the stage-1 rows (paper score >= lowest) and bounds ``lowest`` below
        # by the floor; a hair of slack keeps the stage-1 solution feasible despite
        # floating-point summation order.
        floor = best - (1.0 - fairness.keep) * abs(best) - 1e-9 * max(1.0, abs(best))
        lowest.lowBound = floor
        return floor, max(min_bound, best)

    def _max_total_values(
        self,
        problem: AssignmentProblem,
        rest: _flowgraph.Residual,
        constraints: list[Any],
        model: _Model,
        total: pulp.LpAffineExpression,
        time_limit: float | None,
    ) -> np.ndarray:
        """Stage 0 of fairness: 0/1 per free pair of a max-total assignment."""
        if all(isinstance(c, Fairness) for c in constraints):
            from matching.solvers.flow import FlowSolver

            plain = problem.with_side_constraints()
            chosen = FlowSolver().solve(plain).selected
            return np.isin(rest.free, chosen).astype(np.float64)
        model.prob.setObjective(total)
        status, values, _ = self._run(model, time_limit)
        if status == pulp.LpStatusInfeasible:
            raise Infeasible(self._explain(problem, constraints, time_limit))
        if values is None:
            raise SolverTimeout(time_limit)
        return values

    def _explain(
        self, problem: AssignmentProblem, constraints: list[Any], time_limit: float | None
    ) -> Diagnosis:
        """The diagnosis, plus which side constraint is infeasible on its own (each checked
        by a feasibility ILP) or, if none is, that they conflict only together."""
        diagnosis = diagnose(problem)
        if diagnosis.causes:
            return diagnosis
        coupling = [c for c in constraints if not isinstance(c, Fairness)]
        rest = _flowgraph.residual(problem)
        alone = []
        for constraint in coupling:
            model = self._build(problem, rest, [constraint])
            model.prob.setObjective(pulp.LpAffineExpression())
            status, _, _ = self._run(model, time_limit)
            if status == pulp.LpStatusInfeasible:
                alone.append(constraint)
        names = ", ".join(_describe(c) for c in (alone or coupling))
        message = (
            f"side constraint {names} cannot hold together with the demands and loads"
            if alone
            else f"side constraints {names} cannot all hold at once with the demands and loads"
        )
        diagnosis.causes.append(
            Cause(
                "side_constraint",
                message,
                (),
                "raise the group limit, lower the attribute minimum, or add candidate reviewers",
            )
        )
        return diagnosis

    def _solver(
        self,
        time_limit: float | None,
        mip: bool = True,
        warm: bool = False,
        gap: float | None = None,
    ) -> pulp.LpSolver:
        common: dict[str, Any] = {
            "msg": self.msg,
            "timeLimit": time_limit,
            "gapRel": self.gap if gap is None else gap,
        }
        if self.threads is not None:
            common["threads"] = self.threads
        if self.backend == "highs":
            return _WarmHiGHS(warm=warm, mip=mip, **common)
        return pulp.PULP_CBC_CMD(mip=mip, warmStart=warm, **common)

    def _run(
        self,
        model: _Model,
        time_limit: float | None,
        *,
        warm: bool = False,
        gap: float | None = None,
    ) -> tuple[int, np.ndarray | None, float]:
        """Solve (``warm``: start from the variables' current values); returns (PuLP
        status, 0/1 values per variable or None, objective bound without the forced
        constant)."""
        prob = model.prob
        status = prob.solve(self._solver(time_limit, warm=warm, gap=gap))
        if status == pulp.LpStatusInfeasible or prob.sol_status not in (
            pulp.LpSolutionOptimal,
            pulp.LpSolutionIntegerFeasible,
        ):
            return status, None, float("inf")
        values = np.array([v.varValue or 0.0 for v in model.variables])
        if self.backend == "highs":
            info = prob.solverModel.getInfo()
            # PuLP hands HiGHS the negated objective of a maximization.
            bound = -float(info.mip_dual_bound)
            if not np.isfinite(bound):
                bound = float(pulp.value(prob.objective) or 0.0)
        else:
            bound = self._relaxation_bound(model, time_limit)
            for variable, value in zip(model.variables, values, strict=True):
                variable.varValue = value
        return status, values, bound

    def _relaxation_bound(self, model: _Model, time_limit: float | None) -> float:
        model.prob.solve(self._solver(time_limit, mip=False))
        return float(pulp.value(model.prob.objective) or 0.0) - float(model.prob.objective.constant)


class _WarmHiGHS(pulp.HiGHS):
    """pulp.HiGHS (highspy) that can hand HiGHS the variables' current values as a start."""

    def __init__(self, *, warm: bool = False, **options: Any) -> None:
        super().__init__(**options)
        self.warm = warm

    def callSolver(self, lp: pulp.LpProblem) -> None:
        if self.warm:
            import highspy

            start = highspy.HighsSolution()
            columns = [0.0] * len(lp.variables())
            for variable in lp.variables():
                columns[variable.index] = float(variable.varValue or 0.0)
            start.col_value = columns
            start.value_valid = True
            lp.solverModel.setSolution(start)
        lp.solverModel.run()


def _paper_totals(
    problem: AssignmentProblem, rest: _flowgraph.Residual, values: np.ndarray
) -> np.ndarray:
    """Sum of assigned scores per paper (forced pairs included) for 0/1 ``values``."""
    return np.bincount(
        problem.pair_paper[rest.free],
        weights=problem.pair_score[rest.free] * (values > 0.5),
        minlength=problem.n_papers,
    ) + np.bincount(
        problem.pair_paper[problem.forced],
        weights=problem.pair_score[problem.forced],
        minlength=problem.n_papers,
    )


def _describe(constraint: Any) -> str:
    if isinstance(constraint, MaxPerGroup):
        return f"MaxPerGroup(limit={constraint.limit})"
    if isinstance(constraint, RequireAttribute):
        return f"RequireAttribute({constraint.name}, min_count={constraint.min_count})"
    return type(constraint).__name__


def _groups(keys: IntArray, n: int) -> list[IntArray]:
    """Indices of ``keys`` grouped by value 0..n-1 (one array per value)."""
    order = np.argsort(keys, kind="stable")
    bounds = np.searchsorted(keys[order], np.arange(n + 1))
    return [order[bounds[k] : bounds[k + 1]] for k in range(n)]


def _add_group_rows(
    prob: pulp.LpProblem,
    problem: AssignmentProblem,
    variables: list[pulp.LpVariable],
    papers: IntArray,
    reviewers: IntArray,
    constraint: MaxPerGroup,
    index: int,
) -> None:
    codes = group_codes(constraint, problem.n_reviewers)
    n_groups = int(codes.max()) + 1 if len(codes) else 0
    if n_groups == 0:
        return
    forced_codes = codes[problem.pair_reviewer[problem.forced]]
    forced_keys = problem.pair_paper[problem.forced] * n_groups + forced_codes
    forced_count = dict(
        zip(*np.unique(forced_keys[forced_codes >= 0], return_counts=True), strict=True)
    )
    pair_codes = codes[reviewers]
    grouped = np.flatnonzero(pair_codes >= 0)
    keys = papers[grouped] * n_groups + pair_codes[grouped]
    order = np.argsort(keys, kind="stable")
    unique, starts, counts = np.unique(keys[order], return_index=True, return_counts=True)
    for key, begin, count in zip(unique, starts, counts, strict=True):
        room = constraint.limit - int(forced_count.get(key, 0))
        if count <= room:
            continue
        members = grouped[order[begin : begin + count]]
        prob.addConstraint(
            pulp.LpConstraint(
                pulp.LpAffineExpression([(variables[i], 1.0) for i in members]),
                pulp.LpConstraintLE,
                rhs=room,
            ),
            name=f"group{index}_{key}",
        )


def _add_attribute_rows(
    prob: pulp.LpProblem,
    problem: AssignmentProblem,
    variables: list[pulp.LpVariable],
    papers: IntArray,
    reviewers: IntArray,
    constraint: RequireAttribute,
    index: int,
) -> None:
    mask = attribute_mask(constraint, problem.n_reviewers)
    forced_holders = np.bincount(
        problem.pair_paper[problem.forced][mask[problem.pair_reviewer[problem.forced]]],
        minlength=problem.n_papers,
    )
    needed = np.where(problem.demand > 0, constraint.min_count, 0) - forced_holders
    holders = np.flatnonzero(mask[reviewers])
    for p, members in enumerate(_groups(papers[holders], problem.n_papers)):
        if needed[p] <= 0:
            continue
        prob.addConstraint(
            pulp.LpConstraint(
                pulp.LpAffineExpression([(variables[i], 1.0) for i in holders[members]]),
                pulp.LpConstraintGE,
                rhs=int(needed[p]),
            ),
            name=f"attr{index}_{p}",
        )
