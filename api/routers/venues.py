"""Venues, tokens and the audit log."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, status
from sqlalchemy import select

from api.auth import Admin, CurrentPrincipal, Reader, create_token
from api.dependencies import Limit, Offset, SessionDep
from api.models import AuditEntry, Venue
from api.schemas import AuditOut, MeOut, Page, TokenIn, TokenOut, VenueIn, VenueOut
from api.store import audit, paginate

router = APIRouter(tags=["venues"])


@router.get("/me", response_model=MeOut)
def who_am_i(principal: CurrentPrincipal) -> MeOut:
    """The calling token's name, role (admin, chair or viewer) and venue (None for admin)."""
    return MeOut(name=principal.name, role=principal.role, venue_id=principal.venue_id)


@router.post("/venues", status_code=status.HTTP_201_CREATED, response_model=VenueOut)
def create_venue(body: VenueIn, principal: Admin, session: SessionDep) -> Venue:
    """Create a venue (global admin only)."""
    if session.get(Venue, body.id) is not None:
        raise HTTPException(status.HTTP_409_CONFLICT, f"venue {body.id!r} already exists")
    venue = Venue(id=body.id, name=body.name or body.id)
    session.add(venue)
    session.flush()
    audit(session, body.id, principal.name, "venue.create", name=venue.name)
    session.commit()
    return venue


@router.get("/venues", response_model=Page[VenueOut])
def list_venues(
    principal: CurrentPrincipal, session: SessionDep, limit: Limit = 100, offset: Offset = 0
) -> dict[str, object]:
    """Venues this token may read."""
    query = select(Venue).order_by(Venue.id)
    if not principal.is_admin:
        query = query.where(Venue.id == principal.venue_id)
    items, total = paginate(session, query, limit, offset)
    return {"items": items, "total": total, "limit": limit, "offset": offset}


@router.get("/venues/{venue_id}", response_model=VenueOut)
def get_venue(venue_id: str, principal: Reader, session: SessionDep) -> Venue:
    venue = session.get(Venue, venue_id)
    assert venue is not None  # checked by the Reader dependency
    return venue


@router.post(
    "/venues/{venue_id}/tokens", status_code=status.HTTP_201_CREATED, response_model=TokenOut
)
def create_venue_token(
    venue_id: str, body: TokenIn, principal: Admin, session: SessionDep
) -> TokenOut:
    """Create a chair or viewer token for a venue (global admin only)."""
    if session.get(Venue, venue_id) is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"venue {venue_id!r} not found")
    audit(session, venue_id, principal.name, "token.create", name=body.name, role=body.role)
    secret = create_token(session, name=body.name, role=body.role, venue_id=venue_id)
    return TokenOut(name=body.name, role=body.role, venue_id=venue_id, token=secret)


@router.get("/venues/{venue_id}/audit", response_model=Page[AuditOut])
def list_audit(
    venue_id: str, principal: Reader, session: SessionDep, limit: Limit = 100, offset: Offset = 0
) -> dict[str, object]:
    """Every change made in the venue: who, when, what (newest first)."""
    query = select(AuditEntry).where(AuditEntry.venue_id == venue_id).order_by(AuditEntry.id.desc())
    items, total = paginate(session, query, limit, offset)
    return {"items": items, "total": total, "limit": limit, "offset": offset}
