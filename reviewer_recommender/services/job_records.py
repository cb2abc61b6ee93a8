"""A venue's jobs as records: list, read (optionally waiting for the end), cancel, re-run.

Jobs are chairs' work in progress (their parameters, logs and results name drafts): viewers
get an empty list and 404 for a job id (see :mod:`reviewer_recommender.services.visibility`).
"""

from __future__ import annotations

import time

import anyio
from sqlalchemy import false, select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import StateConflict, not_found
from reviewer_recommender.jobs.runner import FINAL_STATES, JobRunner
from reviewer_recommender.services.principals import Principal
from reviewer_recommender.services.visibility import sees_jobs
from reviewer_recommender.storage.db import Database
from reviewer_recommender.storage.models import Job
from reviewer_recommender.storage.repository import Paged, audit, query_page, start_job


def require_job(session: Session, venue_id: str, job_id: int, principal: Principal) -> Job:
    """The job as stored now, if it belongs to the venue and the caller sees jobs (404
    otherwise)."""
    job = session.get(Job, job_id, populate_existing=True)
    if job is None or job.venue_id != venue_id or not sees_jobs(principal, venue_id):
        raise not_found("job", job_id)
    return job


def list_jobs(
    session: Session,
    venue_id: str,
    principal: Principal,
    *,
    kind: str | None,
    limit: int,
    offset: int,
) -> Paged[Job]:
    """The venue's jobs (of one ``kind`` when given), newest first; empty for viewers."""
    query = select(Job).where(Job.venue_id == venue_id).order_by(Job.id.desc())
    if kind is not None:
        query = query.where(Job.kind == kind)
    if not sees_jobs(principal, venue_id):
        query = query.where(false())
    return query_page(session, query, limit, offset)


POLL_SECONDS = 0.25


async def await_job(
    database: Database,
    venue_id: str,
    job_id: int,
    principal: Principal,
    wait: float,
    poll: float = POLL_SECONDS,
) -> Job:
    """The job once it has ended, or as it is after ``wait`` seconds. Each look at the job
    is a short session of its own on a worker thread, and the wait between two looks an
    ``await`` on the event loop: a long poll holds no database connection and no thread
    while it waits."""

    def look() -> Job:
        with database.session() as session:
            return require_job(session, venue_id, job_id, principal)

    deadline = time.monotonic() + wait
    job = await anyio.to_thread.run_sync(look)
    while job.state not in FINAL_STATES and time.monotonic() < deadline:
        await anyio.sleep(min(poll, max(0.0, deadline - time.monotonic())))
        job = await anyio.to_thread.run_sync(look)
    return job


def cancel_job(
    runner: JobRunner, session: Session, venue_id: str, job_id: int, principal: Principal
) -> Job:
    """Ask a queued or running job to stop (audited, committed); 409 ``job_ended`` when it
    already ended."""
    job = require_job(session, venue_id, job_id, principal)
    if job.state in FINAL_STATES:
        raise StateConflict(
            "job_ended", f"job {job_id} already ended ({job.state})", state=job.state
        )
    job.cancel_requested = True
    audit(session, venue_id, principal.name, "job.cancel", job_id=job_id)
    session.commit()
    runner.request_cancel(job_id)
    return require_job(session, venue_id, job_id, principal)


def rerun_job(
    runner: JobRunner, session: Session, venue_id: str, job_id: int, principal: Principal
) -> Job:
    """A new job with the parameters of an ended one; 409 ``job_not_ended`` otherwise."""
    job = require_job(session, venue_id, job_id, principal)
    if job.state not in FINAL_STATES:
        raise StateConflict("job_not_ended", f"job {job_id} is still {job.state}", state=job.state)
    return start_job(
        runner, session, venue_id, job.kind, dict(job.params), principal.name, rerun_of=job.id
    )
