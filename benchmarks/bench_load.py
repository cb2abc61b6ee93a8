"""Many venues, many clients: 5xx count and tail latencies under a mixed load.

Starts ``uvicorn`` on a free loopback port (default settings: two job workers, fair across
venues) with a fresh SQLite database (or ``--database-url``, e.g. PostgreSQL), sets up three
venues through the API (uploads, an affinity job, a solve, a deploy): one big synthetic
venue (``--papers`` x ``--reviewers``, 5,000 x 4,000 by default, generated with
``benchmarks/synthetic_venue.py``) and two small ones. Then it runs two phases of
``--minutes``/2 each with ``--clients`` clients (50 by default):

- viewers (their own token each) reading small pages: submissions, the live run, a
  paper's top reviewers, a pair's explanation;
- chairs solving (a solve job, then a long poll on it), chairs editing (re-uploading
  submissions, an emergency re-assignment of the live run);
- phase 2 only: slow readers, each downloading the big venue's affinity export at 8 KiB
  every half second (in phase 1 those clients are viewers too);
- one ``/health`` probe every 100 ms.

Prints, per phase: responses >= 500 (and client errors: timeouts, refused connections),
429s, ``/health`` p50/p99, small-read p50/p99, requests answered; then phase 2's p99s as
ratios of phase 1's (the cost of the slow readers).

    python benchmarks/bench_load.py [--minutes 5] [--papers 5000 --reviewers 4000]
        [--database-url URL]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.synthetic_venue import VenueShape, synthetic_venue_corpus  # noqa: E402


def start_server(database_url: str, data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {
        **os.environ,
        "RECOMMENDER_DATABASE_URL": database_url,
        "RECOMMENDER_DATA_DIR": str(data_dir),
        "RECOMMENDER_AFFINITY_TOP_N": "50",
        "PYTHONPATH": str(REPO),
    }
    log = open(data_dir / "server.log", "wb")  # noqa: SIM115 (the server's whole life)
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "api.app:create_app", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("the server did not start")


def corpus_json(papers: int, reviewers: int, seed: int) -> tuple[list[Any], list[Any]]:
    """Reviewers and submissions of a synthetic venue as the upload routes take them."""
    shape = VenueShape(
        n_papers=papers,
        n_reviewers=reviewers,
        pubs_per_reviewer=2,
        min_words=40,
        max_words=60,
        n_topics=max(10, papers // 25),
    )
    corpus = synthetic_venue_corpus(shape, seed=seed)
    people = [
        {
            "id": r.id,
            "name": r.name or r.id,
            "publications": [
                {"title": p.title, "abstract": p.abstract, "year": p.year} for p in r.publications
            ],
        }
        for r in corpus.reviewers
    ]
    subs = [{"id": s.id, "title": s.title, "abstract": s.abstract} for s in corpus.submissions]
    return people, subs


def ended(client: httpx.Client, venue: str, job: dict[str, Any]) -> dict[str, Any]:
    while job["state"] in ("queued", "running"):
        job = client.get(f"/venues/{venue}/jobs/{job['id']}", params={"wait": 60}).json()
    if job["state"] != "succeeded":
        raise SystemExit(f"setup job failed in {venue}: {json.dumps(job)[:2000]}")
    return job


def set_up_venue(url: str, admin: str, venue: str, papers: int, reviewers: int) -> dict[str, Any]:
    """Create, upload, score, solve and publish a venue; returns ids the clients use."""
    with httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {admin}"}, timeout=1800
    ) as client:
        assert client.post("/venues", json={"id": venue, "name": venue}).status_code == 201
        people, subs = corpus_json(papers, reviewers, seed=len(venue) + papers)
        for route, body in (("reviewers", people), ("submissions", subs)):
            answer = client.post(f"/venues/{venue}/{route}", json=body)
            assert answer.status_code == 200, answer.text
        job = client.post(f"/venues/{venue}/affinity/jobs", json={"config": {"method": "tfidf"}})
        ended(client, venue, job.json())
        solved = ended(client, venue, client.post(f"/venues/{venue}/assignments", json={}).json())
        run = solved["result"]["assignment_id"]
        deployed = client.post(
            f"/venues/{venue}/assignments/{run}/deploy", json={"assignment_id": run, "version": 1}
        )
        assert deployed.status_code == 200, deployed.text
        pairs = client.get(f"/venues/{venue}/assignments/{run}/pairs", params={"limit": 200})
        return {
            "venue": venue,
            "subs": subs,
            "papers": [s["id"] for s in subs],
            "pairs": [(p["paper_id"], p["reviewer_id"]) for p in pairs.json()["items"]],
            "reviewers": [r["id"] for r in people],
        }


class Stats:
    """What every client saw, by phase (thread-safe)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = {}
        self.statuses: Counter[int] = Counter()
        self.errors: Counter[str] = Counter()

    def record(self, kind: str, seconds: float, status: int) -> None:
        with self.lock:
            self.latency.setdefault(kind, []).append(seconds)
            self.statuses[status] += 1

    def error(self, what: str) -> None:
        with self.lock:
            self.errors[what] += 1


