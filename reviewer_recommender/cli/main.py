"""Entry point of the ``recommender`` command line.

Exit codes: 0 done; 1 bad input (file, line and field named) or an option that cannot act;
2 no assignment exists (the diagnosis on stderr) or none was found in the time limit;
3 internal error (a bug: one line on stderr, never a traceback unless
``RECOMMENDER_DEBUG=1``); 130 interrupted.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from reviewer_recommender.cli import assign, conflicts, demo, evaluate, reassign, score, server
from reviewer_recommender.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_NO_ASSIGNMENT,
    CommandError,
    Parser,
    UsageError,
    flag,
    say,
)

# Each command module registers its own subparser; add options there.
COMMANDS: tuple[Callable[[Any], None], ...] = (
    demo.add_parser,
    score.add_parser,
    conflicts.add_parser,
    assign.add_parser,
    reassign.add_parser,
    evaluate.add_parser,
    server.add_parsers,
)


def build_parser() -> Parser:
    parser = Parser(
        prog="recommender",
        description="Reviewer-assignment recommender: affinity scores, conflicts of interest "
        "and optimal assignments. Exit codes: 0 done, 1 bad input or option, 2 no "
        "assignment exists, 3 internal error.",
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=Parser)
    for register in COMMANDS:
        register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        say("interrupted")
        return 130
    except Exception as error:  # the guard: a bug must never show users a traceback
        if os.environ.get("RECOMMENDER_DEBUG"):
            traceback.print_exc()
        detail = " ".join(f"{type(error).__name__}: {error}".split())[:500]
        say(
            f"internal error: {detail} (this is a bug, not your input; please report it, "
            "RECOMMENDER_DEBUG=1 prints the traceback)"
        )
        return EXIT_INTERNAL


def _main(argv: Sequence[str] | None) -> int:
    from matching import Infeasible
    from recommender.corpus import InputError
    from reviewer_recommender.services.errors import NoAssignment, OptionError

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as error:
        say(str(error))
        return EXIT_BAD_INPUT
    except SystemExit as done:  # --help, --version
        return int(done.code or 0)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    try:
        return int(args.handler(args) or 0)
    except InputError as error:
        say(f"error: {error}")
        return EXIT_BAD_INPUT
    except OptionError as error:
        say(f"error: {flag(error.option)}: {error.message}")
        return EXIT_BAD_INPUT
    except CommandError as error:
        say(f"error: {error}")
        return error.exit_code
    except Infeasible as error:
        say(f"infeasible: {error}")
        return EXIT_NO_ASSIGNMENT
    except NoAssignment as error:
        say(f"no assignment: {error}")
        return EXIT_NO_ASSIGNMENT


if __name__ == "__main__":
    sys.exit(main())
