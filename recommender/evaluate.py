"""Evaluation of affinity scores against expert self-ratings (Stelmakh et al., 2023).

Main metric (:func:`pairwise_loss`): for every rater and every pair of papers they rated with
different expertise, a predicted order that disagrees costs ``|Δexpertise|`` and a predicted
tie costs half of it; the loss is the total cost over the sum of ``|Δexpertise|`` of all such
pairs, pooled over raters. 0 = perfect order, 0.5 = constant predictor, 1 = reversed.

Resolution (:func:`pair_accuracy`), as in the paper's released code: the share of pairs
ordered strictly correctly (a tie is wrong), unweighted, over *easy* pairs (one paper rated
>= 4, the other <= 2) and *hard* pairs (both rated >= 4, not equal).

Gold directory layout (see ``gold-dev/README.md``): ``evaluations.tsv`` and draws
``d_*/archives/~<rater>.jsonl`` + ``d_*/submissions.json``.
"""

from __future__ import annotations

import itertools
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from recommender.affinity import RunOptions, ScoringParams, compute_affinity
from recommender.corpus import InputError, Problem
from recommender.crossval import CrossValidation, cross_validate

Ratings = Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class _Pairs:
    """Every rated pair with different expertise, as parallel arrays."""

    rater: np.ndarray  # int index into raters
    predicted_diff: np.ndarray
    true_diff: np.ndarray
    low: np.ndarray  # min expertise of the pair
    high: np.ndarray  # max expertise of the pair


def _pairs(predicted: Ratings, gold: Ratings) -> tuple[list[str], _Pairs]:
    raters = sorted(gold)
    index, pdiff, tdiff, low, high = [], [], [], [], []
    for r, rater in enumerate(raters):
        ratings = gold[rater]
        scores = predicted.get(rater)
        if scores is None:
            raise KeyError(f"no predictions for rater {rater!r}")
        for a, b in itertools.combinations(sorted(ratings), 2):
            if ratings[a] == ratings[b]:
                continue
            for paper in (a, b):
                if paper not in scores:
                    raise KeyError(f"no prediction for rater {rater!r}, paper {paper!r}")
            index.append(r)
            pdiff.append(float(scores[a]) - float(scores[b]))
            tdiff.append(float(ratings[a]) - float(ratings[b]))
            low.append(min(ratings[a], ratings[b]))
            high.append(max(ratings[a], ratings[b]))
    arrays = (np.asarray(x, dtype=np.float64) for x in (pdiff, tdiff, low, high))
    return raters, _Pairs(np.asarray(index, dtype=np.int64), *arrays)


def _pair_costs(pairs: _Pairs) -> tuple[np.ndarray, np.ndarray]:
    weight = np.abs(pairs.true_diff)
    agreement = np.sign(pairs.predicted_diff) * np.sign(pairs.true_diff)
    cost = np.where(agreement < 0, weight, np.where(agreement == 0, weight / 2, 0.0))
    return cost, weight


def pairwise_loss(predicted: Ratings, gold: Ratings) -> float:
    """The paper's main loss; ``predicted[rater][paper]`` must cover every rated paper.

    Raises ValueError when no rater has two papers with different expertise.
    """
    _, pairs = _pairs(predicted, gold)
    cost, weight = _pair_costs(pairs)
    if weight.sum() == 0:
        raise ValueError("no pair of papers with different expertise: loss undefined")
    return float(cost.sum() / weight.sum())


def pair_accuracy(predicted: Ratings, gold: Ratings, regime: str) -> float:
    """Share of strictly correctly ordered ``easy`` or ``hard`` pairs (NaN when none)."""
    _, pairs = _pairs(predicted, gold)
    mask = _regime_mask(pairs, regime)
    correct = (np.sign(pairs.predicted_diff) * np.sign(pairs.true_diff)) > 0
    return float(correct[mask].mean()) if mask.any() else math.nan


def _regime_mask(pairs: _Pairs, regime: str) -> np.ndarray:
    if regime == "easy":
        return (pairs.high >= 4) & (pairs.low <= 2)
    if regime == "hard":
        return pairs.low >= 4
    raise ValueError(f"regime must be 'easy' or 'hard', got {regime!r}")


