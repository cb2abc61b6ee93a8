"""A job's process ends with its server, and a job whose server is gone commits nothing:
through a real server running jobs in their own processes, killed with SIGKILL in the middle
of an affinity job. On SQLite and PostgreSQL."""

from __future__ import annotations

import random
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_server import run_server
from sqlalchemy import func, select, update
from waiting import wait_until

from reviewer_recommender.jobs.lease import HOST
from reviewer_recommender.jobs.runner import JobCancelled, JobContext, JobRunner
from reviewer_recommender.storage.db import Database, migrate
from reviewer_recommender.storage.models import AffinityRun, Job, Venue, utcnow

EMBEDDING = {"method": "embedding", "model": "all-MiniLM-L6-v2"}
# seconds the job's processes may outlive their server
END_DEADLINE = 30.0  # a bound on a hang; the kernel ends them at once (SIGIO)


def _venue(n_papers: int, n_reviewers: int) -> tuple[list[Any], list[Any]]:
    rng = random.Random(1)
    words = [f"term{i}" for i in range(400)]

    def text(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n))

    submissions = [{"id": f"P{i}", "title": text(8), "abstract": text(80)} for i in range(n_papers)]
    reviewers = [
        {
            "id": f"R{j}",
            "name": f"Reviewer {j}",
            "publications": [{"title": text(8), "abstract": text(80)} for _ in range(3)],
        }
        for j in range(n_reviewers)
    ]
    return reviewers, submissions


def _process_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state) of every process on this host."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        table[int(entry.name)] = (int(fields[1]), fields[0].decode())
    return table


def _descendants(pid: int) -> set[int]:
    table = _process_table()
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, (parent, _) in table.items() if parent in frontier}
        found |= frontier
    return found


def _still_running(pids: set[int]) -> set[int]:
    table = _process_table()
    return {pid for pid in pids if pid in table and table[pid][1] not in ("Z", "X")}


