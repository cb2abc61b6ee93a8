"""``recommender conflicts``: conflicts of interest from profiles, as an OpenReview
constraints CSV."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from reviewer_recommender.cli.common import add_conflict_options, conflict_params, writing


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "conflicts",
        help="conflicts of interest as an OpenReview constraints CSV",
        description="Detect conflicts of interest (the reviewer is an author; a recent "
        "co-author; same institution; same email domain, public mail providers excepted) and "
        "write them as constraints: paper_id,reviewer_id,value,reason with value -1. "
        "`recommender assign --conflicts FILE` reads the file back; so does OpenReview's "
        "matcher, which reads the first three columns (use --format openreview for its "
        "header-less three-column form).",
    )
    add_conflicts_options(parser)
    parser.set_defaults(handler=run)


def add_conflicts_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--archives",
        "--reviewers",
        dest="archives",
        type=Path,
        required=True,
        help="reviewer profiles: OpenReview archives folder, .zip, reviewers.csv or .json",
    )
    parser.add_argument(
        "--publications",
        type=Path,
        default=None,
        help="publications.csv when --archives is a reviewers.csv",
    )
    parser.add_argument(
        "--submissions",
        type=Path,
        required=True,
        help="submissions with authors (names, and emails, profile ids, affiliations when known)",
    )
    parser.add_argument("--output", type=Path, required=True, help="constraints CSV to write")
    parser.add_argument(
        "--format",
        choices=["csv", "openreview"],
        default="csv",
        help="csv: with a header and a reason column (default); openreview: no header, "
        "paper_id,reviewer_id,-1 only, exactly what `python -m matcher --constraints` reads",
    )
    add_conflict_options(parser)


def run(args: argparse.Namespace) -> int:
    from reviewer_recommender.services.conflicts import conflict_constraints, detect_conflicts
    from reviewer_recommender.services.exports import csv_text, write_files
    from reviewer_recommender.services.files import read_corpus

    params = conflict_params(args)
    corpus = read_corpus(args.archives, args.submissions, args.publications)
    detected = detect_conflicts(corpus.reviewers, corpus.submissions, params)
    constraints = conflict_constraints(detected)
    if args.format == "openreview":
        text = csv_text(constraints[["paper_id", "reviewer_id", "value"]], header=False)
    else:
        text = csv_text(constraints)
    with writing(args.output):
        write_files({args.output: text})
    reasons = detected["reason"].value_counts().to_dict() if len(detected) else {}
    listing = ", ".join(f"{n} {reason}" for reason, n in reasons.items()) or "none"
    window = (
        "any year"
        if params.coauthor_window_years is None
        else f"{params.coauthor_window_years} years"
    )
    print(
        f"{len(constraints)} conflicting pairs among {len(corpus.submissions)} papers x "
        f"{len(corpus.reviewers)} reviewers (reasons: {listing}; co-author window {window}) "
        f"-> {args.output}"
    )
    return 0
