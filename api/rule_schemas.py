"""Request and response bodies of a draft's own rules (pins, forbids, max loads and lifted
venue pins kept with one run until a chair promotes them to venue rules)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from reviewer_recommender.services.ids import IdText, ReviewerIdText, SafeText

# unpin: a venue pin this run lifts (a re-assignment's withdrawn reviewer or removed pair)
RuleKind = Literal["pin", "forbid", "max_load", "unpin"]


class DraftRuleOut(BaseModel):
    kind: RuleKind
    paper_id: str | None = Field(description="null for a max load")
    paper_title: str | None
    reviewer_id: str
    reviewer_name: str
    value: int | None = Field(description="a max load's value in this run")
    venue_value: int | None = Field(
        description="a max load's value at venue level (what other runs hold the reviewer to)"
    )
    reason: str
    created_by: str
    created_at: datetime


class RuleCountsOut(BaseModel):
    pin: int
    forbid: int
    max_load: int
    unpin: int = Field(description="venue pins lifted in this run")


class DraftRulesOut(BaseModel):
    assignment_id: int
    number: int | None
    items: list[DraftRuleOut]
    counts: RuleCountsOut
    total: int


class RuleKeyIn(BaseModel):
    kind: RuleKind
    paper_id: IdText | None = None
    reviewer_id: ReviewerIdText


class PromoteIn(BaseModel):
    rules: list[RuleKeyIn] | None = Field(
        default=None, description="the rules to promote; null or absent: all of the run's"
    )
    reason: SafeText = ""


class PromoteOut(BaseModel):
    assignment_id: int
    promoted: RuleCountsOut
    total: int


# ---- conflicts managed by the chairs ---------------------------------------------------------


class ConflictPolicyIn(BaseModel):
    """How the venue detects conflicts of interest from profiles."""

    model_config = ConfigDict(extra="forbid")

    coauthor_window_years: int | None = Field(
        default=3,
        ge=0,
        le=100,
        description="co-authorship counts when the publication is at most this many years "
        "old; null: any year",
    )
    coauthors: bool = Field(default=True, description="detect co-authors")
    same_institution: bool = Field(
        default=True, description="reviewer's affiliation is an author's"
    )
    same_email_domain: bool = Field(
        default=True, description="reviewer's e-mail domain is an author's (public mail excepted)"
    )


class ConflictPolicyValues(BaseModel):
    coauthor_window_years: int | None
    coauthors: bool
    same_institution: bool
    same_email_domain: bool


class StoredConflictCountsOut(BaseModel):
    detected: int
    uploaded: int
    declared: int


class ConflictPolicyOut(BaseModel):
    policy: ConflictPolicyValues
    stored: StoredConflictCountsOut = Field(description="conflict pairs stored now, by source")
    dismissed: int = Field(description="conflicts dismissed by a chair")


class ReasonCountsOut(BaseModel):
    author: int
    coauthor: int
    institution: int
    email_domain: int


class DetectedCountsOut(BaseModel):
    pairs: int
    by_reason: ReasonCountsOut = Field(description="pairs per reason (a pair may have several)")
    reviewers: int
    papers: int


class ConflictPolicyPreviewOut(BaseModel):
    policy: ConflictPolicyValues
    current_policy: ConflictPolicyValues
    counts: DetectedCountsOut = Field(description="what detection with the policy finds")
    stored_pairs: int = Field(description="detected pairs stored now")
    added: int = Field(description="pairs it detects that are not stored now")
    removed: int = Field(description="stored pairs it no longer detects")
    dismissed: int = Field(description="dismissed pairs it leaves out")


class ConflictReasonIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: SafeText = Field(default="", max_length=2000)


class DeclaredConflictIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    paper_id: IdText
    reviewer_id: ReviewerIdText
    reason: SafeText = Field(max_length=2000)


class ConflictChangeOut(BaseModel):
    paper_id: str
    reviewer_id: str
    sources: list[str]


class DismissedConflictOut(BaseModel):
    paper_id: str
    paper_title: str
    reviewer_id: str
    reviewer_name: str
    source: str
    conflict_reason: str
    reason: str
    dismissed_by: str
    dismissed_at: datetime


# ---- repairs that improve a paper ---------------------------------------------------------------


class RepairMoveOut(BaseModel):
    paper_id: str
    paper_title: str
    reviewer_id: str
    reviewer_name: str
    score: float


class RepairOut(BaseModel):
    reviewer_id: str
    reviewer_name: str
    score: float = Field(description="the candidate's score on the paper")
    load: int
    max_load: int
    feasible: bool = Field(description="a rearrangement within every quota brings them in")
    over_quota: bool = Field(description="only going over their quota brings them in")
    added: list[RepairMoveOut]
    removed: list[RepairMoveOut]
    paper_change: float | None = Field(description="score change on the paper")
    elsewhere_change: float | None = Field(description="exact score change on the other papers")
    net_change: float | None = Field(description="the total score change")
    papers_touched: int


class PaperRepairsOut(BaseModel):
    paper_id: str
    paper_title: str
    assigned: int
    demand: int
    weakest_score: float | None = Field(description="the paper's weakest unpinned reviewer")
    items: list[RepairOut]
    message: str | None = Field(description="why there is none, when there is none")


class RepairIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reviewer_id: ReviewerIdText
    version: int | None = Field(default=None, description="the draft version the chair saw")
    reason: SafeText = Field(default="", max_length=1000)


class ReoptimiseIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    paper_ids: list[IdText] = Field(min_length=1, max_length=500)
    name: SafeText = Field(default="", max_length=200)
