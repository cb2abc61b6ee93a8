"""FastAPI application factory: ``create_app(settings)``.

Startup (lifespan): connect, run migrations, mark jobs of a dead process interrupted, start
the job runner. Shutdown: cancel running jobs and close the pool.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from sqlalchemy.exc import IntegrityError
from starlette.exceptions import HTTPException

from api.db import Database, migrate
from api.explain import ExplainerCache
from api.jobs import Handler, JobRunner
from api.routers import affinity, assignments, corpus, jobs, venues
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
    """Pure ASGI middleware: 413 for a body over the limit, by Content-Length before the app
    runs, or while the body streams (chunked uploads).

    When the streamed body crosses the limit, reading stops there. The app may turn the
    interruption into an answer of its own (FastAPI reports any failure to read a body as
    400); such an answer is dropped and the 413 sent instead, as long as nothing was sent yet.
    """

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
            await self._reject(send)
            return
        received = 0
        exceeded = False
        started = False

        async def limited_receive() -> Message:
            nonlocal received, exceeded
            if exceeded:
                raise BodyTooLarge(self.max_bytes)
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    exceeded = True
                    raise BodyTooLarge(self.max_bytes)
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if exceeded and not started:
                return  # the app's answer to a body it could not read: replaced by the 413
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except BodyTooLarge:
            if started:
                raise
        if exceeded and not started:
            await self._reject(send)

    async def _reject(self, send: Callable[[Message], Awaitable[None]]) -> None:
        body = json.dumps(
            {"detail": f"request body larger than the upload limit of {self.max_bytes} bytes"}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


class BodyTooLarge(HTTPException):
    """The request body crossed the limit while it streamed (a 413 wherever it surfaces)."""

    def __init__(self, max_bytes: int):
        super().__init__(413, f"request body larger than the upload limit of {max_bytes} bytes")


def job_handlers(affinity_top_n: int) -> dict[str, Handler]:
    """The service's job handlers by kind (a job's process rebuilds them by this name)."""
    return {
        "affinity": affinity_handler(affinity_top_n),
        "assignment": assignment_handler(),
    }


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
            job_handlers(settings.affinity_top_n),
            workers=settings.job_workers,
            inline=settings.inline_jobs,
            isolation="process" if settings.job_isolation == "process" else "thread",
            handler_factory="api.app:job_handlers",
            factory_args=(settings.affinity_top_n,),
            cancel_grace=settings.job_cancel_grace_seconds,
        )
        runner.start()
        app.state.database = database
        app.state.jobs = runner
        app.state.explainers = ExplainerCache()
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

    @app.get("/health", tags=["service"])
    async def health() -> dict[str, str]:
        """Liveness probe (no token needed). Answered on the event loop itself, which no
        route blocks (parsing and solving run on threads), so it needs no free worker."""
        return {"status": "ok"}

    for module in (venues, corpus, affinity, jobs, assignments):
        app.include_router(module.router)

    static_dir = Path(__file__).parent / "static"
    app.mount("/static", StaticFiles(directory=static_dir), name="static")

    @app.get("/", include_in_schema=False)
    def chair_page() -> FileResponse:
        """The chair web page (a static, offline page over this API)."""
        return FileResponse(static_dir / "index.html")

    return app
