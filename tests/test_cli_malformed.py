"""A corpus of malformed inputs and options: no command prints a traceback, each exits with
the documented code (1 bad input, 2 no assignment) and names what is wrong; none reaches the
internal-error guard (exit 3)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
from pathlib import Path

import pytest

from reviewer_recommender.cli.main import main

GRID = "paper_id,reviewer_id,score\n" + "".join(
    f"p{p},r{r},{(p * 5 + r * 3) % 7 / 7:.4f}\n" for p in range(4) for r in range(5)
)


def run(args: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    text = out.getvalue() + err.getvalue()
    assert "Traceback" not in text, text
    assert "internal error:" not in text, text
    return code, err.getvalue()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "scores.csv").write_text(GRID, encoding="utf-8")
    (tmp_path / "reviewers.csv").write_text(
        "id,name,email,affiliation\n" + "".join(f"r{r},R {r},,\n" for r in range(5)),
        encoding="utf-8",
    )
    return tmp_path


SCORES_FILES: dict[str, tuple[bytes, str]] = {
    "empty": (b"", "empty"),
    "header only": (b"paper_id,reviewer_id,score\n", "no score rows"),
    "BOM header only": ("\ufeffpaper_id,reviewer_id,score\r\n".encode(), "no score rows"),
    "blank lines only": (b"\n\n\n", "empty"),
    "latin-1": ("paper_id,reviewer_id,score\np\xe9,r1,1\n".encode("latin-1"), ":2"),
    "utf-16": ("paper_id,reviewer_id,score\np1,r1,1\n".encode("utf-16"), "UTF-16"),
    "ragged": (b"paper_id,reviewer_id,score\np1,r1,1\np1,r2,1,9\n", ":3"),
    "missing column": (b"paper_id,reviewer_id,affinity_x\np1,r1,1\n", "score"),
    "not a number": (b"paper_id,reviewer_id,score\np1,r1,0.5\np1,r2,high\n", ":3"),
    "nan": (b"paper_id,reviewer_id,score\np1,r1,nan\n", ":2"),
    "inf": (b"paper_id,reviewer_id,score\np1,r1,-inf\n", ":2"),
    "1e308": (b"paper_id,reviewer_id,score\np1,r1,1e308\np1,r2,1\n", ":2"),
    "duplicate pair": (b"paper_id,reviewer_id,score\np1,r1,1\np1,~r1,2\n", ":3"),
    "empty id": (b"paper_id,reviewer_id,score\np1,,1\n", "reviewer"),
    "unbalanced quote": (b'paper_id,reviewer_id,score\n"p1,r1,0.5\n', "scores.csv"),
    "two columns": (b"p1,r1\np2,r2\n", ":1"),
    "NUL bytes": (b"paper_id,reviewer_id,score\np1\x00,r1,1\n", ":2 [paper_id]: control character"),
    "short row": (b"paper_id,reviewer_id,score\np1,r1,1\np2\n", ":3"),
    # every row wider than the header: pandas would take the extra leading field as an index
    # and shift the columns (the reviewer read as the paper, the score as the reviewer)
    "every row wider than the header": (
        b"paper_id,reviewer_id,score\np1,r1,0.5,x\np1,r2,0.4,y\n",
        ":2: row has more fields than the 3 the header names",
    ),
}


@pytest.mark.parametrize("case", sorted(SCORES_FILES))
def test_malformed_scores_files(folder: Path, case: str) -> None:
    content, needle = SCORES_FILES[case]
    path = folder / "bad" / "scores.csv"
    path.parent.mkdir()
    path.write_bytes(content)
    output = folder / "out.csv"
    code, err = run(["assign", "--scores", str(path), "--output", str(output)])
    assert code == 1, err
    assert "scores.csv" in err and needle in err, err
    assert not output.exists()


# (file name, content, options, exit code, text expected on stderr)
SIDE_FILES: list[tuple[str, str, str | None, list[str], int, str]] = [
    (
        "conflicts only",
        "constraints.csv",
        "paper_id,reviewer_id,value\np0,r0,-1\np1,r1,-1\n",
        ["--conflicts"],
        0,
        "",
    ),
    ("header only", "constraints.csv", "paper_id,reviewer_id,value\n", ["--conflicts"], 0, ""),
    (
        "empty constraints",
        "constraints.csv",
        "",
        ["--conflicts"],
        1,
        "constraints.csv: the file is empty",
    ),
    ("pins only", "constraints.csv", "p0,r4,1\np1,r4,1\n", ["--conflicts"], 0, ""),
    (
        "BOM constraints",
        "constraints.csv",
        "\ufeffpaper_id,reviewer_id,value\np0,~r0,-1\n",
        ["--conflicts"],
        0,
        "",
    ),
    (
        "unknown conflict id",
        "constraints.csv",
        "paper_id,reviewer_id,value\np0,r0,-1\np0,zz,-1\n",
        ["--conflicts"],
        0,
        "constraints.csv:3 [reviewer_id]: unknown reviewer 'zz'",
    ),
    (
        "unknown pin id",
        "constraints.csv",
        "paper_id,reviewer_id,value\npp,r0,1\n",
        ["--conflicts"],
        1,
        "constraints.csv:2 [paper_id]: unknown paper 'pp'",
    ),
    (
        "pin and conflict",
        "constraints.csv",
        "p0,r0,1\np0,r0,-1\n",
        ["--conflicts"],
        1,
        "constraints.csv:2",
    ),
    ("bad value", "constraints.csv", "p0,r0,2\n", ["--conflicts"], 1, "constraints.csv:1 [value]"),
    ("two columns", "constraints.csv", "p0,r0\n", ["--conflicts"], 1, "constraints.csv:1"),
    (
        "forced over demand",
        "constraints.csv",
        "p0,r0,1\np0,r1,1\np0,r2,1\np0,r3,1\n",
        ["--conflicts"],
        2,
        "infeasible",
    ),
    ("unknown bid label", "bids.csv", "p0,r0,Eager\n", ["--bids"], 1, "bids.csv:1 [bid]"),
    (
        "unknown bid id",
        "bids.csv",
        "paper_id,reviewer_id,bid\np7,r0,High\n",
        ["--bids"],
        0,
        "bids.csv:2 [paper_id]: unknown paper 'p7'",
    ),
    ("not willing bid", "bids.csv", "p0,r4,Not Willing\n", ["--bids"], 0, ""),
    (
        "negative demand",
        "demand.csv",
        "paper_id,demand\np0,-1\n",
        ["--demand"],
        1,
        "demand.csv:2 [demand]",
    ),
    ("fractional demand", "demand.csv", "p0,1.5\n", ["--demand"], 1, "demand.csv:1 [demand]"),
    ("huge demand", "demand.csv", "p0,1000000000\n", ["--demand"], 1, "demand.csv:1 [demand]"),
    (
        "unknown demand paper",
        "demand.csv",
        "p9,1\n",
        ["--demand"],
        0,
        "demand.csv:1 [paper_id]: unknown paper 'p9'",
    ),
    ("demand too high", "demand.csv", "p0,9\n", ["--demand"], 2, "infeasible"),
    (
        "letters max",
        "max.csv",
        "reviewer_id,max\nr0,many\n",
        ["--custom-max-papers"],
        1,
        "max.csv:2 [max]",
    ),
    (
        "unknown max reviewer",
        "max.csv",
        "rx,1\n",
        ["--custom-max-papers"],
        0,
        "max.csv:1 [reviewer_id]: unknown reviewer 'rx'",
    ),
    ("missing file", "nothere.csv", None, ["--conflicts"], 1, "no such file"),
]


@pytest.mark.parametrize(
    ("name", "content", "option", "code", "needle"),
    [case[1:] for case in SIDE_FILES],
    ids=[case[0] for case in SIDE_FILES],
)
def test_malformed_side_files(
    folder: Path, name: str, content: str | None, option: list[str], code: int, needle: str
) -> None:
    path = folder / name
    if content is not None:
        path.write_text(content, encoding="utf-8")
    output = folder / "out.csv"
    got, err = run(
        [
            "assign",
            "--scores",
            str(folder / "scores.csv"),
            "--output",
            str(output),
            "--reviewers-per-paper",
            "2",
            "--max-papers",
            "3",
            *option,
            str(path),
        ]
    )
    assert got == code, err
    assert needle in err, err
    assert output.exists() == (code == 0)


OPTIONS: list[tuple[list[str], int, str]] = [
    (["--reviewers-per-paper", "-1"], 1, "--reviewers-per-paper must be >= 0"),
    (["--max-papers", "-5"], 1, "--max-papers must be >= 0"),
    (["--min-papers", "4", "--max-papers", "3"], 1, "--min-papers"),
    (["--reviewers-per-paper", "x"], 1, "invalid int value"),
    (["--time-limit", "0"], 1, "--time-limit must be > 0"),
    # a time limit cannot act on an exact min-cost flow (auto picks one here): refused
    (["--time-limit", "5"], 1, "--time-limit: these options solve by a min-cost flow"),
    (["--solver", "flow", "--time-limit", "5"], 1, "cannot be stopped early"),
    (["--perturbation", "0.2", "--time-limit", "5"], 1, "perturbed maximization (a min-cost"),
    (["--fairness", "2"], 1, "--fairness must be <= 1"),
    (["--probability-cap", "0"], 1, "--probability-cap must be > 0"),
    (["--probability-cap", "0.5", "--solver", "flow"], 1, "--probability-cap"),
    (["--solver", "flow", "--fairness"], 1, "the min-cost flow solver cannot enforce fairness"),
    (["--solver", "randomized", "--fairness"], 1, "cannot enforce fairness"),
    (["--probability-cap", "0.5", "--fairness"], 1, "cannot enforce fairness"),
    (["--ilp-backend", "cbc"], 1, "--ilp-backend: applies to the ILP solver"),
    (["--ilp-backend", "highs"], 0, ""),
    (["--solver", "magic"], 1, "invalid choice"),
    (["--max-per-institution", "1"], 1, "need(s) --reviewers FILE"),
    (["--require-attribute", "x"], 1, "--require-attribute"),
    (["--group-by", "email-domain"], 1, "--group-by: applies to --max-per-institution"),
    (["--bid-weight", "1"], 1, "--bid-weight: applies to --bids"),
    (["--seed", "-1"], 1, "--seed must be >= 0"),
    (["--alternates", "-1"], 1, "--alternates must be >= 0"),
    (["--detect-conflicts"], 1, "conflict detection needs"),
    (["--nonsense"], 1, "unrecognized arguments"),
    (["--reviewers-per-paper", "6"], 2, "infeasible"),
    (["--max-papers", "1"], 2, "infeasible"),
]


@pytest.mark.parametrize(
    ("options", "code", "needle"), OPTIONS, ids=[" ".join(o[0]) for o in OPTIONS]
)
def test_bad_options(folder: Path, options: list[str], code: int, needle: str) -> None:
    output = folder / "out.csv"
    got, err = run(
        ["assign", "--scores", str(folder / "scores.csv"), "--output", str(output), *options]
    )
    assert got == code, err
    assert needle in err, err
    assert output.exists() == (code == 0)


def test_options_that_cannot_act_are_refused_with_the_reason(folder: Path) -> None:
    base = ["assign", "--scores", str(folder / "scores.csv"), "--output", str(folder / "o.csv")]
    reviewers = ["--reviewers", str(folder / "reviewers.csv")]
    code, err = run([*base, *reviewers, "--max-per-institution", "1"])
    assert code == 1 and "no reviewer in" in err and "affiliation" in err, err
    code, err = run([*base, *reviewers, "--require-attribute", "seniority=senior"])
    assert code == 1 and "no reviewer in" in err and "seniority" in err, err
    code, err = run([*base, *reviewers])
    assert code == 1 and "--reviewers: used only by" in err, err


def test_output_that_cannot_be_written(folder: Path) -> None:
    blocker = folder / "file"
    blocker.write_text("x")
    code, err = run(
        ["assign", "--scores", str(folder / "scores.csv"), "--output", str(blocker / "a.csv")]
    )
    assert code == 1 and "cannot write" in err, err
    # a folder as the output is named as such (not the temporary file beside it)
    code, err = run(["assign", "--scores", str(folder / "scores.csv"), "--output", str(folder)])
    assert code == 1 and f"cannot write {folder}: Is a directory" in err, err


def test_outputs_get_the_permissions_of_a_plain_write(folder: Path) -> None:
    """Outputs are written atomically through a temporary file; they must not keep its
    owner-only mode (a co-chair on the same server could not read them)."""
    previous = os.umask(0o022)
    try:
        code, err = run(
            [
                "assign",
                "--scores",
                str(folder / "scores.csv"),
                "--output",
                str(folder / "new" / "a.csv"),
                "--reviewers-per-paper",
                "2",
            ]
        )
        assert code == 0, err
    finally:
        os.umask(previous)
    for written in (folder / "new" / "a.csv", folder / "new" / "a.summary.json"):
        assert stat.S_IMODE(written.stat().st_mode) == 0o644, written


def test_time_limit_without_any_assignment_exits_2(folder: Path, monkeypatch) -> None:
    import matching
    from matching.solvers import SolverTimeout

    def times_out(*args, **kwargs):
        raise SolverTimeout("HiGHS stopped at its time limit without an integer solution")

    monkeypatch.setattr(matching, "solve", times_out)
    code, err = run(
        [
            "assign",
            "--scores",
            str(folder / "scores.csv"),
            "--output",
            str(folder / "o.csv"),
            "--fairness",
            "--time-limit",
            "0.5",
        ]
    )
    assert code == 2 and "no feasible assignment found in 0.5 s" in err, err


def test_score_and_conflicts_malformed(folder: Path, tmp_path: Path) -> None:
    archives = tmp_path / "archives"
    archives.mkdir()
    (archives / "~R_1.jsonl").write_text(
        json.dumps({"id": "x", "content": {"title": "graphs", "abstract": "graph networks"}})
        + "\n",
        encoding="utf-8",
    )
    submissions = tmp_path / "submissions.json"
    submissions.write_text(
        json.dumps({"p1": {"id": "p1", "content": {"title": "graphs", "abstract": "nets"}}}),
        encoding="utf-8",
    )
    base = ["--archives", str(archives), "--submissions", str(submissions)]
    out = ["--output", str(tmp_path / "s.csv"), "--method", "tfidf"]
    code, err = run(["score", *base, *out, "--explain", "p1", "nobody"])
    assert code == 1 and "unknown reviewer 'nobody'" in err, err
    code, err = run(["score", *base, *out, "--explain", "p404", "R_1"])
    assert code == 1 and "unknown paper 'p404'" in err, err
    code, err = run(["score", *base, *out, "--top-k", "0"])
    assert code == 1
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{", encoding="utf-8")
    code, err = run(["score", "--archives", str(archives), "--submissions", str(bad_json), *out])
    assert code == 1 and "bad.json" in err, err
    code, err = run(
        ["score", "--archives", str(tmp_path / "none"), "--submissions", str(submissions), *out]
    )
    assert code == 1 and "no such file" in err, err
    code, err = run(
        ["conflicts", *base, "--output", str(tmp_path / "c.csv"), "--coauthor-window", "-1"]
    )
    assert code == 1 and "--coauthor-window" in err, err
    code, err = run(
        ["conflicts", *base, "--output", str(tmp_path / "c.csv"), "--coauthor-window", "abc"]
    )
    assert code == 1 and "--coauthor-window" in err, err
    code, err = run(["evaluate", "--gold", str(tmp_path / "nowhere")])
    assert code == 1 and "not a directory" in err, err


def test_no_command_and_help() -> None:
    code, err = run([])
    assert code == 1 and "COMMAND" in err
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["assign", "--help"]) == 0
    assert "--demand" in out.getvalue()


def test_internal_errors_are_one_line_with_exit_3(folder: Path, monkeypatch) -> None:
    import reviewer_recommender.services.assignment

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(reviewer_recommender.services.assignment, "assign", broken)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(
            ["assign", "--scores", str(folder / "scores.csv"), "--output", str(folder / "o.csv")]
        )
    assert code == 3
    assert "Traceback" not in err.getvalue()
    assert err.getvalue().startswith("internal error: RuntimeError: boom")
