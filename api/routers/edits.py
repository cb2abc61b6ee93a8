"""Hand edits of a draft assignment, their preview, history and undo; the venue's pins and
forbids (logic in :mod:`reviewer_recommender.services.run_edits` and
:mod:`reviewer_recommender.services.history`, reached through
:mod:`reviewer_recommender.services.draft_edits` and
:mod:`reviewer_recommender.services.standing_pairs`).

A draft's pins and forbids are its own rules (:mod:`reviewer_recommender.services.draft_rules`):
they hold in the draft and in a re-solve of it, never in another run, until the chair
promotes them to venue rules; a swap is a forbid of the pair it removes plus a pin of the
pair it adds, so a re-solve of the draft keeps it. ``assign`` and ``remove`` change the
pairs only. Each edit bumps the draft's version,
recomputes its objective and statistics, and can be undone.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

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
from reviewer_recommender.services import draft_edits, standing_pairs
from reviewer_recommender.services.draft_edits import EditResult
from reviewer_recommender.services.run_edits import EditRequest
from reviewer_recommender.storage.models import AssignmentRow
from reviewer_recommender.storage.repository import Paged

router = APIRouter(tags=["edits"])


def _request(body: EditIn) -> EditRequest:
    return EditRequest(
        action=body.action,
        paper_id=body.paper_id,
        reviewer_id=body.reviewer_id,
        remove_reviewer_id=body.remove_reviewer_id,
        reason=body.reason,
        force=body.force,
    )


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
    return draft_edits.preview_draft_edit(
        explainers, session, venue_id, assignment_id, principal, _request(body), body.version
    )


@router.post("/venues/{venue_id}/assignments/{assignment_id}/edits", response_model=EditResultOut)
def apply_edit(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: EditIn,
    explainers: Explainers,
    principal: Writer,
    session: SessionDep,
) -> EditResult:
    """Apply an edit (pin, unpin, forbid, unforbid, swap, assign, remove): the draft's
    version is bumped, the edit is recorded in its history (undoable) and audited. Refusals:
    409 ``conflict_of_interest``, ``would_overfill`` (``force_allowed``),
    ``already_assigned``, ``not_assigned``, ``pinned_pair``, ``stale_version``,
    ``not_a_draft``, ``venue_rule`` (the edit would lift a venue pin or forbid: remove it
    at venue level first); 404 for unknown ids, pins or forbids."""
    return draft_edits.apply_draft_edit(
        explainers, session, venue_id, assignment_id, principal, _request(body), body.version
    )


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
    return draft_edits.edit_history(session, venue_id, assignment_id, principal, limit, offset)


@router.post("/venues/{venue_id}/assignments/{assignment_id}/undo", response_model=EditResultOut)
def undo_edit(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: UndoIn,
    principal: Writer,
    session: SessionDep,
) -> EditResult:
    """Undo the draft's newest change not yet undone (an edit or a bulk change): its pairs,
    pins and forbids as they were, its summary restored; the version is bumped. 409
    ``nothing_to_undo``, ``stale_version`` (``version`` must be the current one)."""
    return draft_edits.undo_draft_edit(
        session, venue_id, assignment_id, principal, version=body.version, reason=body.reason
    )


# ---- the original edit routes (same code path) ---------------------------------------------


@router.post("/venues/{venue_id}/assignments/{assignment_id}/pin", response_model=AssignedPairOut)
def pin_pair(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: PinIn,
    explainers: Explainers,
    principal: Writer,
    session: SessionDep,
) -> dict[str, Any]:
    """Require a pair: added to this draft and forced in its re-solves, a rule of this
    draft until promoted (the ``pin`` edit of ``POST .../edits``).

    409 ``conflict_of_interest`` if the pair is one, ``would_overfill`` if adding it
    would exceed the reviewer's max load or the paper's demand in this draft (the message
    names the limits) unless ``force`` is true."""
    return draft_edits.pin_pair(
        explainers,
        session,
        venue_id,
        assignment_id,
        principal,
        paper_id=body.paper_id,
        reviewer_id=body.reviewer_id,
        reason=body.reason,
        force=body.force,
    )


@router.post("/venues/{venue_id}/assignments/{assignment_id}/unpin", response_model=AssignedPairOut)
def unpin_pair(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: PairIn,
    explainers: Explainers,
    principal: Writer,
    session: SessionDep,
) -> dict[str, Any]:
    """Drop a pin of a pair of this draft: the pair stays but is no longer forced."""
    return draft_edits.unpin_pair(
        explainers,
        session,
        venue_id,
        assignment_id,
        principal,
        paper_id=body.paper_id,
        reviewer_id=body.reviewer_id,
        reason=body.reason,
    )


@router.post("/venues/{venue_id}/assignments/{assignment_id}/forbid", response_model=AssignmentOut)
def forbid_pair(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: PairIn,
    explainers: Explainers,
    principal: Writer,
    session: SessionDep,
) -> AssignmentRow:
    """Forbid a pair: removed from this draft and kept out of its re-solves, a rule of this
    draft until promoted."""
    return draft_edits.forbid_pair(
        explainers,
        session,
        venue_id,
        assignment_id,
        principal,
        paper_id=body.paper_id,
        reviewer_id=body.reviewer_id,
        reason=body.reason,
    )


@router.post("/venues/{venue_id}/assignments/{assignment_id}/swap", response_model=AssignedPairOut)
def swap_reviewer(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: SwapIn,
    explainers: Explainers,
    principal: Writer,
    session: SessionDep,
) -> dict[str, Any]:
    """Replace one reviewer of a paper with another in this draft; stored as the draft's
    forbid of the old pair and pin of the new one, so its re-solves keep the swap.

    409 if the incoming reviewer is in conflict or would go over their max load, unless
    ``force`` is true (loads only)."""
    return draft_edits.swap_reviewer(
        explainers,
        session,
        venue_id,
        assignment_id,
        principal,
        paper_id=body.paper_id,
        add_reviewer_id=body.add_reviewer_id,
        remove_reviewer_id=body.remove_reviewer_id,
        reason=body.reason,
        force=body.force,
    )


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
    return standing_pairs.list_pins(
        session, venue_id, paper_id=paper_id, reviewer_id=reviewer_id, limit=limit, offset=offset
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
    return standing_pairs.list_forbids(
        session, venue_id, paper_id=paper_id, reviewer_id=reviewer_id, limit=limit, offset=offset
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
    deleted = standing_pairs.delete_pin(session, venue_id, paper_id, reviewer_id, principal.name)
    return DeletedOut(deleted=deleted)


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
    deleted = standing_pairs.delete_forbid(session, venue_id, paper_id, reviewer_id, principal.name)
    return DeletedOut(deleted=deleted)
