"""Uploads of the stored limit tables (per-paper demand, per-reviewer max loads), read
HotCRP style (:mod:`reviewer_recommender.services.skipped`): the valid rows replace the pool's
stored ones, each bad row is skipped and listed by its line, and the audit entry counts the
rows and skipped lines the answer reports."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from recommender.corpus import Problem
from recommender.io import read_custom_max_papers, read_demand
from reviewer_recommender.services.limits import (
    check_demand_pool,
    pool_detail,
    replace_demands,
    replace_max_loads,
)
from reviewer_recommender.services.pools import check_pool, not_in_pool
from reviewer_recommender.services.results import UploadCounts
from reviewer_recommender.services.skipped import (
    lines_without,
    refuse_when_nothing_valid,
    skipped_detail,
    skipped_lines,
    skipped_rows,
)
from reviewer_recommender.storage.models import DEFAULT_POOL, SubmissionRow
from reviewer_recommender.storage.repository import audit


def upload_demands(
    session: Session,
    venue_id: str,
    content: bytes,
    source: str,
    actor: str,
    pool: str = DEFAULT_POOL,
) -> UploadCounts:
    """Replace the pool's stored demands with the valid rows of a ``paper_id, demand`` file
    (audited, committed). HotCRP style (:mod:`reviewer_recommender.services.skipped`): a bad
    line (unreadable, an unknown paper, a paper given two demands) is skipped and listed;
    the file is refused whole, nothing changed, only when no line is valid."""
    check_demand_pool(pool)
    problems: list[Problem] = []
    frame = read_demand(content, source, with_lines=True, skipped=problems)
    known = set(session.scalars(select(SubmissionRow.id).where(SubmissionRow.venue_id == venue_id)))
    unknown = set(frame["paper_id"]) - known
    frame = frame.loc[
        lines_without(frame, "paper_id", unknown, "unknown paper id {!r}", problems, source)
    ]
    refuse_when_nothing_valid(len(frame), problems)
    stored = replace_demands(session, venue_id, frame, source, pool)
    return _uploaded(session, venue_id, actor, "paper_demands", source, stored, problems, pool)


def upload_max_loads(
    session: Session,
    venue_id: str,
    content: bytes,
    source: str,
    actor: str,
    pool: str = DEFAULT_POOL,
) -> UploadCounts:
    """Replace the pool's stored max loads with the valid rows of a ``reviewer_id, max``
    file (audited, committed); a bad line (unreadable, an id not of the pool, a reviewer
    given two loads) is skipped and listed, as for :func:`upload_demands`."""
    check_pool(pool)
    problems: list[Problem] = []
    frame = read_custom_max_papers(content, source, with_lines=True, skipped=problems)
    outside = set(not_in_pool(session, venue_id, pool, list(frame["reviewer_id"])))
    message = "unknown reviewer id {!r} in pool " + pool
    frame = frame.loc[lines_without(frame, "reviewer_id", outside, message, problems, source)]
    refuse_when_nothing_valid(len(frame), problems)
    stored = replace_max_loads(session, venue_id, frame, source, pool)
    return _uploaded(session, venue_id, actor, "reviewer_max_loads", source, stored, problems, pool)


def _uploaded(
    session: Session,
    venue_id: str,
    actor: str,
    action: str,
    source: str,
    stored: int,
    problems: list[Problem],
    pool: str,
) -> UploadCounts:
    """Audit and commit an upload of a limit table; the answer counts what the entry says."""
    audit(
        session,
        venue_id,
        actor,
        f"{action}.upload",
        source=source,
        rows=stored,
        **skipped_detail(problems),
        **pool_detail(pool),
    )
    session.commit()
    return UploadCounts(
        created=stored,
        updated=0,
        total=stored,
        skipped=skipped_rows(problems),
        skipped_lines=skipped_lines(problems),
    )
