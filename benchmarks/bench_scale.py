"""Venue-scale TF-IDF scoring end to end through the CLI, and each step against the
method it replaced, in the same run.

Stages (``--stages``, default ``cli,stages``):

1. ``cli``: ``recommender score --method tfidf --top-k 100`` on an ICLR-2026-size venue
   (19,525 submissions x 18,054 reviewers x 20 publications) in OpenReview exports
   (:mod:`benchmarks.synthetic_venue`, written once under ``--venue``): wall time and peak
   RSS of the process and its children (sampled every 0.1 s), against the target
   (< 180 s, < 8 GB, reading and writing included).
2. ``stages``: the same steps in this process, each with the previous method as baseline:
   reading; TF-IDF fit with 1 vs ``RunOptions.workers`` counting processes (identical
   vectors); blockwise scoring against every publication vs against reviewer mean profiles
   (mean aggregation is linear), on ``--sample-papers`` papers and projected to the venue;
   the top-K scores CSV by ``DataFrame.to_csv`` vs ``Affinity.iter_csv``.
3. ``dask``: ``dask_blockwise_affinity`` on ``--dask-papers`` papers with a LocalCluster
   of 1 then 2 single-threaded worker processes, against the single-process path.

The machine is shared: figures are upper bounds; the load average is printed.

    python -m benchmarks.bench_scale --venue /tmp/iclr-synthetic [--stages cli,stages,dask]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import psutil
from threadpoolctl import threadpool_limits

from benchmarks.synthetic_venue import (
    VenueShape,
    synthetic_venue_corpus,
    write_openreview_venue,
)
from recommender.affinity import AffinityModel, RunOptions, ScoringParams
from recommender.affinity.blockwise import blockwise_affinity
from recommender.affinity.similarity import Channel
from recommender.corpus import Corpus
from recommender.distributed import dask_blockwise_affinity, dask_client
from recommender.profiles import TfidfProfiler

GIB = 1024**3
TARGET_SECONDS = 180
TARGET_BYTES = 8 * GIB


@dataclass
class Measure:
    seconds: float = 0.0
    peak_bytes: int = 0


def _tree_rss(process: psutil.Process) -> int:
    total = 0
    for member in [process, *process.children(recursive=True)]:
        with suppress(psutil.Error):
            total += member.memory_info().rss
    return total


@contextmanager
def measured(process: psutil.Process | None = None) -> Iterator[Measure]:
    """Wall time and peak RSS (process and children, 0.1 s sampling) of the block; for this
    process the growth over its RSS at the start."""
    own = process is None
    target = process or psutil.Process()
    start_rss = _tree_rss(target) if own else 0
    peak = [start_rss]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _tree_rss(target))
            stop.wait(0.1)

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
        result.peak_bytes = peak[0] - start_rss


def _line(label: str, m: Measure, extra: str = "") -> None:
    print(
        f"  {label:44s} {m.seconds:8.1f} s   peak +{m.peak_bytes / GIB:5.2f} GiB  {extra}",
        flush=True,
    )


def ensure_venue(args: argparse.Namespace) -> Path:
    """The synthetic venue's folder (written on first use)."""
    venue = Path(args.venue)
    if (venue / "submissions.json").is_file() and (venue / "archives").is_dir():
        return venue
    shape = VenueShape(n_papers=args.papers, n_reviewers=args.reviewers)
    print(f"[venue] writing {shape.n_papers} x {shape.n_reviewers} x 20 to {venue}", flush=True)
    with measured() as generation:
        write_openreview_venue(synthetic_venue_corpus(shape, seed=0), venue, seed=0)
    _line("generate and write (not part of the target)", generation)
    return venue


