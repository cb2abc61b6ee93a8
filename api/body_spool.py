"""Request bodies received whole before the app sees the request.

A client that sends its body slowly (or stops half-way) must cost only its own socket: if
the route's dependencies ran while the body still trickled in, the request would hold its
database session (and a worker thread) for as long as the client likes. This pure ASGI
middleware reads the whole body first, into a temporary file (in memory up to
:data:`SPOOL_MEMORY_BYTES`, on disk beyond), and only then calls the app, replaying the
body from the file. It sits inside :class:`api.body_limit.BodySizeLimit`, so what it
spools is bounded by the upload limit (413 as soon as a body crosses it).
"""

from __future__ import annotations

import tempfile
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SPOOL_MEMORY_BYTES = 1024 * 1024
REPLAY_CHUNK_BYTES = 256 * 1024


def has_body(scope: Scope) -> bool:
    """Whether the request announces a body (a length above 0, or chunked)."""
    headers = dict(scope.get("headers") or [])
    length = headers.get(b"content-length")
    if length is not None:
        return length.strip() not in (b"", b"0")
    return b"chunked" in headers.get(b"transfer-encoding", b"").lower()


class BodySpool:
    """Receive the whole body before calling the app (see the module docstring)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not has_body(scope):
            await self.app(scope, receive, send)
            return
        with tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY_BYTES) as spool:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return  # the client left before its body was whole: nothing to answer
                spool.write(message.get("body", b""))
                if not message.get("more_body", False):
                    break
            size = spool.tell()
            spool.seek(0)
            replayed = False

            async def replay() -> Message:
                nonlocal replayed
                if replayed:
                    return await receive()  # e.g. http.disconnect while the answer streams
                chunk = spool.read(REPLAY_CHUNK_BYTES)
                more = spool.tell() < size
                if not more:
                    replayed = True
                return {"type": "http.request", "body": chunk, "more_body": more}

            await self.app(scope, replay, send)
