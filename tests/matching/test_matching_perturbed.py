"""Perturbed maximization: marginals, the quality guarantee, the program it solves, and the
randomness metrics (checked on hand-computed cases)."""

from __future__ import annotations

import math

import highspy
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from matching_helpers import Drawn, assert_hard_constraints, random_problem
from scipy.optimize import linprog

from matching import (
    AssignmentProblem,
    FlowSolver,
    Infeasible,
    OptionError,
    PerturbedSolver,
    RandomizedSolver,
    SolveCancelled,
    randomness_metrics,
    solve,
    validate_options,
)
from matching.solvers.perturbed import Grid
from matching.solvers.randomized import sample_assignment


def _pl_value(problem: AssignmentProblem, x: np.ndarray, beta: float, grid: Grid) -> float:
    """The piecewise-linear program's objective at ``x`` (free pairs only), computed by
    interpolating f(x) = x - beta x^2 between the grid's breakpoints."""
    free = ~problem.forced
    s = problem.pair_score[free]
    w = np.maximum(s, 0.0)
    points = grid.bounds / grid.units
    square = np.interp(x[free], points, points**2)
    return float(s @ x[free] - beta * (w @ square))


def _independent_pl_lp(problem: AssignmentProblem, beta: float, grid: Grid) -> float:
    """The same piecewise-linear program written as a plain LP (one column per pair and
    piece) and solved by scipy's HiGHS interface: its optimum value (free pairs only)."""
    free = np.flatnonzero(~problem.forced)
    widths = grid.widths / grid.units
    ends = (grid.bounds[:-1] + grid.bounds[1:]) / grid.units
    n_pieces = len(widths)
    s = problem.pair_score[free]
    gain = (s[:, None] - beta * np.maximum(s, 0)[:, None] * ends[None, :]).reshape(-1)
    column_pair = np.repeat(np.arange(len(free)), n_pieces)
    papers = problem.pair_paper[free][column_pair]
    reviewers = problem.pair_reviewer[free][column_pair]
    forced_paper = np.bincount(problem.pair_paper[problem.forced], minlength=problem.n_papers)
    forced_load = np.bincount(problem.pair_reviewer[problem.forced], minlength=problem.n_reviewers)
    columns = np.arange(len(gain))
    a_eq = sp.csr_matrix(
        (np.ones(len(gain)), (papers, columns)), shape=(problem.n_papers, len(gain))
    )
    loads = sp.csr_matrix(
        (np.ones(len(gain)), (reviewers, columns)), shape=(problem.n_reviewers, len(gain))
    )
    result = linprog(
        -gain,
        A_ub=sp.vstack([loads, -loads]),
        b_ub=np.concatenate(
            [problem.max_load - forced_load, -(problem.min_load - forced_load).clip(min=0)]
        ),
        A_eq=a_eq,
        b_eq=problem.demand - forced_paper,
        bounds=np.stack([np.zeros(len(gain)), np.tile(widths, len(free))], axis=1),
        method="highs",
    )
    assert result.status == 0, result.message
    return float(-result.fun)


