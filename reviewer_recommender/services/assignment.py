"""Solve an assignment: choose the solver the options need, run it, and describe the result.

:func:`assign` is the use case every face calls (build the problem from
:class:`reviewer_recommender.services.problem.AssignInputs`, validate the options, solve, compute
statistics);
:func:`solve_assignment` is its second half, for callers that built the problem themselves.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

import matching
from matching import Assignment, AssignmentProblem, Fairness, MaxPerGroup, RequireAttribute
from matching.monitor import SolveMonitor
from matching.solvers import SolverTimeout
from matching.validate import check_solver
from reviewer_recommender.services.errors import NoAssignment, OptionError
from reviewer_recommender.services.params import AssignParams
from reviewer_recommender.services.problem import AssignInputs, build_problem

MODEL_CONSTRAINTS = (Fairness, MaxPerGroup, RequireAttribute)

_WHAT = {
    Fairness: "fairness",
    MaxPerGroup: "an institution limit",
    RequireAttribute: "a required attribute",
}


@dataclass(frozen=True)
class SolverChoice:
    """Which solver runs and with which constructor options; ``reason`` in words."""

    name: str
    options: dict[str, Any]
    reason: str


def choose_solver(problem: AssignmentProblem, params: AssignParams) -> SolverChoice:
    """The solver for ``problem`` under ``params`` (options :func:`validate_options`
    accepted).

    ``auto`` picks the exact min-cost flow unless a side constraint needs the integer program
    (fairness, institution limits, required attributes) or ``probability_cap`` asks for a
    randomized assignment."""
    coupled = [c for c in problem.side_constraints if isinstance(c, MODEL_CONSTRAINTS)]
    needs_words = " and ".join(sorted({_WHAT[type(c)] for c in coupled}))
    solver = "ilp" if params.solver == "pulp" else params.solver
    if params.perturbation is not None:
        cap = params.probability_cap
        return SolverChoice(
            "perturbed",
            {"beta": params.perturbation, "q": 1.0 if cap is None else cap},
            f"perturbed maximization: beta {params.perturbation:g}"
            + ("" if cap is None else f", no pair above probability {cap:g}"),
        )
    if params.probability_cap is not None:
        return SolverChoice(
            "randomized",
            {"q": params.probability_cap},
            f"randomized: no pair assigned with probability above {params.probability_cap:g}",
        )
    if solver == "randomized":
        return SolverChoice("randomized", {}, "randomized (default probability cap)")
    if solver == "ilp" or (solver == "auto" and coupled):
        reason = "ILP: needed for " + needs_words if coupled else "ILP, as asked"
        return SolverChoice("ilp", {"backend": params.ilp_backend}, reason)
    return SolverChoice("flow", {}, "min-cost flow: exact, no side constraint needs more")


# the AssignParams field behind each option name matching.validate_options uses
MATCHING_OPTION_FIELDS = {
    "solver": "solver",
    "fairness": "fairness_keep",
    "max_per_group": "max_per_affiliation",
    "require_attribute": "require_attribute",
    "min_score": "min_score",
    "probability_cap": "probability_cap",
    "perturbation": "perturbation",
}


def validate_options(params: AssignParams, problem: AssignmentProblem | None = None) -> None:
    """The one validation of a solve's options, for every face (the CLI, the API before it
    queues a job, the job itself): :class:`OptionError` naming the
    :class:`~reviewer_recommender.services.params.AssignParams` field (each face shows it
    in its own syntax: a flag, a JSON field).

    Without ``problem``: the combinations that cannot work whatever the data (a face refuses
    them before any work). With it (built by
    :func:`reviewer_recommender.services.problem.build_problem`, which already refused
    options the reviewers' profiles cannot serve): also
    :func:`matching.validate_options` for the solver :func:`choose_solver` picks, its
    option names translated to fields (:data:`MATCHING_OPTION_FIELDS`); options that
    merely cannot bind stay warnings of the build."""
    _check_combinations(params)
    if problem is None:
        return
    choice = choose_solver(problem, params)
    try:
        matching.validate_options(problem, solver=choice.name, strict=False, **choice.options)
    except OptionError as error:
        raise as_field_error(error) from error


def as_field_error(error: OptionError) -> OptionError:
    """``error`` naming the :class:`AssignParams` field of matching's option name."""
    field = MATCHING_OPTION_FIELDS.get(error.option)
    return error if field is None or field == error.option else OptionError(field, error.message)


def _check_combinations(params: AssignParams) -> None:
    """The rules of :func:`validate_options` that need no problem."""
    check_solver(params.solver)
    coupled = {
        "fairness_keep": "fairness",
        "max_per_affiliation": "an institution limit",
        "require_attribute": "a required attribute",
    }
    needs = " and ".join(coupled[n] for n in params.side_constraint_names())
    solver = "ilp" if params.solver == "pulp" else params.solver
    perturbed = params.perturbation is not None
    if perturbed and solver not in ("auto", "perturbed"):
        raise OptionError(
            "perturbation",
            f"a perturbation needs the perturbed solver, not the {solver} solver (leave the "
            "solver on auto)",
        )
    if solver == "perturbed" and not perturbed:
        raise OptionError(
            "perturbation",
            "the perturbed solver needs a perturbation beta in (0, 1] (e.g. 0.2: at least "
            "80% of the optimal quality with non-negative scores)",
        )
    if params.probability_cap is not None and solver not in ("auto", "randomized", "perturbed"):
        raise OptionError(
            "probability_cap",
            f"a probability cap needs the randomized solver, not the {solver} solver "
            "(leave the solver on auto)",
        )
    randomized = params.probability_cap is not None or perturbed
    if needs and (solver in ("flow", "randomized", "perturbed") or randomized):
        name = (
            "perturbed"
            if perturbed
            else "randomized"
            if params.probability_cap is not None
            else solver
        )
        field = (
            "perturbation"
            if perturbed
            else "probability_cap"
            if params.probability_cap is not None
            else "solver"
        )
        raise OptionError(
            field,
            f"the {'min-cost flow' if name == 'flow' else name} solver cannot enforce {needs}; "
            "use the ILP (solver ilp, or auto, which picks it for these options)",
        )
    explicit_ilp = solver == "ilp" or (solver == "auto" and needs)
    # a non-default backend that would not be used is refused; the default passes (stored
    # parameters are posted back whole on a re-solve)
    default_backend = AssignParams.model_fields["ilp_backend"].default
    if params.ilp_backend != default_backend and not explicit_ilp:
        raise OptionError(
            "ilp_backend",
            "applies to the ILP solver, which these options do not use; ask for the ILP "
            "solver to use a backend",
        )
    # min-cost flows (plain and perturbed) are exact and run to the end in one call: a time
    # limit could not act on them, so it is refused rather than silently ignored
    limited = explicit_ilp or solver == "randomized" or (randomized and not perturbed)
    if params.time_limit is not None and not limited:
        which = "perturbed maximization (a min-cost flow)" if perturbed else "a min-cost flow"
        raise OptionError(
            "time_limit",
            f"these options solve by {which}, which is exact and cannot be stopped early, so "
            "a time limit would not act; it applies to the ILP and the randomized LP "
            "(solver ilp or randomized): drop the time limit or choose one of those",
        )


@dataclass(frozen=True)
class Capacity:
    """Totals of a solve by counting alone: reviews needed (``demand``), reviews the
    reviewers can take (``capacity``), minimum loads; ``smallest_max_load`` is the least
    default max load with which the totals fit (reviewers with their own max load keep it;
    None when those alone decide and do not fit)."""

    papers: int
    reviewers: int
    demand: int
    capacity: int
    min_load: int
    smallest_max_load: int | None

    @property
    def fits(self) -> bool:
        return self.demand <= self.capacity

    @property
    def shortfall(self) -> int:
        return max(0, self.demand - self.capacity)


def capacity(
    params: AssignParams, paper_ids: Sequence[str], reviewer_ids: Sequence[str]
) -> Capacity:
    """The counting totals of a solve with ``params`` over these papers and reviewers (ids
    of the maps that are not among them are ignored)."""
    demand = sum(params.demand.get(p, params.reviewers_per_paper) for p in paper_ids)
    own = [params.custom_max_load[r] for r in reviewer_ids if r in params.custom_max_load]
    free = len(reviewer_ids) - len(own)
    fixed = sum(own)
    total = fixed + free * params.max_load
    smallest: int | None
    if free:
        smallest = max(params.min_load, -(-max(0, demand - fixed) // free))
    else:
        smallest = params.max_load if demand <= fixed else None
    min_total = sum(
        min(params.min_load, params.custom_max_load.get(r, params.max_load)) for r in reviewer_ids
    )
    return Capacity(
        papers=len(paper_ids),
        reviewers=len(reviewer_ids),
        demand=demand,
        capacity=total,
        min_load=min_total,
        smallest_max_load=smallest,
    )


def capacity_shortfall(
    params: AssignParams, paper_ids: Sequence[str], reviewer_ids: Sequence[str]
) -> str | None:
    """Why no assignment can exist by counting alone (total demand over total capacity),
    in words; None when the totals allow one. Ids not in the venue are ignored here."""
    totals = capacity(params, paper_ids, reviewer_ids)
    if totals.fits:
        return None
    hint = (
        f" (a max load of {totals.smallest_max_load} would fit)"
        if totals.smallest_max_load is not None
        else ""
    )
    return (
        f"{totals.papers} papers need {totals.demand} reviews in total, but "
        f"{totals.reviewers} reviewers can take at most {totals.capacity}; raise max "
        f"loads{hint}, add reviewers or lower the demand"
    )


def solve_assignment(
    problem: AssignmentProblem,
    params: AssignParams,
    *,
    monitor: SolveMonitor | None = None,
) -> Assignment:
    """Solve ``problem`` with the solver :func:`choose_solver` picks.

    Raises :class:`matching.Infeasible` (no assignment exists; diagnosis in words),
    :class:`NoAssignment` (the time limit ran out before any assignment was found),
    :class:`OptionError` (:func:`validate_options`), and
    :class:`matching.monitor.SolveCancelled` when ``monitor`` asks to stop."""
    validate_options(params, problem)
    return _solve(problem, params, choose_solver(problem, params), monitor)


def _solve(
    problem: AssignmentProblem,
    params: AssignParams,
    choice: SolverChoice,
    monitor: SolveMonitor | None,
) -> Assignment:
    kwargs: dict[str, Any] = {"time_limit": params.time_limit, "seed": params.seed}
    if monitor is not None and _solve_takes_monitor():
        kwargs["monitor"] = monitor
    try:
        return matching.solve(problem, solver=choice.name, **kwargs, **choice.options)
    except OptionError as error:  # a solver's own refusal, in the parameters' terms
        raise as_field_error(error) from error
    except SolverTimeout as timeout:
        limit = f"{params.time_limit:g} s" if params.time_limit is not None else "the time limit"
        raise NoAssignment(
            f"no feasible assignment found in {limit} (the time limit): raise the time limit "
            f"or relax the side constraints ({timeout})"
        ) from timeout


def _solve_takes_monitor() -> bool:
    return "monitor" in inspect.signature(matching.solve).parameters


@dataclass
class AssignResult:
    """A solved assignment with what a chair reads: ``summary`` (compact, JSON-safe),
    ``warnings`` (inputs that were ignored, constraints that cannot bind) and, when asked,
    ``alternates`` (next-best eligible reviewers per paper)."""

    problem: AssignmentProblem
    assignment: Assignment
    params: AssignParams
    solver: SolverChoice
    warnings: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    alternates: pd.DataFrame | None = None
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def summary(self) -> dict[str, Any]:
        """Objective, bound, gap, solver, seed, score and load figures, parameters."""
        figures = self.assignment.summary()
        solver_parameters = dict(figures.pop("parameters", {}))
        randomness = solver_parameters.pop("randomness", None)
        return json_safe(
            {
                **figures,
                "solver_choice": self.solver.reason,
                "solver_parameters": solver_parameters,
                "randomness": randomness,
                "parameters": self.params.model_dump(mode="json"),
                "inputs": self.counts,
                "warnings": self.warnings,
                "seconds": {k: round(v, 4) for k, v in self.timings.items()},
            }
        )

    def report(self) -> dict[str, Any]:
        """The summary plus per-paper and per-reviewer statistics (the summary JSON file)."""
        papers = self.assignment.paper_stats()
        reviewers = self.assignment.reviewer_stats()
        return {
            **self.summary,
            "per_paper": json_safe(papers.to_dict("records")),
            "per_reviewer": json_safe(reviewers.to_dict("records")),
        }

    def pairs(self) -> pd.DataFrame:
        """One row per assigned pair: paper_id, reviewer_id, score, pinned; sorted by paper,
        best score first, then reviewer id (deterministic)."""
        p = self.problem
        selected = self.assignment.selected
        frame = pd.DataFrame(
            {
                "paper_id": np.asarray(p.paper_ids, dtype=object)[p.pair_paper[selected]],
                "reviewer_id": np.asarray(p.reviewer_ids, dtype=object)[p.pair_reviewer[selected]],
                "score": p.pair_score[selected],
                "pinned": p.forced[selected],
            }
        )
        return frame.sort_values(
            ["paper_id", "score", "reviewer_id"],
            ascending=[True, False, True],
            ignore_index=True,
            kind="stable",
        )


def assign(
    inputs: AssignInputs,
    params: AssignParams,
    *,
    monitor: SolveMonitor | None = None,
) -> AssignResult:
    """The assignment use case: build, validate, solve, describe."""
    started = time.perf_counter()
    if monitor is not None:
        monitor.report("building the assignment problem", fraction=0.0)
    built = build_problem(inputs, params)
    built_at = time.perf_counter()
    validate_options(params, built.problem)
    choice = choose_solver(built.problem, params)
    if monitor is not None:
        monitor.report(f"solving ({choice.reason})", fraction=0.05)
    assignment = _solve(built.problem, params, choice, monitor)
    solved_at = time.perf_counter()
    alternates = (
        matching.alternates(built.problem, assignment, params.alternates)
        if params.alternates
        else None
    )
    return AssignResult(
        problem=built.problem,
        assignment=assignment,
        params=params,
        solver=choice,
        warnings=built.warnings,
        counts=built.counts,
        alternates=alternates,
        timings={"build": built_at - started, "solve": solved_at - built_at},
    )


def json_safe(value: Any) -> Any:
    """Plain JSON types: numpy scalars to Python, NaN/inf to None, tuples to lists."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
