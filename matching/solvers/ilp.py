"""Integer program with side constraints: fairness, group limits, required attributes.

The model is built as sparse matrices (:mod:`matching.solvers._model`) and solved by HiGHS
through highspy (default: time limit, warm starts, incumbent and bound reported while it
runs, interrupted on cancel) or by CBC (PuLP's bundled binary, run as a process that is
ended on cancel).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from matching import _flowgraph
from matching.assignment import Assignment, total_score
from matching.constraints import Fairness, apply_pair_filters, model_constraints
from matching.diagnose import Cause, Diagnosis, diagnose
from matching.monitor import SolveMonitor, check_stop
from matching.problem import AssignmentProblem, FloatArray, Infeasible
from matching.solvers import _cbc, _highs
from matching.solvers._fairness import best_min_start
from matching.solvers._model import AssignmentModel
from matching.solvers.flow import FlowSolver, _original_index
from matching.validate import describe

BACKENDS = ("highs", "cbc")
#: Seconds an ILP solve may take when the caller gives no time limit.
DEFAULT_TIME_LIMIT = 300.0


class SolverTimeout(Infeasible):
    """The time limit ran out before the solver found any feasible assignment.

    A subclass of :class:`Infeasible` so that every face reports it like infeasibility
    (CLI exit 2, the diagnosis on stderr), but the problem was NOT proven infeasible: the
    diagnosis has one cause of kind ``time_limit`` ("no feasible assignment found in T s")
    whose relaxation is to allow more time or relax the side constraints, and
    ``diagnosis.feasible`` is None (undecided)."""

    def __init__(self, time_limit: float | str | None = None):
        """``time_limit`` in seconds (a message in words is accepted too, as before)."""
        if isinstance(time_limit, str):
            self.time_limit: float | None = None
            message = time_limit
        else:
            self.time_limit = time_limit
            seconds = "the time allowed" if time_limit is None else f"{time_limit:g} s"
            message = (
                f"no feasible assignment found in {seconds} (the problem is not proven infeasible)"
            )
        super().__init__(
            Diagnosis(
                causes=[
                    Cause(
                        "time_limit",
                        message,
                        (),
                        "allow more time (a higher time limit) or relax the side constraints",
                    )
                ],
                feasible=None,
            )
        )


@dataclass
class _Clock:
    """The solve's deadline, shared by its stages."""

    limit: float
    began: float = field(default_factory=time.perf_counter)

    def left(self) -> float:
        return max(self.limit - (time.perf_counter() - self.began), 0.0)

    def share(self, fraction: float) -> float:
        return self.left() * fraction


