"""``POST /venues/{v}/affinity/estimate``'s service call on a generated venue
(benchmarks/page_venue.py, ``--papers`` x ``--reviewers`` x 3 publications, SQLite),
with half its texts in the embedding cache: the estimate as it reads the venue now
(:func:`reviewer_recommender.storage.repository.load_corpus_texts`, title and abstract
columns only) against the corpus-building baseline it replaced (``load_corpus`` then
``estimate_scoring``), same answer checked.

    PYTHONPATH=. python benchmarks/bench_estimate.py [--papers 10000] [--reviewers 10000]

Measured (2-core development machine shared with other jobs; 10,000 x 10,000, best of 3,
runs of 2026-12-04): baseline 1.29-1.30 s, now 0.46-0.50 s (2.6-2.8x). What is left is
mostly decoding the publications JSON column (0.19 s of 0.43 s under cProfile).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from benchmarks.page_venue import build_page_venue
from recommender.affinity import RunOptions, ScoringParams
from recommender.affinity.estimate import ScoringEstimate, _identity, estimate_scoring, venue_texts
from recommender.embeddings import EmbeddingCache, text_key
from reviewer_recommender.services.affinity_store import estimate_affinity_job
from reviewer_recommender.storage.db import Database, migrate
from reviewer_recommender.storage.repository import load_corpus


def best_of(runs: int, call: Callable[[], ScoringEstimate]) -> tuple[float, ScoringEstimate]:
    times: list[float] = []
    result = None
    for _ in range(runs):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    assert result is not None
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=10_000)
    parser.add_argument("--reviewers", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'venue.sqlite'}"
        database = Database(url)
        migrate(database.engine)
        build_page_venue(
            url, "v", papers=args.papers, reviewers=args.reviewers, stored_scores=False
        )
        cache_dir = Path(tmp) / "cache"
        options = RunOptions.from_env().replace(cache_dir=cache_dir)
        params = {"config": {"method": "embedding", "model": ScoringParams().model}}
        identity = _identity(ScoringParams().model, options)
        with database.session() as session:
            reviewers, submissions = load_corpus(session, "v")
            texts = list(dict.fromkeys(venue_texts(reviewers, submissions)))
            if identity is not None:  # half the texts cached
                vector = np.zeros(4, dtype=np.float32)
                EmbeddingCache(cache_dir).put(identity, {text_key(t): vector for t in texts[::2]})

            def baseline() -> ScoringEstimate:
                corpus = load_corpus(session, "v")
                return estimate_scoring(*corpus, ScoringParams(), options)

            def now() -> ScoringEstimate:
                return estimate_affinity_job(session, "v", params, 20, options)

            before, old = best_of(args.runs, baseline)
            after, new = best_of(args.runs, now)
        database.dispose()
    assert old == new, (old, new)
    print(
        f"{args.papers:,} papers x {args.reviewers:,} reviewers x 3 publications: "
        f"{new.texts_total:,} texts, {new.texts_cached:,} cached"
    )
    print(f"baseline (load_corpus + estimate_scoring): {before:.3f} s")
    print(f"now (load_corpus_texts + estimate_texts):  {after:.3f} s  ({before / after:.1f}x)")


if __name__ == "__main__":
    main()
