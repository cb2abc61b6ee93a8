"""The command-line contracts of the assignment modes (randomized runs, re-assignment),
in-process through ``reviewer_recommender.cli.main.main``:

- ``recommender assign ... --perturbation BETA [--probability-cap Q] --seed N --report FILE``
  writes a JSON object with the randomness metrics (``--report`` also with
  ``--probability-cap`` alone);
- ``recommender reassign --live ... --scores ... --withdraw ... [--remove ...]
  --reviewers-per-paper K --max-papers B [--conflicts F] --output new.csv`` keeps every
  untouched live pair, prints the pairs added, and is optimal among the assignments that
  keep them (checked against an independent PuLP model);
- malformed inputs exit 1 naming the file and line, infeasible ones exit 2 with the
  diagnosis; never a traceback.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pulp
import pytest

from reviewer_recommender.cli.main import main

REPORT_KEYS = {
    "quality_ratio",
    "max_probability",
    "avg_max_probability",
    "l2_norm",
    "entropy",
    "support_size",
}


def run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    text = out.getvalue() + err.getvalue()
    assert "Traceback" not in text, text
    assert "internal error:" not in text, text
    return code, out.getvalue(), err.getvalue()


def _scores(path: Path, papers: int, reviewers: int, seed: int, density: float = 1.0) -> Path:
    rng = np.random.default_rng(seed)
    rows = [
        f"p{p},r{r},{rng.random():.4f}"
        for p in range(papers)
        for r in range(reviewers)
        if rng.random() < density or r == p % reviewers
    ]
    path.write_text("paper_id,reviewer_id,score\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


# ---- assign --perturbation / --report ---------------------------------------------------------


def _assign(tmp_path: Path, scores: Path, name: str, *extra: str) -> tuple[int, str, str]:
    return run(
        [
            "assign",
            "--scores",
            str(scores),
            "--reviewers-per-paper",
            "2",
            "--max-papers",
            "3",
            "--output",
            str(tmp_path / f"{name}.csv"),
            *extra,
        ]
    )


def test_perturbation_report_has_the_metrics_and_is_reproducible(tmp_path: Path) -> None:
    scores = _scores(tmp_path / "scores.csv", 12, 10, seed=1)
    common = ["--perturbation", "0.3", "--seed", "11"]
    code, out, _ = _assign(tmp_path, scores, "a", *common, "--report", str(tmp_path / "a.json"))
    assert code == 0
    assert "randomness: expected objective" in out
    report = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert set(report) >= REPORT_KEYS
    assert set(report["deterministic"]) >= REPORT_KEYS
    assert report["solver"] == "perturbed" and report["seed"] == 11
    assert report["perturbation"] == 0.3 and report["probability_cap"] == 1.0
    # non-negative scores, no cap: at least 1 - beta of the optimum
    assert 0.7 - 1e-9 <= report["quality_ratio"] <= 1 + 1e-9
    assert 0 < report["max_probability"] <= 1
    assert report["support_size"] >= report["deterministic"]["support_size"] == 24
    assert report["deterministic"]["entropy"] == 0.0
    assert report["entropy"] > 0
    summary = json.loads((tmp_path / "a.summary.json").read_text(encoding="utf-8"))
    assert summary["randomness"]["quality_ratio"] == report["quality_ratio"]
    assert summary["objective"] == report["sample_objective"]
    code, _, _ = _assign(tmp_path, scores, "b", *common, "--report", str(tmp_path / "b.json"))
    assert code == 0
    first = pd.read_csv(tmp_path / "a.csv")
    again = pd.read_csv(tmp_path / "b.csv")
    assert first.equals(again)
    assert first.groupby("paper_id").size().eq(2).all()
    assert first.groupby("reviewer_id").size().le(3).all()


def test_report_with_a_probability_cap_alone_and_with_both(tmp_path: Path) -> None:
    scores = _scores(tmp_path / "scores.csv", 12, 10, seed=2)
    code, _, _ = _assign(
        tmp_path, scores, "q", "--probability-cap", "0.5", "--seed", "1", "--report",
        str(tmp_path / "q.json"),
    )  # fmt: skip
    assert code == 0
    report = json.loads((tmp_path / "q.json").read_text(encoding="utf-8"))
    assert set(report) >= REPORT_KEYS
    assert report["solver"] == "randomized" and report["max_probability"] <= 0.5 + 1e-9
    code, _, _ = _assign(
        tmp_path, scores, "qb", "--probability-cap", "0.5", "--perturbation", "0.5", "--seed",
        "1", "--report", str(tmp_path / "qb.json"),
    )  # fmt: skip
    assert code == 0
    both = json.loads((tmp_path / "qb.json").read_text(encoding="utf-8"))
    assert both["solver"] == "perturbed" and both["probability_cap"] == 0.5
    assert both["max_probability"] <= 0.5 + 1e-9


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--report", "r.json"], "--report: describes a randomized assignment"),
        (["--perturbation", "0"], "--perturbation must be > 0"),
        (["--perturbation", "1.5"], "--perturbation must be <= 1"),
        (["--perturbation", "x"], "--perturbation"),
        (["--perturbation", "0.2", "--solver", "ilp"], "--perturbation: a perturbation needs"),
        (["--perturbation", "0.2", "--fairness"], "cannot enforce fairness"),
        (["--solver", "perturbed"], "--perturbation: the perturbed solver needs"),
    ],
)
def test_randomization_options_refused_in_words(
    tmp_path: Path, extra: list[str], needle: str
) -> None:
    scores = _scores(tmp_path / "scores.csv", 6, 6, seed=3)
    extra = [str(tmp_path / e) if e.endswith(".json") else e for e in extra]
    code, _, err = _assign(tmp_path, scores, "x", *extra)
    assert code == 1
    assert needle in err
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize(
    ("where", "option", "flag"),
    [
        ("validate_options", "max_per_group", "--max-per-institution"),
        ("validate_options", "fairness", "--fairness"),
        ("solve", "probability_cap", "--probability-cap"),
    ],
)
def test_an_option_error_from_matching_exits_1_naming_the_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, option: str, flag: str
) -> None:
    """matching's validation (or a solver) refusing an option is a bad option (exit 1, the
    flag named), not an internal error (exit 3): there is one OptionError."""
    import matching

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise matching.OptionError(option, "cannot act on these reviewers")

    monkeypatch.setattr(matching, where, refuse)
    scores = _scores(tmp_path / "scores.csv", 4, 4, seed=5)
    code, _, err = _assign(tmp_path, scores, "x")
    assert code == 1, err
    assert f"error: {flag}: cannot act on these reviewers" in err
    assert not (tmp_path / "x.csv").exists()


def test_the_solver_flag_offers_the_solvers_matching_knows() -> None:
    from matching.validate import SOLVER_NAMES
    from reviewer_recommender.cli.main import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a.choices, dict))
    assert isinstance(commands.choices, dict)
    solver = next(a for a in commands.choices["assign"]._actions if a.dest == "solver")
    assert tuple(solver.choices or ()) == SOLVER_NAMES


def test_infeasible_under_the_cap_exits_2(tmp_path: Path) -> None:
    # 3 papers x 3 reviewers, 2 each: under a cap of 0.6 a paper reaches only 1.8 reviewers
    scores = _scores(tmp_path / "scores.csv", 3, 3, seed=4)
    code, _, err = run(
        [
            "assign", "--scores", str(scores), "--reviewers-per-paper", "2", "--max-papers",
            "2", "--perturbation", "0.1", "--probability-cap", "0.6", "--output",
            str(tmp_path / "o.csv"),
        ]
    )  # fmt: skip
    assert code == 2
    assert "probability cap" in err


# ---- reassign ---------------------------------------------------------------------------------


def _live(tmp_path: Path, scores: Path, k: int = 2, b: int = 3) -> Path:
    output = tmp_path / "live.csv"
    code, _, _ = run(
        [
            "assign", "--scores", str(scores), "--reviewers-per-paper", str(k), "--max-papers",
            str(b), "--output", str(output),
        ]
    )  # fmt: skip
    assert code == 0
    return output


def _reassign(tmp_path: Path, *args: str, k: int = 2, b: int = 3) -> tuple[int, str, str]:
    return run(
        [
            "reassign",
            "--reviewers-per-paper",
            str(k),
            "--max-papers",
            str(b),
            "--output",
            str(tmp_path / "new.csv"),
            *args,
        ]
    )


def _pairs(path: Path) -> set[tuple[str, str]]:
    frame = pd.read_csv(path, dtype=str)
    return set(zip(frame["paper_id"], frame["reviewer_id"], strict=True))


def _independent_best(
    scores: Path,
    live: set[tuple[str, str]],
    forbidden: set[tuple[str, str]],
    withdrawn: set[str],
    k: int,
    b: int,
) -> tuple[int, float]:
    """PuLP, pair by pair: the most live pairs kept, then the best total score."""
    table = pd.read_csv(scores, dtype={"paper_id": str, "reviewer_id": str})
    table = table[~table["reviewer_id"].isin(withdrawn)]
    table = table[
        [
            (p, r) not in forbidden
            for p, r in zip(table["paper_id"], table["reviewer_id"], strict=True)
        ]
    ]
    pairs = list(zip(table["paper_id"], table["reviewer_id"], table["score"], strict=True))
    papers = sorted(set(pd.read_csv(scores, dtype=str)["paper_id"]))

    def solve(objective: str, at_least: int | None) -> tuple[int, float]:
        model = pulp.LpProblem("reassign", pulp.LpMaximize)
        x = {(p, r): pulp.LpVariable(f"x_{p}_{r}", cat="Binary") for p, r, _ in pairs}
        kept = pulp.lpSum(x[(p, r)] for p, r, _ in pairs if (p, r) in live)
        score = pulp.lpSum(s * x[(p, r)] for p, r, s in pairs)
        model += kept if objective == "kept" else score
        for paper in papers:
            model += pulp.lpSum(x[(p, r)] for p, r, _ in pairs if p == paper) == k
        for reviewer in {r for _, r, _ in pairs}:
            model += pulp.lpSum(x[(p, r)] for p, r, _ in pairs if r == reviewer) <= b
        if at_least is not None:
            model += kept >= at_least
        assert pulp.LpStatus[model.solve(pulp.PULP_CBC_CMD(msg=False))] == "Optimal"
        chosen = [(p, r, s) for p, r, s in pairs if (x[(p, r)].value() or 0) > 0.5]
        return sum((p, r) in live for p, r, _ in chosen), sum(s for _, _, s in chosen)

    most, _ = solve("kept", None)
    return most, solve("score", most)[1]


def test_reassign_keeps_untouched_pairs_and_fills_only_vacated_slots(tmp_path: Path) -> None:
    scores = _scores(tmp_path / "scores.csv", 12, 10, seed=5)
    live_path = _live(tmp_path, scores)
    live = _pairs(live_path)
    (tmp_path / "withdraw.txt").write_text("r1\n~r4\n", encoding="utf-8")
    removed_pair = next(iter(sorted(p for p in live if p[1] not in ("r1", "r4"))))
    (tmp_path / "remove.csv").write_text(
        f"paper_id,reviewer_id\n{removed_pair[0]},{removed_pair[1]}\n", encoding="utf-8"
    )
    code, out, err = _reassign(
        tmp_path,
        "--live", str(live_path), "--scores", str(scores), "--withdraw",
        str(tmp_path / "withdraw.txt"), "--remove", str(tmp_path / "remove.csv"),
    )  # fmt: skip
    assert code == 0, err
    new = _pairs(tmp_path / "new.csv")
    gone = {p for p in live if p[1] in ("r1", "r4")} | {removed_pair}
    untouched = live - gone
    assert untouched <= new
    added = new - live
    assert len(added) == len(gone)  # exactly the vacated slots
    assert not any(r in ("r1", "r4") for _, r in new)
    assert removed_pair not in new
    frame = pd.read_csv(tmp_path / "new.csv", dtype={"paper_id": str, "reviewer_id": str})
    assert frame.groupby("paper_id").size().eq(2).all()
    assert frame.groupby("reviewer_id").size().le(3).all()
    # the pairs added are printed, as CSV rows
    for paper_id, reviewer_id in added:
        assert f"{paper_id},{reviewer_id}," in out
    assert f"added {len(added)}" in out
    changes = pd.read_csv(tmp_path / "new.changes.csv", dtype=str)
    assert set(changes.loc[changes["change"] == "removed", "reason"]) == {"withdrawn", "removed"}
    summary = json.loads((tmp_path / "new.summary.json").read_text(encoding="utf-8"))
    assert summary["stage"] == "fill" and summary["kept"] == len(untouched)
    # optimal among the assignments that keep them: an independent PuLP model agrees
    most, best = _independent_best(scores, live, {removed_pair}, {"r1", "r4"}, 2, 3)
    assert most == len(untouched)
    assert summary["objective"] == pytest.approx(best, abs=1e-6)


def test_reassign_moves_the_fewest_pairs_when_it_must(tmp_path: Path) -> None:
    """Tight loads and sparse candidates: filling some vacated slot needs moves."""
    checked = 0
    for seed in range(40):
        folder = tmp_path / f"s{seed}"
        folder.mkdir()
        scores = _scores(folder / "scores.csv", 8, 7, seed=seed, density=0.35)
        code, _, err = run(
            [
                "assign", "--scores", str(scores), "--reviewers-per-paper", "2",
                "--max-papers", "3", "--output", str(folder / "live.csv"),
            ]
        )  # fmt: skip
        if code == 2:  # this draw has no assignment to start from
            continue
        assert code == 0, err
        live = _pairs(folder / "live.csv")
        (folder / "withdraw.txt").write_text("r0\n", encoding="utf-8")
        code, _, err = run(
            [
                "reassign", "--live", str(folder / "live.csv"), "--scores", str(scores),
                "--withdraw", str(folder / "withdraw.txt"), "--reviewers-per-paper", "2",
                "--max-papers", "3", "--output", str(folder / "new.csv"),
            ]
        )  # fmt: skip
        if code == 2:
            assert "infeasible" in err
            continue
        assert code == 0, err
        summary = json.loads((folder / "new.summary.json").read_text(encoding="utf-8"))
        if summary["stage"] != "moves":
            continue
        most, best = _independent_best(scores, live, set(), {"r0"}, 2, 3)
        assert summary["kept"] == most
        assert summary["objective"] == pytest.approx(best, abs=1e-6)
        assert summary["removed_by_reason"]["moved"] > 0
        checked += 1
    assert checked >= 1


def test_reassign_honours_conflicts_and_pins(tmp_path: Path) -> None:
    scores = _scores(tmp_path / "scores.csv", 10, 8, seed=8)
    live_path = _live(tmp_path, scores)
    live = sorted(_pairs(live_path))
    conflicted = next(p for p in live if p[1] != "r2")
    free_pair = next(
        (f"p{p}", f"r{r}")
        for p in range(10)
        for r in range(3, 8)
        if (f"p{p}", f"r{r}") not in set(live)
    )
    (tmp_path / "constraints.csv").write_text(
        "paper_id,reviewer_id,value\n"
        f"{conflicted[0]},{conflicted[1]},-1\n{free_pair[0]},{free_pair[1]},1\n",
        encoding="utf-8",
    )
    (tmp_path / "w.txt").write_text("r2\n", encoding="utf-8")
    code, _, err = _reassign(
        tmp_path,
        "--live", str(live_path), "--scores", str(scores), "--withdraw", str(tmp_path / "w.txt"),
        "--conflicts", str(tmp_path / "constraints.csv"),
    )  # fmt: skip
    assert code == 0, err
    assert "is a conflict or a Not Willing bid now" in err
    new = _pairs(tmp_path / "new.csv")
    assert conflicted not in new and free_pair in new
    changes = pd.read_csv(tmp_path / "new.changes.csv", dtype=str)
    row = changes[
        (changes["paper_id"] == conflicted[0]) & (changes["reviewer_id"] == conflicted[1])
    ]
    assert list(row["reason"]) == ["conflict"]


def test_reassign_infeasible_exits_2_with_the_diagnosis(tmp_path: Path) -> None:
    scores = _scores(tmp_path / "scores.csv", 6, 4, seed=9)
    live_path = _live(tmp_path, scores, k=2, b=3)
    (tmp_path / "w.txt").write_text("r0\nr1\n", encoding="utf-8")
    code, _, err = _reassign(
        tmp_path, "--live", str(live_path), "--scores", str(scores), "--withdraw",
        str(tmp_path / "w.txt"),
    )  # fmt: skip
    assert code == 2
    assert "infeasible:" in err and "capacity" in err
    assert not (tmp_path / "new.csv").exists()


MALFORMED = {
    "live empty": ("live", b"", "live.csv: the file is empty"),
    "live header only": ("live", b"paper_id,reviewer_id,score\n", "no (paper, reviewer) pair"),
    "live bad score": ("live", b"paper_id,reviewer_id,score\np0,r1,high\n", "live.csv:2 [score]"),
    "live short row": ("live", b"paper_id,reviewer_id\np0,r1\np1\n", "live.csv:3"),
    "live latin-1": ("live", "paper_id,reviewer_id\np\xe9,r1\n".encode("latin-1"), "live.csv:2"),
    "live NUL": ("live", b"paper_id,reviewer_id\np0\x00,r1\n", "live.csv:2 [paper_id]"),
    "withdraw empty": ("withdraw", b"\n\n", "withdraw.txt: the file is empty"),
    "withdraw header only": ("withdraw", b"reviewer_id\n", "no reviewer id"),
    "withdraw utf-16": ("withdraw", "r1\n".encode("utf-16"), "UTF-16"),
    "remove one column": ("remove", b"paper_id,reviewer_id\np0\n", "remove.csv:2"),
    "remove empty id": ("remove", b"paper_id,reviewer_id\np0,\n", "remove.csv:2 [reviewer_id]"),
    "remove missing column": ("remove", b"paper,who\np0,r1\n", "remove.csv:1 [reviewer_id]"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_reassign_malformed_inputs_exit_1_naming_the_line(tmp_path: Path, case: str) -> None:
    scores = _scores(tmp_path / "scores.csv", 6, 6, seed=10)
    live_path = _live(tmp_path, scores)
    files = {
        "live": live_path,
        "withdraw": tmp_path / "withdraw.txt",
        "remove": tmp_path / "remove.csv",
    }
    files["withdraw"].write_text("r1\n", encoding="utf-8")
    files["remove"].write_text("paper_id,reviewer_id\np0,r0\n", encoding="utf-8")
    which, content, needle = MALFORMED[case]
    bad = tmp_path / f"{which}.csv" if which != "withdraw" else files["withdraw"]
    bad.write_bytes(content)
    files[which] = bad
    code, _, err = _reassign(
        tmp_path, "--live", str(files["live"]), "--scores", str(scores), "--withdraw",
        str(files["withdraw"]), "--remove", str(files["remove"]),
    )  # fmt: skip
    assert code == 1, err
    assert needle in err, err
    assert not (tmp_path / "new.csv").exists()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ([], "nothing to re-assign"),
        (["--withdraw", "missing.txt"], "no such file"),
        (["--withdraw", "w.txt", "--max-papers", "-1"], "--max-papers must be >= 0"),
        (["--withdraw", "w.txt", "--bid-weight", "1"], "--bid-weight: applies to --bids"),
        (["--withdraw", "w.txt", "--solver", "flow"], "unrecognized arguments"),
    ],
)
def test_reassign_bad_options_exit_1(tmp_path: Path, args: list[str], needle: str) -> None:
    scores = _scores(tmp_path / "scores.csv", 6, 6, seed=11)
    live_path = _live(tmp_path, scores)
    (tmp_path / "w.txt").write_text("r1\n", encoding="utf-8")
    args = [str(tmp_path / a) if a.endswith(".txt") else a for a in args]
    code, _, err = run(
        ["reassign", "--live", str(live_path), "--scores", str(scores), "--output",
         str(tmp_path / "new.csv"), *args]
    )  # fmt: skip
    assert code == 1
    assert needle in err


def test_reassign_warns_about_ids_it_cannot_use_and_strict_refuses(tmp_path: Path) -> None:
    scores = _scores(tmp_path / "scores.csv", 6, 6, seed=12)
    live_path = _live(tmp_path, scores)
    (tmp_path / "w.txt").write_text("r1\nnobody\n", encoding="utf-8")
    (tmp_path / "rm.csv").write_text("paper_id,reviewer_id\np0,r5\np0,r4\n", encoding="utf-8")
    live = _pairs(live_path)
    args = [
        "--live", str(live_path), "--scores", str(scores), "--withdraw", str(tmp_path / "w.txt"),
        "--remove", str(tmp_path / "rm.csv"),
    ]  # fmt: skip
    code, _, err = _reassign(tmp_path, *args)
    assert code == 0, err
    assert "w.txt:2: reviewer 'nobody' is neither in the live assignment" in err
    if ("p0", "r5") not in live:
        assert "rm.csv:2: (p0, r5) is not a live pair" in err
    assert ("p0", "r5") not in _pairs(tmp_path / "new.csv")
    code, _, err = _reassign(tmp_path, *args, "--strict")
    assert code == 1 and "nobody" in err
