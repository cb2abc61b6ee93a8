"""The chair's workflow on files: conflicts -> score (with bids) -> assign (with conflicts,
demand, loads) -> summary; every step through ``recommender`` in-process."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pandas as pd
import pytest

from reviewer_recommender.cli.main import main


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    assert "Traceback" not in out.getvalue() + err.getvalue()
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def venue(tmp_path: Path) -> dict[str, Path]:
    """Four reviewers, three papers. Ada co-authored with Carl in 2024 (recent) and with Dora
    in 2015 (old); Ben is at the same institution as paper p2's author; Eve is an author of p3."""
    reviewers = tmp_path / "reviewers.csv"
    reviewers.write_text(
        "id,name,email,affiliation,seniority\n"
        "ada,Ada Lovelace,ada@inst-a.edu,Institute A,senior\n"
        "ben,Ben Berg,ben@inst-b.edu,Institute B,junior\n"
        "cy,Cy Chen,cy@gmail.com,Institute C,junior\n"
        "eve,Eve Ernst,eve@inst-e.edu,Institute E,senior\n",
        encoding="utf-8",
    )
    publications = tmp_path / "publications.csv"
    publications.write_text(
        "reviewer_id,title,abstract,year,authors\n"
        "ada,Graph networks,message passing on graphs,2024,Ada Lovelace;Carl Codd\n"
        "ada,Old graphs,graph theory,2015,Ada Lovelace;Dora Dahl\n"
        "ben,Vision models,image segmentation networks,2023,Ben Berg\n"
        "cy,Speech,acoustic models for speech,2023,Cy Chen\n"
        "eve,Graph vision,graphs for images,2022,Eve Ernst\n",
        encoding="utf-8",
    )
    submissions = tmp_path / "submissions.csv"
    submissions.write_text(
        "id,title,abstract,authors\n"
        "p1,Message passing,graph networks and message passing,Carl Codd\n"
        "p2,Segmentation,image segmentation with networks,Dora Dahl\n"
        "p3,Graph images,graphs for images,Eve Ernst\n",
        encoding="utf-8",
    )
    return {
        "reviewers": reviewers,
        "publications": publications,
        "submissions": submissions,
        "folder": tmp_path,
    }


def test_conflicts_command_writes_openreview_constraints(venue: dict[str, Path]) -> None:
    output = venue["folder"] / "conflicts.csv"
    corpus = [
        "--archives", str(venue["reviewers"]),
        "--publications", str(venue["publications"]),
        "--submissions", str(venue["submissions"]),
    ]  # fmt: skip
    code, _out, err = run("conflicts", *corpus, "--output", str(output), "--reference-year", "2025")
    assert code == 0, err
    frame = pd.read_csv(output)
    assert list(frame.columns) == ["paper_id", "reviewer_id", "value", "reason"]
    pairs = set(zip(frame["paper_id"], frame["reviewer_id"], strict=True))
    assert ("p1", "ada") in pairs  # co-author 2024, inside the 3-year window
    assert ("p2", "ada") not in pairs  # co-author 2015, outside
    assert ("p3", "eve") in pairs  # author
    assert (frame["value"] == -1).all()
    assert "coauthor" in frame.set_index(["paper_id", "reviewer_id"]).loc[("p1", "ada"), "reason"]
    # a wider window catches the old co-authorship
    code, _, _ = run(
        "conflicts", *corpus, "--output", str(output), "--reference-year", "2025",
        "--coauthor-window", "any",
    )  # fmt: skip
    assert code == 0 and ("p2", "ada") in set(
        zip(*pd.read_csv(output)[["paper_id", "reviewer_id"]].to_numpy().T, strict=True)
    )
    # OpenReview's matcher form: no header, three columns
    plain = venue["folder"] / "plain.csv"
    code, _, _ = run("conflicts", *corpus, "--output", str(plain), "--format", "openreview")
    lines = plain.read_text().splitlines()
    assert (
        code == 0 and lines and all(line.count(",") == 2 and line.endswith(",-1") for line in lines)
    )


