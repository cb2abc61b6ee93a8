"""Matching-engine benchmark: figures printed, baselines compared in the same run.

For each size N (N papers x N reviewers, 3 reviewers per paper, loads in [1, 6], 1% of
all pairs conflicted) a synthetic venue is written as a scores CSV (top-50 candidate
union) and a conflicts CSV; then a fresh subprocess per size reads both, builds the
problem (``AssignmentProblem.from_pairs``) and solves it exactly (``FlowSolver``),
reporting read/build/solve seconds, peak resident memory (``ru_maxrss`` of that
subprocess, so it covers the whole end-to-end run) , objective and gap.

Dense tables (``--dense``, default 1000 and 2000): every (paper, reviewer) pair of an
N x N synthetic venue is a row of the scores CSV, with 3 reviewers per paper and loads in
[1, 10] (the openreview-matcher README's example: ``--num_reviewers 3
--min_papers_default 1 --max_papers_default 10``). A fresh subprocess per size reads the
CSV (pandas, C engine), builds the problem and solves it with ``FlowSolver`` (top
candidates + dual-potential certificate over all pairs), then, in the same process on the
same problem, with the baseline ``FlowSolver(restrict=False)`` (min-cost flow on every
pair, the solver before the certificate); the ratio of the two solve times is printed.
openreview-matcher's MinMax solver (not installable here) is quoted as reported to the
project, for reference only: 44.6 s at 1000^2 and about 390 s at 2000^2, end to end.

Baselines, as ratios: a naive dense PuLP model (one ``LpVariable`` per pair, constraints
by ``lpSum`` over Python comprehensions, HiGHS) and a pair-by-pair OR-Tools graph build
(like OpenReview's default solver) at small sizes, against ``FlowSolver`` on the same
problem. Side-constraint models (fairness, institution limit) run through ``IlpSolver``.

    python benchmarks/bench_matching.py                      # 2k, 10k, 20k + baselines
    python benchmarks/bench_matching.py --sizes 2000 --constrained 1000 --naive 200
    python benchmarks/bench_matching.py --dense 1000 2000 --sizes --naive 0 --constrained 0

``--constrained N`` also runs fairness at the demo's size (211 x 27) with and without the
flow heuristic start of the max-min stage.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.synthetic import (
    make_venue,
    read_conflicts_csv,
    read_scores_csv,
    write_venue_csv,
)
from matching import (
    AssignmentProblem,
    Fairness,
    FlowSolver,
    IlpSolver,
    MaxPerGroup,
)

DEMAND, MIN_LOAD, MAX_LOAD, CONFLICT_RATE, K = 3, 1, 6, 0.01, 50


def child_flow(directory: Path) -> dict[str, float]:
    """End to end from the CSVs in one process; peak memory via ru_maxrss."""
    start = time.perf_counter()
    table = read_scores_csv(directory / "scores.csv")
    conflicts = read_conflicts_csv(directory / "conflicts.csv")
    read_s = time.perf_counter() - start
    start = time.perf_counter()
    problem = AssignmentProblem.from_pairs(
        table["paper_id"].to_numpy(),
        table["reviewer_id"].to_numpy(),
        table["score"].to_numpy(),
        demand=DEMAND,
        min_load=MIN_LOAD,
        max_load=MAX_LOAD,
        conflicts=conflicts,
    )
    build_s = time.perf_counter() - start
    start = time.perf_counter()
    result = FlowSolver().solve(problem)
    solve_s = time.perf_counter() - start
    return {
        "csv_rows": len(table),
        "conflict_rows": len(conflicts),
        "pairs": problem.n_pairs,
        "read_s": read_s,
        "build_s": build_s,
        "solve_s": solve_s,
        "total_s": read_s + build_s + solve_s,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "objective": result.objective,
        "gap": result.gap,
    }


DENSE_DEMAND, DENSE_MIN_LOAD, DENSE_MAX_LOAD = 3, 1, 10
MINMAX_SECONDS = {1000: 44.6, 2000: 390.0}  # as reported to the project, not measured here


def write_dense_csv(n: int, directory: Path) -> Path:
    """Every pair of an n x n synthetic venue as a scores CSV (cached)."""
    path = directory / f"dense_{n}.csv"
    if path.exists():
        return path
    venue = make_venue(n, n, seed=n)
    scores = np.round(np.vstack(list(venue.score_blocks())), 6)
    paper, reviewer = np.divmod(np.arange(n * n), n)
    directory.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(
        {
            "paper_id": np.asarray(venue.paper_ids, dtype=object)[paper],
            "reviewer_id": np.asarray(venue.reviewer_ids, dtype=object)[reviewer],
            "score": scores.reshape(-1),
        }
    ).to_csv(path, index=False)
    return path


def child_dense(path: Path) -> dict[str, Any]:
    """Read, build, solve (certified) and solve again on every pair (baseline)."""
    start = time.perf_counter()
    table = read_scores_csv(path)
    read_s = time.perf_counter() - start
    start = time.perf_counter()
    problem = AssignmentProblem.from_pairs(
        table["paper_id"].to_numpy(),
        table["reviewer_id"].to_numpy(),
        table["score"].to_numpy(),
        demand=DENSE_DEMAND,
        min_load=DENSE_MIN_LOAD,
        max_load=DENSE_MAX_LOAD,
    )
    build_s = time.perf_counter() - start
    start = time.perf_counter()
    result = FlowSolver().solve(problem)
    solve_s = time.perf_counter() - start
    start = time.perf_counter()
    baseline = FlowSolver(restrict=False).solve(problem)
    baseline_s = time.perf_counter() - start
    return {
        "rows": len(table),
        "read_s": read_s,
        "build_s": build_s,
        "solve_s": solve_s,
        "baseline_s": baseline_s,
        "objective": result.objective,
        "baseline_objective": baseline.objective,
        "gap": result.gap,
        "pairs_solved": result.parameters["pairs_solved"],
        "rounds": result.parameters["rounds"],
        "certificate": result.parameters["certificate"],
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run_dense(n: int, work: Path) -> dict[str, Any]:
    path = write_dense_csv(n, work)
    output = subprocess.run(
        [sys.executable, __file__, "--child-dense", str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


def run_size(n: int, work: Path) -> dict[str, float]:
    directory = work / f"venue_{n}"
    start = time.perf_counter()
    if not (directory / "conflicts.csv").exists():
        write_venue_csv(make_venue(n, n, seed=n), directory, k=K, conflict_rate=CONFLICT_RATE)
    generate_s = time.perf_counter() - start
    output = subprocess.run(
        [sys.executable, __file__, "--child", str(directory)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    figures = json.loads(output.strip().splitlines()[-1])
    figures["generate_s"] = generate_s
    return figures


def dense_problem(n: int) -> AssignmentProblem:
    venue = make_venue(n, n, seed=n)
    scores = np.vstack(list(venue.score_blocks()))
    conflicts = np.zeros((n, n), dtype=bool)
    conflict_paper, conflict_reviewer = venue.conflicts(CONFLICT_RATE)
    conflicts[conflict_paper, conflict_reviewer] = True
    return AssignmentProblem.from_dense(
        scores,
        paper_ids=venue.paper_ids,
        reviewer_ids=venue.reviewer_ids,
        demand=DEMAND,
        min_load=MIN_LOAD,
        max_load=MAX_LOAD,
        conflicts=conflicts,
    )


def naive_pulp(problem: AssignmentProblem) -> tuple[float, float]:
    """The textbook model: a variable per pair, rows by comprehension over all pairs."""
    import pulp

    start = time.perf_counter()
    prob = pulp.LpProblem("naive", pulp.LpMaximize)
    x = {
        (int(p), int(r)): prob.add_variable(f"x_{p}_{r}", 0, 1, cat=pulp.LpBinary)
        for p, r in zip(problem.pair_paper, problem.pair_reviewer, strict=True)
    }
    score = {
        (int(p), int(r)): float(s)
        for p, r, s in zip(
            problem.pair_paper, problem.pair_reviewer, problem.pair_score, strict=True
        )
    }
    prob += pulp.lpSum(score[key] * var for key, var in x.items())
    for p in range(problem.n_papers):
        prob += pulp.lpSum(var for (pp, _), var in x.items() if pp == p) == int(problem.demand[p])
    for r in range(problem.n_reviewers):
        row = pulp.lpSum(var for (_, rr), var in x.items() if rr == r)
        prob += row <= int(problem.max_load[r])
        prob += row >= int(problem.min_load[r])
    prob.solve(pulp.HiGHS(msg=False))
    return time.perf_counter() - start, float(pulp.value(prob.objective))


def pair_by_pair_flow(problem: AssignmentProblem) -> float:
    """Graph built one arc per Python call (the OpenReview default's style); seconds."""
    from ortools.graph.python import min_cost_flow

    start = time.perf_counter()
    flow = min_cost_flow.SimpleMinCostFlow()
    n_papers = problem.n_papers
    for p, r, s in zip(
        problem.pair_paper.tolist(),
        problem.pair_reviewer.tolist(),
        problem.pair_score.tolist(),
        strict=True,
    ):
        flow.add_arc_with_capacity_and_unit_cost(p, n_papers + r, 1, -round(s * 1e6))
    return time.perf_counter() - start


def constrained(n: int, time_limit: float) -> list[dict[str, Any]]:
    from matching.candidates import sparse_problem

    venue = make_venue(n, n, seed=n)
    rows = []
    for k in (20,):
        start = time.perf_counter()
        problem = sparse_problem(
            lambda: venue.score_blocks(),
            paper_ids=venue.paper_ids,
            reviewer_ids=venue.reviewer_ids,
            demand=DEMAND,
            min_load=MIN_LOAD,
            max_load=MAX_LOAD,
            k=k,
            conflicts=venue.conflicts(CONFLICT_RATE),
        )
        build_s = time.perf_counter() - start
        institutions = np.random.default_rng(1).integers(0, max(2, n // 10), n)
        exact = FlowSolver().solve(problem)
        rows.append(
            {
                "model": "flow (no side constraint)",
                "n": n,
                "pairs": problem.n_pairs,
                "build_s": build_s,
                "solve_s": exact.solve_seconds,
                "objective": exact.objective,
                "gap": exact.gap,
                "min_paper": _min_paper(exact),
            }
        )
        for label, constraint in (
            ("institution <= 1 per paper", MaxPerGroup(institutions, limit=1)),
            ("fairness (max-min, keep=1)", Fairness()),
        ):
            result = IlpSolver().solve(
                problem.with_side_constraints(constraint), time_limit=time_limit
            )
            rows.append(
                {
                    "model": label,
                    "n": n,
                    "pairs": problem.n_pairs,
                    "build_s": build_s,
                    "solve_s": result.solve_seconds,
                    "objective": result.objective,
                    "gap": result.gap,
                    "min_paper": _min_paper(result),
                    "status": result.parameters.get("status", ""),
                    "min_bound": result.parameters.get("min_paper_score_bound"),
                }
            )
    return rows


def demo_fairness(time_limit: float) -> list[tuple[str, float, float, float, str]]:
    """Fairness at the demo's size (211 papers x 27 reviewers, 3 per paper, loads 23-24):
    the solver as shipped against the same ILP whose max-min stage starts from the
    max-total assignment only (no flow heuristic), as before."""
    import math

    from matching.solvers import ilp

    n_papers, n_reviewers, demand = 211, 27, 3
    venue = make_venue(n_papers, n_reviewers, seed=7, concentration=0.3, noise=0.1)
    problem = AssignmentProblem.from_dense(
        np.vstack(list(venue.score_blocks())),
        paper_ids=venue.paper_ids,
        reviewer_ids=venue.reviewer_ids,
        demand=demand,
        min_load=(n_papers * demand) // n_reviewers,
        max_load=math.ceil(n_papers * demand / n_reviewers),
    ).with_side_constraints(Fairness())
    rows = []
    shipped = ilp.best_min_start
    for label, start in (("flow heuristic start", shipped), ("max-total start only", None)):
        if start is None:
            ilp.best_min_start = lambda model, start, seconds, monitor: start
        try:
            result = IlpSolver().solve(problem, time_limit=time_limit)
        finally:
            ilp.best_min_start = shipped
        rows.append(
            (
                label,
                result.solve_seconds,
                _min_paper(result),
                result.parameters["min_paper_score_bound"],
                result.parameters["fairness_stage_status"],
            )
        )
    return rows


def _min_paper(result) -> float:
    problem = result.problem
    totals = np.bincount(
        problem.pair_paper[result.selected],
        weights=problem.pair_score[result.selected],
        minlength=problem.n_papers,
    )
    return float(totals.min())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[2000, 10000, 20000])
    parser.add_argument("--naive", type=int, default=300, help="size of the naive baselines")
    parser.add_argument(
        "--constrained",
        type=int,
        default=5000,
        help="size of the fairness / institution models (0 to skip)",
    )
    parser.add_argument(
        "--time-limit", type=float, default=280.0, help="ILP time limit per model (s)"
    )
    parser.add_argument("--work", type=Path, default=None, help="where CSVs are cached")
    parser.add_argument(
        "--dense", type=int, nargs="*", default=[1000, 2000], help="dense N x N tables"
    )
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-dense", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child_flow(args.child)))
        return
    if args.child_dense is not None:
        print(json.dumps(child_dense(args.child_dense)))
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="bench_matching_"))

    if args.dense:
        print(
            f"== dense scores tables, end to end from the CSV (demand {DENSE_DEMAND}, loads "
            f"[{DENSE_MIN_LOAD}, {DENSE_MAX_LOAD}]; subprocess per size)"
        )
        print(
            f"{'N':>5} {'rows':>9} {'read s':>7} {'build s':>8} {'solve s':>8} {'total s':>8} "
            f"{'all-pairs solve s':>18} {'solve speed-up':>15} {'pairs solved':>13} "
            f"{'peak MB':>8} {'vs MinMax (quoted)':>19}"
        )
        for n in args.dense:
            f = run_dense(n, work)
            total = f["read_s"] + f["build_s"] + f["solve_s"]
            quoted = MINMAX_SECONDS.get(n)
            versus = f"{quoted / total:.0f}x" if quoted else "-"
            print(
                f"{n:>5} {f['rows']:>9} {f['read_s']:>7.2f} {f['build_s']:>8.2f} "
                f"{f['solve_s']:>8.2f} {total:>8.2f} {f['baseline_s']:>18.2f} "
                f"{f['baseline_s'] / f['solve_s']:>14.1f}x {f['pairs_solved']:>13} "
                f"{f['peak_mb']:>8.0f} {versus:>19}",
                flush=True,
            )
            if abs(f["objective"] - f["baseline_objective"]) > 1e-9 * max(
                1.0, abs(f["baseline_objective"])
            ):
                print(f"   OBJECTIVES DIFFER: {f['objective']} vs {f['baseline_objective']}")
            print(f"   objective {f['objective']:.6f} ({f['certificate']})")

    if args.naive:
        problem = dense_problem(args.naive)
        naive_s, naive_objective = naive_pulp(problem)
        flow = FlowSolver().solve(problem)
        arcs_s = pair_by_pair_flow(problem)
        print(f"== baselines at {args.naive} x {args.naive} dense ({problem.n_pairs} pairs)")
        print(f"naive dense PuLP (build+solve)  {naive_s:8.2f} s  objective {naive_objective:.4f}")
        print(f"pair-by-pair arc adding only    {arcs_s:8.2f} s")
        print(
            f"FlowSolver (build+solve)        {flow.solve_seconds:8.2f} s  objective "
            f"{flow.objective:.4f}  gap {flow.gap:.1e}"
        )
        print(
            f"speed-up vs naive PuLP: {naive_s / flow.solve_seconds:.0f}x; vs pair-by-pair "
            f"graph building alone: {arcs_s / flow.solve_seconds:.1f}x; objective difference "
            f"{abs(naive_objective - flow.objective):.2e}"
        )

    if args.sizes:
        print("== exact min-cost flow, end to end from the scores CSV (subprocess per size)")
        header = (
            f"{'N':>6} {'csv rows':>9} {'pairs':>9} {'read s':>7} {'build s':>8} "
            f"{'solve s':>8} {'total s':>8} {'peak MB':>8} {'objective':>12} {'gap':>8}"
        )
        print(header)
        for n in args.sizes:
            f = run_size(n, work)
            print(
                f"{n:>6} {f['csv_rows']:>9} {f['pairs']:>9} {f['read_s']:>7.2f} "
                f"{f['build_s']:>8.2f} {f['solve_s']:>8.2f} {f['total_s']:>8.2f} "
                f"{f['peak_mb']:>8.0f} {f['objective']:>12.3f} {f['gap']:>8.1e}",
                flush=True,
            )

    if args.constrained:
        rows = demo_fairness(args.time_limit)
        print(
            "== fairness at the demo's size, 211 x 27 (3 per paper, loads 23-24; ILP time "
            f"limit {args.time_limit:.0f} s)"
        )
        for label, seconds, lowest, bound, status in rows:
            print(
                f"{label:<22} {seconds:7.2f} s  lowest paper score {lowest:.6f} (bound "
                f"{bound:.6f}, max-min stage {status})",
                flush=True,
            )
        print(f"speed-up of the flow heuristic start: {rows[1][1] / rows[0][1]:.0f}x")
        print(
            f"== side-constraint models at {args.constrained} x {args.constrained} (top-20 "
            f"candidates, ILP time limit {args.time_limit:.0f} s per model)"
        )
        flow_row = None
        for row in constrained(args.constrained, args.time_limit):
            flow_row = flow_row or row
            print(
                f"{row['model']:<28} pairs {row['pairs']:>7}  build {row['build_s']:6.1f} s  "
                f"solve {row['solve_s']:7.1f} s ({row['solve_s'] / flow_row['solve_s']:.0f}x "
                f"flow)  objective {row['objective']:.3f}  gap {row['gap']:.1e}  "
                f"min paper score {row['min_paper']:.3f}"
                + (f" (bound {row['min_bound']:.3f})" if row.get("min_bound") else "")
                + f" {row.get('status', '')}",
                flush=True,
            )


if __name__ == "__main__":
    main()