def bootstrap_loss(
    draws: Sequence[tuple[Ratings, Ratings]], *, samples: int = 1000, seed: int = 0
) -> tuple[float, float]:
    """95% percentile CI of the mean-over-draws loss, resampling raters with replacement.

    ``draws``: (predicted, gold) per draw, same raters in each. The same rater resample is
    applied to every draw, so the interval reflects uncertainty about *which raters* were
    sampled (the quantity that differs on the hidden half).
    """
    per_draw = []
    raters: list[str] | None = None
    for predicted, gold in draws:
        names, pairs = _pairs(predicted, gold)
        if raters is None:
            raters = names
        elif names != raters:
            raise ValueError("every draw must have the same raters")
        cost, weight = _pair_costs(pairs)
        n = len(names)
        per_draw.append((np.bincount(pairs.rater, cost, n), np.bincount(pairs.rater, weight, n)))
    if raters is None:
        raise ValueError("no draws")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(raters), size=(samples, len(raters)))
    losses = np.zeros(samples)
    for cost, weight in per_draw:
        counts = np.stack([np.bincount(p, minlength=len(raters)) for p in picks])
        losses += (counts @ cost) / np.maximum(counts @ weight, 1e-12)
    losses /= len(per_draw)
    low, high = np.percentile(losses, [2.5, 97.5])
    return float(low), float(high)


# ---------------------------------------------------------------------- gold data
def read_gold_ratings(path: str | os.PathLike[str]) -> dict[str, dict[str, float]]:
    """``evaluations.tsv`` -> {rater: {paper: expertise}} (missing cells skipped)."""
    path = Path(path)
    try:
        frame = pd.read_csv(path, sep="\t", dtype=str)
    except (OSError, pd.errors.ParserError) as error:
        raise InputError([Problem(str(path), None, None, f"cannot read: {error}")]) from error
    if "ParticipantID" not in frame.columns:
        raise InputError([Problem(str(path), 1, "ParticipantID", "missing column")])
    ratings: dict[str, dict[str, float]] = {}
    problems = []
    for row_number, row in enumerate(frame.to_dict("records"), start=2):
        rater = str(row["ParticipantID"]).strip()
        rated: dict[str, float] = {}
        for i in range(1, 11):
            paper, value = row.get(f"Paper{i}"), row.get(f"Expertise{i}")
            if not isinstance(paper, str) or not paper.strip():
                continue
            try:
                expertise = float(value)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                problems.append(Problem(str(path), row_number, f"Expertise{i}", "not a number"))
                continue
            if not 1 <= expertise <= 5:
                problems.append(Problem(str(path), row_number, f"Expertise{i}", "not in 1..5"))
                continue
            rated[paper.strip()] = expertise
        ratings[rater] = rated
    if problems:
        raise InputError(problems)
    return ratings


def gold_draws(gold_dir: str | os.PathLike[str]) -> list[Path]:
    """The draw directories ``d_*`` of a gold directory, in natural order."""
    directory = Path(gold_dir)
    draws = [d for d in directory.glob("d_*") if (d / "archives").is_dir()]

    def natural(path: Path) -> list[object]:
        return [int(t) if t.isdigit() else t for t in path.name.replace("_", " ").split()]

    if not draws:
        raise InputError([Problem(str(directory), None, None, "no d_*/archives draws found")])
    return sorted(draws, key=natural)


