"""Persistence glue: domain objects <-> rows, upserts, audit entries, pagination."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Generic, TypeVar

import pandas as pd
from sqlalchemy import Select, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from recommender.corpus import Publication, Reviewer, Submission, join_title_abstract
from reviewer_recommender.errors import StateConflict, TooMany, not_found
from reviewer_recommender.jobs.runner import JobRunner
from reviewer_recommender.services.runinfo import STALE_PREFIX as STALE_PREFIX
from reviewer_recommender.services.runinfo import stale_message as stale_message
from reviewer_recommender.storage.frames import rows_frame
from reviewer_recommender.storage.models import (
    DEFAULT_POOL,
    AffinityRun,
    AffinityScore,
    AuditEntry,
    Bid,
    Conflict,
    Job,
    Pin,
    PoolMember,
    ReviewerRow,
    SubmissionRow,
    Venue,
    utcnow,
)
from reviewer_recommender.storage.names import name_rows
from reviewer_recommender.storage.search_keys import display_name, id_key, text_key

Row = TypeVar("Row")
Item = TypeVar("Item")


@dataclass(frozen=True)
class Paged(Generic[Item]):
    """One page of a longer list: ``total`` items exist, ``items`` starts at ``offset``
    (``Page`` in the HTTP API)."""

    items: list[Item]
    total: int
    limit: int
    offset: int

    @classmethod
    def sliced(cls, items: Sequence[Item], limit: int, offset: int) -> Paged[Item]:
        """The page of a list already in memory."""
        return cls(list(items[offset : offset + limit]), len(items), limit, offset)


def reviewer_to_row(venue_id: str, reviewer: Reviewer) -> dict[str, Any]:
    return {
        "venue_id": venue_id,
        "id": reviewer.id,
        "name": reviewer.name,
        "email": reviewer.email,
        "affiliation": reviewer.affiliation,
        "attributes": dict(reviewer.attributes),
        "publications": [
            {
                "id": p.id,
                "title": p.title,
                "abstract": p.abstract,
                "year": p.year,
                "authors": list(p.authors),
            }
            for p in reviewer.publications
        ],
        "updated_at": utcnow(),
        "id_key": id_key(reviewer.id),
        "text_key": text_key(display_name(reviewer.id, reviewer.name)),
    }


def row_to_reviewer(row: ReviewerRow) -> Reviewer:
    return Reviewer(
        id=row.id,
        name=row.name,
        email=row.email,
        affiliation=row.affiliation,
        attributes=MappingProxyType(dict(row.attributes)),
        publications=tuple(
            Publication(
                id=p["id"],
                title=p["title"],
                abstract=p["abstract"],
                year=p.get("year"),
                authors=tuple(p.get("authors", ())),
            )
            for p in row.publications
        ),
    )


def submission_to_row(venue_id: str, submission: Submission) -> dict[str, Any]:
    return {
        "venue_id": venue_id,
        "id": submission.id,
        "title": submission.title,
        "abstract": submission.abstract,
        "authors": list(submission.authors),
        "source": submission.source,
        "author_emails": list(submission.author_emails),
        "author_ids": list(submission.author_ids),
        "author_affiliations": list(submission.author_affiliations),
        "updated_at": utcnow(),
        "id_key": id_key(submission.id),
        "text_key": text_key(submission.title),
    }


def row_to_submission(row: SubmissionRow) -> Submission:
    return Submission(
        id=row.id,
        title=row.title,
        abstract=row.abstract,
        authors=tuple(row.authors),
        source=row.source,
        author_emails=tuple(row.author_emails),
        author_ids=tuple(row.author_ids),
        author_affiliations=tuple(row.author_affiliations),
    )


def upsert(
    session: Session, model: type, venue_id: str, rows: Sequence[dict[str, Any]]
) -> tuple[int, int]:
    """Insert new ids, update existing ones (same venue); returns (created, updated).

    Runs inside the caller's transaction: the caller commits all or nothing."""
    ids = [r["id"] for r in rows]
    existing: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        existing.update(
            session.scalars(select(model.id).where(model.venue_id == venue_id, model.id.in_(chunk)))
        )
    new_rows = [r for r in rows if r["id"] not in existing]
    changed = [r for r in rows if r["id"] in existing]
    if new_rows:
        session.execute(model.__table__.insert(), new_rows)
    if changed:
        # ORM bulk UPDATE by primary key (venue_id, id)
        session.execute(update(model), changed)
    return len(new_rows), len(changed)


