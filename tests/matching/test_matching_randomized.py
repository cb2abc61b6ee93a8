import numpy as np
import pytest
from matching_helpers import assert_hard_constraints, random_problem

from matching import RandomizedSolver, solve


def test_marginals_respect_cap_and_average_to_fractional() -> None:
    problem = random_problem(
        2, 6, 6, demand=2, min_load=1, max_load=3, conflict_rate=0.1, forced_count=1
    )
    solver = RandomizedSolver(q=0.5)
    fractional = solver.fractional(problem)
    free = ~problem.forced
    assert np.all(fractional.x[free] <= 0.5 + 1e-9)
    assert np.all(fractional.x[problem.forced] == 1.0)
    samples = 400
    counts = np.zeros(problem.n_pairs)
    for seed in range(samples):
        result = solver.sample(problem, fractional, seed=seed)
        assert_hard_constraints(problem, result)
        counts[result.selected] += 1
    mean = counts / samples
    # Each pair's count is Binomial(samples, x): its standard error is sqrt(x(1-x)/n)
    # <= 0.025; 4.5 standard errors (+ a small floor) makes a false alarm over ~30 pairs
    # below 1e-4, while a rounding bias of 0.15 would still fail.
    tolerance = 4.5 * np.sqrt(fractional.x * (1 - fractional.x) / samples) + 0.01
    assert np.all(np.abs(mean - fractional.x) <= tolerance)
    assert np.all(mean[free] <= 0.5 + tolerance[free])


def test_same_seed_same_assignment_and_seed_recorded() -> None:
    problem = random_problem(9, 10, 8, demand=2, max_load=4)
    first = solve(problem, solver="randomized", seed=123, q=0.4)
    second = solve(problem, solver="randomized", seed=123, q=0.4)
    np.testing.assert_array_equal(first.selected, second.selected)
    assert first.seed == 123
    other = [solve(problem, solver="randomized", seed=s, q=0.4).selected for s in range(5)]
    assert any(not np.array_equal(first.selected, o) for o in other)
    unseeded = solve(problem, solver="randomized", q=0.4)
    assert unseeded.seed is not None
    again = RandomizedSolver(q=0.4).solve(problem, seed=unseeded.seed)
    np.testing.assert_array_equal(unseeded.selected, again.selected)


def test_bound_is_the_deterministic_optimum_and_expectation_is_reported() -> None:
    problem = random_problem(4, 10, 8, demand=2, min_load=1, max_load=4)
    exact = solve(problem)
    for seed in range(20):
        randomized = RandomizedSolver(q=0.5).solve(problem, seed=seed)
        assert randomized.objective <= randomized.upper_bound
        assert randomized.upper_bound == pytest.approx(exact.upper_bound)
        expected = randomized.parameters["expected_objective"]
        assert expected <= exact.objective + 1e-6
        assert randomized.parameters["quality_ratio"] == pytest.approx(expected / exact.objective)
    uncapped = RandomizedSolver(q=1.0).fractional(problem)
    assert uncapped.value == pytest.approx(exact.objective, abs=1e-6)


def test_the_reported_example_is_honest() -> None:
    """A sample may beat its expectation; it never beats the bound."""
    problem = random_problem(0, 10, 6, demand=2, max_load=5)
    for seed in range(50):
        result = RandomizedSolver(q=0.8).solve(problem, seed=seed)
        assert result.objective <= result.upper_bound
        assert result.gap >= 0
