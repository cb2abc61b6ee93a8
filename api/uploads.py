"""Reading an uploaded file within the configured size limit (shared by the routers)."""

from __future__ import annotations

from fastapi import HTTPException, Request, UploadFile, status

from api.ids import safe_name


async def read_upload(request: Request, upload: UploadFile) -> bytes:
    """The file's bytes, or 413 if it exceeds the configured upload limit."""
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
