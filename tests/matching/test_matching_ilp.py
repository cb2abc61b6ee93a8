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
