"""Background jobs: a thread pool inside the server process, with all state in the database.

A job row is the single source of truth: ``queued`` → ``running`` → ``succeeded`` | ``failed``
| ``cancelled``. When the server starts, any job still ``queued`` or ``running`` belonged to a
process that died, so it is marked ``interrupted`` (it can be re-run). A handler computes its
result in memory and writes it, together with the final job state, in one transaction: a
result is either fully there or not there at all.

Cancellation is cooperative: the handler's progress callback raises :class:`JobCancelled`
once a cancel was requested, and the final commit checks the flag again, so a cancelled job
never writes a result.
"""

from __future__ import annotations

import contextlib
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from sqlalchemy import update
from sqlalchemy.orm import Session

from api.db import Database
from api.models import Job, utcnow

FINAL_STATES = frozenset({"succeeded", "failed", "cancelled", "interrupted"})
LOG_LIMIT = 200


class JobCancelled(Exception):
    """Raised inside a handler when its job was cancelled."""


class JobFailed(Exception):
    """A handler's expected failure: ``message`` becomes the job's error, no traceback."""


class JobContext:
    """What a handler sees: its job's id, venue and params, progress reporting and a session
    factory. ``finish(session, result)`` marks success inside the handler's result transaction."""

    def __init__(self, runner: JobRunner, job: Job):
        self.runner = runner
        self.job_id = job.id
        self.venue_id = job.venue_id
        self.params = dict(job.params)
        self._last_write = 0.0
        self._cancel = runner._cancel_event(job.id)

    def session(self) -> Session:
        return self.runner.database.session()

    def check_cancelled(self) -> None:
        if self._cancel.is_set():
            raise JobCancelled()

    def progress(self, fraction: float, stage: str, *, force: bool = False) -> None:
        """Record progress (fraction in [0, 1]) at most every 0.2 s unless ``force``."""
        self.check_cancelled()
        now = time.monotonic()
        if not force and now - self._last_write < 0.2:
            return
        self._last_write = now
        with self.session() as session:
            session.execute(
                update(Job)
                .where(Job.id == self.job_id)
                .values(progress=max(0.0, min(1.0, float(fraction))), stage=stage[:200])
            )
            session.commit()
            cancelled = session.get(Job, self.job_id)
            if cancelled is not None and cancelled.cancel_requested:
                self._cancel.set()
        self.check_cancelled()

    def sub_progress(self, start: float, end: float) -> Callable[[float, str], None]:
        """A ``progress(fraction, stage)`` callback mapping [0, 1] onto [start, end]."""

        def report(fraction: float, stage: str) -> None:
            self.progress(start + (end - start) * float(fraction), stage)

        return report

    def log(self, message: str) -> None:
        with self.session() as session:
            job = session.get(Job, self.job_id)
            if job is not None:
                job.log = [*job.log, f"{utcnow().isoformat(timespec='seconds')} {message}"][
                    -LOG_LIMIT:
                ]
                session.commit()

    def finish(self, session: Session, result: dict[str, Any]) -> None:
        """Mark the job succeeded in ``session`` (the result transaction); the caller commits.
        Raises JobCancelled if a cancel arrived meanwhile, so nothing is written."""
        job = session.get(Job, self.job_id, populate_existing=True)
        if job is None:
            raise JobFailed("job row vanished")
        if job.cancel_requested or self._cancel.is_set():
            raise JobCancelled()
        job.state = "succeeded"
        job.progress = 1.0
        job.stage = "done"
        job.result = result
        job.finished_at = utcnow()
        job.log = [*job.log, f"{utcnow().isoformat(timespec='seconds')} done"][-LOG_LIMIT:]


Handler = Callable[[JobContext], None]


