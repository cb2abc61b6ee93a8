"""Load test of the inspection endpoints on loopback.

Starts ``uvicorn`` (one process) on a free loopback port with a fresh SQLite database,
loads the demo venue (data/demo-reviewers archives x data/iclr2026 submissions, TF-IDF
affinities, one assignment), then runs a bounded number of requests from ``--clients``
concurrent clients against each inspection endpoint and reports requests/s and p50/p99
latency. Baseline in the same run: ``GET /health`` (no database, no auth), so every other
figure is also printed as a ratio to it.

    python benchmarks/bench_api.py [--requests 400] [--clients 20] [--database-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import httpx
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from reviewer_recommender.services.tokens import create_token  # noqa: E402
from reviewer_recommender.storage.db import Database, migrate  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(database_url: str, data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "RECOMMENDER_DATABASE_URL": database_url,
        "RECOMMENDER_DATA_DIR": str(data_dir),
        "PYTHONPATH": str(REPO),
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "api.app:create_app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--no-access-log",
        ],
        cwd=REPO,
        env=env,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("server did not start")


def wait_job(client: httpx.Client, venue: str, job: dict[str, object]) -> dict[str, object]:
    result = client.get(f"/venues/{venue}/jobs/{job['id']}", params={"wait": 60}).json()
    if result["state"] != "succeeded":
        raise SystemExit(f"job failed: {result}")
    return result


def load_demo(client: httpx.Client, venue: str) -> dict[str, list[str] | int]:
    client.post("/venues", json={"id": venue, "name": "Demo venue"}).raise_for_status()
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as bundle:
        for path in sorted((REPO / "data/demo-reviewers/archives").glob("*.jsonl")):
            bundle.write(path, path.name)
    client.post(
        f"/venues/{venue}/reviewers/upload", files={"file": ("archives.zip", archive.getvalue())}
    ).raise_for_status()
    submissions = (REPO / "data/iclr2026/submissions.json").read_bytes()
    client.post(
        f"/venues/{venue}/submissions/upload", files={"file": ("submissions.json", submissions)}
    ).raise_for_status()
    job = client.post(
        f"/venues/{venue}/affinity/jobs", json={"config": {"method": "tfidf"}, "top_n": 27}
    ).json()
    wait_job(client, venue, job)
    job = client.post(
        f"/venues/{venue}/assignments", json={"reviewers_per_paper": 3, "max_load": 9}
    ).json()
    assignment = int(wait_job(client, venue, job)["result"]["assignment_id"])  # type: ignore[index]
    papers = [
        s["id"]
        for s in client.get(f"/venues/{venue}/submissions", params={"limit": 1000}).json()["items"]
    ]
    reviewers = [
        r["id"]
        for r in client.get(f"/venues/{venue}/reviewers", params={"limit": 1000}).json()["items"]
    ]
    return {"papers": papers, "reviewers": reviewers, "assignment": assignment}


async def measure(
    base_url: str, headers: dict[str, str], paths: list[str], clients: int
) -> tuple[float, np.ndarray, int]:
    """Run ``paths`` (one request each) over ``clients`` concurrent connections."""
    latencies: list[float] = []
    errors = 0
    queue: asyncio.Queue[str] = asyncio.Queue()
    for path in paths:
        queue.put_nowait(path)

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal errors
        while True:
            try:
                path = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            start = time.perf_counter()
            response = await client.get(path)
            latencies.append(time.perf_counter() - start)
            errors += response.status_code != 200

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(
        base_url=base_url, headers=headers, limits=limits, timeout=60
    ) as client:
        started = time.perf_counter()
        await asyncio.gather(*(worker(client) for _ in range(clients)))
        elapsed = time.perf_counter() - started
    return len(paths) / elapsed, np.asarray(latencies) * 1000, errors


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=400, help="requests per endpoint")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--database-url", default="", help="default: a fresh SQLite file")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    with tempfile.TemporaryDirectory() as tmp:
        database_url = args.database_url or f"sqlite:///{tmp}/bench.db"
        database = Database(database_url)
        migrate(database.engine)
        token = create_token(database, name="bench", role="admin")
        database.dispose()
        port = free_port()
        server = start_server(database_url, Path(tmp), port)
        base_url = f"http://127.0.0.1:{port}"
        headers = {"Authorization": f"Bearer {token}"}
        try:
            venue = f"demo-{port}"
            with httpx.Client(base_url=base_url, headers=headers, timeout=120) as client:
                demo = load_demo(client, venue)
            papers, reviewers = demo["papers"], demo["reviewers"]
            assert isinstance(papers, list) and isinstance(reviewers, list)
            v = f"/venues/{venue}"
            n = args.requests
            endpoints = {
                "health (baseline)": ["/health"] * n,
                "top reviewers of a paper": [
                    f"{v}/papers/{rng.choice(papers)}/reviewers?limit=10" for _ in range(n)
                ],
                "top papers of a reviewer": [
                    f"{v}/reviewers/{rng.choice(reviewers)}/papers?limit=10" for _ in range(n)
                ],
                "pair score": [
                    f"{v}/affinity/pairs/{rng.choice(papers)}/{rng.choice(reviewers)}?explain=false"
                    for _ in range(n)
                ],
                "pair with explanation": [
                    f"{v}/affinity/pairs/{rng.choice(papers)}/{rng.choice(reviewers)}"
                    for _ in range(max(1, n // 4))
                ],
                "affinity statistics": [f"{v}/affinity"] * n,
                "assignment statistics": [f"{v}/assignments/{demo['assignment']}/stats"] * n,
                "assignment pairs page": [
                    f"{v}/assignments/{demo['assignment']}/pairs"
                    f"?limit=50&offset={rng.randrange(0, 200)}"
                    for _ in range(n)
                ],
            }
            print(
                f"demo venue: {len(papers)} papers x {len(reviewers)} reviewers; "
                f"{args.clients} concurrent clients, SQLite={database_url.startswith('sqlite')}"
            )
            print(
                f"{'endpoint':<28}{'requests':>9}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}"
                f"{'p50/base':>9}{'errors':>7}"
            )
            baseline_p50 = None
            for name, paths in endpoints.items():
                rate, latency_ms, errors = asyncio.run(
                    measure(base_url, headers, paths, args.clients)
                )
                p50, p99 = np.percentile(latency_ms, [50, 99])
                baseline_p50 = baseline_p50 or p50
                print(
                    f"{name:<28}{len(paths):>9}{rate:>9.0f}{p50:>9.1f}{p99:>9.1f}"
                    f"{p50 / baseline_p50:>9.1f}{errors:>7}"
                )
        finally:
            server.terminate()
            server.wait(10)


if __name__ == "__main__":
    main()
