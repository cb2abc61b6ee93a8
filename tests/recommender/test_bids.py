"""Bids folded into scores; Not Willing / Conflict become an exclusion mask."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recommender.affinity import Affinity, ScoringParams
from recommender.bids import (
    EXCLUDING_BID_VALUE,
    apply_bids,
    bid_value,
    declares_conflict,
    excludes,
    excluding_mask,
    parse_bid,
)
from recommender.corpus import InputError


def make_affinity() -> Affinity:
    return Affinity(
        ("p1", "p2"),
        ("Ann", "Bob"),
        np.full((2, 2), 0.5, dtype=np.float32),
        ScoringParams(bid_weight=0.2),
    )


def test_bid_mapping() -> None:
    assert [bid_value(x) for x in ["Very High", "high", "Neutral", "LOW", "very  low"]] == [
        1.0,
        0.5,
        0.0,
        -0.5,
        -1.0,
    ]
    assert bid_value(0.3) == 0.3 and bid_value("0.25") == 0.25
    assert bid_value("Not Willing") is None and bid_value("conflict") is None
    with pytest.raises(ValueError, match="unknown bid"):
        bid_value("maybe")


def test_apply_bids_shifts_scores_and_masks_exclusions() -> None:
    bids = pd.DataFrame(
        {
            "paper_id": ["p1", "p1", "p2"],
            "reviewer_id": ["~Ann", "Bob", "Ann"],
            "bid": ["Very High", "Not Willing", "Low"],
        }
    )
    result = apply_bids(make_affinity(), bids)
    np.testing.assert_allclose(result.affinity.scores, [[0.7, 0.5], [0.4, 0.5]], rtol=1e-6)
    assert result.excluded.tolist() == [[False, True], [False, False]]
    explicit = apply_bids(make_affinity(), bids, weight=1.0)
    assert explicit.affinity.score("p1", "Ann") == pytest.approx(1.5)


def test_apply_bids_accepts_read_bids_frame() -> None:
    frame = pd.DataFrame(
        {
            "paper_id": ["p2"],
            "reviewer_id": ["Bob"],
            "label": ["Conflict"],
            "bid": [-1.0],
            "conflict": [True],
        }
    )
    result = apply_bids(make_affinity(), frame)
    assert result.excluded[1, 1] and result.affinity.scores[1, 1] == 0.5


def test_unknown_ids_and_bids_listed_together() -> None:
    bids = pd.DataFrame(
        {"paper_id": ["p9", "p1"], "reviewer_id": ["Ann", "Zed"], "bid": ["High", "meh"]}
    )
    with pytest.raises(InputError) as error:
        apply_bids(make_affinity(), bids)
    messages = str(error.value)
    assert "unknown paper 'p9'" in messages and "unknown reviewer 'Zed'" in messages
    assert "unknown bid 'meh'" in messages


# --- the one bid vocabulary ---------------------------------------------------------------------


def test_parse_bid_is_the_vocabulary() -> None:
    assert parse_bid(" very  HIGH ") == (1.0, False)
    assert parse_bid("Low") == (-0.5, False)
    assert parse_bid("0.25") == (0.25, False) and parse_bid(-1) == (-1.0, False)
    for outside in (-3, "1.5", 1e308, "-1e308"):  # 1e308 would fold into an infinite score
        with pytest.raises(ValueError, match=r"outside -1\.\.1 \(Very Low = -1"):
            parse_bid(outside)
    assert parse_bid("not   WILLING") == (EXCLUDING_BID_VALUE, True)
    assert parse_bid("Conflict") == (EXCLUDING_BID_VALUE, True)
    for bad, words in (("nan", "not a finite number"), (float("inf"), "not a finite number")):
        with pytest.raises(ValueError, match=words):
            parse_bid(bad)
    with pytest.raises(ValueError, match=r"unknown bid 'Eager': use a number or one of Very High"):
        parse_bid("Eager")
    with pytest.raises(ValueError, match="unknown bid True"):
        parse_bid(True)


def test_one_exclusion_rule() -> None:
    assert excludes("Not Willing") and excludes(" conflict ") and excludes("NOT willing")
    assert not excludes("Very Low") and not excludes(-1.0) and not excludes("-1")
    assert declares_conflict("CONFLICT") and not declares_conflict("Not Willing")
    cells = pd.Series(["High", "not willing", "Conflict", "-1", None, "Not Willing"], dtype=object)
    assert excluding_mask(cells).tolist() == [False, True, True, False, False, True]
    assert excluding_mask([]).tolist() == []


def test_readers_and_folding_agree_with_the_vocabulary() -> None:
    """read_bids, apply_bids and the problem builder all exclude exactly what excludes()
    says, and give a label the number parse_bid gives it."""
    from recommender.io import ScoreTable, read_bids
    from reviewer_recommender.services.params import AssignParams
    from reviewer_recommender.services.problem import AssignInputs, Rows, build_problem

    cells = ["Very High", "not  willing", "Conflict", "0.25", " low ", "Very Low"]
    text = "paper_id,reviewer_id,bid\n" + "".join(
        f"p{i % 2 + 1},{r},{cell}\n"
        for i, (r, cell) in enumerate(
            zip(["Ann", "Ann", "Bob", "Bob", "Cy", "Cy"], cells, strict=True)
        )
    )
    frame = read_bids(text.encode(), "bids.csv")
    assert frame["bid"].tolist() == [parse_bid(c)[0] for c in cells]
    assert frame["conflict"].tolist() == [declares_conflict(c) for c in cells]
    expected = excluding_mask(frame["label"])
    assert expected.tolist() == [False, True, True, False, False, False]

    affinity = Affinity(
        ("p1", "p2"),
        ("Ann", "Bob", "Cy"),
        np.full((2, 3), 0.5, dtype=np.float32),
        ScoringParams(bid_weight=0.2),
    )
    folded = apply_bids(affinity, frame)
    excluded_pairs = {
        (affinity.paper_ids[p], affinity.reviewer_ids[r])
        for p, r in zip(*np.nonzero(folded.excluded), strict=True)
    }
    assert excluded_pairs == set(
        zip(frame["paper_id"][expected], frame["reviewer_id"][expected], strict=True)
    )

    scores = ScoreTable.from_frame(
        pd.DataFrame(
            [(p, r, 0.5) for p in ("p1", "p2") for r in ("Ann", "Bob", "Cy")],
            columns=["paper_id", "reviewer_id", "score"],
        ),
        source="scores.csv",
    )
    built = build_problem(
        AssignInputs(scores=scores, bids=Rows(frame, "bids.csv"), fold_bids=False),
        AssignParams(reviewers_per_paper=1),
    )
    problem = built.problem
    candidates = {
        (problem.paper_ids[p], problem.reviewer_ids[r])
        for p, r in zip(problem.pair_paper, problem.pair_reviewer, strict=True)
    }
    assert built.counts["not_willing_excluded"] == len(excluded_pairs)
    assert not candidates & excluded_pairs and len(candidates) == 6 - len(excluded_pairs)
