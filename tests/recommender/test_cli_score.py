"""``recommender score`` options: --top-k, --engine dask (embedded or --scheduler)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from reviewer_recommender.cli.main import main

TOPICS = [
    "graph neural networks message passing",
    "image segmentation convolutional vision",
    "speech recognition acoustic models",
    "reinforcement learning policy gradient",
]


@pytest.fixture
def venue(tmp_path: Path) -> tuple[Path, Path]:
    archives = tmp_path / "archives"
    archives.mkdir()
    for r in range(6):
        lines = [
            json.dumps(
                {
                    "id": f"r{r}-{j}",
                    "content": {
                        "title": TOPICS[(r + j) % 4],
                        "abstract": f"{TOPICS[(r * j + 1) % 4]} study {r} {j}",
                        "year": 2020 + j,
                    },
                }
            )
            for j in range(1 + r % 3)
        ]
        (archives / f"~Rev_{r}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    submissions = {
        f"p{i}": {
            "id": f"p{i}",
            "content": {"title": TOPICS[i % 4], "abstract": f"We study {TOPICS[(i + 1) % 4]}."},
        }
        for i in range(7)
    }
    path = tmp_path / "submissions.json"
    path.write_text(json.dumps(submissions), encoding="utf-8")
    return archives, path


def _score(venue: tuple[Path, Path], output: Path, *extra: str) -> pd.DataFrame:
    archives, submissions = venue
    code = main(
        [
            "score",
            "--archives",
            str(archives),
            "--submissions",
            str(submissions),
            "--output",
            str(output),
            "--method",
            "tfidf",
            "--cache-dir",
            str(output.parent / "cache"),
            *extra,
        ]
    )
    assert code == 0
    return pd.read_csv(output)


def _assert_same(first: pd.DataFrame, second: pd.DataFrame) -> None:
    assert first[["paper_id", "reviewer_id"]].equals(second[["paper_id", "reviewer_id"]])
    assert (first["score"] - second["score"]).abs().max() < 1e-5


def test_top_k_writes_the_union_of_top_lists(venue, tmp_path) -> None:
    every = _score(venue, tmp_path / "all.csv")
    assert len(every) == 7 * 6
    top = _score(venue, tmp_path / "top.csv", "--top-k", "1")
    by_paper = every.sort_values(["paper_id", "score"], ascending=[True, False], kind="stable")
    by_reviewer = every.sort_values(
        ["reviewer_id", "score"], ascending=[True, False], kind="stable"
    )
    expected = set(
        map(tuple, by_paper.groupby("paper_id").head(1)[["paper_id", "reviewer_id"]].values)
    ) | set(
        map(tuple, by_reviewer.groupby("reviewer_id").head(1)[["paper_id", "reviewer_id"]].values)
    )
    assert set(map(tuple, top[["paper_id", "reviewer_id"]].values)) == expected
    assert len(top) == len(expected)


def test_dask_engine_on_a_given_scheduler_equals_local(venue, tmp_path, capsys) -> None:
    from distributed import LocalCluster

    local = _score(venue, tmp_path / "local.csv", "--top-k", "2")
    with LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=False,
        dashboard_address=":0",
        silence_logs=40,
    ) as cluster:
        remote = _score(
            venue,
            tmp_path / "dask.csv",
            "--top-k",
            "2",
            "--engine",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
        )
    _assert_same(local, remote)
    assert "tfidf, dask" in capsys.readouterr().out


def test_bad_score_options_are_reported(venue, tmp_path, capsys) -> None:
    archives, submissions = venue
    base = [
        "score",
        "--archives",
        str(archives),
        "--submissions",
        str(submissions),
        "--output",
        str(tmp_path / "x.csv"),
        "--method",
        "tfidf",
    ]
    assert main([*base, "--scheduler", "tcp://127.0.0.1:1"]) == 1
    assert "--scheduler needs --engine dask" in capsys.readouterr().err
    assert main([*base, "--top-k", "0"]) == 1
    assert "--top-k must be >= 1" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()
    assert main([*base, "--reference-year", "2020"]) == 1
    assert "--reference-year: applies to --conflicts-output" in capsys.readouterr().err
    assert main([*base, "--conflicts-output", str(tmp_path / "x.config.json")]) == 1
    assert "is also the scores output or its config" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


def test_conflicts_are_written_beside_the_scores_and_recorded(venue, tmp_path, capsys) -> None:
    """``--conflicts-output``: the constraints CSV ``recommender conflicts`` writes (here every
    reviewer wrote with p0's author), found with the given window and year, recorded."""
    archives, _submissions = venue
    for r in range(6):
        path = archives / f"~Rev_{r}.jsonl"
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        for line in lines:
            line["content"]["authors"] = [f"Rev {r}", "Pat Shared"]
        path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    submissions = json.loads(venue[1].read_text())
    submissions["p0"]["content"]["authors"] = ["Pat Shared"]
    venue[1].write_text(json.dumps(submissions))
    conflicts = tmp_path / "conflicts.csv"
    scores = _score(
        venue,
        tmp_path / "scores.csv",
        "--conflicts-output",
        str(conflicts),
        "--coauthor-window",
        "any",
        "--reference-year",
        "2021",
    )
    assert len(scores) == 7 * 6  # conflicts leave the scores alone
    written = pd.read_csv(conflicts)
    assert list(written.columns) == ["paper_id", "reviewer_id", "value", "reason"]
    assert set(written["paper_id"]) == {"p0"} and len(written) == 6
    assert (written["value"] == -1).all() and written["reason"].str.contains("author").all()
    config = json.loads((tmp_path / "scores.config.json").read_text())
    assert config["conflicts"] == {
        "detection": {
            "coauthor_window_years": None,
            "reference_year": 2021,
            "coauthors": True,
            "same_institution": True,
            "same_email_domain": True,
        },
        "pairs": 6,
    }
    assert f"6 conflicting pairs -> {conflicts}" in capsys.readouterr().out
