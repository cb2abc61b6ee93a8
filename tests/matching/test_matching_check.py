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
from matching.violations import ASSIGNMENT_KINDS, KINDS, check_assignment, violations_frame


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
    assert by_kind["conflict"].describe() == "(c, x): conflict of interest"
    assert by_kind["min_score"].reviewer_id == "z"  # (a, z) scores 0.1
    assert by_kind["pin"].describe() == "(c, z): pinned, but missing from this assignment"
    demand = [v.describe() for v in found if v.kind == "demand"]
    assert demand == ["paper b: has 2 reviewers, needs 1", "paper c: has 0 reviewers, needs 1"]
    assert (
        by_kind["max_load"].describe() == "reviewer x: reviews 2 papers, over their max load of 1"
    )
    frame = violations_frame(found)
    assert list(frame.columns) == ["kind", "paper_id", "reviewer_id", "detail", "position"]
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
    messages = [v.describe() for v in found]
    assert "paper a: has 2 reviewers from group g, limit 1" in messages
    assert "paper a: has 0 reviewers with senior, needs 1" in messages
    assert not any(v.paper_id in ("b", "c") for v in found)


def test_empty_pair_set() -> None:
    problem = venue()
    report = evaluate(problem, [], [])
    assert report.objective == 0.0 and len(report.selected) == 0
    assert {v.kind for v in report.violations} == {"pin", "demand", "min_load"}


def test_check_assignment_names_each_venue_constraint() -> None:
    exclusions = pd.DataFrame(
        {
            "paper_id": ["b", "a", "a", "c"],
            "reviewer_id": ["y", "x", "x", "z"],
            "kind": ["forbid", "bid", "conflict", "conflict"],
            "reason": ["advisor", "Not Willing", "detected: co-author", None],
        }
    )
    found = check_assignment(
        ["a", "a", "b", "b"],
        ["x", "y", "y", "x"],
        paper_ids=["a", "b", "c"],
        demand=[2, 2, 1],
        reviewer_ids=["x", "y", "z"],
        min_load=[0, 0, 1],
        max_load=[1, 2, 2],
        exclusions=exclusions,
        pins=pd.DataFrame({"paper_id": ["c", "a"], "reviewer_id": ["z", "x"]}),
    )
    assert [v.describe() for v in found] == [
        "(a, x): conflict of interest (detected: co-author)",
        "(a, x): the reviewer bid Not Willing",
        "(b, y): forbidden by a chair: advisor",
        "(c, z): pinned, but missing from this assignment",
        "reviewer x: reviews 2 papers, over their max load of 1",
        "reviewer z: reviews 0 papers, under their min load of 1",
        "paper c: has 0 reviewers, needs 1",
    ]
    assert [v.kind for v in found] == sorted((v.kind for v in found), key=KINDS.index)
    assert {v.kind for v in found} <= set(ASSIGNMENT_KINDS)
    assert found[2].to_dict() == {
        "kind": "forbid",
        "paper_id": "b",
        "reviewer_id": "y",
        "detail": "forbidden by a chair: advisor",
    }
    assert found[0].target == ("a", "x") and found[4].target == (None, "x")
    with pytest.raises(ValueError, match="unknown exclusion 'veto'"):
        check_assignment(
            ["a"],
            ["x"],
            paper_ids=["a"],
            demand=[1],
            reviewer_ids=["x"],
            min_load=[0],
            max_load=[1],
            exclusions=exclusions.assign(kind="veto"),
        )


def test_evaluate_and_check_assignment_agree_on_shared_constraints() -> None:
    """The solver checker and the venue checker are one vocabulary: on the constraints
    both see (exclusions, pins, loads, demand) they report the same records."""
    problem = venue()
    conflicts = pd.DataFrame(
        {"paper_id": ["c"], "reviewer_id": ["x"], "kind": ["bid"], "reason": ["Conflict"]}
    )
    papers, reviewers = ["a", "a", "b", "b", "c"], ["x", "z", "x", "y", "x"]
    shared = {"bid", "pin", "max_load", "min_load", "demand"}
    from_problem = violations(problem, papers, reviewers, conflicts=conflicts)
    candidates = [i for i in range(len(papers)) if (papers[i], reviewers[i]) != ("c", "x")]
    from_venue = check_assignment(
        papers,
        reviewers,
        paper_ids=problem.paper_ids,
        demand=problem.demand,
        reviewer_ids=problem.reviewer_ids,
        min_load=problem.min_load,
        max_load=problem.max_load,
        exclusions=conflicts,
        pins=pd.DataFrame({"paper_id": ["c"], "reviewer_id": ["z"]}),
    )
    # the venue counts the excluded pair in the loads too; the problem cannot (not a candidate)
    counted = check_assignment(
        [papers[i] for i in candidates],
        [reviewers[i] for i in candidates],
        paper_ids=problem.paper_ids,
        demand=problem.demand,
        reviewer_ids=problem.reviewer_ids,
        min_load=problem.min_load,
        max_load=problem.max_load,
        pins=pd.DataFrame({"paper_id": ["c"], "reviewer_id": ["z"]}),
    )
    drop_position = [dict(v.to_dict(), position=None) for v in from_problem if v.kind in shared]
    assert drop_position == [
        dict(v.to_dict(), position=None) for v in [*from_venue[:1], *counted] if v.kind in shared
    ]
    assert from_problem[0].kind == "bid" and from_problem[0].position == 4
