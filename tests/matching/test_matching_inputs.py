"""Every empty or odd input builds a problem and solves, or fails in words (never a crash)."""

import numpy as np
import pandas as pd
import pytest

from matching import (
    AssignmentProblem,
    Infeasible,
    ProblemInputError,
    UnknownIds,
    get_solver,
    solve,
    unknown_entries,
)

SOLVERS = ["flow", "ilp", "randomized"]
NO_PAIRS: dict = {"paper_id": [], "reviewer_id": [], "score": []}


def table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "paper_id": ["a", "a", "b", "b", "c", "c"],
            "reviewer_id": ["x", "y", "x", "z", "y", "z"],
            "score": [0.9, 0.5, 0.8, 0.7, 0.6, 0.2],
        }
    )


def build(**kwargs) -> AssignmentProblem:
    frame = table()
    arguments = {"demand": 1, "max_load": 2, **kwargs}
    return AssignmentProblem.from_pairs(frame.paper_id, frame.reviewer_id, frame.score, **arguments)


EMPTY_TABLES = [
    pd.DataFrame(columns=["paper_id", "reviewer_id"]),  # header only
    pd.DataFrame(),  # no header at all
    ([], []),
]


@pytest.mark.parametrize("empty", EMPTY_TABLES)
@pytest.mark.parametrize("which", ["conflicts", "forced"])
def test_empty_conflicts_or_forced_tables_build(empty, which: str) -> None:
    problem = build(**{which: empty})
    assert problem.n_pairs == 6 and not problem.forced.any()
    assert solve(problem).objective == pytest.approx(0.9 + 0.8 + 0.6)


def test_conflicts_only_and_pins_only() -> None:
    conflicts = pd.DataFrame({"paper_id": ["a"], "reviewer_id": ["x"]})
    only_conflicts = build(
        conflicts=conflicts, forced=pd.DataFrame(columns=["paper_id", "reviewer_id"])
    )
    assert only_conflicts.n_pairs == 5
    pins = pd.DataFrame({"paper_id": ["c", "c"], "reviewer_id": ["z", "z"]})  # repeated pin
    only_pins = build(forced=pins, conflicts=pd.DataFrame())
    assert only_pins.forced.sum() == 1
    result = solve(only_pins)
    assert ("c", "z") in set(zip(result.pairs().paper_id, result.pairs().reviewer_id, strict=True))


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize(
    ("ids", "demand", "min_load", "feasible"),
    [
        ((["a"], ["x"]), 0, 0, True),  # nothing to assign
        ((["a"], ["x"]), 1, 0, False),  # a paper without candidates
        (([], []), 1, 0, True),  # no papers, no reviewers
        (([], ["x"]), 1, 1, False),  # a reviewer who must work, no papers
        ((["a"], []), 1, 0, False),  # a paper, no reviewers
        ((["a"], []), 0, 0, True),
    ],
)
def test_problems_without_pairs(
    solver: str, ids, demand: int, min_load: int, feasible: bool
) -> None:
    problem = AssignmentProblem.from_pairs(
        **NO_PAIRS,
        paper_ids=ids[0],
        reviewer_ids=ids[1],
        demand=demand,
        min_load=min_load,
        max_load=1,
    )
    if feasible:
        result = get_solver(solver).solve(problem)
        assert len(result.selected) == 0 and result.objective == 0.0
        assert result.upper_bound >= result.objective
    else:
        with pytest.raises(Infeasible) as error:
            get_solver(solver).solve(problem)
        assert error.value.diagnosis.causes


def test_from_dense_accepts_zero_papers() -> None:
    problem = AssignmentProblem.from_dense(
        np.zeros((0, 2)), paper_ids=[], reviewer_ids=["x", "y"], demand=1, max_load=1
    )
    assert solve(problem).objective == 0.0
    empty = AssignmentProblem.from_dense([], paper_ids=[], reviewer_ids=[], demand=1, max_load=1)
    assert empty.n_pairs == 0


