"""Read-only views of one assignment run, as the caller may see it: its pairs, statistics,
one paper with alternates, the export, the check against the venue's hard constraints, and
the edge browser (:mod:`reviewer_recommender.services.browse`).

Each view looks the run up for the caller first (404 for a run they may not see; viewers:
the live run only) and leaves out what the caller does not see (bids, conflict reasons and
stored quotas for viewers, see :mod:`reviewer_recommender.services.visibility`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from reviewer_recommender.services import browse
from reviewer_recommender.services.principals import Principal
from reviewer_recommender.services.publishing import violations
from reviewer_recommender.services.results import PaperAssignmentOut
from reviewer_recommender.services.runs import assignment_stats, paper_view, require_assignment
from reviewer_recommender.services.visibility import sees_marks
from reviewer_recommender.storage.models import AssignmentPair
from reviewer_recommender.storage.names import name_rows
from reviewer_recommender.storage.repository import (
    Paged,
    named_page,
    of_pair,
    require_paper,
    require_reviewer,
)


@dataclass(frozen=True)
class RunCheck:
    """A run against the venue's current hard constraints: what publishing it would refuse
    (``violations`` is the page ``offset``, ``limit`` of all ``total``)."""

    assignment_id: int
    version: int
    state: str
    total: int
    limit: int
    offset: int
    violations: list[dict[str, Any]]


def run_pairs(
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    *,
    paper_id: str | None,
    reviewer_id: str | None,
    limit: int,
    offset: int,
) -> Paged[dict[str, Any]]:
    """The run's pairs (of one paper and/or one reviewer when given), by paper, best
    first, with names."""
    require_assignment(session, venue_id, assignment_id, principal)
    query = select(AssignmentPair).where(AssignmentPair.assignment_id == assignment_id)
    query = of_pair(query, AssignmentPair, paper_id, reviewer_id).order_by(
        AssignmentPair.paper_id, AssignmentPair.score.desc(), AssignmentPair.reviewer_id
    )
    page = named_page(
        session,
        venue_id,
        query,
        limit,
        offset,
        lambda p: {
            "paper_id": p.paper_id,
            "reviewer_id": p.reviewer_id,
            "score": p.score,
            "pinned": p.pinned,
        },
    )
    return mark_withdrawn(session, venue_id, page)


def mark_withdrawn(
    session: Session, venue_id: str, page: Paged[dict[str, Any]]
) -> Paged[dict[str, Any]]:
    """Each pair's ``withdrawn``: ``paper`` or ``reviewer`` when that record is withdrawn
    (:mod:`reviewer_recommender.services.records`: the pair is to be removed), else None."""
    from reviewer_recommender.services.records import withdrawn_among

    papers = withdrawn_among(session, venue_id, "papers", [r["paper_id"] for r in page.items])
    persons = withdrawn_among(
        session, venue_id, "reviewers", [r["reviewer_id"] for r in page.items]
    )
    for item in page.items:
        item["withdrawn"] = (
            "paper"
            if item["paper_id"] in papers
            else "reviewer"
            if item["reviewer_id"] in persons
            else None
        )
    return page


def run_stats(
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    limit: int,
    offset: int,
) -> dict[str, Any]:
    """:func:`reviewer_recommender.services.runs.assignment_stats` of a run."""
    row = require_assignment(session, venue_id, assignment_id, principal)
    return assignment_stats(session, row, limit, offset)


def paper_in_run(
    session: Session,
    venue_id: str,
    assignment_id: int,
    paper_id: str,
    principal: Principal,
    alternates: int,
) -> PaperAssignmentOut:
    """A paper's reviewers in a run and its next-best ones
    (:func:`reviewer_recommender.services.runs.paper_view`). Alternates leave out the
    reviewers that conflict, bid against or are forbidden for the paper, so beside the
    loads a viewer reads they would reveal a private conflict: viewers get none (an empty
    list), whatever ``alternates`` asks."""
    row = require_assignment(session, venue_id, assignment_id, principal)
    require_paper(session, venue_id, paper_id)
    wanted = alternates if sees_marks(principal, venue_id) else 0
    return paper_view(session, row, paper_id, wanted)


def run_export_rows(
    session: Session, venue_id: str, assignment_id: int, principal: Principal
) -> Iterator[tuple[Any, ...]]:
    """The run's pairs as ``(paper_id, reviewer_id, score)``, by paper, best first."""
    require_assignment(session, venue_id, assignment_id, principal)
    rows = session.execute(
        select(AssignmentPair.paper_id, AssignmentPair.reviewer_id, AssignmentPair.score)
        .where(AssignmentPair.assignment_id == assignment_id)
        .order_by(AssignmentPair.paper_id, AssignmentPair.score.desc(), AssignmentPair.reviewer_id)
    ).all()
    return iter(rows)


