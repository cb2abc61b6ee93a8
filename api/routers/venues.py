"""Venues, tokens and the audit log."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, status

from api.auth import Admin, ChairReader, CurrentPrincipal, Reader, Writer
from api.dependencies import Limit, Offset, SessionDep
from api.ids import PoolQuery, RowIdPath, TextQuery, VenueIdPath
from api.page_schemas import CapacityOut
from api.schemas import (
    AuditOut,
    MeOut,
    Page,
    TokenIn,
    TokenInfoOut,
    TokenOut,
    VenueIn,
    VenueOut,
    VenuePatchIn,
)
from reviewer_recommender.services import token_admin, venues
from reviewer_recommender.services.audit_log import audit_log
from reviewer_recommender.services.capacity import venue_capacity
from reviewer_recommender.storage.repository import Paged

router = APIRouter(tags=["venues"])


@router.get("/me", response_model=MeOut)
def who_am_i(principal: CurrentPrincipal) -> MeOut:
    """The calling token: name, role (admin, chair, viewer, reviewer or area_chair),
    venue (None for admin), id, expiry and, for a person's token, the person."""
    return MeOut(
        name=principal.name,
        role=principal.role,
        venue_id=principal.venue_id,
        token_id=principal.token_id,
        expires_at=principal.expires_at,
        person_id=principal.person_id,
    )


@router.post("/venues", status_code=status.HTTP_201_CREATED, response_model=VenueOut)
def create_venue(body: VenueIn, principal: Admin, session: SessionDep) -> venues.VenueSummary:
    """Create a venue (global admin only)."""
    return venues.create_venue(session, body.id, body.name, principal)


@router.get("/venues", response_model=Page[VenueOut])
def list_venues(
    principal: CurrentPrincipal, session: SessionDep, limit: Limit = 100, offset: Offset = 0
) -> Paged[venues.VenueSummary]:
    """Venues this token may read."""
    return venues.list_venues(session, principal, limit, offset)


@router.get("/venues/{venue_id}", response_model=VenueOut)
def get_venue(venue_id: VenueIdPath, principal: Reader, session: SessionDep) -> venues.VenueSummary:
    """A venue, with the id of its live assignment (null while none is published)."""
    return venues.get_venue(session, venue_id, principal)


@router.patch("/venues/{venue_id}", response_model=VenueOut)
def update_venue(
    venue_id: VenueIdPath, body: VenuePatchIn, principal: Writer, session: SessionDep
) -> venues.VenueSummary:
    """Change the venue: ``bidding_open`` opens or closes bidding (chairs). Persons bid on
    their candidate papers only while it is open (409 ``bidding_closed`` otherwise)."""
    if body.bidding_open is None:
        return venues.get_venue(session, venue_id, principal)
    return venues.set_bidding(session, venue_id, principal, bidding_open=body.bidding_open)


@router.get("/venues/{venue_id}/capacity", response_model=CapacityOut)
def check_capacity(
    venue_id: VenueIdPath,
    principal: ChairReader,
    session: SessionDep,
    reviewers_per_paper: Annotated[int, Query(ge=0, le=1000)] = 3,
    min_load: Annotated[int, Query(ge=0, le=10_000)] = 0,
    max_load: Annotated[int, Query(ge=0, le=100_000)] = 6,
    pool: PoolQuery = "reviewers",
) -> dict[str, Any]:
    """Whether a solve with these options fits by counting alone, with the venue's stored
    paper demands and reviewer max loads counted (the same count that refuses a solve
    with 409 ``over_capacity``), and the smallest max load that would fit (chairs)."""
    return venue_capacity(
        session,
        venue_id,
        reviewers_per_paper=reviewers_per_paper,
        min_load=min_load,
        max_load=max_load,
        pool=pool,
    )


@router.post(
    "/venues/{venue_id}/tokens", status_code=status.HTTP_201_CREATED, response_model=TokenOut
)
def create_venue_token(
    venue_id: VenueIdPath, body: TokenIn, principal: Writer, session: SessionDep
) -> token_admin.IssuedToken:
    """Create a token for a venue: chair or viewer (global admin only), or a person's own
    token (``role`` reviewer or area_chair with ``person_id``, a person of the venue in the
    role's pool; admins and the venue's chairs). Optional expiry (``expires_at`` or
    ``expires_in_days``). The secret is in this answer only."""
    return token_admin.issue_venue_token(
        session,
        venue_id,
        name=body.name,
        role=body.role,
        expires_at=body.expires_at,
        expires_in_days=body.expires_in_days,
        actor=principal.name,
        person_id=body.person_id,
        principal=principal,
    )


@router.get("/venues/{venue_id}/tokens", response_model=Page[TokenInfoOut])
def list_venue_tokens(
    venue_id: VenueIdPath,
    principal: Writer,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
) -> Paged[token_admin.TokenInfo]:
    """The venue's tokens the caller manages, newest first (never the secrets): an admin
    all of them, a chair the person tokens (reviewer, area_chair) with their persons."""
    return token_admin.venue_token_page(session, venue_id, principal, limit=limit, offset=offset)


@router.post("/venues/{venue_id}/tokens/{token_id}/revoke", response_model=TokenInfoOut)
def revoke_venue_token(
    venue_id: VenueIdPath, token_id: RowIdPath, principal: Writer, session: SessionDep
) -> token_admin.TokenInfo:
    """Revoke a token of the venue the caller manages (a chair: its person tokens); 404 for
    any other."""
    return token_admin.revoke_venue_token(session, venue_id, token_id, principal)


@router.get("/tokens", response_model=Page[TokenInfoOut])
def list_all_tokens(
    principal: Admin,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
    venue_id: TextQuery = None,
    name: TextQuery = None,
    prefix: TextQuery = None,
    active: Annotated[bool, Query(description="only tokens still usable")] = False,
) -> Paged[token_admin.TokenInfo]:
    """Tokens by name and prefix, newest first (global admin only; never the secrets)."""
    return token_admin.token_page(
        session,
        venue_id=venue_id,
        name=name,
        prefix=prefix,
        active_only=active,
        limit=limit,
        offset=offset,
    )


@router.post("/tokens/{token_id}/revoke", response_model=TokenInfoOut)
def revoke_api_token(
    token_id: RowIdPath,
    principal: Admin,
    session: SessionDep,
) -> token_admin.TokenInfo:
    """Revoke a token for good (global admin only): it answers 401 from now on. Revoking a
    revoked token changes nothing."""
    return token_admin.revoke_token_by_id(session, token_id, actor=principal.name)


@router.get("/venues/{venue_id}/audit", response_model=Page[AuditOut])
def list_audit(
    venue_id: VenueIdPath,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
) -> Paged[dict[str, Any]]:
    """Every change made in the venue: who, when, what (newest first). Viewers see only
    publications (which run went live, its version, the run it replaced)."""
    return audit_log(session, venue_id, principal, limit, offset)
