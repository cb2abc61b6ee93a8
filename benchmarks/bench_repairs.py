"""Repairs of a paper (issue 23, point 2) on a stored venue at scale, against the alternates
view the page already loads for the same paper, in the same run.

A synthetic venue is stored in a SQLite database (``--db``, a temporary file by default):
``--papers`` x ``--reviewers``, ``--top`` stored scores per paper (random, the paper's
assigned reviewers among them), a draft where every paper has ``--per-paper`` reviewers and
every reviewer is at their quota (the tight case where the alternates come back empty).
Then, for the ``--probe`` weakest papers:

- baseline: :func:`reviewer_recommender.services.runs.paper_view` with 5 alternates;
- :func:`reviewer_recommender.services.repairs.find_repairs` (the flow solver on each better
  candidate's neighbourhood), reading only the pairs the repairs touch; with ``--baseline``
  also with ``whole=True`` (the whole draft read first, the earlier way), the answers
  checked equal;
- :func:`reviewer_recommender.services.draft_rules.run_limits` against
  :func:`reviewer_recommender.services.limits.resolve_limits` (what reading a draft's own
  rules adds to every view of it).

Each figure is the median of ``--repeat`` calls; the machine may be shared (the load average
is printed).

    python -m benchmarks.bench_repairs [--papers 10000 --reviewers 10000 --db /tmp/rep.db]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import insert

from reviewer_recommender.services import draft_rules, repairs
from reviewer_recommender.services.limits import resolve_limits
from reviewer_recommender.services.runs import paper_view
from reviewer_recommender.storage.db import Database, migrate
from reviewer_recommender.storage.models import (
    AffinityRun,
    AffinityScore,
    AssignmentPair,
    AssignmentRow,
    ReviewerRow,
    SubmissionRow,
    Venue,
)

CHUNK = 20_000


def build(database: Database, papers: int, reviewers: int, per_paper: int, top: int) -> int:
    """Store the venue; the draft's id."""
    rng = np.random.default_rng(7)
    paper_ids = [f"P{i:06d}" for i in range(papers)]
    reviewer_ids = [f"R{j:06d}" for j in range(reviewers)]
    max_load = int(np.ceil(papers * per_paper / reviewers))
    with database.session() as session:
        session.add(Venue(id="bench", name="bench"))
        session.flush()
        session.execute(
            insert(ReviewerRow),
            [{"venue_id": "bench", "id": r, "name": f"Reviewer {r}"} for r in reviewer_ids],
        )
        session.execute(
            insert(SubmissionRow),
            [{"venue_id": "bench", "id": p, "title": f"Paper {p}"} for p in paper_ids],
        )
        run = AffinityRun(
            venue_id="bench", config={}, n_papers=papers, n_reviewers=reviewers, top_n=top
        )
        session.add(run)
        session.flush()
        # each paper: its assigned reviewers (consecutive, so every reviewer is at quota)
        # and random others, with random scores
        assigned = (np.arange(papers)[:, None] * per_paper + np.arange(per_paper)) % reviewers
        others = rng.integers(0, reviewers, size=(papers, top))
        candidates = np.concatenate([assigned, others], axis=1)
        scores = rng.random(candidates.shape).astype(np.float32)
        rows = []
        for i in range(papers):
            seen = dict.fromkeys(int(j) for j in candidates[i])
            rows += [
                {
                    "run_id": run.id,
                    "paper_id": paper_ids[i],
                    "reviewer_id": reviewer_ids[j],
                    "score": float(s),
                }
                for j, s in zip(seen, scores[i][: len(seen)], strict=False)
            ]
        for start in range(0, len(rows), CHUNK):
            session.execute(insert(AffinityScore), rows[start : start + CHUNK])
        score_of = {(r["paper_id"], r["reviewer_id"]): r["score"] for r in rows}
        draft = AssignmentRow(
            venue_id="bench",
            number=1,
            affinity_run_id=run.id,
            state="draft",
            parameters={"reviewers_per_paper": per_paper, "max_load": max_load, "min_load": 0},
            summary={},
        )
        session.add(draft)
        session.flush()
        pairs = [
            {
                "assignment_id": draft.id,
                "paper_id": paper_ids[i],
                "reviewer_id": reviewer_ids[int(j)],
                "score": score_of[(paper_ids[i], reviewer_ids[int(j)])],
                "pinned": False,
            }
            for i in range(papers)
            for j in assigned[i]
        ]
        for start in range(0, len(pairs), CHUNK):
            session.execute(insert(AssignmentPair), pairs[start : start + CHUNK])
        session.commit()
        return int(draft.id)


def median_seconds(call: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=10_000)
    parser.add_argument("--reviewers", type=int, default=10_000)
    parser.add_argument("--per-paper", type=int, default=3)
    parser.add_argument("--top", type=int, default=50, help="stored scores per paper")
    parser.add_argument("--probe", type=int, default=3, help="weakest papers timed")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--baseline", action="store_true", help="also time the whole-draft read (and compare)"
    )
    parser.add_argument("--db", type=Path, default=None, help="SQLite file (default: temporary)")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="bench-repairs-")
    path = args.db or Path(folder) / "venue.db"
    database = Database(f"sqlite:///{path}")
    migrate(database.engine)
    start = time.perf_counter()
    draft_id = build(database, args.papers, args.reviewers, args.per_paper, args.top)
    print(
        f"venue: {args.papers} papers x {args.reviewers} reviewers, {args.per_paper} per "
        f"paper, {args.top} stored scores per paper, every reviewer at quota; stored in "
        f"{time.perf_counter() - start:.1f} s; load average {os.getloadavg()[0]:.2f}"
    )
    with database.session() as session:
        row = session.get(AssignmentRow, draft_id)
        assert row is not None
        pairs = repairs.Draft.read(session, row).pairs
        weakest = list(pairs.groupby("paper_id")["score"].mean().nsmallest(args.probe).index)
        for paper in weakest:
            base, view = median_seconds(partial(paper_view, session, row, paper, 5), args.repeat)
            took, found = median_seconds(
                partial(repairs.find_repairs, session, row, paper), args.repeat
            )
            whole_note = ""
            if args.baseline:
                slow, reference = median_seconds(
                    partial(repairs.find_repairs, session, row, paper, whole=True), args.repeat
                )
                assert reference == found, f"{paper}: the two reads disagree"
                whole_note = f"; whole draft read {slow * 1000:.0f} ms ({slow / took:.1f}x)"
            feasible = [i for i in found["items"] if i["feasible"]]
            best = max((i["paper_change"] for i in feasible), default=0.0)
            print(
                f"{paper}: alternates view {base * 1000:.0f} ms ({len(view.alternates)} "
                f"alternates); repairs {took * 1000:.0f} ms ({len(feasible)} within quotas, "
                f"best +{best:.3f} on the paper) = {took / base:.1f}x the alternates view"
                f"{whole_note}"
            )
        plain, _ = median_seconds(
            lambda: resolve_limits(
                session, row.venue_id, {**(row.parameters or {}), "pool": row.pool}
            ),
            args.repeat * 3,
        )
        own, _ = median_seconds(lambda: draft_rules.run_limits(session, row), args.repeat * 3)
        print(
            f"limits of the draft: venue only {plain * 1000:.1f} ms, with its own rules "
            f"{own * 1000:.1f} ms ({own / plain:.2f}x)"
        )
    database.dispose()
    if args.db is None:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
