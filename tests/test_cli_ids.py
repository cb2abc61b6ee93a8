"""The id policy through the command line's file readers: paper ids holding a line break
(newline, U+2028, U+0085) are refused naming file, line and field, never rewritten into
another id; the eight reviewer ids that display as "Ada" are refused (invisible characters)
or found alike; a scores file whose ids display alike is refused."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path

import pytest

from reviewer_recommender.cli.main import main

ADAS = [
    "Ada",
    "\u0410da",
    "Ad\u0430",
    "A\u200bda",
    "\u202eadA",
    "\uff21\uff44\uff41",
    "Ada\u034f",
    "A\u200dda",
]
BROKEN_PAPER_IDS = {"P\n1": "U+000A", "P\u20281": "U+2028", "P\x851": "U+0085"}


def run(args: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    assert "Traceback" not in out.getvalue() + err.getvalue()
    return code, err.getvalue()


def _csv(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as stream:
        csv.writer(stream).writerows(rows)
    return path


def _reviewers(folder: Path, ids: list[str]) -> Path:
    rows = [["id", "name"], *([reviewer_id, "Reviewer"] for reviewer_id in ids)]
    return _csv(folder / "reviewers.csv", rows)


def _score(folder: Path, reviewers: Path, submissions: Path) -> tuple[int, str]:
    output = folder / "scores.csv"
    code, err = run(
        [
            "score",
            "--archives",
            str(reviewers),
            "--submissions",
            str(submissions),
            "--output",
            str(output),
            "--method",
            "tfidf",
            "--cache-dir",
            str(folder / "cache"),
        ]
    )
    if code != 0:
        assert not output.exists()
    return code, err


def test_paper_ids_with_line_breaks_are_refused_in_csv(tmp_path: Path) -> None:
    rows = [["id", "title", "abstract"], ["P 1", "Graphs", "Graph networks."]]
    rows += [[paper_id, "Graphs", "Graph networks."] for paper_id in BROKEN_PAPER_IDS]
    submissions = _csv(tmp_path / "submissions.csv", rows)
    code, err = _score(tmp_path, _reviewers(tmp_path, ["r1", "r2"]), submissions)
    assert code == 1, err
    # the newline sits inside a quoted cell: the record ends on line 4
    for line, (paper_id, character) in zip((4, 5, 6), BROKEN_PAPER_IDS.items(), strict=True):
        assert f"submissions.csv:{line} [id]: line break in submission id {paper_id!r}" in err, err
        assert character in err


def test_paper_ids_with_line_breaks_are_refused_in_json(tmp_path: Path) -> None:
    records = [{"id": "P 1", "title": "Graphs"}]
    records += [{"id": paper_id, "title": "Graphs"} for paper_id in BROKEN_PAPER_IDS]
    submissions = tmp_path / "submissions.json"
    submissions.write_text(json.dumps(records), encoding="utf-8")
    code, err = _score(tmp_path, _reviewers(tmp_path, ["r1"]), submissions)
    assert code == 1, err
    for position, (paper_id, character) in enumerate(BROKEN_PAPER_IDS.items(), start=2):
        assert f"[{position - 1}].id]: submission {paper_id!r} (record {position})" in err, err
        assert character in err


def test_the_eight_adas_are_refused(tmp_path: Path) -> None:
    submissions = _csv(
        tmp_path / "submissions.csv", [["id", "title"], ["P1", "Graphs"], ["P2", "Vision"]]
    )
    code, err = _score(tmp_path, _reviewers(tmp_path, ADAS), submissions)
    assert code == 1, err
    for line, reviewer_id in enumerate(ADAS, start=2):
        where = f"reviewers.csv:{line} [id]: "
        if line == 2:
            assert where not in err  # the first Ada is the one the others look like
            continue
        assert where in err and repr(reviewer_id) in err, (reviewer_id, err)
    for invisible in ("U+200B", "U+202E", "U+034F", "U+200D"):
        assert "invisible character in reviewer id" in err and invisible in err
    assert "reviewer id 'Аda' looks like reviewer id 'Ada' (line 2)" in err
    assert "U+0410 (CYRILLIC CAPITAL LETTER A)" in err


@pytest.mark.parametrize(
    ("column", "ids"),
    [("reviewer_id", ("Ada", "\u0410da")), ("paper_id", ("P1", "\u0420\u0031"))],
)
def test_a_scores_file_with_look_alike_ids_is_refused(
    tmp_path: Path, column: str, ids: tuple[str, str]
) -> None:
    rows = [["paper_id", "reviewer_id", "score"]]
    for other in ("x", "y"):
        for identifier in ids:
            pair = [identifier, other] if column == "paper_id" else [other, identifier]
            rows.append([*pair, "0.5"])
    scores = _csv(tmp_path / "scores.csv", rows)
    code, err = run(["assign", "--scores", str(scores), "--output", str(tmp_path / "out.csv")])
    assert code == 1, err
    kind = column.removesuffix("_id")
    assert f"[{column}]: {kind} id {ids[1]!r} looks like {kind} id {ids[0]!r}" in err, err
    assert not (tmp_path / "out.csv").exists()
