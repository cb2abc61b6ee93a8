"""Bulk changes of a draft from a CSV file, HotCRP style: preview row by row, then apply
all or nothing (logic in :mod:`reviewer_recommender.services.bulk_changes`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, Form, UploadFile

from api.auth import Writer
from api.dependencies import Explainers, Limit, Offset, SessionDep, SettingsDep
from api.ids import RowIdPath, VenueIdPath
from api.page_schemas import BulkPreviewOut, EditResultOut
from api.uploads import upload_bytes, upload_name
from reviewer_recommender.services import bulk_changes
from reviewer_recommender.services.draft_edits import EditResult

router = APIRouter(tags=["edits"])

BulkFile = Annotated[
    UploadFile,
    File(description="CSV paper_id,reviewer_id,action (add, remove, pin, unpin, forbid, unforbid)"),
]


@router.post(
    "/venues/{venue_id}/assignments/{assignment_id}/bulk/preview", response_model=BulkPreviewOut
)
def preview_bulk(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    file: BulkFile,
    settings: SettingsDep,
    explainers: Explainers,
    principal: Writer,
    session: SessionDep,
    limit: Limit = 1000,
    offset: Offset = 0,
) -> dict[str, Any]:
    """What a bulk change file would do to this draft, row by row: additions and removals
    (with scores and names), pin and forbid changes, every line that would be skipped
    (``errors``, with its line and why; the others apply) and the warnings (limits that
    need ``force``, papers left below demand, rows without effect), and the effect on the
    run. Nothing changes;
    ``limit``/``offset`` page every list."""
    name = upload_name(file, "changes.csv")
    content = upload_bytes(file, settings, name)
    return bulk_changes.preview_bulk_file(
        explainers,
        session,
        venue_id,
        assignment_id,
        principal,
        content,
        name,
        limit=limit,
        offset=offset,
    )


@router.post(
    "/venues/{venue_id}/assignments/{assignment_id}/bulk/apply", response_model=EditResultOut
)
def apply_bulk(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    file: BulkFile,
    version: Annotated[int, Form(ge=1, le=2**31 - 1, description="the version previewed")],
    settings: SettingsDep,
    explainers: Explainers,
    principal: Writer,
    session: SessionDep,
    force: Annotated[bool, Form(description="apply additions over limits")] = False,
    reason: Annotated[str, Form(max_length=1000)] = "",
) -> EditResult:
    """Apply a bulk change file's valid lines to this draft, HotCRP style: one version
    bump, one history entry (one undo reverts it), one audit entry; the other lines are
    listed in ``skipped`` with their line and why. 422 ``invalid_rows`` when no line
    changes the run (listing every bad line); 409 ``would_overfill`` (``force_allowed``) when
    additions exceed a max load or a demand and ``force`` is false; 409 ``stale_version``
    when the run moved since ``version``."""
    name = upload_name(file, "changes.csv")
    content = upload_bytes(file, settings, name)
    return bulk_changes.apply_bulk_file(
        explainers,
        session,
        venue_id,
        assignment_id,
        principal,
        content,
        name,
        version=version,
        force=force,
        reason=reason,
    )
