"""Bulk changes of a draft from a CSV file, as the faces ask for them: preview row by row
(nothing changes), then apply the valid lines (one version bump, one history entry, one
audit entry) and list the others by line. The rows' meaning and checks are
:mod:`reviewer_recommender.services.bulk`'s."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sqlalchemy.orm import Session

from reviewer_recommender.errors import InvalidRequest, StateConflict
from reviewer_recommender.services import bulk
from reviewer_recommender.services.draft_edits import EditResult, edit_result
from reviewer_recommender.services.explain import ExplainerCache
from reviewer_recommender.services.ids import text_problem
from reviewer_recommender.services.principals import Principal
from reviewer_recommender.services.runs import require_draft
from reviewer_recommender.storage.models import AssignmentRow
from reviewer_recommender.storage.names import lookup
from reviewer_recommender.storage.repository import Paged


def preview_bulk_file(
    explainers: ExplainerCache,
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    content: bytes,
    source: str,
    *,
    limit: int,
    offset: int,
) -> dict[str, Any]:
    """What the file would do to the draft (``BulkPreviewOut``): additions, removals and
    constraint changes, the rows that block applying, the warnings and the effect, each
    list paged by ``limit``/``offset``. Everything is rolled back."""
    row = require_draft(session, venue_id, assignment_id, principal)
    version = row.version
    try:
        result = bulk.run(explainers, session, row, content, source, principal.name, listed=limit)
        listing = row_listing(session, row, result)
        effect = result.applied.effect if result.applied is not None else None
    finally:
        session.rollback()
    if effect is not None:
        effect = {**effect, "version": version}
    return {
        "version": version,
        "rows": result.lines,
        "applied_rows": len(result.effective),
        "skipped_lines": result.skipped_lines,
        "additions": Paged.sliced(listing["additions"], limit, offset),
        "removals": Paged.sliced(listing["removals"], limit, offset),
        "constraint_changes": Paged.sliced(listing["constraint_changes"], limit, offset),
        "errors": Paged.sliced([e.to_dict() for e in result.errors], limit, offset),
        "warnings": Paged.sliced([w.to_dict() for w in result.warnings], limit, offset),
        "effect": effect,
        "can_apply": bool(result.effective),
        "force_required": any(w.force_required for w in result.warnings),
    }


def apply_bulk_file(
    explainers: ExplainerCache,
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    content: bytes,
    source: str,
    *,
    version: int,
    force: bool,
    reason: str,
) -> EditResult:
    """Apply the file's valid lines to the draft and commit; the others are listed
    (``skipped``, by line). 409 ``stale_version`` when the draft moved since ``version``;
    422 ``invalid_rows`` when no line changes the run (listing every bad line); 409
    ``would_overfill``
    (``force_allowed``) when additions exceed a max load or a demand and not ``force``."""
    row = require_draft(session, venue_id, assignment_id, principal)
    if version != row.version:
        raise StateConflict(
            "stale_version",
            f"assignment {row.id} is at version {row.version}, not {version}: it changed since "
            "the preview; preview the file again",
            version=row.version,
        )
    problem = text_problem(reason)
    if problem is not None:
        raise InvalidRequest("validation_error", f"reason {problem}")
    result = bulk.run(
        explainers,
        session,
        row,
        content,
        source,
        principal.name,
        reason=reason,
        force=force,
        expected_version=version,
    )
    if result.applied is None:
        session.rollback()
        errors = [e.to_dict() for e in result.errors]
        words = f"no line of {source} changes this run" + (
            f": {len(errors)} line{'s' if len(errors) != 1 else ''} cannot be applied: "
            + "; ".join(
                f"line {e['line']}: {e['message']}" if e["line"] else e["message"]
                for e in errors[:5]
            )
            if errors
            else ""
        )
        raise InvalidRequest("invalid_rows", words, errors=errors)
    forced = [w for w in result.warnings if w.force_required]
    if forced and not force:
        session.rollback()
        raise StateConflict(
            "would_overfill",
            f"{source} would overfill draft {row.id}: "
            + "; ".join(w.message for w in forced[:5])
            + ". Send force=true to apply it anyway",
            force_allowed=True,
            limits=[w.message for w in forced],
        )
    applied = result.applied
    session.commit()
    done = edit_result(session, row, applied.edit, applied.effect)
    return replace(done, skipped=[e.to_dict() for e in result.errors])


def row_listing(
    session: Session, row: AssignmentRow, result: bulk.BulkResult
) -> dict[str, list[dict[str, Any]]]:
    """The effective rows as additions, removals and constraint changes, named and scored."""
    changes = result.applied.edit.changes if result.applied is not None else {}
    scores = {
        (p, r): s
        for key in ("pairs_added", "pairs_removed")
        for p, r, s, _pinned in changes.get(key, [])
    }
    names = lookup(
        session,
        row.venue_id,
        [r.paper_id for r in result.effective],
        [r.reviewer_id for r in result.effective],
    )
    listing: dict[str, list[dict[str, Any]]] = {
        "additions": [],
        "removals": [],
        "constraint_changes": [],
    }
    for item in result.effective:
        pair = (item.paper_id, item.reviewer_id)
        out = {
            "line": item.line,
            "action": item.written,
            "paper_id": item.paper_id,
            "paper_title": names.title(item.paper_id),
            "reviewer_id": item.reviewer_id,
            "reviewer_name": names.name(item.reviewer_id),
            "score": scores.get(pair),
        }
        if item.action in bulk.ADDING and pair in scores:
            listing["additions"].append(out)
        elif item.action in ("remove", "forbid") and pair in scores:
            listing["removals"].append(out)
        if item.action in ("pin", "unpin", "forbid", "unforbid"):
            listing["constraint_changes"].append(out)
    return listing
