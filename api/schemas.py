"""Request and response bodies (pydantic)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from recommender.affinity.params import ScoringParams

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
    """An affinity computation: scoring parameters only (the server decides where files
    live, which device runs and with what memory; the model is named, among
    ``GET /affinity/models``)."""

    model_config = ConfigDict(extra="forbid")

    config: ScoringParams = Field(
        default_factory=ScoringParams,
        description="scoring parameters (recommender.affinity.ScoringParams); omitted "
        "fields take the defaults, the same as the command line's",
    )
    top_n: int | None = Field(
        default=None, ge=1, le=10_000, description="scores kept per paper and per reviewer"
    )


class AffinityModelsOut(BaseModel):
    """Embedding models this server is configured with (``ScoringParams.model``)."""

    models: list[str]
    default: str
    defaults: ScoringParams = Field(description="the default scoring parameters")


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


class RequiredAttribute(BaseModel):
    """Each paper gets at least ``min_count`` reviewers with attribute ``name`` = ``value``."""

    name: str = Field(min_length=1, max_length=200)
    value: str = Field(max_length=1000)
    min_count: int = Field(default=1, ge=0, le=1000)


class AssignmentIn(BaseModel):
    reviewers_per_paper: int = Field(default=3, ge=0, le=1000)
    min_load: int = Field(default=0, ge=0, le=10_000)
    max_load: int = Field(default=6, ge=0, le=100_000)
    custom_max_load: dict[str, int] = Field(
        default_factory=dict, description="reviewer id -> max load overriding max_load"
    )
    solver: str = Field(default="auto", max_length=50)
    time_limit: float | None = Field(default=None, gt=0, le=3600)
    seed: int | None = Field(default=None, ge=0, le=2**31 - 1)
    options: dict[str, Any] = Field(
        default_factory=dict, description='solver constructor options, e.g. {"backend": "cbc"}'
    )
    min_score: float | None = Field(
        default=None, description="never assign a (non-pinned) pair scoring below this"
    )
    max_per_affiliation: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="at most this many reviewers of one affiliation per paper",
    )
    fairness_keep: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="max-min fairness over papers first, keeping this share of the best minimum",
    )
    require_attribute: RequiredAttribute | None = None


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
