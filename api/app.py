"""FastAPI application factory: ``create_app(settings)``.

Startup (lifespan): connect, run migrations, mark jobs of a dead process interrupted, start
the job runner. Shutdown: cancel running jobs and close the pool.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from sqlalchemy.exc import IntegrityError

from api.db import Database, migrate
from api.errors import install_error_handlers
from api.explain import ExplainerCache
from api.jobs import JobRunner
from api.routers import affinity, assignments, corpus, edits, jobs, limits, modes, venues
from api.settings import Settings
from api.tasks import affinity_handler, assignment_handler
from recommender.corpus import InputError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[
    [Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]
]

# multipart framing (boundaries, part headers) on top of the file itself
MULTIPART_OVERHEAD_BYTES = 64 * 1024


class BodySizeLimit:
    """Pure ASGI middleware: 413 for a body over the limit, by Content-Length or as it streams."""

    def __init__(self, app: ASGIApp, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(
        self,
        scope: Scope,
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._reject(scope, receive, send)
            return
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLarge()
            return message

        try:
            await self.app(scope, limited_receive, send)
        except BodyTooLarge:
            await self._reject(scope, receive, send)

    async def _reject(
        self,
        scope: Scope,
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        response = JSONResponse(
            {"detail": f"request body larger than the upload limit of {self.max_bytes} bytes"},
            status_code=413,
        )
        await response(scope, receive, send)


class BodyTooLarge(Exception):
    pass


def create_app(settings: Settings | None = None) -> FastAPI:
    """The service for ``settings`` (default: from the environment)."""
    settings = settings or Settings.from_env()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        database = Database(settings.database_url)
        if settings.run_migrations:
            migrate(database.engine)
        runner = JobRunner(
            database,
            {
                "affinity": affinity_handler(
                    settings.affinity_top_n, settings.run_options, settings.affinity_models_dir
                ),
                "assignment": assignment_handler(),
            },
            workers=settings.job_workers,
            inline=settings.inline_jobs,
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

    app = FastAPI(
        title="Reviewer recommender",
        version="0.1.0",
        description=(
            "Affinities between reviewers and submissions, conflicts, and optimal constrained "
            "assignments, per venue. Authenticate with `Authorization: Bearer <token>`."
        ),
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.add_middleware(
        BodySizeLimit, max_bytes=settings.max_upload_bytes + MULTIPART_OVERHEAD_BYTES
    )

    @app.exception_handler(InputError)
    async def input_error(_request: Request, error: InputError) -> JSONResponse:
        return JSONResponse(
            {"detail": str(error).splitlines()[0], "problems": error.to_dicts()}, status_code=422
        )

    @app.exception_handler(IntegrityError)
    async def integrity_error(_request: Request, error: IntegrityError) -> JSONResponse:
        # two requests raced to create the same row; the loser changed nothing
        return JSONResponse(
            {"detail": "a concurrent change created the same record; nothing was stored, retry"},
            status_code=409,
        )

    install_error_handlers(app)

    @app.get("/health", tags=["service"])
    def health() -> dict[str, str]:
        """Liveness probe (no token needed)."""
        return {"status": "ok"}

    for module in (venues, corpus, limits, affinity, jobs, modes, assignments, edits):
        app.include_router(module.router)

    static_dir = Path(__file__).parent / "static"
    app.mount("/static", StaticFiles(directory=static_dir), name="static")

    @app.get("/", include_in_schema=False)
    def chair_page() -> FileResponse:
        """The chair web page (a static, offline page over this API)."""
        return FileResponse(static_dir / "index.html")

    return app
