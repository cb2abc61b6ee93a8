import numpy as np
import pytest
from matching_helpers import assert_hard_constraints, random_problem

from matching import Fairness, IlpSolver, MaxPerGroup, RequireAttribute, get_solver, solve


def paper_totals(problem, result) -> np.ndarray:
    return np.bincount(
        problem.pair_paper[result.selected],
        weights=problem.pair_score[result.selected],
        minlength=problem.n_papers,
    )


@pytest.mark.parametrize("seed", range(4))
def test_fairness_raises_the_minimum_paper_score(seed: int) -> None:
    problem = random_problem(seed, 14, 10, demand=2, min_load=1, max_load=4)
    total = solve(problem)
    fair = solve(problem.with_side_constraints(Fairness()))
    assert fair.solver == "ilp"
    assert_hard_constraints(problem, fair)
    assert paper_totals(problem, fair).min() >= paper_totals(problem, total).min() - 1e-9
    assert fair.objective <= total.objective + 1e-9
    assert fair.parameters["min_paper_score_floor"] == pytest.approx(
        paper_totals(problem, fair).min(), abs=1e-6
    )


def test_fairness_keep_trades_minimum_for_total() -> None:
    problem = random_problem(7, 14, 10, demand=2, min_load=0, max_load=4)
    strict = solve(problem.with_side_constraints(Fairness(keep=1.0)))
    loose = solve(problem.with_side_constraints(Fairness(keep=0.5)))
    assert loose.objective >= strict.objective - 1e-9
    assert paper_totals(problem, loose).min() >= 0.5 * paper_totals(problem, strict).min() - 1e-6


def test_group_limit_and_attribute_change_the_solution() -> None:
    problem = random_problem(11, 12, 12, demand=3, max_load=4, conflict_rate=0.0)
    groups = np.repeat(["mit", "cmu", "eth", "epfl"], 3)
    senior = np.arange(12) % 4 == 0
    plain = solve(problem)
    constrained = solve(
        problem.with_side_constraints(
            MaxPerGroup(groups=groups, limit=1), RequireAttribute(senior, min_count=1)
        )
    )
    assert_hard_constraints(problem, constrained)
    pairs = constrained.pairs()
    group_of = dict(zip(problem.reviewer_ids, groups, strict=True))
    per_group = (
        pairs.assign(group=pairs.reviewer_id.map(group_of)).groupby(["paper_id", "group"]).size()
    )
    assert per_group.max() == 1
    senior_of = dict(zip(problem.reviewer_ids, senior, strict=True))
    assert pairs.assign(s=pairs.reviewer_id.map(senior_of)).groupby("paper_id").s.sum().min() >= 1
    assert constrained.objective <= plain.objective + 1e-9
    assert constrained.upper_bound >= constrained.objective


def test_cbc_and_highs_agree_and_report_bounds() -> None:
    problem = random_problem(5, 10, 8, demand=2, min_load=1, max_load=4)
    highs = get_solver("pulp").solve(problem)
    cbc = get_solver("ilp", backend="cbc").solve(problem)
    assert highs.objective == pytest.approx(cbc.objective, abs=1e-6)
    assert highs.gap < 1e-6 and cbc.gap < 1e-6
    assert cbc.parameters["backend"] == "cbc"


def test_unknown_backend_and_solver_are_named() -> None:
    with pytest.raises(ValueError, match="gurobi"):
        IlpSolver(backend="gurobi")
    with pytest.raises(ValueError, match="simplex"):
        get_solver("simplex")


def hard_group_problem():
    """A group-limited venue that HiGHS cannot finish in a fraction of a second."""
    problem = random_problem(3, 300, 100, demand=3, min_load=1, max_load=12)
    return problem.with_side_constraints(MaxPerGroup(np.arange(100) % 7, 1))


def test_ilps_have_a_default_time_limit() -> None:
    from matching.solvers.ilp import DEFAULT_TIME_LIMIT

    assert IlpSolver().default_time_limit == DEFAULT_TIME_LIMIT == 300.0
    problem = random_problem(0, 8, 6, demand=2, max_load=4)
    groups = np.arange(6) % 3
    result = IlpSolver().solve(problem.with_side_constraints(MaxPerGroup(groups, 1)))
    assert result.parameters["time_limit"] == 300.0
    assert result.parameters["status"] == "optimal"


def test_nothing_found_in_time_is_a_clean_infeasible_with_a_cause() -> None:
    from matching import Infeasible, SolverTimeout

    with pytest.raises(SolverTimeout) as error:
        IlpSolver().solve(hard_group_problem(), time_limit=1e-4)
    assert isinstance(error.value, Infeasible)
    (cause,) = error.value.diagnosis.causes
    assert cause.kind == "time_limit"
    assert "no feasible assignment found in 0.0001 s" in str(error.value)
    assert error.value.diagnosis.feasible is None


def test_an_ilp_stopped_by_its_time_limit_returns_its_best_with_an_honest_bound() -> None:
    from matching import SolverTimeout

    problem = hard_group_problem()
    try:  # on a loaded machine HiGHS may find nothing in 0.05 s: that outcome is tested above
        result = IlpSolver().solve(problem, time_limit=0.05)
    except SolverTimeout:
        return
    exact = IlpSolver().solve(problem)
    assert exact.parameters["status"] == "optimal"
    if result.parameters["status"] == "time limit":
        assert_hard_constraints(problem, result)
        assert result.objective <= exact.objective + 1e-9
        assert result.upper_bound >= exact.objective - 1e-6
        assert result.gap < 0.05  # the LP relaxation tightens HiGHS' early bound


def test_a_stage_stopped_by_the_time_limit_returns_its_best_with_an_honest_bound() -> None:
    problem = random_problem(3, 300, 100, demand=3, min_load=1, max_load=12)
    result = IlpSolver().solve(problem.with_side_constraints(Fairness()), time_limit=0.01)
    assert result.parameters["status"] == "time limit"
    assert_hard_constraints(problem, result)
    assert result.objective <= result.upper_bound
    exact = solve(problem)
    assert result.upper_bound >= result.objective
    assert exact.objective >= result.objective - 1e-9


def test_fairness_with_coupling_constraints() -> None:
    problem = random_problem(5, 20, 12, demand=2, min_load=1, max_load=4)
    groups = np.arange(12) % 4
    constrained = problem.with_side_constraints(MaxPerGroup(groups, 1))
    plain = solve(constrained)
    fair = solve(constrained.with_side_constraints(MaxPerGroup(groups, 1), Fairness()))
    assert_hard_constraints(problem, fair)
    assert paper_totals(problem, fair).min() >= paper_totals(problem, plain).min() - 1e-9
    assert fair.parameters["min_paper_score_bound"] >= paper_totals(problem, fair).min() - 1e-9


@pytest.mark.parametrize("scale", [1e308 / 40, 1e-300])
def test_extreme_scores_in_the_ilp(scale: float) -> None:
    problem = random_problem(2, 10, 6, demand=2, max_load=4)
    from dataclasses import replace

    scaled = replace(problem, pair_score=problem.pair_score * scale)
    groups = np.arange(6) % 3
    exact = solve(problem.with_side_constraints(MaxPerGroup(groups, 1)))
    result = solve(scaled.with_side_constraints(MaxPerGroup(groups, 1)))
    assert result.objective == pytest.approx(exact.objective * scale, rel=1e-9)
    assert result.objective <= result.upper_bound
    np.testing.assert_array_equal(result.selected, exact.selected)
