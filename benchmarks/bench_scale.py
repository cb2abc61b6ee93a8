"""Venue-scale TF-IDF affinity: blockwise vs the dense paths, and Dask 1 -> 2 workers.

Stages (each timed, peak RSS above the stage's starting RSS sampled every 50 ms):

1. ``baseline``: at a size where the dense paths fit (``--small-papers`` x
   ``--small-reviewers`` x 20 publications), three ways on the same TF-IDF vectors:
   the naive dense reference (whole paper x publication matrix, then aggregate),
   ``AffinityModel.affinity()`` (the product's dense path, chunked over papers, keeps the
   full matrix) and ``blockwise_affinity``; ratios in the same run.
2. ``full``: ICLR 2026 size (19,525 papers x 18,054 reviewers x 20 publications): text
   generation, TF-IDF fit + transform, then ``blockwise_affinity`` (top-K per paper and
   per reviewer, full matrix kept when it fits 2 GiB) — the figure the issue targets.
3. ``dask``: ``dask_blockwise_affinity`` on ``--dask-papers`` papers x all reviewers with
   a LocalCluster of 1 then 2 single-threaded worker processes, against the single-process
   path at 1 BLAS thread; per-worker rate in (paper, publication) pairs/s, and the N-machine
   projection formula from it.

    python -m benchmarks.bench_scale [--stages baseline,full,dask] [--aggregation topk]
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import psutil
from threadpoolctl import threadpool_limits

from benchmarks.synthetic_venue import VenueShape, synthetic_venue_corpus
from recommender.affinity import AffinityConfig, AffinityModel
from recommender.blockwise import blockwise_affinity, dense_affinity
from recommender.corpus import Corpus
from recommender.distributed import dask_blockwise_affinity, dask_client
from recommender.profiles import TfidfProfiler

GIB = 1024**3


@dataclass
class Measure:
    seconds: float = 0.0
    peak_bytes: int = 0


@contextmanager
def measured() -> Iterator[Measure]:
    """Wall time and peak RSS growth (this process, 50 ms sampling) of the block."""
    process = psutil.Process()
    start_rss = process.memory_info().rss
    peak = [start_rss]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], process.memory_info().rss)
            stop.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    result = Measure()
    started = time.perf_counter()
    try:
        yield result
    finally:
        result.seconds = time.perf_counter() - started
        stop.set()
        sampler.join()
        peak[0] = max(peak[0], process.memory_info().rss)
        result.peak_bytes = peak[0] - start_rss


def _vectors(corpus: Corpus):
    pub_texts = [p.text for r in corpus.reviewers for p in r.publications]
    sub_texts = [s.text for s in corpus.submissions]
    profiler = TfidfProfiler()
    vectors = profiler.fit_transform(pub_texts + sub_texts)  # tokenises each text once
    counts = [len(r.publications) for r in corpus.reviewers]
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return vectors[len(pub_texts) :], vectors[: len(pub_texts)], offsets, profiler


def _line(label: str, m: Measure, extra: str = "") -> None:
    print(f"  {label:38s} {m.seconds:8.1f} s   peak +{m.peak_bytes / GIB:6.2f} GiB  {extra}",
          flush=True)


def stage_baseline(args: argparse.Namespace, config: AffinityConfig) -> None:
    shape = VenueShape(n_papers=args.small_papers, n_reviewers=args.small_reviewers)
    corpus = synthetic_venue_corpus(shape, seed=1)
    papers, pubs, offsets, _ = _vectors(corpus)
    pairs = papers.shape[0] * pubs.shape[0]
    print(f"[baseline] {papers.shape[0]} papers x {len(offsets) - 1} reviewers x "
          f"{shape.pubs_per_reviewer} pubs = {pairs:.3g} pairs; vocabulary {papers.shape[1]}")
    with measured() as naive:
        reference = dense_affinity(papers, pubs, offsets, config=config)
    _line("naive dense (full similarity matrix)", naive)
    model = AffinityModel(config).fit(corpus.reviewers, corpus.submissions)
    with measured() as product:
        product_scores = model.affinity().scores
    _line("AffinityModel.affinity() (dense path)", product)
    with measured() as block:
        result = blockwise_affinity(papers, pubs, offsets, config=config, keep_dense=True)
    _line("blockwise_affinity", block)
    error = float(np.abs(result.dense_scores() - reference).max())
    error_model = float(np.abs(result.dense_scores() - product_scores).max())
    print(f"  speed-up vs naive x{naive.seconds / block.seconds:.2f}, vs dense path "
          f"x{product.seconds / block.seconds:.2f}; max |diff| vs naive {error:.2e}, "
          f"vs dense path {error_model:.2e}")
    per_pair = product.seconds / pairs
    print(f"  dense path projected to 19525 x 18054 x 20: "
          f"{per_pair * 19525 * 18054 * 20 / 60:.1f} min (linear in pairs)")


def stage_full(args: argparse.Namespace, config: AffinityConfig) -> None:
    shape = VenueShape(n_papers=args.papers, n_reviewers=args.reviewers)
    print(f"[full] {shape.n_papers} papers x {shape.n_reviewers} reviewers x "
          f"{shape.pubs_per_reviewer} pubs, aggregation {config.aggregation} (k={config.k})")
    with measured() as generation:
        corpus = synthetic_venue_corpus(shape, seed=0)
    _line("generate texts (not part of the target)", generation)
    with measured() as vectorise:
        papers, pubs, offsets, profiler = _vectors(corpus)
    del corpus
    _line("TF-IDF fit + transform", vectorise,
          f"vocabulary {len(profiler.terms)}, nnz/text {pubs.nnz / pubs.shape[0]:.0f}")
    last = [0.0]

    def progress(fraction: float, stage: str) -> None:
        if fraction - last[0] >= 0.25 or fraction >= 1.0:
            last[0] = fraction
            print(f"    {fraction:5.0%} {stage}", flush=True)

    with measured() as scoring:
        result = blockwise_affinity(papers, pubs, offsets, config=config, progress=progress,
                                    k_per_paper=args.k_per_paper,
                                    k_per_reviewer=args.k_per_reviewer)
    pairs = papers.shape[0] * pubs.shape[0]
    _line("blockwise_affinity (scoring)", scoring,
          f"{pairs / scoring.seconds / 1e6:.0f} M pairs/s, full matrix kept: "
          f"{result.dense is not None}")
    rows, _, _ = result.candidates()
    total = vectorise.seconds + scoring.seconds
    print(f"  candidates kept: {rows.size} ({rows.size / papers.shape[0]:.0f} per paper); "
          f"TF-IDF + scoring {total:.1f} s = {total / 60:.2f} min; process peak RSS "
          f"{psutil.Process().memory_info().rss / GIB:.2f} GiB now")


def stage_dask(args: argparse.Namespace, config: AffinityConfig) -> None:
    shape = VenueShape(n_papers=args.dask_papers, n_reviewers=args.dask_reviewers)
    corpus = synthetic_venue_corpus(shape, seed=2)
    papers, pubs, offsets, _ = _vectors(corpus)
    del corpus
    pairs = papers.shape[0] * pubs.shape[0]
    print(f"[dask] {papers.shape[0]} papers x {len(offsets) - 1} reviewers = {pairs:.3g} pairs;"
          f" cores {os.cpu_count()}, load {os.getloadavg()[0]:.2f}")
    options = {"config": config, "paper_block": 256, "keep_dense": False}
    with threadpool_limits(limits=1), measured() as single:
        local = blockwise_affinity(papers, pubs, offsets, **options)
    _line("single process, 1 BLAS thread", single, f"{pairs / single.seconds / 1e6:.0f} M pairs/s")
    rates = {}
    for workers in (1, 2):
        with measured() as start:
            context = dask_client(n_workers=workers, threads_per_worker=1)
            client = context.__enter__()
            client.wait_for_workers(workers)
        try:
            with measured() as run:
                remote = dask_blockwise_affinity(papers, pubs, offsets, client=client,
                                                 blas_threads=1, **options)
        finally:
            context.__exit__(None, None, None)
        assert np.array_equal(remote.by_paper.indices, local.by_paper.indices)
        rates[workers] = pairs / run.seconds
        _line(f"dask LocalCluster {workers} worker(s) x 1 thread", run,
              f"{rates[workers] / 1e6:.0f} M pairs/s (cluster start {start.seconds:.1f} s "
              "not included)")
    per_worker = rates[2] / 2
    print(f"  scaling 1 -> 2 workers: x{rates[2] / rates[1]:.2f}; per-worker rate "
          f"r = {per_worker / 1e6:.1f} M pairs/s (2-worker run / 2)")
    full_pairs = 19525 * 18054 * 20
    print(f"  projection: T(N machines x c cores) ~ T_prep + P*Q / (N*c*r) = T_prep + "
          f"{full_pairs:.3g} / (N*c*{per_worker:.3g}) s; e.g. N=4, c=16: "
          f"{full_pairs / (4 * 16 * per_worker):.0f} s + T_prep (TF-IDF fit/transform, "
          f"plan broadcast)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stages", default="baseline,full,dask")
    parser.add_argument("--aggregation", default=AffinityConfig().aggregation)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--papers", type=int, default=19_525)
    parser.add_argument("--reviewers", type=int, default=18_054)
    parser.add_argument("--small-papers", type=int, default=2000)
    parser.add_argument("--small-reviewers", type=int, default=1000)
    parser.add_argument("--dask-papers", type=int, default=2048)
    parser.add_argument("--dask-reviewers", type=int, default=4000)
    parser.add_argument("--k-per-paper", type=int, default=100)
    parser.add_argument("--k-per-reviewer", type=int, default=50)
    args = parser.parse_args()
    config = AffinityConfig(method="tfidf", aggregation=args.aggregation, k=args.k)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores "
          f"(machine shared: figures are upper bounds)")
    stages = {"baseline": stage_baseline, "full": stage_full, "dask": stage_dask}
    for name in args.stages.split(","):
        stages[name](args, config)


if __name__ == "__main__":
    main()
