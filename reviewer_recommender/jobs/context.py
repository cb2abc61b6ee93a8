"""What a job's handler sees: its :class:`JobContext` (progress, cancel, log, the result
transaction), the :class:`JobSolveMonitor` that adapts a job to :mod:`matching.monitor`, and
how a handler's ending is recorded. See :mod:`reviewer_recommender.jobs.runner` for the runner."""

from __future__ import annotations

import contextlib
import math
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from matching.monitor import SolveCancelled
from recommender.progress import ProgressStage
from reviewer_recommender.storage.db import Database
from reviewer_recommender.storage.models import Job, utcnow

FINAL_STATES = frozenset({"succeeded", "failed", "cancelled", "interrupted"})
LOG_LIMIT = 200
PROGRESS_WRITE_SECONDS = 0.2


class JobCancelled(Exception):
    """Raised inside a handler when its job was cancelled."""


class JobFailed(Exception):
    """A handler's expected failure: ``message`` becomes the job's error, no traceback."""


class CancelFlag(Protocol):
    """``threading.Event`` or ``multiprocessing.Event``."""

    def is_set(self) -> bool: ...

    def set(self) -> None: ...


def stamp(message: str) -> str:
    return f"{utcnow().isoformat(timespec='seconds')} {message}"


class JobContext:
    """What a handler sees: its job's id, venue and params, progress reporting, a solve
    monitor and a session factory. ``finish(session, result)`` marks success inside the
    handler's result transaction.

    ``holder_alive``: whether the server that holds the job still runs (a job's own process
    asks its lifeline; a job on a thread of the server needs no such check)."""

    def __init__(
        self,
        database: Database,
        job: Job,
        cancel: CancelFlag,
        *,
        poll_interval: float = 0.5,
        holder_alive: Callable[[], bool] | None = None,
    ):
        self.database = database
        self.job_id = job.id
        self.venue_id = job.venue_id
        self.params = dict(job.params)
        self.created_by = job.created_by
        # the server holding the job when it started: the result commits only under it
        self.owner = job.owner
        self._holder_alive = holder_alive or (lambda: True)
        self._cancel = cancel
        self._poll_interval = poll_interval
        self._last_write = 0.0
        self._last_poll = time.monotonic()
        self._progress = 0.0
        self._lock = threading.Lock()

    def session(self) -> Session:
        return self.database.session()

    def cancel_requested(self) -> bool:
        """True once a cancel was requested: the in-memory flag on every call, the database
        row at most every ``poll_interval`` seconds (a cancel sent to another process)."""
        if self._cancel.is_set():
            return True
        now = time.monotonic()
        if now - self._last_poll < self._poll_interval:
            return False
        self._last_poll = now
        with self.session() as session:
            requested = session.scalar(select(Job.cancel_requested).where(Job.id == self.job_id))
        if requested:
            self._cancel.set()
        return bool(requested)

    def check_cancelled(self) -> None:
        if self.cancel_requested():
            raise JobCancelled()

    def progress(self, fraction: float, stage: str, *, force: bool = False) -> None:
        """Record progress (fraction in [0, 1]) at most every 0.2 s unless ``force``; raises
        :class:`JobCancelled` once the job was cancelled (the handler's cancel point)."""
        self.check_cancelled()
        if self.record_progress(fraction, stage, force=force):
            self.check_cancelled()

    def record_progress(self, fraction: float | None, stage: str, *, force: bool = False) -> bool:
        """Write progress (``None`` keeps the fraction) unless written less than 0.2 s ago
        and not ``force``; never raises for a cancel. Returns whether it wrote; reads the
        cancel column in the same round trip. A :class:`~recommender.progress.ProgressStage`
        (texts being embedded, papers being scored) also writes its numbers as the running
        job's ``result = {"progress": {texts_done, texts_total, texts_per_second,
        eta_seconds, elapsed_seconds}}`` (scoring: ``papers_done``, ``papers_total``,
        ``papers_per_second``, ``blocks_done``, ``blocks_total`` in place of the texts),
        replaced by the real result when the job succeeds and emptied when it ends
        otherwise."""
        with self._lock:
            now = time.monotonic()
            if not force and now - self._last_write < PROGRESS_WRITE_SECONDS:
                return False
            self._last_write = now
            if fraction is not None and math.isfinite(fraction):
                self._progress = max(0.0, min(1.0, float(fraction)))
            progress = self._progress
        values: dict[str, Any] = {"progress": progress, "stage": str(stage)[:200]}
        if isinstance(stage, ProgressStage):
            # texts done/total, rate, ETA: the running job's result holds them until it ends
            values["result"] = {"progress": stage.detail.to_dict()}
        with self.session() as session:
            session.execute(
                update(Job).where(Job.id == self.job_id, Job.state == "running").values(**values)
            )
            session.commit()
            requested = session.scalar(select(Job.cancel_requested).where(Job.id == self.job_id))
        self._last_poll = time.monotonic()
        if requested:
            self._cancel.set()
        return True

    def sub_progress(self, start: float, end: float) -> Callable[[float, str], None]:
        """A ``progress(fraction, stage)`` callback mapping [0, 1] onto [start, end]; it
        raises :class:`JobCancelled` once the job was cancelled."""

        def report(fraction: float, stage: str) -> None:
            self.progress(start + (end - start) * float(fraction), stage)

        return report

    def solve_monitor(self, start: float = 0.2, end: float = 0.9) -> JobSolveMonitor:
        """A :class:`matching.monitor.SolveMonitor` for a solve that fills the progress range
        [start, end]: it shows the solver's stage, incumbent and bound, and tells the solver
        to stop once the job is cancelled."""
        return JobSolveMonitor(self, start, end)

    def log(self, message: str) -> None:
        with self.session() as session:
            job = session.get(Job, self.job_id)
            if job is not None:
                job.log = [*job.log, stamp(message)][-LOG_LIMIT:]
                session.commit()

    def finish(self, session: Session, result: dict[str, Any]) -> None:
        """Mark the job succeeded in ``session`` (the result transaction); the caller commits.
        Raises JobCancelled, so that nothing is written, if a cancel arrived meanwhile, if
        the job is no longer running (abandoned after a cancel, or marked interrupted), if
        another server holds it now, or if its server is gone. The state moves by one
        conditional UPDATE in this transaction, which locks the row until the commit (and on
        SQLite the database, whose write lock the result rows already took), so neither a
        cancel nor an interruption can slip in between this check and the result."""
        if self._cancel.is_set() or not self._holder_alive():
            raise JobCancelled()
        moved = session.execute(
            update(Job)
            .where(
                Job.id == self.job_id,
                Job.state == "running",
                Job.cancel_requested.is_(False),
                Job.owner.is_(None) if self.owner is None else Job.owner == self.owner,
            )
            .values(
                state="succeeded", progress=1.0, stage="done", result=result, finished_at=utcnow()
            )
            .execution_options(synchronize_session=False)
        )
        if moved.rowcount != 1:  # type: ignore[attr-defined]
            raise JobCancelled()
        append_log(session, self.job_id, "done")


