"""Hand edits of a draft assignment, their preview, history and undo; the venue's pins and
forbids (logic in :mod:`api.edits` and :mod:`api.history`).

Pins become forced pairs and forbids conflicts in every later solve of the venue; a swap is
a forbid of the pair it removes plus a pin of the pair it adds, so re-solves keep it.
``assign`` and ``remove`` change one draft only. Each edit bumps the draft's version,
recomputes its objective and statistics, and can be undone.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from sqlalchemy import select

from api.auth import ChairReader, Writer
from api.dependencies import Explainers, Limit, Offset, SessionDep
from api.ids import IdQuery, PaperIdPath, ReviewerIdPath, ReviewerIdQuery, RowIdPath, VenueIdPath
from api.page_schemas import (
    DeletedOut,
    EditEffectOut,
    EditIn,
    EditOut,
    EditResultOut,
    ForbidOut,
    PinOut,
    UndoIn,
)
from api.schemas import AssignedPairOut, AssignmentOut, Page, PairIn, PinIn, SwapIn
from reviewer_recommender.errors import not_found
from reviewer_recommender.services import run_edits as edits
from reviewer_recommender.services.history import edits_out, history_page, undo_last
from reviewer_recommender.services.runs import require_assignment, require_draft
from reviewer_recommender.storage.models import AssignmentPair, AssignmentRow, Conflict, Pin
from reviewer_recommender.storage.names import name_rows
from reviewer_recommender.storage.repository import Paged, audit, named_page, of_pair

router = APIRouter(tags=["edits"])


def _request(body: EditIn) -> edits.EditRequest:
    return edits.EditRequest(
        action=body.action,
        paper_id=body.paper_id,
        reviewer_id=body.reviewer_id,
        remove_reviewer_id=body.remove_reviewer_id,
        reason=body.reason,
        force=body.force,
    )


def _pair_out(session: SessionDep, row: AssignmentRow, paper_id: str, reviewer_id: str) -> Any:
    pair = session.get(AssignmentPair, (row.id, paper_id, reviewer_id))
    if pair is None:
        raise not_found("assigned pair", f"{paper_id}/{reviewer_id}")
    named = name_rows(
        session,
        row.venue_id,
        [
            {
                "paper_id": paper_id,
                "reviewer_id": reviewer_id,
                "score": pair.score,
                "pinned": pair.pinned,
            }
        ],
    )
    return named[0]


def _apply(
    explainers: Explainers,
    session: SessionDep,
    row: AssignmentRow,
    request: edits.EditRequest,
    actor: str,
    version: int | None = None,
) -> edits.Applied:
    applied = edits.apply_edit(explainers, session, row, request, actor, expected_version=version)
    session.commit()
    return applied


@router.post(
    "/venues/{venue_id}/assignments/{assignment_id}/edits/preview", response_model=EditEffectOut
)
def preview_edit(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: EditIn,
    explainers: Explainers,
    principal: Writer,
    session: SessionDep,
) -> dict[str, Any]:
    """What an edit would do, without doing it: pairs added and removed with their scores,
    the objective before and after, loads and paper counts that change, standing pins and
    forbids changed, hard constraints broken before and after, warnings in words. An edit
    that would be refused answers ``allowed: false`` with its error ``code``; one refused
    only for breaking a limit (``force_allowed``) shows what ``force`` would do."""
    row = require_draft(session, venue_id, assignment_id, principal)
    return edits.preview_edit(
        explainers, session, row, _request(body), principal.name, expected_version=body.version
    )


@router.post("/venues/{venue_id}/assignments/{assignment_id}/edits", response_model=EditResultOut)
def apply_edit(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: EditIn,
    explainers: Explainers,
    principal: Writer,
    session: SessionDep,
) -> dict[str, Any]:
    """Apply an edit (pin, unpin, forbid, unforbid, swap, assign, remove): the draft's
    version is bumped, the edit is recorded in its history (undoable) and audited. Refusals:
    409 ``conflict_of_interest``, ``would_overfill`` (``force_allowed``),
    ``already_assigned``, ``not_assigned``, ``pinned_pair``, ``stale_version``,
    ``not_a_draft``; 404 for unknown ids, pins or forbids."""
    row = require_draft(session, venue_id, assignment_id, principal)
    applied = _apply(explainers, session, row, _request(body), principal.name, body.version)
    return {
        "edit": edits_out(session, row, [applied.edit])[0],
        "effect": applied.effect,
        "assignment": AssignmentOut.model_validate(row),
    }


@router.get("/venues/{venue_id}/assignments/{assignment_id}/edits", response_model=Page[EditOut])
def list_edits(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    principal: ChairReader,
    session: SessionDep,
    limit: Limit = 50,
    offset: Offset = 0,
) -> dict[str, Any]:
    """The run's edit history, newest first, undone entries marked (chairs only)."""
    row = require_assignment(session, venue_id, assignment_id, principal)
    return history_page(session, row, limit, offset)


