"""Request and response bodies (pydantic)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    computed_field,
    model_validator,
)

from recommender.affinity.params import ScoringParams
from reviewer_recommender.services.ids import (
    VENUE_ID_MAX_LENGTH,
    VENUE_ID_PATTERN,
    VENUE_ID_RULE,
    IdText,
    ReviewerIdText,
    SafeText,
)
from reviewer_recommender.services.params import (
    RequiredAttribute as RequiredAttribute,  # re-exported
)
from reviewer_recommender.services.pools import Pool
from reviewer_recommender.services.runinfo import (
    error_code,
    job_summary,
    log_entries,
    solve_summary,
)

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
    papers: int = Field(default=0, description="submissions in the venue")
    reviewers: int = Field(default=0, description="reviewers in the venue")
    solve_defaults: dict[str, Any] | None = Field(
        default=None,
        description="chairs: the solve form's defaults (reviewers_per_paper, min_load, "
        "max_load, fits), the max load raised to the smallest that fits the venue when the "
        "default does not; null for viewers",
    )
    live_assignments: dict[str, int] = Field(
        default_factory=dict,
        description="each pool's live assignment (reviewers, area_chairs, senior_area_chairs)",
    )
    pools: dict[str, int] = Field(
        default_factory=dict, description="how many persons each pool has"
    )
    bidding_open: bool = Field(
        default=False, description="whether persons may bid on their candidate papers now"
    )


class VenuePatchIn(BaseModel):
    """What a chair changes of a venue."""

    model_config = ConfigDict(extra="forbid")

    bidding_open: StrictBool | None = Field(
        default=None, description="open (true) or close (false) bidding"
    )


class TokenIn(BaseModel):
    name: SafeText = Field(min_length=1, max_length=200)
    role: Literal["chair", "viewer", "reviewer", "area_chair"] = Field(
        description="chair or viewer (admins), or a person's own token: reviewer or "
        "area_chair with person_id (admins and the venue's chairs)"
    )
    person_id: ReviewerIdText | None = Field(
        default=None,
        description="reviewer and area_chair tokens: the person of the venue (in the role's "
        "pool) the token speaks for",
    )
    expires_at: AwareDatetime | None = Field(
        default=None, description="when the token stops working (with a time zone)"
    )
    expires_in_days: float | None = Field(
        default=None, gt=0, le=3650, description="or: days from now until it stops working"
    )


class MeOut(BaseModel):
    """The calling token: its name, role and venue (None for a global admin)."""

    name: str
    role: Literal["admin", "chair", "viewer", "reviewer", "area_chair"]
    venue_id: str | None
    token_id: int | None = None
    expires_at: datetime | None = None
    person_id: str | None = Field(
        default=None, description="reviewer and area_chair tokens: the person it speaks for"
    )


class TokenOut(BaseModel):
    id: int
    name: str
    role: str
    venue_id: str | None
    prefix: str = Field(description="the secret's first characters, shown in listings")
    expires_at: datetime | None
    token: str = Field(description="the secret; shown once, only its hash is stored")
    person_id: str | None = Field(default=None, description="the person it speaks for")


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
    person_id: str | None = Field(default=None, description="the person it speaks for")


class LogEntryOut(BaseModel):
    time: str | None = Field(description="ISO 8601, UTC")
    level: Literal["info", "warning", "error"]
    message: str


class JobOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    id: int = Field(description="global id (what URLs take)")
    number: int | None = Field(description="1, 2, ... within the venue: job #number")
    venue_id: str
    kind: str
    state: Literal["queued", "running", "succeeded", "failed", "cancelled", "interrupted"]
    progress: float
    stage: str
    log: list[str] = Field(description="raw log lines; `entries` has them structured")
    params: dict[str, Any]
    result: dict[str, Any]
    error: str
    cancel_requested: bool
    rerun_of: int | None
    created_by: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None

    @computed_field(description="the log as {time, level, message} entries")  # type: ignore[prop-decorator]
    @property
    def entries(self) -> list[LogEntryOut]:
        return [LogEntryOut(**e) for e in log_entries(self.log, error=self.error)]

    @computed_field(description="the job's parameters in one line")  # type: ignore[prop-decorator]
    @property
    def parameters_summary(self) -> str:
        return job_summary(self.kind, self.params)

    @computed_field(  # type: ignore[prop-decorator]
        description="why it ended without a result: infeasible, stale_affinities, "
        "no_assignment, invalid_input, internal_error, failed, cancelled, interrupted; null "
        "otherwise"
    )
    @property
    def error_code(self) -> str | None:
        return error_code(self.state, self.error)


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
    pool: Pool = Field(
        default="reviewers",
        description="whose affinities: the persons of this pool against the submissions",
    )


class AffinityModelsOut(BaseModel):
    """Embedding models this server is configured with (``ScoringParams.model``)."""

    models: list[str]
    default: str
    defaults: ScoringParams = Field(description="the default scoring parameters")


class AffinityRunOut(BaseModel):
    """The venue's latest affinity run; while there is none (a normal state), ``state`` is
    ``none`` and the run's fields are null."""

    model_config = ConfigDict(from_attributes=True)
    state: Literal["none", "current", "stale"] = Field(
        default="current",
        description="none: no scores yet; stale: reviewers or submissions were uploaded since",
    )
    id: int | None
    job_id: int | None
    config: dict[str, Any] | None
    n_papers: int | None
    n_reviewers: int | None
    top_n: int | None
    statistics: dict[str, Any] | None
    stale: bool = Field(description="reviewers or submissions were uploaded since this run")
    created_at: datetime | None
    pool: str = Field(default="reviewers", description="whose affinities they are")


class AssignmentOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    id: int = Field(description="global id (what URLs take)")
    number: int | None = Field(description="1, 2, ... within the venue: run #number")
    name: str = Field(description="the chairs' name for the run (editable)")
    note: str = Field(description="the chairs' note on the run (editable)")
    derived_from: dict[str, Any] | None = Field(
        description="lineage: {kind: re-solve, assignment_id, assignment_number, text} or "
        "{kind: rerun, job_id, job_number, text}; null for a fresh solve"
    )
    pool: str = Field(
        default="reviewers",
        description="whose assignment: reviewers, area_chairs, or senior_area_chairs "
        "(senior area chairs to area chairs: its pairs' paper_id is the area chair's id)",
    )
    venue_id: str
    job_id: int | None
    job_number: int | None = Field(default=None, description="the solve job's venue number")
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

    @computed_field(description="the solve's options in one line")  # type: ignore[prop-decorator]
    @property
    def parameters_summary(self) -> str:
        return solve_summary(self.parameters)


class RunLabelIn(BaseModel):
    """A run's name and note; a field left out keeps its value."""

    name: SafeText | None = Field(default=None, max_length=200)
    note: SafeText | None = Field(default=None, max_length=5000)


class AssignedPairOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    paper_id: str
    paper_title: str = ""
    reviewer_id: str
    reviewer_name: str = ""
    score: float
    pinned: bool
    withdrawn: Literal["paper", "reviewer"] | None = Field(
        default=None, description="the paper or the reviewer is withdrawn: the pair is to go"
    )


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
    paper_title: str = ""
    reviewer_id: str | None
    reviewer_name: str = ""
    detail: str


class CheckOut(BaseModel):
    """A run against the venue's current hard constraints (what publishing checks)."""

    assignment_id: int
    version: int
    state: str
    total: int
    limit: int = 1000
    offset: int = 0
    violations: list[ViolationOut] = Field(description="violations[offset:offset + limit]")


class PaperDemandOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    paper_id: str
    paper_title: str = ""
    demand: int


class ReviewerMaxLoadOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    reviewer_id: str
    reviewer_name: str = ""
    max_load: int


class ConflictOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    paper_id: str
    paper_title: str = ""
    reviewer_id: str
    reviewer_name: str = ""
    source: Literal["detected", "uploaded", "bid", "forbid"] | str
    reason: str


class AuditOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    id: int
    venue_id: str | None
    actor: str
    action: str
    summary: str = Field(default="", description="the entry in one sentence")
    detail: dict[str, Any]
    at: datetime


class PaperScoresOut(BaseModel):
    """Per paper (all of them, one list each): the lowest and the mean assigned score, null
    for a paper without a pair; rounded to 4 decimals (for charts)."""

    min: list[float | None]
    mean: list[float | None]


class AssignmentStatsOut(BaseModel):
    load_histogram: dict[str, int] = Field(description="load -> number of reviewers with it")
    papers: Page[dict[str, Any]] = Field(
        description="per paper: paper_id, paper_title, demand, assigned, min/mean score"
    )
    paper_scores: PaperScoresOut = Field(
        description="every paper's lowest and mean assigned score, in the order of papers"
    )
    unassigned_reviewers: list[str]
    papers_below_demand: int
    summary: dict[str, Any]


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
    pool: Pool = Field(default="reviewers", description="whose live run (reviewers by default)")
