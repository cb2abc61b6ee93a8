"""Large constraint and bid files take a vectorised path; it must give exactly the table of
the row-by-row path, and fall back to it (for its messages) on anything unusual. The scores
reader is canonical (row order does not matter) and names lines."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import recommender.io.tables as tables
from recommender.corpus import InputError
from recommender.io import read_scores


def _both(reader, data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    results = []
    for threshold in (0, 10**12):
        monkeypatch.setattr(tables, "FAST_MIN_BYTES", threshold)
        try:
            results.append(reader(data, "t.csv", with_lines=True))
        except InputError as error:
            results.append(str(error))
    return results[0], results[1]


def _constraints(rng: np.random.Generator, n: int, header: bool) -> bytes:
    rows = {
        (f"p{rng.integers(0, 200)}", f"~r {rng.integers(0, 200)}"): rng.choice(["-1", "1", "0"])
        for _ in range(n)
    }
    lines = [f"{p},{r},{v},reason {i}" for i, ((p, r), v) in enumerate(rows.items())]
    return (
        ("paper_id,reviewer_id,value,reason\n" if header else "") + "\n".join(lines) + "\n"
    ).encode()


@pytest.mark.parametrize("header", [True, False])
def test_fast_constraints_equal_the_row_by_row_reading(monkeypatch, header: bool) -> None:
    data = _constraints(np.random.default_rng(1), 3000, header)
    fast, slow = _both(tables.read_pair_constraints, data, monkeypatch)
    assert isinstance(fast, pd.DataFrame) and isinstance(slow, pd.DataFrame)
    pd.testing.assert_frame_equal(fast, slow)
    # an identical repeated row is kept once, a contradicting one is an error naming its line
    again = data + data.splitlines(keepends=True)[-1]
    fast, slow = _both(tables.read_pair_constraints, again, monkeypatch)
    pd.testing.assert_frame_equal(fast, slow)
    last = data.splitlines()[-1].decode().split(",")
    flipped = {"-1": "1", "1": "-1", "0": "1"}[last[2]]
    clash = data + f"{last[0]},{last[1]},{flipped},again\n".encode()
    fast, slow = _both(tables.read_pair_constraints, clash, monkeypatch)
    assert isinstance(fast, str) and fast == slow and "different value" in fast


@pytest.mark.parametrize(
    "damage",
    ['p1,"r,1",-1\n', "\n", "p1,,1\n", "p1,r1,2\n", "p1,r1\n", "p1,r\x001,-1\n", "p1,r1,-1,x,y\n"],
)
def test_fast_path_falls_back_on_anything_unusual(monkeypatch, damage: str) -> None:
    data = _constraints(np.random.default_rng(2), 2000, True) + damage.encode()
    fast, slow = _both(tables.read_pair_constraints, data, monkeypatch)
    if isinstance(slow, pd.DataFrame):
        pd.testing.assert_frame_equal(fast, slow)
    else:
        assert fast == slow


def test_fast_bids_equal_the_row_by_row_reading(monkeypatch) -> None:
    rng = np.random.default_rng(3)
    pairs = {(f"p{rng.integers(0, 300)}", f"r{rng.integers(0, 300)}") for _ in range(4000)}
    labels = ["Very High", "high", "Not Willing", "0.25", "Conflict", "  Low "]
    text = "paper_id,reviewer_id,bid\n" + "".join(
        f"{p},{r},{labels[i % len(labels)]}\n" for i, (p, r) in enumerate(sorted(pairs))
    )
    fast, slow = _both(tables.read_bids, text.encode(), monkeypatch)
    pd.testing.assert_frame_equal(fast, slow)
    fast, slow = _both(tables.read_bids, (text + "p1,r1,Eager\n").encode(), monkeypatch)
    assert isinstance(fast, str) and fast == slow and "unknown bid 'Eager'" in fast


def test_scores_are_canonical_and_name_lines(tmp_path: Path) -> None:
    first = tmp_path / "a.csv"
    first.write_text("paper_id,reviewer_id,score\np2,~r1,0.5\np1,r2,0.25\np1,r1,1\n")
    second = tmp_path / "b.csv"
    second.write_text("\ufeffhead,tail,weight\r\np1,r1,1\r\n\r\np1,r2,0.25\r\np2,r1,0.5\r\n")
    a, b = read_scores(first), read_scores(second)
    assert a.paper_ids == b.paper_ids == ("p1", "p2") and a.reviewer_ids == ("r1", "r2")
    assert a.to_frame().equals(b.to_frame())
    assert a.to_frame()["score"].tolist() == [1.0, 0.25, 0.5]
    second.write_text("head,tail,weight\np1,r1,1\n\n\np1,r2,x\n")
    with pytest.raises(InputError, match=r"b.csv:5 \[score\]: not a number: 'x'"):
        read_scores(second)


def test_constraints_in_openreview_edge_columns(monkeypatch) -> None:
    """OpenReview's Conflict edges export as head,tail,weight,label: weight is the value."""
    data = b"head,tail,weight,label\np1,~r1,-1,Conflict\np2,r2,1,Forced\n"
    fast, slow = _both(tables.read_pair_constraints, data, monkeypatch)
    assert isinstance(fast, pd.DataFrame) and isinstance(slow, pd.DataFrame)
    pd.testing.assert_frame_equal(fast, slow)
    assert fast[["paper_id", "reviewer_id", "value"]].values.tolist() == [
        ["p1", "r1", -1],
        ["p2", "r2", 1],
    ]
