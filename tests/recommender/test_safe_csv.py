"""Spreadsheet-safe CSV: formula triggers are neutralised, numbers stay numbers, and our own
readers undo the escaping exactly."""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recommender.io import (
    read_bids,
    read_custom_max_papers,
    read_demand,
    read_pair_constraints,
    read_reviewers_csv,
    read_scores,
)
from recommender.io.safe_csv import (
    FORMULA_TRIGGERS,
    escape_cell,
    escape_frame,
    escape_series,
    safe_csv_writer,
    unescape_cell,
    unescape_frame,
    unescape_series,
    write_frame_csv,
)

TRIGGERS = ["=", "+", "-", "@", "\t", "\r"]
HOSTILE = [f"{t}cmd|' /C calc'!A0" for t in TRIGGERS] + [
    '=HYPERLINK("http://evil.example","x")',
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "-abc",
    "+x",
    "-",
    "=",
]


def spreadsheet_would_run(cell: str) -> bool:
    """OWASP's rule: a text cell starting with a trigger runs as a formula."""
    return bool(cell) and cell[0] in FORMULA_TRIGGERS


@pytest.mark.parametrize("value", HOSTILE)
def test_every_trigger_gets_a_quote(value: str) -> None:
    escaped = escape_cell(value)
    assert escaped == "'" + value
    assert not spreadsheet_would_run(escaped)
    assert unescape_cell(escaped) == value


@pytest.mark.parametrize("value", [-0.5, -1, 0, 3.25, np.float32(-0.25), np.int64(-7), None])
def test_numbers_stay_numbers(value: object) -> None:
    assert escape_cell(value) is value


@pytest.mark.parametrize("value", ["-1", "-0.5", "+2.5e-3", "-.5", "1e5"])
def test_text_that_is_a_plain_number_is_left_alone(value: str) -> None:
    assert escape_cell(value) == value
    assert unescape_cell(value) == value


@pytest.mark.parametrize("value", ["'=x", "''", "'-abc", "'''=", "'a", "'", "plain", ""])
def test_leading_quotes_round_trip(value: str) -> None:
    assert unescape_cell(escape_cell(value)) == value


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet=st.sampled_from([*TRIGGERS, "'", "a", "1", ".", "e", " ", "|"]), max_size=6)
)
def test_escape_is_safe_and_exactly_invertible(value: str) -> None:
    escaped = escape_cell(value)
    assert unescape_cell(escaped) == value
    # what a spreadsheet sees never starts with a trigger unless it is a plain number
    if spreadsheet_would_run(escaped):
        float(escaped)  # would raise for anything but a number


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=5), st.none()), max_size=8))
def test_vectorized_forms_agree_with_the_cell_form(values: list[str | None]) -> None:
    series = pd.Series(values, dtype=object)
    escaped = escape_series(series)
    assert list(escaped) == [escape_cell(v) for v in values]
    assert list(unescape_series(escaped)) == values


def test_frames_keep_numeric_columns_and_escape_text_and_header() -> None:
    frame = pd.DataFrame(
        {"paper_id": ["=p", "-q", "r"], "score": [-0.5, 0.25, -1.0], "=evil": ["@a", "b", "+c"]}
    )
    text = escape_frame(frame).to_csv(index=False, lineterminator="\n")
    assert text.splitlines() == [
        "paper_id,score,'=evil",
        "'=p,-0.5,'@a",
        "'-q,0.25,b",
        "r,-1.0,'+c",
    ]
    assert frame["paper_id"].tolist() == ["=p", "-q", "r"]  # the input is not modified
    back = unescape_frame(pd.read_csv(io.StringIO(text), dtype={"paper_id": str}))
    assert back["paper_id"].tolist() == ["=p", "-q", "r"]
    assert back["score"].tolist() == [-0.5, 0.25, -1.0]


