"""API tokens: creating, listing, finding and revoking them; only sha256(secret) is stored.

Roles (``admin``, ``chair``, ``viewer``, and the person roles ``reviewer`` and
``area_chair`` whose token speaks for one person of a venue's pool): what each may do is
:mod:`reviewer_recommender.services.principals`. Admins create every kind of token; a chair
creates person tokens of their venue (through
:mod:`reviewer_recommender.services.token_admin`, the HTTP API's use cases). The command
line's bootstrap (``recommender create-token``, ``list-tokens``, ``revoke-token``) is here.

A token may expire (``expires_at``) and can be revoked; either ends it for good. Listings show
a token's ``prefix`` (the first characters of its secret, not enough to use it) so people can
tell their tokens apart without the secret.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import StateConflict
from reviewer_recommender.services.ids import refuse_venue_lookalike, venue_id_problem
from reviewer_recommender.services.pools import PERSON_ROLES, ROLE_POOLS, in_pool
from reviewer_recommender.services.principals import aware, hash_secret, token_state
from reviewer_recommender.settings import Settings
from reviewer_recommender.storage.db import Database, migrate
from reviewer_recommender.storage.models import ApiToken, ReviewerRow, Venue, utcnow
from reviewer_recommender.storage.repository import audit

ROLES = ("admin", "chair", "viewer", "reviewer", "area_chair")
TOKEN_PREFIX = "rec_"
# characters of the secret shown in listings: "rec_" + 8 of its 43 random characters
PREFIX_LENGTH = len(TOKEN_PREFIX) + 8
MAX_TOKEN_DAYS = 3650


class TokenError(ValueError):
    """A token request that cannot be honoured; the message says why in words."""


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
