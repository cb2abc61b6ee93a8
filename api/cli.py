"""The ``recommender`` command line: the same pipeline as the HTTP service, from files."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
SAMPLE_REVIEWERS = REPO_ROOT / "data" / "demo-reviewers" / "archives"
SAMPLE_SUBMISSIONS = REPO_ROOT / "data" / "iclr2026" / "submissions.json"


class CommandError(Exception):
    """A failure the user can act on: printed to stderr, exit code 1 (2 for infeasible)."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.exit_code = exit_code


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    from matching import Infeasible
    from recommender.corpus import InputError

    try:
        return int(args.handler(args) or 0)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except Infeasible as error:
        print(f"infeasible: {error}", file=sys.stderr)
        return 2
    except CommandError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="recommender",
        description="Reviewer-assignment recommender: affinity scores and optimal assignments.",
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")

    demo = commands.add_parser("demo", help="run the whole pipeline on the bundled sample data")
    demo.add_argument("--output-dir", type=Path, default=Path("demo-output"))
    demo.add_argument("--reviewers-per-paper", type=int, default=3)
    _add_affinity_options(demo)
    demo.set_defaults(handler=_run_demo)

    score = commands.add_parser("score", help="affinity of every (paper, reviewer) pair")
    score.add_argument(
        "--archives",
        type=Path,
        required=True,
        help="reviewer profiles: OpenReview archives folder, .zip, .csv or .json",
    )
    score.add_argument(
        "--publications",
        type=Path,
        default=None,
        help="publications.csv when --archives is a reviewers.csv",
    )
    score.add_argument(
        "--submissions", type=Path, required=True, help="submissions.json / .jsonl / .csv"
    )
    score.add_argument("--output", type=Path, required=True, help="scores CSV to write")
    score.add_argument(
        "--bids",
        type=Path,
        default=None,
        help="bids CSV paper_id,reviewer_id,bid folded into the score: score + W x bid, "
        "with Very High 1, High 0.5, Neutral 0, Low -0.5, Very Low -1 (or the number given)",
    )
    score.add_argument(
        "--bid-weight",
        type=float,
        default=0.1,
        metavar="W",
        help="weight W of a bid (default 0.1: a tenth of the [0, 1] range of the default "
        "combined score)",
    )
    score.add_argument(
        "--explain",
        nargs=2,
        metavar=("PAPER_ID", "REVIEWER_ID"),
        default=None,
        help="also print the evidence behind one pair's score",
    )
    score.add_argument(
        "--top-k",
        type=int,
        default=None,
        metavar="N",
        help="write only each paper's top N reviewers and each reviewer's top N papers "
        "(union); default: every pair",
    )
    score.add_argument(
        "--engine",
        choices=["local", "dask"],
        default="local",
        help="local: this process; dask: paper blocks as Dask tasks (blockwise scoring)",
    )
    score.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="existing Dask scheduler, e.g. tcp://host:8786 (default with --engine dask: an "
        "embedded local cluster of 2 worker processes)",
    )
    _add_affinity_options(score)
    score.set_defaults(handler=_run_score)

    assign = commands.add_parser("assign", help="optimal assignment from a scores CSV")
    assign.add_argument("--scores", type=Path, required=True)
    assign.add_argument("--reviewers-per-paper", type=int, required=True)
    assign.add_argument("--min-papers", type=int, default=0)
    assign.add_argument("--max-papers", type=int, required=True)
    assign.add_argument(
        "--conflicts",
        type=Path,
        default=None,
        help="constraints CSV paper_id,reviewer_id,value (-1 conflict, 1 forced)",
    )
    assign.add_argument(
        "--custom-max-papers",
        type=Path,
        default=None,
        help="CSV reviewer_id,max overriding --max-papers",
    )
    assign.add_argument("--output", type=Path, required=True)
    assign.add_argument("--solver", default="auto", help="auto, flow, ilp, randomized")
    assign.add_argument("--ilp-backend", default="highs", choices=["highs", "cbc"])
    assign.add_argument("--time-limit", type=float, default=None, help="seconds")
    assign.add_argument("--seed", type=int, default=None)
    assign.add_argument(
        "--alternates",
        type=int,
        default=0,
        help="also write the top-N unassigned eligible reviewers per paper",
    )
    side = assign.add_argument_group("side constraints (solved with the PuLP model)")
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
        "--reviewers",
        type=Path,
        default=None,
        help="reviewer profiles (reviewers.csv, .json, archives) giving affiliation, email and "
        "attributes for --max-per-institution and --require-attribute",
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
        choices=["affiliation", "email-domain"],
        default="affiliation",
        help="what defines an institution for --max-per-institution",
    )
    side.add_argument(
        "--require-attribute",
        default=None,
        metavar="NAME=VALUE",
        help="at least one reviewer per paper whose attribute NAME equals VALUE, e.g. "
        "seniority=senior (needs --reviewers)",
    )
    side.add_argument(
        "--min-score", type=float, default=None, help="never assign a pair scoring below this"
    )
    side.add_argument(
        "--bids",
        type=Path,
        default=None,
        help="bids CSV paper_id,reviewer_id,bid: 'Not Willing' pairs are never assigned and "
        "'Conflict' bids are conflicts",
    )
    side.add_argument(
        "--probability-cap",
        type=float,
        default=None,
        metavar="Q",
        help="randomized assignment: no pair is assigned with probability above Q (record --seed)",
    )
    assign.set_defaults(handler=_run_assign)

    evaluate = commands.add_parser("evaluate", help="loss on an expert-rated gold folder")
    evaluate.add_argument("--gold", type=Path, required=True)
    evaluate.add_argument(
        "--config",
        action="append",
        default=[],
        help="NAME=JSON or a JSON file of an AffinityConfig; repeatable",
    )
    evaluate.add_argument("--bootstrap", type=int, default=1000, help="rater resamples for the CI")
    evaluate.add_argument("--seed", type=int, default=0)
    evaluate.add_argument(
        "--draws", nargs="*", default=None, help="draw folders to use (default: every d_*)"
    )
    evaluate.add_argument("--cache-dir", type=Path, default=None, help="embedding cache")
    evaluate.set_defaults(handler=_run_evaluate)

    serve = commands.add_parser("serve", help="start the HTTP service")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.set_defaults(handler=_run_serve)

    token = commands.add_parser("create-token", help="create an API token (printed once)")
    token.add_argument("--role", choices=["admin", "chair", "viewer"], default="admin")
    token.add_argument("--venue", default=None, help="venue id the token is scoped to")
    token.add_argument("--name", default="cli")
    token.set_defaults(handler=_run_create_token)
    return parser


