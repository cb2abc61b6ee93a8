"""Venues: create one (admins), list and read them as the caller may see them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import Forbidden, StateConflict, not_found
from reviewer_recommender.services.capacity import solve_defaults
from reviewer_recommender.services.ids import refuse_venue_lookalike
from reviewer_recommender.services.pools import pool_size
from reviewer_recommender.services.principals import Principal
from reviewer_recommender.storage.models import (
    DEFAULT_POOL,
    POOLS,
    AssignmentRow,
    ReviewerRow,
    SubmissionRow,
    Venue,
)
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
    live_assignments: dict[str, int]
    pools: dict[str, int]
    bidding_open: bool


def _summary(session: Session, venue: Venue, principal: Principal) -> VenueSummary:
    live = dict(
        session.execute(
            select(AssignmentRow.pool, AssignmentRow.id).where(
                AssignmentRow.venue_id == venue.id, AssignmentRow.state == "live"
            )
        ).all()
    )
    sizes = {pool: pool_size(session, venue.id, pool) for pool in POOLS}
    return VenueSummary(
        id=venue.id,
        name=venue.name,
        created_at=venue.created_at,
        live_assignment_id=live.get(DEFAULT_POOL),
        papers=count_rows(session, SubmissionRow, venue.id),
        reviewers=count_rows(session, ReviewerRow, venue.id),
        solve_defaults=solve_defaults(session, venue.id)
        if principal.sees_drafts(venue.id)
        else None,
        live_assignments={p: int(live[p]) for p in POOLS if p in live},
        pools={p: int(sizes.get(p, 0)) for p in POOLS},
        bidding_open=bool(venue.bidding_open),
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
    """The venues ``principal`` may read, by id (an admin: all of them); 403 for a person
    token, which reads only its own view of its venue."""
    if principal.is_person:
        raise Forbidden(
            None,
            f"a {principal.role} token sees only its own view of venue "
            f"{principal.venue_id!r}: GET /venues/{principal.venue_id}/me",
        )
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


def set_bidding(
    session: Session, venue_id: str, principal: Principal, *, bidding_open: bool
) -> VenueSummary:
    """Open or close bidding (audited when it changes, committed): persons bid on their
    candidates only while it is open."""
    venue = session.get(Venue, venue_id)
    if venue is None:
        raise not_found("venue", venue_id)
    if bool(venue.bidding_open) != bidding_open:
        venue.bidding_open = bidding_open
        audit(session, venue_id, principal.name, "venue.bidding", open=bidding_open)
        session.commit()
    return _summary(session, venue, principal)
