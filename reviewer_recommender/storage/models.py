"""Database tables (SQLAlchemy 2.0 declarative). Every venue-owned row carries ``venue_id``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    Text,
    text,
)
from sqlalchemy.engine.default import DefaultExecutionContext as ExecutionContext
from sqlalchemy.orm import DeclarativeBase, Mapped, MappedColumn, mapped_column, relationship

from reviewer_recommender.storage.search_keys import display_name
from reviewer_recommender.storage.search_keys import id_key as fold_id
from reviewer_recommender.storage.search_keys import text_key as fold_text


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON}  # noqa: RUF012


def venue_fk() -> ForeignKey:
    return ForeignKey("venues.id", ondelete="CASCADE")


def _id_key_default(context: ExecutionContext) -> str:
    return fold_id(str(context.get_current_parameters().get("id") or ""))


def _reviewer_key_default(context: ExecutionContext) -> str:
    values = context.get_current_parameters()
    return fold_text(display_name(str(values.get("id") or ""), values.get("name")))


def _submission_key_default(context: ExecutionContext) -> str:
    return fold_text(str(context.get_current_parameters().get("title") or ""))


def status_index(table: str) -> Index:
    """The venue's withdrawn records of ``table`` without reading every row (the limits of
    every edit, the Data tab's counts)."""
    return Index(f"ix_{table}_status", "venue_id", "status")


def search_indexes(table: str) -> tuple[Index, Index]:
    """Type-ahead search of ``table``: an id-prefix index and a covering index over the
    name/title key (PostgreSQL: ``text_pattern_ops``, so ``LIKE 'q%'`` uses it whatever
    the database collation)."""
    return (
        Index(
            f"ix_{table}_id_key",
            "venue_id",
            "id_key",
            postgresql_ops={"id_key": "text_pattern_ops"},
        ),
        Index(
            f"ix_{table}_text_key",
            "venue_id",
            "text_key",
            "id_key",
            "id",
            postgresql_ops={"text_key": "text_pattern_ops"},
        ),
    )


class Venue(Base):
    __tablename__ = "venues"

    id: Mapped[str] = mapped_column(String(100), primary_key=True)
    name: Mapped[str] = mapped_column(String(300), default="")
    # bumped by every upload that changes reviewers or submissions: tells runs they are stale
    corpus_version: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # persons bid on their candidate papers only while the chairs keep bidding open
    bidding_open: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))


# The pools a venue's persons belong to (one or more each): the level they are assigned at.
POOLS = ("reviewers", "area_chairs", "senior_area_chairs")
DEFAULT_POOL = "reviewers"


# A record's lifecycle: ``active``, or ``withdrawn`` (kept, with its history, but no longer
# assignable: a withdrawn paper needs nobody, a withdrawn person takes no paper).
RECORD_STATUSES = ("active", "withdrawn")


def status_column() -> MappedColumn[str]:
    return mapped_column(String(20), default="active", server_default="active")


def pool_column() -> MappedColumn[str]:
    """The pool a row belongs to; rows made before pools existed are the reviewers'."""
    return mapped_column(String(30), default=DEFAULT_POOL, server_default=DEFAULT_POOL)


