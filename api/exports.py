"""Exports shared by the routers: CSV (OpenReview style, with header) or JSON.

An export is written whole to a temporary file (kept in memory up to
:data:`SPOOL_MEMORY_BYTES`, on disk beyond) while the route still runs, and only then sent:
the request's database session ends before the first byte goes out, so a client that reads
slowly, or not at all, holds a socket and a file, never a database connection.
"""

from __future__ import annotations

import io
import json
import re
import tempfile
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from fastapi import Query
from fastapi.responses import StreamingResponse

from recommender.io.safe_csv import safe_csv_writer

ExportFormat = Annotated[Literal["csv", "json"], Query(alias="format")]
_UNSAFE_FILENAME = re.compile(r"[^A-Za-z0-9._-]+")
SPOOL_MEMORY_BYTES = 1024 * 1024
SEND_CHUNK_BYTES = 64 * 1024


def attachment_name(stem: str, fmt: str) -> str:
    """A file name safe inside a Content-Disposition header whatever ``stem`` holds."""
    return f"{_UNSAFE_FILENAME.sub('_', stem).strip('._') or 'export'}.{fmt}"


def _send_file(spool: tempfile.SpooledTemporaryFile[bytes]) -> Iterator[bytes]:
    """The spooled export in chunks, closing (deleting) it at the end."""
    try:
        while chunk := spool.read(SEND_CHUNK_BYTES):
            yield chunk
    finally:
        spool.close()


def stream_rows(
    rows: Iterator[tuple[Any, ...]], header: list[str], fmt: str, filename: str
) -> StreamingResponse:
    """CSV (OpenReview style, with header; text cells spreadsheet-safe, see
    :mod:`recommender.io.safe_csv`) or a JSON list of objects, written whole to a temporary
    file now (``rows`` may read the request's session) and sent from it afterwards."""

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

    # closed by _send_file once sent (or here on failure): it outlives this function
    spool: tempfile.SpooledTemporaryFile[bytes] = tempfile.SpooledTemporaryFile(  # noqa: SIM115
        max_size=SPOOL_MEMORY_BYTES
    )
    try:
        pending: list[str] = []
        pending_size = 0
        for text in as_csv() if fmt == "csv" else as_json():
            pending.append(text)
            pending_size += len(text)
            if pending_size > SEND_CHUNK_BYTES:
                spool.write("".join(pending).encode("utf-8"))
                pending, pending_size = [], 0
        spool.write("".join(pending).encode("utf-8"))
        size = spool.tell()
        spool.seek(0)
    except BaseException:
        spool.close()
        raise
    media = "text/csv" if fmt == "csv" else "application/json"
    return StreamingResponse(
        _send_file(spool),
        media_type=media,
        headers={
            "Content-Disposition": f'attachment; filename="{attachment_name(filename, fmt)}"',
            "Content-Length": str(size),
        },
    )
