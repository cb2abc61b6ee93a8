"""Cancel within seconds: a cancelled job reaches ``cancelled`` within 5 s of the request and
frees its worker, whether or not its handler (or the solver inside it) cooperates; progress
shows what the solver knows. On SQLite and PostgreSQL."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from job_handlers import handlers, quick, stubborn

from reviewer_recommender.jobs.runner import JobCancelled, JobContext, JobRunner
from reviewer_recommender.storage.db import Database, migrate
from reviewer_recommender.storage.models import Job, Venue

CANCEL_DEADLINE = 5.0
VENUE = "cancel-venue"


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    db = Database(database_url)
    migrate(db.engine)
    with db.session() as session:
        if session.get(Venue, VENUE) is None:
            session.add(Venue(id=VENUE, name="cancel"))
            session.commit()
    yield db
    db.dispose()


def _new_job(database: Database, kind: str, **params: Any) -> int:
    with database.session() as session:
        job = Job(venue_id=VENUE, kind=kind, params=params, log=[], result={})
        session.add(job)
        session.commit()
        return job.id


def _job(database: Database, job_id: int) -> Job:
    with database.session() as session:
        job = session.get(Job, job_id)
        assert job is not None
        return job


def _wait_for(database: Database, job_id: int, states: set[str], timeout: float) -> Job:
    deadline = time.monotonic() + timeout
    while True:
        job = _job(database, job_id)
        if job.state in states or time.monotonic() > deadline:
            return job
        time.sleep(0.05)


def _cancel_from_elsewhere(database: Database, job_id: int) -> float:
    """What the cancel endpoint of another server process does: set the row's flag only."""
    with database.session() as session:
        session.get(Job, job_id).cancel_requested = True  # type: ignore[union-attr]
        session.commit()
    return time.monotonic()


def _process_runner(database: Database, **options: Any) -> JobRunner:
    runner = JobRunner(
        database,
        handlers(),
        workers=1,
        isolation="process",
        handler_factory="job_handlers:handlers",
        cancel_grace=1.0,
        **options,
    )
    runner.start()
    return runner


def _assert_worker_is_free(database: Database, runner: JobRunner) -> None:
    second = _new_job(database, "quick")
    runner.submit(second)
    done = _wait_for(database, second, {"succeeded", "failed"}, 60)
    assert done.state == "succeeded" and done.result == {"answer": 42}, done.log


def test_a_cancelled_fairness_solve_ends_within_5_s(database: Database) -> None:
    runner = _process_runner(database)
    try:
        job_id = _new_job(database, "fairness", papers=800)
        runner.submit(job_id)
        deadline = time.monotonic() + 60
        while _job(database, job_id).stage != "solving":
            assert time.monotonic() < deadline, _job(database, job_id).log
            time.sleep(0.05)
        # let it get deep into the ILP (building and solving take minutes in all)
        solving = _wait_for(database, job_id, {"failed", "succeeded"}, 2)
        assert solving.state == "running", solving.log
        requested = _cancel_from_elsewhere(database, job_id)
        ended = _wait_for(database, job_id, {"cancelled", "failed", "succeeded"}, 30)
        took = time.monotonic() - requested
        assert ended.state == "cancelled", ended.log
        assert took < CANCEL_DEADLINE, took
        assert ended.result == {}
        _assert_worker_is_free(database, runner)
    finally:
        runner.stop()


def test_a_handler_that_ignores_cancel_is_killed_and_its_worker_freed(
    database: Database,
) -> None:
    runner = _process_runner(database)
    try:
        job_id = _new_job(database, "stubborn", seconds=600)
        runner.submit(job_id)
        running = _wait_for(database, job_id, {"running"}, 60)
        assert running.state == "running"
        time.sleep(0.5)
        started = time.monotonic()
        runner.request_cancel(job_id)  # the cancel endpoint of this process
        ended = _wait_for(database, job_id, {"cancelled", "failed", "succeeded"}, 30)
        assert ended.state == "cancelled" and time.monotonic() - started < CANCEL_DEADLINE
        assert "did not stop within" in ended.log[-1] and ended.result == {}
        _assert_worker_is_free(database, runner)
    finally:
        runner.stop()


def test_a_job_process_that_dies_fails_in_words(database: Database) -> None:
    runner = _process_runner(database)
    try:
        job_id = _new_job(database, "crash")
        runner.submit(job_id)
        ended = _wait_for(database, job_id, {"cancelled", "failed", "succeeded"}, 60)
        assert ended.state == "failed", ended.log
        assert "SIGKILL" in ended.error and "out of memory" in ended.error
        _assert_worker_is_free(database, runner)
    finally:
        runner.stop()


def test_thread_isolation_abandons_a_stubborn_handler_and_discards_its_result(
    database: Database,
) -> None:
    runner = JobRunner(
        database,
        {"stubborn": stubborn, "quick": quick},
        workers=1,
        isolation="thread",
        cancel_grace=0.5,
    )
    runner.start()
    try:
        job_id = _new_job(database, "stubborn", seconds=4)
        runner.submit(job_id)
        assert _wait_for(database, job_id, {"running"}, 30).state == "running"
        time.sleep(0.3)
        requested = _cancel_from_elsewhere(database, job_id)
        ended = _wait_for(database, job_id, {"cancelled", "succeeded"}, 30)
        assert ended.state == "cancelled" and time.monotonic() - requested < CANCEL_DEADLINE
        _assert_worker_is_free(database, runner)
        time.sleep(4.5)  # the abandoned thread reaches finish(): nothing is written
        late = _job(database, job_id)
        assert late.state == "cancelled" and late.result == {}
    finally:
        runner.stop()


def test_a_queued_job_is_cancelled_at_once(database: Database) -> None:
    runner = JobRunner(
        database, {"stubborn": stubborn, "quick": quick}, workers=1, cancel_grace=0.5
    )
    runner.start()
    try:
        busy = _new_job(database, "stubborn", seconds=3)
        runner.submit(busy)
        assert _wait_for(database, busy, {"running"}, 30).state == "running"
        waiting = _new_job(database, "quick")
        runner.submit(waiting)
        runner.request_cancel(waiting)
        job = _job(database, waiting)
        assert job.state == "cancelled" and "before it started" in job.log[-1]
        runner.request_cancel(busy)
    finally:
        runner.stop()


def test_solve_monitor_shows_incumbent_and_bound_and_reads_a_cancel_from_the_row(
    database: Database,
) -> None:
    job_id = _new_job(database, "manual")
    with database.session() as session:
        session.get(Job, job_id).state = "running"  # type: ignore[union-attr]
        session.commit()
    context = JobContext(database, _job(database, job_id), threading.Event(), poll_interval=0.1)
    monitor = context.solve_monitor(0.2, 0.8)
    monitor.report("branch and bound", fraction=0.5, incumbent=812.4, bound=820.0)
    job = _job(database, job_id)
    assert job.progress == pytest.approx(0.5)
    assert job.stage == "branch and bound, best so far 812.4, bound 820, gap 0.93%"
    assert any("best so far 812.4" in line for line in job.log)
    assert monitor.should_stop() is False

    _cancel_from_elsewhere(database, job_id)
    deadline = time.monotonic() + 2
    while not monitor.should_stop():
        assert time.monotonic() < deadline, "the monitor never saw the cancel in the row"
        time.sleep(0.02)
    time.sleep(0.25)
    monitor.report("still going", incumbent=815.0)  # never raises, even once cancelled
    assert context.cancel_requested()
    with pytest.raises(JobCancelled):
        context.progress(0.9, "next batch")
