"""The chair page's endpoints on a venue of ICLR size (SQLite by default).

Builds one venue directly in the database: ``--papers`` papers and as many reviewers, 10
stored candidates per paper, a draft of 3 reviewers per paper and a second draft missing
1,000 papers' pairs (for the comparison), then times each endpoint through the app
in-process (median of ``--repeat`` calls; edits are timed once each, as a chair makes
them). Baseline in the same run: ``GET /venues/{v}`` (authentication, one venue row), so
each figure is also a ratio to it.

    python benchmarks/bench_page_api.py [--papers 20000] [--repeat 3] [--database-url URL]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import insert

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fastapi.testclient import TestClient  # noqa: E402

from api.app import create_app  # noqa: E402
from recommender.corpus import Reviewer, Submission  # noqa: E402
from reviewer_recommender.services.tokens import create_token  # noqa: E402
from reviewer_recommender.settings import Settings  # noqa: E402
from reviewer_recommender.storage.models import (  # noqa: E402
    AffinityRun,
    AffinityScore,
    AssignmentPair,
    AssignmentRow,
    ReviewerRow,
    SubmissionRow,
    Venue,
)
from reviewer_recommender.storage.repository import reviewer_to_row, submission_to_row  # noqa: E402


def build(database: Any, venue: str, n: int) -> tuple[int, int]:
    rng = np.random.default_rng(0)
    with database.session() as s:
        s.add(Venue(id=venue, name=venue))
        s.flush()
        papers = [
            submission_to_row(venue, Submission(id=f"p{i}", title=f"Paper title {i}", abstract=""))
            for i in range(n)
        ]
        people = [reviewer_to_row(venue, Reviewer(id=f"Reviewer_Number{i}")) for i in range(n)]
        for start in range(0, n, 5000):
            s.execute(insert(SubmissionRow), papers[start : start + 5000])
            s.execute(insert(ReviewerRow), people[start : start + 5000])
        run = AffinityRun(venue_id=venue, n_papers=n, n_reviewers=n, top_n=10)
        s.add(run)
        s.flush()
        scores = [
            {
                "run_id": run.id,
                "paper_id": f"p{i}",
                "reviewer_id": f"Reviewer_Number{(i + k * 7) % n}",
                "score": float(rng.random()),
                "requested": False,
            }
            for i in range(n)
            for k in range(10)
        ]
        for start in range(0, len(scores), 20000):
            s.execute(insert(AffinityScore), scores[start : start + 20000])
        parameters = {"reviewers_per_paper": 3, "max_load": 6}
        runs = []
        for number, keep in ((1, n), (2, n - 1000)):
            row = AssignmentRow(
                venue_id=venue,
                number=number,
                affinity_run_id=run.id,
                state="draft",
                parameters=parameters,
                summary={"objective": 0.0, "upper_bound": float(n * 3)},
            )
            s.add(row)
            s.flush()
            pairs = [
                {
                    "assignment_id": row.id,
                    "paper_id": f"p{i}",
                    "reviewer_id": f"Reviewer_Number{(i + k * 7) % n}",
                    "score": 0.5,
                    "pinned": False,
                }
                for i in range(keep)
                for k in range(3)
            ]
            for start in range(0, len(pairs), 20000):
                s.execute(insert(AssignmentPair), pairs[start : start + 20000])
            runs.append(row.id)
        s.commit()
    return runs[0], runs[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    n = args.papers
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or f"sqlite:///{Path(tmp) / 'page.db'}"
        app = create_app(Settings(database_url=url, data_dir=Path(tmp), inline_jobs=True))
        with TestClient(app) as client:
            database = app.state.database
            headers = {"Authorization": f"Bearer {create_token(database, name='b', role='admin')}"}
            venue = f"bench-{uuid.uuid4().hex[:6]}"
            started = time.perf_counter()
            a, b = build(database, venue, n)
            print(
                f"{n} papers x {n} reviewers, {10 * n} stored candidates, {3 * n} assigned "
                f"pairs; built in {time.perf_counter() - started:.1f} s"
            )
            base = f"/venues/{venue}/assignments/{a}"

            def timed(method: str, path: str, repeat: int, **kwargs: Any) -> float:
                times = []
                for _ in range(repeat):
                    start = time.perf_counter()
                    response = client.request(method, path, headers=headers, **kwargs)
                    times.append(time.perf_counter() - start)
                    assert response.status_code < 400, (path, response.text[:300])
                return statistics.median(times) * 1000

            baseline = timed("GET", f"/venues/{venue}", args.repeat)
            swap = {
                "action": "swap",
                "paper_id": "p5",
                "reviewer_id": f"Reviewer_Number{(5 + 7 * 7) % n}",
                "remove_reviewer_id": "Reviewer_Number5",
            }
            bulk = "".join(f"p{i},Reviewer_Number{(i + 21) % n},add\n" for i in range(200))
            reads: list[tuple[str, str, str, dict[str, Any]]] = [
                ("venue (baseline)", "GET", f"/venues/{venue}", {}),
                (
                    "search papers",
                    "GET",
                    f"/venues/{venue}/search/papers",
                    {"params": {"q": "title 12"}},
                ),
                (
                    "search reviewers",
                    "GET",
                    f"/venues/{venue}/search/reviewers",
                    {"params": {"q": "number 99"}},
                ),
                ("paper edges", "GET", f"{base}/papers/p5/edges", {}),
                ("reviewer edges", "GET", f"{base}/reviewers/Reviewer_Number5/edges", {}),
                (
                    "papers below demand",
                    "GET",
                    f"{base}/papers",
                    {"params": {"below_demand": True}},
                ),
                ("reviewers by load", "GET", f"{base}/reviewers", {"params": {"sort": "load"}}),
                ("histogram", "GET", f"{base}/histogram", {}),
                ("compare summary", "GET", f"{base}/compare/{b}", {}),
                ("compare pairs", "GET", f"{base}/compare/{b}/pairs", {}),
                ("capacity", "GET", f"/venues/{venue}/capacity", {}),
                ("swap preview", "POST", f"{base}/edits/preview", {"json": swap}),
            ]
            print(f"{'endpoint':24} {'ms':>8} {'x baseline':>11}")
            for label, method, path, kwargs in reads:
                ms = timed(method, path, args.repeat, **kwargs)
                print(f"{label:24} {ms:8.0f} {ms / baseline:11.1f}")
            once: list[tuple[str, str, str, dict[str, Any]]] = [
                ("swap apply", "POST", f"{base}/edits", {"json": swap}),
                ("undo", "POST", f"{base}/undo", {"json": {"version": 2}}),
                (
                    "bulk preview, 200 rows",
                    "POST",
                    f"{base}/bulk/preview",
                    {"files": {"file": ("c.csv", bulk.encode())}},
                ),
                (
                    "bulk apply, 200 rows",
                    "POST",
                    f"{base}/bulk/apply",
                    {
                        "files": {"file": ("c.csv", bulk.encode())},
                        "data": {"version": "3", "force": "true"},
                    },
                ),
            ]
            for label, method, path, kwargs in once:
                ms = timed(method, path, 1, **kwargs)
                print(f"{label:24} {ms:8.0f} {ms / baseline:11.1f}")


if __name__ == "__main__":
    main()
