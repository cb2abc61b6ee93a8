"""Every solver reports progress to a monitor and stops when it asks."""

from __future__ import annotations

import numpy as np
import pytest
from matching_helpers import random_problem

from matching import Fairness, IlpSolver, MaxPerGroup, SolveCancelled, get_solver, solve


class Recorder:
    """Records reports; asks to stop after ``stop_after`` calls of should_stop."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.reports: list[tuple[str, float | None, float | None, float | None]] = []
        self.polls = 0
        self.stop_after = stop_after

    def report(
        self,
        stage: str,
        *,
        fraction: float | None = None,
        incumbent: float | None = None,
        bound: float | None = None,
    ) -> None:
        self.reports.append((stage, fraction, incumbent, bound))

    def should_stop(self) -> bool:
        self.polls += 1
        return self.stop_after is not None and self.polls > self.stop_after


SOLVERS = [("flow", {}), ("ilp", {}), ("ilp", {"backend": "cbc"}), ("randomized", {"q": 0.8})]


@pytest.mark.parametrize(("name", "options"), SOLVERS)
def test_a_stop_request_cancels_every_solver(name: str, options: dict) -> None:
    problem = random_problem(0, 10, 6, demand=2, max_load=5)
    with pytest.raises(SolveCancelled):
        get_solver(name, **options).solve(problem, monitor=Recorder(stop_after=0))


@pytest.mark.parametrize(("name", "options"), SOLVERS)
def test_every_solver_polls_and_finishes_with_a_patient_monitor(name: str, options: dict) -> None:
    problem = random_problem(0, 10, 6, demand=2, max_load=5)
    monitor = Recorder()
    result = get_solver(name, **options).solve(problem, monitor=monitor)
    assert monitor.polls >= 1
    assert result.objective <= result.upper_bound


def test_matching_solve_passes_the_monitor_through() -> None:
    problem = random_problem(0, 10, 6, demand=2, max_load=5)
    groups = np.arange(6) % 2
    for constrained in (
        problem,
        problem.with_side_constraints(Fairness()),
        problem.with_side_constraints(MaxPerGroup(groups, 1)),
    ):
        with pytest.raises(SolveCancelled):
            solve(constrained, monitor=Recorder(stop_after=0))


@pytest.mark.parametrize("backend", ["highs", "cbc"])
def test_a_running_ilp_stops_when_asked(backend: str) -> None:
    problem = random_problem(3, 300, 100, demand=3, min_load=1, max_load=12)
    problem = problem.with_side_constraints(MaxPerGroup(np.arange(100) % 7, 1))
    monitor = Recorder(stop_after=3)  # the solver's own checks pass; the MIP is then stopped
    with pytest.raises(SolveCancelled):
        IlpSolver(backend=backend).solve(problem, monitor=monitor, time_limit=60)
    # stopped by the first "stop", mid-solve: never asked again (how soon: bench_cancel.py)
    assert monitor.polls == 4


def test_ilp_reports_incumbent_and_bound_in_score_units() -> None:
    problem = random_problem(3, 60, 30, demand=3, max_load=7)
    problem = problem.with_side_constraints(MaxPerGroup(np.arange(30) % 5, 1))
    monitor = Recorder()
    result = IlpSolver().solve(problem, monitor=monitor)
    incumbents = [r[2] for r in monitor.reports if r[2] is not None]
    bounds = [r[3] for r in monitor.reports if r[3] is not None]
    assert incumbents and incumbents[-1] == pytest.approx(result.objective)
    assert all(b >= result.objective - 1e-6 for b in bounds)
    assert all(i <= result.upper_bound + 1e-6 for i in incumbents)


def test_a_child_that_cannot_start_falls_back_to_solving_here(monkeypatch) -> None:
    import sys

    from matching.solvers import _highs

    problem = random_problem(3, 120, 60, demand=3, min_load=1, max_load=12)
    problem = problem.with_side_constraints(MaxPerGroup(np.arange(60) % 7, 1))
    expected = IlpSolver().solve(problem)
    monkeypatch.setattr(_highs, "IN_PROCESS_NONZEROS", 0)
    monkeypatch.setattr(sys, "executable", "/bin/false")
    result = IlpSolver().solve(problem, monitor=Recorder())
    assert result.objective == pytest.approx(expected.objective)
