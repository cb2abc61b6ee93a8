"""``recommender reassign``: repair a live assignment after reviewers withdraw or pairs must go,
keeping every other live pair."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from reviewer_recommender.cli.common import (
    CommandError,
    add_custom_max_option,
    add_load_options,
    build_params,
    check_bid_weight,
    default_help,
    limit_values,
    say,
    writing,
)


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "reassign",
        help="emergency re-assignment: replace withdrawn reviewers, keep everything else",
        description="Emergency re-assignment of a live assignment. Every live pair whose "
        "reviewer did not withdraw, that is not removed and that is not a conflict is kept; "
        "only the slots they vacate are filled again, at maximum affinity within the loads, "
        "conflicts, bids and pins, so the pairs added are exactly the vacated slots. When "
        "some paper cannot be filled that way (its remaining candidates are all at their max "
        "load), the fewest live pairs are moved, then affinity is maximized (both exact). "
        "Writes the new assignment (paper_id,reviewer_id,score,pinned,added), "
        "<stem>.changes.csv (every pair added or removed, with the reason) and "
        "<stem>.summary.json, and prints the pairs added. Exit codes: 0 done, 1 bad input, "
        "2 no assignment exists (the diagnosis on stderr).",
    )
    add_reassign_options(parser)
    parser.set_defaults(handler=run)


def add_reassign_options(parser: argparse.ArgumentParser) -> None:
    from reviewer_recommender.services.params import ReassignParams

    def helped(field: str, text: str) -> str:
        return default_help(ReassignParams, field, text)

    files = parser.add_argument_group("inputs and output")
    files.add_argument(
        "--live",
        type=Path,
        required=True,
        help="the live assignment CSV paper_id,reviewer_id[,score,...] (e.g. what `assign` wrote)",
    )
    files.add_argument(
        "--scores",
        type=Path,
        required=True,
        help="scores CSV paper_id,reviewer_id,score: the candidate pairs for the vacated slots",
    )
    files.add_argument(
        "--withdraw",
        type=Path,
        default=None,
        help="reviewers who dropped out, one id per line: their pairs go, they get no new ones",
    )
    files.add_argument(
        "--remove",
        type=Path,
        default=None,
        help="CSV paper_id,reviewer_id of live pairs that must go (never added back)",
    )
    files.add_argument(
        "--conflicts",
        "--constraints",
        dest="constraints",
        type=Path,
        default=None,
        help="OpenReview constraints CSV paper_id,reviewer_id,value: -1 conflict (a live pair "
        "that is one goes too), 1 pin (kept or added)",
    )
    files.add_argument(
        "--bids",
        type=Path,
        default=None,
        help="bids CSV: Not Willing pairs are never added (a live one goes); the others add "
        "W x bid to the score",
    )
    files.add_argument(
        "--bid-weight",
        type=float,
        default=None,
        metavar="W",
        help=helped("bid_weight", "weight W of a bid"),
    )
    files.add_argument(
        "--demand", type=Path, default=None, help="CSV paper_id,demand overriding -K per paper"
    )
    add_custom_max_option(files)
    files.add_argument(
        "--strict",
        action="store_true",
        help="treat warnings (ids that are in no input, pairs to remove that are not live) as "
        "errors",
    )
    files.add_argument("--output", type=Path, required=True, help="new assignment CSV to write")
    add_load_options(parser, ReassignParams, {"--reviewers-per-paper": "K", "--max-papers": "B"})


def run(args: argparse.Namespace) -> int:
    from reviewer_recommender.services.exports import beside, csv_text, json_text, write_files
    from reviewer_recommender.services.files import ReassignFiles, load_reassign_inputs
    from reviewer_recommender.services.params import ReassignParams
    from reviewer_recommender.services.reassign import reassign

    if args.withdraw is None and args.remove is None:
        raise CommandError(
            "nothing to re-assign: give --withdraw FILE (reviewers who dropped out) and/or "
            "--remove FILE (pairs that must go)"
        )
    check_bid_weight(args)
    params = build_params(ReassignParams, limit_values(args))
    files = ReassignFiles(
        live=args.live,
        scores=args.scores,
        withdraw=args.withdraw,
        remove=args.remove,
        constraints=args.constraints,
        bids=args.bids,
        demand=args.demand,
        custom_max_load=args.custom_max_papers,
    )
    inputs = load_reassign_inputs(files, params, strict=args.strict)
    result = reassign(inputs, params)
    for warning in result.warnings:
        say(f"warning: {warning}")
    summary = {**result.summary, "files": files.paths()}
    outputs: dict[Path, Any] = {
        args.output: csv_text(result.pairs()),
        beside(args.output, "changes.csv"): csv_text(result.changes()),
        beside(args.output, "summary.json"): json_text(summary),
    }
    with writing(args.output):
        written = write_files(outputs)
    print_summary(summary)
    print(csv_text(result.added), end="")
    for path in written:
        print(f"-> {path}")
    return 0


def print_summary(summary: dict[str, Any]) -> None:
    removed = summary["removed_by_reason"]
    reasons = ", ".join(f"{count} {reason}" for reason, count in removed.items() if count)
    print(
        f"kept {summary['kept']} of {summary['live_pairs']} live pairs; removed "
        f"{summary['removed']}{f' ({reasons})' if reasons else ''}; added {summary['added']}\n"
        f"{summary['minimality']}\n"
        f"objective {summary['objective']:.4f}, upper bound {summary['upper_bound']:.4f} "
        f"({summary['bound_refers_to']})\n"
        f"pairs added ({summary['added']}):"
    )
