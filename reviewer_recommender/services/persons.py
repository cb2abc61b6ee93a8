"""A person's own view of a venue: what a reviewer or area chair token reads.

A person token (:mod:`reviewer_recommender.services.tokens`) speaks for one person in the
pool of its role (``reviewer``: reviewers, ``area_chair``: area chairs). It reads only what
is that person's, never another person's scores, bids, loads or conflicts:

- **papers**: the person's pairs in the pool's live run (nothing while none is live), each
  with the person's own score, whether they declined it and, for an area chair, the
  reviewers of the paper in the live reviewer run (names only) and its senior area chair;
- **candidates**: the papers the pool's latest affinity run scored for the person, best
  first, with the person's own bid. Papers in conflict with the person (detected, uploaded,
  forbidden by a chair, or chaired by them at another level) are left out without saying
  so; a paper the person bid Not Willing or Conflict on stays (the bid is theirs to change);
- **a pair**: the score and the evidence behind it, for a candidate or an assigned paper.

Any other paper id is answered like an unknown paper (404 ``paper 'X' not found``), so no
answer tells a conflicted paper from one that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import not_found
from reviewer_recommender.services.explain import ExplainerCache
from reviewer_recommender.services.hierarchy import (
    AREA_CHAIRS,
    REVIEWERS,
    SENIOR_AREA_CHAIRS,
    live_run_of,
    paper_chairs,
)
from reviewer_recommender.services.pairs import pair_score
from reviewer_recommender.services.pools import person_pools
from reviewer_recommender.services.principals import Principal
from reviewer_recommender.services.results import PairScoreOut
from reviewer_recommender.storage.models import (
    AffinityScore,
    AssignmentPair,
    Bid,
    Conflict,
    Decline,
    ReviewerRow,
    Venue,
)
from reviewer_recommender.storage.names import lookup
from reviewer_recommender.storage.repository import Paged, latest_run
from reviewer_recommender.storage.search_keys import display_name

# conflict sources that are the person's own words (their bids), shown as their bid
OWN_SOURCES = ("bid",)


@dataclass(frozen=True)
class Person:
    """Who a person token speaks for, in which pool."""

    venue_id: str
    person_id: str
    role: str
    pool: str


def person_of(principal: Principal) -> Person:
    """The person of a person token (checked by
    :func:`reviewer_recommender.services.principals.check_person_access`)."""
    assert principal.venue_id is not None and principal.person_id is not None
    assert principal.pool is not None
    return Person(principal.venue_id, principal.person_id, principal.role, principal.pool)


def me(session: Session, venue_id: str, principal: Principal) -> dict[str, Any]:
    """Who the caller is in the venue: a person token's person, role and pools (and name);
    for the other roles ``person_id`` null and no pools."""
    venue = session.get(Venue, venue_id)
    base: dict[str, Any] = {
        "venue_id": venue_id,
        "venue_name": venue.name if venue is not None else venue_id,
        "role": principal.role,
        "bidding_open": bool(venue.bidding_open) if venue is not None else False,
    }
    if not principal.is_person or principal.person_id is None:
        return {**base, "person_id": None, "name": principal.name, "pools": []}
    row = session.get(ReviewerRow, (venue_id, principal.person_id))
    live = live_run_of(session, venue_id, principal.pool or REVIEWERS)
    return {
        **base,
        "person_id": principal.person_id,
        "name": display_name(principal.person_id, row.name if row is not None else ""),
        "pools": person_pools(session, venue_id, principal.person_id),
        "pool": principal.pool,
        "live_assignment_id": live.id if live is not None else None,
    }


def _hidden_conflict(person: Person) -> Any:
    """SQL: a conflict of the person with ``AffinityScore.paper_id`` that is not their own
    bid."""
    return (
        select(Conflict.paper_id)
        .where(
            Conflict.venue_id == person.venue_id,
            Conflict.reviewer_id == person.person_id,
            Conflict.paper_id == AffinityScore.paper_id,
            Conflict.source.not_in(OWN_SOURCES),
        )
        .exists()
    )


def _other_level_papers(session: Session, person: Person) -> set[str]:
    """Papers the person holds at the other level's live run (an area chair does not
    review their papers, and the other way round): left out of their candidates."""
    other = {REVIEWERS: AREA_CHAIRS, AREA_CHAIRS: REVIEWERS}.get(person.pool)
    live = live_run_of(session, person.venue_id, other) if other else None
    if live is None:
        return set()
    return set(
        session.scalars(
            select(AssignmentPair.paper_id).where(
                AssignmentPair.assignment_id == live.id,
                AssignmentPair.reviewer_id == person.person_id,
            )
        )
    )


def _candidate_query(session: Session, person: Person) -> Any:
    run = latest_run(session, person.venue_id, person.pool)
    if run is None:
        return None
    query = select(AffinityScore.paper_id, AffinityScore.score).where(
        AffinityScore.run_id == run.id,
        AffinityScore.reviewer_id == person.person_id,
        ~_hidden_conflict(person),
    )
    chaired = _other_level_papers(session, person)
    if chaired:
        query = query.where(AffinityScore.paper_id.not_in(sorted(chaired)))
    return query


def is_candidate(session: Session, person: Person, paper_id: str) -> bool:
    query = _candidate_query(session, person)
    if query is None:
        return False
    return session.execute(query.where(AffinityScore.paper_id == paper_id)).first() is not None


def own_bids(session: Session, person: Person, paper_ids: list[str]) -> dict[str, str]:
    """The person's bids (labels) on these papers."""
    if not paper_ids:
        return {}
    return {
        str(p): str(label)
        for p, label in session.execute(
            select(Bid.paper_id, Bid.label).where(
                Bid.venue_id == person.venue_id,
                Bid.reviewer_id == person.person_id,
                Bid.paper_id.in_(paper_ids),
            )
        )
    }


