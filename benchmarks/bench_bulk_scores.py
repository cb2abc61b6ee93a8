"""A bulk change file's non-candidate pairs (issue 23, scale): the preview of a file of
``--rows`` additions of pairs the affinity run did not store, on a venue scored with a
saved TF-IDF model, and the scoring inside it: the pairs scored at once
(:meth:`recommender.affinity.model.AffinityModel.pair_scores`, what the bulk path does)
against one explanation each (the earlier path, the baseline), in the same run, the scores
checked equal. The preview is also timed the earlier way (each row's limits and obstacles
read and each pair explained one by one: the bulk module's batching replaced by no-ops),
interleaved.

The venue (``--papers`` x ``--reviewers``, 3 synthetic publications each,
benchmarks/synthetic_venue.py) is written into a temporary SQLite database, scored through
the API (inline job, ``--top`` stored scores per paper) and solved (3 per paper).

    python -m benchmarks.bench_bulk_scores [--papers 10000 --reviewers 10000 --rows 200]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any
from unittest.mock import patch

import numpy as np
from fastapi.testclient import TestClient
from sqlalchemy import insert, select

from api.app import create_app
from benchmarks.synthetic_venue import VenueShape, synthetic_venue_corpus
from reviewer_recommender.services import bulk
from reviewer_recommender.services.tokens import create_token
from reviewer_recommender.settings import Settings
from reviewer_recommender.storage.models import (
    AffinityRun,
    AffinityScore,
    PoolMember,
    ReviewerRow,
    SubmissionRow,
    Venue,
)
from reviewer_recommender.storage.repository import reviewer_to_row, submission_to_row

VENUE = "bulk"


def store_venue(database: object, papers: int, reviewers: int) -> None:
    corpus = synthetic_venue_corpus(
        VenueShape(
            n_papers=papers,
            n_reviewers=reviewers,
            pubs_per_reviewer=3,
            n_topics=100,
            min_words=40,
            max_words=80,
        )
    )
    with database.session() as session:  # type: ignore[attr-defined]
        session.add(Venue(id=VENUE, name="bulk bench"))
        session.flush()
        subs = [submission_to_row(VENUE, s) for s in corpus.submissions]
        people = [reviewer_to_row(VENUE, r) for r in corpus.reviewers]
        for start in range(0, max(len(subs), len(people)), 5000):
            if subs[start : start + 5000]:
                session.execute(insert(SubmissionRow), subs[start : start + 5000])
            if people[start : start + 5000]:
                session.execute(insert(ReviewerRow), people[start : start + 5000])
                session.execute(
                    insert(PoolMember),
                    [
                        {"venue_id": VENUE, "pool": "reviewers", "person_id": p["id"]}
                        for p in people[start : start + 5000]
                    ],
                )
        session.commit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=10_000)
    parser.add_argument("--reviewers", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bulk.db'}"
        app = create_app(Settings(database_url=url, data_dir=Path(tmp), inline_jobs=True))
        with TestClient(app) as client:
            database = app.state.database
            headers = {"Authorization": f"Bearer {create_token(database, name='b', role='admin')}"}
            started = time.perf_counter()
            store_venue(database, args.papers, args.reviewers)
            base = f"/venues/{VENUE}"
            job = client.post(
                f"{base}/affinity/jobs",
                headers=headers,
                json={"config": {"method": "tfidf", "aggregation": "max"}, "top_n": args.top},
            ).json()
            assert job["state"] == "succeeded", job
            max_load = math.ceil(3 * args.papers / args.reviewers) + 2
            job = client.post(
                f"{base}/assignments",
                headers=headers,
                json={"reviewers_per_paper": 3, "max_load": max_load, "solver": "flow"},
            ).json()
            assert job["state"] == "succeeded", job
            draft = int(job["result"]["assignment_id"])
            print(
                f"{args.papers} papers x {args.reviewers} reviewers (3 publications each), "
                f"TF-IDF, {args.top} stored per paper; built, scored and solved in "
                f"{time.perf_counter() - started:.0f} s; load average {os.getloadavg()[0]:.1f}"
            )
            with database.session() as session:
                run = session.scalars(
                    select(AffinityRun).where(AffinityRun.venue_id == VENUE)
                ).one()
                papers = [
                    str(p)
                    for p in session.scalars(select(SubmissionRow.id).order_by(SubmissionRow.id))
                ]
                people = [
                    str(r) for r in session.scalars(select(ReviewerRow.id).order_by(ReviewerRow.id))
                ]
                stored = set(
                    session.execute(
                        select(AffinityScore.paper_id, AffinityScore.reviewer_id).where(
                            AffinityScore.run_id == run.id
                        )
                    ).all()
                )
                pairs = []
                for i in range(len(papers)):
                    pair = (papers[i], people[(i * 7919 + len(people) // 2) % len(people)])
                    if pair not in stored:
                        pairs.append(pair)
                    if len(pairs) == args.rows:
                        break
                model, _ = app.state.explainers.model(session, run)
            file = "".join(f"{p},{r},add\n" for p, r in pairs).encode()

            def preview_seconds() -> tuple[float, Any]:
                start = time.perf_counter()
                response = client.post(
                    f"{base}/assignments/{draft}/bulk/preview",
                    headers=headers,
                    files={"file": ("c.csv", file)},
                )
                assert response.status_code == 200, response.text[:300]
                return time.perf_counter() - start, response

            times, earlier = [], []
            for _ in range(args.repeat):
                took, response = preview_seconds()
                times.append(took)
                with (
                    patch.object(bulk, "score_batch", lambda *a, **k: nullcontext()),
                    patch.object(bulk, "limits_held", lambda *a, **k: nullcontext()),
                    patch.object(bulk, "first_additions_held", lambda *a, **k: nullcontext()),
                ):
                    took, slow = preview_seconds()
                earlier.append(took)
                assert slow.json()["additions"] == response.json()["additions"]
            preview = response.json()
            assert preview["applied_rows"] == len(pairs), preview["errors"]
            at_once = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                batch = model.pair_scores(
                    np.array([model.paper_index(p) for p, _ in pairs]),
                    np.array([model.reviewer_index(r) for _, r in pairs]),
                )
                at_once.append(time.perf_counter() - start)
            start = time.perf_counter()
            one_by_one = [model.explain(p, r).score for p, r in pairs]
            explained = time.perf_counter() - start
            assert np.array_equal(batch, np.array(one_by_one, dtype=np.float32))
            fast = statistics.median(at_once)
            now, before = statistics.median(times), statistics.median(earlier)
            print(
                f"preview of {len(pairs)} non-candidate additions: {now * 1000:.0f} ms; the "
                f"earlier way {before * 1000:.0f} ms = {before / now:.1f}x (medians of "
                f"{args.repeat}, interleaved; the same additions and scores)"
            )
            print(
                f"scoring them: at once {fast * 1000:.1f} ms; one explanation each (the "
                f"earlier path) {explained * 1000:.0f} ms = {explained / fast:.0f}x; scores equal"
            )


if __name__ == "__main__":
    main()