class IlpSolver:
    """Maximum-affinity assignment as a 0/1 integer program.

    One binary per non-forced candidate pair (forced pairs are constants). Rows: demand
    per paper (equality), min/max load per reviewer (only the rows that can bind), then the
    side constraints of :mod:`matching.constraints`. Scores enter the model divided by
    their largest magnitude (any finite scores work); every number reported is in the
    problem's units.

    ``backend``: ``"highs"`` (default, through highspy) or ``"cbc"``. ``gap``: the relative
    MIP gap at which the solver may stop (default 1e-9: prove optimality). ``threads``
    applies to CBC only (HiGHS fixes its thread pool once per process).
    ``default_time_limit``: used when ``solve`` gets no ``time_limit`` (default 300 s);
    the limit covers the whole solve, all stages together. When it runs out the best
    assignment found is returned with ``parameters["status"] == "time limit"`` and its
    bound and gap; if none was found, :class:`SolverTimeout` (an :class:`Infeasible`).

    Certificate: ``upper_bound`` is HiGHS' MIP dual bound (never weaker than the LP
    relaxation); with CBC it is the LP relaxation optimum (solved by HiGHS). With
    ``Fairness`` (lexicographic: first the lowest paper score, then the total), the bound
    is on the total affinity among assignments whose lowest paper score reaches the floor
    (``parameters["min_paper_score_floor"]``); ``parameters["min_paper_score_bound"]`` is
    a proven bound on the best lowest paper score. Stage 1 starts from the best of the
    max-total assignment and a flow-based heuristic (:mod:`matching.solvers._fairness`) and
    stops at a relative gap of ``fairness_gap`` (default 1e-4).
    """

    name = "ilp"

    def __init__(
        self,
        *,
        backend: str = "highs",
        gap: float = 1e-9,
        fairness_gap: float = 1e-4,
        msg: bool = False,
        threads: int | None = None,
        default_time_limit: float = DEFAULT_TIME_LIMIT,
    ) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"unknown ILP backend {backend!r}; choose one of {BACKENDS}")
        if not default_time_limit > 0:
            raise ValueError(f"default_time_limit must be positive, got {default_time_limit}")
        self.backend = backend
        self.gap = gap
        self.fairness_gap = fairness_gap
        self.msg = msg
        self.threads = threads
        self.default_time_limit = default_time_limit

    def solve(
        self,
        problem: AssignmentProblem,
        *,
        time_limit: float | None = None,
        seed: int | None = None,
        monitor: SolveMonitor | None = None,
    ) -> Assignment:
        """``time_limit`` in seconds (default ``default_time_limit``); ``monitor`` gets the
        stage, incumbent and bound while HiGHS runs and can stop it within a second."""
        limit = self.default_time_limit if time_limit is None else float(time_limit)
        if not limit > 0 or math.isnan(limit):
            raise ValueError(f"time_limit must be positive, got {time_limit}")
        clock = _Clock(limit)
        check_stop(monitor)
        filtered = apply_pair_filters(problem)
        constraints = model_constraints(filtered)
        quick = diagnose(filtered, flow_check=False)
        if quick:
            raise Infeasible(quick)
        rest = _flowgraph.residual(filtered)
        model = AssignmentModel.build(filtered, rest, constraints)
        parameters: dict[str, Any] = {
            "backend": self.backend,
            "gap_tolerance": self.gap,
            "time_limit": limit,
        }
        fairness = [c for c in constraints if isinstance(c, Fairness)]
        if fairness:
            outcome = self._fair(model, fairness[0], clock, monitor, parameters)
        else:
            outcome = self._run(
                model.total_model(),
                clock.left(),
                monitor=monitor,
                stage="ILP: maximizing total affinity",
                to_units=model.total_units,
            )
        if outcome.status == "infeasible":
            raise Infeasible(self._explain(model, clock, monitor))
        if outcome.status in ("failed", "unbounded"):
            raise RuntimeError(f"the {self.backend} solver failed ({outcome.status})")
        if outcome.values is None:
            raise SolverTimeout(limit)
        selected = _original_index(problem, filtered, model.selection(outcome.values))
        objective = total_score(problem.pair_score[selected])
        bound = self._bound(model, outcome, fairness_floor=parameters.get("_floor"), clock=clock)
        parameters.pop("_floor", None)
        parameters["status"] = outcome.status
        return Assignment(
            problem=problem,
            selected=selected,
            objective=objective,
            upper_bound=max(objective, bound),
            solver=self.name,
            parameters=parameters,
            seed=seed,
            solve_seconds=time.perf_counter() - clock.began,
        )

    def _fair(
        self,
        model: AssignmentModel,
        fairness: Fairness,
        clock: _Clock,
        monitor: SolveMonitor | None,
        parameters: dict[str, Any],
    ) -> _highs.Outcome:
        """Stage 0: a max-total assignment; stage 1: the best lowest paper score; stage 2:
        the max total at the stage-1 floor. Returns stage 2's outcome."""
        if model.coupled:
            first = self._run(
                model.total_model(),
                clock.share(0.3),
                monitor=monitor,
                stage="fairness 1/3: an assignment meeting the side constraints",
                to_units=model.total_units,
            )
            if first.values is None:
                return first
            start = first.values
        else:
            check_stop(monitor)
            plain = model.problem.with_side_constraints()
            chosen = FlowSolver().solve(plain, monitor=monitor).selected
            start = np.isin(model.free, chosen).astype(np.float64)
            start = best_min_start(model, start, clock.share(0.1), monitor)
        parameters["fairness_keep"] = fairness.keep
        if not model.fair_papers.size:
            parameters.update(min_paper_score_floor=0.0, min_paper_score_bound=0.0)
            return self._run(
                model.total_model(),
                clock.left(),
                start=start,
                monitor=monitor,
                stage="fairness 3/3: total affinity",
                to_units=model.total_units,
            )
        start_min = model.lowest_paper_score(start)
        stage1 = self._run(
            model.fairness_model(),
            clock.share(0.6),
            gap=self.fairness_gap,
            start=model.with_lowest(start, start_min),
            monitor=monitor,
            stage="fairness 2/3: raising the lowest paper score",
            to_units=model.fair_units,
        )
        best = start
        if stage1.values is not None:
            candidate = stage1.values[: len(model.free)]
            if model.lowest_paper_score(candidate) > start_min:
                best = candidate
        best_min = model.lowest_paper_score(best)
        min_bound = stage1.bound * model.scale if np.isfinite(stage1.bound) else math.inf
        if self.backend == "cbc" or not np.isfinite(min_bound):
            relaxed = _highs.solve(
                model.fairness_model().relaxed(), time_limit=clock.share(0.2), monitor=monitor
            )
            if np.isfinite(relaxed.bound):
                min_bound = min(min_bound, relaxed.bound * model.scale)
        # A hair of slack keeps the stage-1 assignment feasible despite the order in which
        # floating-point sums are taken.
        floor = best_min - (1.0 - fairness.keep) * abs(best_min) - 1e-9 * max(1.0, abs(best_min))
        parameters.update(
            min_paper_score_floor=floor,
            min_paper_score_bound=max(min_bound, best_min),
            fairness_stage_status=stage1.status,
            _floor=floor,
        )
        return self._run(
            model.floor_model(floor),
            clock.left(),
            start=best,
            monitor=monitor,
            stage="fairness 3/3: total affinity at the lowest-score floor",
            to_units=model.total_units,
        )

    def _run(
        self,
        matrix_model: _highs.MatrixModel,
        time_limit: float,
        *,
        gap: float | None = None,
        start: FloatArray | None = None,
        monitor: SolveMonitor | None = None,
        stage: str = "ILP",
        to_units: tuple[float, float] = (1.0, 0.0),
    ) -> _highs.Outcome:
        check_stop(monitor)
        if monitor is not None:
            monitor.report(stage)
        options: dict[str, Any] = {
            "time_limit": time_limit,
            "gap": self.gap if gap is None else gap,
            "threads": self.threads,
            "msg": self.msg,
            "monitor": monitor,
            "stage": stage,
            "to_units": to_units,
        }
        if self.backend == "cbc":
            return _cbc.solve(matrix_model, **options)
        return _highs.solve(matrix_model, start=start, **options)

    def _bound(
        self,
        model: AssignmentModel,
        outcome: _highs.Outcome,
        *,
        fairness_floor: float | None,
        clock: _Clock,
    ) -> float:
        """A proven upper bound on the objective, in the problem's units."""
        bound = outcome.bound
        if self.backend == "cbc" or not np.isfinite(bound) or outcome.status != "optimal":
            # CBC gives no bound and a MIP stopped early may hold only a trivial one: the
            # LP relaxation (a few seconds at most) is never below the optimum.
            matrix_model = (
                model.total_model() if fairness_floor is None else model.floor_model(fairness_floor)
            )
            relaxed = _highs.solve(matrix_model.relaxed(), time_limit=max(clock.left(), 5.0))
            if np.isfinite(relaxed.bound):
                bound = min(bound, relaxed.bound) if np.isfinite(bound) else relaxed.bound
        return bound * model.scale + model.forced_total

    def _explain(
        self, model: AssignmentModel, clock: _Clock, monitor: SolveMonitor | None
    ) -> Diagnosis:
        """The diagnosis, plus which side constraint is infeasible on its own (each checked
        by a feasibility ILP) or, if none is, that they conflict only together."""
        diagnosis = diagnose(model.problem)
        if diagnosis.causes:
            return diagnosis
        coupling = [c for c in model.constraints if not isinstance(c, Fairness)]
        alone = []
        for constraint in coupling:
            single = AssignmentModel.build(model.problem, model.rest, [constraint])
            outcome = self._run(
                single.feasibility_model(),
                max(clock.share(0.5), 1.0),
                monitor=monitor,
                stage=f"checking {describe(constraint)} alone",
            )
            if outcome.status == "infeasible":
                alone.append(constraint)
        names = " and ".join(f"'{describe(c)}'" for c in (alone or coupling))
        message = (
            f"the side constraint {names} cannot hold with these demands and loads"
            if len(alone) == 1
            else f"the side constraints {names} cannot all hold at once with these demands "
            "and loads"
        )
        diagnosis.causes.append(
            Cause(
                "side_constraint",
                message,
                (),
                "raise the group limit, lower the attribute minimum, or add candidate reviewers",
            )
        )
        diagnosis.feasible = False
        return diagnosis
