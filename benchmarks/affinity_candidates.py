"""The table behind the default scoring configuration (README, "Affinity quality").

Selection rule, fixed before running: among candidates costing at most 1.5x plain MiniLM
embedding scoring, choose the one with the lowest gold-all loss that beats the reference
(MiniLM, top-3 mean) on at least 80% of held-out halves in rater-level 2-fold CV (halves of
29 raters, ``--splits`` random splits x 2 directions), and whose parameter (the near-duplicate
threshold) chosen by CV on the selection halves is stable; ties inside the noise go to the
cheaper one.

Per candidate it prints: the gold loss (mean over draws), the CV paired difference to the
reference on the held-out halves (mean +- std; negative = better), the share of held-out
halves where it beats the reference, and its cost relative to plain MiniLM: seconds to score
part of one draw with a cold embedding cache (``--cost-draw``, ``--cost-reviewers``,
``--cost-papers``), measured in this run for the MiniLM candidates and TF-IDF; for MPNet
the ratio of the two models' texts/s measured on the same texts here (``--rate-texts`` of
them), since a cold MPNet run takes many minutes. Then, for
the near-duplicate family, how often CV on the selection halves chooses each threshold.

From the repository root (embeddings of the gold folder are cached in ``--cache-dir``):

    python benchmarks/affinity_candidates.py --gold ../shared/gold-all --splits 200
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

from recommender.affinity import RunOptions, ScoringParams, compute_affinity
from recommender.crossval import CrossValidation, cross_validate
from recommender.evaluate import CV_CANDIDATES, evaluate_gold, gold_draws
from recommender.io import read_openreview_archives, read_submissions
from recommender.packaged_models import MINILM_NAME, MPNET_NAME

CANDIDATES = CV_CANDIDATES
FAMILY = [
    "minilm top-3, near-dup 0.9",
    "minilm top-3, near-dup 0.8 (default)",
    "minilm top-3, near-dup 0.7",
]


def cold_seconds(
    draw: Path, params: ScoringParams, options: RunOptions, reviewers_n: int, papers_n: int
) -> float:
    """Seconds to score the first ``reviewers_n`` reviewers x ``papers_n`` submissions of one
    draw with an empty embedding cache (models already loaded by an earlier call)."""
    reviewers = read_openreview_archives(draw / "archives")[:reviewers_n]
    submissions = read_submissions(draw / "submissions.json")[:papers_n]
    scratch = Path(tempfile.mkdtemp(prefix="cold-cache-"))
    try:
        started = time.perf_counter()
        compute_affinity(reviewers, submissions, params, options.replace(cache_dir=scratch))
        return time.perf_counter() - started
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def model_rate(name: str, texts: list[str], options: RunOptions) -> float:
    from recommender.profiles import EmbeddingProfiler

    profiler = EmbeddingProfiler(
        options.model_path(name), batch_size=options.batch_size, backend=options.encoder_backend
    )
    profiler.transform(texts[:8])  # load the model
    started = time.perf_counter()
    profiler.transform(texts)
    return len(texts) / (time.perf_counter() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", type=Path, required=True)
    parser.add_argument("--splits", type=int, default=200)
    parser.add_argument("--cache-dir", type=Path, default=Path(".cache/gold-embeddings"))
    parser.add_argument("--cost-draw", default="d_20_1", help="draw scored cold for the cost")
    parser.add_argument("--rate-texts", type=int, default=96, help="texts timed per model")
    parser.add_argument("--cost-reviewers", type=int, default=20, help="reviewers scored cold")
    parser.add_argument("--cost-papers", type=int, default=100, help="papers scored cold")
    parser.add_argument(
        "--repeat", type=int, default=2, help="cold runs per candidate, interleaved; the fastest"
    )
    parser.add_argument("--no-cost", action="store_true", help="skip the cold-cache timings")
    args = parser.parse_args()

    options = RunOptions(cache_dir=args.cache_dir)
    labels = list(CANDIDATES)
    configs = [ScoringParams.from_dict(CANDIDATES[label]) for label in labels]
    report = evaluate_gold(args.gold, configs, options=options, labels=labels, bootstrap_samples=10)
    costs = np.array([r.rater_costs for r in report.results])
    cv = cross_validate(costs, report.rater_weights, labels, n_splits=args.splits)

    cost_ratio: dict[str, str] = {}
    if not args.no_cost:
        draw = next(d for d in gold_draws(args.gold) if d.name == args.cost_draw)
        # warm the model loads, then time each cheap candidate cold
        size = (args.cost_reviewers, args.cost_papers)
        cold_seconds(draw, configs[0], options, *size)  # load the model outside the timings
        cheap = [
            (label, params)
            for label, params in zip(labels, configs, strict=True)
            if not (params.uses_embedding and params.model == MPNET_NAME)
        ]
        best: dict[str, float] = {}
        for _ in range(args.repeat):  # interleaved: load drifts on a shared machine
            for label, params in cheap:
                seconds = cold_seconds(draw, params, options, *size)
                best[label] = min(best.get(label, seconds), seconds)
        base = best[labels[0]]
        for label, seconds in best.items():
            cost_ratio[label] = f"{seconds / base:.2f}x ({seconds:.1f} s)"
        reviewers = read_openreview_archives(draw / "archives")
        texts = [p.text for r in reviewers for p in r.publications][: args.rate_texts]
        minilm, mpnet = (
            model_rate(MINILM_NAME, texts, options),
            model_rate(MPNET_NAME, texts, options),
        )
        for label, params in zip(labels, configs, strict=True):
            if params.model == MPNET_NAME and params.uses_embedding:
                cost_ratio[label] = f"{minilm / mpnet:.1f}x (rates)"
        print(
            f"cost: {args.cost_reviewers} reviewers x {args.cost_papers} papers of "
            f"{args.cost_draw}, cold cache, plain MiniLM top-3 {base:.1f} s; "
            f"texts/s on {len(texts)} texts: MiniLM {minilm:.1f}, MPNet {mpnet:.1f}"
        )

    print(
        f"gold: {args.gold}, {report.n_raters} raters, {report.n_draws} draws; CV: "
        f"{cv.n_raters} raters, halves of {cv.n_raters // 2}, {cv.n_folds} folds"
    )
    header = f"{'candidate':<42} {'loss':>7} {'CV Δ vs ref (mean ± sd)':>24} {'wins':>5}  cost"
    print(header)
    print("-" * len(header))
    for k, label in enumerate(labels):
        if k == 0:
            delta, wins = "(reference)", ""
        else:
            d = cv.held_out_difference(k)
            delta, wins = f"{d.mean():+.4f} ± {d.std():.4f}", f"{(d < 0).mean():.0%}"
        print(f"{label:<42} {cv.full[k]:7.4f} {delta:>24} {wins:>5}  {cost_ratio.get(label, '')}")

    family = [labels.index(label) for label in FAMILY]
    chosen = np.array(family)[np.argmin(_selection(cv, family), axis=0)]
    counts = Counter(labels[i] for i in chosen)
    print()
    print("near-duplicate threshold chosen by CV on the selection halves:")
    for label in FAMILY:
        print(f"  {label:<40} {counts.get(label, 0) / cv.n_folds:5.0%} of folds")
    return 0


def _selection(cv: CrossValidation, family: list[int]) -> np.ndarray:
    """(len(family), n_folds) loss of each family member on each fold's selection half: the
    held-out half of the fold that swaps the halves (folds come in swapped pairs)."""
    swapped = np.arange(cv.n_folds) ^ 1
    return cv.held_out[family][:, swapped]


if __name__ == "__main__":
    sys.exit(main())
