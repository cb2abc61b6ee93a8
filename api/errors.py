"""Exception handlers that keep every client mistake a 4xx.

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

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from sqlalchemy.exc import DataError, StatementError


class AsciiJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        return json.dumps(
            content, ensure_ascii=True, allow_nan=False, separators=(",", ":"), default=str
        ).encode("ascii")


def _cannot_store(reason: str) -> Response:
    return AsciiJSONResponse(
        {
            "detail": "a value in this request cannot be stored or looked up: "
            f"{reason}; nothing was changed"
        },
        status_code=422,
    )


def install_error_handlers(app: FastAPI) -> None:
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
        return AsciiJSONResponse({"detail": details}, status_code=422)

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
