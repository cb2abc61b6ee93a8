"""``recommender assign``: the optimal assignment from a scores CSV and the chair's files."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from reviewer_recommender.cli.common import (
    CommandError,
    add_conflict_options,
    add_custom_max_option,
    add_load_options,
    build_params,
    check_bid_weight,
    conflict_params,
    default_help,
    limit_values,
    say,
    writing,
)

GROUP_BY = {"affiliation": "affiliation", "email-domain": "email_domain"}


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "assign",
        help="optimal assignment from a scores CSV",
        description="Optimal assignment from a scores CSV (the candidate pairs) and the "
        "chair's constraints. Writes the assignment CSV and, beside it, <stem>.summary.json "
        "(objective, bound, gap, solver, seed, per-paper and per-reviewer statistics, "
        "parameters). Exit codes: 0 done, 1 bad input or option, 2 no assignment exists.",
    )
    add_assign_options(parser)
    parser.set_defaults(handler=run)


def add_assign_options(parser: argparse.ArgumentParser) -> None:
    from reviewer_recommender.services.params import AssignParams

    def helped(field: str, text: str) -> str:
        return default_help(AssignParams, field, text)

    files = parser.add_argument_group("inputs and output")
    files.add_argument(
        "--scores",
        type=Path,
        required=True,
        help="CSV paper_id,reviewer_id,score (header optional, OpenReview column names "
        "accepted): the candidate pairs; a pair without a score is never assigned",
    )
    files.add_argument("--output", type=Path, required=True, help="assignment CSV to write")
    files.add_argument(
        "--conflicts",
        "--constraints",
        dest="constraints",
        type=Path,
        default=None,
        help="OpenReview constraints CSV paper_id,reviewer_id,value: -1 conflict (never "
        "assigned), 1 pin (always assigned), 0 no effect",
    )
    files.add_argument(
        "--bids",
        type=Path,
        default=None,
        help="bids CSV paper_id,reviewer_id,bid: Not Willing and Conflict pairs are never "
        "assigned; the others add W x bid to the score (Very High 1 ... Very Low -1)",
    )
    files.add_argument(
        "--bid-weight",
        type=float,
        default=None,
        metavar="W",
        help=helped("bid_weight", "weight W of a bid; 0 only excludes Not Willing pairs"),
    )
    files.add_argument(
        "--demand",
        type=Path,
        default=None,
        help="CSV paper_id,demand overriding --reviewers-per-paper per paper",
    )
    add_custom_max_option(files)
    files.add_argument(
        "--reviewers",
        type=Path,
        default=None,
        help="reviewer profiles (reviewers.csv, .json, archives) giving affiliation, email and "
        "attributes for --max-per-institution, --require-attribute and --detect-conflicts",
    )
    files.add_argument(
        "--publications",
        type=Path,
        default=None,
        help="publications.csv when --reviewers is a reviewers.csv (for --detect-conflicts)",
    )
    files.add_argument(
        "--submissions",
        type=Path,
        default=None,
        help="submissions with authors (for --detect-conflicts)",
    )
    files.add_argument(
        "--detect-conflicts",
        action="store_true",
        help="also never assign conflicts of interest detected from --reviewers and "
        "--submissions (authors, recent co-authors, same institution or email domain)",
    )
    add_conflict_options(files)
    files.add_argument(
        "--strict",
        action="store_true",
        help="treat warnings (rows naming ids that are not in the scores) as errors",
    )

    add_load_options(parser, AssignParams)

    solve = parser.add_argument_group("solver")
    solve.add_argument(
        "--solver",
        choices=["auto", "flow", "ilp", "pulp", "randomized", "perturbed"],
        default=None,
        help=helped(
            "solver",
            "auto: exact min-cost flow, the ILP when a side constraint needs it, perturbed "
            "maximization with --perturbation, the randomized solver with --probability-cap "
            "alone",
        ),
    )
    solve.add_argument(
        "--ilp-backend",
        choices=["highs", "cbc"],
        default=None,
        help=helped("ilp_backend", "MIP solver behind the ILP"),
    )
    solve.add_argument(
        "--time-limit", type=float, default=None, metavar="SECONDS", help="limit of the solve"
    )
    solve.add_argument("--seed", type=int, default=None, help="random seed (recorded)")
    solve.add_argument(
        "--alternates",
        type=int,
        default=None,
        metavar="N",
        help="also write the top-N unassigned eligible reviewers per paper to "
        "<stem>.alternates.csv",
    )

    side = parser.add_argument_group("side constraints (solved with the integer program)")
    side.add_argument(
        "--fairness",
        type=float,
        nargs="?",
        const=1.0,
        default=None,
        metavar="KEEP",
        help="maximize the minimum paper score first, then total affinity; KEEP in [0, 1] is "
        "the share of the optimal minimum kept (default 1)",
    )
    side.add_argument(
        "--max-per-institution",
        type=int,
        default=None,
        metavar="N",
        help="at most N reviewers of one institution per paper (needs --reviewers)",
    )
    side.add_argument(
        "--group-by",
        choices=list(GROUP_BY),
        default=None,
        help="what defines an institution for --max-per-institution (default: affiliation)",
    )
    side.add_argument(
        "--require-attribute",
        default=None,
        metavar="NAME=VALUE",
        help="at least one reviewer per paper whose attribute NAME equals VALUE (case and "
        "spacing ignored), e.g. seniority=senior (needs --reviewers)",
    )
    side.add_argument(
        "--min-score", type=float, default=None, help="never assign a pair scoring below this"
    )
    side.add_argument(
        "--probability-cap",
        type=float,
        default=None,
        metavar="Q",
        help="randomized assignment: no pair is assigned with probability above Q (record --seed)",
    )
    side.add_argument(
        "--perturbation",
        type=float,
        default=None,
        metavar="BETA",
        help="randomized assignment by perturbed maximization (NeurIPS 2024): maximize "
        "sum s (x - BETA x^2) over fractional assignments, then sample one with these "
        "marginals; BETA in (0, 1] trades expected quality (at least 1 - BETA of the optimum "
        "with non-negative scores) for randomness; combine with --probability-cap to cap "
        "every pair too (record --seed)",
    )
    side.add_argument(
        "--report",
        type=Path,
        default=None,
        metavar="FILE",
        help="with --perturbation or --probability-cap: write how random the assignment is "
        "to FILE (JSON): quality_ratio, max_probability, avg_max_probability, l2_norm, "
        "entropy, support_size, and the same figures of the deterministic optimum under "
        "'deterministic'",
    )


def assign_params(args: argparse.Namespace) -> Any:
    """:class:`reviewer_recommender.services.params.AssignParams` from the flags given."""
    from reviewer_recommender.services.params import AssignParams, RequiredAttribute

    required = None
    if args.require_attribute is not None:
        try:
            required = RequiredAttribute.parse(args.require_attribute)
        except ValueError as error:
            raise CommandError(f"--require-attribute: {error}") from None
    return build_params(
        AssignParams,
        {
            **limit_values(args),
            "solver": args.solver,
            "ilp_backend": args.ilp_backend,
            "time_limit": args.time_limit,
            "seed": args.seed,
            "min_score": args.min_score,
            "max_per_affiliation": args.max_per_institution,
            "institution_key": GROUP_BY[args.group_by] if args.group_by else None,
            "fairness_keep": args.fairness,
            "require_attribute": required,
            "probability_cap": args.probability_cap,
            "perturbation": args.perturbation,
            "alternates": args.alternates,
        },
    )


def run(args: argparse.Namespace) -> int:
    from reviewer_recommender.services.assignment import assign
    from reviewer_recommender.services.exports import beside, csv_text, json_text, write_files
    from reviewer_recommender.services.files import AssignFiles, load_assign_inputs

    started = time.perf_counter()
    params = assign_params(args)
    if args.group_by is not None and params.max_per_affiliation is None:
        raise CommandError("--group-by: applies to --max-per-institution, which is not given")
    check_bid_weight(args)
    if args.report is not None and params.perturbation is None and params.probability_cap is None:
        raise CommandError(
            "--report: describes a randomized assignment; add --perturbation BETA or "
            "--probability-cap Q (a deterministic assignment has nothing random to report)"
        )
    needs_profiles = params.needs_profiles() or args.detect_conflicts
    if params.needs_profiles() and args.reviewers is None:
        given = [
            name
            for name, value in (
                ("--max-per-institution", args.max_per_institution),
                ("--require-attribute", args.require_attribute),
            )
            if value is not None
        ]
        raise CommandError(
            f"{' and '.join(given)} need(s) --reviewers FILE: the reviewers' profiles with "
            "affiliation, email and attribute columns"
        )
    if args.reviewers is not None and not needs_profiles:
        raise CommandError(
            "--reviewers: used only by --max-per-institution, --require-attribute and "
            "--detect-conflicts, none of which is given"
        )
    if args.submissions is not None and not args.detect_conflicts:
        raise CommandError("--submissions: used only by --detect-conflicts, which is not given")
    files = AssignFiles(
        scores=args.scores,
        constraints=args.constraints,
        bids=args.bids,
        demand=args.demand,
        custom_max_load=args.custom_max_papers,
        reviewers=args.reviewers,
        publications=args.publications,
        submissions=args.submissions,
        detect_conflicts=args.detect_conflicts,
    )
    _warn_if_bids_twice(args)
    inputs = load_assign_inputs(files, params, conflict_params(args), strict=args.strict)
    read_at = time.perf_counter()
    result = assign(inputs, params)
    for warning in result.warnings:
        say(f"warning: {warning}")
    result.timings = {"read": read_at - started, **result.timings}
    result.timings["total"] = time.perf_counter() - started
    report = {**result.report(), "files": files.paths()}
    outputs: dict[Path, Any] = {
        args.output: csv_text(result.pairs()),
        beside(args.output, "summary.json"): json_text(report),
    }
    if result.alternates is not None:
        outputs[beside(args.output, "alternates.csv")] = csv_text(result.alternates)
    if args.report is not None:
        outputs[args.report] = json_text(randomness_file(result.summary))
    with writing(args.output):
        written = write_files(outputs)
    print_summary(result.summary)
    for path in written:
        print(f"-> {path}")
    return 0


def _warn_if_bids_twice(args: argparse.Namespace) -> None:
    """Scores written by ``score --bids`` already hold the bid preferences: folding bids
    again with the default weight would count them twice. The config beside the scores
    tells; an explicit ``--bid-weight`` is taken as deliberate."""
    import json

    from reviewer_recommender.services.exports import beside

    config = beside(args.scores, "config.json")
    if args.bids is None or args.bid_weight is not None or not config.is_file():
        return
    try:
        recorded = json.loads(config.read_text(encoding="utf-8"))
        source = recorded["inputs"]["bids"]["path"]
    except (OSError, ValueError, KeyError, TypeError):
        return
    say(
        f"warning: {args.scores} already includes the bids of {source} (score --bids); "
        "--bids folds them again, counting them twice: add --bid-weight 0 to only keep Not "
        "Willing pairs out"
    )


def randomness_file(summary: dict[str, Any]) -> dict[str, Any]:
    """What ``--report`` writes: the randomness metrics at the top level (see
    :mod:`matching.randomness` for their definitions), the deterministic optimum's under
    ``deterministic``, and what produced them."""
    randomness = dict(summary.get("randomness") or {})
    solver = summary.get("solver_parameters") or {}
    return {
        **randomness,
        "sample_objective": summary.get("objective"),
        "solver": summary.get("solver"),
        "seed": summary.get("seed"),
        "perturbation": solver.get("beta"),
        "probability_cap": solver.get("q"),
        "definitions": "see matching/randomness.py: x = each pair's probability; "
        "quality_ratio = sum(s x) / deterministic optimum; avg_max_probability = mean over "
        "papers of the largest x; l2_norm = sqrt(sum x^2); entropy = -sum x ln x (nats); "
        "support_size = pairs with x > 0",
    }


def print_summary(summary: dict[str, Any]) -> None:
    def number(value: Any, spec: str) -> str:
        return "n/a" if value is None else format(value, spec)

    print(
        f"assigned {summary['pairs_assigned']} pairs for {summary['papers']} papers and "
        f"{summary['reviewers']} reviewers with solver {summary['solver']}\n"
        f"affinity of assigned pairs: mean {number(summary['mean_score'], '.4f')}, "
        f"min {number(summary['min_score'], '.4f')}\n"
        f"reviewer load range: {summary['load_min']}..{summary['load_max']}\n"
        f"objective {number(summary['objective'], '.4f')}, upper bound "
        f"{number(summary['upper_bound'], '.4f')}, gap {number(summary['gap'], '.2%')}"
    )
    randomness = summary.get("randomness")
    if randomness:
        print(
            f"randomness: expected objective {number(randomness['expected_objective'], '.4f')}"
            f" = {number(randomness['quality_ratio'], '.2%')} of the deterministic optimum "
            f"{number(randomness['deterministic_optimum'], '.4f')}; max pair probability "
            f"{number(randomness['max_probability'], '.3f')}, average per paper "
            f"{number(randomness['avg_max_probability'], '.3f')}; support "
            f"{randomness['support_size']} pairs (deterministic: "
            f"{randomness['deterministic']['support_size']}); entropy "
            f"{number(randomness['entropy'], '.1f')}"
        )
