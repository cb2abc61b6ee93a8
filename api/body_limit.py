"""Request body limits, enforced while the body streams.

Two limits: uploads (multipart bodies, and JSON bodies of the routes that take a large list
and parse it on a worker thread, see :data:`api.uploads.RawBody`) may be as large as the
upload limit; any other body is small (``max_json_bytes``), because FastAPI decodes and
validates such a body on the event loop, and 20 MB of JSON there would stall every request,
``/health`` included, for seconds.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, RouteContext, iter_route_contexts
from starlette.exceptions import HTTPException
from starlette.routing import Match

from api.uploads import raw_body

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# multipart framing (boundaries, part headers) on top of the file itself
MULTIPART_OVERHEAD_BYTES = 64 * 1024


class BodyTooLarge(HTTPException):
    """The request body crossed the limit while it streamed (a 413 wherever it surfaces)."""

    def __init__(self, message: str):
        super().__init__(413, message)


class BodySizeLimit:
    """Pure ASGI middleware: 413 for a body over its limit, by Content-Length before the app
    runs, or while the body streams (chunked uploads).

    When the streamed body crosses the limit, reading stops there. The app may turn the
    interruption into an answer of its own (FastAPI reports any failure to read a body as
    400); such an answer is dropped and the 413 sent instead, as long as nothing was sent yet.
    """

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        *,
        max_json_bytes: int | None = None,
        takes_large_body: Callable[[Scope], bool] | None = None,
    ):
        self.app = app
        self.max_bytes = max_bytes
        small = max_bytes if max_json_bytes is None else max_json_bytes
        self.max_json_bytes = min(small, max_bytes)
        self.takes_large_body = takes_large_body

    def limit_for(self, scope: Scope) -> tuple[int, str]:
        """The byte limit of this request's body and how to name it."""
        headers = dict(scope.get("headers") or [])
        content_type = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        if content_type == b"multipart/form-data" or (
            self.takes_large_body is not None and self.takes_large_body(scope)
        ):
            return self.max_bytes, f"the upload limit of {self.max_bytes} bytes"
        return (
            self.max_json_bytes,
            f"the limit of {self.max_json_bytes} bytes for this request (files and bulk "
            f"uploads may have up to {self.max_bytes} bytes)",
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit, named = self.limit_for(scope)
        message = f"request body larger than {named}"
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._reject(send, message)
            return
        received = 0
        exceeded = False
        started = False

        async def limited_receive() -> Message:
            nonlocal received, exceeded
            if exceeded:
                raise BodyTooLarge(message)
            incoming = await receive()
            if incoming["type"] == "http.request":
                received += len(incoming.get("body", b""))
                if received > limit:
                    exceeded = True
                    raise BodyTooLarge(message)
            return incoming

        async def guarded_send(outgoing: Message) -> None:
            nonlocal started
            if exceeded and not started:
                return  # the app's answer to a body it could not read: replaced by the 413
            if outgoing["type"] == "http.response.start":
                started = True
            await send(outgoing)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except BodyTooLarge:
            if started:
                raise
        if exceeded and not started:
            await self._reject(send, message)

    @staticmethod
    async def _reject(send: Send, message: str) -> None:
        body = json.dumps({"detail": message, "code": "payload_too_large"}).encode()
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


def _reads_raw_body(dependant: Dependant) -> bool:
    return any(
        dependency.call is raw_body or _reads_raw_body(dependency)
        for dependency in dependant.dependencies
    )


def takes_large_body(app: FastAPI, scope: Scope) -> bool:
    """Whether the request goes to a route that reads its body with :data:`RawBody` (a bulk
    JSON upload parsed on a worker thread)."""
    routes: list[RouteContext] | None = getattr(app.state, "large_body_routes", None)
    if routes is None:
        routes = [
            context
            for context in iter_route_contexts(app.routes)
            if isinstance(context.original_route, APIRoute)
            and _reads_raw_body(context.original_route.dependant)
        ]
        app.state.large_body_routes = routes
    return any(context.matches(scope)[0] == Match.FULL for context in routes)
