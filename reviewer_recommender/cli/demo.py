"""``recommender demo``: the whole pipeline on the bundled sample data."""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from reviewer_recommender.cli.assign import print_summary
from reviewer_recommender.cli.common import (
    CommandError,
    add_affinity_options,
    add_conflict_options,
    affinity_config,
    build_params,
    conflict_params,
    default_help,
    writing,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLE_REVIEWERS = REPO_ROOT / "data" / "demo-reviewers" / "archives"
SAMPLE_SUBMISSIONS = REPO_ROOT / "data" / "iclr2026" / "submissions.json"


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "demo",
        help="run the whole pipeline on the bundled sample data",
        description="Score the bundled sample (76 ICLR 2026 submissions x 27 reviewers), "
        "detect conflicts, solve a balanced assignment and write every output.",
    )
    add_demo_options(parser)
    parser.set_defaults(handler=run)


def add_demo_options(parser: argparse.ArgumentParser) -> None:
    from reviewer_recommender.services.params import AssignParams

    parser.add_argument("--output-dir", type=Path, default=Path("demo-output"))
    parser.add_argument(
        "--reviewers-per-paper",
        type=int,
        default=None,
        help=default_help(AssignParams, "reviewers_per_paper", "reviewers each paper gets"),
    )
    parser.add_argument(
        "--detect-conflicts",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="never assign detected conflicts of interest (default: on)",
    )
    add_conflict_options(parser)
    add_affinity_options(parser)


def run(args: argparse.Namespace) -> int:
    from recommender.io import ScoreTable
    from reviewer_recommender.services.assignment import assign, json_safe
    from reviewer_recommender.services.exports import csv_text, json_text, write_files
    from reviewer_recommender.services.files import read_corpus
    from reviewer_recommender.services.params import AssignParams
    from reviewer_recommender.services.problem import AssignInputs, Rows
    from reviewer_recommender.services.scoring import SCORE_FORMAT, score

    started = time.perf_counter()
    corpus = read_corpus(SAMPLE_REVIEWERS, SAMPLE_SUBMISSIONS)
    scoring, options = affinity_config(args)
    detection = conflict_params(args) if args.detect_conflicts else None
    scored = score(corpus, scoring, options=options, conflicts=detection)
    scored_at = time.perf_counter()
    affinity = scored.affinity
    assert affinity.scores is not None
    n_papers, n_reviewers = affinity.scores.shape
    table = ScoreTable.from_columns(
        np.repeat(np.asarray(affinity.paper_ids, dtype=object), n_reviewers),
        np.tile(np.asarray(affinity.reviewer_ids, dtype=object), n_papers),
        affinity.scores.astype(np.float64).ravel(),
        source="demo scores",
    )
    conflicts = scored.conflicts
    demand = build_params(
        AssignParams, {"reviewers_per_paper": args.reviewers_per_paper}
    ).reviewers_per_paper
    if n_reviewers == 0:
        raise CommandError("the sample has no reviewers")
    params = build_params(
        AssignParams,
        {
            "reviewers_per_paper": demand,
            "max_load": math.ceil(n_papers * demand / n_reviewers),
            "min_load": (n_papers * demand) // n_reviewers,
        },
    )
    inputs = AssignInputs(
        scores=table,
        conflicts=Rows(conflicts, "detected conflicts") if conflicts is not None else None,
    )
    result = assign(inputs, params)
    finished = time.perf_counter()

    output = args.output_dir
    constraints = scored.conflict_constraints() if conflicts is not None else None
    summary = {
        **result.report(),
        "affinity": json_safe(scored.model.params.to_dict()),
        "conflicts": 0 if constraints is None else len(constraints),
        "score_seconds": round(scored_at - started, 2),
        "total_seconds": round(finished - started, 2),
    }
    files: dict[Path, Any] = {
        output / "scores.csv": csv_text_scores(scored, SCORE_FORMAT),
        output / "assignments.csv": csv_text(result.pairs()),
        output / "paper_stats.csv": csv_text(result.assignment.paper_stats()),
        output / "reviewer_stats.csv": csv_text(result.assignment.reviewer_stats()),
        output / "summary.json": json_text(summary),
    }
    if constraints is not None:
        files[output / "conflicts.csv"] = csv_text(constraints)
    with writing(output):
        write_files(files)
    print(
        f"demo: {len(corpus.submissions)} ICLR 2026 submissions x {len(corpus.reviewers)} reviewers"
    )
    print(
        f"affinity: {scoring.method} ({scoring.aggregation}), {summary['score_seconds']} s; "
        f"conflicts found: {summary['conflicts']}"
    )
    print_summary(result.summary)
    print(f"outputs written to {output.resolve()}")
    return 0


def csv_text_scores(scored: Any, float_format: str) -> str:
    from recommender.io.safe_csv import write_frame_csv

    return "paper_id,reviewer_id,score\n" + "".join(
        write_frame_csv(frame, None, index=False, header=False, float_format=float_format)
        for frame in scored.frames()
    )