def test_score_with_bids_then_assign_with_conflicts_and_demand(venue: dict[str, Path]) -> None:
    folder = venue["folder"]
    bids = folder / "bids.csv"
    bids.write_text(
        "paper_id,reviewer_id,bid\np1,ben,Not Willing\np2,cy,Very High\np9,cy,High\n",
        encoding="utf-8",
    )
    scores = folder / "scores.csv"
    code, _, err = run(
        "score",
        "--archives", str(venue["reviewers"]),
        "--publications", str(venue["publications"]),
        "--submissions", str(venue["submissions"]),
        "--output", str(scores),
        "--method", "tfidf",
        "--cache-dir", str(folder / "cache"),
        "--bids", str(bids),
    )  # fmt: skip
    assert code == 0, err
    assert "bids.csv:4 [paper_id]: unknown paper 'p9'" in err
    frame = pd.read_csv(scores)
    assert ("p1", "ben") not in set(zip(frame["paper_id"], frame["reviewer_id"], strict=True))
    assert len(frame) == 3 * 4 - 1
    config = json.loads((folder / "scores.config.json").read_text())
    assert config["affinity"]["method"] == "tfidf"
    assert config["not_willing_pairs_removed"] == 1 and config["bids_folded"] == 1
    assert config["run"]["bid_weight"] == 0.1
    assert len(config["inputs"]["bids"]["sha256"]) == 64

    output = folder / "assignment.csv"
    demand = folder / "demand.csv"
    demand.write_text("paper_id,demand\np3,1\n", encoding="utf-8")
    code, _out, err = run(
        "assign",
        "--scores", str(scores),
        "--output", str(output),
        "--reviewers-per-paper", "2",
        "--max-papers", "2",
        "--demand", str(demand),
        "--detect-conflicts",
        "--reviewers", str(venue["reviewers"]),
        "--publications", str(venue["publications"]),
        "--submissions", str(venue["submissions"]),
        "--reference-year", "2025",
        "--seed", "7",
    )  # fmt: skip
    assert code == 0, err
    pairs = pd.read_csv(output)
    chosen = set(zip(pairs["paper_id"], pairs["reviewer_id"], strict=True))
    assert not chosen & {("p1", "ada"), ("p3", "eve"), ("p1", "ben")}
    # the same bids again on scores that hold them: a warning that they would count twice
    code, _, err = run(
        "assign", "--scores", str(scores), "--output", str(folder / "twice.csv"),
        "--reviewers-per-paper", "1", "--bids", str(bids),
    )  # fmt: skip
    assert code == 0 and "counting them twice" in err, err
    assert pairs.groupby("paper_id").size().to_dict() == {"p1": 2, "p2": 2, "p3": 1}
    summary = json.loads((folder / "assignment.summary.json").read_text())
    assert summary["objective"] == pytest.approx(pairs["score"].sum())
    assert summary["upper_bound"] >= summary["objective"] - 1e-9
    assert summary["gap"] <= 1e-9 and summary["solver"] == "flow" and summary["seed"] == 7
    assert {p["paper_id"]: p["demand"] for p in summary["per_paper"]} == {"p1": 2, "p2": 2, "p3": 1}
    assert len(summary["per_reviewer"]) == 4
    assert summary["parameters"]["max_load"] == 2
    assert summary["files"]["demand"] == str(demand)
    assert summary["inputs"]["conflicts_applied"] >= 2


def test_assign_bids_fold_preferences_and_exclude_not_willing(tmp_path: Path) -> None:
    scores = tmp_path / "scores.csv"
    scores.write_text(
        "paper_id,reviewer_id,score\np1,r1,0.50\np1,r2,0.45\np2,r1,0.40\np2,r2,0.30\n",
        encoding="utf-8",
    )
    bids = tmp_path / "bids.csv"
    bids.write_text("p1,r2,Very High\np2,r2,Not Willing\n", encoding="utf-8")
    base = ["assign", "--scores", str(scores), "--reviewers-per-paper", "1", "--max-papers", "1"]
    code, _, err = run(*base, "--output", str(tmp_path / "plain.csv"))
    assert code == 0, err
    plain = set(
        map(tuple, pd.read_csv(tmp_path / "plain.csv")[["paper_id", "reviewer_id"]].to_numpy())
    )
    assert plain == {("p1", "r2"), ("p2", "r1")}  # 0.45 + 0.40 beats 0.50 + 0.30
    code, _, err = run(*base, "--bids", str(bids), "--output", str(tmp_path / "bids.csv.out"))
    assert code == 0, err
    with_bids = pd.read_csv(tmp_path / "bids.csv.out")
    chosen = set(zip(with_bids["paper_id"], with_bids["reviewer_id"], strict=True))
    assert ("p2", "r2") not in chosen and chosen == {("p1", "r2"), ("p2", "r1")}
    assert with_bids.set_index("reviewer_id").loc["r2", "score"] == pytest.approx(0.55)


def test_score_records_configuration_and_demo_applies_conflicts(tmp_path: Path) -> None:
    output = tmp_path / "demo"
    code, _out, err = run(
        "demo", "--output-dir", str(output), "--method", "tfidf", "--coauthor-window", "5"
    )
    assert code == 0, err
    summary = json.loads((output / "summary.json").read_text())
    assert summary["papers"] == 76 and summary["reviewers"] == 27
    assert "conflicts_applied" in summary["inputs"]
    conflicts = pd.read_csv(output / "conflicts.csv")
    assigned = pd.read_csv(output / "assignments.csv")
    overlap = set(zip(conflicts["paper_id"], conflicts["reviewer_id"], strict=True)) & set(
        zip(assigned["paper_id"], assigned["reviewer_id"], strict=True)
    )
    assert not overlap