# -------------------------------------------------------------------------- report
_MINILM: dict[str, object] = {
    "method": "embedding",
    "model": "all-MiniLM-L6-v2",
    "duplicate_threshold": None,
}
_TOP3: dict[str, object] = {**_MINILM, "aggregation": "topk", "k": 3}
CV_CANDIDATES: dict[str, dict[str, object]] = {
    "minilm top-3 (reference)": _TOP3,
    "tfidf mean": {"method": "tfidf", "aggregation": "mean", "duplicate_threshold": None},
    "minilm top-1 (max)": {**_MINILM, "aggregation": "max"},
    "minilm top-5": {**_TOP3, "k": 5},
    "minilm top-3, near-dup 0.9": {**_TOP3, "duplicate_threshold": 0.9},
    "minilm top-3, near-dup 0.8 (default)": {**_TOP3, "duplicate_threshold": 0.8},
    "minilm top-3, near-dup 0.7": {**_TOP3, "duplicate_threshold": 0.7},
    "mpnet top-3": {**_TOP3, "model": "all-mpnet-base-v2"},
    "tfidf+mpnet 10/90 mean (former default)": {
        "method": "combined",
        "embedding_weight": 0.9,
        "model": "all-mpnet-base-v2",
        "aggregation": "mean",
        "duplicate_threshold": None,
    },
}
"""The candidates ``recommender evaluate --cv`` compares when no ``--config`` is given, the
reference (plain MiniLM top-3) first (scoring fields over the defaults): the table behind
the default (``benchmarks/affinity_candidates.py`` adds CV spreads and costs)."""


@dataclass(frozen=True)
class ConfigResult:
    """Evaluation of one configuration over every draw."""

    config: ScoringParams
    loss: float  # mean over draws
    draw_losses: tuple[float, ...]
    ci_low: float
    ci_high: float
    easy_accuracy: float
    hard_accuracy: float
    seconds: float
    label: str = ""
    rater_costs: tuple[float, ...] = ()  # per rater (GoldReport.raters order), mean over draws


@dataclass(frozen=True)
class GoldReport:
    """``raters``/``rater_weights``: the raters of every draw and each one's sum of
    ``|Δexpertise|`` over their pairs; with ``ConfigResult.rater_costs`` they give the loss
    of any subset of raters (what :func:`cross_validate` needs)."""

    gold_dir: str
    n_raters: int
    n_draws: int
    results: tuple[ConfigResult, ...] = field(default=())
    raters: tuple[str, ...] = ()
    rater_weights: tuple[float, ...] = ()

    def best(self) -> ConfigResult:
        return min(self.results, key=lambda r: r.loss)


def evaluate_gold(
    gold_dir: str | os.PathLike[str],
    configs: Sequence[ScoringParams],
    *,
    options: RunOptions | None = None,
    labels: Sequence[str] | None = None,
    draws: Sequence[str] | None = None,
    bootstrap_samples: int = 1000,
    seed: int = 0,
    progress: Callable[[float, str], None] | None = None,
) -> GoldReport:
    """Score each draw of ``gold_dir`` under each config and evaluate against the ratings.

    ``options``: how to run (embedding cache, device...). ``draws``: names of draw folders
    to use (default all ``d_*``). Accuracies are pooled over
    draws; the CI is a rater bootstrap (seeded) of the mean-over-draws loss.
    """
    from recommender.io import read_openreview_archives, read_submissions

    gold_dir = Path(gold_dir)
    gold = read_gold_ratings(gold_dir / "evaluations.tsv")
    directories = gold_draws(gold_dir)
    if draws is not None:
        wanted = set(draws)
        directories = [d for d in directories if d.name in wanted]
    corpora = [
        (read_openreview_archives(d / "archives"), read_submissions(d / "submissions.json"))
        for d in directories
    ]
    results = []
    raters_seen: set[str] = set()
    raters: list[str] = []
    weights = np.zeros(0)
    for c, config in enumerate(configs):
        started = time.perf_counter()
        per_draw: list[tuple[Ratings, Ratings]] = []
        for d, (reviewers, submissions) in enumerate(corpora):
            if progress:
                progress((c * len(corpora) + d) / (len(configs) * len(corpora)), "scoring")
            affinity = compute_affinity(reviewers, submissions, config, options)
            present = set(affinity.reviewer_ids)
            draw_gold = {r: v for r, v in gold.items() if r in present}
            predicted = {
                rater: {paper: affinity.score(paper, rater) for paper in rated}
                for rater, rated in draw_gold.items()
            }
            per_draw.append((predicted, draw_gold))
            raters_seen.update(draw_gold)
        seconds = time.perf_counter() - started
        losses = tuple(pairwise_loss(p, g) for p, g in per_draw)
        low, high = bootstrap_loss(per_draw, samples=bootstrap_samples, seed=seed)
        easy = _pooled_accuracy(per_draw, "easy")
        hard = _pooled_accuracy(per_draw, "hard")
        label = labels[c] if labels is not None else describe(config)
        raters, costs, weights = rater_costs(per_draw)
        results.append(
            ConfigResult(
                config,
                float(np.mean(losses)),
                losses,
                low,
                high,
                easy,
                hard,
                seconds,
                label,
                tuple(float(x) for x in costs),
            )
        )
    return GoldReport(
        str(gold_dir),
        len(raters_seen),
        len(corpora),
        tuple(results),
        tuple(raters),
        tuple(float(x) for x in weights),
    )