def pool_members(venue_id: str, pool: str) -> Select[Any]:
    """The ids of a pool's persons, as a query to select or to filter by. A person in no
    pool at all counts as a reviewer (records stored before pools existed, or by code that
    names no pool): the one membership rule, kept here."""
    members = select(PoolMember.person_id.label("person_id")).where(
        PoolMember.venue_id == venue_id, PoolMember.pool == pool
    )
    if pool != DEFAULT_POOL:
        return members
    in_a_pool = select(PoolMember.person_id).where(
        PoolMember.venue_id == venue_id, PoolMember.person_id == ReviewerRow.id
    )
    unpooled = select(ReviewerRow.id.label("person_id")).where(
        ReviewerRow.venue_id == venue_id, ~in_a_pool.exists()
    )
    return select(members.union(unpooled).subquery().c.person_id)


def load_corpus(
    session: Session, venue_id: str, pool: str = DEFAULT_POOL
) -> tuple[tuple[Reviewer, ...], tuple[Submission, ...]]:
    """The persons of ``pool`` (the venue's reviewers by default) and the submissions."""
    reviewers = session.scalars(
        select(ReviewerRow)
        .where(ReviewerRow.venue_id == venue_id, ReviewerRow.id.in_(pool_members(venue_id, pool)))
        .order_by(ReviewerRow.id)
    ).all()
    submissions = session.scalars(
        select(SubmissionRow).where(SubmissionRow.venue_id == venue_id).order_by(SubmissionRow.id)
    ).all()
    return (
        tuple(row_to_reviewer(r) for r in reviewers),
        tuple(row_to_submission(s) for s in submissions),
    )


def load_corpus_texts(
    session: Session, venue_id: str, pool: str = DEFAULT_POOL
) -> tuple[int, int, list[str]]:
    """(persons of ``pool``, submissions, texts) of the venue, the texts those of
    :func:`recommender.affinity.estimate.venue_texts` on :func:`load_corpus`'s corpus (the
    same strings in the same order) but read from the title and abstract columns alone, one
    query per table, without building the corpus (10 times faster at 10,000 x 10,000)."""
    publications = session.scalars(
        select(ReviewerRow.publications)
        .where(ReviewerRow.venue_id == venue_id, ReviewerRow.id.in_(pool_members(venue_id, pool)))
        .order_by(ReviewerRow.id)
    ).all()
    submissions = session.execute(
        select(SubmissionRow.title, SubmissionRow.abstract)
        .where(SubmissionRow.venue_id == venue_id)
        .order_by(SubmissionRow.id)
    ).all()
    texts = [join_title_abstract(p["title"], p["abstract"]) for pubs in publications for p in pubs]
    texts += [join_title_abstract(title, abstract) for title, abstract in submissions]
    return len(publications), len(submissions), texts


def corpus_version(session: Session, venue_id: str) -> int:
    return int(session.scalar(select(Venue.corpus_version).where(Venue.id == venue_id)) or 0)


def bump_corpus_version(session: Session, venue_id: str) -> None:
    session.execute(
        update(Venue).where(Venue.id == venue_id).values(corpus_version=Venue.corpus_version + 1)
    )


def audit(session: Session, venue_id: str | None, actor: str, action: str, **detail: Any) -> None:
    session.add(AuditEntry(venue_id=venue_id, actor=actor, action=action, detail=detail))


def start_job(
    runner: JobRunner,
    session: Session,
    venue_id: str,
    kind: str,
    params: dict[str, Any],
    actor: str,
    rerun_of: int | None = None,
) -> Job:
    """Create a queued job row (committed, with its audit entry) and hand it to the runner.

    A venue holds at most ``runner.max_queued_per_venue`` jobs queued or running: one more
    is refused (:func:`_refuse_beyond_queue_bound`), nothing written."""
    # one start at a time per venue: writing the venue's row (to itself) locks it until the
    # commit (PostgreSQL) or takes the database's write lock (SQLite), so the count sees
    # every other start and concurrent starts cannot pass the bound together
    session.execute(
        update(Venue)
        .where(Venue.id == venue_id)
        .values(corpus_version=Venue.corpus_version)
        .execution_options(synchronize_session=False)
    )
    _refuse_beyond_queue_bound(runner, session, venue_id)
    job = add_numbered(
        session,
        Job,
        venue_id,
        lambda number: Job(
            venue_id=venue_id,
            number=number,
            kind=kind,
            params=params,
            created_by=actor,
            rerun_of=rerun_of,
            log=[],
            result={},
            # held by this server from the start: no other server takes it for abandoned
            owner=runner.owner,
            heartbeat_at=utcnow(),
        ),
    )
    audit(
        session,
        venue_id,
        actor,
        f"job.{kind}.start",
        job_id=job.id,
        job_number=job.number,
        params=params,
        rerun_of=rerun_of,
    )
    session.commit()
    runner.submit(job.id, venue_id)
    session.refresh(job)
    return job


# seconds a client refused for a full job queue is told to wait (Retry-After)
JOB_QUEUE_RETRY_AFTER = 30