def _exact_qp(problem: AssignmentProblem, beta: float) -> float:
    """The exact quadratic program (no cap, no forced pairs) by HiGHS' QP solver: its
    optimum ``max sum s x - beta sum max(s, 0) x^2``."""
    n = problem.n_pairs
    s = problem.pair_score
    rows = np.concatenate([problem.pair_paper, problem.n_papers + problem.pair_reviewer])
    cols = np.concatenate([np.arange(n), np.arange(n)])
    matrix = sp.csc_matrix(
        (np.ones(2 * n), (rows, cols)), shape=(problem.n_papers + problem.n_reviewers, n)
    )
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = matrix.shape[0]
    lp.col_cost_ = -s
    lp.col_lower_ = np.zeros(n)
    lp.col_upper_ = np.ones(n)
    lp.row_lower_ = np.concatenate([problem.demand, problem.min_load]).astype(float)
    lp.row_upper_ = np.concatenate([problem.demand, problem.max_load]).astype(float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = matrix.indptr.astype(np.int32)
    lp.a_matrix_.index_ = matrix.indices.astype(np.int32)
    lp.a_matrix_.value_ = matrix.data.astype(np.float64)
    hessian = highspy.HighsHessian()
    hessian.dim_ = n
    hessian.format_ = highspy.HessianFormat.kTriangular
    hessian.start_ = np.arange(n + 1, dtype=np.int32)
    hessian.index_ = np.arange(n, dtype=np.int32)
    hessian.value_ = 2.0 * beta * np.maximum(s, 0.0)
    model = highspy.HighsModel()
    model.lp_ = lp
    model.hessian_ = hessian
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    highs.passModel(model)
    highs.run()
    assert highs.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return float(-highs.getInfo().objective_function_value)


def test_marginals_are_realized_within_statistical_tolerance() -> None:
    problem = random_problem(
        3, 6, 7, demand=2, min_load=1, max_load=3, conflict_rate=0.1, forced_count=1
    )
    solver = PerturbedSolver(beta=0.6, pieces=10)
    fractional = solver.fractional(problem)
    assert np.any((fractional.x > 0.05) & (fractional.x < 0.95))
    optimum = FlowSolver().solve(problem)
    samples = 600
    counts = np.zeros(problem.n_pairs)
    for seed in range(samples):
        result = sample_assignment(
            problem, fractional, solver="perturbed", parameters={}, seed=seed, optimum=optimum
        )
        assert_hard_constraints(problem, result)
        counts[result.selected] += 1
    mean = counts / samples
    # each pair's count is Binomial(samples, x): 4.5 standard errors (+ a floor) keeps a
    # false alarm over ~40 pairs below 1e-4, while a rounding bias of 0.1 still fails
    tolerance = 4.5 * np.sqrt(fractional.x * (1 - fractional.x) / samples) + 0.01
    assert np.all(np.abs(mean - fractional.x) <= tolerance)
    assert np.all(mean[problem.forced] == 1.0)


@settings(max_examples=25, deadline=None)
@given(
    data=st.data(),
    seed=st.integers(0, 2**32 - 1),
    beta=st.sampled_from([0.05, 0.2, 0.5, 0.8, 1.0]),
    pieces=st.sampled_from([1, 3, 10]),
    shape=st.tuples(st.integers(2, 8), st.integers(3, 9)),
    integer_scores=st.booleans(),
)
def test_quality_ratio_is_at_least_one_minus_beta(
    data: st.DataObject,
    seed: int,
    beta: float,
    pieces: int,
    shape: tuple[int, int],
    integer_scores: bool,
) -> None:
    """Non-negative scores and no cap: expected quality >= (1 - beta) x optimum."""
    papers, reviewers = shape
    problem = random_problem(
        Drawn(data),
        papers,
        reviewers,
        demand=2,
        max_load=math.ceil(2 * papers / reviewers) + 1,
        conflict_rate=0.1,
        integer_scores=integer_scores,
    )
    try:
        optimum = FlowSolver().solve(problem)
    except Infeasible:
        return
    result = PerturbedSolver(beta=beta, pieces=pieces).solve(problem, seed=seed)
    assert_hard_constraints(problem, result)
    ratio = result.parameters["quality_ratio"]
    if optimum.objective > 0:
        assert ratio >= 1 - beta - 1e-9
        assert ratio <= 1 + 1e-9
    assert result.objective <= result.upper_bound + 1e-9
    assert result.upper_bound == pytest.approx(optimum.upper_bound)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("q", [1.0, 0.5, 0.35])
def test_flow_solves_the_piecewise_linear_program_exactly(seed: int, q: float) -> None:
    problem = random_problem(
        seed, 5, 6, demand=2, min_load=1, max_load=3, conflict_rate=0.1, forced_count=1
    )
    beta, pieces = 0.4, 5
    solver = PerturbedSolver(beta=beta, q=q, pieces=pieces)
    grid = Grid.of(q, pieces)
    try:
        fractional = solver.fractional(problem)
    except Infeasible:
        with pytest.raises(AssertionError):
            _independent_pl_lp(problem, beta, grid)
        return
    x = fractional.x
    assert np.all(x[~problem.forced] <= q + 1e-12)
    assert np.all(x[problem.forced] == 1.0)
    np.testing.assert_allclose(np.bincount(problem.pair_paper, x), problem.demand)
    assert _pl_value(problem, x, beta, grid) == pytest.approx(
        _independent_pl_lp(problem, beta, grid), abs=1e-7
    )


@pytest.mark.parametrize("seed", range(4))
def test_close_to_the_exact_quadratic_program(seed: int) -> None:
    """HiGHS' QP solver (fine at this size) gives the exact program's optimum: ours is
    feasible for it, so no better, and within the interpolation error beta / (4 pieces^2)
    per unit of score of the pairs it could spread over."""
    problem = random_problem(seed, 4, 5, demand=2, max_load=3, conflict_rate=0.0)
    beta, pieces = 0.5, 10
    fractional = PerturbedSolver(beta=beta, pieces=pieces).fractional(problem)
    exact = _exact_qp(problem, beta)
    ours = fractional.perturbed_value
    assert ours <= exact + 1e-6
    slack = beta / (4 * pieces**2) * float(np.maximum(problem.pair_score, 0).sum())
    assert exact - ours <= slack + 1e-9


def test_grid_puts_a_breakpoint_at_the_cap() -> None:
    grid = Grid.of(0.35, 10)
    assert grid.units == 20 and grid.cap == pytest.approx(0.35)
    np.testing.assert_array_equal(grid.bounds, [0, 2, 4, 6, 7])
    assert Grid.of(1.0, 10).units == 10
    odd = Grid.of(1 / math.pi, 10)
    assert odd.cap <= 1 / math.pi and odd.cap > 1 / math.pi - 1e-4


def test_negative_scores_get_no_perturbation_and_keep_the_guarantee() -> None:
    rng = np.random.default_rng(5)
    scores = rng.uniform(-1.0, 1.0, size=(6, 6))
    problem = AssignmentProblem.from_dense(
        scores,
        paper_ids=[f"p{i}" for i in range(6)],
        reviewer_ids=[f"r{j}" for j in range(6)],
        demand=2,
        max_load=3,
    )
    beta = 0.5
    optimum = FlowSolver().solve(problem)
    positive = float(np.maximum(problem.pair_score[optimum.selected], 0).sum())
    result = PerturbedSolver(beta=beta).solve(problem, seed=1)
    assert_hard_constraints(problem, result)
    expected = result.parameters["expected_objective"]
    assert expected >= optimum.objective - beta * positive - 1e-9
    # the program on mixed signs is the one of the module docstring: weights max(s, 0)
    grid = Grid.of(1.0, 10)
    fractional = PerturbedSolver(beta=beta).fractional(problem)
    assert _pl_value(problem, fractional.x, beta, grid) == pytest.approx(
        _independent_pl_lp(problem, beta, grid), abs=1e-7
    )
    w = np.maximum(problem.pair_score, 0)
    assert fractional.perturbed_value == pytest.approx(
        problem.pair_score @ fractional.x - beta * (w @ fractional.x**2)
    )


def test_the_cap_binds_and_infeasible_caps_are_diagnosed() -> None:
    problem = random_problem(1, 6, 6, demand=2, max_load=3, conflict_rate=0.0)
    capped = PerturbedSolver(beta=0.1, q=0.5).fractional(problem)
    assert capped.x.max() <= 0.5 + 1e-12
    # 3 papers x 3 reviewers, 2 reviewers each: under a cap of 0.6 a paper reaches 1.8
    tight = random_problem(2, 3, 3, demand=2, max_load=2, conflict_rate=0.0)
    PerturbedSolver(beta=0.1).solve(tight, seed=0)
    with pytest.raises(Infeasible) as caught:
        PerturbedSolver(beta=0.1, q=0.6).solve(tight)
    assert any(c.kind == "probability_cap" for c in caught.value.diagnosis.causes)


def test_same_seed_same_assignment_and_metrics_recorded() -> None:
    problem = random_problem(9, 10, 8, demand=2, max_load=4)
    first = solve(problem, solver="perturbed", seed=123, beta=0.3)
    second = solve(problem, solver="perturbed", seed=123, beta=0.3)
    np.testing.assert_array_equal(first.selected, second.selected)
    assert first.seed == 123 and first.solver == "perturbed"
    others = [solve(problem, solver="perturbed", seed=s, beta=0.3).selected for s in range(5)]
    assert any(not np.array_equal(first.selected, o) for o in others)
    report = first.parameters["randomness"]
    for key in (
        "quality_ratio",
        "max_probability",
        "avg_max_probability",
        "l2_norm",
        "entropy",
        "support_size",
    ):
        assert key in report and key in report["deterministic"]
    assert report["deterministic"]["entropy"] == 0.0
    assert report["deterministic"]["quality_ratio"] == pytest.approx(1.0)
    assert report["quality_ratio"] == pytest.approx(first.parameters["quality_ratio"])
    assert report["support_size"] > report["deterministic"]["support_size"]


def test_options_are_validated() -> None:
    problem = random_problem(1, 4, 4)
    for bad in ({"beta": 0.0}, {"beta": 1.5}, {"q": 0.0}, {"q": 2.0}, {"pieces": 0}):
        with pytest.raises(ValueError):
            PerturbedSolver(**bad)
    with pytest.raises(OptionError) as caught:
        validate_options(problem, solver="perturbed", beta=2.0)
    assert caught.value.option == "perturbation"
    with pytest.raises(OptionError):
        validate_options(problem, solver="perturbed", backend="cbc")


def test_cancel_stops_the_solve() -> None:
    class Stop:
        def report(self, stage: str, **_: object) -> None:
            return None

        def should_stop(self) -> bool:
            return True

    with pytest.raises(SolveCancelled):
        PerturbedSolver().solve(random_problem(1, 5, 5), monitor=Stop())


# ---- the metrics, on hand-computed cases ----------------------------------------------------


def _two_by_three() -> AssignmentProblem:
    """Papers a, b (demand 1 each), reviewers r, s, t; every pair a candidate."""
    scores = np.array([[3.0, 1.0, 0.0], [2.0, 2.0, 1.0]])
    return AssignmentProblem.from_dense(
        scores, paper_ids=["a", "b"], reviewer_ids=["r", "s", "t"], demand=1, max_load=1
    )


def test_metrics_by_hand() -> None:
    problem = _two_by_three()
    # pairs in order (a,r)=3 (a,s)=1 (a,t)=0 (b,r)=2 (b,s)=2 (b,t)=1
    x = np.array([0.5, 0.5, 0.0, 0.5, 0.25, 0.25])
    metrics = randomness_metrics(problem, x, optimum=5.0)
    # expected = 1.5 + 0.5 + 0 + 1 + 0.5 + 0.25 = 3.75
    assert metrics["expected_objective"] == pytest.approx(3.75)
    assert metrics["quality_ratio"] == pytest.approx(0.75)
    assert metrics["max_probability"] == pytest.approx(0.5)
    assert metrics["avg_max_probability"] == pytest.approx(0.5)  # (0.5 + 0.5) / 2
    assert metrics["l2_norm"] == pytest.approx(math.sqrt(0.25 * 3 + 0.0625 * 2))
    entropy = -(3 * 0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))
    assert metrics["entropy"] == pytest.approx(entropy)
    assert metrics["support_size"] == 5