def _add_affinity_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        type=Path,
        default=None,
        help="local sentence-transformers model directory (default: MiniLM-L6)",
    )
    parser.add_argument("--method", default=None, choices=["tfidf", "embedding", "combined"])
    parser.add_argument("--aggregation", default=None)
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="embedding cache (default $RECOMMENDER_CACHE_DIR or ~/.cache)",
    )
    parser.add_argument(
        "--encoder-backend",
        default=None,
        choices=["auto", "torch", "torch-bf16", "onnx", "onnx-int8"],
        help="sentence encoder backend (default auto: bfloat16 where the CPU has bf16 units, "
        "else float32 torch)",
    )


def _affinity_config(args: argparse.Namespace) -> Any:
    from recommender.affinity import AffinityConfig

    overrides: dict[str, Any] = {}
    if args.method:
        overrides["method"] = args.method
    if args.aggregation:
        overrides["aggregation"] = args.aggregation
    if args.encoder_backend:
        overrides["encoder_backend"] = args.encoder_backend
    if args.model is not None:
        if not args.model.is_dir():
            raise CommandError(f"--model {args.model}: not a directory")
        overrides["model_path"] = str(args.model)
    cache_dir = args.cache_dir or default_cache_dir()
    overrides["cache_dir"] = str(cache_dir)
    base = AffinityConfig()
    try:
        return AffinityConfig.from_dict({**base.to_dict(), **overrides})
    except ValueError as error:
        raise CommandError(str(error)) from None


def default_cache_dir() -> Path:
    configured = os.environ.get("RECOMMENDER_CACHE_DIR")
    if configured:
        return Path(configured)
    return Path.home() / ".cache" / "reviewer-recommender"


def _read_corpus(archives: Path, submissions: Path, publications: Path | None = None) -> Any:
    from recommender.corpus import Corpus
    from recommender.io import read_reviewers, read_submissions

    for path in (archives, submissions):
        if not path.exists():
            raise CommandError(f"{path}: no such file or directory")
    return Corpus(
        reviewers=read_reviewers(archives, publications=publications),
        submissions=read_submissions(submissions),
    )


