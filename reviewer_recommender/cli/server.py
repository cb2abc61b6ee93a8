"""``recommender serve`` and the token commands (``create-token``, ``list-tokens``,
``revoke-token``): the faces that start or administer the HTTP service (the only commands
that import ``api``)."""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any


def add_parsers(commands: Any) -> None:
    serve = commands.add_parser("serve", help="start the HTTP service")
    add_serve_options(serve)
    serve.set_defaults(handler=run_serve)

    token = commands.add_parser("create-token", help="create an API token (printed once)")
    add_token_options(token)
    token.set_defaults(handler=run_create_token)

    tokens = commands.add_parser(
        "list-tokens", help="list API tokens by name and prefix (never their secrets)"
    )
    tokens.add_argument("--venue", default=None, help="only the tokens of this venue")
    tokens.add_argument(
        "--active", action="store_true", help="leave out revoked and expired tokens"
    )
    tokens.set_defaults(handler=run_list_tokens)

    revoke = commands.add_parser("revoke-token", help="revoke an API token for good")
    which = revoke.add_mutually_exclusive_group(required=True)
    which.add_argument("--id", type=int, default=None, help="the token's id (list-tokens)")
    which.add_argument("--prefix", default=None, help="the token's prefix (at least 8 characters)")
    revoke.set_defaults(handler=run_revoke_token)


def add_serve_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)


def add_token_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--role",
        choices=["admin", "chair", "viewer", "reviewer", "area_chair"],
        default="admin",
        help="admin (global), chair or viewer of a venue, or a person's own token: reviewer "
        "or area_chair (with --person)",
    )
    parser.add_argument(
        "--venue", default=None, help="venue id the token is scoped to (every role but admin)"
    )
    parser.add_argument(
        "--person",
        default=None,
        metavar="PERSON_ID",
        help="reviewer and area_chair tokens: the person of the venue (in the role's pool) "
        "the token speaks for",
    )
    parser.add_argument(
        "--create-venue",
        action="store_true",
        help="create the venue if it does not exist (otherwise an unknown venue is an error)",
    )
    parser.add_argument("--name", default="cli", help="who or what the token is for")
    expiry = parser.add_mutually_exclusive_group()
    expiry.add_argument(
        "--expires-in-days", type=float, default=None, metavar="DAYS", help="token expiry"
    )
    expiry.add_argument(
        "--expires-at",
        default=None,
        metavar="ISO_TIME",
        help="token expiry as an ISO 8601 time, e.g. 2027-01-31T23:59:00+00:00 (UTC if no zone)",
    )


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from api.app import create_app
    from reviewer_recommender.settings import Settings

    uvicorn.run(create_app(Settings.from_env()), host=args.host, port=args.port)
    return 0


def run_create_token(args: argparse.Namespace) -> int:
    from reviewer_recommender.cli.common import CommandError
    from reviewer_recommender.services.ids import id_problem, reviewer_id_form
    from reviewer_recommender.services.tokens import TokenError, create_token_cli

    person = None if args.person is None else reviewer_id_form(args.person)
    problem = id_problem(person) if person is not None else None
    if problem is not None:
        raise CommandError(f"create-token: --person {problem}")
    expires_at = None
    if args.expires_at is not None:
        try:
            expires_at = datetime.fromisoformat(args.expires_at)
        except ValueError:
            raise CommandError(
                f"create-token: --expires-at: {args.expires_at!r} is not an ISO 8601 time "
                "(e.g. 2027-01-31T23:59:00+00:00)"
            ) from None
    try:
        secret = create_token_cli(
            role=args.role,
            venue=args.venue,
            name=args.name,
            create_venue=args.create_venue,
            expires_at=expires_at,
            expires_in_days=args.expires_in_days,
            person_id=person,
        )
    except TokenError as error:
        raise CommandError(f"create-token: {error}") from None
    print(secret)
    return 0


def run_list_tokens(args: argparse.Namespace) -> int:
    from reviewer_recommender.cli.common import CommandError
    from reviewer_recommender.services.ids import venue_id_problem
    from reviewer_recommender.services.tokens import TokenError, list_tokens_cli

    problem = venue_id_problem(args.venue) if args.venue is not None else None
    if problem is not None:
        raise CommandError(f"list-tokens: --venue {problem}")
    try:
        rows = list_tokens_cli(venue=args.venue, include_ended=not args.active)
    except TokenError as error:
        raise CommandError(f"list-tokens: {error}") from None
    columns = [
        "id",
        "prefix",
        "name",
        "role",
        "venue_id",
        "state",
        "created_at",
        "expires_at",
        "person_id",
    ]
    print("\t".join(columns))
    for row in rows:
        print("\t".join(_cell(row[column]) for column in columns))
    return 0


def _cell(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat(timespec="seconds")
    return "" if value is None else str(value)


def run_revoke_token(args: argparse.Namespace) -> int:
    from reviewer_recommender.cli.common import CommandError
    from reviewer_recommender.services.ids import MAX_ROW_ID, text_problem
    from reviewer_recommender.services.tokens import TokenError, revoke_token_cli

    if args.id is not None and not 1 <= args.id <= MAX_ROW_ID:
        raise CommandError(f"revoke-token: no token with id {args.id}")
    problem = text_problem(args.prefix) if args.prefix is not None else None
    if problem is not None:
        raise CommandError(f"revoke-token: --prefix {problem}")
    try:
        revoked = revoke_token_cli(token_id=args.id, prefix=args.prefix)
    except TokenError as error:
        raise CommandError(f"revoke-token: {error}") from None
    which = f"id {args.id}" if args.id is not None else f"prefix {args.prefix!r}"
    print(f"revoked token {revoked[0]}" if revoked else f"token {which} was already revoked")
    return 0
