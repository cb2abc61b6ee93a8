"""``recommender score``: affinity of every (paper, reviewer) pair, written as a scores CSV
with its configuration beside it."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from reviewer_recommender.cli.common import (
    CommandError,
    add_affinity_options,
    add_conflict_options,
    affinity_config,
    build_params,
    check_bid_weight,
    conflict_params,
    default_help,
    say,
    writing,
)


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "score",
        help="affinity of every (paper, reviewer) pair",
        description="Affinity of every (paper, reviewer) pair, written as "
        "paper_id,reviewer_id,score; the full configuration (scoring parameters, inputs "
        "with their SHA-256, bids, run options) goes to <stem>.config.json beside it.",
    )
    add_score_options(parser)
    parser.set_defaults(handler=run)


def add_score_options(parser: argparse.ArgumentParser) -> None:
    from reviewer_recommender.services.params import ScoreParams

    parser.add_argument(
        "--archives",
        type=Path,
        required=True,
        help="reviewer profiles: OpenReview archives folder, .zip, .csv or .json",
    )
    parser.add_argument(
        "--publications",
        type=Path,
        default=None,
        help="publications.csv when --archives is a reviewers.csv",
    )
    parser.add_argument(
        "--submissions", type=Path, required=True, help="submissions.json / .jsonl / .csv"
    )
    parser.add_argument("--output", type=Path, required=True, help="scores CSV to write")
    parser.add_argument(
        "--bids",
        type=Path,
        default=None,
        help="bids CSV paper_id,reviewer_id,bid folded into the score: score + W x bid, "
        "with Very High 1, High 0.5, Neutral 0, Low -0.5, Very Low -1 (or the number given); "
        "Not Willing and Conflict pairs are left out of the scores, so that no assignment "
        "made from them can use those pairs",
    )
    parser.add_argument(
        "--bid-weight",
        type=float,
        default=None,
        metavar="W",
        help=default_help(ScoreParams, "bid_weight", "weight W of a bid"),
    )
    parser.add_argument(
        "--explain",
        nargs=2,
        metavar=("PAPER_ID", "REVIEWER_ID"),
        default=None,
        help="also print the evidence behind one pair's score",
    )
    parser.add_argument(
        "--top-k",
        type=int,
        default=None,
        metavar="N",
        help="write only each paper's top N reviewers and each reviewer's top N papers "
        "(union; pairs a Not Willing or Conflict bid excludes take no place); default: "
        "every pair",
    )
    parser.add_argument(
        "--conflicts-output",
        type=Path,
        default=None,
        metavar="FILE",
        help="also detect conflicts of interest and write them as a constraints CSV, as "
        "`recommender conflicts` does (they do not change the scores)",
    )
    add_conflict_options(parser)
    parser.add_argument(
        "--engine",
        choices=["local", "dask"],
        default=None,
        help="local: this process (default); dask: paper blocks as Dask tasks (blockwise scoring)",
    )
    parser.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="existing Dask scheduler, e.g. tcp://host:8786 (default with --engine dask: an "
        "embedded local cluster of 2 worker processes)",
    )
    add_affinity_options(parser)


def run(args: argparse.Namespace) -> int:
    from reviewer_recommender.services.files import file_digest, read_corpus
    from reviewer_recommender.services.params import ScoreParams
    from reviewer_recommender.services.problem import Rows
    from reviewer_recommender.services.scoring import check_explain, score, write_scores

    started = time.perf_counter()
    if args.scheduler is not None and args.engine != "dask":
        raise CommandError("--scheduler needs --engine dask")
    params = build_params(
        ScoreParams,
        {
            "bid_weight": args.bid_weight,
            "top_k": args.top_k,
            "engine": args.engine,
            "scheduler": args.scheduler,
        },
    )
    check_bid_weight(args)
    check_conflict_flags(args)
    detection = conflict_params(args) if args.conflicts_output is not None else None
    scoring, options = affinity_config(args)
    corpus = read_corpus(args.archives, args.submissions, args.publications)
    if args.explain:
        check_explain(corpus, *args.explain)
    bids = None
    if args.bids is not None:
        from recommender.io import read_bids

        if not args.bids.exists():
            raise CommandError(f"{args.bids}: no such file or directory")
        bids = Rows(read_bids(args.bids, with_lines=True), str(args.bids))
    result = score(
        corpus,
        scoring.replace(bid_weight=params.bid_weight),
        options=options,
        bids=bids,
        conflicts=detection,
        top_k=params.top_k,
        engine=params.engine,
        scheduler=params.scheduler,
    )
    for warning in result.warnings:
        say(f"warning: {warning}")
    provenance: dict[str, Any] = {}
    for name in ("archives", "publications", "submissions", "bids"):
        path = getattr(args, name)
        if path is not None:
            provenance[name] = {"path": str(path), "sha256": file_digest(path)}
    with writing(args.output):
        write_scores(result, args.output, params, provenance, conflicts_path=args.conflicts_output)
    elapsed = time.perf_counter() - started
    removed = (
        f", {result.excluded_pairs} Not Willing pairs left out" if result.excluded_pairs else ""
    )
    print(
        f"scored {len(result.affinity.paper_ids)} papers x {len(result.affinity.reviewer_ids)} "
        f"reviewers ({scoring.method}, {params.engine}) in {elapsed:.1f} s{removed} -> "
        f"{args.output}"
    )
    if args.conflicts_output is not None:
        print(f"{len(result.conflict_constraints())} conflicting pairs -> {args.conflicts_output}")
    if args.explain:
        explanation = result.model.explain(*args.explain)
        if bids is not None:
            explanation = _with_bid(
                explanation, bids, scoring.replace(bid_weight=params.bid_weight)
            )
        print(explanation.describe())
        print(json.dumps(explanation.to_dict(), indent=2))
    return 0


def _with_bid(explanation: Any, bids: Any, scoring: Any) -> Any:
    """The explanation with the pair's bid folded in, as the written score has it."""
    from recommender.bids import parse_bid

    frame = bids.frame
    paper = frame["paper_id"].astype(str).str.strip() == explanation.paper_id
    reviewer = frame["reviewer_id"].astype(str).str.strip().str.lstrip("~") == (
        explanation.reviewer_id
    )
    rows = frame[paper & reviewer]
    if rows.empty:
        return explanation
    last = rows.iloc[-1]
    value, excluding = parse_bid(last["label"] if "label" in rows.columns else last["bid"])
    if excluding:
        return explanation
    if "label" in rows.columns and "bid" in rows.columns:
        value = float(last["bid"])  # as recommender.bids.apply_bids reads it
    return explanation.with_bid(value, scoring.bid_weight)


def check_conflict_flags(args: argparse.Namespace) -> None:
    """The conflict-detection flags need ``--conflicts-output`` to apply to, which must not
    be another output."""
    if args.conflicts_output is not None:
        from reviewer_recommender.services.exports import beside

        others = (args.output, beside(args.output, "config.json"))
        if any(args.conflicts_output.resolve() == other.resolve() for other in others):
            raise CommandError(
                f"--conflicts-output {args.conflicts_output}: is also the scores output "
                "or its config; name another file"
            )
        return
    for flag, value in (
        ("--coauthor-window", args.coauthor_window),
        ("--reference-year", args.reference_year),
    ):
        if value is not None:
            raise CommandError(f"{flag}: applies to --conflicts-output, which is not given")
