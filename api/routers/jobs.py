"""Job resources: state, progress, log; cancel and re-run.

Jobs are chairs' work in progress (their parameters, logs and results name drafts): viewers
get an empty list and 404 for a job id (see :mod:`api.visibility`).
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, status
from sqlalchemy import false, select
from sqlalchemy.orm import Session

from api.auth import Reader, Writer
from api.dependencies import Limit, Offset, Runner, SessionDep
from api.errors import ApiError
from api.ids import RowIdPath, VenueIdPath
from api.schemas import JobOut, Page
from reviewer_recommender.errors import not_found
from reviewer_recommender.jobs.runner import FINAL_STATES
from reviewer_recommender.services.tokens import Principal
from reviewer_recommender.services.visibility import sees_jobs
from reviewer_recommender.storage.models import Job
from reviewer_recommender.storage.repository import audit, paginate, start_job

router = APIRouter(tags=["jobs"])


def require_job(session: Session, venue_id: str, job_id: int, principal: Principal) -> Job:
    job = session.get(Job, job_id, populate_existing=True)
    if job is None or job.venue_id != venue_id or not sees_jobs(principal, venue_id):
        raise not_found("job", job_id)
    return job


@router.get("/venues/{venue_id}/jobs", response_model=Page[JobOut])
def list_jobs(
    venue_id: VenueIdPath,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 50,
    offset: Offset = 0,
    kind: Literal["affinity", "assignment"] | None = None,
) -> dict[str, Any]:
    """The venue's jobs, newest first (empty for viewers)."""
    query = select(Job).where(Job.venue_id == venue_id).order_by(Job.id.desc())
    if kind is not None:
        query = query.where(Job.kind == kind)
    if not sees_jobs(principal, venue_id):
        query = query.where(false())
    items, total = paginate(session, query, limit, offset)
    return {"items": items, "total": total, "limit": limit, "offset": offset}


@router.get("/venues/{venue_id}/jobs/{job_id}", response_model=JobOut)
def get_job(
    venue_id: VenueIdPath,
    job_id: RowIdPath,
    runner: Runner,
    principal: Reader,
    session: SessionDep,
    wait: Annotated[
        float, Query(ge=0, le=60, description="seconds to wait for the job to end")
    ] = 0,
) -> Job:
    """A job's state, progress and log; ``wait`` blocks until it ends (at most that long)."""
    job = require_job(session, venue_id, job_id, principal)
    deadline = time.monotonic() + wait
    while job.state not in FINAL_STATES and time.monotonic() < deadline:
        runner.wait(job_id, timeout=min(0.2, max(0.0, deadline - time.monotonic())))
        session.expire_all()
        job = require_job(session, venue_id, job_id, principal)
    return job


@router.post(
    "/venues/{venue_id}/jobs/{job_id}/cancel",
    response_model=JobOut,
    status_code=status.HTTP_202_ACCEPTED,
)
def cancel_job(
    venue_id: VenueIdPath,
    job_id: RowIdPath,
    runner: Runner,
    principal: Writer,
    session: SessionDep,
) -> Job:
    """Ask a queued or running job to stop; it ends ``cancelled`` without writing a result."""
    job = require_job(session, venue_id, job_id, principal)
    if job.state in FINAL_STATES:
        raise ApiError(
            409, "job_ended", f"job {job_id} already ended ({job.state})", state=job.state
        )
    job.cancel_requested = True
    audit(session, venue_id, principal.name, "job.cancel", job_id=job_id)
    session.commit()
    runner.request_cancel(job_id)
    return require_job(session, venue_id, job_id, principal)


@router.post(
    "/venues/{venue_id}/jobs/{job_id}/rerun",
    response_model=JobOut,
    status_code=status.HTTP_202_ACCEPTED,
)
def rerun_job(
    venue_id: VenueIdPath,
    job_id: RowIdPath,
    runner: Runner,
    principal: Writer,
    session: SessionDep,
) -> Job:
    """Start a new job with the parameters of an ended one (e.g. an interrupted job)."""
    job = require_job(session, venue_id, job_id, principal)
    if job.state not in FINAL_STATES:
        raise ApiError(409, "job_not_ended", f"job {job_id} is still {job.state}", state=job.state)
    return start_job(
        runner, session, venue_id, job.kind, dict(job.params), principal.name, rerun_of=job.id
    )
