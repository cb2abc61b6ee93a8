"""Request and response bodies of the chair page's resources (docs/page-api.md): search,
the edge browser, edits with preview and undo, bulk changes, pair-level comparison,
statistics, the capacity check."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from api.schemas import AssignmentOut, Page, ViolationOut
from reviewer_recommender.services.ids import IdText, ReviewerIdText, SafeText

# ---- search ---------------------------------------------------------------------------------

Match = Literal["id", "id_prefix", "prefix", "word", "substring"]


class PaperHit(BaseModel):
    id: str
    title: str
    match: Match = Field(
        description="how it matched, best first: id, id_prefix, prefix, word, substring"
    )


class ReviewerHit(BaseModel):
    id: str
    name: str = Field(description="display name")
    affiliation: str
    match: Match


# ---- edge browser ---------------------------------------------------------------------------


class EdgeOut(BaseModel):
    """A (paper, reviewer) pair seen from a run: assigned or a stored candidate."""

    paper_id: str
    paper_title: str
    reviewer_id: str
    reviewer_name: str
    score: float | None = Field(description="the stored affinity (null: not scored)")
    assigned: bool
    pinned: bool = Field(description="required in every re-solve (a pin)")
    forbidden: bool | None = Field(description="forbidden by a chair; null for viewers")
    bid: str | None = Field(description="the reviewer's bid; null if none or not visible")
    conflict: list[str] | None = Field(
        description="conflict reasons (empty if none); null for viewers"
    )
    reviewer_load: int = Field(description="papers the reviewer has in this run")
    reviewer_max_load: int
    paper_assigned: int = Field(description="reviewers the paper has in this run")
    paper_demand: int
    can_add: bool | None = Field(
        description="unassigned, no conflict, reviewer below max load and paper below demand "
        "(a swap may still work when the paper is full); null for viewers"
    )
    explanation_url: str = Field(description="GET this path for the score's evidence")


class PaperBrief(BaseModel):
    id: str
    title: str
    demand: int
    assigned: int


class ReviewerBrief(BaseModel):
    id: str
    name: str
    load: int
    min_load: int
    max_load: int


class PaperEdgesOut(Page[EdgeOut]):
    paper: PaperBrief


class ReviewerEdgesOut(Page[EdgeOut]):
    reviewer: ReviewerBrief


# ---- edits ----------------------------------------------------------------------------------

EditAction = Literal["pin", "unpin", "forbid", "unforbid", "swap", "assign", "remove"]


class EditIn(BaseModel):
    """One edit of a draft. ``pin``: add the pair and require it in every re-solve;
    ``unpin``; ``forbid``: remove it and exclude it from every re-solve; ``unforbid``;
    ``swap``: ``remove_reviewer_id`` out, ``reviewer_id`` in (a forbid plus a pin);
    ``assign``: add to this draft only; ``remove``: drop from this draft only."""

    action: EditAction
    paper_id: IdText
    reviewer_id: ReviewerIdText = Field(description="the reviewer added (swap: the incoming one)")
    remove_reviewer_id: ReviewerIdText | None = Field(
        default=None, description="swap only: the reviewer taken out"
    )
    reason: SafeText = Field(default="", max_length=1000)
    force: bool = Field(default=False, description="add even over a max load or a paper's demand")
    version: int | None = Field(
        default=None,
        ge=1,
        le=2**31 - 1,
        description="the run's version the chair looked at (409 stale_version if it moved)",
    )


class EditPairOut(BaseModel):
    paper_id: str
    paper_title: str
    reviewer_id: str
    reviewer_name: str
    score: float | None
    pinned: bool


class LoadChangeOut(BaseModel):
    reviewer_id: str
    reviewer_name: str
    before: int
    after: int
    max_load: int


class PaperChangeCountOut(BaseModel):
    paper_id: str
    paper_title: str
    before: int
    after: int
    demand: int


class ConstraintChangesOut(BaseModel):
    pins_added: int
    pins_removed: int
    forbids_added: int
    forbids_removed: int


class EditEffectOut(BaseModel):
    """What a change does (or would do) to a draft."""

    action: str
    allowed: bool = Field(description="false: it would be refused (see code and detail)")
    code: str | None = Field(description="the refusal's error code, if refused")
    detail: Any = Field(description="the refusal in words, if refused")
    force_allowed: bool = Field(
        description="refused only for breaking a limit: sending force applies the effect shown"
    )
    added: list[EditPairOut]
    added_total: int
    removed: list[EditPairOut]
    removed_total: int
    objective_before: float
    objective_after: float
    objective_change: float
    loads: list[LoadChangeOut] = Field(description="reviewers whose load changes")
    papers: list[PaperChangeCountOut] = Field(description="papers whose reviewer count changes")
    constraints: ConstraintChangesOut = Field(description="standing pins and forbids changed")
    violations_before: int | None = Field(description="hard constraints the run breaks now")
    violations_after: int | None
    violations_new: list[ViolationOut] = Field(
        description="hard constraints the change breaks, each named (the first 50)"
    )
    violations_new_total: int
    violations_fixed: list[ViolationOut] = Field(
        description="hard constraints broken before that the change mends (the first 50)"
    )
    violations_fixed_total: int
    warnings: list[str]
    version: int = Field(description="the run's version (after the change when applied)")


class EditOut(BaseModel):
    """An entry of a run's edit history."""

    id: int
    seq: int = Field(description="1, 2, ... within the run")
    action: str = Field(description="an edit action, or bulk")
    paper_id: str | None
    paper_title: str
    reviewer_id: str | None
    reviewer_name: str
    remove_reviewer_id: str | None
    remove_reviewer_name: str
    rows: int = Field(description="rows of a bulk change (1 for an edit)")
    reason: str
    detail: dict[str, Any]
    actor: str
    at: datetime
    version_before: int
    version_after: int
    objective_change: float | None
    summary: str = Field(description="the edit in one sentence")
    undone: bool
    undone_at: datetime | None
    undone_by: str


