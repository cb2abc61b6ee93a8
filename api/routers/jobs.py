"""Job resources: state, progress, log; cancel and re-run.

Jobs are chairs' work in progress (their parameters, logs and results name drafts): viewers
get an empty list and 404 for a job id (see :mod:`reviewer_recommender.services.visibility`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, status

from api.auth import BriefReader, Reader, Writer
from api.dependencies import DatabaseDep, Limit, Offset, Runner, SessionDep
from api.ids import RowIdPath, VenueIdPath
from api.schemas import JobOut, Page
from reviewer_recommender.services import job_records
from reviewer_recommender.storage.models import Job
from reviewer_recommender.storage.repository import Paged

router = APIRouter(tags=["jobs"])


@router.get("/venues/{venue_id}/jobs", response_model=Page[JobOut])
def list_jobs(
    venue_id: VenueIdPath,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 50,
    offset: Offset = 0,
    kind: Literal["affinity", "assignment", "reassignment"] | None = None,
) -> Paged[Job]:
    """The venue's jobs, newest first (empty for viewers)."""
    return job_records.list_jobs(
        session, venue_id, principal, kind=kind, limit=limit, offset=offset
    )


@router.get("/venues/{venue_id}/jobs/{job_id}", response_model=JobOut)
async def get_job(
    venue_id: VenueIdPath,
    job_id: RowIdPath,
    principal: BriefReader,
    database: DatabaseDep,
    wait: Annotated[
        float, Query(ge=0, le=60, description="seconds to wait for the job to end")
    ] = 0,
) -> Job:
    """A job's state, progress and log; ``wait`` blocks until it ends (at most that long),
    holding no database connection while it waits."""
    return await job_records.await_job(database, venue_id, job_id, principal, wait)


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
    return job_records.cancel_job(runner, session, venue_id, job_id, principal)


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
    return job_records.rerun_job(runner, session, venue_id, job_id, principal)
