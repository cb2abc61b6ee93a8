"""Request and response bodies (pydantic)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from services.params import AssignParams
from services.params import RequiredAttribute as RequiredAttribute  # re-exported

Item = TypeVar("Item")


class Page(BaseModel, Generic[Item]):
    """One page of a long list: ``total`` items exist, ``items`` starts at ``offset``."""

    items: list[Item]
    total: int
    limit: int
    offset: int


class ProblemOut(BaseModel):
    file: str
    line: int | None
    field: str | None
    message: str


class VenueIn(BaseModel):
    id: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    name: str = Field(default="", max_length=300)


class VenueOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    id: str
    name: str
    created_at: datetime


class TokenIn(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    role: Literal["chair", "viewer"]


class MeOut(BaseModel):
    """The calling token: its name, role and venue (None for a global admin)."""

    name: str
    role: Literal["admin", "chair", "viewer"]
    venue_id: str | None


class TokenOut(BaseModel):
    name: str
    role: str
    venue_id: str | None
    token: str = Field(description="the secret; shown once, only its hash is stored")


class ReviewerOut(BaseModel):
    id: str
    name: str
    email: str
    affiliation: str
    attributes: dict[str, str]
    n_publications: int


class SubmissionOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    id: str
    title: str
    abstract: str
    authors: list[str]
    source: str
    author_emails: list[str]
    author_ids: list[str]
    author_affiliations: list[str]


class UploadResult(BaseModel):
    created: int
    updated: int
    total: int = Field(description="items of this kind now in the venue")


class JobOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    id: int
    venue_id: str
    kind: str
    state: Literal["queued", "running", "succeeded", "failed", "cancelled", "interrupted"]
    progress: float
    stage: str
    log: list[str]
    params: dict[str, Any]
    result: dict[str, Any]
    error: str
    cancel_requested: bool
    rerun_of: int | None
    created_by: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class AffinityJobIn(BaseModel):
    config: dict[str, Any] = Field(
        default_factory=dict,
        description="recommender.affinity.AffinityConfig fields (e.g. the method)",
    )
    top_n: int | None = Field(
        default=None, ge=1, le=10_000, description="scores kept per paper and per reviewer"
    )


class AffinityRunOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    id: int
    job_id: int | None
    config: dict[str, Any]
    n_papers: int
    n_reviewers: int
    top_n: int
    statistics: dict[str, Any]
    stale: bool = Field(description="reviewers or submissions were uploaded since this run")
    created_at: datetime


class PairScoreOut(BaseModel):
    paper_id: str
    reviewer_id: str
    score: float
    conflict: list[str] = Field(description="conflict reasons; empty if none")
    bid: str | None
    explanation: dict[str, Any] | None = None


class AssignmentIn(AssignParams):
    """A solve request: every option of :class:`services.params.AssignParams` (the same
    fields and defaults as the command line's ``assign``), with a time limit bounded for a
    shared server."""

    time_limit: float | None = Field(
        default=None, gt=0, le=3600, description="seconds a solve may take (at most an hour)"
    )


class AssignmentOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    id: int
    venue_id: str
    job_id: int | None
    affinity_run_id: int | None
    state: Literal["draft", "deployed", "superseded"]
    parameters: dict[str, Any]
    summary: dict[str, Any]
    created_at: datetime
    deployed_at: datetime | None


class AssignedPairOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    paper_id: str
    reviewer_id: str
    score: float
    pinned: bool


class PairIn(BaseModel):
    paper_id: str = Field(min_length=1, max_length=300)
    reviewer_id: str = Field(min_length=1, max_length=300)
    reason: str = Field(default="", max_length=1000)


class PinIn(PairIn):
    force: bool = Field(
        default=False,
        description="pin even if the reviewer's max load or the paper's demand is exceeded",
    )


class SwapIn(BaseModel):
    paper_id: str = Field(min_length=1, max_length=300)
    remove_reviewer_id: str = Field(min_length=1, max_length=300)
    add_reviewer_id: str = Field(min_length=1, max_length=300)
    force: bool = False


class ConflictOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    paper_id: str
    reviewer_id: str
    source: str
    reason: str


class AuditOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    id: int
    venue_id: str | None
    actor: str
    action: str
    detail: dict[str, Any]
    at: datetime


class AssignmentStatsOut(BaseModel):
    load_histogram: dict[str, int] = Field(description="load -> number of reviewers with it")
    papers: Page[dict[str, Any]] = Field(description="per paper: demand, assigned, min/mean score")
    unassigned_reviewers: list[str]
    papers_below_demand: int
    summary: dict[str, Any]


class PaperReviewerOut(BaseModel):
    """A reviewer of a paper in an assignment, with their load there."""

    reviewer_id: str
    score: float
    pinned: bool = False
    rank: int | None = Field(default=None, description="alternates only: 1 = best")
    load: int = Field(description="papers the reviewer has in this assignment")
    max_load: int | None = Field(description="the reviewer's max load in this assignment")


class PaperAssignmentOut(BaseModel):
    """A paper's assigned reviewers and the next-best reviewers who could still take it."""

    paper_id: str
    demand: int | None
    assigned: list[PaperReviewerOut]
    alternates: list[PaperReviewerOut] = Field(
        description="unassigned, conflict-free stored candidates with load below their max, "
        "best score first (matching.alternates)"
    )
