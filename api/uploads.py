"""Uploaded files read within the service's limits.

Routes that take a file are plain ``def`` functions: FastAPI runs them on its thread pool, so
reading, decompressing and parsing an upload (and storing it) never blocks the event loop,
and ``/health`` keeps answering. The body itself is bounded while it streams by
:class:`api.app.BodySizeLimit`; this module bounds each file and what a zip expands to.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, TypeVar

import anyio
from fastapi import Depends, HTTPException, Request, UploadFile, status
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

from recommender.io.archives import ArchiveLimits
from reviewer_recommender.services.ids import safe_name
from reviewer_recommender.settings import Settings

_pause_lock = threading.Lock()
_pause_holders = 0
_resume_collection = False


@contextmanager
def collection_paused() -> Iterator[None]:
    """No automatic runs of Python's cyclic garbage collector inside the block (reentrant,
    across threads). Parsing an upload creates millions of objects; each full collection
    then walks all of them while every thread of the server waits (half a second for a 20 MB
    file of tiny rows, measured), so ``/health`` would stall. Objects are still freed as
    usual when their last reference goes; only cycles wait until the block ends."""
    global _pause_holders, _resume_collection
    with _pause_lock:
        if _pause_holders == 0:
            _resume_collection = gc.isenabled()
            gc.disable()
        _pause_holders += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pause_holders -= 1
            if _pause_holders == 0 and _resume_collection:
                gc.enable()


def _pause_collection() -> Iterator[None]:
    with collection_paused():
        yield


# A route parameter of this type parses and stores its upload with collection paused.
CollectionPaused = Annotated[None, Depends(_pause_collection)]


def upload_bytes(upload: UploadFile, settings: Settings, default_name: str = "upload") -> bytes:
    """The file's bytes (read on the calling worker thread), or 413 naming the file and the
    limit when it is larger than ``settings.max_upload_bytes``."""
    limit = settings.max_upload_bytes
    upload.file.seek(0)
    content = upload.file.read(limit + 1)
    if len(content) > limit:
        raise HTTPException(
            status.HTTP_413_CONTENT_TOO_LARGE,
            f"{upload_name(upload, default_name)}: larger than the upload limit of {limit} bytes",
        )
    return content


def upload_name(upload: UploadFile, default: str) -> str:
    """The client's file name, cleaned for messages and records (never used as a path)."""
    return safe_name(upload.filename, default)


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


Model = TypeVar("Model", bound=BaseModel)
# models of the bodies parsed by parsed_body, for the OpenAPI components (api.app)
THREAD_PARSED_MODELS: list[type[BaseModel]] = []


def parsed_body(model: type[Model]) -> Callable[[Request], Awaitable[Model]]:
    """FastAPI dependency: the JSON body validated as ``model`` on a worker thread.

    FastAPI validates a body parameter on the event loop; a solve request's ``demand`` and
    ``custom_max_load`` may hold a hundred thousand entries, whose validation would stall
    every request, ``/health`` included. Errors are FastAPI's own 422, located in
    ``body``. Document the route's body with :func:`model_body`."""

    async def parse(request: Request) -> Model:
        body = await request.body()
        try:
            return await anyio.to_thread.run_sync(model.model_validate_json, body or b"null")
        except ValidationError as error:
            errors = [
                {**item, "loc": ("body", *item["loc"])}
                for item in error.errors(include_url=False, include_context=False)
            ]
            raise RequestValidationError(errors) from None

    if model not in THREAD_PARSED_MODELS:
        THREAD_PARSED_MODELS.append(model)
    return parse


def model_body(model: type[BaseModel]) -> dict[str, Any]:
    """``openapi_extra`` documenting a required JSON body of ``model`` (for routes that
    take it with :func:`parsed_body`)."""
    return {
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}
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
