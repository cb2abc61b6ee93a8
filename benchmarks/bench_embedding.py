"""Embedding throughput: our encoder (cache cold / warm) vs plain SentenceTransformer.encode.

Same texts, same model, same run; prints texts/s and ratios against the plain baseline.
Texts: the unique publication + submission texts of gold-dev draws (``--gold``), first ``--n``.

    python benchmarks/bench_embedding.py --gold /work/shared/gold-dev --n 600
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from recommender.embeddings import EmbeddingCache, load_model
from recommender.io import read_openreview_archives, read_submissions
from recommender.profiles import EmbeddingProfiler


def gold_texts(gold: Path, n: int) -> list[str]:
    texts: dict[str, None] = {}
    for draw in sorted(gold.glob("d_*")):
        for reviewer in read_openreview_archives(draw / "archives"):
            texts.update((p.text, None) for p in reviewer.publications)
        texts.update((s.text, None) for s in read_submissions(draw / "submissions.json"))
        if len(texts) >= n:
            break
    return list(texts)[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gold", type=Path, default=Path("/work/shared/gold-dev"))
    parser.add_argument("--n", type=int, default=600)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    texts = gold_texts(args.gold, args.n)
    model = load_model()  # loaded once, outside every timing
    model.encode(texts[:8])  # warm-up

    def plain_run() -> tuple[np.ndarray, float]:
        started = time.perf_counter()
        vectors = model.encode(texts, batch_size=args.batch_size, normalize_embeddings=True)
        return vectors, time.perf_counter() - started

    # Plain runs before and after ours, averaged: the machine is shared, load drifts.
    plain, plain_before = plain_run()
    with tempfile.TemporaryDirectory() as directory:
        profiler = EmbeddingProfiler(cache=EmbeddingCache(directory), batch_size=args.batch_size)
        started = time.perf_counter()
        ours = profiler.transform(texts)
        cold_s = time.perf_counter() - started
        warm = EmbeddingProfiler(cache=EmbeddingCache(directory), batch_size=args.batch_size)
        started = time.perf_counter()
        warm.transform(texts)
        warm_s = time.perf_counter() - started
    _, plain_after = plain_run()
    plain_s = (plain_before + plain_after) / 2
    assert np.allclose(ours, plain, atol=1e-4), "encoders disagree"
    n = len(texts)
    print(
        f"texts: {n} (mean {np.mean([len(t) for t in texts]):.0f} chars), batch {args.batch_size}"
    )
    print(f"plain SentenceTransformer.encode : {n / plain_s:8.1f} texts/s  (1.00x)")
    print(
        f"ours, cache cold (sorted+store)  : {n / cold_s:8.1f} texts/s  ({plain_s / cold_s:.2f}x)"
    )
    print(
        f"ours, cache warm (all hits)      : {n / warm_s:8.1f} texts/s  ({plain_s / warm_s:.1f}x)"
    )


if __name__ == "__main__":
    main()
