"""Background jobs: a pool of workers inside the server, with all state in the database.

A job row is the single source of truth: ``queued`` → ``running`` → ``succeeded`` | ``failed``
| ``cancelled``. A handler computes its result in memory and writes it, together with the
final job state, in one transaction: a result is either fully there or not there at all.

**Which server holds a job** (:mod:`reviewer_recommender.jobs.lease`): the runner claims each
job it queues (the row's ``owner``, its own id) and keeps the row's ``heartbeat_at`` fresh
while it holds it. A result commits only while the job is still ``running`` and held by that
server (checked by the result transaction's own conditional UPDATE), and a job's process
ends with its server, even a killed one (its lifeline pipe). When a runner starts, and every
few seconds after, it marks ``interrupted`` (re-runnable) every unfinished job whose server is
gone; jobs of other live servers sharing the database are left alone.

**Where a handler runs** (``isolation``):

- ``"process"`` (the service's default): each job runs in a child process forked from a
  preloaded fork server. On cancel the child is asked to stop (its progress callbacks raise
  :class:`JobCancelled`, its solve monitor says stop); if it has not ended ``cancel_grace``
  seconds later it is killed, with its process group (e.g. a CBC solver it started). Any
  solver, even one that cannot be interrupted (scipy's ``linprog``, OR-Tools' min-cost flow,
  a HiGHS call without a callback), therefore stops within seconds, and its worker and CPU
  are free again. A child that dies (killed for memory, a crash in native code) fails its
  job in words instead of leaving it ``running``.
- ``"thread"``: the handler runs on a thread of this process (for handlers that cannot be
  imported by name, e.g. in tests). A handler that ignores a cancel is abandoned after
  ``cancel_grace`` seconds: the job is marked ``cancelled`` and its worker is free, but the
  thread runs on until the handler returns, and its result is discarded.
- ``inline=True``: the request that starts a job runs it to completion (tests).

Cancellation is read from two places: the in-memory flag that ``request_cancel`` sets (this
process) and the ``cancel_requested`` column (a cancel that reached another server process),
which the worker polls every ``poll_interval`` seconds and the job context reads at most
that often. Progress callbacks check the in-memory flag on every call, which costs nothing.
The final commit checks both again, so a cancelled job never writes a result.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
from concurrent.futures import Future
from typing import Any, Literal

from sqlalchemy import select, update

from reviewer_recommender.jobs.child import child_main
from reviewer_recommender.jobs.context import (
    FINAL_STATES,
    Handler,
    JobCancelled,
    JobContext,
    JobFailed,
    JobSolveMonitor,
    append_log,
    finalize,
    run_handler,
)
from reviewer_recommender.jobs.fair import FairExecutor
from reviewer_recommender.jobs.lease import (
    beat,
    claim,
    interrupt_abandoned,
    new_owner,
    register,
    unregister,
)
from reviewer_recommender.storage.db import Database
from reviewer_recommender.storage.models import Job, utcnow

__all__ = [
    "FINAL_STATES",
    "Handler",
    "JobCancelled",
    "JobContext",
    "JobFailed",
    "JobRunner",
    "JobSolveMonitor",
]

# what the fork server imports once, so that a job's process starts in milliseconds
FORKSERVER_PRELOAD = (
    "reviewer_recommender.jobs.handlers",
    "matching",
    "numpy",
    "pandas",
    "scipy.sparse",
    "sklearn.feature_extraction.text",
    "recommender.affinity",
    "recommender.conflicts",
    "reviewer_recommender.services.assignment",
)

Isolation = Literal["process", "thread"]


class JobRunner:
    """Runs job rows through registered handlers on ``workers`` workers (or inline).

    ``handlers``: kind -> handler, used by the ``"thread"`` isolation and inline runs.
    ``handler_factory``: ``"module:function"`` returning the same dict when called with
    ``factory_args``; needed by the ``"process"`` isolation (a job's process imports it).
    ``cancel_grace``: seconds a cancelled handler may take to stop by itself before it is
    killed (process) or abandoned (thread).
    ``heartbeat_seconds``: how often the runner says it still holds its jobs (and looks for
    jobs of servers that are gone); ``lease_seconds``: how old a heartbeat may be before its
    server counts as gone (the test for a server on another host).
    ``venue_cap``: jobs of one venue running at once (default: one less than ``workers``, at
    least 1); workers take jobs round-robin across venues
    (:class:`reviewer_recommender.jobs.fair.FairExecutor`).
    ``max_queued_per_venue``: jobs of one venue queued or running at once; starting one more
    is refused (:func:`reviewer_recommender.storage.repository.start_job`), so a venue's
    flood of jobs fills neither the queue nor the database.
    """

    def __init__(
        self,
        database: Database,
        handlers: dict[str, Handler],
        *,
        workers: int = 2,
        inline: bool = False,
        isolation: Isolation = "thread",
        handler_factory: str | None = None,
        factory_args: tuple[Any, ...] = (),
        cancel_grace: float = 2.0,
        poll_interval: float = 0.5,
        heartbeat_seconds: float = 5.0,
        lease_seconds: float = 60.0,
        venue_cap: int | None = None,
        max_queued_per_venue: int = 20,
    ):
        if isolation == "process" and handler_factory is None:
            raise ValueError("process isolation needs a handler_factory ('module:function')")
        if isolation == "process" and database.engine.url.database in (None, "", ":memory:"):
            isolation = "thread"  # an in-memory database cannot be shared with a child
        self.database = database
        self.handlers = handlers
        self.inline = inline
        self.workers = workers
        self.venue_cap = venue_cap or max(1, workers - 1)
        if max_queued_per_venue < 1:
            raise ValueError("max_queued_per_venue must be at least 1")
        self.max_queued_per_venue = max_queued_per_venue
        self.isolation: Isolation = isolation
        self.handler_factory = handler_factory
        self.factory_args = factory_args
        self.cancel_grace = cancel_grace
        self.poll_interval = poll_interval
        self.heartbeat_seconds = heartbeat_seconds
        self.lease_seconds = lease_seconds
        # this server instance, as job rows name their holder
        self.owner = new_owner()
        self._executor: FairExecutor | None = None
        self._cancel_events: dict[int, threading.Event] = {}
        self._futures: dict[int, Future[None]] = {}
        self._held: set[int] = set()
        self._lock = threading.Lock()
        self._mp: Any = None
        self._stopping = threading.Event()
        self._heartbeat: threading.Thread | None = None

    def start(self) -> int:
        """Mark jobs left by servers that are gone as interrupted; start the pool and the
        heartbeat. Returns how many jobs were marked."""
        register(self.owner)
        interrupted = self.interrupt_abandoned()
        self._stopping.clear()
        self._heartbeat = threading.Thread(
            target=self._beat, name="recommender-job-heartbeat", daemon=True
        )
        self._heartbeat.start()
        if not self.inline:
            self._executor = FairExecutor(self.workers, self.venue_cap)
            if self.isolation == "process":
                try:
                    self._mp = multiprocessing.get_context("forkserver")
                except ValueError:  # a platform without fork (Windows)
                    self.isolation = "thread"
                else:
                    self._mp.set_forkserver_preload(list(FORKSERVER_PRELOAD))
                    # start the fork server now, off the startup path
                    threading.Thread(target=self._warm_forkserver, daemon=True).start()
        return interrupted

    def interrupt_abandoned(self) -> int:
        """Mark ``interrupted`` every queued or running job whose server is gone
        (:func:`reviewer_recommender.jobs.lease.owner_gone`); returns how many."""
        return interrupt_abandoned(self.database, self.owner, self.lease_seconds)

    def _beat(self) -> None:
        """Every ``heartbeat_seconds``: say this server still holds its jobs, and interrupt
        the jobs of servers that are gone. A database hiccup skips a beat, nothing more."""
        while not self._stopping.wait(self.heartbeat_seconds):
            with self._lock:
                held = sorted(self._held)
            with contextlib.suppress(Exception):
                beat(self.database, self.owner, held)
                self.interrupt_abandoned()

    @staticmethod
    def _warm_forkserver() -> None:
        from multiprocessing import forkserver

        with contextlib.suppress(Exception):
            forkserver.ensure_running()

    def stop(self, timeout: float = 10.0) -> None:
        """Cancel running jobs and wait up to ``timeout`` seconds for them to stop (each is
        killed or abandoned after ``cancel_grace`` seconds)."""
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
            self._executor.shutdown(cancel_futures=True)
        self._stopping.set()
        if self._heartbeat is not None:
            self._heartbeat.join(5)
        unregister(self.owner)

    def _cancel_event(self, job_id: int) -> threading.Event:
        with self._lock:
            return self._cancel_events.setdefault(job_id, threading.Event())

    def submit(self, job_id: int, venue_id: str | None = None) -> None:
        """Claim the queued job (of ``venue_id``; read from its row when not given) for
        this server and queue it for a worker, fairly across venues (inline: run it now)."""
        if not self._claim(job_id):
            return
        if self.inline or self._executor is None:
            self._run_inline(job_id)
            return
        if venue_id is None:
            with self.database.session() as session:
                venue_id = session.scalar(select(Job.venue_id).where(Job.id == job_id)) or ""
        self._cancel_event(job_id)
        future = self._executor.submit(venue_id, lambda: self._run(job_id))
        with self._lock:
            self._futures[job_id] = future

    def _claim(self, job_id: int) -> bool:
        """Make this server the holder of a queued job nobody else holds."""
        if not claim(self.database, job_id, self.owner):
            return False
        with self._lock:
            self._held.add(job_id)
        return True

    def request_cancel(self, job_id: int) -> None:
        """Ask the job to stop; a job still waiting for a worker is cancelled at once."""
        self._cancel_event(job_id).set()
        finalize(
            self.database,
            job_id,
            "cancelled",
            "cancelled before it started",
            from_states=("queued",),
        )

    def wait(self, job_id: int, timeout: float) -> None:
        """Block until the job's worker ends or ``timeout`` seconds pass."""
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
                self._held.discard(job_id)

    def _start_job(self, job_id: int) -> Job | None:
        """Mark the job running; None when it must not run (gone, ended, cancelled)."""
        with self.database.session() as session:
            requested = session.scalar(select(Job.cancel_requested).where(Job.id == job_id))
        if requested or self._cancel_event(job_id).is_set():
            finalize(
                self.database,
                job_id,
                "cancelled",
                "cancelled before it started",
                from_states=("queued",),
            )
            return None
        with self.database.session() as session:
            moved = session.execute(
                update(Job)
                .where(Job.id == job_id, Job.state == "queued", Job.owner == self.owner)
                .values(
                    state="running",
                    started_at=utcnow(),
                    stage="starting",
                    heartbeat_at=utcnow(),
                )
            )
            if moved.rowcount != 1:  # type: ignore[attr-defined]
                session.rollback()
                return None
            append_log(session, job_id, "started")
            session.commit()
            return session.get(Job, job_id)

    def _run_inline(self, job_id: int) -> None:
        try:
            job = self._start_job(job_id)
            if job is not None:
                context = JobContext(
                    self.database,
                    job,
                    self._cancel_event(job_id),
                    poll_interval=self.poll_interval,
                )
                run_handler(self.database, context, self.handlers[job.kind])
        finally:
            with self._lock:
                self._cancel_events.pop(job_id, None)
                self._held.discard(job_id)

    def _execute(self, job_id: int) -> None:
        job = self._start_job(job_id)
        if job is None:
            return
        if self.isolation == "process":
            self._supervise_process(job)
        else:
            self._supervise_thread(job)

    def _cancel_seen(self, job_id: int, last_poll: list[float]) -> bool:
        """The in-memory flag, or the row's flag polled every ``poll_interval`` seconds."""
        event = self._cancel_event(job_id)
        if event.is_set():
            return True
        now = time.monotonic()
        if now - last_poll[0] >= self.poll_interval:
            last_poll[0] = now
            with contextlib.suppress(Exception), self.database.session() as session:
                if session.scalar(select(Job.cancel_requested).where(Job.id == job_id)):
                    event.set()
        return event.is_set()

    def _supervise_thread(self, job: Job) -> None:
        cancel = self._cancel_event(job.id)
        context = JobContext(self.database, job, cancel, poll_interval=self.poll_interval)
        handler = self.handlers[job.kind]
        done = threading.Event()

        def target() -> None:
            try:
                run_handler(self.database, context, handler)
            finally:
                done.set()

        threading.Thread(target=target, name=f"job-{job.id}", daemon=True).start()
        last_poll = [time.monotonic()]
        cancelled_at: float | None = None
        while not done.wait(min(0.1, self.poll_interval)):
            if cancelled_at is None and self._cancel_seen(job.id, last_poll):
                cancelled_at = time.monotonic()
            if cancelled_at is not None and time.monotonic() - cancelled_at > self.cancel_grace:
                finalize(
                    self.database,
                    job.id,
                    "cancelled",
                    f"cancelled; the handler did not stop within {self.cancel_grace:g} s, so "
                    "its worker was freed and whatever it still computes is discarded",
                )
                return

    def _supervise_process(self, job: Job) -> None:
        # the job's process holds the read end and ends once this end closes: after it
        # ended, when supervision gives up on it, or when this server dies
        lifeline, held_end = self._mp.Pipe(duplex=False)
        try:
            self._run_process(job, lifeline)
        finally:
            held_end.close()

    def _run_process(self, job: Job, lifeline: Any) -> None:
        assert self._mp is not None and self.handler_factory is not None
        child_cancel = self._mp.Event()
        process = self._mp.Process(
            target=child_main,
            args=(
                self.database.engine.url.render_as_string(hide_password=False),
                job.id,
                self.handler_factory,
                self.factory_args,
                child_cancel,
                list(sys.path),
                self.poll_interval,
                lifeline,
            ),
            name=f"recommender-job-{job.id}",
        )
        # Starting waits for the fork server, which may still be importing (seconds after
        # the server starts): start from a helper thread and keep watching for a cancel.
        launched = threading.Event()
        launch_errors: list[BaseException] = []

        def launch() -> None:
            try:
                process.start()
            except BaseException as failure:
                launch_errors.append(failure)
            finally:
                lifeline.close()  # the job's process has its own copy
                launched.set()

        threading.Thread(target=launch, name=f"job-{job.id}-launch", daemon=True).start()
        last_poll = [time.monotonic()]
        while not launched.wait(min(0.1, self.poll_interval)):
            if self._cancel_seen(job.id, last_poll):
                finalize(self.database, job.id, "cancelled", "cancelled before its process started")
                threading.Thread(
                    target=self._end_when_launched,
                    args=(process, launched, child_cancel),
                    daemon=True,
                ).start()
                return
        if launch_errors:
            failure = launch_errors[0]
            detail = "".join(traceback.format_exception_only(type(failure), failure)).strip()
            finalize(
                self.database, job.id, "failed", f"cannot start the job: {detail}", error=detail
            )
            return
        cancelled_at: float | None = None
        killed = False
        while True:
            process.join(min(0.1, self.poll_interval))
            if process.exitcode is not None:
                break
            if cancelled_at is None and self._cancel_seen(job.id, last_poll):
                cancelled_at = time.monotonic()
                child_cancel.set()
            if cancelled_at is not None and time.monotonic() - cancelled_at > self.cancel_grace:
                self._kill(process)
                killed = True
                break
        process.join(5)
        code = process.exitcode
        if killed or cancelled_at is not None:
            how = (
                f"its process did not stop within {self.cancel_grace:g} s and was ended"
                if killed
                else "no result written"
            )
            finalize(self.database, job.id, "cancelled", f"cancelled; {how}")
        elif code not in (0, None):
            cause = (
                f"ended by signal {signal.Signals(-code).name}"
                + (" (killed: out of memory?)" if code == -signal.SIGKILL else "")
                if code < 0 and -code in signal.Signals._value2member_map_
                else f"exited with status {code}"
            )
            message = f"the job's process {cause} before recording a result"
            finalize(self.database, job.id, "failed", message, error=message)
        else:
            finalize(
                self.database,
                job.id,
                "failed",
                "the job's process ended without a result",
                error="the job's process ended without a result",
            )
        with contextlib.suppress(Exception):
            process.close()

    def _end_when_launched(self, process: Any, launched: threading.Event, cancel: Any) -> None:
        """A job cancelled while its process was starting: end the process once it exists
        (it would find its job cancelled and do nothing, but should not linger)."""
        if launched.wait(600) and process.pid is not None:
            cancel.set()
            process.join(self.cancel_grace)
            if process.exitcode is None:
                self._kill(process)

    @staticmethod
    def _kill(process: Any) -> None:
        """End the job's process group (the job and any solver process it started)."""
        for sig, wait in ((signal.SIGTERM, 1.0), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, sig)
            process.join(wait)
            if process.exitcode is not None:
                return
