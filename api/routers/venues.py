"""Venues, tokens and the audit log."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, status
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from api.auth import Admin, ChairReader, CurrentPrincipal, Reader
from api.dependencies import Limit, Offset, SessionDep
from api.errors import ApiError
from api.ids import RowIdPath, TextQuery, VenueIdPath
from api.page_schemas import CapacityOut
from api.schemas import AuditOut, MeOut, Page, TokenIn, TokenInfoOut, TokenOut, VenueIn, VenueOut
from reviewer_recommender.services.audit_text import named_ids
from reviewer_recommender.services.capacity import capacity_check, solve_defaults
from reviewer_recommender.services.ids import refuse_venue_lookalike
from reviewer_recommender.services.params import AssignmentIn
from reviewer_recommender.services.tokens import (
    Principal,
    TokenError,
    aware,
    create_token,
    expiry,
    hash_secret,
    list_tokens,
    revoke_token,
    token_state,
)
from reviewer_recommender.services.visibility import audit_actions, audit_view
from reviewer_recommender.storage.models import (
    ApiToken,
    AssignmentRow,
    AuditEntry,
    ReviewerRow,
    SubmissionRow,
    Venue,
)
from reviewer_recommender.storage.names import lookup
from reviewer_recommender.storage.repository import audit, paginate

router = APIRouter(tags=["venues"])


def _count(session: Session, model: Any, venue_id: str) -> int:
    return int(session.scalar(select(func.count()).where(model.venue_id == venue_id)) or 0)


def _venue_out(session: Session, venue: Venue, principal: Principal) -> VenueOut:
    live = session.scalar(
        select(AssignmentRow.id).where(
            AssignmentRow.venue_id == venue.id, AssignmentRow.state == "live"
        )
    )
    return VenueOut(
        id=venue.id,
        name=venue.name,
        created_at=venue.created_at,
        live_assignment_id=live,
        papers=_count(session, SubmissionRow, venue.id),
        reviewers=_count(session, ReviewerRow, venue.id),
        solve_defaults=solve_defaults(session, venue.id)
        if principal.sees_drafts(venue.id)
        else None,
    )


@router.get("/me", response_model=MeOut)
def who_am_i(principal: CurrentPrincipal) -> MeOut:
    """The calling token: name, role (admin, chair or viewer), venue (None for admin), id
    and expiry."""
    return MeOut(
        name=principal.name,
        role=principal.role,
        venue_id=principal.venue_id,
        token_id=principal.token_id,
        expires_at=principal.expires_at,
    )


@router.post("/venues", status_code=status.HTTP_201_CREATED, response_model=VenueOut)
def create_venue(body: VenueIn, principal: Admin, session: SessionDep) -> VenueOut:
    """Create a venue (global admin only)."""
    if session.get(Venue, body.id) is not None:
        raise ApiError(409, "venue_exists", f"venue {body.id!r} already exists")
    refuse_venue_lookalike(session, body.id)
    venue = Venue(id=body.id, name=body.name or body.id)
    session.add(venue)
    session.flush()
    audit(session, body.id, principal.name, "venue.create", name=venue.name)
    session.commit()
    return _venue_out(session, venue, principal)


@router.get("/venues", response_model=Page[VenueOut])
def list_venues(
    principal: CurrentPrincipal, session: SessionDep, limit: Limit = 100, offset: Offset = 0
) -> dict[str, object]:
    """Venues this token may read."""
    query = select(Venue).order_by(Venue.id)
    if not principal.is_admin:
        query = query.where(Venue.id == principal.venue_id)
    items, total = paginate(session, query, limit, offset)
    return {
        "items": [_venue_out(session, v, principal) for v in items],
        "total": total,
        "limit": limit,
        "offset": offset,
    }


@router.get("/venues/{venue_id}", response_model=VenueOut)
def get_venue(venue_id: VenueIdPath, principal: Reader, session: SessionDep) -> VenueOut:
    """A venue, with the id of its live assignment (null while none is published)."""
    venue = session.get(Venue, venue_id)
    assert venue is not None  # checked by the Reader dependency
    return _venue_out(session, venue, principal)


@router.get("/venues/{venue_id}/capacity", response_model=CapacityOut)
def check_capacity(
    venue_id: VenueIdPath,
    principal: ChairReader,
    session: SessionDep,
    reviewers_per_paper: Annotated[int, Query(ge=0, le=1000)] = 3,
    min_load: Annotated[int, Query(ge=0, le=10_000)] = 0,
    max_load: Annotated[int, Query(ge=0, le=100_000)] = 6,
) -> dict[str, Any]:
    """Whether a solve with these options fits by counting alone, with the venue's stored
    paper demands and reviewer max loads counted (the same count that refuses a solve
    with 409 ``over_capacity``), and the smallest max load that would fit (chairs)."""
    if min_load > max_load:
        raise ApiError(
            422,
            "validation_error",
            f"min_load: {min_load} exceeds the maximum load {max_load}; no reviewer could "
            "meet both",
        )
    body = AssignmentIn(
        reviewers_per_paper=reviewers_per_paper, min_load=min_load, max_load=max_load
    )
    return capacity_check(session, venue_id, body)


@router.post(
    "/venues/{venue_id}/tokens", status_code=status.HTTP_201_CREATED, response_model=TokenOut
)
def create_venue_token(
    venue_id: VenueIdPath, body: TokenIn, principal: Admin, session: SessionDep
) -> TokenOut:
    """Create a chair or viewer token for a venue (global admin only); optional expiry
    (``expires_at`` or ``expires_in_days``). The secret is in this answer only."""
    if session.get(Venue, venue_id) is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"venue {venue_id!r} not found")
    try:
        when = expiry(expires_at=body.expires_at, expires_in_days=body.expires_in_days)
        audit(session, venue_id, principal.name, "token.create", name=body.name, role=body.role)
        secret = create_token(
            session,
            name=body.name,
            role=body.role,
            venue_id=venue_id,
            expires_at=when,
            created_by=principal.name,
        )
    except TokenError as error:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(error)) from error
    token = session.scalar(select(ApiToken).where(ApiToken.token_hash == hash_secret(secret)))
    assert token is not None
    return TokenOut(
        id=token.id,
        name=token.name,
        role=token.role,
        venue_id=venue_id,
        prefix=token.prefix,
        expires_at=aware(token.expires_at),
        token=secret,
    )


def _token_info(token: ApiToken) -> TokenInfoOut:
    return TokenInfoOut(
        id=token.id,
        name=token.name,
        role=token.role,
        venue_id=token.venue_id,
        prefix=token.prefix,
        state=token_state(token),
        created_at=aware(token.created_at),
        created_by=token.created_by,
        expires_at=aware(token.expires_at),
        revoked_at=aware(token.revoked_at),
        revoked_by=token.revoked_by,
    )


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
) -> dict[str, Any]:
    """Tokens by name and prefix, newest first (global admin only; never the secrets)."""
    tokens = list_tokens(
        session, venue_id=venue_id, name=name, prefix=prefix, include_ended=not active
    )
    return {
        "items": [_token_info(t) for t in tokens[offset : offset + limit]],
        "total": len(tokens),
        "limit": limit,
        "offset": offset,
    }


@router.post("/tokens/{token_id}/revoke", response_model=TokenInfoOut)
def revoke_api_token(
    token_id: RowIdPath,
    principal: Admin,
    session: SessionDep,
) -> TokenInfoOut:
    """Revoke a token for good (global admin only): it answers 401 from now on. Revoking a
    revoked token changes nothing."""
    token = session.get(ApiToken, token_id)
    if token is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"token {token_id} not found")
    if revoke_token(session, token, by=principal.name):
        audit(
            session,
            token.venue_id,
            principal.name,
            "token.revoke",
            token_id=token.id,
            name=token.name,
            prefix=token.prefix,
        )
    session.commit()
    return _token_info(token)


@router.get("/venues/{venue_id}/audit", response_model=Page[AuditOut])
def list_audit(
    venue_id: VenueIdPath,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict[str, object]:
    """Every change made in the venue: who, when, what (newest first). Viewers see only
    publications (which run went live, its version, the run it replaced)."""
    query = select(AuditEntry).where(AuditEntry.venue_id == venue_id).order_by(AuditEntry.id.desc())
    actions = audit_actions(principal, venue_id)
    if actions is not None:
        query = query.where(AuditEntry.action.in_(sorted(actions)))
    items, total = paginate(session, query, limit, offset)
    ids = [named_ids(e.detail or {}) for e in items]
    names = lookup(
        session,
        venue_id,
        [p for papers, _ in ids for p in papers],
        [r for _, rs in ids for r in rs],
    )
    return {
        "items": [audit_view(e, principal, venue_id, names) for e in items],
        "total": total,
        "limit": limit,
        "offset": offset,
    }
