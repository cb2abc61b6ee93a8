"""Hand edits of a draft assignment: pin, unpin, forbid, swap (logic in :mod:`api.edits`).

Pins become forced pairs and forbids conflicts in every later solve of the venue; a swap is
a forbid of the pair it removes plus a pin of the pair it adds, so re-solves keep it. Each
edit bumps the draft's version and recomputes its objective and statistics.
"""

from __future__ import annotations

from fastapi import APIRouter

from api import edits
from api.auth import Writer
from api.dependencies import Explainers, SessionDep
from api.ids import RowIdPath, VenueIdPath
from api.models import AssignmentPair, AssignmentRow
from api.runs import require_draft
from api.schemas import AssignedPairOut, AssignmentOut, PairIn, PinIn, SwapIn
from api.store import require_paper, require_reviewer

router = APIRouter(tags=["assignments"])


@router.post("/venues/{venue_id}/assignments/{assignment_id}/pin", response_model=AssignedPairOut)
def pin_pair(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: PinIn,
    explainers: Explainers,
    principal: Writer,
    session: SessionDep,
) -> AssignmentPair:
    """Require a pair: added to this draft and forced in every later solve.

    409 if the pair is a conflict of interest, or if adding it would exceed the reviewer's
    max load or the paper's demand in this draft (the message names the limits) unless
    ``force`` is true."""
    row = require_draft(session, venue_id, assignment_id, principal)
    require_paper(session, venue_id, body.paper_id)
    require_reviewer(session, venue_id, body.reviewer_id)
    return edits.pin(
        explainers,
        session,
        row,
        body.paper_id,
        body.reviewer_id,
        force=body.force,
        reason=body.reason,
        actor=principal.name,
    )


@router.post("/venues/{venue_id}/assignments/{assignment_id}/unpin", response_model=AssignedPairOut)
def unpin_pair(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: PairIn,
    principal: Writer,
    session: SessionDep,
) -> AssignmentPair:
    """Drop a pin: the pair stays in this draft but is no longer forced."""
    row = require_draft(session, venue_id, assignment_id, principal)
    return edits.unpin(
        session, row, body.paper_id, body.reviewer_id, reason=body.reason, actor=principal.name
    )


@router.post("/venues/{venue_id}/assignments/{assignment_id}/forbid", response_model=AssignmentOut)
def forbid_pair(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: PairIn,
    principal: Writer,
    session: SessionDep,
) -> AssignmentRow:
    """Forbid a pair: removed from this draft and a conflict in every later solve."""
    row = require_draft(session, venue_id, assignment_id, principal)
    require_paper(session, venue_id, body.paper_id)
    require_reviewer(session, venue_id, body.reviewer_id)
    return edits.forbid(
        session, row, body.paper_id, body.reviewer_id, reason=body.reason, actor=principal.name
    )


@router.post("/venues/{venue_id}/assignments/{assignment_id}/swap", response_model=AssignedPairOut)
def swap_reviewer(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: SwapIn,
    explainers: Explainers,
    principal: Writer,
    session: SessionDep,
) -> AssignmentPair:
    """Replace one reviewer of a paper with another in this draft; stored as a forbid of
    the old pair and a pin of the new one, so re-solves keep the swap.

    409 if the incoming reviewer is in conflict or would go over their max load, unless
    ``force`` is true (loads only)."""
    row = require_draft(session, venue_id, assignment_id, principal)
    require_paper(session, venue_id, body.paper_id)
    require_reviewer(session, venue_id, body.add_reviewer_id)
    return edits.swap(
        explainers,
        session,
        row,
        body.paper_id,
        body.remove_reviewer_id,
        body.add_reviewer_id,
        force=body.force,
        reason=body.reason,
        actor=principal.name,
    )
