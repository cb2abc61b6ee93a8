from itertools import combinations
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matching_helpers import Drawn, Randomness, assert_hard_constraints, random_problem

from matching import FlowSolver, IlpSolver, Infeasible, MinScore, solve


def brute_force(problem) -> float | None:
    """Best objective over every subset of candidate pairs meeting the hard constraints."""
    best = None
    total = int(problem.demand.sum())
    for chosen in combinations(range(problem.n_pairs), total):
        index = np.array(chosen, dtype=np.int64)
        if not np.all(
            problem.forced[np.flatnonzero(problem.forced)]
            & np.isin(np.flatnonzero(problem.forced), index)
        ):
            continue
        papers = np.bincount(problem.pair_paper[index], minlength=problem.n_papers)
        loads = np.bincount(problem.pair_reviewer[index], minlength=problem.n_reviewers)
        if (
            np.array_equal(papers, problem.demand)
            and np.all(loads >= problem.min_load)
            and np.all(loads <= problem.max_load)
        ):
            value = float(problem.pair_score[index].sum())
            best = value if best is None else max(best, value)
    return best


@settings(max_examples=25, deadline=None)
@given(data=st.data(), min_load=st.integers(0, 2), forced=st.integers(0, 2))
def test_flow_equals_brute_force_with_min_loads(
    data: st.DataObject, min_load: int, forced: int
) -> None:
    problem = random_problem(
        Drawn(data),
        3,
        3,
        demand=2,
        min_load=min_load,
        max_load=3,
        conflict_rate=0.2,
        forced_count=forced,
    )
    expected = brute_force(problem)
    if expected is None:
        with pytest.raises(Infeasible):
            FlowSolver().solve(problem)
        return
    result = FlowSolver().solve(problem)
    assert_hard_constraints(problem, result)
    assert result.objective == pytest.approx(expected, abs=1e-9)
    assert result.gap < 1e-9


def test_min_loads_change_the_optimum_and_are_met() -> None:
    # Reviewer r0 is best for every paper; min loads force work onto the others.
    scores = np.array([[10.0, 1.0, 0.0], [10.0, 0.0, 1.0], [10.0, 1.0, 1.0]])
    from matching import AssignmentProblem

    problem = AssignmentProblem.from_dense(
        scores,
        paper_ids=["a", "b", "c"],
        reviewer_ids=["r0", "r1", "r2"],
        demand=1,
        min_load=[0, 1, 1],
        max_load=3,
    )
    result = FlowSolver().solve(problem)
    assert_hard_constraints(problem, result)
    assert result.objective == pytest.approx(12.0)


def test_integer_scores_have_exact_bound() -> None:
    problem = random_problem(3, 12, 8, demand=2, min_load=1, max_load=5, integer_scores=True)
    result = FlowSolver().solve(problem)
    assert result.upper_bound == result.objective
    assert result.parameters["rounding_bound"] == 0.0


def test_min_score_filter_excludes_low_pairs() -> None:
    problem = random_problem(4, 10, 10, demand=2, max_load=4, conflict_rate=0.0)
    filtered = problem.with_side_constraints(MinScore(0.2))
    result = solve(filtered)
    assert result.solver == "flow"
    assert_hard_constraints(filtered, result)
    assert np.all(problem.pair_score[result.selected] >= 0.2)


@settings(max_examples=20, deadline=None)
@given(
    data=st.data(),
    papers=st.integers(4, 14),
    reviewers=st.integers(3, 10),
    min_load=st.integers(0, 2),
    forced=st.integers(0, 4),
)
def test_flow_equals_ilp(
    data: st.DataObject, papers: int, reviewers: int, min_load: int, forced: int
) -> None:
    problem = random_problem(
        Drawn(data), papers, reviewers, demand=2, min_load=min_load, max_load=5, forced_count=forced
    )
    try:
        flow = FlowSolver().solve(problem)
    except Infeasible:
        with pytest.raises(Infeasible):
            IlpSolver().solve(problem)
        return
    ilp = IlpSolver().solve(problem)
    assert_hard_constraints(problem, flow)
    assert_hard_constraints(problem, ilp)
    assert flow.objective == pytest.approx(ilp.objective, abs=1e-6)


@pytest.mark.parametrize(
    "scores",
    [
        [[1e308, 0.0], [0.0, 5e307]],  # huge, the total stays finite
        [[1e-300, 2e-300], [3e-300, 5e-324]],  # tiny and subnormal
        [[-1e300, -2e300], [-3.0, -1e-300]],  # negative
        [[0.0, 0.0], [0.0, 0.0]],
        [[1e308, 1.0], [1e-300, -1e308]],
    ],
)
def test_any_finite_scores_solve_exactly(scores) -> None:
    from matching import AssignmentProblem

    problem = AssignmentProblem.from_dense(
        np.array(scores), paper_ids=["a", "b"], reviewer_ids=["x", "y"], demand=1, max_load=1
    )
    result = FlowSolver().solve(problem)
    expected = brute_force(problem)
    assert result.objective == expected
    assert result.objective <= result.upper_bound
    assert np.isfinite(result.upper_bound)


def test_a_total_that_overflows_is_refused_in_words() -> None:
    from matching import AssignmentProblem

    problem = AssignmentProblem.from_dense(
        np.full((2, 1), 1e308), paper_ids=["a", "b"], reviewer_ids=["x"], demand=1, max_load=2
    )
    with pytest.raises(ValueError, match="exceeds the largest number a float can hold"):
        FlowSolver().solve(problem)


def dense_table_problem(
    source: int | Randomness,
    papers: int,
    reviewers: int,
    *,
    conflicts: bool,
    forced: int,
    min_load: int,
    integer: bool,
):
    return random_problem(
        source,
        papers,
        reviewers,
        demand=2,
        min_load=min_load,
        max_load=4,
        conflict_rate=0.2 if conflicts else 0.0,
        forced_count=forced,
        integer_scores=integer,
    )


@settings(max_examples=40, deadline=None)
@given(
    data=st.data(),
    papers=st.integers(1, 25),
    reviewers=st.integers(1, 15),
    conflicts=st.booleans(),
    forced=st.integers(0, 3),
    min_load=st.integers(0, 2),
    integer=st.booleans(),
    k=st.integers(0, 3),
    sparse=st.booleans(),
)
def test_certified_subset_solve_equals_the_all_pairs_solve(
    data, papers, reviewers, conflicts, forced, min_load, integer, k, sparse
) -> None:
    """The top-candidate solve with the dual certificate (dense matrix path, complete
    table path, and sorting path) finds the optimum of the solve on every pair."""
    from matching.solvers import flow

    with patch.object(flow, "_DENSE_CELLS", 0 if sparse else flow._DENSE_CELLS):
        check_certified(Drawn(data), papers, reviewers, conflicts, forced, min_load, integer, k)


def check_certified(source, papers, reviewers, conflicts, forced, min_load, integer, k) -> None:
    problem = dense_table_problem(
        source,
        papers,
        reviewers,
        conflicts=conflicts,
        forced=forced,
        min_load=min_load,
        integer=integer,
    )
    try:
        full = FlowSolver(restrict=False).solve(problem)
    except Infeasible:
        with pytest.raises(Infeasible):
            FlowSolver(restrict=True, k=k).solve(problem)
        return
    certified = FlowSolver(restrict=True, k=k).solve(problem)
    assert_hard_constraints(problem, certified)
    assert certified.objective == pytest.approx(full.objective, rel=1e-12, abs=1e-12)
    assert "over all" in certified.parameters["certificate"]
    assert certified.upper_bound >= full.objective - 1e-12
