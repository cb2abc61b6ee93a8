"""The site's icon (browsers ask for ``/favicon.ico`` on every page load)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse

router = APIRouter(include_in_schema=False)
FAVICON = Path(__file__).resolve().parents[1] / "static" / "favicon.ico"


@router.get("/favicon.ico")
def favicon() -> FileResponse:
    return FileResponse(
        FAVICON, media_type="image/x-icon", headers={"Cache-Control": "public, max-age=86400"}
    )
