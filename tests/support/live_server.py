"""The service under uvicorn in its own process, on a free port: for the tests that need a
real server's event loop, job processes and sockets (chunked bodies, cancel across processes,
a crash), and for the browser tests. The one way the tests start a server.

Tests import it by name (``from live_server import ...``): ``tests/support`` is on the path
(``pythonpath`` in ``pyproject.toml``).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from waiting import wait_until

from reviewer_recommender.services.tokens import create_token
from reviewer_recommender.storage.db import Database, migrate

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class LiveServer:
    """A running server: its URL, its database, an admin token, its process and log."""

    url: str
    database_url: str
    admin_token: str
    process: subprocess.Popen[bytes]
    log: Path

    def client(self, token: str | None = None, timeout: float = 120) -> httpx.Client:
        """A client signed in with ``token`` (the admin token by default)."""
        return httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {token or self.admin_token}"},
            timeout=timeout,
        )

    def token(self, role: str, venue_id: str, name: str) -> str:
        """A new ``chair`` or ``viewer`` token of ``venue_id`` (created if it is new)."""
        database = Database(self.database_url)
        try:
            return create_token(
                database, name=name, role=role, venue_id=venue_id, create_venue=True
            )
        finally:
            database.dispose()

    def crash(self) -> None:
        """End the server as the kernel would: SIGKILL, no shutdown of any kind."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""


def _answers_health(server: LiveServer) -> bool:
    if server.process.poll() is not None:
        raise AssertionError(f"the server exited at start:\n{server.log_tail()}")
    try:
        return httpx.get(f"{server.url}/health", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


@contextmanager
def run_server(
    database_url: str,
    data_dir: Path,
    *,
    admin_name: str = "",
    **settings: str | int | float,
) -> Iterator[LiveServer]:
    """Run ``uvicorn api.app:create_app`` with ``RECOMMENDER_<NAME>`` set from ``settings``
    (e.g. ``job_workers=1``) on ``database_url`` (migrated first) and ``data_dir``, with a new
    admin token named ``admin_name``; yields once ``/health`` answers; kills it after."""
    database = Database(database_url)
    migrate(database.engine)
    name = admin_name or f"live-admin-{uuid.uuid4().hex[:8]}"
    admin = create_token(database, name=name, role="admin")
    database.dispose()
    port = free_port()
    log = data_dir / f"server-{port}.log"
    env = {
        **os.environ,
        "RECOMMENDER_DATABASE_URL": database_url,
        "RECOMMENDER_DATA_DIR": str(data_dir),
        "PYTHONPATH": str(REPO),
        **{f"RECOMMENDER_{name.upper()}": str(value) for name, value in settings.items()},
    }
    command = [sys.executable, "-m", "uvicorn", "--factory", "api.app:create_app"]
    with log.open("ab") as output:
        process = subprocess.Popen(
            [*command, "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
            cwd=REPO,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    server = LiveServer(f"http://127.0.0.1:{port}", database_url, admin, process, log)
    try:
        wait_until(lambda: _answers_health(server), what="the server to answer /health")
        yield server
    finally:
        process.kill()
        process.wait(30)
