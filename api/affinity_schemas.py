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