def _run_score(args: argparse.Namespace) -> int:
    from recommender.affinity import AffinityModel

    started = time.perf_counter()
    if args.scheduler is not None and args.engine != "dask":
        raise CommandError("--scheduler needs --engine dask")
    if args.top_k is not None and args.top_k < 1:
        raise CommandError(f"--top-k must be >= 1, got {args.top_k}")
    config = _affinity_config(args)
    corpus = _read_corpus(args.archives, args.submissions, args.publications)
    model = AffinityModel(config).fit(corpus.reviewers, corpus.submissions)
    if args.engine == "dask":
        from recommender.distributed import dask_model_affinity

        try:
            affinity = dask_model_affinity(model, scheduler_address=args.scheduler)
        except ValueError as error:
            raise CommandError(f"--engine dask: {error}") from None
        except OSError as error:
            raise CommandError(f"--scheduler {args.scheduler}: {error}") from None
    else:
        affinity = model.affinity()
    if args.bids is not None:
        from recommender.bids import apply_bids
        from recommender.io import read_bids

        if not affinity.is_dense:
            raise CommandError(
                "--bids needs the full score matrix, which exceeds the memory bound "
                f"({config.dense_limit_bytes} bytes) for this venue"
            )
        affinity = apply_bids(affinity, read_bids(args.bids), args.bid_weight).affinity
    try:
        affinity.write_csv(args.output, top_k=args.top_k)
    except ValueError as error:
        raise CommandError(f"--top-k: {error}") from None
    elapsed = time.perf_counter() - started
    print(
        f"scored {len(affinity.paper_ids)} papers x {len(affinity.reviewer_ids)} reviewers "
        f"({model.config.method}, {args.engine}) in {elapsed:.1f} s -> {args.output}"
    )
    if args.explain:
        print(json.dumps(model.explain(*args.explain).to_dict(), indent=2))
    return 0


def _run_assign(args: argparse.Namespace) -> int:
    import numpy as np

    import matching
    from matching import AssignmentProblem

    scores = _read_scores(args.scores)
    paper_ids = tuple(dict.fromkeys(scores["paper_id"]))
    reviewer_ids = tuple(dict.fromkeys(scores["reviewer_id"]))
    max_load = np.full(len(reviewer_ids), args.max_papers, dtype=np.int64)
    if args.custom_max_papers is not None:
        from recommender.io import read_custom_max_papers

        custom = read_custom_max_papers(args.custom_max_papers)
        index = {r: i for i, r in enumerate(reviewer_ids)}
        unknown = sorted(set(custom["reviewer_id"]) - index.keys())
        if unknown:
            raise CommandError(
                f"{args.custom_max_papers}: reviewer ids not in {args.scores}: "
                + ", ".join(unknown[:10])
            )
        max_load[[index[r] for r in custom["reviewer_id"]]] = custom["max"].to_numpy()
    min_load = np.minimum(args.min_papers, max_load)
    conflicts = forced = None
    if args.conflicts is not None:
        from recommender.io import read_pair_constraints

        constraints = read_pair_constraints(args.conflicts)
        conflicts = constraints[constraints["value"] == -1][["paper_id", "reviewer_id"]]
        forced = constraints[constraints["value"] == 1][["paper_id", "reviewer_id"]]
    problem = AssignmentProblem.from_pairs(
        scores["paper_id"].to_numpy(),
        scores["reviewer_id"].to_numpy(),
        scores["score"].to_numpy(dtype=np.float64),
        paper_ids=paper_ids,
        reviewer_ids=reviewer_ids,
        demand=args.reviewers_per_paper,
        min_load=min_load,
        max_load=max_load,
        conflicts=conflicts,
        forced=forced,
    )
    problem = _with_assignment_options(problem, args)
    solver = args.solver
    options: dict[str, Any] = {}
    if args.probability_cap is not None:
        if solver not in ("auto", "randomized"):
            raise CommandError(f"--probability-cap needs the randomized solver, not {solver}")
        solver, options["q"] = "randomized", args.probability_cap
    if solver in ("ilp", "pulp"):
        options["backend"] = args.ilp_backend
    try:
        assignment = matching.solve(
            problem, solver=solver, time_limit=args.time_limit, seed=args.seed, **options
        )
    except ValueError as error:
        raise CommandError(str(error)) from None
    _write_csv_atomic(assignment.pairs(), args.output)
    if args.alternates:
        alternates_path = args.output.with_name(args.output.stem + ".alternates.csv")
        _write_csv_atomic(
            matching.alternates(problem, assignment, args.alternates), alternates_path
        )
        print(f"alternates -> {alternates_path}")
    _print_summary(assignment.summary())
    print(f"assignment -> {args.output}")
    return 0


