"""Bounded concurrency per venue and per token: 429 with ``Retry-After`` beyond.

A pure ASGI middleware, outside everything else, counting requests in flight (from their
first byte until their answer is sent, streaming included) on the event loop itself (no
lock needed). A request under ``/venues/{venue}/`` counts against that venue; a request
with an ``Authorization`` header counts against its token (kept as a digest, never the
secret). A request that would exceed either limit is answered 429 at once, before its body
is read or any session opens, so one venue's (or one client's) flood costs that venue (or
that client) its own answers, not another venue's. ``/health``, the page and its static
files carry no token and no venue and are never limited.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def venue_of(path: str) -> str | None:
    """The venue id of a ``/venues/{venue}/...`` path (None for any other path)."""
    parts = path.split("/", 3)
    if len(parts) >= 3 and parts[1] == "venues" and parts[2]:
        return parts[2]
    return None


def token_key(scope: Scope) -> str | None:
    """A digest of the request's ``Authorization`` header (None without one)."""
    for name, value in scope.get("headers") or []:
        if name == b"authorization" and value:
            return hashlib.sha256(value).hexdigest()
    return None


class Admission:
    """At most ``per_venue`` requests of one venue and ``per_token`` of one token in flight;
    429 with ``Retry-After: retry_after`` beyond (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, per_venue: int, per_token: int, retry_after: int = 1):
        self.app = app
        self.per_venue = per_venue
        self.per_token = per_token
        self.retry_after = retry_after
        self.venues: Counter[str] = Counter()
        self.tokens: Counter[str] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        venue = venue_of(scope.get("path", ""))
        token = token_key(scope)
        if venue is not None and self.venues[venue] >= self.per_venue:
            await self._reject(send, f"venue {venue!r} has {self.per_venue} requests in flight")
            return
        if token is not None and self.tokens[token] >= self.per_token:
            await self._reject(send, f"this token has {self.per_token} requests in flight")
            return
        if venue is not None:
            self.venues[venue] += 1
        if token is not None:
            self.tokens[token] += 1
        try:
            await self.app(scope, receive, send)
        finally:
            if venue is not None:
                self.venues[venue] -= 1
                if not self.venues[venue]:
                    del self.venues[venue]
            if token is not None:
                self.tokens[token] -= 1
                if not self.tokens[token]:
                    del self.tokens[token]

    async def _reject(self, send: Send, reason: str) -> None:
        body = json.dumps(
            {
                "detail": f"too many requests at once: {reason}; retry after {self.retry_after} s",
                "code": "too_many_requests",
                "retry_after": self.retry_after,
            },
            ensure_ascii=True,
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 429,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"retry-after", str(self.retry_after).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
