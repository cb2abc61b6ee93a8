"""An edit derives the run's pairs after it from the pairs before and its diff
(services.edit_effects.pairs_after) instead of reading the whole run again: the two agree."""

from __future__ import annotations

from typing import Any

import pandas as pd

from reviewer_recommender.services.edit_effects import pairs_after

BEFORE = pd.DataFrame(
    [
        ("P1", "a", 0.5, False),
        ("P1", "b", 0.4, True),
        ("P2", "a", 0.3, False),
        ("P2", "c", 0.2, False),
    ],
    columns=["paper_id", "reviewer_id", "score", "pinned"],
)


def _rows(frame: pd.DataFrame) -> list[tuple[str, str, float, bool]]:
    return sorted(
        (str(p), str(r), float(s), bool(x))
        for p, r, s, x in frame[["paper_id", "reviewer_id", "score", "pinned"]].itertuples(
            index=False
        )
    )


def test_removed_added_pinned_and_unpinned_pairs_are_applied() -> None:
    changes: dict[str, list[Any]] = {
        "pairs_added": [["P3", "c", 0.9, True]],
        "pairs_removed": [["P2", "a", 0.3, False]],
        "pinned": [["P1", "a"]],
        "unpinned": [["P1", "b"]],
        "pins_added": [["P1", "a", "chair"]],
    }
    assert _rows(pairs_after(BEFORE, changes)) == [
        ("P1", "a", 0.5, True),
        ("P1", "b", 0.4, False),
        ("P2", "c", 0.2, False),
        ("P3", "c", 0.9, True),
    ]
    after = pairs_after(BEFORE, changes)
    assert after["score"].dtype == float and after["pinned"].dtype == bool


def test_no_change_and_everything_removed() -> None:
    assert _rows(pairs_after(BEFORE, {})) == _rows(BEFORE)
    every = [[p, r, s, x] for p, r, s, x in BEFORE.itertuples(index=False)]
    assert pairs_after(BEFORE, {"pairs_removed": every}).empty
    assert _rows(pairs_after(BEFORE.iloc[0:0], {"pairs_added": [["P9", "z", 0.1, False]]})) == [
        ("P9", "z", 0.1, False)
    ]
