"""Conflicts of interest managed by the chairs: the venue's detection policy (with a preview
of the count it yields), dismissing and restoring a conflict with a reason, declaring one
(logic in :mod:`reviewer_recommender.services.conflict_policy`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from api.auth import ChairReader, Writer
from api.dependencies import Limit, Offset, SessionDep
from api.ids import IdQuery, PaperIdPath, ReviewerIdPath, ReviewerIdQuery, VenueIdPath
from api.rule_schemas import (
    ConflictChangeOut,
    ConflictPolicyIn,
    ConflictPolicyOut,
    ConflictPolicyPreviewOut,
    ConflictReasonIn,
    DeclaredConflictIn,
    DismissedConflictOut,
)
from api.schemas import Page
from reviewer_recommender.services import conflict_policy
from reviewer_recommender.services.params import ConflictParams
from reviewer_recommender.storage.repository import Paged

router = APIRouter(tags=["conflicts"])


def _policy(body: ConflictPolicyIn) -> ConflictParams:
    return ConflictParams.model_validate(body.model_dump())


@router.get("/venues/{venue_id}/conflict-policy", response_model=ConflictPolicyOut)
def get_conflict_policy(
    venue_id: VenueIdPath, principal: ChairReader, session: SessionDep
) -> dict[str, Any]:
    """How the venue detects conflicts (co-author window, institution, e-mail domain) and
    the conflicts it stores now, by source (chairs)."""
    return conflict_policy.policy_state(session, venue_id)


@router.post("/venues/{venue_id}/conflict-policy/preview", response_model=ConflictPolicyPreviewOut)
def preview_conflict_policy(
    venue_id: VenueIdPath, body: ConflictPolicyIn, principal: Writer, session: SessionDep
) -> dict[str, Any]:
    """What detecting with this policy would find, per reason, and how many pairs it adds
    to and removes from the detected conflicts stored now. Nothing changes."""
    return conflict_policy.preview_policy(session, venue_id, _policy(body))


@router.put("/venues/{venue_id}/conflict-policy", response_model=ConflictPolicyPreviewOut)
def set_conflict_policy(
    venue_id: VenueIdPath, body: ConflictPolicyIn, principal: Writer, session: SessionDep
) -> dict[str, Any]:
    """Store the policy and re-detect the venue's conflicts with it now (dismissed ones stay
    out); later affinity runs detect with it too. Audited (``conflict_policy.set``)."""
    return conflict_policy.set_policy(session, venue_id, _policy(body), principal.name)


@router.post(
    "/venues/{venue_id}/conflicts/{paper_id}/{reviewer_id}/dismiss",
    response_model=ConflictChangeOut,
)
def dismiss_conflict(
    venue_id: VenueIdPath,
    paper_id: PaperIdPath,
    reviewer_id: ReviewerIdPath,
    body: ConflictReasonIn,
    principal: Writer,
    session: SessionDep,
) -> dict[str, Any]:
    """Dismiss the pair's conflict (detected, uploaded or declared) with a reason: it no
    longer blocks the pair, and re-detection or a constraints file uploaded again leaves it
    out until restored. Audited (``conflict.dismiss``). 422 without a reason; 404 if the
    pair has no such conflict."""
    return conflict_policy.dismiss(
        session, venue_id, paper_id, reviewer_id, body.reason, principal.name
    )


@router.post(
    "/venues/{venue_id}/conflicts/{paper_id}/{reviewer_id}/restore",
    response_model=ConflictChangeOut,
)
def restore_conflict(
    venue_id: VenueIdPath,
    paper_id: PaperIdPath,
    reviewer_id: ReviewerIdPath,
    body: ConflictReasonIn,
    principal: Writer,
    session: SessionDep,
) -> dict[str, Any]:
    """Restore the pair's dismissed conflict. Audited (``conflict.restore``). 404 if none
    is dismissed."""
    return conflict_policy.restore(
        session, venue_id, paper_id, reviewer_id, body.reason, principal.name
    )


@router.post("/venues/{venue_id}/conflicts", response_model=ConflictChangeOut, status_code=201)
def declare_conflict(
    venue_id: VenueIdPath, body: DeclaredConflictIn, principal: Writer, session: SessionDep
) -> dict[str, Any]:
    """Declare a conflict the profiles do not show (source ``declared``), with a reason.
    Audited (``conflict.declare``). 404 for unknown ids; 409 ``already_declared``."""
    return conflict_policy.declare(
        session, venue_id, body.paper_id, body.reviewer_id, body.reason, principal.name
    )


@router.get("/venues/{venue_id}/conflicts/dismissed", response_model=Page[DismissedConflictOut])
def list_dismissed_conflicts(
    venue_id: VenueIdPath,
    principal: ChairReader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
    paper_id: IdQuery = None,
    reviewer_id: ReviewerIdQuery = None,
) -> Paged[dict[str, Any]]:
    """The dismissed conflicts with their own reason and the chair's (chairs)."""
    return conflict_policy.list_dismissed(
        session, venue_id, paper_id=paper_id, reviewer_id=reviewer_id, limit=limit, offset=offset
    )
