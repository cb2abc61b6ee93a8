"""Uploaded files read within the service's limits.

Routes that take a file are plain ``def`` functions: FastAPI runs them on its thread pool, so
reading and parsing an upload (and storing it) never blocks the event loop.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request, UploadFile, status

from api.ids import safe_name
from api.settings import Settings


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


async def read_upload(request: Request, upload: UploadFile) -> bytes:
    """The file's bytes, or 413 if it exceeds the configured upload limit (async routes)."""
    limit: int = request.app.state.settings.max_upload_bytes
    content = await upload.read(limit + 1)
    if len(content) > limit:
        raise HTTPException(
            status.HTTP_413_CONTENT_TOO_LARGE,
            f"{upload_name(upload, 'upload')}: larger than the upload limit of {limit} bytes",
        )
    return content


def upload_name(upload: UploadFile, default: str) -> str:
    """The client's file name, cleaned for messages and records (never used as a path)."""
    return safe_name(upload.filename, default)