class JobRunner:
    """Runs job rows through registered handlers on a thread pool (or inline for tests)."""

    def __init__(
        self,
        database: Database,
        handlers: dict[str, Handler],
        *,
        workers: int = 2,
        inline: bool = False,
    ):
        self.database = database
        self.handlers = handlers
        self.inline = inline
        self.workers = workers
        self._executor: ThreadPoolExecutor | None = None
        self._cancel_events: dict[int, threading.Event] = {}
        self._futures: dict[int, Future[None]] = {}
        self._lock = threading.Lock()

    def start(self) -> int:
        """Mark jobs left over by a dead process as interrupted; start the pool. Returns how
        many jobs were marked."""
        with self.database.session() as session:
            stale = session.query(Job).filter(Job.state.in_(("queued", "running"))).all()
            for job in stale:
                job.log = [
                    *job.log,
                    f"{utcnow().isoformat(timespec='seconds')} interrupted: the server stopped "
                    f"while the job was {job.state}",
                ][-LOG_LIMIT:]
                job.state = "interrupted"
                job.stage = f"interrupted while {job.stage}"
                job.finished_at = utcnow()
            session.commit()
        if not self.inline:
            self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="recommender-job")
        return len(stale)

    def stop(self, timeout: float = 10.0) -> None:
        """Cancel running jobs and wait up to ``timeout`` seconds for them to stop."""
        with self._lock:
            for event in self._cancel_events.values():
                event.set()
            futures = list(self._futures.values())
        deadline = time.monotonic() + timeout
        for future in futures:
            # the job row already records any failure
            with contextlib.suppress(Exception):
                future.result(timeout=max(0.0, deadline - time.monotonic()))
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)

    def _cancel_event(self, job_id: int) -> threading.Event:
        with self._lock:
            return self._cancel_events.setdefault(job_id, threading.Event())

    def submit(self, job_id: int) -> None:
        if self.inline or self._executor is None:
            self._run(job_id)
            return
        self._cancel_event(job_id)
        future = self._executor.submit(self._run, job_id)
        with self._lock:
            self._futures[job_id] = future

    def request_cancel(self, job_id: int) -> None:
        self._cancel_event(job_id).set()

    def wait(self, job_id: int, timeout: float) -> None:
        """Block until the job's thread ends or ``timeout`` seconds pass."""
        with self._lock:
            future = self._futures.get(job_id)
        if future is not None:
            # TimeoutError, or the job's own failure (recorded in its row)
            with contextlib.suppress(Exception):
                future.result(timeout=timeout)

    def _run(self, job_id: int) -> None:
        try:
            self._execute(job_id)
        finally:
            with self._lock:
                self._futures.pop(job_id, None)
                self._cancel_events.pop(job_id, None)

    def _execute(self, job_id: int) -> None:
        with self.database.session() as session:
            job = session.get(Job, job_id)
            if job is None or job.state != "queued":
                return
            if job.cancel_requested or self._cancel_event(job_id).is_set():
                self._finalize(job_id, "cancelled", "cancelled before it started")
                return
            job.state = "running"
            job.started_at = utcnow()
            job.stage = "starting"
            job.log = [*job.log, f"{utcnow().isoformat(timespec='seconds')} started"]
            session.commit()
            context = JobContext(self, job)
        handler = self.handlers[job.kind]
        try:
            handler(context)
        except JobCancelled:
            self._finalize(job_id, "cancelled", "cancelled; no result written")
        except JobFailed as failure:
            self._finalize(job_id, "failed", str(failure), error=str(failure))
        except Exception as failure:
            # any bug must end the job as failed, never leave it stuck in "running"
            detail = "".join(traceback.format_exception_only(type(failure), failure)).strip()
            self._finalize(job_id, "failed", f"internal error: {detail}", error=detail)
        else:
            with self.database.session() as session:
                state = session.get(Job, job_id)
                if state is not None and state.state == "running":
                    # handler forgot finish(): record it truthfully rather than hang
                    self._finalize(
                        job_id,
                        "failed",
                        "handler ended without a result",
                        error="handler ended without a result",
                    )

    def _finalize(self, job_id: int, state: str, message: str, *, error: str = "") -> None:
        with self.database.session() as session:
            job = session.get(Job, job_id)
            if job is None:
                return
            job.state = state
            job.error = error
            job.finished_at = utcnow()
            job.log = [*job.log, f"{utcnow().isoformat(timespec='seconds')} {message}"][-LOG_LIMIT:]
            session.commit()
