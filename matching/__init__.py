"""Assignment problems and their solvers.

Knows nothing of files, HTTP or how scores were made: it takes ids, arrays and masks.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from matching.alternates import alternates
from matching.assignment import Assignment
from matching.check import Evaluation, evaluate, violations
from matching.constraints import (
    Fairness,
    MaxPerGroup,
    MinScore,
    RequireAttribute,
    apply_pair_filters,
    exclude_pairs,
    model_constraints,
)
from matching.diagnose import Cause, Diagnosis, diagnose
from matching.monitor import SolveCancelled, SolveMonitor
from matching.problem import (
    AssignmentProblem,
    Infeasible,
    ProblemInputError,
    UnknownIds,
    unknown_entries,
)
from matching.randomness import METRICS as RANDOMNESS_METRICS
from matching.randomness import randomness_metrics
from matching.reassign import Reassignment, reassign
from matching.solvers import (
    FlowSolver,
    IlpSolver,
    PerturbedSolver,
    RandomizedSolver,
    SolverTimeout,
    get_solver,
)
from matching.solvers.ilp import DEFAULT_TIME_LIMIT
from matching.validate import OptionError, validate_options
from matching.violations import Violation, check_assignment


def solve(
    problem: AssignmentProblem,
    *,
    solver: str = "auto",
    time_limit: float | None = None,
    seed: int | None = None,
    monitor: SolveMonitor | None = None,
    **options: Any,
) -> Assignment:
    """Solve with ``solver``; ``"auto"`` picks the exact min-cost flow when the problem has
    no side constraint beyond pair filters (``MinScore``), the ILP otherwise. ``options``
    go to the solver's constructor.

    First runs :func:`validate_options` with ``strict=False``: it raises
    :class:`OptionError` (a ``ValueError``) for an option that cannot act (no reviewer has a
    group or the attribute asked for) or a solver that cannot honour it; options that merely
    cannot bind, and other inert ones, become ``Assignment.warnings``. A service that wants
    those refused calls ``validate_options(problem)`` (strict) first. ``monitor`` receives
    progress and can stop the solve (:class:`SolveCancelled`). Raises :class:`Infeasible`
    (with a diagnosis) when no assignment exists, including :class:`SolverTimeout` when an
    ILP found none within its time limit."""
    warnings = validate_options(problem, solver=solver, strict=False, **options)
    if solver == "auto":
        solver = "ilp" if model_constraints(apply_pair_filters(problem)) else "flow"
    result = get_solver(solver, **options).solve(
        problem, time_limit=time_limit, seed=seed, monitor=monitor
    )
    if warnings:
        result = replace(result, warnings=(*result.warnings, *warnings))
    return result


__all__ = [
    "DEFAULT_TIME_LIMIT",
    "RANDOMNESS_METRICS",
    "Assignment",
    "AssignmentProblem",
    "Cause",
    "Diagnosis",
    "Evaluation",
    "Fairness",
    "FlowSolver",
    "IlpSolver",
    "Infeasible",
    "MaxPerGroup",
    "MinScore",
    "OptionError",
    "PerturbedSolver",
    "ProblemInputError",
    "RandomizedSolver",
    "Reassignment",
    "RequireAttribute",
    "SolveCancelled",
    "SolveMonitor",
    "SolverTimeout",
    "UnknownIds",
    "Violation",
    "alternates",
    "check_assignment",
    "diagnose",
    "evaluate",
    "exclude_pairs",
    "get_solver",
    "randomness_metrics",
    "reassign",
    "solve",
    "unknown_entries",
    "validate_options",
    "violations",
]
