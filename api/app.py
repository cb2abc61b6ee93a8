"""FastAPI application factory: ``create_app(settings)``.

Startup (lifespan): connect, run migrations, mark jobs of a dead process interrupted, start
the job runner. Shutdown: cancel running jobs and close the pool. Every response carries the
security headers of :mod:`api.security_headers`. Around the routes, outermost first:
requests in flight bounded per venue and per token (:mod:`api.admission`), body size
(:mod:`api.body_limit`), bodies received whole before any route runs
(:mod:`api.body_spool`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp

from api.admission import Admission
from api.body_limit import MULTIPART_OVERHEAD_BYTES, BodySizeLimit, takes_large_body
from api.body_spool import BodySpool
from api.errors import install_error_handlers
from api.exports import ExportCache
from api.routers import (
    affinity,
    assignments,
    browse,
    bulk,
    compare,
    conflicts,
    corpus,
    edits,
    jobs,
    limits,
    modes,
    persons,
    records,
    rules,
    search,
    site,
    venues,
)
from api.security_headers import SecurityHeaders
from api.uploads import THREAD_PARSED_MODELS
from reviewer_recommender.jobs.handlers import job_handlers
from reviewer_recommender.jobs.runner import JobRunner
from reviewer_recommender.services.explain import ExplainerCache
from reviewer_recommender.settings import Settings
from reviewer_recommender.storage.db import Database, migrate


class Service(FastAPI):
    """The FastAPI application with :class:`api.security_headers.SecurityHeaders` around
    everything, Starlette's error middleware included (so a 500 carries the headers too)."""

    def build_middleware_stack(self) -> ASGIApp:
        docs_paths = [
            path
            for path in (self.docs_url, self.swagger_ui_oauth2_redirect_url, self.redoc_url)
            if path
        ]
        return SecurityHeaders(super().build_middleware_stack(), docs_paths=docs_paths)


def _openapi_with_thread_parsed_bodies(app: FastAPI) -> dict[str, Any]:
    """FastAPI's OpenAPI document, plus the components of the bodies that routes validate
    on a worker thread (:func:`api.uploads.parsed_body`), which FastAPI does not see."""
    if app.openapi_schema:
        return app.openapi_schema
    schema = FastAPI.openapi(app)
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for model in THREAD_PARSED_MODELS:
        body = model.model_json_schema(ref_template="#/components/schemas/{model}")
        for name, definition in body.pop("$defs", {}).items():
            components.setdefault(name, definition)
        components.setdefault(model.__name__, body)
    app.openapi_schema = schema
    return schema


def create_app(settings: Settings | None = None) -> FastAPI:
    """The service for ``settings`` (default: from the environment)."""
    settings = settings or Settings.from_env()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        database = Database(
            settings.database_url, settings.database_pool_size, settings.database_pool_timeout
        )
        if settings.run_migrations:
            migrate(database.engine)
        runner = JobRunner(
            database,
            job_handlers(
                settings.affinity_top_n, settings.run_options, settings.affinity_models_dir
            ),
            workers=settings.job_workers,
            inline=settings.inline_jobs,
            isolation="process" if settings.job_isolation == "process" else "thread",
            handler_factory="reviewer_recommender.jobs.handlers:job_handlers",
            factory_args=(
                settings.affinity_top_n,
                settings.run_options,
                settings.affinity_models_dir,
            ),
            cancel_grace=settings.job_cancel_grace_seconds,
            venue_cap=settings.venue_job_cap,
            max_queued_per_venue=settings.max_queued_jobs_per_venue,
        )
        runner.start()
        app.state.database = database
        app.state.jobs = runner
        app.state.explainers = ExplainerCache(settings.affinity_models_dir, settings.run_options)
        try:
            yield
        finally:
            runner.stop()
            database.dispose()

    app = Service(
        title="Reviewer recommender",
        version="0.1.0",
        description=(
            "Affinities between reviewers and submissions, conflicts, and optimal constrained "
            "assignments, per venue. Authenticate with `Authorization: Bearer <token>`."
        ),
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.exports = ExportCache(Path(settings.data_dir) / "exports")
    app.add_middleware(BodySpool)
    app.add_middleware(
        BodySizeLimit,
        max_bytes=settings.max_upload_bytes + MULTIPART_OVERHEAD_BYTES,
        max_json_bytes=settings.max_json_bytes,
        takes_large_body=lambda scope: takes_large_body(app, scope),
    )
    app.add_middleware(
        Admission,
        per_venue=settings.max_requests_per_venue,
        per_token=settings.max_requests_per_token,
    )

    install_error_handlers(app)
    app.openapi = lambda: _openapi_with_thread_parsed_bodies(app)  # type: ignore[method-assign]

    @app.get("/health", tags=["service"])
    async def health() -> dict[str, str]:
        """Liveness probe (no token needed). Answered on the event loop itself, which no
        route blocks (parsing and solving run on threads), so it needs no free worker."""
        return {"status": "ok"}

    for module in (
        venues,
        corpus,
        conflicts,
        records,
        limits,
        affinity,
        jobs,
        modes,
        assignments,
        edits,
        rules,
        bulk,
        search,
        browse,
        compare,
        persons,
        site,
    ):
        app.include_router(module.router)

    static_dir = Path(__file__).parent / "static"
    app.mount("/static", StaticFiles(directory=static_dir), name="static")

    @app.get("/", include_in_schema=False)
    def chair_page() -> FileResponse:
        """The chair web page (a static, offline page over this API)."""
        return FileResponse(static_dir / "index.html")

    return app
