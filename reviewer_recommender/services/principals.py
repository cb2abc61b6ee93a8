"""Who is calling: an API token's secret checked (:func:`authenticate`), the
:class:`Principal` it names, and what that principal may reach.

A request carries ``Authorization: Bearer <secret>``; only sha256(secret) is stored
(:func:`hash_secret`), and a revoked or expired token is refused (:func:`token_state`).
Roles: ``admin`` (global: creates venues and tokens, acts as chair everywhere), ``chair``
(read, write, run jobs, publish within its venue) and ``viewer`` (read-only within its venue;
sees the live assignment and what it needs, nothing of a chair's work in progress: see
:mod:`reviewer_recommender.services.visibility`), and the person roles ``reviewer`` and
``area_chair``: a token for one person of the venue (``person_id``, a person of the role's
pool), which reads and changes only what is that person's (``/venues/{v}/me...``,
:mod:`reviewer_recommender.services.persons`, :func:`check_person_access`) and is refused
every other route of the venue (:func:`check_venue_access`).

Tokens are created, listed and revoked in :mod:`reviewer_recommender.services.tokens` and
:mod:`reviewer_recommender.services.token_admin`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import overload

from sqlalchemy import select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import Forbidden, NotFound, Unauthenticated
from reviewer_recommender.services.pools import PERSON_ROLES, ROLE_POOLS, in_pool
from reviewer_recommender.storage.models import ApiToken, Venue, utcnow


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


@overload
def aware(moment: datetime) -> datetime: ...
@overload
def aware(moment: None) -> None: ...
def aware(moment: datetime | None) -> datetime | None:
    """``moment`` with a time zone (SQLite returns naive UTC datetimes)."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def token_state(token: ApiToken, now: datetime | None = None) -> str:
    """``active``, ``revoked`` or ``expired``."""
    if token.revoked:
        return "revoked"
    expires_at = aware(token.expires_at)
    if expires_at is not None and expires_at <= (now or utcnow()):
        return "expired"
    return "active"


@dataclass(frozen=True)
class Principal:
    """Who is calling: the token's name, role and venue (None for a global admin)."""

    name: str
    role: str
    venue_id: str | None
    token_id: int | None = None
    expires_at: datetime | None = None
    person_id: str | None = None

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    @property
    def is_person(self) -> bool:
        """A reviewer or area chair token: it sees only its person's own view."""
        return self.role in PERSON_ROLES

    @property
    def pool(self) -> str | None:
        """The pool a person token speaks in (None for the other roles)."""
        return ROLE_POOLS.get(self.role)

    def can_read(self, venue_id: str) -> bool:
        """May read the venue's resources (not a person token: those read only their own
        view)."""
        return not self.is_person and (self.is_admin or self.venue_id == venue_id)

    def can_write(self, venue_id: str) -> bool:
        return self.is_admin or (self.venue_id == venue_id and self.role == "chair")

    def sees_drafts(self, venue_id: str) -> bool:
        """Chairs' work in progress: drafts, superseded runs, jobs, edits, bids, conflicts
        and the full audit log (see :mod:`reviewer_recommender.services.visibility`)."""
        return self.can_write(venue_id)


def authenticate(session: Session, authorization: str) -> Principal:
    """The caller of an ``Authorization: Bearer <secret>`` header; :class:`Unauthenticated`
    when the header is missing or malformed, or the token unknown, revoked or expired."""
    scheme, _, secret = authorization.partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        raise Unauthenticated(None, "missing API token: send 'Authorization: Bearer <token>'")
    token = session.scalar(
        select(ApiToken).where(ApiToken.token_hash == hash_secret(secret.strip()))
    )
    state = "unknown" if token is None else token_state(token)
    if token is None or state != "active":
        raise Unauthenticated(
            None,
            "unknown API token"
            if token is None
            else f"this API token is {state}: ask an admin for a new one",
        )
    return Principal(
        name=token.name,
        role=token.role,
        venue_id=token.venue_id,
        token_id=token.id,
        expires_at=aware(token.expires_at),
        person_id=token.person_id,
    )


def check_venue_access(
    session: Session,
    venue_id: str,
    principal: Principal,
    allowed: Callable[[str], bool] | None = None,
    refusal: str = "",
) -> Principal:
    """``principal`` when it may read ``venue_id`` and, if given, ``allowed(venue_id)`` holds
    (:class:`Forbidden` with ``refusal`` otherwise); :class:`NotFound` if the venue does not
    exist. A person token is refused every venue resource (it has its own view)."""
    if principal.is_person and principal.venue_id == venue_id:
        raise Forbidden(
            None,
            f"a {principal.role} token sees only its own view of venue {venue_id!r}: "
            f"GET /venues/{venue_id}/me",
        )
    if not principal.can_read(venue_id):
        raise Forbidden(None, f"this token has no access to venue {venue_id!r}")
    if allowed is not None and not allowed(venue_id):
        raise Forbidden(None, refusal)
    if session.get(Venue, venue_id) is None:
        raise NotFound(None, f"venue {venue_id!r} not found")
    return principal


def check_person_access(session: Session, venue_id: str, principal: Principal) -> Principal:
    """``principal`` when it is a person token of ``venue_id`` whose person is still in its
    role's pool; :class:`Forbidden` otherwise (the same refusal for another venue whether
    or not it exists)."""
    if not principal.is_person:
        raise Forbidden(
            None,
            "only a reviewer or area_chair token has its own view of a venue; role "
            f"{principal.role!r} reads the venue's resources",
        )
    if principal.venue_id != venue_id:
        raise Forbidden(None, f"this token has no access to venue {venue_id!r}")
    pool = principal.pool
    if (
        pool is None
        or principal.person_id is None
        or not in_pool(session, venue_id, pool, principal.person_id)
    ):
        raise Forbidden(
            None,
            f"this token's person is no longer in pool {pool} of venue {venue_id!r}; ask "
            "the chairs",
        )
    return principal


def require_admin(principal: Principal) -> Principal:
    if not principal.is_admin:
        raise Forbidden(None, "only a global admin token may do this")
    return principal