def _wait(client: httpx.Client, path: str, until: set[str], timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        job: dict[str, Any] = client.get(path).json()
        if job["state"] in until or time.monotonic() > deadline:
            return job
        time.sleep(0.05)


def _runs(database_url: str, venue: str) -> int:
    database = Database(database_url)
    try:
        query = select(func.count()).where(AffinityRun.venue_id == venue)
        with database.session() as session:
            return int(session.scalar(query) or 0)
    finally:
        database.dispose()


def test_a_killed_servers_job_ends_with_it_and_commits_nothing(
    database_url: str, tmp_path: Path
) -> None:
    reviewers, submissions = _venue(500, 120)
    venue = f"lease-{time.monotonic_ns()}"
    base = f"/venues/{venue}"
    with run_server(database_url, tmp_path, job_workers=1, cache_dir="none") as server:
        with server.client() as client:
            assert client.post("/venues", json={"id": venue}).status_code == 201
            client.post(f"{base}/reviewers", json=reviewers).raise_for_status()
            client.post(f"{base}/submissions", json=submissions).raise_for_status()
            job = client.post(f"{base}/affinity/jobs", json={"config": EMBEDDING}).json()
            path = f"{base}/jobs/{job['id']}"
            # the job's own process reports progress: it runs, and embeds for many seconds
            wait_until(
                lambda: client.get(path).json(),
                lambda state: state["stage"] not in ("queued", "starting"),
                what="the job's own process to report progress",
            )
            time.sleep(1.0)
            family = _descendants(server.process.pid)
            # the fork server, its resource tracker and the job's process (the fork server's
            # child) at least
            assert len(family) >= 3, family
            running = client.get(path).json()
            assert running["state"] == "running" and running["progress"] < 0.85, running
        server.process.kill()
        server.process.wait(10)
        wait_until(
            lambda: _still_running(family),
            lambda alive: not alive,
            what="the job's processes to end with their server",
            timeout=END_DEADLINE,
        )

    # nothing committed after the server died: no result, no run; the row waits for a server
    time.sleep(1.0)
    database = Database(database_url)
    try:
        with database.session() as session:
            row = session.get(Job, job["id"])
            assert row is not None
            assert (row.state, row.result) == ("running", {}), (row.state, row.log)
    finally:
        database.dispose()
    assert _runs(database_url, venue) == 0

    # the next server marks it interrupted at once (its server's process is gone)
    with run_server(database_url, tmp_path, job_workers=1) as again, again.client() as client:
        ended = client.get(path).json()
        assert ended["state"] == "interrupted", ended
        assert ended["result"] == {} and "interrupted" in ended["log"][-1]
    assert _runs(database_url, venue) == 0


@pytest.fixture
def database(database_url: str) -> Any:
    db = Database(database_url)
    migrate(db.engine)
    with db.session() as session:
        if session.get(Venue, "lease-venue") is None:
            session.add(Venue(id="lease-venue", name="lease"))
            session.commit()
    yield db
    db.dispose()


def _job_row(database: Database, **values: Any) -> int:
    with database.session() as session:
        job = Job(venue_id="lease-venue", kind="test", params={}, log=[], result={}, **values)
        session.add(job)
        session.commit()
        return job.id


def _state(database: Database, job_id: int) -> tuple[str, dict[str, Any]]:
    with database.session() as session:
        job = session.get(Job, job_id)
        assert job is not None
        return job.state, job.result


def _finish(database: Database, job_id: int, holder_alive: bool = True) -> None:
    with database.session() as session:
        job = session.get(Job, job_id)
        assert job is not None
    context = JobContext(database, job, threading.Event(), holder_alive=lambda: holder_alive)
    with database.session() as session:
        context.finish(session, {"answer": 42})
        session.commit()


def test_a_result_commits_only_while_its_server_holds_the_job(database: Database) -> None:
    holder = "host-a/1/aaaa"
    held = {"state": "running", "owner": holder, "heartbeat_at": utcnow()}

    done = _job_row(database, **held)
    _finish(database, done)
    assert _state(database, done) == ("succeeded", {"answer": 42})

    # another server found the holder gone and marked the job interrupted
    interrupted = _job_row(database, **held)
    with database.session() as session:
        job = session.get(Job, interrupted)
        assert job is not None
        context = JobContext(database, job, threading.Event())
        session.execute(update(Job).where(Job.id == interrupted).values(state="interrupted"))
        session.commit()
    with database.session() as session, pytest.raises(JobCancelled):
        context.finish(session, {"answer": 42})
    assert _state(database, interrupted) == ("interrupted", {})

    # another server holds it now
    taken = _job_row(database, **held)
    with database.session() as session:
        job = session.get(Job, taken)
        assert job is not None
        context = JobContext(database, job, threading.Event())
        session.execute(update(Job).where(Job.id == taken).values(owner="host-b/2/bbbb"))
        session.commit()
    with database.session() as session, pytest.raises(JobCancelled):
        context.finish(session, {"answer": 42})
    assert _state(database, taken) == ("running", {})

    # its server is gone (the job's process saw its lifeline close)
    orphan = _job_row(database, **held)
    with pytest.raises(JobCancelled):
        _finish(database, orphan, holder_alive=False)
    assert _state(database, orphan) == ("running", {})


def test_a_starting_server_interrupts_only_the_jobs_of_servers_that_are_gone(
    database: Database,
) -> None:
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    now = utcnow()
    live = JobRunner(database, {}, inline=True)
    live.start()
    try:
        kept = {
            "a live server of this process": _job_row(
                database, state="running", owner=live.owner, heartbeat_at=now
            ),
            "a server on another host that beat lately": _job_row(
                database, state="running", owner="elsewhere/7/cccc", heartbeat_at=now
            ),
            "a live process of this host": _job_row(
                database, state="queued", owner=f"{HOST}/1/dddd", heartbeat_at=now
            ),
        }
        gone = {
            "no owner": _job_row(database, state="queued"),
            "a dead process of this host": _job_row(
                database, state="running", owner=f"{HOST}/{ended.pid}/eeee", heartbeat_at=now
            ),
            "a server on another host that stopped beating": _job_row(
                database,
                state="running",
                owner="elsewhere/7/ffff",
                heartbeat_at=now - timedelta(minutes=10),
            ),
        }
        runner = JobRunner(database, {}, inline=True)
        assert runner.start() >= len(gone)
        runner.stop()
        for what, job_id in kept.items():
            assert _state(database, job_id)[0] != "interrupted", what
        for what, job_id in gone.items():
            assert _state(database, job_id)[0] == "interrupted", what
    finally:
        live.stop()
        with database.session() as session:  # leave no unfinished rows to later tests
            session.execute(
                update(Job)
                .where(Job.venue_id == "lease-venue", Job.state.in_(("queued", "running")))
                .values(state="failed")
            )
            session.commit()
