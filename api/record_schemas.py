"""Bodies of a venue's records (persons and submissions: listed, edited, withdrawn, taken out
of a pool) and of their uploads (the answer and the replace preview)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from reviewer_recommender.services.ids import SafeText


class ReviewerOut(BaseModel):
    id: str
    name: str
    display_name: str = Field(
        default="",
        description="what to call the reviewer: name, else the name in an OpenReview "
        "profile id, else the id",
    )
    email: str
    affiliation: str
    attributes: dict[str, str]
    n_publications: int
    no_publications: bool = Field(
        default=False, description="flagged: no publications, so no profile to score against"
    )
    pools: list[str] = Field(default_factory=list, description="the pools the person belongs to")
    status: Literal["active", "withdrawn"] = Field(
        default="active", description="withdrawn: kept with its history, takes no paper"
    )


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
    status: Literal["active", "withdrawn"] = Field(
        default="active", description="withdrawn: kept with its history, needs nobody"
    )


class ReviewerEditIn(BaseModel):
    """The fields of a person to change (absent: kept)."""

    model_config = ConfigDict(extra="forbid")
    name: SafeText | None = Field(default=None, max_length=300)
    email: SafeText | None = Field(default=None, max_length=300)
    affiliation: SafeText | None = Field(default=None, max_length=500)


class SubmissionEditIn(BaseModel):
    """The fields of a submission to change (absent: kept)."""

    model_config = ConfigDict(extra="forbid")
    title: SafeText | None = Field(default=None, min_length=1, max_length=1000)
    abstract: SafeText | None = Field(default=None, max_length=50000)


class WithdrawIn(BaseModel):
    reason: SafeText = Field(default="", max_length=1000)


class RunPairsOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    assignment_id: int
    number: int | None
    state: str
    pool: str
    pairs: list[tuple[str, str]] = Field(description="[paper_id, reviewer_id] of the record")


class PoolLeaveOut(BaseModel):
    """A person taken out of one pool: the pools they are in now, and the draft runs of
    that pool still holding their pairs (their checks flag those pairs as to be removed)."""

    model_config = ConfigDict(from_attributes=True)
    id: str
    pool: str
    pools: list[str]
    runs: list[RunPairsOut]


class RecordChangeOut(BaseModel):
    """A record's status after a withdraw or restore, the draft and live runs holding its
    pairs, and per live run the body of an emergency re-assignment without it
    (``POST /venues/{venue_id}/assignments/live/reassign``)."""

    model_config = ConfigDict(from_attributes=True)
    kind: Literal["papers", "reviewers"]
    id: str
    status: Literal["active", "withdrawn"]
    runs: list[RunPairsOut]
    reassign: list[dict[str, Any]]


class SkippedLineOut(BaseModel):
    line: int | None
    field: str | None
    message: str


class UploadResult(BaseModel):
    created: int
    updated: int
    total: int = Field(description="items of this kind now in the venue")
    no_publications: list[str] = Field(
        default_factory=list,
        description="persons of the upload without publications: flagged, nothing to score",
    )
    withdrawn: int = Field(
        default=0, description="records a confirmed replacing upload withdrew (withdraw_absent)"
    )
    left_pool: int = Field(
        default=0,
        description="persons a confirmed replacing upload took out of its pool only: they "
        "are in another pool too, where they stay",
    )
    skipped: list[SkippedLineOut] = Field(
        default_factory=list,
        description="lines of a bids, constraints, demand or max-load file left out, each "
        "with why (a line may have several); the others applied",
    )
    skipped_lines: int = Field(
        default=0, description="how many lines were skipped (the audit entry's skipped_lines)"
    )


class UploadPreviewOut(BaseModel):
    """What a reviewers or submissions upload would change; ``*_ids`` list the first 100
    of each group, the counts count all."""

    model_config = ConfigDict(from_attributes=True)
    kind: Literal["reviewers", "submissions"]
    pool: str | None
    rows: int = Field(description="records in the file")
    added: int
    changed: int
    unchanged: int
    removed: int = Field(
        description="active records (of the pool) the file leaves out, taken away when the "
        "upload is confirmed with withdraw_absent: withdrawing + leaving_pool"
    )
    withdrawing: int = Field(
        description="of the removed, those withdrawn by the replace: submissions, and "
        "persons whose only pool this is (the answer's withdrawn)"
    )
    leaving_pool: int = Field(
        description="of the removed, persons in another pool too: the replace takes them "
        "out of this pool only (the answer's left_pool)"
    )
    leaving_pool_ids: list[str]
    leaving_assigned: list[str] = Field(
        description="persons leaving the pool whom its live run assigns: the replace is "
        "refused (409 member_assigned_live) until that run is re-assigned without them"
    )
    added_ids: list[str]
    changed_ids: list[str]
    removed_ids: list[str]
    changed_fields: dict[str, int] = Field(description="changed records per field")
    no_publications: list[str]
    withdrawn_named: list[str] = Field(
        description="withdrawn records the file names: they stay withdrawn (restore them apart)"
    )
    token: str = Field(description="confirms this file on the venue as it is (preview=)")