def timed(
    stats: Stats, kind: str, call: Callable[..., httpx.Response], *args: Any, **kwargs: Any
) -> httpx.Response | None:
    started = time.perf_counter()
    try:
        answer = call(*args, **kwargs)
    except httpx.HTTPError as error:
        stats.error(type(error).__name__)
        return None
    stats.record(kind, time.perf_counter() - started, answer.status_code)
    if answer.status_code == 429:
        time.sleep(float(answer.headers.get("retry-after", 1)))
    return answer


def viewer(
    url: str, token: str, venue: dict[str, Any], stats: Stats, stop: threading.Event
) -> None:
    rng = random.Random(token)
    base = f"/venues/{venue['venue']}"
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
        while not stop.is_set():
            paper = rng.choice(venue["papers"])
            pick = rng.random()
            if pick < 0.3:
                timed(stats, "small", c.get, f"{base}/submissions", params={"limit": 20})
            elif pick < 0.55:
                timed(stats, "small", c.get, f"{base}/assignments/live")
            elif pick < 0.8:
                timed(stats, "small", c.get, f"{base}/papers/{paper}/reviewers")
            else:
                p, r = rng.choice(venue["pairs"])
                timed(stats, "explain", c.get, f"{base}/affinity/pairs/{p}/{r}")
            stop.wait(rng.uniform(0.05, 0.3))


def solver(
    url: str, token: str, venue: dict[str, Any], stats: Stats, stop: threading.Event
) -> None:
    base = f"/venues/{venue['venue']}"
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120) as c:
        while not stop.is_set():
            answer = timed(stats, "solve", c.post, f"{base}/assignments", json={})
            if answer is not None and answer.status_code == 202:
                job = answer.json()["id"]
                timed(stats, "poll", c.get, f"{base}/jobs/{job}", params={"wait": 20})
            stop.wait(1.0)


def editor(
    url: str, token: str, venue: dict[str, Any], stats: Stats, stop: threading.Event
) -> None:
    rng = random.Random(token)
    base = f"/venues/{venue['venue']}"
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120) as c:
        while not stop.is_set():
            if rng.random() < 0.7:
                subs = venue["subs"][:50]
                timed(stats, "edit", c.post, f"{base}/submissions", json=subs)
            else:
                _p, r = rng.choice(venue["pairs"])
                body = {"withdraw": [r], "reason": "bench"}
                path = f"{base}/assignments/live/reassign"
                answer = timed(stats, "reassign", c.post, path, json=body)
                if answer is not None and answer.status_code == 202:  # a job: wait like a chair
                    job = answer.json()["id"]
                    timed(stats, "poll", c.get, f"{base}/jobs/{job}", params={"wait": 20})
            stop.wait(rng.uniform(0.5, 2.0))


def slow_reader(
    url: str, token: str, venue: dict[str, Any], stats: Stats, stop: threading.Event
) -> None:
    base = f"/venues/{venue['venue']}"
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
        while not stop.is_set():
            started = time.perf_counter()
            try:
                with c.stream("GET", f"{base}/affinity/export") as answer:
                    stats.record("slow-start", time.perf_counter() - started, answer.status_code)
                    if answer.status_code != 200:
                        stop.wait(1)
                        continue
                    for _chunk in answer.iter_raw(8192):
                        if stop.wait(0.5):
                            break
            except httpx.HTTPError as error:
                stats.error(type(error).__name__)


