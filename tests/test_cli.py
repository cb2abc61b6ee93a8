"""The ``recommender`` command line contract: exact forms later checks rely on."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from reviewer_recommender.cli.main import main


def _write_archive(directory: Path, reviewer_id: str, titles: list[str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps(
            {
                "id": f"{reviewer_id}-{i}",
                "content": {
                    "title": t,
                    "abstract": f"{t} abstract text",
                    "year": 2021,
                    "authors": ["A. Author"],
                },
            }
        )
        for i, t in enumerate(titles)
    ]
    (directory / f"~{reviewer_id}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def tiny_venue(tmp_path: Path) -> tuple[Path, Path]:
    archives = tmp_path / "archives"
    _write_archive(archives, "Ada_Graph1", ["graph neural networks", "message passing on graphs"])
    _write_archive(archives, "Bo_Vision1", ["image segmentation", "convolutional vision models"])
    _write_archive(archives, "Cy_Speech1", ["speech recognition", "acoustic models for speech"])
    submissions = {
        f"p{i}": {"id": f"p{i}", "content": {"title": t, "abstract": f"We study {t}."}}
        for i, t in enumerate(["graph networks", "vision segmentation", "speech acoustic models"])
    }
    path = tmp_path / "submissions.json"
    path.write_text(json.dumps(submissions), encoding="utf-8")
    return archives, path


def test_score_writes_every_pair_without_tilde(tiny_venue, tmp_path, capsys):
    archives, submissions = tiny_venue
    output = tmp_path / "scores.csv"
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
            str(tmp_path / "c"),
        ]
    )
    assert code == 0
    scores = pd.read_csv(output)
    assert list(scores.columns) == ["paper_id", "reviewer_id", "score"]
    assert len(scores) == 9
    assert not scores["reviewer_id"].str.startswith("~").any()
    best = scores.loc[scores.groupby("paper_id")["score"].idxmax()].set_index("paper_id")
    assert best.loc["p0", "reviewer_id"] == "Ada_Graph1"
    assert best.loc["p1", "reviewer_id"] == "Bo_Vision1"
    assert best.loc["p2", "reviewer_id"] == "Cy_Speech1"


def test_score_reports_bad_input_file_and_line(tmp_path, tiny_venue, capsys):
    archives, _ = tiny_venue
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "p1", "content": {"title": "x", "abstract": "y"}}\n{"id": \n', encoding="utf-8"
    )
    code = main(
        [
            "score",
            "--archives",
            str(archives),
            "--submissions",
            str(bad),
            "--output",
            str(tmp_path / "s.csv"),
            "--method",
            "tfidf",
        ]
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "bad.jsonl" in err and ":2" in err
    assert not (tmp_path / "s.csv").exists()


def _scores_csv(path: Path, rows: list[tuple[str, str, float]]) -> Path:
    pd.DataFrame(rows, columns=["paper_id", "reviewer_id", "score"]).to_csv(path, index=False)
    return path


def test_assign_respects_constraints_and_optimum(tmp_path, capsys):
    rows = [
        (p, r, s)
        for p, r, s in [
            ("p1", "r1", 0.9),
            ("p1", "r2", 0.8),
            ("p1", "r3", 0.1),
            ("p2", "r1", 0.95),
            ("p2", "r2", 0.2),
            ("p2", "r3", 0.3),
        ]
    ]
    scores = _scores_csv(tmp_path / "scores.csv", rows)
    constraints = tmp_path / "constraints.csv"
    constraints.write_text("paper_id,reviewer_id,value\np2,r1,-1\np1,r3,1\n", encoding="utf-8")
    output = tmp_path / "assignments.csv"
    code = main(
        [
            "assign",
            "--scores",
            str(scores),
            "--reviewers-per-paper",
            "2",
            "--min-papers",
            "1",
            "--max-papers",
            "2",
            "--conflicts",
            str(constraints),
            "--output",
            str(output),
        ]
    )
    assert code == 0, capsys.readouterr().err
    pairs = set(map(tuple, pd.read_csv(output)[["paper_id", "reviewer_id"]].to_numpy()))
    assert ("p2", "r1") not in pairs
    assert ("p1", "r3") in pairs
    # forced p1-r3; p1 takes the better of r1/r2 (r1, 0.9); p2 then needs two of r2, r3.
    assert pairs == {("p1", "r3"), ("p1", "r1"), ("p2", "r2"), ("p2", "r3")}


def test_assign_custom_max_and_infeasible_exit_code(tmp_path, capsys):
    rows = [(p, r, 1.0) for p in ("p1", "p2", "p3") for r in ("r1", "r2")]
    scores = _scores_csv(tmp_path / "scores.csv", rows)
    custom = tmp_path / "custom.csv"
    custom.write_text("reviewer_id,max\nr1,1\n", encoding="utf-8")
    code = main(
        [
            "assign",
            "--scores",
            str(scores),
            "--reviewers-per-paper",
            "1",
            "--max-papers",
            "1",
            "--custom-max-papers",
            str(custom),
            "--output",
            str(tmp_path / "a.csv"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "demand 3" in err and "capacity 2" in err
    assert not (tmp_path / "a.csv").exists()


def test_assign_rejects_malformed_scores(tmp_path, capsys):
    path = tmp_path / "scores.csv"
    path.write_text("paper_id,reviewer_id,score\np1,r1,0.5\np1,r2,abc\n", encoding="utf-8")
    code = main(
        [
            "assign",
            "--scores",
            str(path),
            "--reviewers-per-paper",
            "1",
            "--max-papers",
            "1",
            "--output",
            str(tmp_path / "a.csv"),
        ]
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "scores.csv:3" in err and "score" in err


def test_demo_runs_on_bundled_sample(tmp_path, capsys):
    output = tmp_path / "demo"
    code = main(["demo", "--output-dir", str(output), "--method", "tfidf"])
    assert code == 0
    out = capsys.readouterr().out
    assert "76" in out and "27" in out and "load range" in out
    summary = json.loads((output / "summary.json").read_text())
    assert summary["papers"] == 76 and summary["reviewers"] == 27
    pairs = pd.read_csv(output / "assignments.csv")
    assert len(pairs) == 76 * 3
    assert pairs.groupby("paper_id").size().eq(3).all()
    loads = pairs.groupby("reviewer_id").size()
    assert loads.max() - loads.min() <= 1


def test_evaluate_on_a_tiny_gold_folder(tmp_path, capsys):
    gold = tmp_path / "gold"
    draw = gold / "d_20_1"
    _write_archive(draw / "archives", "1", ["graph neural networks", "graph message passing"])
    _write_archive(draw / "archives", "2", ["speech recognition", "acoustic speech models"])
    papers = {
        "pa": {"id": "pa", "content": {"title": "graph networks", "abstract": "On graphs."}},
        "pb": {"id": "pb", "content": {"title": "speech models", "abstract": "On speech."}},
    }
    (draw / "submissions.json").write_text(json.dumps(papers), encoding="utf-8")
    (gold / "evaluations.tsv").write_text(
        "ParticipantID\tPaper1\tPaper2\tExpertise1\tExpertise2\n1\tpa\tpb\t5.0\t1.0\n"
        "2\tpa\tpb\t1.0\t4.0\n",
        encoding="utf-8",
    )
    code = main(
        [
            "evaluate",
            "--gold",
            str(gold),
            "--config",
            'tfidf={"method": "tfidf"}',
            "--bootstrap",
            "20",
            "--cache-dir",
            str(tmp_path / "cache"),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("tfidf"))
    assert row.split()[1] in ("0.0000", "*")  # perfect ordering: loss 0
    assert "0.0000" in row


def test_evaluate_rejects_bad_config(tmp_path, capsys):
    (tmp_path / "gold").mkdir()
    code = main(["evaluate", "--gold", str(tmp_path / "gold"), "--config", "x={bad"])
    assert code == 1
    assert "--config x: invalid JSON" in capsys.readouterr().err


def _grid_scores(tmp_path: Path, seed: int = 3) -> Path:
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = [(f"p{p}", f"r{r}", float(rng.random())) for p in range(6) for r in range(6)]
    return _scores_csv(tmp_path / "scores.csv", rows)


def _assign(tmp_path: Path, scores: Path, name: str, *extra: str) -> pd.DataFrame:
    output = tmp_path / f"{name}.csv"
    code = main(
        [
            "assign",
            "--scores",
            str(scores),
            "--reviewers-per-paper",
            "2",
            "--min-papers",
            "1",
            "--max-papers",
            "3",
            "--output",
            str(output),
            *extra,
        ]
    )
    assert code == 0
    return pd.read_csv(output)


def test_assign_fairness_raises_the_worst_paper(tmp_path, capsys):
    scores = _grid_scores(tmp_path)
    total = _assign(tmp_path, scores, "total")
    fair = _assign(tmp_path, scores, "fair", "--fairness")
    worst = lambda frame: frame.groupby("paper_id")["score"].sum().min()  # noqa: E731
    assert worst(fair) >= worst(total) - 1e-9
    assert fair["score"].sum() <= total["score"].sum() + 1e-9


def test_fairness_lifts_the_paper_that_the_best_total_leaves_behind(tmp_path, capsys):
    """Max-sum pairs p1-r1 (1.0) with p2-r2 (0.0): total 1.0, weakest paper 0.0. Max-min
    fairness pairs p1-r2 (0.5) with p2-r1 (0.4): total 0.9, weakest paper 0.4."""
    scores = _scores_csv(
        tmp_path / "scores.csv",
        [("p1", "r1", 1.0), ("p1", "r2", 0.5), ("p2", "r1", 0.4), ("p2", "r2", 0.0)],
    )
    runs = {}
    for name, extra in (("total", []), ("fair", ["--fairness"])):
        output = tmp_path / f"{name}.csv"
        code = main(
            [
                "assign", "--scores", str(scores), "--reviewers-per-paper", "1",
                "--max-papers", "1", "--output", str(output), *extra,
            ]
        )  # fmt: skip
        printed = capsys.readouterr()
        assert code == 0, printed.err
        pairs = set(map(tuple, pd.read_csv(output)[["paper_id", "reviewer_id"]].to_numpy()))
        summary = json.loads((tmp_path / f"{name}.summary.json").read_text(encoding="utf-8"))
        runs[name] = (pairs, summary, printed.out)
    total_pairs, total, total_out = runs["total"]
    fair_pairs, fair, fair_out = runs["fair"]
    assert total_pairs == {("p1", "r1"), ("p2", "r2")}
    assert fair_pairs == {("p1", "r2"), ("p2", "r1")}
    assert total["min_paper_mean_score"] == pytest.approx(0.0)
    assert fair["min_paper_mean_score"] == pytest.approx(0.4)
    assert fair["min_paper_mean_score"] > total["min_paper_mean_score"]
    assert fair["objective"] == pytest.approx(0.9) and total["objective"] == pytest.approx(1.0)
    assert fair["parameters"]["fairness_keep"] == 1.0 and fair["solver"] == "ilp"
    assert fair["solver_parameters"]["min_paper_score_bound"] == pytest.approx(0.4)
    assert "min 0.4000" in fair_out and "min 0.0000" in total_out


def test_assign_institution_attribute_and_bids(tmp_path, capsys):
    scores = _grid_scores(tmp_path)
    reviewers = tmp_path / "reviewers.csv"
    reviewers.write_text(
        "id,name,email,affiliation,seniority\n"
        + "".join(
            f"r{r},R{r},r{r}@u{r % 2}.edu,Uni {r % 2},{'senior' if r == 5 else 'junior'}\n"
            for r in range(6)
        ),
        encoding="utf-8",
    )
    bids = tmp_path / "bids.csv"
    bids.write_text("paper_id,reviewer_id,bid\np0,r5,Not Willing\n", encoding="utf-8")
    # Reviewer r5 is the only senior one; with max load 3 they cannot serve six papers.
    output = tmp_path / "a.csv"
    code = main(
        [
            "assign",
            "--scores",
            str(scores),
            "--reviewers-per-paper",
            "2",
            "--max-papers",
            "6",
            "--output",
            str(output),
            "--reviewers",
            str(reviewers),
            "--max-per-institution",
            "1",
            "--require-attribute",
            "seniority=senior",
            "--bids",
            str(bids),
        ]
    )
    assert code == 2
    assert "seniority=senior" in capsys.readouterr().err
    frame = _assign(
        tmp_path,
        scores,
        "inst",
        "--reviewers",
        str(reviewers),
        "--max-per-institution",
        "1",
        "--bids",
        str(bids),
    )
    universities = frame["reviewer_id"].str[1:].astype(int) % 2
    assert universities.groupby(frame["paper_id"]).nunique().eq(2).all()
    assert not ((frame["paper_id"] == "p0") & (frame["reviewer_id"] == "r5")).any()


def test_assign_probability_cap_is_reproducible(tmp_path, capsys):
    scores = _grid_scores(tmp_path)
    first = _assign(tmp_path, scores, "q1", "--probability-cap", "0.5", "--seed", "7")
    again = _assign(tmp_path, scores, "q2", "--probability-cap", "0.5", "--seed", "7")
    assert first.equals(again)
    assert first.groupby("paper_id").size().eq(2).all()


def test_score_folds_bids_into_the_score(tiny_venue, tmp_path, capsys):
    archives, submissions = tiny_venue
    common = [
        "score",
        "--archives",
        str(archives),
        "--submissions",
        str(submissions),
        "--method",
        "tfidf",
    ]
    assert main([*common, "--output", str(tmp_path / "plain.csv")]) == 0
    bids = tmp_path / "bids.csv"
    bids.write_text("paper_id,reviewer_id,bid\np0,Bo_Vision1,Very High\n", encoding="utf-8")
    assert main([*common, "--output", str(tmp_path / "bid.csv"), "--bids", str(bids)]) == 0
    plain = pd.read_csv(tmp_path / "plain.csv").set_index(["paper_id", "reviewer_id"])["score"]
    bid = pd.read_csv(tmp_path / "bid.csv").set_index(["paper_id", "reviewer_id"])["score"]
    assert bid[("p0", "Bo_Vision1")] > plain[("p0", "Bo_Vision1")]
    others = bid.drop(("p0", "Bo_Vision1"))
    assert (others == plain.drop(("p0", "Bo_Vision1"))).all()


def test_score_with_every_default_uses_the_default_model_end_to_end(tiny_venue, tmp_path):
    """No scoring flag at all: the one default (``ScoringParams()``: MiniLM, top-3 mean,
    near-duplicate publications once), from a cold embedding cache."""
    from recommender.affinity import ScoringParams

    archives, submissions = tiny_venue
    output = tmp_path / "scores.csv"
    code = main(
        [
            "score",
            "--archives",
            str(archives),
            "--submissions",
            str(submissions),
            "--output",
            str(output),
            "--cache-dir",
            str(tmp_path / "cold-cache"),
        ]
    )
    assert code == 0
    used = json.loads((tmp_path / "scores.config.json").read_text())["affinity"]
    default = ScoringParams()
    assert used["model"] == default.model == "all-MiniLM-L6-v2"
    for field in ("method", "aggregation", "k", "duplicate_threshold"):
        assert used[field] == getattr(default, field), field
    scores = pd.read_csv(output)
    assert len(scores) == 9 and scores["score"].between(-1, 1).all()  # cosines
    best = scores.loc[scores.groupby("paper_id")["score"].idxmax()].set_index("paper_id")
    assert best["reviewer_id"].to_dict() == {
        "p0": "Ada_Graph1",
        "p1": "Bo_Vision1",
        "p2": "Cy_Speech1",
    }


def _score_inputs(archives: Path, submissions: Path) -> list[str]:
    return ["score", "--archives", str(archives), "--submissions", str(submissions)]


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ('{"aggregation": "softmax", "temperature": 1e-300}', "temperature"),
        ('{"tfidf_min_df": 1000000}', "tfidf_min_df"),
        ('{"tfidf_max_df": 1e-320}', "tfidf_max_df"),
        ('{"duplicate_threshold": 2}', "duplicate_threshold"),
        ('{"no_such_field": 1}', "no_such_field"),
    ],
)
def test_score_refuses_parameters_that_would_fail_naming_the_field(
    tiny_venue, tmp_path, capsys, config, field
):
    archives, submissions = tiny_venue
    output = tmp_path / "scores.csv"
    code = main(
        [*_score_inputs(archives, submissions), "--output", str(output), "--config", config]
    )
    err = capsys.readouterr().err
    assert code == 1 and err.startswith(f"error: --config: {field}: "), err
    assert "Traceback" not in err and not output.exists()


def test_score_bids_outside_minus_one_to_one_are_refused_by_line(tiny_venue, tmp_path, capsys):
    archives, submissions = tiny_venue
    bids = tmp_path / "bids.csv"
    bids.write_text("paper_id,reviewer_id,bid\np0,Ada_Graph1,1e308\n", encoding="utf-8")
    code = main(
        [
            *_score_inputs(archives, submissions),
            *("--output", str(tmp_path / "scores.csv"), "--bids", str(bids), "--method", "tfidf"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 1 and "bids.csv:2 [bid]: bid '1e308' is outside -1..1" in err, err
    assert not (tmp_path / "scores.csv").exists()


def test_score_named_configuration_and_explanation_in_words(tiny_venue, tmp_path, capsys):
    archives, submissions = tiny_venue
    code = main(
        [
            *_score_inputs(archives, submissions),
            *("--output", str(tmp_path / "scores.csv"), "--config", "tfidf"),
            *("--explain", "p0", "Ada_Graph1"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    used = json.loads((tmp_path / "scores.config.json").read_text())["affinity"]
    assert (used["method"], used["aggregation"]) == ("tfidf", "mean")
    assert "Score " in out and "of reviewer Ada_Graph1 for paper p0." in out
    assert "Parts: text match +" in out and "Publications behind it:" in out
    assert '"sentence": ' in out  # and the same as JSON
