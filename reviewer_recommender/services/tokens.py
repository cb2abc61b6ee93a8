"""API tokens: ``Authorization: Bearer <secret>``; only sha256(secret) is stored.

Roles: ``admin`` (global: creates venues and tokens, acts as chair everywhere), ``chair``
(read, write, run jobs, publish within its venue) and ``viewer`` (read-only within its venue;
sees the live assignment and what it needs, nothing of a chair's work in progress: see
:mod:`reviewer_recommender.services.visibility`), and the person roles ``reviewer`` and
``area_chair``: a token for one person of the venue (``person_id``, a person of the role's
pool), which reads and changes only what is that person's (``/venues/{v}/me...``,
:mod:`reviewer_recommender.services.persons`) and is refused every other route of the
venue. Admins create every kind of token; a chair creates person tokens of their venue.

A token may expire (``expires_at``) and can be revoked; either ends it for good. Listings show
a token's ``prefix`` (the first characters of its secret, not enough to use it) so people can
tell their tokens apart without the secret.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import overload

from sqlalchemy import select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import (
    Forbidden,
    InvalidRequest,
    NotFound,
    StateConflict,
    Unauthenticated,
    not_found,
)
from reviewer_recommender.services.ids import refuse_venue_lookalike, venue_id_problem
from reviewer_recommender.services.pools import PERSON_ROLES, ROLE_POOLS, in_pool
from reviewer_recommender.settings import Settings
from reviewer_recommender.storage.db import Database, migrate
from reviewer_recommender.storage.models import ApiToken, ReviewerRow, Venue, utcnow
from reviewer_recommender.storage.repository import Paged, audit

ROLES = ("admin", "chair", "viewer", "reviewer", "area_chair")
TOKEN_PREFIX = "rec_"
# characters of the secret shown in listings: "rec_" + 8 of its 43 random characters
PREFIX_LENGTH = len(TOKEN_PREFIX) + 8
MAX_TOKEN_DAYS = 3650


class TokenError(ValueError):
    """A token request that cannot be honoured; the message says why in words."""


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


def expiry(
    *, expires_at: datetime | None = None, expires_in_days: float | None = None
) -> datetime | None:
    """The expiry time from either form (not both); must lie in the future and at most
    MAX_TOKEN_DAYS ahead. Naive datetimes are read as UTC."""
    if expires_at is not None and expires_in_days is not None:
        raise TokenError("give an expiry time or a number of days, not both")
    now = utcnow()
    if expires_in_days is not None:
        if not 0 < expires_in_days <= MAX_TOKEN_DAYS:
            raise TokenError(
                f"expires_in_days must be above 0 and at most {MAX_TOKEN_DAYS}, "
                f"not {expires_in_days}"
            )
        return now + timedelta(days=expires_in_days)
    moment = aware(expires_at)
    if moment is None:
        return None
    if moment <= now:
        raise TokenError(f"expiry {moment.isoformat()} is not in the future")
    if moment > now + timedelta(days=MAX_TOKEN_DAYS):
        raise TokenError(f"expiry {moment.isoformat()} is more than {MAX_TOKEN_DAYS} days ahead")
    return moment


def _session(database: Database | Session) -> tuple[Session, bool]:
    if isinstance(database, Database):
        return database.session(), True
    return database, False


def create_token(
    database: Database | Session,
    *,
    name: str,
    role: str,
    venue_id: str | None = None,
    create_venue: bool = False,
    expires_at: datetime | None = None,
    created_by: str = "",
    person_id: str | None = None,
) -> str:
    """Create a token and return its secret (shown once; only its hash is stored).

    ``role`` is ``admin`` (``venue_id`` must be None), ``chair``/``viewer`` (``venue_id``
    required) or ``reviewer``/``area_chair`` (``venue_id`` and ``person_id`` required: a
    person of the venue in the role's pool). An unknown venue is refused unless
    ``create_venue`` (the CLI's bootstrap of a fresh database). Raises :class:`TokenError`
    naming the problem; nothing is written then. Commits when given a Database; with a
    Session the caller's transaction is committed too.
    """
    if role not in ROLES:
        raise TokenError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    if not name.strip() or len(name) > 200:
        raise TokenError("a token needs a name of 1 to 200 characters")
    if role == "admin" and venue_id is not None:
        raise TokenError("an admin token is global; give no venue")
    if role != "admin":
        if venue_id is None or venue_id == "":
            raise TokenError(f"a {role} token needs a venue (--venue VENUE_ID)")
        problem = venue_id_problem(venue_id)
        if problem is not None:
            raise TokenError(f"venue id {problem}")
    if role in PERSON_ROLES and not person_id:
        raise TokenError(f"a {role} token speaks for one person: give --person PERSON_ID")
    if role not in PERSON_ROLES and person_id is not None:
        raise TokenError(
            f"a {role} token speaks for no person; --person is for the roles "
            f"{', '.join(PERSON_ROLES)}"
        )
    expires_at = expiry(expires_at=expires_at)
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    session, owned = _session(database)
    try:
        if venue_id is not None and session.get(Venue, venue_id) is None:
            if not create_venue:
                raise TokenError(
                    f"venue {venue_id!r} does not exist; check the id, or create it "
                    "(--create-venue on the command line, POST /venues in the API)"
                )
            try:
                refuse_venue_lookalike(session, venue_id)
            except StateConflict as conflict:
                raise TokenError(str(conflict.detail)) from conflict
            session.add(Venue(id=venue_id, name=venue_id))
            session.flush()
        if person_id is not None and venue_id is not None:
            check_person(session, venue_id, role, person_id)
        session.add(
            ApiToken(
                token_hash=hash_secret(secret),
                prefix=secret[:PREFIX_LENGTH],
                name=name,
                role=role,
                venue_id=venue_id,
                expires_at=expires_at,
                created_by=created_by,
                person_id=person_id,
            )
        )
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        if owned:
            session.close()
    return secret


def check_person(session: Session, venue_id: str, role: str, person_id: str) -> None:
    """:class:`TokenError` unless ``person_id`` is a person of the venue in the pool of
    ``role``."""
    pool = ROLE_POOLS[role]
    if session.get(ReviewerRow, (venue_id, person_id)) is None:
        raise TokenError(f"person {person_id!r} is not a person of venue {venue_id!r}")
    if not in_pool(session, venue_id, pool, person_id):
        raise TokenError(
            f"person {person_id!r} is not in pool {pool} of venue {venue_id!r}, which a "
            f"{role} token needs (upload them with ?pool={pool})"
        )


def token_state(token: ApiToken, now: datetime | None = None) -> str:
    """``active``, ``revoked`` or ``expired``."""
    if token.revoked:
        return "revoked"
    expires_at = aware(token.expires_at)
    if expires_at is not None and expires_at <= (now or utcnow()):
        return "expired"
    return "active"


def list_tokens(
    session: Session,
    *,
    venue_id: str | None = None,
    name: str | None = None,
    prefix: str | None = None,
    include_ended: bool = True,
    roles: tuple[str, ...] | None = None,
) -> list[ApiToken]:
    """Tokens (newest first), optionally of one venue, with a name, of some roles, or
    whose prefix starts with ``prefix``; ``include_ended=False`` leaves out revoked and
    expired ones."""
    query = select(ApiToken).order_by(ApiToken.id.desc())
    if venue_id is not None:
        query = query.where(ApiToken.venue_id == venue_id)
    if roles is not None:
        query = query.where(ApiToken.role.in_(roles))
    if name is not None:
        query = query.where(ApiToken.name == name)
    if prefix:
        query = query.where(ApiToken.prefix.startswith(prefix, autoescape=True))
    tokens = list(session.scalars(query))
    if not include_ended:
        now = utcnow()
        tokens = [t for t in tokens if token_state(t, now) == "active"]
    return tokens


def find_tokens(
    session: Session, *, token_id: int | None = None, prefix: str | None = None
) -> list[ApiToken]:
    """Tokens with this id, or whose prefix starts with ``prefix`` (at least 8 characters,
    so a typo cannot match half the table)."""
    if token_id is not None:
        token = session.get(ApiToken, token_id)
        return [token] if token is not None else []
    if prefix is None or len(prefix) < 8:
        raise TokenError("name a token by its id or by at least 8 characters of its prefix")
    return list_tokens(session, prefix=prefix)


def revoke_token(session: Session, token: ApiToken, *, by: str) -> bool:
    """Revoke ``token`` (in the caller's transaction). False if it was already revoked."""
    if token.revoked:
        return False
    token.revoked = True
    token.revoked_at = utcnow()
    token.revoked_by = by
    return True


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


def open_database(settings: Settings | None = None) -> Database:
    """The configured database (settings from the environment by default), schema at head."""
    settings = settings or Settings.from_env()
    database = Database(settings.database_url)
    migrate(database.engine)
    return database


def create_token_cli(
    *,
    role: str,
    venue: str | None = None,
    name: str = "cli",
    create_venue: bool = False,
    expires_at: datetime | None = None,
    expires_in_days: float | None = None,
    settings: Settings | None = None,
    person_id: str | None = None,
) -> str:
    """Bootstrap for ``recommender create-token``: open the configured database, bring its
    schema up to date, create the token and return its secret. Raises TokenError (a
    ValueError) for a bad role/venue/expiry/person or an unknown venue without
    ``create_venue``."""
    when = expiry(expires_at=expires_at, expires_in_days=expires_in_days)
    database = open_database(settings)
    try:
        return create_token(
            database,
            name=name,
            role=role,
            venue_id=venue,
            create_venue=create_venue,
            expires_at=when,
            created_by="command line",
            person_id=person_id,
        )
    finally:
        database.dispose()


def list_tokens_cli(
    *, venue: str | None = None, include_ended: bool = True, settings: Settings | None = None
) -> list[dict[str, object]]:
    """``recommender list-tokens``: the tokens as plain dicts (never their secrets)."""
    database = open_database(settings)
    try:
        with database.session() as session:
            now = utcnow()
            return [
                {
                    "id": t.id,
                    "prefix": t.prefix or "(none)",
                    "name": t.name,
                    "role": t.role,
                    "venue_id": t.venue_id or "",
                    "person_id": t.person_id or "",
                    "state": token_state(t, now),
                    "created_at": aware(t.created_at),
                    "expires_at": aware(t.expires_at),
                }
                for t in list_tokens(session, venue_id=venue, include_ended=include_ended)
            ]
    finally:
        database.dispose()


def revoke_token_cli(
    *, token_id: int | None = None, prefix: str | None = None, settings: Settings | None = None
) -> list[int]:
    """``recommender revoke-token``: revoke the token with this id or prefix; returns the ids
    revoked. Raises TokenError if nothing matches, or a prefix matches several tokens."""
    database = open_database(settings)
    try:
        with database.session() as session:
            tokens = find_tokens(session, token_id=token_id, prefix=prefix)
            if not tokens:
                raise TokenError(
                    f"no token with id {token_id}"
                    if token_id is not None
                    else f"no token whose prefix starts with {prefix!r}"
                )
            if len(tokens) > 1:
                raise TokenError(
                    f"prefix {prefix!r} matches {len(tokens)} tokens "
                    f"(ids {', '.join(str(t.id) for t in tokens)}); give more of it or the id"
                )
            revoked = []
            for token in tokens:
                if revoke_token(session, token, by="command line"):
                    revoked.append(token.id)
                    audit(
                        session,
                        token.venue_id,
                        "command line",
                        "token.revoke",
                        token_id=token.id,
                        name=token.name,
                        prefix=token.prefix,
                    )
            session.commit()
            return revoked
    finally:
        database.dispose()