class JobSolveMonitor:
    """Adapts a job to :class:`matching.monitor.SolveMonitor`.

    ``report`` writes the solver's stage, incumbent and bound as the job's stage (throttled;
    a new incumbent is also logged, at most every ``log_seconds``) and its fraction onto
    [start, end] of the job's progress; it never raises, since it is called from inside
    solvers. ``should_stop`` is the job's cancel flag (in memory on every call, the database
    row at most every ``poll_interval`` seconds)."""

    def __init__(self, context: JobContext, start: float, end: float, log_seconds: float = 5.0):
        self.context = context
        self.start = start
        self.end = end
        self.log_seconds = log_seconds
        self.incumbent: float | None = None
        self.bound: float | None = None
        self._last_log = -math.inf
        self._logged: tuple[float | None, float | None] = (None, None)

    def report(
        self,
        stage: str,
        *,
        fraction: float | None = None,
        incumbent: float | None = None,
        bound: float | None = None,
    ) -> None:
        if incumbent is not None and math.isfinite(incumbent):
            self.incumbent = float(incumbent)
        if bound is not None and math.isfinite(bound):
            self.bound = float(bound)
        text = self.describe(stage)
        mapped = None if fraction is None else self.start + (self.end - self.start) * fraction
        # a job's failure to record progress must not break the solve
        with contextlib.suppress(Exception):
            self.context.record_progress(mapped, text)
            now = time.monotonic()
            if (self.incumbent, self.bound) != self._logged and (
                now - self._last_log >= self.log_seconds
            ):
                self._last_log = now
                self._logged = (self.incumbent, self.bound)
                self.context.log(text)

    def describe(self, stage: str) -> str:
        """``stage`` plus the incumbent, bound and gap known so far, in words."""
        parts = [stage]
        if self.incumbent is not None:
            parts.append(f"best so far {self.incumbent:.6g}")
        if self.bound is not None:
            parts.append(f"bound {self.bound:.6g}")
        if self.incumbent is not None and self.bound is not None:
            gap = (self.bound - self.incumbent) / max(abs(self.bound), 1e-9)
            parts.append(f"gap {max(gap, 0.0):.2%}")
        return ", ".join(parts)

    def should_stop(self) -> bool:
        try:
            return self.context.cancel_requested()
        except Exception:
            return self.context._cancel.is_set()


Handler = Callable[[JobContext], None]


def finalize(
    database: Database,
    job_id: int,
    state: str,
    message: str,
    *,
    error: str = "",
    from_states: Iterable[str] = ("running",),
) -> bool:
    """Move the job from one of ``from_states`` to ``state`` (never over a final state; its
    result emptied: only success writes one); returns whether it did. The state changes by
    one conditional UPDATE, so of two racing transitions (a cancel and a start, a worker and
    its abandoned thread) exactly one wins."""
    with database.session() as session:
        moved = session.execute(
            update(Job)
            .where(Job.id == job_id, Job.state.in_(tuple(from_states)))
            # result={}: a running job's progress numbers (see record_progress) are no result
            .values(state=state, error=error, finished_at=utcnow(), result={})
        )
        if moved.rowcount != 1:  # type: ignore[attr-defined]
            session.rollback()
            return False
        append_log(session, job_id, message)
        session.commit()
        return True


def append_log(session: Session, job_id: int, message: str) -> None:
    job = session.get(Job, job_id, populate_existing=True)
    if job is not None:
        job.log = [*job.log, stamp(message)][-LOG_LIMIT:]


def run_handler(database: Database, context: JobContext, handler: Handler) -> None:
    """Run ``handler`` and record how it ended (cancelled, failed in words, or a bug)."""
    job_id = context.job_id
    try:
        handler(context)
    except (JobCancelled, SolveCancelled):
        finalize(database, job_id, "cancelled", "cancelled; no result written")
    except JobFailed as failure:
        finalize(database, job_id, "failed", str(failure), error=str(failure))
    except Exception as failure:
        # any bug must end the job as failed, never leave it stuck in "running"
        detail = "".join(traceback.format_exception_only(type(failure), failure)).strip()
        finalize(database, job_id, "failed", f"internal error: {detail}", error=detail)
    else:
        # handler forgot finish(): record it truthfully rather than hang
        finalize(
            database,
            job_id,
            "failed",
            "handler ended without a result",
            error="handler ended without a result",
        )
