"""A record's lifecycle: edit, withdraw, restore and delete a paper or a person, and take a
person out of one pool (logic in :mod:`reviewer_recommender.services.records` and
:mod:`reviewer_recommender.services.memberships`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, status

from api.auth import Writer
from api.dependencies import SessionDep
from api.ids import PaperIdPath, PoolPath, ReviewerIdPath, VenueIdPath
from api.record_schemas import (
    PoolLeaveOut,
    RecordChangeOut,
    ReviewerEditIn,
    ReviewerOut,
    SubmissionEditIn,
    SubmissionOut,
    WithdrawIn,
)
from reviewer_recommender.services import corpus, memberships, records
from reviewer_recommender.services.corpus import ReviewerRecord, SubmissionRecord
from reviewer_recommender.services.memberships import PoolLeave
from reviewer_recommender.services.records import RecordChange

router = APIRouter(tags=["corpus"])


@router.patch("/venues/{venue_id}/reviewers/{reviewer_id}", response_model=ReviewerOut)
def edit_reviewer(
    venue_id: VenueIdPath,
    reviewer_id: ReviewerIdPath,
    body: ReviewerEditIn,
    principal: Writer,
    session: SessionDep,
) -> ReviewerRecord:
    """Change a person's name, email or affiliation (audited; scores go stale)."""
    changes: dict[str, Any] = body.model_dump(exclude_unset=True)
    records.edit_record(session, venue_id, "reviewers", reviewer_id, changes, principal.name)
    return corpus.get_reviewer(session, venue_id, reviewer_id)


@router.patch("/venues/{venue_id}/submissions/{paper_id}", response_model=SubmissionOut)
def edit_submission(
    venue_id: VenueIdPath,
    paper_id: PaperIdPath,
    body: SubmissionEditIn,
    principal: Writer,
    session: SessionDep,
) -> SubmissionRecord:
    """Change a submission's title or abstract (audited; scores go stale)."""
    changes: dict[str, Any] = body.model_dump(exclude_unset=True)
    records.edit_record(session, venue_id, "papers", paper_id, changes, principal.name)
    return corpus.get_submission(session, venue_id, paper_id)


@router.post("/venues/{venue_id}/reviewers/{reviewer_id}/withdraw", response_model=RecordChangeOut)
def withdraw_reviewer(
    venue_id: VenueIdPath,
    reviewer_id: ReviewerIdPath,
    body: WithdrawIn,
    principal: Writer,
    session: SessionDep,
) -> RecordChange:
    """Withdraw a person: kept with their history, no longer assigned in any pool (max load
    0 for every solve, edit and publication check). The answer names the draft and live
    runs holding their pairs and, per live run, the emergency re-assignment body."""
    return records.set_status(
        session, venue_id, "reviewers", reviewer_id, "withdrawn", principal.name, body.reason
    )


@router.post("/venues/{venue_id}/reviewers/{reviewer_id}/restore", response_model=RecordChangeOut)
def restore_reviewer(
    venue_id: VenueIdPath, reviewer_id: ReviewerIdPath, principal: Writer, session: SessionDep
) -> RecordChange:
    """Make a withdrawn person assignable again."""
    return records.set_status(session, venue_id, "reviewers", reviewer_id, "active", principal.name)


@router.post("/venues/{venue_id}/submissions/{paper_id}/withdraw", response_model=RecordChangeOut)
def withdraw_submission(
    venue_id: VenueIdPath,
    paper_id: PaperIdPath,
    body: WithdrawIn,
    principal: Writer,
    session: SessionDep,
) -> RecordChange:
    """Withdraw a submission (or desk-reject it): kept with its history, it needs nobody
    (demand 0 for every solve, edit and publication check). The answer names the draft and
    live runs holding its pairs and, per live run, the emergency re-assignment body."""
    return records.set_status(
        session, venue_id, "papers", paper_id, "withdrawn", principal.name, body.reason
    )


@router.post("/venues/{venue_id}/submissions/{paper_id}/restore", response_model=RecordChangeOut)
def restore_submission(
    venue_id: VenueIdPath, paper_id: PaperIdPath, principal: Writer, session: SessionDep
) -> RecordChange:
    """Make a withdrawn submission need its reviewers again."""
    return records.set_status(session, venue_id, "papers", paper_id, "active", principal.name)


@router.delete("/venues/{venue_id}/reviewers/{reviewer_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_reviewer(
    venue_id: VenueIdPath, reviewer_id: ReviewerIdPath, principal: Writer, session: SessionDep
) -> None:
    """Delete a person nothing refers to (with their conflicts, max loads, pool memberships
    and scores); 409 ``record_has_history`` when a run, bid, pin, decline or token names
    them: withdraw them instead."""
    records.delete_record(session, venue_id, "reviewers", reviewer_id, principal.name)


@router.delete(
    "/venues/{venue_id}/reviewers/{reviewer_id}/pools/{pool}", response_model=PoolLeaveOut
)
def leave_pool(
    venue_id: VenueIdPath,
    reviewer_id: ReviewerIdPath,
    pool: PoolPath,
    principal: Writer,
    session: SessionDep,
) -> PoolLeave:
    """Take a person out of one pool (audited); they stay in their other pools with their
    record and history. 404 ``not_in_pool`` when they are not in it; 409 ``last_pool``
    when it is their only pool (a person in no pool counts as a reviewer: withdraw them
    instead); 409 ``member_assigned_live`` while the pool's live run assigns them (the
    answer carries the emergency re-assignment body that frees them). Their pairs in the
    pool's drafts stay, listed in the answer: the drafts' checks flag them as to be
    removed."""
    return memberships.leave_pool(session, venue_id, reviewer_id, pool, principal.name)


@router.delete("/venues/{venue_id}/submissions/{paper_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_submission(
    venue_id: VenueIdPath, paper_id: PaperIdPath, principal: Writer, session: SessionDep
) -> None:
    """Delete a submission nothing refers to (with its conflicts, demands and scores); 409
    ``record_has_history`` when a run, bid, pin or decline names it: withdraw it instead."""
    records.delete_record(session, venue_id, "papers", paper_id, principal.name)
