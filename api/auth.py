"""API tokens: ``Authorization: Bearer <secret>``; only sha256(secret) is stored.

Roles: ``admin`` (global: creates venues, acts as chair everywhere), ``chair`` (read, write,
run jobs, deploy within its venue) and ``viewer`` (read-only within its venue; sees deployed
assignments only).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException, Request, status
from sqlalchemy import select
from sqlalchemy.orm import Session

from api.db import Database, get_session, migrate
from api.models import ApiToken, Venue
from api.settings import Settings

ROLES = ("admin", "chair", "viewer")
TOKEN_PREFIX = "rec_"


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def create_token(
    database: Database | Session, *, name: str, role: str, venue_id: str | None = None
) -> str:
    """Create a token and return its secret (shown once; only its hash is stored).

    ``role`` is ``admin`` (``venue_id`` must be None) or ``chair``/``viewer`` (``venue_id``
    required; the venue is created if it does not exist yet, so the CLI can bootstrap one).
    """
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    if role == "admin" and venue_id is not None:
        raise ValueError("an admin token is global; give no venue")
    if role != "admin" and not venue_id:
        raise ValueError(f"a {role} token needs a venue")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    session = database.session() if isinstance(database, Database) else database
    try:
        if venue_id is not None and session.get(Venue, venue_id) is None:
            session.add(Venue(id=venue_id, name=venue_id))
            session.flush()
        session.add(
            ApiToken(token_hash=hash_secret(secret), name=name, role=role, venue_id=venue_id)
        )
        session.commit()
    finally:
        if isinstance(database, Database):
            session.close()
    return secret


@dataclass(frozen=True)
class Principal:
    """Who is calling: the token's name, role and venue (None for a global admin)."""

    name: str
    role: str
    venue_id: str | None

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def can_read(self, venue_id: str) -> bool:
        return self.is_admin or self.venue_id == venue_id

    def can_write(self, venue_id: str) -> bool:
        return self.is_admin or (self.venue_id == venue_id and self.role == "chair")

    def sees_drafts(self, venue_id: str) -> bool:
        return self.can_write(venue_id)


def current_principal(
    request: Request, session: Annotated[Session, Depends(get_session)]
) -> Principal:
    header = request.headers.get("authorization", "")
    scheme, _, secret = header.partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "missing API token: send 'Authorization: Bearer <token>'",
            headers={"WWW-Authenticate": "Bearer"},
        )
    token = session.scalar(
        select(ApiToken).where(ApiToken.token_hash == hash_secret(secret.strip()))
    )
    if token is None or token.revoked:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "unknown or revoked API token",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return Principal(name=token.name, role=token.role, venue_id=token.venue_id)


CurrentPrincipal = Annotated[Principal, Depends(current_principal)]


def _venue_or_404(session: Session, venue_id: str) -> Venue:
    venue = session.get(Venue, venue_id)
    if venue is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"venue {venue_id!r} not found")
    return venue


def venue_reader(
    venue_id: str, principal: CurrentPrincipal, session: Annotated[Session, Depends(get_session)]
) -> Principal:
    """Dependency: the caller may read ``venue_id`` (403 otherwise; 404 if it does not exist)."""
    if not principal.can_read(venue_id):
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, f"this token has no access to venue {venue_id!r}"
        )
    _venue_or_404(session, venue_id)
    return principal


def venue_writer(
    venue_id: str, principal: CurrentPrincipal, session: Annotated[Session, Depends(get_session)]
) -> Principal:
    """Dependency: the caller is a chair of ``venue_id`` or an admin."""
    if not principal.can_read(venue_id):
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, f"this token has no access to venue {venue_id!r}"
        )
    if not principal.can_write(venue_id):
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, f"role {principal.role!r} may not change venue {venue_id!r}"
        )
    _venue_or_404(session, venue_id)
    return principal


def admin_only(principal: CurrentPrincipal) -> Principal:
    if not principal.is_admin:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "only a global admin token may do this")
    return principal


Reader = Annotated[Principal, Depends(venue_reader)]
Writer = Annotated[Principal, Depends(venue_writer)]
Admin = Annotated[Principal, Depends(admin_only)]


def create_token_cli(
    *, role: str, venue: str | None = None, name: str = "cli", settings: Settings | None = None
) -> str:
    """Bootstrap for ``recommender create-token``: open the configured database (settings
    from the environment by default), bring its schema up to date, create the token and
    return its secret. Raises ValueError for a bad role/venue combination."""
    settings = settings or Settings.from_env()
    database = Database(settings.database_url)
    try:
        migrate(database.engine)
        return create_token(database, name=name, role=role, venue_id=venue)
    finally:
        database.dispose()
