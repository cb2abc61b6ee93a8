"""The violation checker names every broken hard constraint; evaluate scores any pair set."""

import numpy as np
import pandas as pd
import pytest
from matching_helpers import random_problem

from matching import (
    AssignmentProblem,
    MaxPerGroup,
    MinScore,
    RequireAttribute,
    evaluate,
    solve,
    violations,
)
from matching.check import KINDS, violations_frame


def venue() -> AssignmentProblem:
    frame = pd.DataFrame(
        {
            "paper_id": ["a", "a", "a", "b", "b", "b", "c", "c"],
            "reviewer_id": ["x", "y", "z", "x", "y", "z", "y", "z"],
            "score": [0.9, 0.5, 0.1, 0.8, 0.7, 0.3, 0.6, 0.2],
        }
    )
    return AssignmentProblem.from_pairs(
        frame.paper_id,
        frame.reviewer_id,
        frame.score,
        demand=[2, 1, 1],
        min_load=[1, 0, 1],
        max_load=[1, 2, 2],
        forced=(["c"], ["z"]),
        conflicts=(["c"], ["x"]),
    )


def test_solver_results_have_no_violation() -> None:
    for seed in range(5):
        problem = random_problem(seed, 8, 6, demand=2, min_load=1, max_load=4, forced_count=2)
        result = solve(problem)
        pairs = result.pairs()
        report = evaluate(problem, pairs.paper_id, pairs.reviewer_id)
        assert report.feasible, report.violations
        assert report.objective == pytest.approx(result.objective)
        np.testing.assert_array_equal(report.selected, result.selected)


def test_every_kind_of_violation_is_named() -> None:
    problem = venue().with_side_constraints(MinScore(0.4))
    papers = ["a", "a", "a", "b", "b", "c", "ghost", "a"]
    reviewers = ["x", "z", "x", "x", "y", "x", "x", "nobody"]
    found = violations(problem, papers, reviewers, conflicts=(["c"], ["x"]))
    kinds = [v.kind for v in found]
    assert kinds == sorted(kinds, key=KINDS.index)
    by_kind = {v.kind: v for v in found}
    assert by_kind["unknown_paper"].position == 6
    assert by_kind["unknown_reviewer"].position == 7
    assert by_kind["duplicate_pair"].position == 2
    assert by_kind["conflict"].position == 5 and by_kind["conflict"].paper_id == "c"
    assert by_kind["below_min_score"].reviewer_id == "z"  # (a, z) scores 0.1
    assert by_kind["missing_forced"].message == "pinned pair (c, z) is missing"
    assert by_kind["paper_over_demand"].paper_id == "b"
    assert by_kind["paper_under_demand"].paper_id == "c"
    assert by_kind["reviewer_over_max"].message == "reviewer x has 2 papers, max load 1"
    frame = violations_frame(found)
    assert list(frame.columns) == ["kind", "paper_id", "reviewer_id", "message", "position"]
    report = evaluate(problem, papers, reviewers)
    assert report.objective == pytest.approx(0.9 + 0.1 + 0.8 + 0.7)  # candidates only, once
    assert "not_candidate" in [v.kind for v in report.violations]  # no conflicts table given


def test_side_constraints_are_checked() -> None:
    problem = venue()
    groups = np.array(["g", "g", "h"], dtype=object)
    senior = np.array([False, False, True])
    constrained = problem.with_side_constraints(
        MaxPerGroup(groups, 1), RequireAttribute(senior, name="senior")
    )
    found = violations(constrained, ["a", "a", "b", "c"], ["x", "y", "z", "z"])
    messages = [v.message for v in found]
    assert "paper a has 2 reviewers from group g, limit 1" in messages
    assert "paper a has 0 reviewers with senior, needs 1" in messages
    assert not any(v.paper_id in ("b", "c") for v in found)


def test_empty_pair_set() -> None:
    problem = venue()
    report = evaluate(problem, [], [])
    assert report.objective == 0.0 and len(report.selected) == 0
    assert {v.kind for v in report.violations} == {
        "missing_forced",
        "paper_under_demand",
        "reviewer_under_min",
    }
