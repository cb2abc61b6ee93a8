"""``recommender evaluate``: loss on an expert-rated gold folder."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from reviewer_recommender.cli.common import CommandError, run_options


def add_parser(commands: Any) -> None:
    parser = commands.add_parser("evaluate", help="loss on an expert-rated gold folder")
    add_evaluate_options(parser)
    parser.set_defaults(handler=run)


def add_evaluate_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gold", type=Path, required=True)
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        help="NAME=JSON or a JSON file of scoring parameters (ScoringParams fields); repeatable",
    )
    parser.add_argument("--bootstrap", type=int, default=1000, help="rater resamples for the CI")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--draws", nargs="*", default=None, help="draw folders to use (default: every d_*)"
    )
    parser.add_argument("--cache-dir", type=Path, default=None, help="embedding cache")
    parser.add_argument(
        "--cv",
        action="store_true",
        help="rater-level 2-fold cross-validation of choosing among the configurations "
        "(list the simplest first); without --config: the candidates behind the default",
    )
    parser.add_argument(
        "--cv-splits", type=int, default=100, help="random rater splits (x2 directions)"
    )


def run(args: argparse.Namespace) -> int:
    from recommender.affinity import ScoringParams
    from recommender.crossval import format_cross_validation
    from recommender.evaluate import (
        CV_CANDIDATES,
        cross_validate_report,
        evaluate_gold,
        format_report,
    )

    if not args.gold.is_dir():
        raise CommandError(f"--gold {args.gold}: not a directory")
    if args.cv_splits < 1:
        raise CommandError(f"--cv-splits: must be >= 1, got {args.cv_splits}")
    options = run_options(args)
    configs: dict[str, Any] = {}
    for spec in args.config or []:
        name, _, body = spec.partition("=")
        if not body:
            path = Path(spec)
            if not path.is_file():
                raise CommandError(f"--config {spec}: expected NAME=JSON or a JSON file")
            name, body = path.stem, path.read_text(encoding="utf-8")
        try:
            values = json.loads(body)
        except json.JSONDecodeError as error:
            raise CommandError(f"--config {name}: invalid JSON ({error})") from None
        if not isinstance(values, dict):
            raise CommandError(f"--config {name}: expected a JSON object of ScoringParams fields")
        try:
            configs[name] = ScoringParams.from_dict(values)
        except (TypeError, ValueError) as error:
            raise CommandError(f"--config {name}: {error}") from None
    if not configs and args.cv:
        configs = {name: ScoringParams.from_dict(values) for name, values in CV_CANDIDATES.items()}
    if not configs:
        configs["default"] = ScoringParams()
    for name, params in configs.items():
        if params.uses_embedding:
            try:
                options.model_path(params.model)
            except ValueError as error:
                raise CommandError(f"configuration {name!r}: {error}") from None
    report = evaluate_gold(
        args.gold,
        list(configs.values()),
        options=options,
        labels=list(configs),
        draws=args.draws,
        bootstrap_samples=args.bootstrap,
        seed=args.seed,
        progress=lambda fraction, stage: print(
            f"[{fraction:4.0%}] {stage}", file=sys.stderr, flush=True
        ),
    )
    print(format_report(report))
    if args.cv:
        try:
            cv = cross_validate_report(report, n_splits=args.cv_splits, seed=args.seed)
        except ValueError as error:
            raise CommandError(f"--cv: {error}") from None
        print()
        print(format_cross_validation(cv))
    return 0