def test_unknown_ids_list_every_entry_and_can_be_ignored() -> None:
    frame = table()
    conflicts = pd.DataFrame(
        {"paper_id": ["a", "ghost", "b", "c"], "reviewer_id": ["x", "x", "nobody", "y"]}
    )
    with pytest.raises(UnknownIds) as error:
        build(conflicts=conflicts)
    assert error.value.table == "conflicts" and error.value.reason == "unknown_id"
    assert error.value.positions.tolist() == [1, 2]
    assert "unknown paper id 'ghost'" in str(error.value)
    assert "unknown reviewer id 'nobody'" in str(error.value)
    assert isinstance(error.value, ValueError)
    positions = unknown_entries(conflicts, ["a", "b", "c"], ["x", "y", "z"])
    assert positions.tolist() == [1, 2]
    ignored = build(conflicts=conflicts, unknown_ids="ignore")
    assert ignored.n_pairs == 4  # (a, x) and (c, y) dropped; the unknown entries ignored
    forced = (["a", "zz"], ["y", "x"])
    with pytest.raises(UnknownIds) as error:
        build(forced=forced)
    assert error.value.table == "forced" and error.value.positions.tolist() == [1]
    assert build(forced=forced, unknown_ids="ignore").forced.sum() == 1
    with pytest.raises(UnknownIds) as error:
        AssignmentProblem.from_pairs(
            frame.paper_id,
            frame.reviewer_id,
            frame.score,
            paper_ids=["a", "b"],
            reviewer_ids=["x", "y", "z"],
            demand=1,
            max_load=2,
        )
    assert error.value.table == "pairs" and error.value.positions.tolist() == [4, 5]


def test_unknown_ids_in_per_id_series() -> None:
    demand = pd.Series({"a": 1, "b": 2, "c": 1, "ghost": 3})
    with pytest.raises(UnknownIds) as error:
        build(demand=demand)
    assert error.value.table == "demand" and error.value.positions.tolist() == [3]
    assert build(demand=demand, unknown_ids="ignore").demand.tolist() == [1, 2, 1]


def test_every_offending_position_is_listed() -> None:
    frame = table()
    with pytest.raises(ProblemInputError) as error:
        AssignmentProblem.from_pairs(
            ["a", "b", "a", "b"], ["x", "x", "x", "x"], [1, 2, 3, 4], demand=1, max_load=1
        )
    assert error.value.reason == "duplicate" and error.value.positions.tolist() == [2, 3]
    with pytest.raises(ProblemInputError) as error:
        build(forced=(["a", "b", "c"], ["z", "y", "x"]))
    assert error.value.reason == "not_candidate" and error.value.positions.tolist() == [0, 1, 2]
    with pytest.raises(ProblemInputError) as error:
        build(forced=(["c", "a"], ["y", "x"]), conflicts=(["a"], ["x"]))
    assert error.value.reason == "forced_conflict" and error.value.positions.tolist() == [1]
    with pytest.raises(ProblemInputError) as error:
        AssignmentProblem.from_pairs(
            frame.paper_id, frame.reviewer_id, [1, np.inf, 0, np.nan, 0, 0], demand=1, max_load=1
        )
    assert error.value.reason == "not_finite" and error.value.positions.tolist() == [1, 3]
    with pytest.raises(ProblemInputError, match="not a whole number"):
        build(max_load=[1, 2.5, 1])
    with pytest.raises(ValueError, match="must be 0 or more"):
        build(demand=-1)


def test_unsorted_pairs_are_stored_in_paper_reviewer_order() -> None:
    problem = AssignmentProblem.from_pairs(
        ["b", "a", "b"], ["y", "x", "x"], [1.0, 2.0, 3.0], demand=1, max_load=2
    )
    assert problem.paper_ids == ("b", "a")
    keys = problem.pair_paper * problem.n_reviewers + problem.pair_reviewer
    assert np.all(np.diff(keys) > 0)
    assert solve(problem).objective == pytest.approx(5.0)