@router.post("/venues/{venue_id}/assignments/{assignment_id}/undo", response_model=EditResultOut)
def undo_edit(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: UndoIn,
    principal: Writer,
    session: SessionDep,
) -> dict[str, Any]:
    """Undo the draft's newest change not yet undone (an edit or a bulk change): its pairs,
    pins and forbids as they were, its summary restored; the version is bumped. 409
    ``nothing_to_undo``, ``stale_version`` (``version`` must be the current one)."""
    row = require_draft(session, venue_id, assignment_id, principal)
    entry, effect = undo_last(
        session, row, version=body.version, actor=principal.name, reason=body.reason
    )
    session.commit()
    return {
        "edit": edits_out(session, row, [entry])[0],
        "effect": effect,
        "assignment": AssignmentOut.model_validate(row),
    }


# ---- the original edit routes (same code path) ---------------------------------------------


@router.post("/venues/{venue_id}/assignments/{assignment_id}/pin", response_model=AssignedPairOut)
def pin_pair(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: PinIn,
    explainers: Explainers,
    principal: Writer,
    session: SessionDep,
) -> Any:
    """Require a pair: added to this draft and forced in every later solve (the ``pin``
    edit of ``POST .../edits``).

    409 ``conflict_of_interest`` if the pair is one, ``would_overfill`` if adding it
    would exceed the reviewer's max load or the paper's demand in this draft (the message
    names the limits) unless ``force`` is true."""
    row = require_draft(session, venue_id, assignment_id, principal)
    request = edits.EditRequest(
        "pin", body.paper_id, body.reviewer_id, None, body.reason, body.force
    )
    _apply(explainers, session, row, request, principal.name)
    return _pair_out(session, row, body.paper_id, body.reviewer_id)


@router.post("/venues/{venue_id}/assignments/{assignment_id}/unpin", response_model=AssignedPairOut)
def unpin_pair(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: PairIn,
    explainers: Explainers,
    principal: Writer,
    session: SessionDep,
) -> Any:
    """Drop a pin of a pair of this draft: the pair stays but is no longer forced."""
    row = require_draft(session, venue_id, assignment_id, principal)
    if session.get(AssignmentPair, (row.id, body.paper_id, body.reviewer_id)) is None:
        raise not_found("pin", f"{body.paper_id}/{body.reviewer_id}")
    request = edits.EditRequest("unpin", body.paper_id, body.reviewer_id, None, body.reason)
    _apply(explainers, session, row, request, principal.name)
    return _pair_out(session, row, body.paper_id, body.reviewer_id)


@router.post("/venues/{venue_id}/assignments/{assignment_id}/forbid", response_model=AssignmentOut)
def forbid_pair(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: PairIn,
    explainers: Explainers,
    principal: Writer,
    session: SessionDep,
) -> AssignmentRow:
    """Forbid a pair: removed from this draft and a conflict in every later solve."""
    row = require_draft(session, venue_id, assignment_id, principal)
    request = edits.EditRequest("forbid", body.paper_id, body.reviewer_id, None, body.reason)
    _apply(explainers, session, row, request, principal.name)
    return row


