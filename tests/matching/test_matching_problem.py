import numpy as np
import pandas as pd
import pytest

from matching import AssignmentProblem, alternates, exclude_pairs, solve


def pair_table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "paper_id": ["a", "a", "a", "b", "b", "c", "c", "c"],
            "reviewer_id": ["x", "y", "z", "x", "z", "x", "y", "z"],
            "score": [0.9, 0.5, 0.1, 0.8, 0.7, 0.3, 0.6, 0.2],
        }
    )


def test_from_pairs_encodes_and_drops_conflicts() -> None:
    table = pair_table()
    problem = AssignmentProblem.from_pairs(
        table.paper_id,
        table.reviewer_id,
        table.score,
        demand=1,
        max_load=2,
        conflicts=pd.DataFrame({"paper_id": ["a"], "reviewer_id": ["x"]}),
        forced=(["c"], ["z"]),
    )
    assert problem.paper_ids == ("a", "b", "c") and problem.reviewer_ids == ("x", "y", "z")
    assert problem.n_pairs == 7
    result = solve(problem)
    pairs = set(zip(result.pairs().paper_id, result.pairs().reviewer_id, strict=True))
    assert ("a", "x") not in pairs and ("c", "z") in pairs


def test_from_pairs_with_id_lists_and_series_loads() -> None:
    table = pair_table()
    problem = AssignmentProblem.from_pairs(
        table.paper_id,
        table.reviewer_id,
        table.score,
        paper_ids=["c", "b", "a"],
        reviewer_ids=["z", "y", "x", "w"],
        demand=pd.Series({"a": 1, "b": 2, "c": 1}),
        max_load=2,
        min_load=pd.Series({"w": 0, "x": 1, "y": 0, "z": 0}),
    )
    np.testing.assert_array_equal(problem.demand, [1, 2, 1])
    np.testing.assert_array_equal(problem.min_load, [0, 0, 1, 0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"forced": (["a"], ["q"])}, "unknown reviewer id 'q'"),
        (
            {"forced": (["b"], ["y"])},
            r"forced pair is not a scored candidate pair \(1\): entry 0 \(b, y\)",
        ),
        ({"forced": (["a"], ["x"]), "conflicts": (["a"], ["x"])}, "both forced and a conflict"),
        ({"demand": pd.Series({"a": 1})}, "demand has no value for id 'b'"),
    ],
)
def test_from_pairs_errors_name_the_record(kwargs: dict, message: str) -> None:
    table = pair_table()
    arguments = {"demand": 1, "max_load": 2, **kwargs}
    with pytest.raises(ValueError, match=message):
        AssignmentProblem.from_pairs(table.paper_id, table.reviewer_id, table.score, **arguments)


def test_from_pairs_rejects_duplicates_and_bad_scores() -> None:
    with pytest.raises(ValueError, match=r"pair appears more than once .*: entry 2 \(a, x\)"):
        AssignmentProblem.from_pairs(
            ["a", "b", "a"], ["x", "x", "x"], [1, 2, 3], demand=1, max_load=1
        )
    with pytest.raises(
        ValueError, match=r"score is not a finite number \(1\): entry 1 \(b, x: score nan\)"
    ):
        AssignmentProblem.from_pairs(["a", "b"], ["x", "x"], [1, np.nan], demand=1, max_load=1)


def test_exclude_pairs_removes_not_willing_bids() -> None:
    table = pair_table()
    problem = AssignmentProblem.from_pairs(
        table.paper_id, table.reviewer_id, table.score, demand=1, max_load=2
    )
    problem = exclude_pairs(problem, ["a"], ["x"])
    assert problem.n_pairs == 7
    assert ("a", "x") not in set(
        zip(solve(problem).pairs().paper_id, solve(problem).pairs().reviewer_id, strict=True)
    )


def test_alternates_are_unassigned_eligible_by_score() -> None:
    table = pair_table()
    problem = AssignmentProblem.from_pairs(
        table.paper_id, table.reviewer_id, table.score, demand=1, max_load=[2, 0, 2]
    )
    result = solve(problem)
    frame = alternates(problem, result, 2)
    assert list(frame.columns) == ["paper_id", "reviewer_id", "score", "rank"]
    assigned = set(zip(result.pairs().paper_id, result.pairs().reviewer_id, strict=True))
    assert not assigned & set(zip(frame.paper_id, frame.reviewer_id, strict=True))
    assert "y" not in set(frame.reviewer_id)  # max load 0: not eligible
    for _, group in frame.groupby("paper_id"):
        assert list(group["rank"]) == list(range(1, len(group) + 1))
        assert group.score.is_monotonic_decreasing
