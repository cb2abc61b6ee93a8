"""A real uvicorn server in a subprocess, for tests that need a server's own event loop,
threads and sockets (responsiveness while it works, chunked bodies, cancel across processes).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from reviewer_recommender.services.tokens import create_token
from reviewer_recommender.storage.db import Database, migrate

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Server:
    url: str
    token: str
    process: subprocess.Popen[bytes]
    log: Path

    def client(self, timeout: float = 120) -> httpx.Client:
        return httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=timeout,
        )


@contextmanager
def live_server(
    database_url: str, data_dir: Path, **environment: str | int | float
) -> Iterator[Server]:
    """Start ``uvicorn api.app:create_app`` on a free port with ``RECOMMENDER_<NAME>``
    settings from ``environment``; yields once ``/health`` answers; kills it after."""
    database = Database(database_url)
    migrate(database.engine)
    token = create_token(database, name=f"live-admin-{time.monotonic_ns()}", role="admin")
    database.dispose()
    port = free_port()
    log = data_dir / f"server-{port}.log"
    env = {
        **os.environ,
        "RECOMMENDER_DATABASE_URL": database_url,
        "RECOMMENDER_DATA_DIR": str(data_dir),
        "PYTHONPATH": str(REPO),
        **{f"RECOMMENDER_{k.upper()}": str(v) for k, v in environment.items()},
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
        ],
        cwd=REPO,
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise AssertionError(f"server exited: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("server did not start within 60 s")
            time.sleep(0.2)
        yield Server(url, token, process, log)
    finally:
        process.kill()
        process.wait(10)


@dataclass
class HealthWatch:
    """Polls ``/health`` from a thread; ``latencies`` in seconds (a failed or slow probe
    counts as its timeout)."""

    url: str
    timeout: float = 5.0
    latencies: list[float] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def _run(self) -> None:
        with httpx.Client(timeout=self.timeout) as client:
            while not self._stop.is_set():
                started = time.perf_counter()
                try:
                    ok = client.get(f"{self.url}/health").status_code == 200
                except httpx.HTTPError:
                    ok = False
                elapsed = time.perf_counter() - started
                self.latencies.append(elapsed if ok else self.timeout)
                self._stop.wait(0.05)

    @contextmanager
    def watching(self) -> Iterator[HealthWatch]:
        thread = threading.Thread(target=self._run, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join(self.timeout + 1)

    @property
    def worst(self) -> float:
        return max(self.latencies, default=0.0)
