"""Uploaded files read within the service's limits.

Routes that take a file are plain ``def`` functions: FastAPI runs them on its thread pool, so
reading, decompressing and parsing an upload (and storing it) never blocks the event loop,
and ``/health`` keeps answering. The body itself is bounded while it streams by
:class:`api.app.BodySizeLimit`; this module bounds each file and what a zip expands to.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request, UploadFile, status

from api.settings import Settings
from recommender.io.archives import ArchiveLimits


def get_settings(request: Request) -> Settings:
    """FastAPI dependency: the service's settings."""
    settings: Settings = request.app.state.settings
    return settings


SettingsDep = Annotated[Settings, Depends(get_settings)]


def upload_bytes(upload: UploadFile, settings: Settings, default_name: str = "upload") -> bytes:
    """The file's bytes (read on the calling worker thread), or 413 naming the file and the
    limit when it is larger than ``settings.max_upload_bytes``."""
    limit = settings.max_upload_bytes
    upload.file.seek(0)
    content = upload.file.read(limit + 1)
    if len(content) > limit:
        raise HTTPException(
            status.HTTP_413_CONTENT_TOO_LARGE,
            f"{upload.filename or default_name}: larger than the upload limit of {limit} bytes",
        )
    return content


async def raw_body(request: Request) -> bytes:
    """FastAPI dependency: the request body as bytes, collected on the event loop (cheap:
    its size is bounded by :class:`api.app.BodySizeLimit`) and parsed later by the route on
    its worker thread. FastAPI's own body parameters would decode and validate the JSON on
    the event loop, stalling every other request for the time a large body takes."""
    return await request.body()


RawBody = Annotated[bytes, Depends(raw_body)]


def json_list_body(description: str, example: list[dict[str, Any]]) -> dict[str, Any]:
    """``openapi_extra`` documenting a required JSON body that is a list of objects (for
    routes that take it as :data:`RawBody`)."""
    return {
        "requestBody": {
            "required": True,
            "description": description,
            "content": {
                "application/json": {
                    "schema": {"type": "array", "items": {"type": "object"}},
                    "example": example,
                }
            },
        }
    }


def archive_limits(settings: Settings) -> ArchiveLimits:
    """What one uploaded zip may hold and expand to."""
    return ArchiveLimits(
        max_members=settings.max_archive_members,
        max_uncompressed_bytes=settings.max_uncompressed_bytes,
        max_compression_ratio=settings.max_compression_ratio,
    )
