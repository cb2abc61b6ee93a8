"""No solver ever violates a hard constraint."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matching_helpers import Drawn, assert_hard_constraints, random_problem

from matching import Infeasible, MaxPerGroup, MinScore, RequireAttribute, get_solver

SOLVERS = [
    ("flow", {}),
    ("ilp", {}),
    ("ilp", {"backend": "cbc"}),
    ("randomized", {"q": 0.6}),
]


@pytest.mark.parametrize(("name", "options"), SOLVERS)
@settings(max_examples=12, deadline=None)
@given(
    data=st.data(),
    seed=st.integers(0, 2**32 - 1),
    papers=st.integers(3, 12),
    reviewers=st.integers(3, 9),
    demand=st.integers(1, 3),
    min_load=st.integers(0, 2),
    forced=st.integers(0, 3),
    threshold=st.sampled_from([None, 0.1]),
)
def test_hard_constraints_hold(
    name: str,
    options: dict,
    data: st.DataObject,
    seed: int,
    papers: int,
    reviewers: int,
    demand: int,
    min_load: int,
    forced: int,
    threshold: float | None,
) -> None:
    problem = random_problem(
        Drawn(data),
        papers,
        reviewers,
        demand=demand,
        min_load=min_load,
        max_load=5,
        forced_count=forced,
    )
    if threshold is not None:
        problem = problem.with_side_constraints(MinScore(threshold))
    try:
        result = get_solver(name, **options).solve(problem, seed=seed)
    except Infeasible as error:
        assert error.diagnosis.causes, "Infeasible must name a cause"
        return
    assert_hard_constraints(problem, result)


@settings(max_examples=12, deadline=None)
@given(data=st.data(), limit=st.integers(1, 2), min_count=st.integers(0, 2))
def test_ilp_side_constraints_hold(data: st.DataObject, limit: int, min_count: int) -> None:
    drawn = Drawn(data)
    problem = random_problem(drawn, 10, 9, demand=3, min_load=1, max_load=5, forced_count=2)
    groups = drawn.integers(4, problem.n_reviewers)
    senior = drawn.below((problem.n_reviewers,), 0.5)
    problem = problem.with_side_constraints(
        MaxPerGroup(groups=groups, limit=limit), RequireAttribute(senior, min_count=min_count)
    )
    try:
        result = get_solver("ilp").solve(problem)
    except Infeasible as error:
        assert error.diagnosis.causes
        return
    assert_hard_constraints(problem, result)
    papers = problem.pair_paper[result.selected]
    reviewers = problem.pair_reviewer[result.selected]
    per_group = np.zeros((problem.n_papers, 4), dtype=int)
    np.add.at(per_group, (papers, groups[reviewers]), 1)
    forced_groups = np.zeros_like(per_group)
    np.add.at(
        forced_groups,
        (problem.pair_paper[problem.forced], groups[problem.pair_reviewer[problem.forced]]),
        1,
    )
    assert np.all(per_group <= np.maximum(limit, forced_groups))
    holders = np.bincount(papers[senior[reviewers]], minlength=problem.n_papers)
    assert np.all(holders >= min_count)