def stage_cli(args: argparse.Namespace) -> None:
    venue = ensure_venue(args)
    with tempfile.TemporaryDirectory() as scratch:
        output = Path(scratch) / "scores.csv"
        command = [
            sys.executable,
            "-m",
            "reviewer_recommender.cli.main",
            "score",
            "--archives",
            str(venue / "archives"),
            "--submissions",
            str(venue / "submissions.json"),
            "--method",
            "tfidf",
            "--top-k",
            str(args.top_k),
            "--output",
            str(output),
        ]
        print(f"[cli] recommender score --method tfidf --top-k {args.top_k} ({venue})", flush=True)
        load = os.getloadavg()[0]
        child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        with measured(psutil.Process(child.pid)) as run:
            out, _ = child.communicate()
        if child.returncode:
            raise SystemExit(f"recommender score failed with exit code {child.returncode}")
        rows = sum(1 for _ in output.open(encoding="utf-8")) - 1
    print(f"  {out.strip()}")
    _line("end to end (reading and writing included)", run, f"{rows} pairs written")
    verdict = run.seconds < TARGET_SECONDS and run.peak_bytes < TARGET_BYTES
    print(
        f"  target < {TARGET_SECONDS} s and < {TARGET_BYTES / GIB:.0f} GiB: "
        f"{'met' if verdict else 'NOT met'} ({run.seconds / TARGET_SECONDS:.2f} of the time, "
        f"{run.peak_bytes / TARGET_BYTES:.2f} of the memory; load average {load:.1f} on "
        f"{os.cpu_count()} cores at the start)"
    )


def stage_steps(args: argparse.Namespace) -> None:
    from recommender.io import read_reviewers, read_submissions

    venue = ensure_venue(args)
    print(f"[stages] load average {os.getloadavg()[0]:.1f}", flush=True)
    with measured() as reading:
        reviewers = read_reviewers(venue / "archives")
        submissions = read_submissions(venue / "submissions.json")
    n_pubs = sum(len(r.publications) for r in reviewers)
    _line("read archives + submissions", reading, f"{n_pubs} publications")
    texts = [p.text for r in reviewers for p in r.publications] + [s.text for s in submissions]
    workers = RunOptions.from_env().workers
    seconds = {}
    for count in sorted({1, workers}):
        with measured() as fitting:
            TfidfProfiler(workers=count).fit_transform(texts)
        seconds[count] = fitting.seconds
        _line(f"TF-IDF fit + transform, {count} counting process(es)", fitting)
    if workers > 1:
        print(f"  fit speed-up with {workers} processes: x{seconds[1] / seconds[workers]:.2f}")
    del texts
    params = ScoringParams(method="tfidf")
    options = RunOptions(
        workers=workers,
        keep_full_matrix=False,
        keep_per_paper=args.top_k,
        keep_per_reviewer=args.top_k,
    )
    model = AffinityModel(params, options).fit(reviewers, submissions)
    del reviewers
    sample = min(args.sample_papers, len(submissions))
    # The previous method: every publication is a column (publication channels, offsets).
    (channel,), intercept = model.affine_channels()
    every_publication: dict[str, Any] = {
        "paper_vectors": [Channel(channel.paper_vectors[:sample], channel.publication_vectors)],
        "publication_vectors": None,
        "offsets": model.offsets_,
        "params": params,
        "intercept": intercept,
        "k_per_paper": args.top_k,
        "k_per_reviewer": args.top_k,
        "keep_dense": False,
    }
    # Now: one mean profile per reviewer (what model.affinity() does for mean aggregation).
    profiles = model.blockwise_options()
    (profile,) = profiles["paper_vectors"]
    mean_profiles = {
        **profiles,
        "paper_vectors": [Channel(profile.paper_vectors[:sample], profile.publication_vectors)],
    }
    with measured() as old:
        blockwise_affinity(**every_publication)
    with measured() as new:
        blockwise_affinity(**mean_profiles)
    scale = len(submissions) / sample
    _line(f"score {sample} papers x every publication", old, f"venue ~{old.seconds * scale:.0f} s")
    _line(
        f"score {sample} papers x reviewer mean profiles",
        new,
        f"venue ~{new.seconds * scale:.0f} s; x{old.seconds / new.seconds:.1f} faster",
    )
    with measured() as scoring:
        affinity = model.affinity()
    _line("score the venue (mean profiles, top-K kept)", scoring)
    with tempfile.TemporaryDirectory() as scratch:
        with measured() as frames, open(Path(scratch) / "a.csv", "w", encoding="utf-8") as out:
            for frame in affinity.iter_frames(top_k=args.top_k):
                frame.to_csv(out, index=False, header=False, float_format="%.6g")
        with measured() as direct, open(Path(scratch) / "b.csv", "w", encoding="utf-8") as out:
            for text in affinity.iter_csv(top_k=args.top_k):
                out.write(text)
        same = (Path(scratch) / "a.csv").read_bytes() == (Path(scratch) / "b.csv").read_bytes()
    _line("top-K CSV with DataFrame.to_csv", frames)
    _line(
        "top-K CSV with Affinity.iter_csv",
        direct,
        f"x{frames.seconds / direct.seconds:.1f} faster, identical bytes: {same}",
    )