class EditResultOut(BaseModel):
    edit: EditOut
    effect: EditEffectOut
    assignment: AssignmentOut
    skipped: list[BulkProblemOut] = Field(
        default_factory=list, description="a bulk file's lines that did not apply, with why"
    )


class UndoIn(BaseModel):
    version: int = Field(
        ge=1, le=2**31 - 1, description="the run's current version (409 stale_version if not)"
    )
    reason: SafeText = Field(default="", max_length=1000)


class PinOut(BaseModel):
    paper_id: str
    paper_title: str
    reviewer_id: str
    reviewer_name: str
    created_by: str


class ForbidOut(BaseModel):
    paper_id: str
    paper_title: str
    reviewer_id: str
    reviewer_name: str
    reason: str


class DeletedOut(BaseModel):
    deleted: int


# ---- bulk changes ---------------------------------------------------------------------------


class BulkRowOut(BaseModel):
    line: int
    action: str
    paper_id: str
    paper_title: str
    reviewer_id: str
    reviewer_name: str
    score: float | None


class BulkProblemOut(BaseModel):
    line: int | None = Field(description="line of the file (1 = first line); null: whole file")
    field: str | None
    code: str
    message: str


class BulkWarningOut(BaseModel):
    line: int | None
    code: str
    message: str
    force_required: bool = Field(description="applying needs force=true")


class BulkPreviewOut(BaseModel):
    """What applying a bulk change file would do, row by row."""

    version: int = Field(description="the run's version this preview is for (send it to apply)")
    rows: int = Field(description="the file's change lines (blank lines and header left out)")
    applied_rows: int = Field(description="the lines that would apply")
    skipped_lines: int = Field(description="the lines that would be skipped (``errors``)")
    additions: Page[BulkRowOut]
    removals: Page[BulkRowOut]
    constraint_changes: Page[BulkRowOut] = Field(description="pin, unpin, forbid, unforbid rows")
    errors: Page[BulkProblemOut] = Field(
        description="lines skipped, each with why: the others apply (HotCRP style)"
    )
    warnings: Page[BulkWarningOut]
    effect: EditEffectOut | None = Field(description="null when no line changes the run")
    can_apply: bool
    force_required: bool