def _refuse_beyond_queue_bound(runner: JobRunner, session: Session, venue_id: str) -> None:
    """Roll back and raise 429 ``too_many_jobs`` when the venue already has as many jobs
    queued or running as the runner allows."""
    limit = runner.max_queued_per_venue
    active = Job.state.in_(("queued", "running"))
    waiting = session.scalar(select(func.count(Job.id)).where(Job.venue_id == venue_id, active))
    waiting = int(waiting or 0)
    if waiting < limit:
        return
    session.rollback()
    raise TooMany(
        "too_many_jobs",
        f"venue {venue_id!r} already has {waiting} jobs queued or running, the most it may "
        f"have at once ({limit}, RECOMMENDER_MAX_QUEUED_JOBS_PER_VENUE); nothing was queued: "
        f"start it again when one has ended (try in {JOB_QUEUE_RETRY_AFTER} s) or cancel one",
        limit=limit,
        waiting=waiting,
        retry_after=JOB_QUEUE_RETRY_AFTER,
    )


def add_numbered(
    session: Session, model: Any, venue_id: str, make: Callable[[int], Row], attempts: int = 5
) -> Row:
    """Add the row ``make(number)`` with the venue's next ``number`` (1, 2, ...) and flush
    it. A concurrent request taking the same number (the unique index refuses it) makes
    this one try the next, in a savepoint, so the caller's transaction survives."""
    for attempt in range(attempts):
        number = (
            session.scalar(
                select(func.coalesce(func.max(model.number), 0)).where(model.venue_id == venue_id)
            )
            or 0
        ) + 1
        row = make(int(number))
        try:
            with session.begin_nested():
                session.add(row)
                session.flush()
        except IntegrityError:
            if attempt == attempts - 1:
                raise
            continue
        return row
    raise AssertionError("unreachable")


def paginate(
    session: Session, query: Select[Any], limit: int, offset: int
) -> tuple[list[Any], int]:
    total = session.scalar(select(func.count()).select_from(query.order_by(None).subquery())) or 0
    items = list(session.scalars(query.limit(limit).offset(offset)))
    return items, int(total)


def query_page(session: Session, query: Select[Any], limit: int, offset: int) -> Paged[Any]:
    """One page of ``query``'s items (rows or scalars) and how many it has in all."""
    items, total = paginate(session, query, limit, offset)
    return Paged(items, total, limit, offset)


def named_page(
    session: Session,
    venue_id: str,
    query: Select[Any],
    limit: int,
    offset: int,
    row: Callable[[Any], dict[str, Any]],
) -> Paged[dict[str, Any]]:
    """One page of ``query``'s items, each as ``row(item)`` with the names beside its ids
    (:func:`reviewer_recommender.storage.names.name_rows`)."""
    items, total = paginate(session, query, limit, offset)
    rows = [row(item) for item in items]
    return Paged(name_rows(session, venue_id, rows), total, limit, offset)


def count_rows(session: Session, model: Any, venue_id: str) -> int:
    """How many rows of ``model`` (a table with a ``venue_id``) the venue has."""
    return int(session.scalar(select(func.count()).where(model.venue_id == venue_id)) or 0)


def of_pair(
    query: Select[Any], model: Any, paper_id: str | None, reviewer_id: str | None
) -> Select[Any]:
    """``query`` narrowed to one paper's and/or one reviewer's rows of ``model``, when given."""
    if paper_id is not None:
        query = query.where(model.paper_id == paper_id)
    if reviewer_id is not None:
        query = query.where(model.reviewer_id == reviewer_id)
    return query


def latest_run(session: Session, venue_id: str, pool: str = DEFAULT_POOL) -> AffinityRun | None:
    """The pool's latest affinity run (the reviewers' by default)."""
    return session.scalar(
        select(AffinityRun)
        .where(AffinityRun.venue_id == venue_id, AffinityRun.pool == pool)
        .order_by(AffinityRun.id.desc())
        .limit(1)
    )


def require_run(session: Session, venue_id: str, pool: str = DEFAULT_POOL) -> AffinityRun:
    run = latest_run(session, venue_id, pool)
    if run is None:
        of_pool = "" if pool == DEFAULT_POOL else f" for pool {pool}"
        body = "" if pool == DEFAULT_POOL else f' with {{"pool": "{pool}"}}'
        raise StateConflict(
            "no_affinities",
            f"venue {venue_id!r} has no affinities{of_pool} yet: "
            f"POST /venues/{venue_id}/affinity/jobs{body} first",
        )
    return run


def unscored_papers(session: Session, venue_id: str, run_id: int) -> list[str]:
    """The venue's papers without any stored score in affinity run ``run_id`` (uploaded
    after it): no solve can give them reviewers until affinity is recomputed."""
    scored = select(AffinityScore.paper_id).where(
        AffinityScore.run_id == run_id, AffinityScore.paper_id == SubmissionRow.id
    )
    return list(
        session.scalars(
            select(SubmissionRow.id)
            .where(SubmissionRow.venue_id == venue_id, ~scored.exists())
            .order_by(SubmissionRow.id)
        )
    )


