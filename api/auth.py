"""Authentication dependencies of the HTTP API: ``Authorization: Bearer <secret>``
(:mod:`reviewer_recommender.services.principals` checks it; only sha256(secret) is stored).

Roles: ``admin`` (global: creates venues and tokens, acts as chair everywhere), ``chair``
(read, write, run jobs, publish within its venue) and ``viewer`` (read-only within its venue;
sees the live assignment and what it needs, nothing of a chair's work in progress: see
:mod:`reviewer_recommender.services.visibility`); ``reviewer`` and ``area_chair`` tokens
speak for one person and are let through only by :data:`Person` (their own view), refused
by every other dependency of a venue.

A token may expire (``expires_at``) and can be revoked; either ends it for good. Listings show
a token's ``prefix`` (the first characters of its secret, not enough to use it) so people can
tell their tokens apart without the secret.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from api.dependencies import DatabaseDep, SessionDep
from api.ids import VenueIdPath
from reviewer_recommender.services.principals import (
    Principal,
    authenticate,
    check_person_access,
    check_venue_access,
    require_admin,
)


def current_principal(request: Request, session: SessionDep) -> Principal:
    """The caller of this request (401 without a valid token)."""
    return authenticate(session, request.headers.get("authorization", ""))


CurrentPrincipal = Annotated[Principal, Depends(current_principal)]


def venue_reader(
    venue_id: VenueIdPath,
    principal: CurrentPrincipal,
    session: SessionDep,
) -> Principal:
    """Dependency: the caller may read ``venue_id`` (403 otherwise; 404 if it does not exist)."""
    return check_venue_access(session, venue_id, principal)


def venue_reader_brief(venue_id: VenueIdPath, request: Request, database: DatabaseDep) -> Principal:
    """Dependency: as :func:`venue_reader`, checked in a session of its own that ends at
    once, for the ``async`` routes that wait (long polls): the route then holds no database
    connection while it waits."""
    with database.session() as session:
        principal = authenticate(session, request.headers.get("authorization", ""))
        return check_venue_access(session, venue_id, principal)


def venue_writer(
    venue_id: VenueIdPath,
    principal: CurrentPrincipal,
    session: SessionDep,
) -> Principal:
    """Dependency: the caller is a chair of ``venue_id`` or an admin."""
    return check_venue_access(
        session,
        venue_id,
        principal,
        principal.can_write,
        f"role {principal.role!r} may not change venue {venue_id!r}",
    )


def venue_chair_reader(
    venue_id: VenueIdPath,
    principal: CurrentPrincipal,
    session: SessionDep,
) -> Principal:
    """Dependency: the caller may read the venue's chair-only resources (bids, conflicts,
    stored demand and loads): a chair of ``venue_id`` or an admin."""
    return check_venue_access(
        session,
        venue_id,
        principal,
        principal.sees_drafts,
        f"role {principal.role!r} does not see this resource of venue {venue_id!r} (chairs only)",
    )


def venue_person(
    venue_id: VenueIdPath,
    principal: CurrentPrincipal,
    session: SessionDep,
) -> Principal:
    """Dependency: the caller is a person token (reviewer, area_chair) of ``venue_id``
    whose person is still in its pool (403 otherwise): the ``/me`` routes."""
    return check_person_access(session, venue_id, principal)


def venue_member(
    venue_id: VenueIdPath,
    principal: CurrentPrincipal,
    session: SessionDep,
) -> Principal:
    """Dependency: a person token of ``venue_id``, or any caller who may read it."""
    if principal.is_person:
        return check_person_access(session, venue_id, principal)
    return check_venue_access(session, venue_id, principal)


def admin_only(principal: CurrentPrincipal) -> Principal:
    return require_admin(principal)


Reader = Annotated[Principal, Depends(venue_reader)]
BriefReader = Annotated[Principal, Depends(venue_reader_brief)]
Writer = Annotated[Principal, Depends(venue_writer)]
ChairReader = Annotated[Principal, Depends(venue_chair_reader)]
Admin = Annotated[Principal, Depends(admin_only)]
Person = Annotated[Principal, Depends(venue_person)]
Member = Annotated[Principal, Depends(venue_member)]
