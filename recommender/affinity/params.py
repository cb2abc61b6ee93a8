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

from recommender.embeddings import DEFAULT_MODEL_NAME

METHODS = ("tfidf", "embedding", "combined")
AGGREGATIONS = ("max", "mean", "topk", "softmax")
NORMALISATIONS = ("zscore", "rank")

Method = Literal["tfidf", "embedding", "combined"]
Aggregation = Literal["max", "mean", "topk", "softmax"]
Normalisation = Literal["zscore", "rank"]

DEFAULT_BID_WEIGHT = 0.1
"""Weight of a bid folded into a score: ``score + W x bid`` (Very High = 1 ... Very Low =
-1); a tenth of the [0, 1] range of the default combined score."""

MODEL_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"

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

    Defaults (combined, mean, equal weights, global z-scores) were chosen on the gold-dev
    benchmark; see :mod:`recommender.evaluate` to reproduce.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: Method = Field(default="combined", description="similarity of texts")
    aggregation: Aggregation = Field(
        default="mean", description="how a reviewer's publication similarities become one"
    )
    k: int = Field(default=3, ge=1, le=1000, description="publications averaged by topk")
    temperature: float = Field(
        default=0.5, gt=0, le=100, description="softmax temperature (units of similarity std)"
    )
    embedding_weight: float = Field(
        default=0.5, ge=0, le=1, description="share of the embedding channel in combined"
    )
    normalisation: Normalisation = Field(
        default="zscore", description="global standardisation of each channel in combined"
    )
    paper_centering: bool = Field(
        default=False, description="subtract each paper's mean score over reviewers"
    )
    recency_half_life: float | None = Field(
        default=None, gt=0, le=1000, description="years after which a publication counts half"
    )
    reference_year: int | None = Field(
        default=None, ge=1000, le=3000, description="year ages are counted from"
    )
    tfidf_ngram_max: int = Field(default=1, ge=1, le=3, description="longest TF-IDF n-gram")
    tfidf_min_df: int = Field(
        default=1, ge=1, le=1_000_000, description="texts a term must occur in"
    )
    tfidf_max_df: float = Field(
        default=0.5, gt=0, le=1, description="share of texts above which a term is dropped"
    )
    model: str = Field(
        default=DEFAULT_MODEL_NAME,
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
        held run options too: those are dropped). A 0.1 record naming its own model
        directory cannot be reproduced by name: ValueError."""
        data = dict(data)
        if data.get("model_path"):
            raise ValueError(
                f"these scores were made with the model directory {data['model_path']!r}, "
                "which version 0.1 stored by path; recompute them with a named model"
            )
        return cls.from_dict({k: v for k, v in data.items() if k not in _LEGACY_RUN_FIELDS})

    def replace(self, **changes: Any) -> ScoringParams:
        """A copy with ``changes`` applied (validated)."""
        return type(self).from_dict({**self.model_dump(), **changes})


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
