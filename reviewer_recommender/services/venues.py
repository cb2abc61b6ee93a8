"""Venues: create one (admins), list and read them as the caller may see them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import StateConflict, not_found
from reviewer_recommender.services.capacity import solve_defaults
from reviewer_recommender.services.ids import refuse_venue_lookalike
from reviewer_recommender.services.tokens import Principal
from reviewer_recommender.storage.models import AssignmentRow, ReviewerRow, SubmissionRow, Venue
from reviewer_recommender.storage.repository import Paged, audit, count_rows, query_page


@dataclass(frozen=True)
class VenueSummary:
    """A venue with its live run and sizes; ``solve_defaults`` for chairs only."""

    id: str
    name: str
    created_at: datetime
    live_assignment_id: int | None
    papers: int
    reviewers: int
    solve_defaults: dict[str, Any] | None


def _summary(session: Session, venue: Venue, principal: Principal) -> VenueSummary:
    live = session.scalar(
        select(AssignmentRow.id).where(
            AssignmentRow.venue_id == venue.id, AssignmentRow.state == "live"
        )
    )
    return VenueSummary(
        id=venue.id,
        name=venue.name,
        created_at=venue.created_at,
        live_assignment_id=live,
        papers=count_rows(session, SubmissionRow, venue.id),
        reviewers=count_rows(session, ReviewerRow, venue.id),
        solve_defaults=solve_defaults(session, venue.id)
        if principal.sees_drafts(venue.id)
        else None,
    )


def create_venue(session: Session, venue_id: str, name: str, principal: Principal) -> VenueSummary:
    """A new venue named ``name`` (its id when empty), audited and committed; 409
    ``venue_exists`` when the id is taken."""
    if session.get(Venue, venue_id) is not None:
        raise StateConflict("venue_exists", f"venue {venue_id!r} already exists")
    refuse_venue_lookalike(session, venue_id)
    venue = Venue(id=venue_id, name=name or venue_id)
    session.add(venue)
    session.flush()
    audit(session, venue_id, principal.name, "venue.create", name=venue.name)
    session.commit()
    return _summary(session, venue, principal)


def list_venues(
    session: Session, principal: Principal, limit: int, offset: int
) -> Paged[VenueSummary]:
    """The venues ``principal`` may read, by id (an admin: all of them)."""
    query = select(Venue).order_by(Venue.id)
    if not principal.is_admin:
        query = query.where(Venue.id == principal.venue_id)
    found = query_page(session, query, limit, offset)
    return Paged([_summary(session, v, principal) for v in found.items], found.total, limit, offset)


def get_venue(session: Session, venue_id: str, principal: Principal) -> VenueSummary:
    venue = session.get(Venue, venue_id)
    if venue is None:
        raise not_found("venue", venue_id)
    return _summary(session, venue, principal)
