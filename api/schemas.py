"""Request and response bodies (pydantic)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from api.ids import (
    VENUE_ID_MAX_LENGTH,
    VENUE_ID_PATTERN,
    VENUE_ID_RULE,
    IdText,
    ReviewerIdText,
    SafeText,
)
from recommender.affinity.params import ScoringParams
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
    id: str = Field(
        min_length=1,
        max_length=VENUE_ID_MAX_LENGTH,
        pattern=VENUE_ID_PATTERN,
        description=f"venue id: {VENUE_ID_RULE}",
    )
    name: SafeText = Field(default="", max_length=300)


class VenueOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    id: str
    name: str
    created_at: datetime
    live_assignment_id: int | None = Field(
        default=None, description="the venue's live (published) assignment, if any"
    )


class TokenIn(BaseModel):
    name: SafeText = Field(min_length=1, max_length=200)
    role: Literal["chair", "viewer"]
    expires_at: AwareDatetime | None = Field(
        default=None, description="when the token stops working (with a time zone)"
    )
    expires_in_days: float | None = Field(
        default=None, gt=0, le=3650, description="or: days from now until it stops working"
    )


class MeOut(BaseModel):
    """The calling token: its name, role and venue (None for a global admin)."""

    name: str
    role: Literal["admin", "chair", "viewer"]
    venue_id: str | None
    token_id: int | None = None
    expires_at: datetime | None = None


class TokenOut(BaseModel):
    id: int
    name: str
    role: str
    venue_id: str | None
    prefix: str = Field(description="the secret's first characters, shown in listings")
    expires_at: datetime | None
    token: str = Field(description="the secret; shown once, only its hash is stored")


class TokenInfoOut(BaseModel):
    """A token as listed: never its secret, only its prefix."""

    id: int
    name: str
    role: str
    venue_id: str | None
    prefix: str = Field(description="the secret's first characters; empty for old tokens")
    state: Literal["active", "revoked", "expired"]
    created_at: datetime
    created_by: str
    expires_at: datetime | None
    revoked_at: datetime | None
    revoked_by: str


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
    conflict: list[str] | None = Field(
        description="conflict reasons, empty if none; null for roles that do not see them"
    )
    bid: str | None = Field(description="the reviewer's bid; null if none or not visible")
    explanation: dict[str, Any] | None = None


class RequiredAttributeIn(RequiredAttribute):
    """:class:`services.params.RequiredAttribute` with the service's text rule on its name
    and value (no control characters)."""

    name: SafeText = Field(min_length=1, max_length=200)
    value: SafeText = Field(max_length=1000)


Count = Annotated[int, Field(ge=0, le=100_000)]


class AssignmentIn(AssignParams):
    """A solve request: every option of :class:`services.params.AssignParams` (the same
    fields and defaults as the command line's ``assign``), with the service's id and text
    rules on map keys (a reviewer id's leading ``~`` dropped, as uploads do), finite numbers
    only, and a time limit bounded for a shared server."""

    demand: dict[IdText, Count] = Field(
        default_factory=dict,
        description="paper id -> reviewers it needs, overriding reviewers_per_paper; the "
        "venue's stored paper demands win over it",
        max_length=1_000_000,
    )
    custom_max_load: dict[ReviewerIdText, Count] = Field(
        default_factory=dict,
        description="reviewer id -> max load overriding max_load; the venue's stored "
        "reviewer max loads win over it",
        max_length=1_000_000,
    )
    time_limit: float | None = Field(
        default=None, gt=0, le=3600, description="seconds a solve may take (at most an hour)"
    )
    min_score: float | None = Field(
        default=None,
        allow_inf_nan=False,
        description="never assign a (non-pinned) pair scoring below this",
    )
    require_attribute: RequiredAttributeIn | None = None


class AssignmentOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    id: int
    venue_id: str
    job_id: int | None
    affinity_run_id: int | None
    state: Literal["draft", "live", "superseded"] = Field(
        description="draft (chairs only, editable), live (published: what viewers see; one "
        "per venue) or superseded (was live; publishing it again is a rollback)"
    )
    version: int = Field(description="bumped by every edit; publishing names it")
    parameters: dict[str, Any]
    summary: dict[str, Any]
    created_at: datetime
    deployed_at: datetime | None = Field(description="when it last went live")
    deployed_by: str = Field(description="who last published it")
    superseded_at: datetime | None


class AssignedPairOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    paper_id: str
    reviewer_id: str
    score: float
    pinned: bool


class PairIn(BaseModel):
    paper_id: IdText
    reviewer_id: ReviewerIdText
    reason: SafeText = Field(default="", max_length=1000)


class PinIn(PairIn):
    force: bool = Field(
        default=False,
        description="pin even if the reviewer's max load or the paper's demand is exceeded",
    )


class SwapIn(BaseModel):
    """Replace a reviewer of a paper: stored as a forbid of the old pair and a pin of the
    new one, so every later solve keeps the swap."""

    paper_id: IdText
    remove_reviewer_id: ReviewerIdText
    add_reviewer_id: ReviewerIdText
    reason: SafeText = Field(default="", max_length=1000)
    force: bool = False


class OverrideIn(BaseModel):
    """Publish despite one listed violation: a pair (paper and reviewer), a reviewer's load
    (reviewer only) or a paper's demand (paper only), with the chair's reason."""

    paper_id: IdText | None = None
    reviewer_id: ReviewerIdText | None = None
    reason: SafeText = Field(min_length=1, max_length=1000)

    @model_validator(mode="after")
    def _names_something(self) -> OverrideIn:
        if self.paper_id is None and self.reviewer_id is None:
            raise ValueError("an override names a paper, a reviewer or both")
        return self


class DeployIn(BaseModel):
    """The chair's confirmation: the run and the version they reviewed, and an override
    for each hard constraint it breaks that they publish anyway."""

    assignment_id: int = Field(ge=1, le=2**31 - 1)
    version: int = Field(ge=1, le=2**31 - 1)
    overrides: list[OverrideIn] = Field(default_factory=list, max_length=100_000)


class ViolationOut(BaseModel):
    kind: Literal["conflict", "bid", "forbid", "pin", "max_load", "min_load", "demand"]
    paper_id: str | None
    reviewer_id: str | None
    detail: str


class CheckOut(BaseModel):
    """A run against the venue's current hard constraints (what publishing checks)."""

    assignment_id: int
    version: int
    state: str
    total: int
    violations: list[ViolationOut]


class PaperDemandOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    paper_id: str
    demand: int


class ReviewerMaxLoadOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    reviewer_id: str
    max_load: int


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


class RandomnessMetricOut(BaseModel):
    """One row of a randomized run's randomness table (definitions: matching.randomness)."""

    name: Literal[
        "quality_ratio",
        "max_probability",
        "avg_max_probability",
        "l2_norm",
        "entropy",
        "support_size",
    ]
    label: str
    description: str
    randomized: int | float | None = Field(description="the figure of the randomized run")
    deterministic: int | float | None = Field(
        description="the same figure for the best deterministic assignment"
    )


class RandomnessOut(BaseModel):
    """How random a run is: the metrics of the distribution it was sampled from, side by
    side with the best deterministic assignment's (an empty table for deterministic runs)."""

    assignment_id: int
    randomized: bool
    solver: str | None = None
    perturbation: float | None = Field(default=None, description="beta, perturbed runs")
    probability_cap: float | None = None
    seed: int | None = None
    expected_objective: float | None = Field(
        default=None, description="expected total affinity of a sample"
    )
    deterministic_optimum: float | None = Field(
        default=None, description="total affinity of the best deterministic assignment"
    )
    sample_objective: float | None = Field(
        default=None, description="total affinity of the sample this run holds (before edits)"
    )
    after_edits: str | None = Field(
        default=None, description="set when the run was edited after it was sampled"
    )
    message: str
    metrics: list[RandomnessMetricOut]


class PairRefIn(BaseModel):
    paper_id: IdText
    reviewer_id: ReviewerIdText


class ReassignIn(BaseModel):
    """An emergency re-assignment of the live run: reviewers who withdrew and pairs that
    must go. Both are stored as standing constraints (max load 0, a chair's forbid)."""

    model_config = ConfigDict(extra="forbid")

    withdraw: list[ReviewerIdText] = Field(default_factory=list, max_length=10_000)
    remove: list[PairRefIn] = Field(default_factory=list, max_length=100_000)
    reason: SafeText = Field(default="", max_length=1000)


class ChangedPairOut(BaseModel):
    paper_id: str
    reviewer_id: str
    score: float | None
    reason: str = Field(
        description="added: 'fills a vacated slot'; removed: withdrawn, removed, conflict "
        "(a conflict or Not Willing bid now) or moved (needed to fill a short paper)"
    )


class ReassignOut(BaseModel):
    """The new draft, and what changed against the live run it derives from."""

    assignment: AssignmentOut
    derived_from: int = Field(description="the live run the draft was derived from")
    stage: Literal["fill", "moves"] = Field(
        description="fill: every other live pair kept, only vacated slots filled; moves: "
        "that was impossible, the fewest live pairs were moved"
    )
    kept: int
    added: list[ChangedPairOut]
    removed: list[ChangedPairOut]
    objective: float
    minimality: str
    warnings: list[str]