def _with_assignment_options(problem: Any, args: argparse.Namespace) -> Any:
    """Add the side constraints and pair exclusions asked for on the command line."""
    import numpy as np

    from matching.constraints import (
        Fairness,
        MaxPerGroup,
        MinScore,
        RequireAttribute,
        exclude_pairs,
    )

    if args.bids is not None:
        from recommender.io import read_bids

        bids = read_bids(args.bids)
        unwilling = bids[bids["label"].str.casefold().isin(["not willing", "conflict"])]
        unwilling = unwilling[
            unwilling["paper_id"].isin(problem.paper_ids)
            & unwilling["reviewer_id"].isin(problem.reviewer_ids)
        ]
        problem = exclude_pairs(problem, unwilling["paper_id"], unwilling["reviewer_id"])
    constraints: list[Any] = []
    if args.min_score is not None:
        constraints.append(MinScore(args.min_score))
    if args.fairness is not None:
        constraints.append(Fairness(keep=args.fairness))
    if args.max_per_institution is not None or args.require_attribute is not None:
        if args.reviewers is None:
            raise CommandError(
                "--max-per-institution and --require-attribute need --reviewers FILE"
            )
        from recommender.io import read_reviewers

        profiles = {r.id: r for r in read_reviewers(args.reviewers)}
        known = [profiles.get(r) for r in problem.reviewer_ids]
        if args.max_per_institution is not None:
            from recommender.conflicts import email_domain

            def group(reviewer: Any) -> str:
                if reviewer is None:
                    return ""
                if args.group_by == "email-domain":
                    return email_domain(reviewer.email) or ""
                return " ".join(reviewer.affiliation.casefold().split())

            groups = np.array([group(r) for r in known], dtype=object)
            constraints.append(MaxPerGroup(groups, args.max_per_institution))
        if args.require_attribute is not None:
            name, sep, value = args.require_attribute.partition("=")
            if not sep or not name:
                raise CommandError(
                    f"--require-attribute {args.require_attribute!r}: expected NAME=VALUE"
                )
            mask = np.array(
                [r is not None and str(r.attributes.get(name, "")) == value for r in known]
            )
            if not mask.any():
                raise CommandError(
                    f"--require-attribute {args.require_attribute}: no reviewer in "
                    f"{args.reviewers} has {name}={value}"
                )
            constraints.append(RequireAttribute(mask, name=args.require_attribute))
    return problem.with_side_constraints(*constraints) if constraints else problem


def _read_scores(path: Path) -> Any:
    import pandas as pd

    if not path.is_file():
        raise CommandError(f"{path}: no such file")
    try:
        frame = pd.read_csv(path, dtype={"paper_id": str, "reviewer_id": str}, encoding="utf-8")
    except UnicodeDecodeError as error:
        raise CommandError(f"{path}: not UTF-8 ({error.reason} at byte {error.start})") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        raise CommandError(f"{path}: not a CSV file ({error})") from None
    missing = {"paper_id", "reviewer_id", "score"} - set(frame.columns)
    if missing:
        raise CommandError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
    from recommender.io.safe_csv import unescape_series

    frame["paper_id"] = unescape_series(frame["paper_id"])
    frame["reviewer_id"] = unescape_series(frame["reviewer_id"]).str.lstrip("~")
    scores = pd.to_numeric(frame["score"], errors="coerce")
    bad = scores.isna() | ~scores.abs().lt(math.inf)
    if bad.any():
        line = int(bad.to_numpy().argmax()) + 2
        raise CommandError(
            f"{path}:{line} [score]: not a finite number: {frame['score'].iloc[line - 2]!r}"
        )
    frame["score"] = scores
    blank = frame["paper_id"].isna() | frame["reviewer_id"].isna()
    if blank.any():
        line = int(blank.to_numpy().argmax()) + 2
        raise CommandError(f"{path}:{line}: empty paper_id or reviewer_id")
    duplicated = frame.duplicated(["paper_id", "reviewer_id"])
    if duplicated.any():
        line = int(duplicated.to_numpy().argmax()) + 2
        raise CommandError(f"{path}:{line}: duplicate (paper_id, reviewer_id) pair")
    return frame


