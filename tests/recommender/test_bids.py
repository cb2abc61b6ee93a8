"""Bids folded into scores; Not Willing / Conflict become an exclusion mask."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recommender.affinity import Affinity, ScoringParams
from recommender.bids import apply_bids, bid_value
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