def unscored_reviewer_count(
    session: Session, venue_id: str, run_id: int, pool: str = DEFAULT_POOL
) -> int:
    """How many of the pool's persons have no stored score in affinity run ``run_id``."""
    scored = select(AffinityScore.reviewer_id).where(
        AffinityScore.run_id == run_id, AffinityScore.reviewer_id == ReviewerRow.id
    )
    return int(
        session.scalar(
            select(func.count()).where(
                ReviewerRow.venue_id == venue_id,
                ReviewerRow.id.in_(pool_members(venue_id, pool)),
                ~scored.exists(),
            )
        )
        or 0
    )


def require_paper(session: Session, venue_id: str, paper_id: str) -> SubmissionRow:
    row = session.get(SubmissionRow, (venue_id, paper_id))
    if row is None:
        raise not_found("paper", paper_id)
    return row


def require_reviewer(session: Session, venue_id: str, reviewer_id: str) -> ReviewerRow:
    row = session.get(ReviewerRow, (venue_id, reviewer_id))
    if row is None:
        raise not_found("reviewer", reviewer_id)
    return row


def scores_frame(session: Session, run_id: int) -> pd.DataFrame:
    rows = session.execute(
        select(AffinityScore.paper_id, AffinityScore.reviewer_id, AffinityScore.score).where(
            AffinityScore.run_id == run_id
        )
    ).all()
    return rows_frame(rows, columns=["paper_id", "reviewer_id", "score"])


def _of_pool(query: Any, column: Any, venue_id: str, pool: str | None) -> Any:
    return query if pool is None else query.where(column.in_(pool_members(venue_id, pool)))


def conflicts_frame(session: Session, venue_id: str, pool: str | None = None) -> pd.DataFrame:
    """The venue's conflicts (of the persons of ``pool`` when given)."""
    query = select(Conflict.paper_id, Conflict.reviewer_id, Conflict.source, Conflict.reason).where(
        Conflict.venue_id == venue_id
    )
    rows = session.execute(_of_pool(query, Conflict.reviewer_id, venue_id, pool)).all()
    return rows_frame(rows, columns=["paper_id", "reviewer_id", "source", "reason"])


def bids_frame(session: Session, venue_id: str, pool: str | None = None) -> pd.DataFrame:
    """The venue's bids (of the persons of ``pool`` when given)."""
    query = select(Bid.paper_id, Bid.reviewer_id, Bid.label, Bid.bid).where(
        Bid.venue_id == venue_id
    )
    rows = session.execute(_of_pool(query, Bid.reviewer_id, venue_id, pool)).all()
    return rows_frame(rows, columns=["paper_id", "reviewer_id", "label", "bid"])


def pins_frame(session: Session, venue_id: str, pool: str | None = None) -> pd.DataFrame:
    """The venue's pins (of the persons of ``pool`` when given)."""
    query = select(Pin.paper_id, Pin.reviewer_id).where(Pin.venue_id == venue_id)
    rows = session.execute(_of_pool(query, Pin.reviewer_id, venue_id, pool)).all()
    return rows_frame(rows, columns=["paper_id", "reviewer_id"])


def pair_marks(
    session: Session, venue_id: str, pairs: Sequence[tuple[str, str]]
) -> tuple[dict[tuple[str, str], list[str]], dict[tuple[str, str], str]]:
    """Conflict reasons and bids of the given (paper, reviewer) pairs."""
    if not pairs:
        return {}, {}
    papers = sorted({p for p, _ in pairs})
    reviewers = sorted({r for _, r in pairs})
    wanted = set(pairs)
    conflicts: dict[tuple[str, str], list[str]] = {}
    for paper_id, reviewer_id, source, reason in session.execute(
        select(Conflict.paper_id, Conflict.reviewer_id, Conflict.source, Conflict.reason).where(
            Conflict.venue_id == venue_id,
            Conflict.paper_id.in_(papers),
            Conflict.reviewer_id.in_(reviewers),
        )
    ):
        if (paper_id, reviewer_id) in wanted:
            conflicts.setdefault((paper_id, reviewer_id), []).append(
                f"{source}: {reason}" if reason else source
            )
    bids: dict[tuple[str, str], str] = {}
    for paper_id, reviewer_id, bid in session.execute(
        select(Bid.paper_id, Bid.reviewer_id, Bid.label).where(
            Bid.venue_id == venue_id, Bid.paper_id.in_(papers), Bid.reviewer_id.in_(reviewers)
        )
    ):
        if (paper_id, reviewer_id) in wanted:
            bids[(paper_id, reviewer_id)] = bid
    return conflicts, bids