def test_metrics_of_a_deterministic_assignment() -> None:
    problem = _two_by_three()
    x = np.array([1.0, 0, 0, 0, 1.0, 0])
    metrics = randomness_metrics(problem, x, optimum=5.0)
    assert metrics == {
        "quality_ratio": 1.0,
        "max_probability": 1.0,
        "avg_max_probability": 1.0,
        "l2_norm": pytest.approx(math.sqrt(2)),
        "entropy": 0.0,
        "support_size": 2,
        "expected_objective": 5.0,
        "max_unpinned_probability": 1.0,
    }
    assert randomness_metrics(problem, x, optimum=0.0)["quality_ratio"] is None
    with pytest.raises(ValueError):
        randomness_metrics(problem, np.array([1.5, 0, 0, 0, 1, 0]), optimum=5.0)
    with pytest.raises(ValueError):
        randomness_metrics(problem, np.ones(3), optimum=5.0)


def test_randomized_solver_reports_the_same_metrics() -> None:
    problem = random_problem(4, 8, 8, demand=2, max_load=3)
    result = RandomizedSolver(q=0.5).solve(problem, seed=3)
    report = result.parameters["randomness"]
    fractional = RandomizedSolver(q=0.5).fractional(problem)
    direct = randomness_metrics(
        problem, fractional.x, optimum=result.parameters["deterministic_optimum"]
    )
    for key, value in direct.items():
        assert report[key] == pytest.approx(value)
    assert report["max_probability"] <= 0.5 + 1e-9
