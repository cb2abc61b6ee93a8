"""``recommender serve`` and ``recommender create-token``: the faces that start or administer
the HTTP service (the only commands that import ``api``)."""

from __future__ import annotations

import argparse
from typing import Any


def add_parsers(commands: Any) -> None:
    serve = commands.add_parser("serve", help="start the HTTP service")
    add_serve_options(serve)
    serve.set_defaults(handler=run_serve)
    token = commands.add_parser("create-token", help="create an API token (printed once)")
    add_token_options(token)
    token.set_defaults(handler=run_create_token)


def add_serve_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)


def add_token_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--role", choices=["admin", "chair", "viewer"], default="admin")
    parser.add_argument("--venue", default=None, help="venue id the token is scoped to")
    parser.add_argument("--name", default="cli")


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from api.app import create_app
    from api.settings import Settings

    uvicorn.run(create_app(Settings.from_env()), host=args.host, port=args.port)
    return 0


def run_create_token(args: argparse.Namespace) -> int:
    from api.auth import create_token_cli
    from cli.common import CommandError

    try:
        secret = create_token_cli(role=args.role, venue=args.venue, name=args.name)
    except ValueError as error:
        raise CommandError(f"create-token: {error}") from None
    print(secret)
    return 0
