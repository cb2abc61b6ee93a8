"""How often a long scoring step reports its progress: the gaps between two reports of
blockwise scoring, now (every ``REPORT_SECONDS`` as publication blocks finish) against the
earlier way (one report per paper block), in the same run.

Random unit embeddings (384 dims) of ``--papers`` papers against ``--reviewers`` reviewers
with ``--pubs`` publications each, top-3 aggregation (not linear: every publication is
compared, as with the default), paper blocks sized as a run sizes them
(:meth:`RunOptions.paper_block_for`). Prints the scoring time, the number of reports and
the longest gap between two reports (the start and the end included), and the longest
paper block (the earlier way's gap: it reported only when a paper block finished).

    python -m benchmarks.bench_scoring_progress --papers 2000 --reviewers 3000 --pubs 20

Measured (2 shared cores, load average 6): 2,000 papers x 18,000 reviewers x 20
publications (ICLR-size reviewers, paper block 1,864): 29.4 s of scoring, 15 reports, the
longest gap 3.4 s (mean 2.1 s; the longest is preparing the publication blocks, before the
first paper), against 25.0 s of silence per paper block the earlier way.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from recommender.affinity.blockwise import blockwise_affinity
from recommender.affinity.options import PUBLICATION_BLOCK, RunOptions
from recommender.affinity.params import ScoringParams
from recommender.progress import ProgressStage


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    rows = rng.normal(size=(n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=2000)
    parser.add_argument("--reviewers", type=int, default=3000)
    parser.add_argument("--pubs", type=int, default=20, help="publications per reviewer")
    parser.add_argument("--dim", type=int, default=384)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    papers = unit_rows(rng, args.papers, args.dim)
    pubs = unit_rows(rng, args.reviewers * args.pubs, args.dim)
    offsets = np.arange(0, args.reviewers * args.pubs + 1, args.pubs)
    paper_block = RunOptions().paper_block_for(args.reviewers)
    stamps: list[tuple[float, float, str]] = []
    block_ends: list[float] = []

    def progress(fraction: float, stage: str) -> None:
        now = time.monotonic()
        if isinstance(stage, ProgressStage):
            stamps.append((now, fraction, str(stage)))
        elif stage.startswith("preparing"):
            stamps.append((now, fraction, stage))
        detail = getattr(stage, "detail", None)
        if detail is not None and getattr(detail, "blocks_done", 0) > len(block_ends):
            block_ends.append(now)

    start = time.monotonic()
    blockwise_affinity(
        papers,
        pubs,
        offsets,
        params=ScoringParams(method="embedding", aggregation="topk", k=3),
        paper_block=paper_block,
        publication_block=PUBLICATION_BLOCK,
        keep_dense=False,
        progress=progress,
    )
    seconds = time.monotonic() - start
    times = [t for t, _, _ in stamps]
    gaps = np.diff(times)
    scoring_start = stamps[1][0] if len(stamps) > 1 else start
    block_times = np.diff([scoring_start, *block_ends])
    print(
        f"{args.papers:,} papers x {args.reviewers:,} reviewers x {args.pubs} publications, "
        f"paper block {paper_block}, load average {os.getloadavg()[0]:.1f}"
    )
    print(f"scoring: {seconds:.1f} s, {len(stamps)} progress reports")
    print(f"now: longest gap between two reports {gaps.max():.2f} s (mean {gaps.mean():.2f} s)")
    print(
        f"earlier (one report per paper block): longest gap {block_times.max():.2f} s "
        f"over {len(block_times)} paper blocks"
    )
    print(f"last report: {stamps[-1][2]}")
    if len(stamps) > 3:
        print(f"a report midway: {stamps[len(stamps) // 2][2]}")


if __name__ == "__main__":
    main()
