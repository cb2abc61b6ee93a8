"""Solver registry: ``get_solver(name, **options)`` and the solvers themselves.

Every solver has ``solve(problem, *, time_limit=None, seed=None, monitor=None) ->
Assignment``, raises ``Infeasible(diagnosis)`` when no assignment meets the hard
constraints, reports progress to ``monitor`` and raises ``SolveCancelled`` soon after
``monitor.should_stop()`` turns true (see :mod:`matching.monitor`).
"""

from __future__ import annotations

from typing import Any, Protocol

from matching.assignment import Assignment
from matching.monitor import SolveMonitor
from matching.problem import AssignmentProblem
from matching.solvers.flow import FlowSolver
from matching.solvers.ilp import IlpSolver, SolverTimeout
from matching.solvers.perturbed import PerturbedSolver
from matching.solvers.randomized import RandomizedSolver


class Solver(Protocol):
    name: str

    def solve(
        self,
        problem: AssignmentProblem,
        *,
        time_limit: float | None = None,
        seed: int | None = None,
        monitor: SolveMonitor | None = None,
    ) -> Assignment: ...


SOLVERS: dict[str, type] = {
    "flow": FlowSolver,
    "ilp": IlpSolver,
    "pulp": IlpSolver,
    "randomized": RandomizedSolver,
    "perturbed": PerturbedSolver,
}


def get_solver(name: str, **options: Any) -> Solver:
    """A solver by name (``flow``, ``ilp`` or its alias ``pulp``, ``randomized``,
    ``perturbed``); ``options`` go to its constructor (e.g. ``backend="cbc"``, ``q=0.5``,
    ``beta=0.2``)."""
    try:
        solver_class = SOLVERS[name]
    except KeyError:
        raise ValueError(f"unknown solver {name!r}; choose one of {sorted(SOLVERS)}") from None
    return solver_class(**options)


__all__ = [
    "SOLVERS",
    "FlowSolver",
    "IlpSolver",
    "PerturbedSolver",
    "RandomizedSolver",
    "Solver",
    "SolverTimeout",
    "get_solver",
]