class ApiToken(Base):
    """An API token: only the sha256 of its secret is stored. ``venue_id`` None = global.

    ``prefix`` is the secret's first characters (not enough to use it): it lets people tell
    tokens apart in listings. Tokens created before prefixes existed have ``""``.
    ``person_id``: the person of the venue a ``reviewer`` or ``area_chair`` token speaks for
    (None for the other roles)."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16), default="", index=True)
    name: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(20))
    venue_id: Mapped[str | None] = mapped_column(venue_fk(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    created_by: Mapped[str] = mapped_column(String(200), default="")
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    revoked_by: Mapped[str] = mapped_column(String(200), default="")
    person_id: Mapped[str | None] = mapped_column(String(300), nullable=True)


class ReviewerRow(Base):
    __tablename__ = "reviewers"
    __table_args__ = (*search_indexes("reviewers"), status_index("reviewers"))

    venue_id: Mapped[str] = mapped_column(venue_fk(), primary_key=True)
    id: Mapped[str] = mapped_column(String(300), primary_key=True)
    name: Mapped[str] = mapped_column(Text, default="")
    email: Mapped[str] = mapped_column(Text, default="")
    affiliation: Mapped[str] = mapped_column(Text, default="")
    attributes: Mapped[dict[str, Any]] = mapped_column(default=dict)
    publications: Mapped[list[Any]] = mapped_column(default=list)
    status: Mapped[str] = status_column()
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # search keys (api.search_keys): the folded id, and the folded display name
    id_key: Mapped[str] = mapped_column(String(300), default=_id_key_default)
    text_key: Mapped[str] = mapped_column(String(300), default=_reviewer_key_default)


class PoolMember(Base):
    """A person (a reviewer record of the venue) belongs to a pool: ``reviewers``,
    ``area_chairs`` or ``senior_area_chairs`` (:data:`POOLS`); a person may be in several."""

    __tablename__ = "pool_members"
    __table_args__ = (
        ForeignKeyConstraint(
            ["venue_id", "person_id"], ["reviewers.venue_id", "reviewers.id"], ondelete="CASCADE"
        ),
        Index("ix_pool_members_person", "venue_id", "person_id"),
    )

    venue_id: Mapped[str] = mapped_column(String(100), primary_key=True)
    pool: Mapped[str] = mapped_column(String(30), primary_key=True)
    person_id: Mapped[str] = mapped_column(String(300), primary_key=True)


class SubmissionRow(Base):
    __tablename__ = "submissions"
    __table_args__ = (*search_indexes("submissions"), status_index("submissions"))

    venue_id: Mapped[str] = mapped_column(venue_fk(), primary_key=True)
    id: Mapped[str] = mapped_column(String(300), primary_key=True)
    title: Mapped[str] = mapped_column(Text, default="")
    abstract: Mapped[str] = mapped_column(Text, default="")
    authors: Mapped[list[Any]] = mapped_column(default=list)
    source: Mapped[str] = mapped_column(Text, default="")
    author_emails: Mapped[list[Any]] = mapped_column(default=list)
    author_ids: Mapped[list[Any]] = mapped_column(default=list)
    author_affiliations: Mapped[list[Any]] = mapped_column(default=list)
    status: Mapped[str] = status_column()
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # search keys (api.search_keys): the folded id, and the folded title
    id_key: Mapped[str] = mapped_column(String(300), default=_id_key_default)
    text_key: Mapped[str] = mapped_column(String(300), default=_submission_key_default)


class Job(Base):
    """A background computation; its state lives here so it survives a restart."""

    __tablename__ = "jobs"
    __table_args__ = (Index("uq_jobs_venue_number", "venue_id", "number", unique=True),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    venue_id: Mapped[str] = mapped_column(venue_fk(), index=True)
    # 1, 2, ... within the venue (the global id keeps working in URLs); null only for rows
    # made outside the service's job creation
    number: Mapped[int | None] = mapped_column(Integer, nullable=True)
    kind: Mapped[str] = mapped_column(String(30))
    state: Mapped[str] = mapped_column(String(20), default="queued")
    progress: Mapped[float] = mapped_column(Float, default=0.0)
    stage: Mapped[str] = mapped_column(String(200), default="queued")
    log: Mapped[list[Any]] = mapped_column(default=list)
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    result: Mapped[dict[str, Any]] = mapped_column(default=dict)
    error: Mapped[str] = mapped_column(Text, default="")
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    # the server instance holding the job (its runner's ``owner``) and when that server last
    # said it still runs: a job's result commits only while its server holds it, and a job
    # whose server is gone is marked interrupted (see reviewer_recommender.jobs.lease)
    owner: Mapped[str | None] = mapped_column(String(100), nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    rerun_of: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_by: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class AffinityRun(Base):
    """One affinity computation; scores kept sparsely in ``affinity_scores``."""

    __tablename__ = "affinity_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    venue_id: Mapped[str] = mapped_column(venue_fk(), index=True)
    # the pool whose persons it scored against the venue's submissions
    pool: Mapped[str] = pool_column()
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id"), nullable=True)
    config: Mapped[dict[str, Any]] = mapped_column(default=dict)
    n_papers: Mapped[int] = mapped_column(Integer)
    n_reviewers: Mapped[int] = mapped_column(Integer)
    top_n: Mapped[int] = mapped_column(Integer)
    statistics: Mapped[dict[str, Any]] = mapped_column(default=dict)
    corpus_version: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class AffinityScore(Base):
    __tablename__ = "affinity_scores"
    __table_args__ = (
        Index("ix_affinity_scores_run_reviewer", "run_id", "reviewer_id", "score"),
        Index("ix_affinity_scores_run_paper_score", "run_id", "paper_id", "score"),
    )

    run_id: Mapped[int] = mapped_column(
        ForeignKey("affinity_runs.id", ondelete="CASCADE"), primary_key=True
    )
    paper_id: Mapped[str] = mapped_column(String(300), primary_key=True)
    reviewer_id: Mapped[str] = mapped_column(String(300), primary_key=True)
    score: Mapped[float] = mapped_column(Float)
    requested: Mapped[bool] = mapped_column(Boolean, default=False)


class Conflict(Base):
    """A pair that must never be assigned: detected, uploaded or forbidden by a chair."""

    __tablename__ = "conflicts"

    venue_id: Mapped[str] = mapped_column(venue_fk(), primary_key=True)
    paper_id: Mapped[str] = mapped_column(String(300), primary_key=True)
    reviewer_id: Mapped[str] = mapped_column(String(300), primary_key=True)
    source: Mapped[str] = mapped_column(String(20), primary_key=True)
    reason: Mapped[str] = mapped_column(Text, default="")


class ConflictPolicy(Base):
    """How a venue detects conflicts from profiles (a ``ConflictParams`` dump); a venue
    without a row uses the defaults."""

    __tablename__ = "conflict_policies"

    venue_id: Mapped[str] = mapped_column(venue_fk(), primary_key=True)
    policy: Mapped[dict[str, Any]] = mapped_column(default=dict)
    updated_by: Mapped[str] = mapped_column(String(200), default="")
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ConflictDismissal(Base):
    """A conflict a chair dismissed (a false positive), with the chair's reason: its row
    left ``conflicts`` (so nothing blocks the pair) and waits here to be restored;
    re-detection does not bring it back."""

    __tablename__ = "conflict_dismissals"

    venue_id: Mapped[str] = mapped_column(venue_fk(), primary_key=True)
    paper_id: Mapped[str] = mapped_column(String(300), primary_key=True)
    reviewer_id: Mapped[str] = mapped_column(String(300), primary_key=True)
    source: Mapped[str] = mapped_column(String(20), primary_key=True)
    # the conflict's own reason, and the chair's reason for dismissing it
    conflict_reason: Mapped[str] = mapped_column(Text, default="")
    reason: Mapped[str] = mapped_column(Text, default="")
    dismissed_by: Mapped[str] = mapped_column(String(200), default="")
    dismissed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Pin(Base):
    """A pair a chair requires in every re-solve (a forced pair)."""

    __tablename__ = "pins"

    venue_id: Mapped[str] = mapped_column(venue_fk(), primary_key=True)
    paper_id: Mapped[str] = mapped_column(String(300), primary_key=True)
    reviewer_id: Mapped[str] = mapped_column(String(300), primary_key=True)
    created_by: Mapped[str] = mapped_column(String(200), default="")


BID_ORIGINS = ("chair", "person")


class Bid(Base):
    """A person's bid on a paper (one per pair, whatever the pool): ``origin`` ``chair``
    (a chair's bids upload, which replaces those) or ``person`` (the person's own, through
    their token; an upload never overwrites it)."""

    __tablename__ = "bids"

    venue_id: Mapped[str] = mapped_column(venue_fk(), primary_key=True)
    paper_id: Mapped[str] = mapped_column(String(300), primary_key=True)
    reviewer_id: Mapped[str] = mapped_column(String(300), primary_key=True)
    label: Mapped[str] = mapped_column(String(50))
    bid: Mapped[float] = mapped_column(Float)
    origin: Mapped[str] = mapped_column(String(10), default="chair", server_default="chair")
    updated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class PaperDemand(Base):
    """A paper's own number of persons of a pool (overrides a solve's
    ``reviewers_per_paper``)."""

    __tablename__ = "paper_demands"

    venue_id: Mapped[str] = mapped_column(venue_fk(), primary_key=True)
    pool: Mapped[str] = mapped_column(
        String(30), primary_key=True, default=DEFAULT_POOL, server_default=DEFAULT_POOL
    )
    paper_id: Mapped[str] = mapped_column(String(300), primary_key=True)
    demand: Mapped[int] = mapped_column(Integer)


class ReviewerMaxLoad(Base):
    """A person's own maximum number of papers in a pool (overrides a solve's
    ``max_load``)."""

    __tablename__ = "reviewer_max_loads"

    venue_id: Mapped[str] = mapped_column(venue_fk(), primary_key=True)
    pool: Mapped[str] = mapped_column(
        String(30), primary_key=True, default=DEFAULT_POOL, server_default=DEFAULT_POOL
    )
    reviewer_id: Mapped[str] = mapped_column(String(300), primary_key=True)
    max_load: Mapped[int] = mapped_column(Integer)


ASSIGNMENT_STATES = ("draft", "live", "superseded")


class AssignmentRow(Base):
    """A solved (and possibly edited) assignment.

    ``state``: ``draft`` (chairs only; editable) → ``live`` (published: what viewers see; at
    most one per venue and pool, enforced by a partial unique index) → ``superseded`` (was
    live; can be published again: a rollback). ``version`` starts at 1 and every edit bumps
    it; publishing names the version the chair confirmed. ``pool``: whose assignment it is
    (reviewers, area chairs, or senior area chairs to area chairs)."""

    __tablename__ = "assignments"
    __table_args__ = (
        Index(
            "uq_assignments_one_live_per_pool",
            "venue_id",
            "pool",
            unique=True,
            sqlite_where=text("state = 'live'"),
            postgresql_where=text("state = 'live'"),
        ),
        Index("uq_assignments_venue_number", "venue_id", "number", unique=True),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    venue_id: Mapped[str] = mapped_column(venue_fk(), index=True)
    # 1, 2, ... within the venue ("run #2"); the global id keeps working in URLs
    number: Mapped[int | None] = mapped_column(Integer, nullable=True)
    pool: Mapped[str] = pool_column()
    name: Mapped[str] = mapped_column(String(200), default="")
    note: Mapped[str] = mapped_column(Text, default="")
    # lineage: {"kind": "re-solve", "assignment_id": 1} or {"kind": "rerun", "job_id": 3}
    derived_from: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id"), nullable=True)
    affinity_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("affinity_runs.id"), nullable=True
    )
    state: Mapped[str] = mapped_column(String(20), default="draft")
    version: Mapped[int] = mapped_column(Integer, default=1)
    parameters: Mapped[dict[str, Any]] = mapped_column(default=dict)
    summary: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    deployed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    deployed_by: Mapped[str] = mapped_column(String(200), default="")
    superseded_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # the solve job (loaded with the run: responses show its venue number)
    job: Mapped[Job | None] = relationship(lazy="joined", viewonly=True)

    @property
    def job_number(self) -> int | None:
        return self.job.number if self.job is not None else None


class AssignmentPair(Base):
    __tablename__ = "assignment_pairs"
    __table_args__ = (
        ForeignKeyConstraint(["assignment_id"], ["assignments.id"], ondelete="CASCADE"),
        Index("ix_assignment_pairs_reviewer", "assignment_id", "reviewer_id"),
    )

    assignment_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    paper_id: Mapped[str] = mapped_column(String(300), primary_key=True)
    reviewer_id: Mapped[str] = mapped_column(String(300), primary_key=True)
    score: Mapped[float] = mapped_column(Float)
    pinned: Mapped[bool] = mapped_column(Boolean, default=False)


class AssignmentEdit(Base):
    """One change of a draft (an edit, or a bulk change file) as it can be undone.

    ``changes`` holds what the change did, so that undo can put it back: ``pairs_added`` /
    ``pairs_removed`` (``[paper, reviewer, score, pinned]``), ``pinned`` / ``unpinned``
    (pairs of the run whose pinned flag changed), ``pins_added`` / ``pins_removed``
    (``[paper, reviewer, created_by]``), ``forbids_added`` / ``forbids_removed``
    (``[paper, reviewer, reason]``). ``summary_before`` is the run's summary before it."""

    __tablename__ = "assignment_edits"
    __table_args__ = (
        ForeignKeyConstraint(["assignment_id"], ["assignments.id"], ondelete="CASCADE"),
        Index("ix_assignment_edits_run", "assignment_id", "seq", unique=True),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    assignment_id: Mapped[int] = mapped_column(Integer)
    seq: Mapped[int] = mapped_column(Integer, doc="1, 2, ... within the run")
    action: Mapped[str] = mapped_column(String(20))
    paper_id: Mapped[str | None] = mapped_column(String(300), nullable=True)
    reviewer_id: Mapped[str | None] = mapped_column(String(300), nullable=True)
    other_reviewer_id: Mapped[str | None] = mapped_column(String(300), nullable=True)
    rows: Mapped[int] = mapped_column(Integer, default=1)
    reason: Mapped[str] = mapped_column(Text, default="")
    detail: Mapped[dict[str, Any]] = mapped_column(default=dict)
    actor: Mapped[str] = mapped_column(String(200), default="")
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    version_before: Mapped[int] = mapped_column(Integer)
    version_after: Mapped[int] = mapped_column(Integer)
    objective_before: Mapped[float | None] = mapped_column(Float, nullable=True)
    objective_after: Mapped[float | None] = mapped_column(Float, nullable=True)
    changes: Mapped[dict[str, Any]] = mapped_column(default=dict)
    summary_before: Mapped[dict[str, Any]] = mapped_column(default=dict)
    undone: Mapped[bool] = mapped_column(Boolean, default=False)
    undone_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    undone_by: Mapped[str] = mapped_column(String(200), default="")
    undo_version: Mapped[int | None] = mapped_column(Integer, nullable=True)


DRAFT_RULE_KINDS = ("pin", "forbid", "max_load")


class DraftRule(Base):
    """A pin, forbid or reviewer max load that holds in one run only (a draft's own edits,
    a re-assignment's withdrawals), until a chair promotes it to a venue rule (a
    :class:`Pin`, a forbid :class:`Conflict` or a :class:`ReviewerMaxLoad`). ``paper_id``
    is ``""`` for a max load, whose value is ``value``."""

    __tablename__ = "draft_rules"
    __table_args__ = (
        ForeignKeyConstraint(["assignment_id"], ["assignments.id"], ondelete="CASCADE"),
    )

    assignment_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(10), primary_key=True)
    paper_id: Mapped[str] = mapped_column(String(300), primary_key=True)
    reviewer_id: Mapped[str] = mapped_column(String(300), primary_key=True)
    value: Mapped[int | None] = mapped_column(Integer, nullable=True)
    reason: Mapped[str] = mapped_column(Text, default="")
    created_by: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


