"""Assignment problems and their solvers.

Knows nothing of files, HTTP or how scores were made: it takes ids, arrays and masks.
"""

from __future__ import annotations

from typing import Any

from matching.alternates import alternates
from matching.assignment import Assignment
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
from matching.problem import AssignmentProblem, Infeasible
from matching.solvers import FlowSolver, IlpSolver, RandomizedSolver, get_solver


def solve(
    problem: AssignmentProblem,
    *,
    solver: str = "auto",
    time_limit: float | None = None,
    seed: int | None = None,
    **options: Any,
) -> Assignment:
    """Solve with ``solver``; ``"auto"`` picks the exact min-cost flow when the problem has
    no side constraint beyond pair filters (``MinScore``), the ILP otherwise. ``options``
    go to the solver's constructor."""
    if solver == "auto":
        solver = "ilp" if model_constraints(apply_pair_filters(problem)) else "flow"
    return get_solver(solver, **options).solve(problem, time_limit=time_limit, seed=seed)


__all__ = [
    "Assignment",
    "AssignmentProblem",
    "Cause",
    "Diagnosis",
    "Fairness",
    "FlowSolver",
    "IlpSolver",
    "Infeasible",
    "MaxPerGroup",
    "MinScore",
    "RandomizedSolver",
    "RequireAttribute",
    "alternates",
    "diagnose",
    "exclude_pairs",
    "get_solver",
    "solve",
]
