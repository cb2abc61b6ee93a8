"""Cancel: a cancelled job ends ``cancelled``, writes nothing and frees its worker, whether
its handler (or the solver inside it) stops by itself or must be ended; progress shows what
the solver knows. On SQLite and PostgreSQL. How fast a cancel lands is measured by
``benchmarks/bench_cancel.py``, not asserted here."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from job_handlers import handlers, quick
from waiting import wait_until

from reviewer_recommender.jobs import context as job_context
from reviewer_recommender.jobs.runner import JobCancelled, JobContext, JobRunner
from reviewer_recommender.storage.db import Database, migrate
from reviewer_recommender.storage.models import Job, Venue

VENUE = "cancel-venue"
FINAL = {"cancelled", "failed", "succeeded"}
# long enough that a handler which stops by itself is never ended for being slow
PATIENT = 120.0


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


def _seen(job: Job) -> str:
    return f"{job.state}, stage {job.stage!r}, log {job.log[-3:]}"


def _wait_for(database: Database, job_id: int, states: set[str]) -> Job:
    return wait_until(
        lambda: _job(database, job_id),
        lambda job: job.state in states,
        what=f"job {job_id} to be {' or '.join(sorted(states))}",
        describe=_seen,
    )


def _wait_for_stage(database: Database, job_id: int, started: str) -> Job:
    """The job still running, its stage starting with ``started``."""
    job = wait_until(
        lambda: _job(database, job_id),
        lambda job: (
            job.state in FINAL or (job.state == "running" and job.stage.startswith(started))
        ),
        what=f"job {job_id} to report a stage starting {started!r}",
        describe=_seen,
    )
    assert job.state == "running", job.log
    return job


def _cancel_from_elsewhere(database: Database, job_id: int) -> None:
    """What the cancel endpoint of another server process does: set the row's flag only."""
    with database.session() as session:
        session.get(Job, job_id).cancel_requested = True  # type: ignore[union-attr]
        session.commit()


def _process_runner(database: Database, *, cancel_grace: float) -> JobRunner:
    runner = JobRunner(
        database,
        handlers(),
        workers=1,
        isolation="process",
        handler_factory="job_handlers:handlers",
        cancel_grace=cancel_grace,
    )
    runner.start()
    return runner


def _assert_worker_is_free(database: Database, runner: JobRunner) -> None:
    second = _new_job(database, "quick")
    runner.submit(second)
    done = _wait_for(database, second, FINAL)
    assert done.state == "succeeded" and done.result == {"answer": 42}, done.log


def test_a_cancelled_fairness_solve_stops_itself_and_frees_its_worker(database: Database) -> None:
    runner = _process_runner(database, cancel_grace=PATIENT)
    try:
        job_id = _new_job(database, "fairness", papers=800)
        runner.submit(job_id)
        # HiGHS is raising the lowest paper score (minutes of work if let run)
        _wait_for_stage(database, job_id, "fairness 2/3")
        _cancel_from_elsewhere(database, job_id)
        ended = _wait_for(database, job_id, FINAL)
        assert ended.state == "cancelled", ended.log
        # the solver saw the cancel through its monitor: nothing had to be killed
        assert ended.log[-1].endswith("cancelled; no result written"), ended.log
        assert ended.result == {}
        _assert_worker_is_free(database, runner)
    finally:
        runner.stop()


def test_a_handler_that_ignores_cancel_is_killed_and_its_worker_freed(
    database: Database,
) -> None:
    runner = _process_runner(database, cancel_grace=1.0)
    try:
        job_id = _new_job(database, "stubborn", seconds=600)
        runner.submit(job_id)
        _wait_for_stage(database, job_id, "computing without cancel points")
        runner.request_cancel(job_id)  # the cancel endpoint of this process
        ended = _wait_for(database, job_id, FINAL)
        assert ended.state == "cancelled", ended.log
        assert "did not stop within 1 s" in ended.log[-1] and ended.result == {}
        _assert_worker_is_free(database, runner)
    finally:
        runner.stop()


def test_a_job_process_that_dies_fails_in_words(database: Database) -> None:
    runner = _process_runner(database, cancel_grace=1.0)
    try:
        job_id = _new_job(database, "crash")
        runner.submit(job_id)
        ended = _wait_for(database, job_id, FINAL)
        assert ended.state == "failed", ended.log
        assert "SIGKILL" in ended.error and "out of memory" in ended.error
        _assert_worker_is_free(database, runner)
    finally:
        runner.stop()