def _vectors(corpus: Corpus) -> tuple[Any, Any, np.ndarray, TfidfProfiler]:
    pub_texts = [p.text for r in corpus.reviewers for p in r.publications]
    sub_texts = [s.text for s in corpus.submissions]
    profiler = TfidfProfiler()
    vectors = profiler.fit_transform(pub_texts + sub_texts)  # tokenises each text once
    counts = [len(r.publications) for r in corpus.reviewers]
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return vectors[len(pub_texts) :], vectors[: len(pub_texts)], offsets, profiler


def stage_dask(args: argparse.Namespace, config: ScoringParams) -> None:
    shape = VenueShape(n_papers=args.dask_papers, n_reviewers=args.dask_reviewers)
    corpus = synthetic_venue_corpus(shape, seed=2)
    papers, pubs, offsets, _ = _vectors(corpus)
    del corpus
    pairs = papers.shape[0] * pubs.shape[0]
    print(
        f"[dask] {papers.shape[0]} papers x {len(offsets) - 1} reviewers = {pairs:.3g} pairs;"
        f" cores {os.cpu_count()}, load {os.getloadavg()[0]:.2f}"
    )
    options: dict[str, Any] = {"params": config, "paper_block": 256, "keep_dense": False}
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
                remote = dask_blockwise_affinity(
                    papers, pubs, offsets, client=client, blas_threads=1, **options
                )
        finally:
            context.__exit__(None, None, None)
        assert np.array_equal(remote.by_paper.indices, local.by_paper.indices)
        rates[workers] = pairs / run.seconds
        _line(
            f"dask LocalCluster {workers} worker(s) x 1 thread",
            run,
            f"{rates[workers] / 1e6:.0f} M pairs/s (cluster start {start.seconds:.1f} s "
            "not included)",
        )
    per_worker = rates[2] / 2
    print(
        f"  scaling 1 -> 2 workers: x{rates[2] / rates[1]:.2f}; per-worker rate "
        f"r = {per_worker / 1e6:.1f} M pairs/s (2-worker run / 2)"
    )
    full_pairs = 19525 * 18054 * 20
    print(
        f"  projection: T(N machines x c cores) ~ T_prep + P*Q / (N*c*r) = T_prep + "
        f"{full_pairs:.3g} / (N*c*{per_worker:.3g}) s; e.g. N=4, c=16: "
        f"{full_pairs / (4 * 16 * per_worker):.0f} s + T_prep (TF-IDF fit/transform, "
        f"plan broadcast)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--stages", default="cli,stages")
    parser.add_argument(
        "--venue",
        type=Path,
        default=Path(tempfile.gettempdir()) / "recommender-iclr-synthetic",
        help="folder of the synthetic venue (written on first use)",
    )
    parser.add_argument("--papers", type=int, default=19_525)
    parser.add_argument("--reviewers", type=int, default=18_054)
    parser.add_argument("--top-k", type=int, default=100)
    parser.add_argument("--sample-papers", type=int, default=1024)
    parser.add_argument("--aggregation", default=ScoringParams().aggregation)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--dask-papers", type=int, default=2048)
    parser.add_argument("--dask-reviewers", type=int, default=4000)
    args = parser.parse_args()
    print(
        f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores "
        "(machine shared: figures are upper bounds)"
    )
    config = ScoringParams(method="tfidf", aggregation=args.aggregation, k=args.k)
    stages = {
        "cli": lambda: stage_cli(args),
        "stages": lambda: stage_steps(args),
        "dask": lambda: stage_dask(args, config),
    }
    for name in args.stages.split(","):
        stages[name]()


if __name__ == "__main__":
    main()
