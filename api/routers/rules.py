"""A run's own rules: the pins and forbids its edits made and the max loads a
re-assignment set, which hold in that run only, and their promotion to venue rules (logic in
:mod:`reviewer_recommender.services.draft_rules`, reached through
:mod:`reviewer_recommender.services.draft_edits`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from api.auth import ChairReader, Writer
from api.dependencies import SessionDep
from api.ids import RowIdPath, VenueIdPath
from api.rule_schemas import DraftRulesOut, PromoteIn, PromoteOut
from reviewer_recommender.services import draft_edits
from reviewer_recommender.services.draft_rules import RuleKey

router = APIRouter(tags=["edits"])


@router.get("/venues/{venue_id}/assignments/{assignment_id}/rules", response_model=DraftRulesOut)
def list_run_rules(
    venue_id: VenueIdPath, assignment_id: RowIdPath, principal: ChairReader, session: SessionDep
) -> dict[str, Any]:
    """The run's own rules (chairs): pins and forbids made by its edits, max loads set by a
    re-assignment (each with the venue's value beside it). They hold in this run and in a
    re-solve of it only; another run, a new solve or a perturbed run never sees them."""
    return draft_edits.draft_rules_of(session, venue_id, assignment_id, principal)


@router.post(
    "/venues/{venue_id}/assignments/{assignment_id}/rules/promote", response_model=PromoteOut
)
def promote_run_rules(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: PromoteIn,
    principal: Writer,
    session: SessionDep,
) -> dict[str, Any]:
    """Make the run's own rules (``rules``, or all of them) venue rules: pins and forbids
    of every later solve, max loads of the run's pool. Audited (``draft_rules.promote``).
    409 ``nothing_to_promote``; 404 for a rule the run does not have."""
    chosen = (
        None
        if body.rules is None
        else [RuleKey(r.kind, r.paper_id, r.reviewer_id) for r in body.rules]
    )
    return draft_edits.promote_draft_rules(
        session, venue_id, assignment_id, principal, chosen, body.reason
    )
