"""Throughput of the default scoring configuration, and what an ICLR-size venue costs.

In one run, on the same texts (the unique publication and submission texts of a gold
folder, first ``--n``): texts/s of plain ``SentenceTransformer.encode`` (batches in input
order, as a script would call it) and of the default configuration's embedding step
(:class:`recommender.profiles.EmbeddingProfiler`: length-sorted batches, no padding
waste, the CPU backend ``auto`` chooses, cold cache), timed plain-ours-plain so that drift
of a shared machine shows; then the whole default scoring (:func:`compute_affinity`, cold
cache) of one gold draw, to show that embedding is the cost.

Projection for an ICLR 2026-size venue (19,500 submissions; 18,000 reviewers x 20
publications: 379,500 texts): hours on this machine at the measured rate, and with N added
Dask workers like this machine (``recommender score --engine dask``: the texts are split
over the workers, so about hours / (1 + N) when the scheduler's own machine also works, or
hours / N per worker otherwise; printed as hours / N for N workers). A GPU is used when
torch sees one (``RECOMMENDER_DEVICE=cuda``; this script passes ``--device cuda`` on through
to both sides); none on the development machine.

From the repository root:

    python benchmarks/bench_throughput.py --gold ../shared/gold-all --n 600
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

from recommender.affinity import RunOptions, ScoringParams, compute_affinity
from recommender.embeddings import EmbeddingCache, load_model
from recommender.io import read_openreview_archives, read_submissions
from recommender.profiles import EmbeddingProfiler

ICLR_SUBMISSIONS = 19_500
ICLR_REVIEWERS = 18_000
ICLR_PUBLICATIONS_EACH = 20
ICLR_TEXTS = ICLR_SUBMISSIONS + ICLR_REVIEWERS * ICLR_PUBLICATIONS_EACH


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
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", type=Path, required=True)
    parser.add_argument("--n", type=int, default=600, help="texts timed")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--device", default="cuda" if torch.cuda.is_available() else "cpu", help="cpu or cuda"
    )
    parser.add_argument("--workers", default="1,2,4,8", help="Dask worker counts to project")
    args = parser.parse_args()
    params = ScoringParams()
    options = RunOptions(device=args.device, batch_size=args.batch_size)
    model_dir = options.model_path(params.model)
    texts = gold_texts(args.gold, args.n)

    plain_model = load_model(model_dir, args.device)
    plain_model.encode(texts[:8])  # loaded and warmed outside every timing

    def plain() -> float:
        started = time.perf_counter()
        plain_model.encode(texts, batch_size=args.batch_size, normalize_embeddings=True)
        return len(texts) / (time.perf_counter() - started)

    def ours() -> float:
        with tempfile.TemporaryDirectory() as directory:
            profiler = EmbeddingProfiler(
                model_dir,
                cache=EmbeddingCache(directory),
                batch_size=args.batch_size,
                device=args.device,
            )
            profiler.transform(texts[:8])  # load the encoder
            started = time.perf_counter()
            profiler.transform(texts[8:])
            return (len(texts) - 8) / (time.perf_counter() - started)

    before = plain()
    rate = ours()
    after = plain()
    baseline = (before + after) / 2

    draw = sorted(args.gold.glob("d_*"))[0]
    reviewers = read_openreview_archives(draw / "archives")
    submissions = read_submissions(draw / "submissions.json")
    n_texts = sum(len(r.publications) for r in reviewers) + len(submissions)
    with tempfile.TemporaryDirectory() as directory:
        started = time.perf_counter()
        compute_affinity(reviewers, submissions, params, options.replace(cache_dir=Path(directory)))
        whole = time.perf_counter() - started

    print(
        f"default scoring: {params.model}, {params.method} {params.aggregation} "
        f"k={params.k}, duplicates >= {params.duplicate_threshold} once; device {args.device}, "
        f"torch threads {torch.get_num_threads()}, {len(texts)} texts"
    )
    print(
        f"plain SentenceTransformer.encode : {baseline:7.1f} texts/s "
        f"(before {before:.1f}, after {after:.1f})"
    )
    print(f"default embedding step (ours)   : {rate:7.1f} texts/s = {rate / baseline:.2f}x plain")
    print(
        f"whole default scoring of {draw.name} ({n_texts} texts, cold cache): {whole:.1f} s "
        f"= {n_texts / whole:.1f} texts/s end to end"
    )
    hours = ICLR_TEXTS / rate / 3600
    plain_hours = ICLR_TEXTS / baseline / 3600
    print(
        f"ICLR 2026 size ({ICLR_SUBMISSIONS:,} submissions, {ICLR_REVIEWERS:,} reviewers x "
        f"{ICLR_PUBLICATIONS_EACH} publications = {ICLR_TEXTS:,} texts): {hours:.1f} h here "
        f"(plain encode: {plain_hours:.1f} h)"
    )
    for workers in (int(w) for w in args.workers.split(",")):
        print(f"  with {workers} Dask worker(s) like this machine: {hours / workers:5.1f} h")


if __name__ == "__main__":
    main()
