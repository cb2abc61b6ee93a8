"""Records at scale: a page of 25 records (plain, filtered by text, by status) and an upload's
diff preview, on a venue of ``--papers`` papers and as many reviewers (3 publications each).

The venue is stored through the service's own uploads (SQLite in a temporary folder by
default), then each endpoint is timed through the app in-process (median of ``--repeat``
calls). The replacing files differ from the stored records in a realistic way: 1% changed,
0.5% left out, 0.2% new. Baseline in the same run: ``GET /venues/{v}`` (authentication,
one venue row), so each figure is also a ratio to it.

    python benchmarks/bench_records.py [--papers 10000] [--repeat 5] [--database-url URL]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fastapi.testclient import TestClient  # noqa: E402

from api.app import create_app  # noqa: E402
from reviewer_recommender.services.tokens import create_token  # noqa: E402
from reviewer_recommender.settings import Settings  # noqa: E402

WORDS = [
    "graph",
    "neural",
    "network",
    "learning",
    "vision",
    "language",
    "policy",
    "model",
    "data",
    "robust",
]


def _text(i: int, n: int = 12) -> str:
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(n))


def submissions(n: int, changed: int = 0, left_out: int = 0, new: int = 0) -> list[dict[str, Any]]:
    rows = [
        {
            "id": f"p{i}",
            "title": f"Paper {i}: {_text(i, 6)}" + (" (revised)" if i < changed else ""),
            "abstract": _text(i, 60),
            "authors": [f"Author {i}", f"Author {i + 1}"],
        }
        for i in range(left_out, n)
    ]
    return rows + [
        {"id": f"new{i}", "title": f"New {i}", "abstract": _text(i, 60)} for i in range(new)
    ]


def reviewers(n: int, changed: int = 0, left_out: int = 0, new: int = 0) -> list[dict[str, Any]]:
    def person(rid: str, i: int, name: str) -> dict[str, Any]:
        return {
            "id": rid,
            "name": name,
            "email": f"r{i}@example.org",
            "affiliation": f"Lab {i % 300}",
            "publications": [
                {"title": f"Work {i}.{k}", "abstract": _text(i + k, 40), "year": 2020 + k}
                for k in range(3)
            ],
        }

    rows = [
        person(f"Reviewer_Number{i}", i, f"Reviewer {i}" + (" Jr" if i < changed else ""))
        for i in range(left_out, n)
    ]
    return rows + [person(f"Newcomer{i}", i, f"Newcomer {i}") for i in range(new)]


def timed(call: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        response = call()
        times.append(time.perf_counter() - start)
        assert response.status_code < 300, response.text[:500]
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    n = args.papers
    with tempfile.TemporaryDirectory() as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'bench.db'}"
        app = create_app(Settings(database_url=url, data_dir=Path(folder), inline_jobs=True))
        with TestClient(app) as client:
            admin = create_token(app.state.database, name="bench", role="admin")
            client.headers["Authorization"] = f"Bearer {admin}"
            venue = "bench-records"
            assert client.post("/venues", json={"id": venue, "name": venue}).status_code == 201
            base = f"/venues/{venue}"
            start = time.perf_counter()
            for kind, rows in (("submissions", submissions(n)), ("reviewers", reviewers(n))):
                response = client.post(f"{base}/{kind}", content=json.dumps(rows).encode())
                assert response.status_code == 200, response.text[:500]
            print(f"stored {n:,} papers and {n:,} reviewers in {time.perf_counter() - start:.1f} s")
            for i in range(0, n, 100):  # 1% withdrawn
                client.post(f"{base}/submissions/p{i}/withdraw", json={"reason": "bench"})

            r = args.repeat
            figures: list[tuple[str, float]] = []
            baseline = timed(lambda: client.get(base), r)
            figures.append(("GET venue (baseline)", baseline))
            pages: list[tuple[str, str, dict[str, Any]]] = [
                ("page of 25 submissions", f"{base}/submissions", {"limit": 25, "offset": 5000}),
                ("... filtered by text", f"{base}/submissions", {"limit": 25, "q": "paper 99"}),
                ("... withdrawn only", f"{base}/submissions", {"limit": 25, "status": "withdrawn"}),
                ("page of 25 reviewers", f"{base}/reviewers", {"limit": 25, "pool": "reviewers"}),
                ("... filtered by text", f"{base}/reviewers", {"limit": 25, "q": "reviewer 12"}),
            ]
            for label, path, params in pages:
                figures.append((label, timed(partial(client.get, path, params=params), r)))
            files = {
                "submissions": json.dumps(
                    dict((s["id"], s) for s in submissions(n, n // 100, n // 200, n // 500))
                ).encode(),
                "reviewers": json.dumps(reviewers(n, n // 100, n // 200, n // 500)).encode(),
            }
            for kind, content in files.items():
                path = f"{base}/{kind}/upload/preview"
                upload = {"file": (f"{kind}.json", content, "application/json")}
                label = f"upload diff of {n:,} {kind} ({len(content) / 1e6:.1f} MB)"
                figures.append((label, timed(partial(client.post, path, files=upload), r)))
            diff = client.post(
                f"{base}/submissions/upload/preview",
                files={"file": ("submissions.json", files["submissions"], "application/json")},
            ).json()
            print(
                f"submissions diff: {diff['added']} added, {diff['changed']} changed, "
                f"{diff['unchanged']} unchanged, {diff['removed']} not in the file"
            )
            start = time.perf_counter()
            applied = client.post(
                f"{base}/submissions/upload",
                params={"preview": diff["token"], "withdraw_absent": "true"},
                files={"file": ("submissions.json", files["submissions"], "application/json")},
            )
            assert applied.status_code == 200, applied.text[:500]
            figures.append(("apply the previewed submissions", time.perf_counter() - start))
            figures.append(
                (
                    "withdraw a paper",
                    timed(lambda: client.post(f"{base}/submissions/p1/withdraw", json={}), 1),
                )
            )
    print(f"\n{'':42} {'median ms':>10} {'x baseline':>11}")
    for label, seconds in figures:
        print(f"{label:42} {seconds * 1000:10.1f} {seconds / baseline:11.1f}")


if __name__ == "__main__":
    main()