class Unstoppable:
    """A handler that never looks at the cancel flag until ``release`` is set, then tries to
    write its result; ``returned`` is set once it is done trying, however it ended."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.returned = threading.Event()

    def __call__(self, ctx: JobContext) -> None:
        try:
            ctx.progress(0.1, "computing without cancel points", force=True)
            self.release.wait(PATIENT)
            with ctx.session() as session:
                ctx.finish(session, {"late": True})
                session.commit()
        finally:
            self.returned.set()


def test_thread_isolation_abandons_a_stubborn_handler_and_discards_its_result(
    database: Database,
) -> None:
    handler = Unstoppable()
    runner = JobRunner(
        database,
        {"unstoppable": handler, "quick": quick},
        workers=1,
        isolation="thread",
        cancel_grace=0.5,
    )
    runner.start()
    try:
        job_id = _new_job(database, "unstoppable")
        runner.submit(job_id)
        _wait_for_stage(database, job_id, "computing without cancel points")
        _cancel_from_elsewhere(database, job_id)
        ended = _wait_for(database, job_id, FINAL)
        assert ended.state == "cancelled", ended.log
        _assert_worker_is_free(database, runner)
        # the abandoned thread reaches finish() only now: nothing may be written
        handler.release.set()
        assert handler.returned.wait(PATIENT), "the abandoned handler never returned"
        late = _job(database, job_id)
        assert late.state == "cancelled" and late.result == {}, late.log
    finally:
        handler.release.set()
        runner.stop()


def test_a_queued_job_is_cancelled_at_once(database: Database) -> None:
    handler = Unstoppable()
    runner = JobRunner(
        database,
        {"unstoppable": handler, "quick": quick},
        workers=1,
        isolation="thread",
        cancel_grace=0.5,
    )
    runner.start()
    try:
        busy = _new_job(database, "unstoppable")
        runner.submit(busy)
        _wait_for_stage(database, busy, "computing without cancel points")
        waiting = _new_job(database, "quick")
        runner.submit(waiting)
        runner.request_cancel(waiting)
        job = _job(database, waiting)
        assert job.state == "cancelled" and "before it started" in job.log[-1]
        runner.request_cancel(busy)
    finally:
        handler.release.set()
        runner.stop()


def test_solve_monitor_shows_incumbent_and_bound_and_reads_a_cancel_from_the_row(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(job_context, "PROGRESS_WRITE_SECONDS", 0.0)  # every report writes
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
    # the row is read at most every poll_interval: the monitor sees the cancel on a later call
    wait_until(monitor.should_stop, what="the monitor to see the cancel in the row")
    # a solver may still report once cancelled: report() goes on writing and never raises
    monitor.report("still going", incumbent=815.0)
    assert _job(database, job_id).stage.startswith("still going, best so far 815")
    assert context.cancel_requested()
    with pytest.raises(JobCancelled):
        context.progress(0.9, "next batch")


def test_embedding_progress_numbers_are_stored_while_running_and_dropped_after(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recommender.progress import TextProgressMeter
    from reviewer_recommender.jobs.context import finalize

    monkeypatch.setattr(job_context, "PROGRESS_WRITE_SECONDS", 0.0)  # every report writes
    job_id = _new_job(database, "manual")
    with database.session() as session:
        session.get(Job, job_id).state = "running"  # type: ignore[union-attr]
        session.commit()
    context = JobContext(database, _job(database, job_id), threading.Event())
    clock = iter([0.0, 20.0]).__next__
    stage = TextProgressMeter(3400, clock=clock).stage(1200)
    context.sub_progress(0.1, 0.9)(stage.detail.fraction, stage)
    job = _job(database, job_id)
    assert job.stage == "embedding 1,200 / 3,400 texts, 60 texts/s, about 37 s left"
    assert job.progress == pytest.approx(0.1 + 0.8 * 1200 / 3400)
    assert job.result["progress"]["texts_done"] == 1200
    assert job.result["progress"]["texts_total"] == 3400
    assert job.result["progress"]["texts_per_second"] == 60.0
    context.progress(0.95, "writing results")  # a plain stage leaves the numbers as they were
    assert _job(database, job_id).result["progress"]["texts_done"] == 1200
    assert finalize(database, job_id, "failed", "failed", error="boom")
    assert _job(database, job_id).result == {}  # numbers of a run are no result
