"""The first explanation of a pair once a venue is scored: re-fitting the model (what the
service did) against loading the model the affinity job saved, in the same run.

1. A gold-dev draw (``--draw``), default scoring (combined: TF-IDF + MiniLM): score it,
   save the fitted model; then the first explanation by (a) re-fitting without an
   embedding cache (the service's former default), (b) re-fitting with a warm cache, (c)
   loading the saved model; then the latency of further explanations.
2. A synthetic TF-IDF venue of ``--papers`` x ``--reviewers`` x 20 publications: save,
   then load + explain random pairs (the cost grows with a reviewer's profile, not the
   venue).

    python -m benchmarks.bench_explain --draw ../../shared/gold-dev/d_20_1
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

from benchmarks.synthetic_venue import VenueShape, synthetic_venue_corpus
from recommender.affinity import AffinityModel, RunOptions, ScoringParams
from recommender.affinity.store import load_model, save_model
from recommender.corpus import Reviewer, Submission
from recommender.io import read_openreview_archives, read_submissions

T = TypeVar("T")


def _timed(action: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    value = action()
    return value, time.perf_counter() - started


def _explain_latencies(model: AffinityModel, rng: np.random.Generator, count: int) -> list[float]:
    papers, reviewers = model.paper_ids_, model.reviewer_ids_
    seconds = []
    for _ in range(count):
        paper = papers[int(rng.integers(len(papers)))]
        reviewer = reviewers[int(rng.integers(len(reviewers)))]
        started = time.perf_counter()
        model.explain(paper, reviewer)
        seconds.append(time.perf_counter() - started)
    return seconds


def gold_draw(draw: Path, scratch: Path) -> None:
    reviewers: tuple[Reviewer, ...] = read_openreview_archives(draw / "archives")
    submissions: tuple[Submission, ...] = read_submissions(draw / "submissions.json")
    n_pubs = sum(len(r.publications) for r in reviewers)
    print(
        f"[gold draw] {draw.name}: {len(submissions)} papers x {len(reviewers)} reviewers, "
        f"{n_pubs} publications, default scoring"
    )
    params = ScoringParams()
    cached = RunOptions(cache_dir=scratch / "cache")
    model = AffinityModel(params, cached).fit(reviewers, submissions)
    model.affinity()
    save_model(model, scratch / "model")
    paper, reviewer = model.paper_ids_[0], model.reviewer_ids_[0]

    def refit(options: RunOptions) -> None:
        AffinityModel(params, options).fit(reviewers, submissions).explain(paper, reviewer)

    _, cold = _timed(lambda: refit(RunOptions()))
    _, warm = _timed(lambda: refit(cached))
    loaded, load = _timed(lambda: load_model(scratch / "model", cached))
    _, first = _timed(lambda: loaded.explain(paper, reviewer))
    later = _explain_latencies(loaded, np.random.default_rng(0), 50)
    new = load + first
    print(f"  first explanation, re-fit without embedding cache  {cold:8.3f} s")
    print(f"  first explanation, re-fit with a warm cache        {warm:8.3f} s")
    print(
        f"  first explanation, saved model (load + explain)    {new:8.3f} s  "
        f"(x{cold / new:.0f} and x{warm / new:.0f} faster)"
    )
    print(
        f"  next explanations: median {statistics.median(later) * 1000:.1f} ms, "
        f"max {max(later) * 1000:.1f} ms (50 random pairs)"
    )


def synthetic(papers: int, reviewers: int, scratch: Path) -> None:
    shape = VenueShape(n_papers=papers, n_reviewers=reviewers)
    corpus = synthetic_venue_corpus(shape, seed=3)
    print(f"[synthetic] {papers} papers x {reviewers} reviewers x 20 publications, TF-IDF")
    params = ScoringParams(method="tfidf")
    model, fit = _timed(lambda: AffinityModel(params).fit(corpus.reviewers, corpus.submissions))
    _, scoring = _timed(model.affinity)
    _, saving = _timed(lambda: save_model(model, scratch / "synthetic"))
    loaded, load = _timed(lambda: load_model(scratch / "synthetic"))
    rng = np.random.default_rng(1)
    first = _explain_latencies(loaded, rng, 1)[0]
    later = _explain_latencies(loaded, rng, 50)
    print(f"  fit {fit:.1f} s, score {scoring:.1f} s, save {saving:.1f} s (the job's cost)")
    print(
        f"  first explanation: load {load * 1000:.0f} ms + explain {first * 1000:.0f} ms "
        f"= {(load + first):.3f} s vs a re-fit of {fit:.1f} s (x{fit / (load + first):.0f})"
    )
    print(
        f"  next explanations: median {statistics.median(later) * 1000:.1f} ms, "
        f"max {max(later) * 1000:.1f} ms (50 random pairs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--draw", type=Path, required=True, help="a gold-dev draw folder")
    parser.add_argument("--papers", type=int, default=5000)
    parser.add_argument("--reviewers", type=int, default=5000)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (shared machine)")
    with tempfile.TemporaryDirectory() as scratch:
        gold_draw(args.draw, Path(scratch))
        synthetic(args.papers, args.reviewers, Path(scratch))


if __name__ == "__main__":
    main()