DECLINE_STATES = ("open", "reassigned")


class Decline(Base):
    """A person declines a paper assigned to them in a live run, with a reason; ``open``
    until a chair turns it into a re-assignment draft (``reassigned``, naming the draft)."""

    __tablename__ = "declines"
    __table_args__ = (
        ForeignKeyConstraint(["assignment_id"], ["assignments.id"], ondelete="CASCADE"),
        Index("uq_declines_pair", "assignment_id", "paper_id", "person_id", unique=True),
        Index("ix_declines_venue_state", "venue_id", "state"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    venue_id: Mapped[str] = mapped_column(venue_fk())
    pool: Mapped[str] = mapped_column(String(30))
    assignment_id: Mapped[int] = mapped_column(Integer)
    paper_id: Mapped[str] = mapped_column(String(300))
    person_id: Mapped[str] = mapped_column(String(300))
    reason: Mapped[str] = mapped_column(Text, default="")
    state: Mapped[str] = mapped_column(String(20), default="open")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    resolved_by: Mapped[str] = mapped_column(String(200), default="")
    reassignment_id: Mapped[int | None] = mapped_column(Integer, nullable=True)


class AuditEntry(Base):
    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    venue_id: Mapped[str | None] = mapped_column(venue_fk(), nullable=True, index=True)
    actor: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(String(100))
    detail: Mapped[dict[str, Any]] = mapped_column(default=dict)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
