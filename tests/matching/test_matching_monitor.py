"""Every solver reports progress to a monitor and stops when it asks."""

from __future__ import annotations

import numpy as np
import pytest
from matching_helpers import random_problem

from matching import Fairness, MaxPerGroup, SolveCancelled, get_solver, solve


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
