"""Streaming exports shared by the routers: CSV (OpenReview style, with header) or JSON."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from fastapi import Query
from fastapi.responses import StreamingResponse

from recommender.io.safe_csv import safe_csv_writer

ExportFormat = Annotated[Literal["csv", "json"], Query(alias="format")]
_UNSAFE_FILENAME = re.compile(r"[^A-Za-z0-9._-]+")


def attachment_name(stem: str, fmt: str) -> str:
    """A file name safe inside a Content-Disposition header whatever ``stem`` holds."""
    return f"{_UNSAFE_FILENAME.sub('_', stem).strip('._') or 'export'}.{fmt}"


def stream_rows(
    rows: Iterator[tuple[Any, ...]], header: list[str], fmt: str, filename: str
) -> StreamingResponse:
    """CSV (OpenReview style, with header; text cells spreadsheet-safe, see
    :mod:`recommender.io.safe_csv`) or a JSON list of objects."""

    def as_csv() -> Iterator[str]:
        buffer = io.StringIO()
        writer = safe_csv_writer(buffer, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            writer.writerow(row)
            if buffer.tell() > 65536:
                yield buffer.getvalue()
                buffer.seek(0)
                buffer.truncate()
        yield buffer.getvalue()

    def as_json() -> Iterator[str]:
        yield "["
        for index, row in enumerate(rows):
            yield ("," if index else "") + json.dumps(dict(zip(header, row, strict=True)))
        yield "]"

    media = "text/csv" if fmt == "csv" else "application/json"
    return StreamingResponse(
        as_csv() if fmt == "csv" else as_json(),
        media_type=media,
        headers={"Content-Disposition": f'attachment; filename="{attachment_name(filename, fmt)}"'},
    )