def rater_costs(
    draws: Sequence[tuple[Ratings, Ratings]],
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Per-rater cost, mean over draws, and per-rater weight (sum of ``|Δexpertise|``).

    ``draws``: (predicted, gold) per draw, with the same raters and ratings in each (as in a
    gold folder: only the profiles differ between draws). The mean-over-draws loss of any
    set of raters ``R`` is then ``costs[R].sum() / weights[R].sum()``.
    """
    raters: list[str] | None = None
    weights = np.zeros(0)
    total = np.zeros(0)
    for predicted, gold in draws:
        names, pairs = _pairs(predicted, gold)
        cost, weight = _pair_costs(pairs)
        per_rater = np.bincount(pairs.rater, weight, len(names)).astype(np.float64)
        if raters is None:
            raters, weights, total = names, per_rater, np.zeros(len(names))
        elif names != raters or not np.allclose(per_rater, weights):
            raise ValueError("every draw must have the same raters and ratings")
        total += np.bincount(pairs.rater, cost, len(names))
    if raters is None:
        raise ValueError("no draws")
    return raters, total / len(draws), weights


def cross_validate_report(
    report: GoldReport, *, n_splits: int = 100, seed: int = 0
) -> CrossValidation:
    """:func:`recommender.crossval.cross_validate` over the configurations of ``report``
    (in their order: list the simplest first)."""
    if not report.results:
        raise ValueError("no configuration was evaluated")
    return cross_validate(
        [r.rater_costs for r in report.results],
        report.rater_weights,
        [r.label for r in report.results],
        n_splits=n_splits,
        seed=seed,
    )


def _pooled_accuracy(per_draw: Sequence[tuple[Ratings, Ratings]], regime: str) -> float:
    correct = total = 0
    for predicted, gold in per_draw:
        _, pairs = _pairs(predicted, gold)
        mask = _regime_mask(pairs, regime)
        correct += int(((np.sign(pairs.predicted_diff) * np.sign(pairs.true_diff)) > 0)[mask].sum())
        total += int(mask.sum())
    return correct / total if total else math.nan


_DEFAULTS = ScoringParams().to_dict()


def describe(config: ScoringParams) -> str:
    """Short label: method, aggregation and the fields that differ from the defaults."""
    parts: list[str] = [config.method, config.aggregation]
    skip = {"method", "aggregation"}
    for key, value in config.to_dict().items():
        if key not in skip and value != _DEFAULTS[key]:
            if key == "k" and config.aggregation != "topk":
                continue
            if key == "temperature" and config.aggregation != "softmax":
                continue
            parts.append(f"{key}={value}")
    return " ".join(parts)


def format_report(report: GoldReport) -> str:
    """Plain-text table: one row per configuration, best loss marked with ``*``."""
    best = report.best().loss if report.results else math.nan
    header = f"{'configuration':<58} {'loss':>6} {'95% CI':>15} {'easy':>6} {'hard':>6} {'sec':>6}"
    lines = [
        f"gold: {report.gold_dir}  raters: {report.n_raters}  draws: {report.n_draws}  "
        "(loss: 0 perfect, 0.5 constant; accuracies: share of pairs ordered right)",
        header,
        "-" * len(header),
    ]
    for r in report.results:
        mark = "*" if r.loss == best else " "
        lines.append(
            f"{r.label[:57]:<57}{mark} {r.loss:6.4f} [{r.ci_low:.3f}, {r.ci_high:.3f}] "
            f"{r.easy_accuracy:6.3f} {r.hard_accuracy:6.3f} {r.seconds:6.1f}"
        )
    return "\n".join(lines)
