"""A run's own rules: the pins and forbids its edits made and the max loads a
re-assignment set, which hold in that run only, and their promotion to venue rules (logic in
:mod:`reviewer_recommender.services.draft_rules`); repairs that raise a paper's score
(:mod:`reviewer_recommender.services.repairs`). Both reached through
:mod:`reviewer_recommender.services.draft_edits`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from api.auth import ChairReader, Writer
from api.dependencies import SessionDep
from api.ids import PaperIdPath, RowIdPath, VenueIdPath
from api.page_schemas import EditEffectOut, EditResultOut, ReoptimiseOut
from api.rule_schemas import (
    DraftRulesOut,
    PaperRepairsOut,
    PromoteIn,
    PromoteOut,
    ReoptimiseIn,
    RepairIn,
)
from reviewer_recommender.services import draft_edits
from reviewer_recommender.services.draft_edits import EditResult
from reviewer_recommender.services.draft_rule_promotion import RuleKey

router = APIRouter(tags=["edits"])


@router.get("/venues/{venue_id}/assignments/{assignment_id}/rules", response_model=DraftRulesOut)
def list_run_rules(
    venue_id: VenueIdPath, assignment_id: RowIdPath, principal: ChairReader, session: SessionDep
) -> dict[str, Any]:
    """The run's own rules (chairs): pins and forbids made by its edits, max loads set by a
    re-assignment (each with the venue's value beside it) and the venue pins it lifted
    (``unpin``: its withdrawn reviewers' and removed pairs'). They hold in this run and in a
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
    of every later solve, max loads of the run's pool; a lifted pin removes the venue pin.
    Audited (``draft_rules.promote``). 409 ``nothing_to_promote``; 404 for a rule the run
    does not have."""
    chosen = (
        None
        if body.rules is None
        else [RuleKey(r.kind, r.paper_id, r.reviewer_id) for r in body.rules]
    )
    return draft_edits.promote_draft_rules(
        session, venue_id, assignment_id, principal, chosen, body.reason
    )


@router.get(
    "/venues/{venue_id}/assignments/{assignment_id}/papers/{paper_id}/repairs",
    response_model=PaperRepairsOut,
)
def paper_repairs(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    paper_id: PaperIdPath,
    principal: Writer,
    session: SessionDep,
) -> dict[str, Any]:
    """The candidates that would raise the paper's score in the draft, best first, each with
    the exact rearrangement that brings them in (a swap chain across papers found by the flow
    solver on the paper and the papers the candidate reviews; every other pair stays) and
    its score change on the paper, elsewhere and in total. A candidate who fits only over
    their quota is listed with ``over_quota`` (assign them with ``force``). 409
    ``not_a_draft``."""
    return draft_edits.paper_repairs(session, venue_id, assignment_id, principal, paper_id)


@router.post(
    "/venues/{venue_id}/assignments/{assignment_id}/papers/{paper_id}/repairs/preview",
    response_model=EditEffectOut,
)
def preview_repair(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    paper_id: PaperIdPath,
    body: RepairIn,
    principal: Writer,
    session: SessionDep,
) -> dict[str, Any]:
    """What applying the repair that brings ``reviewer_id`` in would do, nothing changed.
    409 ``no_repair`` (only over the quota), ``stale_version``; 422 if it would not raise
    the paper's score."""
    return draft_edits.preview_repair(
        session, venue_id, assignment_id, principal, paper_id, body.reviewer_id, body.version
    )


@router.post(
    "/venues/{venue_id}/assignments/{assignment_id}/papers/{paper_id}/repairs",
    response_model=EditResultOut,
)
def apply_repair(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    paper_id: PaperIdPath,
    body: RepairIn,
    principal: Writer,
    session: SessionDep,
) -> EditResult:
    """Apply the repair as one change of the draft: its version bumped, recorded in its
    history (undoable) and audited (``assignment.repair``). Refusals as the preview's."""
    return draft_edits.apply_repair(
        session,
        venue_id,
        assignment_id,
        principal,
        paper_id,
        body.reviewer_id,
        body.version,
        body.reason,
    )


@router.post(
    "/venues/{venue_id}/assignments/{assignment_id}/reoptimise",
    response_model=ReoptimiseOut,
    status_code=201,
)
def reoptimise_papers(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: ReoptimiseIn,
    principal: Writer,
    session: SessionDep,
) -> dict[str, Any]:
    """Re-optimise these papers and keep the rest, as a new draft: the papers' pairs solved
    again (each its demand; each reviewer's room their max load less their load on the
    papers kept; pins and the run's own rules hold), every other pair copied. Audited
    (``assignment.reoptimise``). 422 for unknown papers; 409 ``infeasible``."""
    return draft_edits.reoptimise_papers(
        session, venue_id, assignment_id, principal, body.paper_ids, body.name
    )
