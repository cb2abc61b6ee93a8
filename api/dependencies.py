"""Request parameters and shared objects for every router: the database session,
pagination, the service's settings, the job runner, the explainer cache and the server's
scoring run options."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Query, Request
from sqlalchemy.orm import Session

from api.exports import ExportCache
from recommender.affinity.options import RunOptions
from reviewer_recommender.jobs.runner import JobRunner
from reviewer_recommender.services.explain import ExplainerCache
from reviewer_recommender.services.ids import MAX_OFFSET
from reviewer_recommender.settings import Settings
from reviewer_recommender.storage.db import Database


def get_session(request: Request) -> Iterator[Session]:
    """One session per request, rolled back unless committed, and closed when the route's
    function returns (``scope="function"`` below): after the answer is serialised, before
    its first byte is sent. So no request holds a database connection while its client
    reads the answer (exports are written whole first, see :mod:`api.exports`); the body of
    a request is received whole before any session opens (:mod:`api.body_spool`)."""
    database: Database = request.app.state.database
    with database.session() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session, scope="function")]
Limit = Annotated[int, Query(ge=1, le=1000, description="page size")]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET, description="rows to skip")]


def get_settings(request: Request) -> Settings:
    """The service's settings."""
    settings: Settings = request.app.state.settings
    return settings


def job_runner(request: Request) -> JobRunner:
    runner: JobRunner = request.app.state.jobs
    return runner


def explainer_cache(request: Request) -> ExplainerCache:
    cache: ExplainerCache = request.app.state.explainers
    return cache


def database(request: Request) -> Database:
    """The database, for routes that open short sessions of their own (long polls)."""
    db: Database = request.app.state.database
    return db


def export_cache(request: Request) -> ExportCache:
    """Large exports kept as files (:class:`api.exports.ExportCache`)."""
    exports: ExportCache = request.app.state.exports
    return exports


def run_options(request: Request) -> RunOptions:
    """The server's scoring run options (models by name, cache, device, memory bounds)."""
    options: RunOptions = request.app.state.settings.run_options
    return options


SettingsDep = Annotated[Settings, Depends(get_settings)]
Runner = Annotated[JobRunner, Depends(job_runner)]
Explainers = Annotated[ExplainerCache, Depends(explainer_cache)]
RunOptionsDep = Annotated[RunOptions, Depends(run_options)]
DatabaseDep = Annotated[Database, Depends(database)]
Exports = Annotated[ExportCache, Depends(export_cache)]
