"""Exception handlers that keep every client mistake a 4xx, with a stable ``code``.

Every 4xx body is ``{"detail": ..., "code": "<stable name>", ...extra}``: ``detail`` is for
people (a sentence, the validation list, or an object for the publishing refusal), ``code``
for programs (the page decides on it, never on message text; docs/page-api.md lists them).
Raise :class:`ApiError` with a code and extra fields; a plain ``HTTPException`` gets the
default code of its status (:data:`DEFAULT_CODES`).

Request validation errors are rendered ASCII-safe (FastAPI's default echoes the input,
which fails to encode when it holds an unpaired surrogate and ends as a 500). Values that
reach the database but cannot be stored or compared there (PostgreSQL: NUL characters,
text longer than its column, integers beyond its range; SQLite: integers beyond 64 bits;
both: unpaired surrogates) become 422 with the database's reason, not 500: validation at
the edges should catch them first, this is the net behind it.
"""

from __future__ import annotations

import json
import math
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from sqlalchemy.exc import DataError, IntegrityError, StatementError
from starlette.exceptions import HTTPException as StarletteHTTPException

from matching.validate import OptionError
from recommender.corpus import InputError
from reviewer_recommender.errors import (
    BadRequest,
    DomainError,
    Forbidden,
    InvalidRequest,
    NotFound,
    StateConflict,
    TooLarge,
    TooMany,
    Unauthenticated,
)

# the code of an HTTPException raised without one, by status
DEFAULT_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
    429: "too_many_requests",
}


class ApiError(HTTPException):
    """An HTTP error with a stable machine-readable ``code`` and extra JSON fields
    (e.g. ``force_allowed``) beside the human ``detail``."""

    def __init__(
        self,
        status_code: int,
        code: str,
        detail: Any,
        *,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ):
        super().__init__(status_code, detail, headers=headers)
        self.code = code
        self.extra = extra


def error_body(
    status_code: int, detail: Any, code: str | None = None, **extra: Any
) -> dict[str, Any]:
    """The JSON body of an error response (also for middleware that answers by itself)."""
    return {
        "detail": detail,
        "code": code or DEFAULT_CODES.get(status_code, "error"),
        **extra,
    }


# the HTTP status of each domain error (reviewer_recommender.errors)
DOMAIN_STATUS: dict[type[DomainError], int] = {
    BadRequest: 400,
    Unauthenticated: 401,
    Forbidden: 403,
    NotFound: 404,
    StateConflict: 409,
    TooLarge: 413,
    InvalidRequest: 422,
    TooMany: 429,
}


def domain_status(error: DomainError) -> int:
    for kind in type(error).__mro__:
        if kind in DOMAIN_STATUS:
            return DOMAIN_STATUS[kind]
    return 400


class AsciiJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        return json.dumps(
            content, ensure_ascii=True, allow_nan=False, separators=(",", ":"), default=str
        ).encode("ascii")


def _cannot_store(reason: str) -> Response:
    return AsciiJSONResponse(
        error_body(
            422,
            f"a value in this request cannot be stored or looked up: {reason}; nothing was changed",
            "cannot_store",
        ),
        status_code=422,
    )


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, error: StarletteHTTPException) -> Response:
        code = getattr(error, "code", None)
        extra = getattr(error, "extra", {})
        return AsciiJSONResponse(
            error_body(error.status_code, error.detail, code, **extra),
            status_code=error.status_code,
            headers=getattr(error, "headers", None),
        )

    @app.exception_handler(DomainError)
    async def domain_error(_request: Request, error: DomainError) -> Response:
        status_code = domain_status(error)
        headers = {"WWW-Authenticate": "Bearer"} if status_code == 401 else None
        if status_code == 429 and "retry_after" in error.extra:
            headers = {"Retry-After": str(int(error.extra["retry_after"]))}
        return AsciiJSONResponse(
            error_body(status_code, error.detail, error.code, **error.extra),
            status_code=status_code,
            headers=headers,
        )

    @app.exception_handler(InputError)
    async def input_error(_request: Request, error: InputError) -> Response:
        return AsciiJSONResponse(
            error_body(422, str(error).splitlines()[0], "invalid_input", problems=error.to_dicts()),
            status_code=422,
        )

    @app.exception_handler(OptionError)
    async def option_error(_request: Request, error: OptionError) -> Response:
        # the one option error (matching's, also raised by the services), naming the field
        return AsciiJSONResponse(
            error_body(
                422, f"{error.option}: {error.message}", "invalid_option", field=error.option
            ),
            status_code=422,
        )

    @app.exception_handler(IntegrityError)
    async def integrity_error(_request: Request, error: IntegrityError) -> Response:
        # two requests raced to create the same row; the loser changed nothing
        return AsciiJSONResponse(
            error_body(
                409,
                "a concurrent change created the same record; nothing was stored, retry",
                "concurrent_change",
            ),
            status_code=409,
        )

    @app.exception_handler(RequestValidationError)
    async def validation_error(_request: Request, error: RequestValidationError) -> Response:
        details = []
        for item in error.errors():
            entry = {k: v for k, v in item.items() if k in ("type", "loc", "msg")}
            value = item.get("input")
            if isinstance(value, str):
                entry["input"] = value[:200]
            elif isinstance(value, bool | int) or value is None:
                entry["input"] = value
            elif isinstance(value, float):
                entry["input"] = value if math.isfinite(value) else str(value)
            details.append(entry)
        return AsciiJSONResponse(error_body(422, details, "validation_error"), status_code=422)

    @app.exception_handler(DataError)
    async def data_error(_request: Request, error: DataError) -> Response:
        reason = str(getattr(error, "orig", error)).strip().splitlines()
        return _cannot_store(reason[0][:300] if reason else "the database refused it")

    @app.exception_handler(StatementError)
    async def statement_error(_request: Request, error: StatementError) -> Response:
        # parameters the driver cannot even send (e.g. an unpaired surrogate, a 100-digit int)
        original = getattr(error, "orig", None)
        if isinstance(original, UnicodeError | OverflowError | ValueError):
            return _cannot_store(f"{type(original).__name__}: {str(original)[:200]}")
        raise error

    @app.exception_handler(OverflowError)
    async def overflow_error(_request: Request, error: OverflowError) -> Response:
        return _cannot_store(f"a number is out of range ({str(error)[:200]})")

    @app.exception_handler(UnicodeEncodeError)
    async def unicode_error(_request: Request, error: UnicodeEncodeError) -> Response:
        return _cannot_store("text holds an unpaired surrogate character")
