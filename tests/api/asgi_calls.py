"""Requests made straight to the ASGI app inside a TestClient's event loop, with a client
that stalls where a test says: one that stops reading the answer after its first chunk,
or one that stops sending its body half-way. (TestClient itself always reads and sends
everything at once, so it cannot play a slow client.)"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any

from fastapi.testclient import TestClient


@dataclass
class StalledCall:
    """A request in flight: ``stalled`` is set once the client stalls (first answer chunk
    received, or the first half of the body sent); ``release()`` lets it go on."""

    status: int | None = None
    body: bytearray = field(default_factory=bytearray)
    headers: dict[str, str] = field(default_factory=dict)
    stalled: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    _gate: asyncio.Event | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    def release(self) -> None:
        assert self._loop is not None and self._gate is not None
        self._loop.call_soon_threadsafe(self._gate.set)


def _scope(method: str, path: str, token: str, body: bytes, query: str) -> dict[str, Any]:
    headers = [(b"host", b"testserver"), (b"authorization", f"Bearer {token}".encode())]
    if body:
        headers += [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }


def start_stalled(
    client: TestClient,
    method: str,
    path: str,
    token: str,
    *,
    body: bytes = b"",
    query: str = "",
    stall: str = "reading",
) -> StalledCall:
    """Start a request whose client stalls: ``stall="reading"`` after the first chunk of
    the answer, ``stall="sending"`` after the first half of ``body``."""
    call = StalledCall()

    async def run() -> None:
        call._loop = asyncio.get_running_loop()
        call._gate = gate = asyncio.Event()
        step = 0

        async def receive() -> dict[str, Any]:
            nonlocal step
            step += 1
            half = len(body) // 2
            if stall == "sending":
                if step == 1:
                    return {"type": "http.request", "body": body[:half], "more_body": True}
                if step == 2:
                    call.stalled.set()
                    await gate.wait()
                    return {"type": "http.request", "body": body[half:], "more_body": False}
            elif step == 1:
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()  # a client that never disconnects
            raise AssertionError("unreachable")

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                call.status = message["status"]
                call.headers = {k.decode(): v.decode() for k, v in message.get("headers", [])}
            elif message["type"] == "http.response.body":
                call.body.extend(message.get("body", b""))
                if stall == "reading" and not gate.is_set():
                    call.stalled.set()
                    await gate.wait()

        try:
            await client.app(_scope(method, path, token, body, query), receive, send)
        finally:
            call.done.set()

    assert client.portal is not None, "use the TestClient as a context manager"
    client.portal.start_task_soon(run)
    return call
