"""Tokens managed through the HTTP API: issuing, listing and revoking them with the
caller's rights.

Admins manage every token; a chair of a venue manages its person tokens
(:func:`may_manage_token`). Listings (:class:`TokenInfo`) never show a secret, only its
prefix; a token just issued (:class:`IssuedToken`) carries its secret this once. Every
creation and revocation is audited. The tokens themselves (creation rules, expiry, the
store) are :mod:`reviewer_recommender.services.tokens`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import Forbidden, InvalidRequest, not_found
from reviewer_recommender.services.pools import PERSON_ROLES
from reviewer_recommender.services.principals import (
    Principal,
    aware,
    check_venue_access,
    hash_secret,
    token_state,
)
from reviewer_recommender.services.tokens import (
    TokenError,
    create_token,
    expiry,
    list_tokens,
    revoke_token,
)
from reviewer_recommender.storage.models import ApiToken, Venue
from reviewer_recommender.storage.repository import Paged, audit


@dataclass(frozen=True)
class IssuedToken:
    """A token just created, with its secret (shown this once)."""

    id: int
    name: str
    role: str
    venue_id: str | None
    prefix: str
    expires_at: datetime | None
    token: str
    person_id: str | None = None


@dataclass(frozen=True)
class TokenInfo:
    """A token as listed: never its secret, only its prefix."""

    id: int
    name: str
    role: str
    venue_id: str | None
    prefix: str
    state: str
    created_at: datetime
    created_by: str
    expires_at: datetime | None
    revoked_at: datetime | None
    revoked_by: str
    person_id: str | None = None


def token_info(token: ApiToken) -> TokenInfo:
    return TokenInfo(
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
        person_id=token.person_id,
    )


def may_manage_token(principal: Principal, venue_id: str, role: str) -> bool:
    """Admins manage every token of a venue; a chair of the venue its person tokens."""
    return principal.is_admin or (principal.can_write(venue_id) and role in PERSON_ROLES)


def issue_venue_token(
    session: Session,
    venue_id: str,
    *,
    name: str,
    role: str,
    expires_at: datetime | None,
    expires_in_days: float | None,
    actor: str,
    person_id: str | None = None,
    principal: Principal | None = None,
) -> IssuedToken:
    """A token of an existing venue (audited, committed): chair or viewer (admins), or a
    person's (``person_id``; admins and the venue's chairs). 403 when ``principal`` may not
    create it, 404 for an unknown venue, 422 naming what :func:`create_token` or
    :func:`expiry` refuse (an unknown person, one not in the role's pool)."""
    if principal is not None:
        check_venue_access(session, venue_id, principal)
        if not may_manage_token(principal, venue_id, role):
            raise Forbidden(
                None,
                "only a global admin token may create chair or viewer tokens"
                if principal.can_write(venue_id)
                else f"role {principal.role!r} may not create tokens of venue {venue_id!r}",
            )
    if session.get(Venue, venue_id) is None:
        raise not_found("venue", venue_id)
    try:
        when = expiry(expires_at=expires_at, expires_in_days=expires_in_days)
        detail = {} if person_id is None else {"person_id": person_id}
        audit(session, venue_id, actor, "token.create", name=name, role=role, **detail)
        secret = create_token(
            session,
            name=name,
            role=role,
            venue_id=venue_id,
            expires_at=when,
            created_by=actor,
            person_id=person_id,
        )
    except TokenError as error:
        raise InvalidRequest(None, str(error)) from error
    token = session.scalar(select(ApiToken).where(ApiToken.token_hash == hash_secret(secret)))
    assert token is not None
    return IssuedToken(
        id=token.id,
        name=token.name,
        role=token.role,
        venue_id=venue_id,
        prefix=token.prefix,
        expires_at=aware(token.expires_at),
        token=secret,
        person_id=token.person_id,
    )


def token_page(
    session: Session,
    *,
    venue_id: str | None,
    name: str | None,
    prefix: str | None,
    active_only: bool,
    limit: int,
    offset: int,
) -> Paged[TokenInfo]:
    """Tokens by venue, name and prefix, newest first (:func:`list_tokens`), one page."""
    tokens = list_tokens(
        session, venue_id=venue_id, name=name, prefix=prefix, include_ended=not active_only
    )
    found = Paged.sliced(tokens, limit, offset)
    return Paged([token_info(t) for t in found.items], found.total, limit, offset)


def venue_token_page(
    session: Session, venue_id: str, principal: Principal, *, limit: int, offset: int
) -> Paged[TokenInfo]:
    """The venue's tokens the caller manages (:func:`may_manage_token`: admins all, chairs
    the person tokens), newest first, one page."""
    roles = None if principal.is_admin else PERSON_ROLES
    tokens = list_tokens(session, venue_id=venue_id, roles=roles)
    found = Paged.sliced(tokens, limit, offset)
    return Paged([token_info(t) for t in found.items], found.total, limit, offset)


def revoke_venue_token(
    session: Session, venue_id: str, token_id: int, principal: Principal
) -> TokenInfo:
    """Revoke a token of the venue the caller manages (:func:`may_manage_token`); 404 for
    any other id, so a chair learns nothing of tokens they do not manage."""
    token = session.get(ApiToken, token_id)
    if (
        token is None
        or token.venue_id != venue_id
        or not may_manage_token(principal, venue_id, token.role)
    ):
        raise not_found("token", token_id)
    return revoke_token_by_id(session, token_id, actor=principal.name)


def revoke_token_by_id(session: Session, token_id: int, *, actor: str) -> TokenInfo:
    """Revoke a token for good (audited, committed); revoking a revoked one changes
    nothing. 404 for an unknown id."""
    token = session.get(ApiToken, token_id)
    if token is None:
        raise not_found("token", token_id)
    if revoke_token(session, token, by=actor):
        audit(
            session,
            token.venue_id,
            actor,
            "token.revoke",
            token_id=token.id,
            name=token.name,
            prefix=token.prefix,
        )
    session.commit()
    return token_info(token)