def assigned_papers(session: Session, person: Person) -> tuple[int | None, dict[str, float]]:
    """The pool's live run and the person's papers in it with their scores."""
    live = live_run_of(session, person.venue_id, person.pool)
    if live is None:
        return None, {}
    return live.id, {
        str(p): float(s)
        for p, s in session.execute(
            select(AssignmentPair.paper_id, AssignmentPair.score).where(
                AssignmentPair.assignment_id == live.id,
                AssignmentPair.reviewer_id == person.person_id,
            )
        )
    }


def my_candidates(
    session: Session, principal: Principal, limit: int, offset: int
) -> Paged[dict[str, Any]]:
    """The person's candidate papers, best first (see the module docstring)."""
    person = person_of(principal)
    query = _candidate_query(session, person)
    if query is None:
        return Paged([], 0, limit, offset)
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.execute(
        query.order_by(AffinityScore.score.desc(), AffinityScore.paper_id)
        .limit(limit)
        .offset(offset)
    ).all()
    papers = [str(r.paper_id) for r in rows]
    bids = own_bids(session, person, papers)
    _live, assigned = assigned_papers(session, person)
    titles = lookup(session, person.venue_id, papers)
    items = [
        {
            "paper_id": r.paper_id,
            "paper_title": titles.title(r.paper_id),
            "score": float(r.score),
            "bid": bids.get(r.paper_id),
            "assigned": r.paper_id in assigned,
        }
        for r in rows
    ]
    return Paged(items, int(total), limit, offset)


def my_papers(session: Session, principal: Principal, limit: int, offset: int) -> dict[str, Any]:
    """The person's papers in the pool's live run, by paper id: score, their decline if
    any, and for an area chair the papers' reviewers and senior area chairs."""
    person = person_of(principal)
    live_id, assigned = assigned_papers(session, person)
    papers = sorted(assigned)
    page = papers[offset : offset + limit]
    declines = {
        d.paper_id: d
        for d in session.scalars(
            select(Decline).where(
                Decline.assignment_id == (live_id or 0),
                Decline.person_id == person.person_id,
                Decline.paper_id.in_(page),
            )
        )
    }
    reviewers: dict[str, list[str]] = {}
    chairs: dict[str, dict[str, list[str]]] = {}
    if person.pool == AREA_CHAIRS and page:
        reviewer_run = live_run_of(session, person.venue_id, REVIEWERS)
        if reviewer_run is not None:
            for p, r in session.execute(
                select(AssignmentPair.paper_id, AssignmentPair.reviewer_id)
                .where(
                    AssignmentPair.assignment_id == reviewer_run.id,
                    AssignmentPair.paper_id.in_(page),
                )
                .order_by(AssignmentPair.paper_id, AssignmentPair.reviewer_id)
            ):
                reviewers.setdefault(str(p), []).append(str(r))
        chairs = paper_chairs(session, person.venue_id, page)
    people = sorted({r for rs in reviewers.values() for r in rs} | _seniors(chairs))
    names = lookup(session, person.venue_id, page, people)
    items = []
    for paper_id in page:
        decline = declines.get(paper_id)
        item: dict[str, Any] = {
            "paper_id": paper_id,
            "paper_title": names.title(paper_id),
            "score": assigned[paper_id],
            "declined": decline is not None,
            "decline_reason": decline.reason if decline is not None else None,
            "decline_state": decline.state if decline is not None else None,
        }
        if person.pool == AREA_CHAIRS:
            item["reviewers"] = [
                {"reviewer_id": r, "reviewer_name": names.name(r)}
                for r in reviewers.get(paper_id, [])
            ]
            item["senior_area_chairs"] = [
                {"reviewer_id": r, "reviewer_name": names.name(r)}
                for r in chairs.get(paper_id, {}).get(SENIOR_AREA_CHAIRS, [])
            ]
        items.append(item)
    return {
        "items": items,
        "total": len(papers),
        "limit": limit,
        "offset": offset,
        "assignment_id": live_id,
    }


def _seniors(chairs: dict[str, dict[str, list[str]]]) -> set[str]:
    return {s for entry in chairs.values() for s in entry.get(SENIOR_AREA_CHAIRS, [])}


def require_own_paper(session: Session, person: Person, paper_id: str) -> None:
    """404 ``paper 'X' not found`` unless the paper is one of the person's candidates or
    assigned to them (the same answer as for a paper that does not exist)."""
    _live, assigned = assigned_papers(session, person)
    if paper_id in assigned or is_candidate(session, person, paper_id):
        return
    raise not_found("paper", paper_id)


def my_pair(
    explainers: ExplainerCache,
    session: Session,
    principal: Principal,
    paper_id: str,
    *,
    explain: bool,
) -> PairScoreOut:
    """The person's score for one of their papers (candidate or assigned) and the evidence
    behind it, from the pool's latest affinity run; 404 for any other paper."""
    person = person_of(principal)
    require_own_paper(session, person, paper_id)
    pair = pair_score(
        explainers,
        session,
        person.venue_id,
        paper_id,
        person.person_id,
        explain=explain,
        store=False,
        marks=False,
        pool=person.pool,
        show_bid=True,  # their own bid, which they see
    )
    # the person's own bid (no conflict reasons: a candidate has none they may not know)
    return pair.model_copy(update={"bid": own_bids(session, person, [paper_id]).get(paper_id)})