def health(url: str, stats: Stats, stop: threading.Event) -> None:
    with httpx.Client(base_url=url, timeout=60) as c:
        while not stop.is_set():
            timed(stats, "health", c.get, "/health")
            stop.wait(0.1)


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def run_phase(
    url: str, plan: list[tuple[Callable[..., None], str, dict[str, Any]]], seconds: float
) -> Stats:
    stats = Stats()
    stop = threading.Event()
    threads = [
        threading.Thread(target=kind, args=(url, token, venue, stats, stop), daemon=True)
        for kind, token, venue in plan
    ]
    threads.append(threading.Thread(target=health, args=(url, stats, stop), daemon=True))
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join(150)
    return stats


def report(name: str, stats: Stats) -> dict[str, float]:
    five = sum(n for status, n in stats.statuses.items() if status >= 500)
    figures = {
        "5xx": five,
        "health_p99": percentile(stats.latency.get("health", []), 99),
        "small_p99": percentile(stats.latency.get("small", []), 99),
    }
    print(f"\n== {name}")
    print(f"responses >= 500: {five}; client errors: {dict(stats.errors) or 0}")
    print(f"statuses: {dict(sorted(stats.statuses.items()))}")
    for kind, values in sorted(stats.latency.items()):
        print(
            f"  {kind:<10} n={len(values):>6}  p50={percentile(values, 50) * 1000:8.1f} ms  "
            f"p99={percentile(values, 99) * 1000:8.1f} ms  max={max(values) * 1000:8.1f} ms"
        )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="both phases together")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--papers", type=int, default=5000, help="of the big venue")
    parser.add_argument("--reviewers", type=int, default=4000, help="of the big venue")
    parser.add_argument("--database-url", default=None, help="default: a fresh SQLite file")
    args = parser.parse_args()

    from reviewer_recommender.services.tokens import create_token
    from reviewer_recommender.storage.db import Database, migrate

    with tempfile.TemporaryDirectory() as scratch:
        data_dir = Path(scratch)
        database_url = args.database_url or f"sqlite:///{data_dir / 'bench.db'}"
        database = Database(database_url)
        migrate(database.engine)
        tag = f"{time.time_ns() % 10**8:08d}"
        admin = create_token(database, name=f"bench-admin-{tag}", role="admin")
        process, url = start_server(database_url, data_dir)
        try:
            started = time.perf_counter()
            shapes = [(f"big-{tag}", args.papers, args.reviewers)]
            shapes += [(f"small{i}-{tag}", 60, 40) for i in (1, 2)]
            venues = [set_up_venue(url, admin, *shape) for shape in shapes]
            backend = database.engine.url.get_backend_name()
            print(
                f"setup: {args.papers} x {args.reviewers} venue and two 60 x 40 venues "
                f"in {time.perf_counter() - started:.0f} s ({backend})"
            )

            def token(role: str, venue: dict[str, Any], index: int) -> str:
                name = f"{role}{index}-{venue['venue']}"
                return create_token(database, name=name, role=role, venue_id=venue["venue"])

            n_slow = max(1, args.clients // 6)
            n_chairs = max(2, args.clients // 8)
            plan: list[tuple[Callable[..., None], str, dict[str, Any]]] = []
            for i in range(args.clients - n_slow - 2 * n_chairs):
                v = venues[i % 3]
                plan.append((viewer, token("viewer", v, i), v))
            for i in range(n_chairs):
                v = venues[i % 3]
                plan.append((solver, token("chair", v, 1000 + i), v))
                plan.append((editor, token("chair", v, 2000 + i), v))
            slow_tokens = [token("viewer", venues[0], 3000 + i) for i in range(n_slow)]
            seconds = args.minutes * 60 / 2
            print(
                f"{args.clients} clients: {len(plan) - 2 * n_chairs} viewers, {n_chairs} "
                f"solving and {n_chairs} editing chairs, {n_slow} slow readers (phase 2; "
                f"viewers in phase 1); {seconds:.0f} s per phase"
            )
            phase1 = plan + [(viewer, t, venues[0]) for t in slow_tokens]
            phase2 = plan + [(slow_reader, t, venues[0]) for t in slow_tokens]
            without = report("phase 1: no slow readers", run_phase(url, phase1, seconds))
            with_slow = report("phase 2: with slow readers", run_phase(url, phase2, seconds))
            print("\n== slow readers' cost (phase 2 / phase 1)")
            for key in ("health_p99", "small_p99"):
                print(f"  {key}: {with_slow[key] / without[key]:.2f}x")
            total = without["5xx"] + with_slow["5xx"]
            print(f"responses >= 500 in all: {int(total)}")
        finally:
            process.terminate()
            process.wait(30)
            database.dispose()


if __name__ == "__main__":
    main()