def _run_demo(args: argparse.Namespace) -> int:
    import numpy as np

    import matching
    from matching import AssignmentProblem
    from recommender.affinity import AffinityModel
    from recommender.conflicts import detect_conflicts

    started = time.perf_counter()
    corpus = _read_corpus(SAMPLE_REVIEWERS, SAMPLE_SUBMISSIONS)
    model = AffinityModel(_affinity_config(args)).fit(corpus.reviewers, corpus.submissions)
    affinity = model.affinity()
    scored = time.perf_counter()
    conflicts = detect_conflicts(corpus.reviewers, corpus.submissions)
    n_papers, n_reviewers = len(affinity.paper_ids), len(affinity.reviewer_ids)
    demand = args.reviewers_per_paper
    max_load = math.ceil(n_papers * demand / n_reviewers)
    min_load = (n_papers * demand) // n_reviewers
    conflict_mask = np.zeros((n_papers, n_reviewers), dtype=bool)
    if len(conflicts):
        paper_index = {p: i for i, p in enumerate(affinity.paper_ids)}
        reviewer_index = {r: i for i, r in enumerate(affinity.reviewer_ids)}
        conflict_mask[
            conflicts["paper_id"].map(paper_index).to_numpy(),
            conflicts["reviewer_id"].map(reviewer_index).to_numpy(),
        ] = True
    problem = AssignmentProblem.from_dense(
        affinity.scores,
        paper_ids=affinity.paper_ids,
        reviewer_ids=affinity.reviewer_ids,
        demand=demand,
        min_load=min_load,
        max_load=max_load,
        conflicts=conflict_mask,
    )
    assignment = matching.solve(problem)
    finished = time.perf_counter()

    output = args.output_dir
    output.mkdir(parents=True, exist_ok=True)
    affinity.write_csv(output / "scores.csv")
    _write_csv_atomic(assignment.pairs(), output / "assignments.csv")
    _write_csv_atomic(assignment.paper_stats(), output / "paper_stats.csv")
    _write_csv_atomic(assignment.reviewer_stats(), output / "reviewer_stats.csv")
    _write_csv_atomic(conflicts, output / "conflicts.csv")
    summary = {
        **assignment.summary(),
        "affinity": model.config.to_dict(),
        "conflicts": len(conflicts),
        "score_seconds": round(scored - started, 2),
        "total_seconds": round(finished - started, 2),
    }
    (output / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    print(
        f"demo: {len(corpus.submissions)} ICLR 2026 submissions x {len(corpus.reviewers)} reviewers"
    )
    print(
        f"affinity: {model.config.method} ({model.config.aggregation}), "
        f"{summary['score_seconds']} s; conflicts found: {len(conflicts)}"
    )
    _print_summary(assignment.summary())
    print(f"outputs written to {output.resolve()}")
    return 0


def _print_summary(summary: dict[str, Any]) -> None:
    print(
        f"assigned {summary['pairs_assigned']} pairs for {summary['papers']} papers and "
        f"{summary['reviewers']} reviewers with solver {summary['solver']}\n"
        f"affinity of assigned pairs: mean {summary['mean_score']:.4f}, "
        f"min {summary['min_score']:.4f}\n"
        f"reviewer load range: {summary['load_min']}..{summary['load_max']}\n"
        f"objective {summary['objective']:.4f}, upper bound {summary['upper_bound']:.4f}, "
        f"gap {summary['gap']:.2%}"
    )


def _write_csv_atomic(frame: Any, path: Path) -> None:
    from recommender.io.safe_csv import write_frame_csv

    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    write_frame_csv(frame, temporary, index=False)
    os.replace(temporary, path)


def _run_evaluate(args: argparse.Namespace) -> int:
    from recommender.affinity import AffinityConfig
    from recommender.evaluate import evaluate_gold, format_report

    if not args.gold.is_dir():
        raise CommandError(f"--gold {args.gold}: not a directory")
    cache = {"cache_dir": str(args.cache_dir or default_cache_dir())}
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
            raise CommandError(f"--config {name}: expected a JSON object of AffinityConfig fields")
        try:
            configs[name] = AffinityConfig.from_dict(
                {**AffinityConfig().to_dict(), **cache, **values}
            )
        except (TypeError, ValueError) as error:
            raise CommandError(f"--config {name}: {error}") from None
    if not configs:
        configs["default"] = AffinityConfig.from_dict({**AffinityConfig().to_dict(), **cache})
    report = evaluate_gold(
        args.gold,
        list(configs.values()),
        labels=list(configs),
        draws=args.draws,
        bootstrap_samples=args.bootstrap,
        seed=args.seed,
        progress=lambda fraction, stage: print(
            f"[{fraction:4.0%}] {stage}", file=sys.stderr, flush=True
        ),
    )
    print(format_report(report))
    return 0


def _run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from api.app import create_app
    from api.settings import Settings

    uvicorn.run(create_app(Settings.from_env()), host=args.host, port=args.port)
    return 0


def _run_create_token(args: argparse.Namespace) -> int:
    from api.auth import create_token_cli

    print(create_token_cli(role=args.role, venue=args.venue, name=args.name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
