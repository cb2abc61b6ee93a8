"""How long scoring a venue will take, before it starts: texts not yet cached x texts/s.

Almost all of an affinity run's time is embedding texts (TF-IDF and the similarity products
take seconds even at 20,000 papers). :func:`estimate_scoring` counts the texts of a venue
(its reviewers' publications and its submissions) that the embedding cache does not hold for
the chosen model, and divides by that model's rate: the one this installation last measured
(recorded in the cache after every embedding step of 32 texts or more), else
:data:`KNOWN_TEXTS_PER_SECOND`. A job longer than :data:`WARN_SECONDS` deserves a warning, and
:attr:`ScoringEstimate.alternatives` says what each other known model would take.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from recommender.affinity.options import RunOptions
from recommender.affinity.params import ScoringParams
from recommender.corpus import Reviewer, Submission
from recommender.embeddings import EmbeddingCache, text_key
from recommender.packaged_models import MINILM_NAME, MPNET_NAME
from recommender.progress import format_duration, format_rate

WARN_SECONDS = 600.0
"""Above this estimate (10 minutes) the page and the API warn and offer a faster model."""

KNOWN_TEXTS_PER_SECOND: dict[str, float] = {MINILM_NAME: 15.0, MPNET_NAME: 2.1}
"""Texts/s of the packaged models on CPU when this installation has not measured them yet:
whole cold scoring runs on the loaded 2-core development machine (MiniLM: 14.6 texts/s end to
end in ``benchmarks/bench_throughput.py``, whose embedding step alone reaches 28.5; MPNet:
2.1, the former default's cold ``recommender demo``). Cautious on purpose: a warning that
comes too early costs less than one that does not come."""

UNKNOWN_MODEL_TEXTS_PER_SECOND = 2.0
"""Assumed for a configured model never measured here (a cautious guess: MPNet-sized)."""


@dataclass(frozen=True)
class ScoringEstimate:
    """The expected duration of scoring a venue under one set of parameters.

    ``texts_total``: distinct texts (publications and submissions); ``texts_cached``: those
    the embedding cache holds for ``model``; ``texts_to_embed`` the rest; ``texts_per_second``
    the rate used and ``rate_source`` where it came from (``measured`` here, ``known`` from
    :data:`KNOWN_TEXTS_PER_SECOND`, ``assumed`` for an unmeasured model, ``none`` when the
    method embeds nothing); ``seconds``: the estimate; ``warn``: above
    :data:`WARN_SECONDS`; ``alternatives``: model name -> estimated seconds for the other
    models this installation knows (faster first); ``message``: one sentence for a chair.
    """

    model: str | None
    texts_total: int
    texts_cached: int
    texts_to_embed: int
    texts_per_second: float | None
    rate_source: str
    seconds: float
    warn: bool
    alternatives: dict[str, float] = field(default_factory=dict)
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "texts_total": self.texts_total,
            "texts_cached": self.texts_cached,
            "texts_to_embed": self.texts_to_embed,
            "texts_per_second": (
                None if self.texts_per_second is None else round(self.texts_per_second, 2)
            ),
            "rate_source": self.rate_source,
            "seconds": round(self.seconds, 1),
            "warn": self.warn,
            "warn_above_seconds": WARN_SECONDS,
            "alternatives": {name: round(s, 1) for name, s in self.alternatives.items()},
            "message": self.message,
        }


def venue_texts(reviewers: Sequence[Reviewer], submissions: Sequence[Submission]) -> list[str]:
    """Every text an affinity run embeds: publications, then submissions."""
    return [p.text for r in reviewers for p in r.publications] + [s.text for s in submissions]


def model_rate(
    name: str, options: RunOptions, cache: EmbeddingCache | None
) -> tuple[float, str, str | None]:
    """(texts/s, source, cache identity) of the model called ``name`` (see the module
    docstring); the identity is None when the model's directory cannot be resolved."""
    identity = _identity(name, options)
    if cache is not None and identity is not None:
        measured = cache.rate(identity)
        if measured:
            return measured, "measured", identity
    if name in KNOWN_TEXTS_PER_SECOND:
        return KNOWN_TEXTS_PER_SECOND[name], "known", identity
    return UNKNOWN_MODEL_TEXTS_PER_SECOND, "assumed", identity


def _identity(name: str, options: RunOptions) -> str | None:
    from recommender.profiles import LocalTextEncoder

    try:
        # not assembled yet: nothing was embedded with it, and assembling costs seconds
        path = options.resolved_model_path(name)
        if path is None:
            return None
        return LocalTextEncoder(
            path,
            batch_size=options.batch_size,
            device=options.device,
            backend=options.encoder_backend,
            cache_dir=options.cache_dir,
        ).identity
    except (OSError, ValueError):
        return None


def estimate_scoring(
    reviewers: Sequence[Reviewer],
    submissions: Sequence[Submission],
    params: ScoringParams | None = None,
    options: RunOptions | None = None,
) -> ScoringEstimate:
    """Estimate the duration of scoring this venue under ``params`` with ``options`` (its
    embedding cache and device); reads the cache's index only, loads no model weights."""
    return estimate_texts(venue_texts(reviewers, submissions), params, options)


def estimate_texts(
    all_texts: Iterable[str],
    params: ScoringParams | None = None,
    options: RunOptions | None = None,
) -> ScoringEstimate:
    """:func:`estimate_scoring` on a venue's texts as :func:`venue_texts` lists them (or as a
    store reads them without building the corpus: the same strings, duplicates allowed)."""
    params = params or ScoringParams()
    options = options or RunOptions()
    texts = list(dict.fromkeys(all_texts))
    keys = [text_key(t) for t in texts]
    cache = EmbeddingCache(options.cache_dir) if options.cache_dir is not None else None
    if not params.uses_embedding:
        return ScoringEstimate(
            None,
            len(texts),
            0,
            0,
            None,
            "none",
            0.0,
            False,
            message="TF-IDF only: no texts to embed, a few seconds.",
        )

    def one(name: str) -> tuple[int, float, str, float]:
        rate, source, identity = model_rate(name, options, cache)
        cached = cache.count(identity, keys) if cache is not None and identity else 0
        return cached, rate, source, (len(texts) - cached) / rate

    cached, rate, source, seconds = one(params.model)
    alternatives: dict[str, float] = {}
    for name in options.model_names():
        if name != params.model:
            try:
                options.resolved_model_path(name)
            except ValueError:
                continue  # not installed here
            alternatives[name] = one(name)[3]
    alternatives = dict(sorted(alternatives.items(), key=lambda item: item[1]))
    warn = seconds > WARN_SECONDS
    message = (
        f"{len(texts) - cached:,} of {len(texts):,} texts to embed with {params.model} at "
        f"{format_rate(rate)} texts/s: about {format_duration(seconds)}."
    )
    faster = [name for name, s in alternatives.items() if s < seconds]
    if warn and faster:
        message += f" {faster[0]} would take about {format_duration(alternatives[faster[0]])}."
    elif warn:
        message += " TF-IDF alone (method tfidf) embeds nothing and takes seconds."
    return ScoringEstimate(
        params.model,
        len(texts),
        cached,
        len(texts) - cached,
        rate,
        source,
        seconds,
        warn,
        alternatives,
        message,
    )
