"""Request parameters and shared objects for every router: the database session,
pagination, the job runner and the explainer cache."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query, Request
from sqlalchemy.orm import Session

from api.db import get_session
from api.explain import ExplainerCache
from api.ids import MAX_OFFSET
from api.jobs import JobRunner

SessionDep = Annotated[Session, Depends(get_session)]
Limit = Annotated[int, Query(ge=1, le=1000, description="page size")]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET, description="rows to skip")]


def job_runner(request: Request) -> JobRunner:
    runner: JobRunner = request.app.state.jobs
    return runner


def explainer_cache(request: Request) -> ExplainerCache:
    cache: ExplainerCache = request.app.state.explainers
    return cache


Runner = Annotated[JobRunner, Depends(job_runner)]
Explainers = Annotated[ExplainerCache, Depends(explainer_cache)]
