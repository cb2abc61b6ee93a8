"""Which server holds a job, and how a job's process ends with its server.

**Ownership.** Each :class:`~reviewer_recommender.jobs.runner.JobRunner` has an ``owner``
(``host/pid/random``). It claims every job it queues (the row's ``owner`` and
``heartbeat_at``) and refreshes ``heartbeat_at`` of its unfinished jobs every few seconds.
A job's result commits only in a transaction whose conditional UPDATE still finds the job
``running`` and held by that owner, so a job another server marked ``interrupted`` can never
commit ``succeeded``. An unfinished job's server is gone (:func:`owner_gone`) when:

- the job has no owner (rows older than ownership, or written outside the service);
- the owner ran on this host and its process no longer runs (or is a zombie);
- the owner is this very process but none of its live runners (an earlier incarnation that
  had the same pid, as in a restarted container);
- its heartbeat is older than the lease (any host: the only sign another host can give).

**Lifeline.** A job's process gets the read end of a pipe whose write end only its server
holds. When the server dies (even by ``kill -9``) the kernel closes the write end, and:

- the read end, opened with ``O_ASYNC`` and owned by the job's process group, makes the
  kernel send ``SIGIO`` to the group, whose default action ends every process in it (the job
  and any solver it started), however busy it is and whether or not it holds the GIL;
- a watcher thread that reads the pipe kills the group with ``SIGKILL`` too (for a process
  that changed what ``SIGIO`` does);
- the result transaction checks the lifeline before it commits.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select as io_select
import signal
import socket
import threading
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import or_, select, update

from reviewer_recommender.jobs.context import append_log
from reviewer_recommender.storage.db import Database
from reviewer_recommender.storage.models import Job, utcnow

HOST = socket.gethostname()[:60]

_live_owners: set[str] = set()
_live_lock = threading.Lock()


def new_owner() -> str:
    """A fresh server-instance id: ``host/pid/random`` (at most 100 characters)."""
    return f"{HOST}/{os.getpid()}/{uuid.uuid4().hex[:16]}"


def register(owner: str) -> None:
    """``owner`` is a live runner of this process."""
    with _live_lock:
        _live_owners.add(owner)


def unregister(owner: str) -> None:
    with _live_lock:
        _live_owners.discard(owner)


def _process_runs(pid: int) -> bool:
    """Whether process ``pid`` exists on this host and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            # "pid (comm) state ...": comm may hold spaces and parentheses
            return stat.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except FileNotFoundError:
        return False
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def owner_gone(
    owner: str | None, heartbeat_at: datetime | None, now: datetime, lease: timedelta
) -> bool:
    """Whether the server ``owner`` that last beat at ``heartbeat_at`` no longer holds its
    jobs (see the module rules)."""
    if owner is None:
        return True
    with _live_lock:
        if owner in _live_owners:
            return False
    if heartbeat_at is not None and heartbeat_at.tzinfo is None:
        heartbeat_at = heartbeat_at.replace(tzinfo=now.tzinfo)  # SQLite drops the zone
    if heartbeat_at is None or now - heartbeat_at > lease:
        return True
    host, _, rest = owner.partition("/")
    pid_text = rest.partition("/")[0]
    if host != HOST or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    return pid == os.getpid() or not _process_runs(pid)


# ---- job rows -------------------------------------------------------------------------------


def claim(database: Database, job_id: int, owner: str) -> bool:
    """Make ``owner`` the holder of a queued job that nobody else holds."""
    with database.session() as session:
        moved = session.execute(
            update(Job)
            .where(
                Job.id == job_id,
                Job.state == "queued",
                or_(Job.owner.is_(None), Job.owner == owner),
            )
            .values(owner=owner, heartbeat_at=utcnow())
        )
        session.commit()
    return bool(moved.rowcount == 1)  # type: ignore[attr-defined]


def beat(database: Database, owner: str, job_ids: Sequence[int]) -> None:
    """``owner`` still holds its unfinished jobs among ``job_ids``."""
    if not job_ids:
        return
    with database.session() as session:
        session.execute(
            update(Job)
            .where(
                Job.id.in_(list(job_ids)),
                Job.owner == owner,
                Job.state.in_(("queued", "running")),
            )
            .values(heartbeat_at=utcnow())
        )
        session.commit()


def interrupt_abandoned(database: Database, owner: str, lease_seconds: float) -> int:
    """Mark ``interrupted`` every queued or running job whose server is gone (as seen by
    the server ``owner``: see :func:`owner_gone`); returns how many."""
    now = utcnow()
    lease = timedelta(seconds=lease_seconds)
    with database.session() as session:
        unfinished = session.execute(
            select(Job.id, Job.state, Job.stage, Job.owner, Job.heartbeat_at).where(
                Job.state.in_(("queued", "running"))
            )
        ).all()
    marked = 0
    for job_id, state, stage, holder, heartbeat_at in unfinished:
        if holder != owner and owner_gone(holder, heartbeat_at, now, lease):
            marked += _interrupt(database, job_id, state, stage, holder, heartbeat_at)
    return marked


def _interrupt(
    database: Database,
    job_id: int,
    state: str,
    stage: str,
    holder: str | None,
    heartbeat_at: datetime | None,
) -> bool:
    """Mark one abandoned job interrupted, unless its row moved on since it was read (its
    server beat again, finished it, or another server marked it first)."""
    with database.session() as session:
        moved = session.execute(
            update(Job)
            .where(
                Job.id == job_id,
                Job.state == state,
                Job.owner.is_(None) if holder is None else Job.owner == holder,
                Job.heartbeat_at.is_(None)
                if heartbeat_at is None
                else Job.heartbeat_at == heartbeat_at,
            )
            .values(
                state="interrupted",
                stage=f"interrupted while {stage}"[:200],
                finished_at=utcnow(),
                result={},  # a running job's progress numbers are no result
            )
        )
        if moved.rowcount != 1:  # type: ignore[attr-defined]
            session.rollback()
            return False
        append_log(session, job_id, f"interrupted: the server stopped while the job was {state}")
        session.commit()
        return True


# ---- the job's process side -----------------------------------------------------------------


def _end_group() -> None:
    """End this process and its process group (when it leads one)."""
    with contextlib.suppress(OSError):
        if os.getpgid(0) == os.getpid():
            os.killpg(0, signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)


def hold_lifeline(fd: int) -> None:
    """In a job's process: end it (and its process group) as soon as the server that holds
    the write end of the pipe ``fd`` is gone. Call after the process made its own group."""
    with contextlib.suppress(OSError):
        group = os.getpgid(0)
        owner = -group if group == os.getpid() else os.getpid()
        fcntl.fcntl(fd, fcntl.F_SETOWN, owner)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)

    def watch() -> None:
        while True:
            try:
                if os.read(fd, 1) == b"":
                    break
            except InterruptedError:
                continue
            except OSError:
                break
        _end_group()

    threading.Thread(target=watch, name="job-lifeline", daemon=True).start()
    if not lifeline_intact(fd):  # the server died before the watch began
        _end_group()


def lifeline_intact(fd: int) -> bool:
    """Whether the server still holds the pipe ``fd``: its server never writes, so a
    readable read end means the write end was closed."""
    try:
        readable, _, _ = io_select.select([fd], [], [], 0)
    except (OSError, ValueError):
        return False
    return not readable
