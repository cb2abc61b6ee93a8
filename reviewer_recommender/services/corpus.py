"""A venue's reviewers and submissions: storing checked uploads, listing and reading them.

An upload is parsed completely (by :mod:`recommender.io`, at the face) and checked against
the id and text policy before anything is written; it is then stored in one transaction
with a new corpus version (affinities computed before it become stale): whole or not at
all. Re-uploading an id updates that reviewer or submission.

Reviewer records are the venue's persons; an upload of them names a pool
(:mod:`reviewer_recommender.services.pools`; the reviewers' by default) and adds them to it,
so one person can be uploaded into several pools (their profile is the last one uploaded).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, or_, select, update
from sqlalchemy.orm import Session

from recommender.corpus import Reviewer, Submission
from reviewer_recommender.errors import InvalidRequest
from reviewer_recommender.services.ids import (
    check_reviewers,
    check_submissions,
    refuse_stored_lookalikes,
)
from reviewer_recommender.services.memberships import (
    Absent,
    live_pairs,
    refuse_held,
    remove_members,
    split_absent,
)
from reviewer_recommender.services.pools import (
    add_members,
    check_pool,
    members_query,
    pools_of,
    record_unpooled,
)
from reviewer_recommender.services.results import UploadCounts
from reviewer_recommender.services.upload_diff import (
    UploadDiff,
    absent_ids,
    check_confirmed,
    diff_rows,
)
from reviewer_recommender.storage.models import (
    DEFAULT_POOL,
    RECORD_STATUSES,
    ReviewerRow,
    SubmissionRow,
)
from reviewer_recommender.storage.repository import (
    Paged,
    audit,
    bump_corpus_version,
    count_rows,
    query_page,
    require_paper,
    require_reviewer,
    reviewer_to_row,
    submission_to_row,
    upsert,
)
from reviewer_recommender.storage.search_keys import display_name, text_key


@dataclass(frozen=True)
class ReviewerRecord:
    """A stored reviewer as listed (publications counted, not shown)."""

    id: str
    name: str
    display_name: str
    email: str
    affiliation: str
    attributes: dict[str, str]
    n_publications: int
    pools: list[str]
    status: str = "active"
    # flagged: a person without publications has no profile to score against
    no_publications: bool = False


@dataclass(frozen=True)
class SubmissionRecord:
    """A stored submission as listed, with its status."""

    id: str
    title: str
    abstract: str
    authors: list[str]
    source: str
    author_emails: list[str]
    author_ids: list[str]
    author_affiliations: list[str]
    status: str = "active"


@dataclass(frozen=True)
class Confirm:
    """How an upload applies: ``preview``, the token of the preview the chair confirmed
    (None: apply without one); ``digest``, the upload's
    :func:`~reviewer_recommender.services.upload_diff.content_digest`; ``withdraw_absent``:
    replace (only with a preview): the active records the file leaves out are withdrawn,
    except persons in another pool too, who leave the upload's pool only
    (:mod:`reviewer_recommender.services.memberships`)."""

    preview: str | None = None
    digest: str = ""
    withdraw_absent: bool = False


def _checked_reviewers(
    session: Session, venue_id: str, reviewers: tuple[Reviewer, ...], source: str, pool: str
) -> list[dict[str, Any]]:
    check_pool(pool)
    check_reviewers(reviewers, source)
    refuse_stored_lookalikes(session, venue_id, "reviewer", [r.id for r in reviewers], source)
    return [reviewer_to_row(venue_id, r) for r in reviewers]


def _checked_submissions(
    session: Session, venue_id: str, submissions: tuple[Submission, ...], source: str
) -> list[dict[str, Any]]:
    check_submissions(submissions, source)
    refuse_stored_lookalikes(session, venue_id, "submission", [s.id for s in submissions], source)
    return [submission_to_row(venue_id, s) for s in submissions]


def preview_reviewers(
    session: Session,
    venue_id: str,
    reviewers: tuple[Reviewer, ...],
    source: str,
    pool: str,
    digest: str,
) -> UploadDiff:
    """What uploading these persons into ``pool`` would change (checked like the upload;
    nothing is written)."""
    rows = _checked_reviewers(session, venue_id, reviewers, source, pool)
    return diff_rows(session, venue_id, "reviewers", rows, digest, pool)


def preview_submissions(
    session: Session, venue_id: str, submissions: tuple[Submission, ...], source: str, digest: str
) -> UploadDiff:
    """What uploading these submissions would change (checked like the upload; nothing is
    written)."""
    rows = _checked_submissions(session, venue_id, submissions, source)
    return diff_rows(session, venue_id, "submissions", rows, digest)


def _confirmed(
    session: Session, venue_id: str, kind: str, pool: str | None, confirm: Confirm
) -> None:
    if confirm.withdraw_absent and confirm.preview is None:
        raise InvalidRequest(
            "preview_required",
            "withdraw_absent replaces the venue's records: preview the upload first and "
            "confirm its token",
            field="withdraw_absent",
        )
    if confirm.preview is not None:
        check_confirmed(session, venue_id, kind, pool, confirm.digest, confirm.preview)


def _withdraw(session: Session, venue_id: str, kind: str, absent: list[str]) -> int:
    model: Any = ReviewerRow if kind == "reviewers" else SubmissionRow
    for start in range(0, len(absent), 1000):
        session.execute(
            update(model)
            .where(model.venue_id == venue_id, model.id.in_(absent[start : start + 1000]))
            .values(status="withdrawn")
        )
    return len(absent)


def store_reviewers(
    session: Session,
    venue_id: str,
    actor: str,
    reviewers: tuple[Reviewer, ...],
    source: str,
    pool: str = DEFAULT_POOL,
    confirm: Confirm | None = None,
) -> UploadCounts:
    """Check and upsert parsed persons and add them to ``pool`` (422 naming every bad id
    or text, an id that looks like a stored one, or an unknown pool, first; 409 when
    ``confirm`` names a preview of another file or of the venue as it was)."""
    confirm = confirm or Confirm()
    rows = _checked_reviewers(session, venue_id, reviewers, source, pool)
    _confirmed(session, venue_id, "reviewers", pool, confirm)
    ids = [r["id"] for r in rows]
    absent = Absent()
    if confirm.withdraw_absent:
        # sorted before anything is written: the file's persons are never among them
        absent = split_absent(
            session, venue_id, pool, absent_ids(session, venue_id, "reviewers", ids, pool)
        )
        if absent.held:
            live, held = live_pairs(session, venue_id, pool, absent.held)
            raise refuse_held(venue_id, pool, live, held)
    if pool != DEFAULT_POOL:
        record_unpooled(session, venue_id, ids)
    created, updated = upsert(session, ReviewerRow, venue_id, rows)
    joined = add_members(session, venue_id, pool, ids)
    withdrawn = _withdraw(session, venue_id, "reviewers", absent.withdraw)
    left_pool = remove_members(session, venue_id, pool, absent.leave)
    bump_corpus_version(session, venue_id)
    no_publications = tuple(sorted(r["id"] for r in rows if not r["publications"]))
    audit(
        session,
        venue_id,
        actor,
        "reviewers.upload",
        source=source,
        created=created,
        updated=updated,
        pool=pool,
        joined_pool=joined,
        no_publications=len(no_publications),
        withdrawn=withdrawn,
        left_pool=left_pool,
        previewed=confirm.preview is not None,
    )
    session.commit()
    return UploadCounts(
        created=created,
        updated=updated,
        total=count_rows(session, ReviewerRow, venue_id),
        no_publications=no_publications,
        withdrawn=withdrawn,
        left_pool=left_pool,
    )


def store_submissions(
    session: Session,
    venue_id: str,
    actor: str,
    submissions: tuple[Submission, ...],
    source: str,
    confirm: Confirm | None = None,
) -> UploadCounts:
    """Check and upsert parsed submissions (422 naming every bad id or text, or an id that
    looks like a stored one, first; 409 when ``confirm`` names a preview of another file
    or of the venue as it was)."""
    confirm = confirm or Confirm()
    rows = _checked_submissions(session, venue_id, submissions, source)
    _confirmed(session, venue_id, "submissions", None, confirm)
    created, updated = upsert(session, SubmissionRow, venue_id, rows)
    ids = [r["id"] for r in rows]
    withdrawn = (
        _withdraw(
            session,
            venue_id,
            "submissions",
            absent_ids(session, venue_id, "submissions", ids, None),
        )
        if confirm.withdraw_absent
        else 0
    )
    bump_corpus_version(session, venue_id)
    audit(
        session,
        venue_id,
        actor,
        "submissions.upload",
        source=source,
        created=created,
        updated=updated,
        withdrawn=withdrawn,
        previewed=confirm.preview is not None,
    )
    session.commit()
    return UploadCounts(
        created=created,
        updated=updated,
        total=count_rows(session, SubmissionRow, venue_id),
        withdrawn=withdrawn,
    )


def _reviewer_record(row: ReviewerRow, pools: list[str]) -> ReviewerRecord:
    return ReviewerRecord(
        id=row.id,
        name=row.name,
        display_name=display_name(row.id, row.name),
        email=row.email,
        affiliation=row.affiliation,
        attributes=row.attributes,
        n_publications=len(row.publications),
        pools=pools,
        status=row.status,
        no_publications=not row.publications,
    )


def _submission_record(row: SubmissionRow) -> SubmissionRecord:
    return SubmissionRecord(
        id=row.id,
        title=row.title,
        abstract=row.abstract,
        authors=list(row.authors),
        source=row.source,
        author_emails=list(row.author_emails),
        author_ids=list(row.author_ids),
        author_affiliations=list(row.author_affiliations),
        status=row.status,
    )


def _filtered(query: Select[Any], model: Any, text: str | None, status: str | None) -> Any:
    """``query`` narrowed to rows whose id or name/title contains ``text`` (folded like the
    search keys) and to one ``status``."""
    if status is not None:
        if status not in RECORD_STATUSES:
            raise InvalidRequest(
                "invalid_status",
                f"status {status!r} is not one of {', '.join(RECORD_STATUSES)}",
                field="status",
            )
        query = query.where(model.status == status)
    folded = text_key(text or "")
    if folded:
        pattern = "%" + folded.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        query = query.where(
            or_(
                model.text_key.like(pattern, escape="\\"),
                model.id_key.like(pattern, escape="\\"),
            )
        )
    return query


def list_reviewers(
    session: Session,
    venue_id: str,
    limit: int,
    offset: int,
    pool: str | None = None,
    text: str | None = None,
    status: str | None = None,
) -> Paged[ReviewerRecord]:
    """The venue's persons by id (of one pool when ``pool`` is given; whose id or name
    contains ``text``; of one ``status``), with their pools."""
    query = select(ReviewerRow).where(ReviewerRow.venue_id == venue_id).order_by(ReviewerRow.id)
    query = _filtered(query, ReviewerRow, text, status)
    if pool is not None:
        check_pool(pool)
        query = query.where(ReviewerRow.id.in_(members_query(venue_id, pool)))
    found = query_page(session, query, limit, offset)
    pools = pools_of(session, venue_id, [r.id for r in found.items])
    return Paged(
        [_reviewer_record(r, pools[r.id]) for r in found.items], found.total, limit, offset
    )


def get_reviewer(session: Session, venue_id: str, reviewer_id: str) -> ReviewerRecord:
    row = require_reviewer(session, venue_id, reviewer_id)
    return _reviewer_record(row, pools_of(session, venue_id, [row.id])[row.id])


def list_submissions(
    session: Session,
    venue_id: str,
    limit: int,
    offset: int,
    text: str | None = None,
    status: str | None = None,
) -> Paged[SubmissionRecord]:
    """The venue's submissions by id (whose id or title contains ``text``; of one
    ``status``)."""
    query = (
        select(SubmissionRow).where(SubmissionRow.venue_id == venue_id).order_by(SubmissionRow.id)
    )
    query = _filtered(query, SubmissionRow, text, status)
    found = query_page(session, query, limit, offset)
    return Paged([_submission_record(s) for s in found.items], found.total, limit, offset)


def get_submission(session: Session, venue_id: str, paper_id: str) -> SubmissionRecord:
    return _submission_record(require_paper(session, venue_id, paper_id))
