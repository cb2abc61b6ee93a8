"""Security headers on every response (a pure ASGI middleware, wrapped around the whole
application by :func:`api.app.create_app`, so error answers, the body limit's 413, static
files, streamed exports and even a 500 carry them).

- ``Content-Security-Policy``: the chair page's policy (:data:`PAGE_POLICY`): scripts,
  styles, images, fonts and connections from the service itself only, no inline script or
  style, no plugins, no ``<base>``, forms posting only here, and no framing by any page
  (``frame-ancestors 'none'``). JSON and file answers carry it too: a browser that renders
  one as a document runs nothing from it.
- ``X-Content-Type-Options: nosniff``: a file is what its content type says.
- ``X-Frame-Options: DENY``: no framing, for browsers without ``frame-ancestors``.
- ``Referrer-Policy: no-referrer``: no address of the service (venue ids, run numbers) leaks
  to another site.

The OpenAPI pages (``/docs``, its OAuth2 redirect page, ``/redoc``) are FastAPI's: they load
Swagger UI or ReDoc from a CDN and start them with an inline script, so they cannot work
offline in any case. They get their own policy (:func:`docs_policy`): those CDN origins, and
their inline scripts by hash, computed from the page as sent (so it holds for whatever
FastAPI's version writes there; nothing else on them runs), styles inline (both tools inject
them), ReDoc's web worker; framing is refused there too.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Collection, Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAGE_POLICY = "; ".join(
    (
        "default-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)

# where FastAPI's docs pages load Swagger UI, ReDoc, their fonts and favicon from
DOCS_SCRIPTS = ("https://cdn.jsdelivr.net",)
DOCS_STYLES = ("https://cdn.jsdelivr.net", "https://fonts.googleapis.com")
DOCS_FONTS = ("https://fonts.gstatic.com",)
DOCS_IMAGES = ("https://fastapi.tiangolo.com", "https://cdn.redoc.ly")

COMMON_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
)
SET_HEADERS = frozenset({b"content-security-policy", *(name for name, _ in COMMON_HEADERS)})

_INLINE_SCRIPT = re.compile(
    rb"<script\b(?![^>]*\bsrc\s*=)[^>]*>(.*?)</script\s*>", re.IGNORECASE | re.DOTALL
)


def script_hashes(html: bytes) -> list[str]:
    """CSP sources (``'sha256-…'``) of the inline scripts of ``html``."""
    return [
        "'sha256-" + base64.b64encode(hashlib.sha256(body).digest()).decode() + "'"
        for body in _INLINE_SCRIPT.findall(html)
    ]


def docs_policy(html: bytes) -> str:
    """The policy of an OpenAPI docs page whose body is ``html``."""
    return "; ".join(
        (
            "default-src 'self'",
            "script-src " + " ".join(("'self'", *DOCS_SCRIPTS, *script_hashes(html))),
            "style-src " + " ".join(("'self'", *DOCS_STYLES, "'unsafe-inline'")),
            "font-src " + " ".join(("'self'", *DOCS_FONTS)),
            "img-src " + " ".join(("'self'", "data:", *DOCS_IMAGES)),
            "worker-src 'self' blob:",
            "connect-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        )
    )


def _with_headers(headers: Iterable[tuple[bytes, bytes]], policy: str) -> list[tuple[bytes, bytes]]:
    kept = [(name, value) for name, value in headers if name.lower() not in SET_HEADERS]
    return [*kept, (b"content-security-policy", policy.encode("latin-1")), *COMMON_HEADERS]


class SecurityHeaders:
    """Adds the module's headers to every HTTP response of ``app``; ``docs_paths`` get the
    docs pages' policy."""

    def __init__(self, app: ASGIApp, *, docs_paths: Collection[str] = ()):
        self.app = app
        self.docs_paths = frozenset(docs_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        root: str = scope.get("root_path", "")
        if (path.removeprefix(root) if root else path) in self.docs_paths:
            await self._docs_page(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": _with_headers(message["headers"], PAGE_POLICY)}
            await send(message)

        await self.app(scope, receive, send_with_headers)

    async def _docs_page(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A docs page is a few kilobytes: held whole, so its policy can name its scripts."""
        start: Message | None = None
        body = bytearray()

        async def hold(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            body.extend(message.get("body", b""))
            if message.get("more_body", False):
                return
            assert start is not None
            headers = _with_headers(start["headers"], docs_policy(bytes(body)))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": bytes(body)})

        await self.app(scope, receive, hold)