# ---- comparing runs ---------------------------------------------------------------------------


class RunBrief(BaseModel):
    id: int
    number: int | None
    name: str
    state: str
    version: int


class CompareOut(BaseModel):
    a: RunBrief
    b: RunBrief
    pairs_a: int
    pairs_b: int
    shared: int
    added: int = Field(description="pairs in b only")
    removed: int = Field(description="pairs in a only")
    papers_changed: int
    reviewers_changed: int
    objective_a: float
    objective_b: float
    objective_change: float
    mean_score_a: float | None
    mean_score_b: float | None


class PairChangeOut(BaseModel):
    paper_id: str
    paper_title: str
    reviewer_id: str
    reviewer_name: str
    change: Literal["added", "removed"]
    score: float


class ChangedReviewerOut(BaseModel):
    reviewer_id: str
    reviewer_name: str
    score: float


class ChangedPaperOut(BaseModel):
    paper_id: str
    paper_title: str
    score: float


class PaperDiffOut(BaseModel):
    paper_id: str
    paper_title: str
    added: list[ChangedReviewerOut]
    removed: list[ChangedReviewerOut]
    kept: int
    mean_score_a: float | None
    mean_score_b: float | None


class ReviewerDiffOut(BaseModel):
    reviewer_id: str
    reviewer_name: str
    load_a: int
    load_b: int
    added: list[ChangedPaperOut]
    removed: list[ChangedPaperOut]


# ---- statistics -------------------------------------------------------------------------------


class BidCountOut(BaseModel):
    label: str
    bid: float | None
    count: int


class BidOverviewOut(BaseModel):
    total: int
    papers: int = Field(description="papers with at least one bid")
    reviewers: int = Field(description="reviewers with at least one bid")
    by_label: list[BidCountOut]


class AssignedBidOut(BaseModel):
    label: str
    bid: float | None
    assigned: int


class AssignmentBidsOut(BaseModel):
    pairs: int
    by_label: list[AssignedBidOut]
    no_bid: int = Field(description="assigned pairs without a bid")


class PaperStatOut(BaseModel):
    paper_id: str
    paper_title: str
    demand: int
    assigned: int
    missing: int = Field(description="demand minus assigned, at least 0")
    min_score: float | None
    mean_score: float | None


class ReviewerLoadOut(BaseModel):
    reviewer_id: str
    reviewer_name: str
    load: int
    min_load: int
    max_load: int
    stored_max_load: int | None = Field(
        description="the venue's stored max load (quota) of the reviewer; null if none or "
        "for viewers"
    )
    draft_max_load: int | None = Field(
        default=None,
        description="this run's own max load of the reviewer (a re-assignment's withdrawal), "
        "over the venue's; null if none or for viewers",
    )
    slack: int = Field(description="max_load - load (negative: over the quota)")
    mean_score: float | None


class HistogramOut(BaseModel):
    count: int
    min: float | None
    max: float | None
    mean: float | None
    edges: list[float]
    counts: list[int]


# ---- capacity ---------------------------------------------------------------------------------


class CapacityOut(BaseModel):
    """Whether a solve can fit by counting alone (the same count as a solve's refusal)."""

    fits: bool
    papers: int
    reviewers: int
    demand_total: int = Field(description="reviews needed (stored demands counted)")
    capacity_total: int = Field(
        description="reviews the reviewers can take (stored max loads counted)"
    )
    min_load_total: int
    stored_demands: int
    stored_max_loads: int
    shortfall: int
    smallest_max_load: int | None = Field(
        description="least default max load that fits; null when stored max loads alone decide"
    )
    message: str | None = Field(description="why it cannot fit, in words; null when it fits")


class SolveDefaultsOut(BaseModel):
    reviewers_per_paper: int
    min_load: int
    max_load: int = Field(description="the default, raised to the smallest that fits if needed")
    fits: bool = Field(description="whether these defaults fit by counting")


class ReoptimiseOut(BaseModel):
    assignment: AssignmentOut = Field(description="the new draft")
    papers: int
    added: int
    removed: int
    objective_change: float = Field(description="score change on the papers re-optimised")
