"""Response bodies of the affinity resources added for scores computed elsewhere and for
estimates (``POST /venues/{v}/affinity/upload``, ``.../affinity/estimate``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class AffinityUploadOut(BaseModel):
    """A scores file stored as the pool's latest affinity run."""

    model_config = ConfigDict(from_attributes=True)
    run_id: int = Field(description="the new affinity run")
    pairs: int = Field(description="pairs stored (every pair of the file)")
    papers: int = Field(description="papers the file scores")
    papers_total: int = Field(description="the venue's papers")
    reviewers: int = Field(description="persons the file scores")
    reviewers_total: int = Field(description="the pool's persons")
    bids_folded: int = Field(description="scored pairs whose bid was folded in (bid_weight)")
    pool: str
    warnings: list[str] = Field(description="papers or persons the file gives no score")


class FasterModel(BaseModel):
    name: str = Field(description="config.model to choose")
    seconds: float = Field(description="its estimate")


class AffinityEstimateOut(BaseModel):
    """How long an affinity job would take now, before it starts."""

    model: str | None = Field(description="the embedding model; null when nothing is embedded")
    texts_total: int = Field(description="distinct texts: publications and submissions")
    texts_cached: int = Field(description="texts the embedding cache holds for the model")
    texts_to_embed: int = Field(description="texts not yet cached: what the job embeds")
    texts_per_second: float | None = Field(description="the rate the estimate uses")
    rate_source: str = Field(
        description="measured (on this server), known (benchmarked), assumed, or none"
    )
    seconds: float = Field(description="the estimated time to embed the texts not cached")
    warn: bool = Field(description="above warn_above_seconds: consider a faster model")
    warn_above_seconds: float
    alternatives: dict[str, float] = Field(
        description="each other installed model's estimate in seconds, fastest first"
    )
    message: str = Field(description="the estimate in one sentence, naming a faster model")
    warning: str | None = Field(description="the message when warn, else null")
    faster_model: FasterModel | None = Field(
        description="when warn: the fastest other installed model and its estimate"
    )
