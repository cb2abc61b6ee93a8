"""Perturbed maximization against the probability-capped LP, at equal quality.

A synthetic venue (``benchmarks.synthetic.make_venue``: topic-mixture scores in [0, 1]),
N papers x N reviewers, 3 reviewers per paper, max load 6, candidates = each paper's and
each reviewer's top-K (``matching.candidates.sparse_problem``). For each perturbation
``beta`` the perturbed program is solved and sampled (``PerturbedSolver``); then the
probability cap ``Q`` whose capped LP (``RandomizedSolver``, Jecmen et al. 2020) keeps the
SAME expected quality is found by bisection, and that randomized solver is run too. Both
report the randomness metrics of ``matching.randomness`` (from their marginals) and their
time; the last columns compare them as ratios (perturbed / capped LP) in the same run.

    python benchmarks/bench_perturbed.py                       # 2000 x 2000, betas 0.1 .. 0.5
    python benchmarks/bench_perturbed.py --size 5000 --betas 0.2
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.synthetic import make_venue
from matching import FlowSolver, PerturbedSolver, RandomizedSolver
from matching.candidates import sparse_problem
from matching.problem import AssignmentProblem

COLUMNS = ("quality_ratio", "max_probability", "avg_max_probability", "l2_norm", "entropy")


def cap_for_quality(problem: AssignmentProblem, optimum: float, target: float) -> float:
    """The smallest cap Q (to 1e-4) whose capped LP keeps ``target`` of the optimum (its
    value grows with Q)."""
    low, high = 0.0, 1.0
    while high - low > 1e-4:
        middle = (low + high) / 2
        try:
            value = RandomizedSolver(q=middle).fractional(problem).value
        except Exception:  # infeasible under so low a cap
            low = middle
            continue
        if value / optimum >= target:
            high = middle
        else:
            low = middle
    return high


def row(name: str, figures: dict[str, float], seconds: float) -> str:
    cells = " ".join(f"{figures[c]:>10.4f}" for c in COLUMNS)
    return f"{name:<24} {cells} {figures['support_size']:>9d} {seconds:>8.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=2000, help="papers = reviewers (default 2000)")
    parser.add_argument("--k", type=int, default=50, help="top-K candidates per side")
    parser.add_argument(
        "--betas", type=float, nargs="+", default=[0.1, 0.2, 0.3, 0.5], help="perturbations"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    venue = make_venue(args.size, args.size, max_load=6, seed=args.seed)
    started = time.perf_counter()
    problem = sparse_problem(
        lambda: venue.score_blocks(),
        paper_ids=venue.paper_ids,
        reviewer_ids=venue.reviewer_ids,
        demand=3,
        max_load=6,
        k=args.k,
    )
    built = time.perf_counter() - started
    started = time.perf_counter()
    optimum = FlowSolver().solve(problem)
    flow_seconds = time.perf_counter() - started
    print(
        f"synthetic venue {args.size} x {args.size}, top-{args.k} candidates: "
        f"{problem.n_pairs} pairs (built in {built:.1f} s); deterministic optimum "
        f"{optimum.objective:.3f} in {flow_seconds:.2f} s (min-cost flow)"
    )
    header = " ".join(f"{c[:10]:>10}" for c in COLUMNS)
    print(f"\n{'method':<24} {header} {'support':>9} {'seconds':>8}")
    summary = []
    for beta in args.betas:
        started = time.perf_counter()
        perturbed = PerturbedSolver(beta=beta).solve(problem, seed=args.seed)
        perturbed_seconds = time.perf_counter() - started
        figures = perturbed.parameters["randomness"]
        cap = cap_for_quality(problem, optimum.objective, figures["quality_ratio"])
        started = time.perf_counter()
        capped = RandomizedSolver(q=cap).solve(problem, seed=args.seed)
        capped_seconds = time.perf_counter() - started
        capped_figures = capped.parameters["randomness"]
        print(row(f"perturbed beta={beta:g}", figures, perturbed_seconds))
        print(row(f"capped LP Q={cap:.4f}", capped_figures, capped_seconds))
        summary.append((beta, cap, figures, capped_figures, perturbed_seconds, capped_seconds))
    print(
        "\nratios perturbed / capped LP at equal quality (lower max probability, L2 norm; "
        "higher entropy, support = more random):"
    )
    print(f"{'beta':>6} {'Q':>7} {'max_p':>7} {'avg_max':>8} {'l2':>7} {'entropy':>8} "
          f"{'support':>8} {'time':>7}")  # fmt: skip
    for beta, cap, ours, theirs, ours_s, theirs_s in summary:
        print(
            f"{beta:>6g} {cap:>7.4f} "
            f"{ours['max_probability'] / theirs['max_probability']:>7.3f} "
            f"{ours['avg_max_probability'] / theirs['avg_max_probability']:>8.3f} "
            f"{ours['l2_norm'] / theirs['l2_norm']:>7.3f} "
            f"{ours['entropy'] / theirs['entropy']:>8.3f} "
            f"{ours['support_size'] / theirs['support_size']:>8.3f} "
            f"{ours_s / theirs_s:>7.2f}"
        )


if __name__ == "__main__":
    main()
