"""Hostile uploads against a live server, with ``/health`` watched throughout.

Starts ``uvicorn`` (one process, one job worker) on a free loopback port with a fresh SQLite
database (or ``--database-url``), then sends each hostile upload (the 2,040 x 1 MiB zip, a
zip declaring 150,000 members, chunked bodies over the limit, a 10 MB bulk JSON body, 3.3
million tiny CSV rows, deep nesting, very long lines, a 6 MB JSON body to an ordinary route)
and prints its status, how long the answer took and the slowest ``/health`` answer meanwhile
(polled every 50 ms). Cancels of real jobs on a live server: ``bench_cancel.py --live``.

Baseline in the same run: ``/health`` latency with the server idle.

    python benchmarks/bench_live_safety.py [--database-url URL]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MiB = 1024 * 1024


def start_server(
    database_url: str, data_dir: Path, **settings: str | int
) -> tuple[subprocess.Popen[bytes], str, str]:
    """uvicorn with one job worker and ``RECOMMENDER_<NAME>`` set from ``settings``; returns
    the process, its URL and an admin token once ``/health`` answers."""
    from reviewer_recommender.services.tokens import create_token
    from reviewer_recommender.storage.db import Database, migrate

    database = Database(database_url)
    migrate(database.engine)
    token = create_token(database, name=f"bench-{time.monotonic_ns()}", role="admin")
    database.dispose()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {
        **os.environ,
        "RECOMMENDER_DATABASE_URL": database_url,
        "RECOMMENDER_DATA_DIR": str(data_dir),
        "RECOMMENDER_JOB_WORKERS": "1",
        "RECOMMENDER_AFFINITY_TOP_N": "100",
        "PYTHONPATH": str(REPO),
        **{f"RECOMMENDER_{name.upper()}": str(value) for name, value in settings.items()},
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "api.app:create_app", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return process, url, token
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("the server did not start")


class Watch:
    """Polls /health every 50 ms from a thread; ``worst`` in seconds."""

    def __init__(self, url: str):
        self.url = url
        self.latencies: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with httpx.Client(timeout=30) as client:
            while not self._stop.is_set():
                started = time.perf_counter()
                client.get(f"{self.url}/health")
                self.latencies.append(time.perf_counter() - started)
                self._stop.wait(0.05)

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def worst(self) -> float:
        return max(self.latencies, default=0.0)


def zip_of_copies(count: int, content: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for index in range(count):
            archive.writestr(f"~r{index}.jsonl", content)
    return buffer.getvalue()


def chunked_multipart(size: int) -> Iterator[bytes]:
    yield (
        b'--b\r\nContent-Disposition: form-data; name="file"; filename="r.jsonl"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n"
    )
    for _ in range(size // MiB):
        yield b"x" * MiB
    yield b"\r\n--b--\r\n"


def attacks(client: httpx.Client, venue: str) -> list[tuple[str, Callable[[], httpx.Response]]]:
    base = f"/venues/{venue}"
    bomb = zip_of_copies(2040, b"\n" * MiB)
    empties = io.BytesIO()
    with zipfile.ZipFile(empties, "w", zipfile.ZIP_STORED) as archive:
        for index in range(150_000):
            archive.writestr(f"{index}.jsonl", b"")
    reviewers = [
        {"id": f"r{i}", "publications": [{"title": "t " * 40, "abstract": "a " * 400}]}
        for i in range(11_000)
    ]
    tiny_rows = b"paper_id,reviewer_id,bid\n" + b"p,r,1\n" * (19 * MiB // 6)
    json_ints = b"[" + b",".join([b"0"] * 3_000_000) + b"]"

    def upload(route: str, name: str, content: bytes) -> Callable[[], httpx.Response]:
        return lambda: client.post(f"{base}/{route}", files={"file": (name, content)})

    def body(route: str, content: Any, kind: str) -> Callable[[], httpx.Response]:
        return lambda: client.post(
            f"{base}/{route}", content=content, headers={"content-type": kind}
        )

    multipart = "multipart/form-data; boundary=b"
    as_json = "application/json"
    archives = "reviewers/upload"
    bulk = json.dumps(reviewers)
    long_field = b"id,title\np," + b"x" * 15 * MiB + b"\n"
    long_line = json.dumps({"id": "p", "title": "x" * 15 * MiB}).encode()
    return [
        (f"zip of 2,040 x 1 MiB ({len(bomb) / MiB:.1f} MiB)", upload(archives, "a.zip", bomb)),
        ("zip declaring 150,000 members", upload(archives, "e.zip", empties.getvalue())),
        ("chunked multipart, 30 MiB", body(archives, chunked_multipart(30 * MiB), multipart)),
        ("chunked JSON, 30 MiB", body("submissions", chunked_multipart(30 * MiB), as_json)),
        ("bulk JSON body, 11,000 reviewers (10 MB)", body("reviewers", bulk, as_json)),
        ("CSV of 3.3 million tiny rows (19 MiB)", upload("bids/upload", "b.csv", tiny_rows)),
        ("JSON nested 5,000,000 deep", upload("submissions/upload", "s.json", b"[" * 5_000_000)),
        ("CSV field of 15 MiB", upload("submissions/upload", "s.csv", long_field)),
        ("JSONL line of 15 MiB", upload("submissions/upload", "s.jsonl", long_line)),
        ("6 MB JSON body to an ordinary route", body("assignments", json_ints, as_json)),
    ]  # fmt: skip


def run_attacks(url: str, token: str) -> None:
    with httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=600
    ) as client:
        client.post("/venues", json={"id": "bench"}).raise_for_status()
        with Watch(url) as idle:
            time.sleep(2)
        print(f"{'attack':45} {'status':>6} {'answer s':>9} {'worst /health ms':>17} {'x idle':>7}")
        print(f"{'(idle server)':45} {'':>6} {'':>9} {idle.worst * 1000:17.0f} {1:7.1f}")
        for label, send in attacks(client, "bench"):
            with Watch(url) as watch:
                started = time.perf_counter()
                status = send().status_code
                elapsed = time.perf_counter() - started
            print(
                f"{label:45} {status:>6} {elapsed:9.2f} {watch.worst * 1000:17.0f} "
                f"{watch.worst / max(idle.worst, 1e-3):7.1f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url_db = args.database_url or f"sqlite:///{Path(tmp) / 'bench.db'}"
        process, url, token = start_server(url_db, Path(tmp))
        try:
            run_attacks(url, token)
        finally:
            process.kill()
            process.wait()


if __name__ == "__main__":
    main()
