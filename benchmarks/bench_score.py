"""Time a full score (all pairs) of one gold-dev draw: cache cold vs warm, default config.

Cold = fresh embedding cache and the model not yet loaded in this process (what a first run
of a venue pays). Warm = same texts again with the cache filled. TF-IDF-only as a baseline.

    python benchmarks/bench_score.py --draw /work/shared/gold-dev/d_20_1
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from recommender.affinity import RunOptions, ScoringParams, compute_affinity
from recommender.io import read_openreview_archives, read_submissions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--draw", type=Path, default=Path("/work/shared/gold-dev/d_20_1"))
    args = parser.parse_args()
    reviewers = read_openreview_archives(args.draw / "archives")
    submissions = read_submissions(args.draw / "submissions.json")
    n_pubs = sum(len(r.publications) for r in reviewers)
    print(
        f"{args.draw.name}: {len(submissions)} papers x {len(reviewers)} reviewers, "
        f"{n_pubs} publications"
    )

    started = time.perf_counter()
    compute_affinity(reviewers, submissions, ScoringParams(method="tfidf"))
    tfidf_s = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as directory:
        options = RunOptions(cache_dir=Path(directory))
        started = time.perf_counter()
        compute_affinity(reviewers, submissions, ScoringParams(), options)
        cold_s = time.perf_counter() - started
        started = time.perf_counter()
        compute_affinity(reviewers, submissions, ScoringParams(), options)
        warm_s = time.perf_counter() - started
    print(f"tfidf only                   : {tfidf_s:7.2f} s")
    print(f"default, cache cold (+load)  : {cold_s:7.2f} s  ({cold_s / tfidf_s:.1f}x tfidf)")
    print(
        f"default, cache warm          : {warm_s:7.2f} s  ({cold_s / warm_s:.1f}x faster than cold)"
    )


if __name__ == "__main__":
    main()
