"""Bulk changes of a draft from a CSV file, HotCRP style (logic in :mod:`api.bulk`):
preview row by row, then apply all or nothing."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, Form, UploadFile

from api.auth import Writer
from api.dependencies import Explainers, Limit, Offset, SessionDep
from api.errors import ApiError
from api.ids import RowIdPath, VenueIdPath
from api.page_schemas import BulkPreviewOut, EditResultOut
from api.schemas import AssignmentOut
from api.uploads import SettingsDep, upload_bytes, upload_name
from reviewer_recommender.services import bulk
from reviewer_recommender.services.history import edits_out
from reviewer_recommender.services.ids import text_problem
from reviewer_recommender.services.runs import require_draft

router = APIRouter(tags=["edits"])


def _page(items: list[Any], limit: int, offset: int) -> dict[str, Any]:
    return {
        "items": items[offset : offset + limit],
        "total": len(items),
        "limit": limit,
        "offset": offset,
    }


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
    (with scores and names), pin and forbid changes, every row that blocks applying
    (``errors``, with its line) and the warnings (limits that need ``force``, papers left
    below demand, rows without effect), and the effect on the run. Nothing changes;
    ``limit``/``offset`` page every list."""
    row = require_draft(session, venue_id, assignment_id, principal)
    version = row.version
    name = upload_name(file, "changes.csv")
    content = upload_bytes(file, settings, name)
    try:
        result = bulk.run(explainers, session, row, content, name, principal.name, listed=limit)
        listing = bulk.row_listing(session, row, result)
        effect = result.applied.effect if result.applied is not None else None
    finally:
        session.rollback()
    if effect is not None:
        effect = {**effect, "version": version}
    return {
        "version": version,
        "rows": len(result.rows),
        "additions": _page(listing["additions"], limit, offset),
        "removals": _page(listing["removals"], limit, offset),
        "constraint_changes": _page(listing["constraint_changes"], limit, offset),
        "errors": _page([e.to_dict() for e in result.errors], limit, offset),
        "warnings": _page([w.to_dict() for w in result.warnings], limit, offset),
        "effect": effect,
        "can_apply": not result.errors and bool(result.effective),
        "force_required": any(w.force_required for w in result.warnings),
    }


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
) -> dict[str, Any]:
    """Apply a bulk change file to this draft, all rows or none: one version bump, one
    history entry (one undo reverts it), one audit entry. 422 ``invalid_rows`` lists every
    row that blocks it (with its line); 409 ``would_overfill`` (``force_allowed``) when
    additions exceed a max load or a demand and ``force`` is false; 409 ``stale_version``
    when the run moved since ``version``."""
    row = require_draft(session, venue_id, assignment_id, principal)
    if version != row.version:
        raise ApiError(
            409,
            "stale_version",
            f"assignment {row.id} is at version {row.version}, not {version}: it changed since "
            "the preview; preview the file again",
            version=row.version,
        )
    problem = text_problem(reason)
    if problem is not None:
        raise ApiError(422, "validation_error", f"reason {problem}")
    name = upload_name(file, "changes.csv")
    content = upload_bytes(file, settings, name)
    result = bulk.run(
        explainers,
        session,
        row,
        content,
        name,
        principal.name,
        reason=reason,
        force=force,
        expected_version=version,
    )
    if result.errors or result.applied is None:
        session.rollback()
        errors = [e.to_dict() for e in result.errors]
        words = (
            f"{len(errors)} row{'s' if len(errors) != 1 else ''} of {name} cannot be applied: "
            + "; ".join(
                f"line {e['line']}: {e['message']}" if e["line"] else e["message"]
                for e in errors[:5]
            )
            if errors
            else f"no row of {name} changes this run"
        )
        raise ApiError(422, "invalid_rows", words, errors=errors)
    forced = [w for w in result.warnings if w.force_required]
    if forced and not force:
        session.rollback()
        raise ApiError(
            409,
            "would_overfill",
            f"{name} would overfill draft {row.id}: "
            + "; ".join(w.message for w in forced[:5])
            + ". Send force=true to apply it anyway",
            force_allowed=True,
            limits=[w.message for w in forced],
        )
    applied = result.applied
    session.commit()
    return {
        "edit": edits_out(session, row, [applied.edit])[0],
        "effect": applied.effect,
        "assignment": AssignmentOut.model_validate(row),
    }
