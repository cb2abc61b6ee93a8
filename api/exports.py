"""Exports shared by the routers: CSV (OpenReview style, with header) or JSON.

An export is written whole to a temporary file (kept in memory up to
:data:`SPOOL_MEMORY_BYTES`, on disk beyond) while the route still runs, and only then sent:
the request's database session ends before the first byte goes out, so a client that reads
slowly, or not at all, holds a socket and a file, never a database connection. Large exports
whose content a key identifies are kept as files (:class:`ExportCache`) and written once.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, BinaryIO, Literal

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


def _send_file(spool: BinaryIO) -> Iterator[bytes]:
    """The written export in chunks, closing it at the end."""
    try:
        while chunk := spool.read(SEND_CHUNK_BYTES):
            yield chunk
    finally:
        spool.close()


def _write_rows(
    out: BinaryIO, rows: Iterator[tuple[Any, ...]], header: list[str], fmt: str
) -> None:
    """CSV (OpenReview style, with header; text cells spreadsheet-safe, see
    :mod:`recommender.io.safe_csv`) or a JSON list of objects, written to ``out``."""

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

    pending: list[str] = []
    pending_size = 0
    for text in as_csv() if fmt == "csv" else as_json():
        pending.append(text)
        pending_size += len(text)
        if pending_size > SEND_CHUNK_BYTES:
            out.write("".join(pending).encode("utf-8"))
            pending, pending_size = [], 0
    out.write("".join(pending).encode("utf-8"))


def _file_response(handle: BinaryIO, size: int, fmt: str, filename: str) -> StreamingResponse:
    media = "text/csv" if fmt == "csv" else "application/json"
    return StreamingResponse(
        _send_file(handle),
        media_type=media,
        headers={
            "Content-Disposition": f'attachment; filename="{attachment_name(filename, fmt)}"',
            "Content-Length": str(size),
        },
    )


def stream_rows(
    rows: Iterator[tuple[Any, ...]], header: list[str], fmt: str, filename: str
) -> StreamingResponse:
    """The rows as CSV or JSON (:func:`_write_rows`), written whole to a temporary file now
    (``rows`` may read the request's session) and sent from it afterwards."""
    # closed by _send_file once sent (or here on failure): it outlives this function
    spool: tempfile.SpooledTemporaryFile[bytes] = tempfile.SpooledTemporaryFile(  # noqa: SIM115
        max_size=SPOOL_MEMORY_BYTES
    )
    try:
        _write_rows(spool, rows, header, fmt)  # type: ignore[arg-type]
        size = spool.tell()
        spool.seek(0)
    except BaseException:
        spool.close()
        raise
    return _file_response(spool, size, fmt, filename)  # type: ignore[arg-type]


class ExportCache:
    """Exports kept as files under ``directory``, by what identifies their content (e.g.
    an affinity run and how many scores it holds): many readers of a large export cost one
    writing of it, not one each. The ``keep`` most recent files stay; a file being sent
    stays readable after it is removed (its handle is open)."""

    def __init__(self, directory: Path, keep: int = 16):
        self.directory = directory
        self.keep = keep
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def respond(
        self,
        key: str,
        rows: Callable[[], Iterator[tuple[Any, ...]]],
        header: list[str],
        fmt: str,
        filename: str,
        *,
        before_waiting: Callable[[], None] = lambda: None,
    ) -> StreamingResponse:
        """The export of ``key`` in ``fmt``, written from ``rows()`` by the first caller;
        another caller waits for it, after ``before_waiting()`` (e.g. ending its session's
        transaction, so that the wait holds no database connection)."""
        digest = hashlib.sha256(f"{key}\x00{fmt}".encode()).hexdigest()[:40]
        path = self.directory / f"{digest}.{fmt}"
        with self._guard:
            lock = self._locks.setdefault(digest, threading.Lock())
        if not lock.acquire(blocking=False):
            before_waiting()
            lock.acquire()
        try:
            if not path.is_file():
                self.directory.mkdir(parents=True, exist_ok=True)
                part = path.with_name(f"{path.name}.{uuid.uuid4().hex}.part")
                try:
                    with part.open("wb") as out:
                        _write_rows(out, rows(), header, fmt)
                    os.replace(part, path)
                finally:
                    part.unlink(missing_ok=True)
                self._evict()
            handle = path.open("rb")
        finally:
            lock.release()
        return _file_response(handle, os.fstat(handle.fileno()).st_size, fmt, filename)

    def _evict(self) -> None:
        files = sorted(
            (f for f in self.directory.iterdir() if f.suffix in (".csv", ".json")),
            key=lambda f: f.stat().st_mtime,
            reverse=True,
        )
        for old in files[self.keep :]:
            old.unlink(missing_ok=True)
