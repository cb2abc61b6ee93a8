"""Scoring parameters: everything that determines a score, and nothing else.

:class:`ScoringParams` is what a client may choose (the HTTP API accepts it as is, the CLI
fills it from flags) and what is stored beside every set of scores, so that a score can be
reproduced and explained. It is frozen and validated: a value out of bounds or an unknown
field raises ``ValueError`` (pydantic's ``ValidationError``) naming the field.

How a run is carried out (model directories, cache directory, device, encoder backend,
batch size, memory bounds) is not here: see :class:`recommender.affinity.options.RunOptions`,
set on the server or the command line only. The embedding model is chosen by *name* among
the models the run options know.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from recommender.packaged_models import MINILM_NAME, MPNET_NAME

METHODS = ("tfidf", "embedding", "combined")
AGGREGATIONS = ("max", "mean", "topk", "softmax")
NORMALISATIONS = ("zscore", "rank")

Method = Literal["tfidf", "embedding", "combined"]
Aggregation = Literal["max", "mean", "topk", "softmax"]
Normalisation = Literal["zscore", "rank"]

DEFAULT_BID_WEIGHT = 0.1
"""Weight of a bid folded into a score: ``score + W x bid`` (Very High = 1 ... Very Low =
-1); scores are cosines (``tfidf``, ``embedding``) or scaled to [0, 1] (``combined``), so a
Very High bid adds a tenth of that unit range."""

MODEL_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"

DEFAULT_SCORING_MODEL = MINILM_NAME
"""The embedding model of the default scoring parameters: the bundled all-MiniLM-L6-v2
(all-mpnet-base-v2, installed with ``requirements-mpnet.txt``, is selectable by name)."""

DEFAULT_DUPLICATE_THRESHOLD = 0.8
"""Cosine at or above which two publications of one reviewer count once (default)."""

# Fields that version 0.1 stored in the same object (``AffinityConfig``) although they are
# run options; ignored when reading a stored record (see ScoringParams.from_stored).
_LEGACY_RUN_FIELDS = frozenset(
    {
        "model_path",
        "cache_dir",
        "batch_size",
        "device",
        "encoder_backend",
        "blockwise_min_pairs",
        "dense_limit_bytes",
        "keep_per_paper",
        "keep_per_reviewer",
    }
)


class ScoringParams(BaseModel):
    """Everything that determines an affinity matrix (stored with it, for provenance).

    Pipeline (see :mod:`recommender.affinity`): each submission is compared with each
    reviewer publication (``method``: TF-IDF cosine, embedding cosine, or both standardised
    with one global ``normalisation`` and mixed with ``embedding_weight``); a reviewer's
    publication similarities are aggregated into one score (``aggregation``; ``k`` for
    ``topk``; ``temperature`` for ``softmax``, in units of the global similarity std;
    ``recency_half_life`` in years weights recent publications more, counted back from
    ``reference_year``, default the newest publication year); optionally each paper's mean
    over reviewers is subtracted (``paper_centering``); ``combined`` scores are min-max
    scaled to [0, 1]. ``model`` names the embedding model (one the run options know).
    ``bid_weight`` is applied by :func:`recommender.bids.apply_bids` when bids are folded in.

    ``duplicate_threshold``: a reviewer's publication whose cosine (embedding, else
    TF-IDF) with an earlier one of theirs reaches it counts once (arXiv and proceedings
    versions of one paper would otherwise fill a top-k twice).

    Default: the embedding of the bundled all-MiniLM-L6-v2, mean of the reviewer's 3 most
    similar publications after near-duplicates (cosine >= 0.8) count once. Chosen on the 58
    raters of the gold-all benchmark by a rule stated before the run (README, "Affinity
    quality"; ``benchmarks/affinity_candidates.py``): loss 0.199 against 0.229 for the
    former default (10% TF-IDF + 90% all-mpnet-base-v2, mean), which costs 7-13x more; it
    beats plain MiniLM top-3 on 98% of held-out rater halves. Costlier configurations stay
    selectable by name (:data:`SCORING_PRESETS`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: Method = Field(default="embedding", description="similarity of texts")
    aggregation: Aggregation = Field(
        default="topk", description="how a reviewer's publication similarities become one"
    )
    k: int = Field(default=3, ge=1, le=1000, description="publications averaged by topk")
    temperature: float = Field(
        default=0.5, ge=0.01, le=100, description="softmax temperature (units of similarity std)"
    )
    embedding_weight: float = Field(
        default=0.9, ge=0, le=1, description="share of the embedding channel in combined"
    )
    normalisation: Normalisation = Field(
        default="zscore", description="global standardisation of each channel in combined"
    )
    paper_centering: bool = Field(
        default=False, description="subtract each paper's mean score over reviewers"
    )
    recency_half_life: float | None = Field(
        default=None, ge=0.1, le=1000, description="years after which a publication counts half"
    )
    reference_year: int | None = Field(
        default=None, ge=1000, le=3000, description="year ages are counted from"
    )
    duplicate_threshold: float | None = Field(
        default=DEFAULT_DUPLICATE_THRESHOLD,
        ge=0.5,
        le=1,
        description="a reviewer's publication whose cosine with an earlier one of theirs is "
        "at least this counts once (arXiv and proceedings versions); null: all count",
    )
    tfidf_ngram_max: int = Field(default=1, ge=1, le=3, description="longest TF-IDF n-gram")
    tfidf_min_df: int = Field(default=1, ge=1, le=1000, description="texts a term must occur in")
    tfidf_max_df: float = Field(
        default=0.5, ge=0.01, le=1, description="share of texts above which a term is dropped"
    )
    model: str = Field(
        default=DEFAULT_SCORING_MODEL,
        min_length=1,
        max_length=100,
        pattern=MODEL_NAME_PATTERN,
        description="embedding model, by name, among the models the server is configured with",
    )
    bid_weight: float = Field(
        default=DEFAULT_BID_WEIGHT,
        ge=-1000,
        le=1000,
        description="bids add bid_weight x bid (Very High 1 ... Very Low -1) to the score",
    )

    @property
    def uses_tfidf(self) -> bool:
        return self.method in ("tfidf", "combined")

    @property
    def uses_embedding(self) -> bool:
        return self.method in ("embedding", "combined")

    @property
    def scales_to_unit_range(self) -> bool:
        """Whether final scores are min-max scaled to [0, 1] (``combined``)."""
        return self.method == "combined"

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScoringParams:
        """Build from a mapping; unknown fields and bad values raise ``ValueError`` with
        one line per problem (field: what is wrong)."""
        if not isinstance(data, Mapping):
            raise ValueError(f"scoring parameters must be an object, got {type(data).__name__}")
        try:
            return cls.model_validate(dict(data))
        except ValidationError as error:
            raise ValueError(describe_errors(error)) from None

    @classmethod
    def from_stored(cls, data: Mapping[str, Any]) -> ScoringParams:
        """Read a stored record, also one written by version 0.1 (``AffinityConfig``, which
        held run options too: those are dropped) or before ``duplicate_threshold`` existed
        (read as None, what those scores were made with). A 0.1 record naming its own model
        directory cannot be reproduced by name: ValueError."""
        data = dict(data)
        if data.get("model_path"):
            raise ValueError(
                f"these scores were made with the model directory {data['model_path']!r}, "
                "which version 0.1 stored by path; recompute them with a named model"
            )
        # Records made before near-duplicates counted once hold no such field: none did.
        data.setdefault("duplicate_threshold", None)
        return cls.from_dict({k: v for k, v in data.items() if k not in _LEGACY_RUN_FIELDS})

    def replace(self, **changes: Any) -> ScoringParams:
        """A copy with ``changes`` applied (validated)."""
        return type(self).from_dict({**self.model_dump(), **changes})


SCORING_PRESETS: dict[str, dict[str, Any]] = {
    "default": {},
    "minilm-top3": {"duplicate_threshold": None},
    "mpnet-top3": {"model": MPNET_NAME, "duplicate_threshold": None},
    "tfidf+mpnet": {
        "method": "combined",
        "embedding_weight": 0.9,
        "model": MPNET_NAME,
        "aggregation": "mean",
        "duplicate_threshold": None,
    },
    "tfidf": {"method": "tfidf", "aggregation": "mean", "duplicate_threshold": None},
}
"""Named configurations (fields over the defaults), each a row of the README's table:
``default`` (MiniLM top-3, near-duplicates once), ``minilm-top3`` (without that),
``mpnet-top3`` (7-13x the cost, no better on gold-all), ``tfidf+mpnet`` (the former
default: 10% TF-IDF + 90% MPNet, mean; 7-13x the cost, loss 0.229) and ``tfidf`` (no
embedding: seconds at any size, loss 0.266)."""


def preset(name: str) -> ScoringParams:
    """The named configuration (:data:`SCORING_PRESETS`); ValueError naming the known ones."""
    if name not in SCORING_PRESETS:
        raise ValueError(
            f"unknown scoring configuration {name!r}; known: {', '.join(SCORING_PRESETS)}"
        )
    return ScoringParams.from_dict(SCORING_PRESETS[name])


def describe_errors(error: ValidationError) -> str:
    """A pydantic error in a user's words: ``field: message (got value)``, one per line."""
    lines = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "value"
        message = item["msg"]
        if item["type"] == "extra_forbidden":
            message = "unknown field"
        got = item.get("input")
        shown = ""
        if item["type"] != "extra_forbidden" and got is not None:
            text = repr(got)
            shown = f" (got {text if len(text) <= 60 else text[:57] + '...'})"
        lines.append(f"{where}: {message}{shown}")
    return "; ".join(lines)