def check_run(
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    limit: int,
    offset: int,
) -> RunCheck:
    """Every hard constraint of the venue, as it is now, that the run breaks
    (:func:`reviewer_recommender.services.publishing.violations`), one page with names."""
    row = require_assignment(session, venue_id, assignment_id, principal)
    found = violations(session, row)
    page = [v.to_dict() for v in found[offset : offset + limit]]
    return RunCheck(
        assignment_id=row.id,
        version=row.version,
        state=row.state,
        total=len(found),
        limit=limit,
        offset=offset,
        violations=name_rows(session, venue_id, page),
    )


# ---- the edge browser and the run's statistics ----------------------------------------------


def paper_edges(
    session: Session,
    venue_id: str,
    assignment_id: int,
    paper_id: str,
    principal: Principal,
    *,
    which: str,
    limit: int,
    offset: int,
) -> dict[str, Any]:
    """A paper's assigned reviewers then its other stored candidates
    (:func:`reviewer_recommender.services.browse.paper_edges`)."""
    row = require_assignment(session, venue_id, assignment_id, principal)
    require_paper(session, venue_id, paper_id)
    marks = sees_marks(principal, venue_id)
    return browse.paper_edges(session, row, paper_id, which, limit, offset, marks=marks)


def reviewer_edges(
    session: Session,
    venue_id: str,
    assignment_id: int,
    reviewer_id: str,
    principal: Principal,
    *,
    which: str,
    limit: int,
    offset: int,
) -> dict[str, Any]:
    """A reviewer's assigned papers then their other stored candidate papers
    (:func:`reviewer_recommender.services.browse.reviewer_edges`)."""
    row = require_assignment(session, venue_id, assignment_id, principal)
    require_reviewer(session, venue_id, reviewer_id)
    marks = sees_marks(principal, venue_id)
    return browse.reviewer_edges(session, row, reviewer_id, which, limit, offset, marks=marks)


def paper_stats(
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    *,
    below_demand: bool,
    sort: str,
    descending: bool,
    limit: int,
    offset: int,
) -> dict[str, Any]:
    """Every paper of the venue in the run (:func:`browse.paper_stats`)."""
    row = require_assignment(session, venue_id, assignment_id, principal)
    return browse.paper_stats(
        session,
        row,
        below_demand=below_demand,
        sort=sort,
        descending=descending,
        limit=limit,
        offset=offset,
    )


def reviewer_stats(
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    *,
    which: str,
    sort: str,
    descending: bool,
    limit: int,
    offset: int,
) -> dict[str, Any]:
    """Every reviewer of the venue in the run (:func:`browse.reviewer_stats`; stored max
    loads for chairs only)."""
    row = require_assignment(session, venue_id, assignment_id, principal)
    return browse.reviewer_stats(
        session,
        row,
        which=which,
        sort=sort,
        descending=descending,
        limit=limit,
        offset=offset,
        chair=sees_marks(principal, venue_id),
    )


def score_histogram(
    session: Session, venue_id: str, assignment_id: int, principal: Principal, bins: int
) -> dict[str, Any]:
    """Histogram of the run's assigned scores (:func:`browse.score_histogram`)."""
    row = require_assignment(session, venue_id, assignment_id, principal)
    return browse.score_histogram(session, row, bins)


def assignment_bids(
    session: Session, venue_id: str, assignment_id: int, principal: Principal
) -> dict[str, Any]:
    """The run's assigned pairs by bid (:func:`browse.assignment_bids`)."""
    row = require_assignment(session, venue_id, assignment_id, principal)
    return browse.assignment_bids(session, row)
