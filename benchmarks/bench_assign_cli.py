"""End-to-end ``recommender assign`` on dense scores CSVs (every pair a row).

For each size N: a dense N x N scores CSV (N^2 rows, topic-structured scores, 6 significant
digits as ``recommender score`` writes them) and an OpenReview constraints CSV with 1% of all
pairs as conflicts are written to a work folder; then

- ``recommender assign`` runs as a fresh process (interpreter start, imports, read,
  validate, build, solve, write the assignment and its summary JSON): the wall time is the
  figure a chair sees; each run is repeated and the best and median are printed;
- the same steps run in-process, timed one by one (read scores, read constraints, build the
  problem, solve, write), so the share of each is visible;
- the baseline, in the same run: version 0.1's reading and building (``pandas.read_csv``
  with string ids, per-column validation, ``AssignmentProblem.from_pairs``), printed as a
  ratio to the new read + build.

    python benchmarks/bench_assign_cli.py                      # 1000 and 2000
    python benchmarks/bench_assign_cli.py --sizes 1000 --repeat 5 --workdir /tmp/bench
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEMAND, MIN_LOAD, MAX_LOAD, CONFLICT_RATE = 3, 1, 6, 0.01


def write_dense_venue(folder: Path, n: int, seed: int = 0) -> tuple[Path, Path]:
    """``scores.csv`` (header, N^2 rows) and ``constraints.csv`` (1% conflicts)."""
    rng = np.random.default_rng(seed)
    topics = 20
    papers = rng.dirichlet(np.full(topics, 0.3), size=n)
    reviewers = rng.dirichlet(np.full(topics, 0.3), size=n)
    papers /= np.linalg.norm(papers, axis=1, keepdims=True)
    reviewers /= np.linalg.norm(reviewers, axis=1, keepdims=True)
    scores = np.clip(papers @ reviewers.T + rng.normal(0, 0.05, (n, n)), 0, 1)
    paper_ids = np.array([f"paper{i:05d}" for i in range(n)], dtype=object)
    reviewer_ids = np.array([f"~Reviewer_{i:05d}1" for i in range(n)], dtype=object)
    scores_path = folder / f"scores_{n}.csv"
    with scores_path.open("w", encoding="utf-8", newline="") as stream:
        stream.write("paper_id,reviewer_id,score\n")
        for start in range(0, n, 200):
            block = scores[start : start + 200]
            pd.DataFrame(
                {
                    "paper_id": np.repeat(paper_ids[start : start + 200], n),
                    "reviewer_id": np.tile(reviewer_ids, len(block)),
                    "score": block.reshape(-1),
                }
            ).to_csv(stream, index=False, header=False, float_format="%.6g")
    count = round(CONFLICT_RATE * n * n)
    keys = np.unique(rng.integers(0, n * n, size=count))
    constraints_path = folder / f"constraints_{n}.csv"
    pd.DataFrame(
        {
            "paper_id": paper_ids[keys // n],
            "reviewer_id": reviewer_ids[keys % n],
            "value": -1,
        }
    ).to_csv(constraints_path, index=False)
    return scores_path, constraints_path


def cli_command(scores: Path, constraints: Path, output: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "reviewer_recommender.cli.main",
        "assign",
        "--scores",
        str(scores),
        "--conflicts",
        str(constraints),
        "--reviewers-per-paper",
        str(DEMAND),
        "--min-papers",
        str(MIN_LOAD),
        "--max-papers",
        str(MAX_LOAD),
        "--output",
        str(output),
    ]


def time_process(command: list[str], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"recommender assign failed ({done.returncode}):\n{done.stderr}")
    return times


def in_process(scores: Path, constraints: Path, output: Path) -> dict[str, float]:
    """The CLI's steps, timed one by one (same service calls as
    ``reviewer_recommender.cli.assign``)."""
    from recommender.io import read_pair_constraints, read_scores
    from reviewer_recommender.services.assignment import solve_assignment
    from reviewer_recommender.services.exports import beside, csv_text, json_text, write_files
    from reviewer_recommender.services.params import AssignParams
    from reviewer_recommender.services.problem import AssignInputs, Rows, build_problem

    params = AssignParams(reviewers_per_paper=DEMAND, min_load=MIN_LOAD, max_load=MAX_LOAD)
    marks = [time.perf_counter()]
    table = read_scores(scores)
    marks.append(time.perf_counter())
    frame = read_pair_constraints(constraints, with_lines=True)
    marks.append(time.perf_counter())
    built = build_problem(
        AssignInputs(scores=table, conflicts=Rows(frame, str(constraints))), params
    )
    marks.append(time.perf_counter())
    assignment = solve_assignment(built.problem, params)
    marks.append(time.perf_counter())
    pairs = assignment.pairs()
    write_files(
        {
            output: csv_text(pairs),
            beside(output, "summary.json"): json_text(assignment.summary() | {"parameters": {}}),
        }
    )
    marks.append(time.perf_counter())
    names = ["read scores", "read constraints", "build", "solve", "write"]
    figures = {name: marks[i + 1] - marks[i] for i, name in enumerate(names)}
    figures["objective"] = assignment.objective
    figures["gap"] = assignment.gap
    figures["pairs"] = built.problem.n_pairs
    return figures


def baseline_read_build(scores: Path, constraints: Path) -> float:
    """Version 0.1's path: string ids, per-column validation, ``from_pairs``."""
    from matching import AssignmentProblem
    from recommender.io import read_pair_constraints

    started = time.perf_counter()
    frame = pd.read_csv(scores, dtype={"paper_id": str, "reviewer_id": str}, encoding="utf-8")
    frame["reviewer_id"] = frame["reviewer_id"].str.lstrip("~")
    values = pd.to_numeric(frame["score"], errors="coerce")
    if (values.isna() | ~values.abs().lt(math.inf)).any():
        raise SystemExit("bad score")
    frame["score"] = values
    if (frame["paper_id"].isna() | frame["reviewer_id"].isna()).any():
        raise SystemExit("blank id")
    if frame.duplicated(["paper_id", "reviewer_id"]).any():
        raise SystemExit("duplicate")
    conflicts = read_pair_constraints(constraints)
    AssignmentProblem.from_pairs(
        frame["paper_id"].to_numpy(),
        frame["reviewer_id"].to_numpy(),
        frame["score"].to_numpy(dtype=np.float64),
        paper_ids=tuple(dict.fromkeys(frame["paper_id"])),
        reviewer_ids=tuple(dict.fromkeys(frame["reviewer_id"])),
        demand=DEMAND,
        min_load=MIN_LOAD,
        max_load=MAX_LOAD,
        conflicts=conflicts[conflicts["value"] == -1][["paper_id", "reviewer_id"]],
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000])
    parser.add_argument("--repeat", type=int, default=3, help="process runs per size")
    parser.add_argument("--workdir", type=Path, default=None, help="where the CSVs go")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.workdir or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        for n in args.sizes:
            scores, constraints = write_dense_venue(folder, n)
            output = folder / f"assignment_{n}.csv"
            wall = time_process(cli_command(scores, constraints, output), args.repeat)
            steps = in_process(scores, constraints, output)
            baseline = baseline_read_build(scores, constraints)
            ours = steps["read scores"] + steps["read constraints"] + steps["build"]
            print(
                f"{n} x {n} ({n * n:,} score rows, {steps['pairs']:,} candidate pairs after "
                f"conflicts): recommender assign wall best {min(wall):.2f} s, median "
                f"{statistics.median(wall):.2f} s over {len(wall)} runs"
            )
            print(
                "  in-process: "
                + ", ".join(
                    f"{name} {steps[name]:.3f} s"
                    for name in ("read scores", "read constraints", "build", "solve", "write")
                )
                + f"; objective {steps['objective']:.4f}, gap {steps['gap']:.1e}"
            )
            print(
                f"  read + validate + build: {ours:.3f} s; version 0.1 path {baseline:.3f} s "
                f"({baseline / ours:.1f}x)"
            )


if __name__ == "__main__":
    main()