@router.post("/venues/{venue_id}/assignments/{assignment_id}/swap", response_model=AssignedPairOut)
def swap_reviewer(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: SwapIn,
    explainers: Explainers,
    principal: Writer,
    session: SessionDep,
) -> Any:
    """Replace one reviewer of a paper with another in this draft; stored as a forbid of
    the old pair and a pin of the new one, so re-solves keep the swap.

    409 if the incoming reviewer is in conflict or would go over their max load, unless
    ``force`` is true (loads only)."""
    row = require_draft(session, venue_id, assignment_id, principal)
    request = edits.EditRequest(
        "swap",
        body.paper_id,
        body.add_reviewer_id,
        body.remove_reviewer_id,
        body.reason,
        body.force,
    )
    _apply(explainers, session, row, request, principal.name)
    return _pair_out(session, row, body.paper_id, body.add_reviewer_id)


# ---- the venue's pins and forbids ---------------------------------------------------------------


@router.get("/venues/{venue_id}/pins", response_model=Page[PinOut])
def list_pins(
    venue_id: VenueIdPath,
    principal: ChairReader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
    paper_id: IdQuery = None,
    reviewer_id: ReviewerIdQuery = None,
) -> Paged[dict[str, Any]]:
    """The venue's pinned pairs (forced in every solve), by paper then reviewer (chairs)."""
    query = of_pair(select(Pin).where(Pin.venue_id == venue_id), Pin, paper_id, reviewer_id)
    return named_page(
        session,
        venue_id,
        query.order_by(Pin.paper_id, Pin.reviewer_id),
        limit,
        offset,
        lambda p: {
            "paper_id": p.paper_id,
            "reviewer_id": p.reviewer_id,
            "created_by": p.created_by,
        },
    )


@router.get("/venues/{venue_id}/forbids", response_model=Page[ForbidOut])
def list_forbids(
    venue_id: VenueIdPath,
    principal: ChairReader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
    paper_id: IdQuery = None,
    reviewer_id: ReviewerIdQuery = None,
) -> Paged[dict[str, Any]]:
    """The venue's forbidden pairs (chairs' exclusions in every solve) with their reasons,
    by paper then reviewer (chairs)."""
    query = select(Conflict).where(Conflict.venue_id == venue_id, Conflict.source == "forbid")
    query = of_pair(query, Conflict, paper_id, reviewer_id)
    return named_page(
        session,
        venue_id,
        query.order_by(Conflict.paper_id, Conflict.reviewer_id),
        limit,
        offset,
        lambda c: {"paper_id": c.paper_id, "reviewer_id": c.reviewer_id, "reason": c.reason},
    )


@router.delete("/venues/{venue_id}/pins/{paper_id}/{reviewer_id}", response_model=DeletedOut)
def delete_pin(
    venue_id: VenueIdPath,
    paper_id: PaperIdPath,
    reviewer_id: ReviewerIdPath,
    principal: Writer,
    session: SessionDep,
) -> DeletedOut:
    """Remove a pin at venue level: later solves no longer force the pair. No run changes
    (within a draft, the ``unpin`` edit also clears the pair's flag and can be undone)."""
    row = session.get(Pin, (venue_id, paper_id, reviewer_id))
    if row is None:
        raise not_found("pin", f"{paper_id}/{reviewer_id}")
    session.delete(row)
    audit(
        session, venue_id, principal.name, "pins.delete", paper_id=paper_id, reviewer_id=reviewer_id
    )
    session.commit()
    return DeletedOut(deleted=1)


@router.delete("/venues/{venue_id}/forbids/{paper_id}/{reviewer_id}", response_model=DeletedOut)
def delete_forbid(
    venue_id: VenueIdPath,
    paper_id: PaperIdPath,
    reviewer_id: ReviewerIdPath,
    principal: Writer,
    session: SessionDep,
) -> DeletedOut:
    """Lift a forbid at venue level: later solves may assign the pair again. No run
    changes (within a draft, the ``unforbid`` edit can be undone)."""
    row = session.get(Conflict, (venue_id, paper_id, reviewer_id, "forbid"))
    if row is None:
        raise not_found("forbid", f"{paper_id}/{reviewer_id}")
    reason = row.reason
    session.delete(row)
    audit(
        session,
        venue_id,
        principal.name,
        "forbids.delete",
        paper_id=paper_id,
        reviewer_id=reviewer_id,
        forbid_reason=reason,
    )
    session.commit()
    return DeletedOut(deleted=1)