def test_writer_escapes_rows_and_keeps_numbers() -> None:
    buffer = io.StringIO()
    writer = safe_csv_writer(buffer, lineterminator="\n")
    writer.writerow(["paper_id", "reviewer_id", "score"])
    writer.writerow(["=1+1", "\tr", -0.5])
    writer.writerows([["@p", "'=r", -1]])
    rows = list(csv.reader(io.StringIO(buffer.getvalue())))
    assert rows == [
        ["paper_id", "reviewer_id", "score"],
        ["'=1+1", "'\tr", "-0.5"],
        ["'@p", "''=r", "-1"],
    ]


def test_our_readers_undo_the_escaping(tmp_path) -> None:
    ids = ["=p", "-p", "+p", "@p", "'=p", "plain"]
    reviewers = ["=r", "-r", "+r", "@r", "''r", "plain"]
    pairs = pd.DataFrame({"paper_id": ids, "reviewer_id": reviewers, "value": -1})
    path = tmp_path / "constraints.csv"
    write_frame_csv(pairs, path, index=False)
    read = read_pair_constraints(path)
    assert read["paper_id"].tolist() == ids
    assert read["reviewer_id"].tolist() == reviewers

    bids = pairs.assign(bid="Not Willing").drop(columns="value")
    write_frame_csv(bids, tmp_path / "bids.csv", index=False)
    assert read_bids(tmp_path / "bids.csv")["paper_id"].tolist() == ids

    people = pd.DataFrame(
        {"id": reviewers[:4], "name": ["=n", "-n", "+n", "@n"], "email": "", "affiliation": ""}
    )
    publications = pd.DataFrame(
        {"reviewer_id": reviewers[:4], "title": ["-t", "=t", "@t", "+t"], "abstract": "a"}
    )
    write_frame_csv(people, tmp_path / "reviewers.csv", index=False)
    write_frame_csv(publications, tmp_path / "publications.csv", index=False)
    loaded = read_reviewers_csv(tmp_path / "reviewers.csv", tmp_path / "publications.csv")
    by_id = {r.id: r for r in loaded}
    assert sorted(by_id) == sorted(reviewers[:4])
    assert by_id["=r"].name == "=n" and by_id["=r"].publications[0].title == "-t"


def test_fast_readers_scores_and_count_tables_undo_the_escaping(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import recommender.io.tables as tables

    ids = ["=p", "-p", "+p", "@p", "'=p", "plain"]
    reviewers = ["=r", "-r", "+r", "@r", "''r", "plain"]
    pairs = pd.DataFrame({"paper_id": ids, "reviewer_id": reviewers, "value": -1})
    path = tmp_path / "constraints.csv"
    write_frame_csv(pairs, path, index=False)
    bids = pairs.assign(bid="Not Willing").drop(columns="value")
    write_frame_csv(bids, tmp_path / "bids.csv", index=False)
    # the vectorised path of large files reads exactly what the row-by-row path reads
    monkeypatch.setattr(tables, "FAST_MIN_BYTES", 0)
    assert read_pair_constraints(path)["paper_id"].tolist() == ids
    assert read_pair_constraints(path)["reviewer_id"].tolist() == reviewers
    assert read_bids(tmp_path / "bids.csv")["reviewer_id"].tolist() == reviewers

    scores = pairs.assign(score=[-0.5, 1.0, 2.0, 3.0, 4.0, 5.0]).drop(columns="value")
    write_frame_csv(scores, tmp_path / "scores.csv", index=False)
    table = read_scores(tmp_path / "scores.csv")
    assert table.paper_ids == tuple(sorted(ids))
    assert table.reviewer_ids == tuple(sorted(reviewers))
    read_back = table.to_frame().sort_values("score").reset_index(drop=True)
    pd.testing.assert_frame_equal(read_back, scores.reset_index(drop=True))

    write_frame_csv(pd.DataFrame({"paper_id": ids, "demand": 2}), tmp_path / "d.csv", index=False)
    assert read_demand(tmp_path / "d.csv")["paper_id"].tolist() == ids
    loads = pd.DataFrame({"reviewer_id": reviewers, "max": 3})
    write_frame_csv(loads, tmp_path / "m.csv", index=False)
    assert read_custom_max_papers(tmp_path / "m.csv")["reviewer_id"].tolist() == reviewers
