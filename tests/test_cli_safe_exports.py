"""The CLI's CSVs are spreadsheet-safe and its own round trip (score -> assign) is lossless.

Runs the installed ``recommender`` console script, as a chair would."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd

from recommender.io.safe_csv import FORMULA_TRIGGERS, unescape_cell, write_frame_csv

TOPICS = [
    ("graph neural networks for molecules", "message passing on molecular graphs"),
    ("image segmentation with decoders", "convolutional vision models for pixels"),
    ("policy gradients for agents", "offline reinforcement learning from logs"),
    ("transformer translation models", "attention for machine translation of text"),
]
PREFIXES = ["=", "-", "+", "@"]


def _recommender(*args: str | Path) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("recommender")
    return subprocess.run(
        [str(script), *map(str, args)], capture_output=True, text=True, timeout=300, check=False
    )


def _safe_rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as stream:
        rows = list(csv.reader(stream))
    for row in rows:
        for cell in row:
            if cell and cell[0] in FORMULA_TRIGGERS:
                float(cell)  # only a plain number may begin with + or -
    return rows


def test_score_and_assign_write_safe_csv_and_round_trip(tmp_path: Path) -> None:
    reviewer_ids = [f"{p}rev{i}" for i, p in enumerate(PREFIXES)]
    paper_ids = [f"{p}paper{i}+1" for i, p in enumerate(reversed(PREFIXES))]
    reviewers = [
        {
            "id": rid,
            "name": "=cmd|' /C calc'!A0",
            "publications": [{"title": title, "abstract": abstract, "year": 2024}],
        }
        for rid, (title, abstract) in zip(reviewer_ids, TOPICS, strict=True)
    ]
    submissions = [
        {"id": pid, "title": title, "abstract": abstract}
        for pid, (title, abstract) in zip(paper_ids, TOPICS, strict=True)
    ]
    (tmp_path / "reviewers.json").write_text(json.dumps(reviewers), encoding="utf-8")
    (tmp_path / "submissions.json").write_text(json.dumps(submissions), encoding="utf-8")
    scores = tmp_path / "scores.csv"
    done = _recommender(
        "score",
        "--archives",
        tmp_path / "reviewers.json",
        "--submissions",
        tmp_path / "submissions.json",
        "--output",
        scores,
        "--method",
        "tfidf",
    )
    assert done.returncode == 0, done.stderr
    header, *rows = _safe_rows(scores)
    assert header == ["paper_id", "reviewer_id", "score"]
    assert len(rows) == 16
    assert {unescape_cell(r[0]) for r in rows} == set(paper_ids)
    assert {unescape_cell(r[1]) for r in rows} == set(reviewer_ids)
    assert all(r[0].startswith("'") and r[1].startswith("'") for r in rows)

    # files written by our helper (escaped) are read back exactly by assign
    write_frame_csv(
        pd.DataFrame({"paper_id": [paper_ids[0]], "reviewer_id": [reviewer_ids[0]], "value": [1]}),
        tmp_path / "constraints.csv",
        index=False,
    )
    write_frame_csv(
        pd.DataFrame({"reviewer_id": [reviewer_ids[1]], "max": [0]}),
        tmp_path / "max.csv",
        index=False,
    )
    output = tmp_path / "assignments.csv"
    done = _recommender(
        "assign",
        "--scores",
        scores,
        "--reviewers-per-paper",
        "1",
        "--max-papers",
        "2",
        "--conflicts",
        tmp_path / "constraints.csv",
        "--custom-max-papers",
        tmp_path / "max.csv",
        "--alternates",
        "1",
        "--output",
        output,
    )
    assert done.returncode == 0, done.stderr
    header, *rows = _safe_rows(output)
    pairs = {(unescape_cell(r[0]), unescape_cell(r[1])) for r in rows}
    assert len(pairs) == 4 and {p for p, _ in pairs} == set(paper_ids)
    assert (paper_ids[0], reviewer_ids[0]) in pairs  # the forced pair, matched by its id
    assert all(r != reviewer_ids[1] for _, r in pairs)  # the reviewer capped at 0
    alternates = _safe_rows(output.with_name("assignments.alternates.csv"))
    assert len(alternates) > 1
    assert {unescape_cell(r[0]) for r in alternates[1:]} <= set(paper_ids)


def test_conflicts_command_writes_safe_csv_that_assign_reads_back(tmp_path: Path) -> None:
    """``recommender conflicts`` (a self-authored paper per reviewer) writes escaped ids and
    reasons; ``assign --conflicts`` reads the same ids back and never assigns those pairs."""
    # ("@..." author ids read as e-mail addresses: this reviewer id starts with "'=")
    reviewer_ids = [f"{p}rev{i}" for i, p in enumerate(["=", "-", "+", "'="])]
    paper_ids = [f"{p}paper{i}" for i, p in enumerate(PREFIXES)]
    reviewers = [
        {
            "id": rid,
            "name": f"@Author {i}",
            "affiliation": "=Institute",
            "publications": [{"title": title, "abstract": abstract, "year": 2024}],
        }
        for i, (rid, (title, abstract)) in enumerate(zip(reviewer_ids, TOPICS, strict=True))
    ]
    submissions = [
        {"id": pid, "title": title, "abstract": abstract, "authorids": [rid]}
        for pid, rid, (title, abstract) in zip(paper_ids, reviewer_ids, TOPICS, strict=True)
    ]
    (tmp_path / "reviewers.json").write_text(json.dumps(reviewers), encoding="utf-8")
    (tmp_path / "submissions.json").write_text(json.dumps(submissions), encoding="utf-8")
    constraints = tmp_path / "conflicts.csv"
    done = _recommender(
        "conflicts",
        "--archives",
        tmp_path / "reviewers.json",
        "--submissions",
        tmp_path / "submissions.json",
        "--output",
        constraints,
    )
    assert done.returncode == 0, done.stderr
    header, *rows = _safe_rows(constraints)
    assert header[:3] == ["paper_id", "reviewer_id", "value"]
    listed = {(unescape_cell(r[0]), unescape_cell(r[1])) for r in rows}
    assert set(zip(paper_ids, reviewer_ids, strict=True)) <= listed

    scores = tmp_path / "scores.csv"
    write_frame_csv(
        pd.DataFrame(
            [
                (p, r, 1.0 if i == j else 0.1)
                for i, p in enumerate(paper_ids)
                for j, r in enumerate(reviewer_ids)
            ],
            columns=["paper_id", "reviewer_id", "score"],
        ),
        scores,
        index=False,
    )
    output = tmp_path / "assignments.csv"
    done = _recommender(
        "assign",
        "--scores",
        scores,
        "--conflicts",
        constraints,
        "--reviewers-per-paper",
        "1",
        "--max-papers",
        "1",
        "--output",
        output,
    )
    assert done.returncode == 0, done.stderr
    _header, *rows = _safe_rows(output)
    pairs = {(unescape_cell(r[0]), unescape_cell(r[1])) for r in rows}
    assert {p for p, _ in pairs} == set(paper_ids)
    assert not pairs & listed
