"""A person's own view (``/venues/{v}/me...``: reviewer and area_chair tokens) and the
chairs' side of it: bidding coverage, declines turned into a re-assignment, and each
paper's chairs across the levels.

A person token reads and changes only what is its person's
(:mod:`reviewer_recommender.services.persons`, :mod:`reviewer_recommender.services.bidding`,
:mod:`reviewer_recommender.services.declines`); every other route of the venue refuses it
(403).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, status

from api.auth import ChairReader, Member, Person, Reader, Writer
from api.dependencies import Explainers, Limit, Offset, Runner, SessionDep
from api.ids import OptionalPoolQuery, PaperIdPath, PoolQuery, VenueIdPath
from api.person_schemas import (
    BidIn,
    BidOut,
    CandidateOut,
    DeclineIn,
    DeclineOut,
    DeclinesReassignIn,
    MyDeclineOut,
    MyPapersOut,
    PaperChairsOut,
    PaperCoverageOut,
    PersonWithoutBidsOut,
    VenueMeOut,
)
from api.schemas import JobOut, Page
from reviewer_recommender.services import bidding, declines, hierarchy, persons
from reviewer_recommender.services.results import PairScoreOut
from reviewer_recommender.storage.models import Job
from reviewer_recommender.storage.repository import Paged

router = APIRouter(tags=["persons"])


@router.get("/venues/{venue_id}/me", response_model=VenueMeOut)
def venue_me(venue_id: VenueIdPath, principal: Member, session: SessionDep) -> dict[str, Any]:
    """Who the caller is in the venue: a reviewer or area_chair token's person, role and
    pools (``person_id`` null and no pools for the other roles), and whether bidding is
    open."""
    return persons.me(session, venue_id, principal)


@router.get("/venues/{venue_id}/me/papers", response_model=MyPapersOut)
def my_papers(
    venue_id: VenueIdPath,
    principal: Person,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict[str, Any]:
    """The person's papers in the live run of their pool (none while none is live), each
    with their score and decline; an area chair also sees each paper's reviewers and senior
    area chair."""
    return persons.my_papers(session, principal, limit, offset)


@router.get("/venues/{venue_id}/me/candidates", response_model=Page[CandidateOut])
def my_candidates(
    venue_id: VenueIdPath,
    principal: Person,
    session: SessionDep,
    limit: Limit = 50,
    offset: Offset = 0,
) -> Paged[dict[str, Any]]:
    """The person's candidate papers, best affinity first, with their own bids (papers in
    conflict with them are not candidates)."""
    return persons.my_candidates(session, principal, limit, offset)


@router.get("/venues/{venue_id}/me/pairs/{paper_id}", response_model=PairScoreOut)
def my_pair(
    venue_id: VenueIdPath,
    paper_id: PaperIdPath,
    principal: Person,
    session: SessionDep,
    explainers: Explainers,
    explain: bool = True,
) -> PairScoreOut:
    """The person's score for one of their candidates or assigned papers, their bid and
    (``explain=true``) the evidence: their publications and the shared terms. 404 for any
    other paper."""
    return persons.my_pair(explainers, session, principal, paper_id, explain=explain)


@router.put("/venues/{venue_id}/me/bids/{paper_id}", response_model=BidOut)
def put_my_bid(
    venue_id: VenueIdPath,
    paper_id: PaperIdPath,
    body: BidIn,
    principal: Person,
    session: SessionDep,
) -> dict[str, Any]:
    """Bid on one of the person's candidates (changeable while bidding is open): 409
    ``bidding_closed`` while it is closed, 404 naming a paper that is not their candidate,
    422 for a bid outside the vocabulary."""
    return bidding.set_own_bid(session, principal, paper_id, body.bid)


@router.delete("/venues/{venue_id}/me/bids/{paper_id}", response_model=BidOut)
def delete_my_bid(
    venue_id: VenueIdPath, paper_id: PaperIdPath, principal: Person, session: SessionDep
) -> dict[str, Any]:
    """Withdraw the person's bid on a candidate (while bidding is open)."""
    return bidding.remove_own_bid(session, principal, paper_id)


@router.post("/venues/{venue_id}/me/papers/{paper_id}/decline", response_model=MyDeclineOut)
def decline_my_paper(
    venue_id: VenueIdPath,
    paper_id: PaperIdPath,
    body: DeclineIn,
    principal: Person,
    session: SessionDep,
) -> dict[str, Any]:
    """Decline a paper assigned to the person in their pool's live run, with a reason for
    the chairs (declining again while open changes the reason); 404 for a paper not
    assigned to them."""
    return declines.decline_paper(session, principal, paper_id, body.reason)


@router.get("/venues/{venue_id}/bids/coverage/papers", response_model=Page[PaperCoverageOut])
def bid_coverage_papers(
    venue_id: VenueIdPath,
    principal: ChairReader,
    session: SessionDep,
    pool: PoolQuery = "reviewers",
    min_positive: Annotated[
        int, Query(ge=1, le=1000, description="papers with fewer positive bids than this")
    ] = 3,
    limit: Limit = 100,
    offset: Offset = 0,
) -> Paged[dict[str, Any]]:
    """Papers with fewer than ``min_positive`` positive bids from the pool's persons,
    fewest first (chairs)."""
    return bidding.paper_coverage(session, venue_id, pool, min_positive, limit, offset)


@router.get("/venues/{venue_id}/bids/coverage/persons", response_model=Page[PersonWithoutBidsOut])
def bid_coverage_persons(
    venue_id: VenueIdPath,
    principal: ChairReader,
    session: SessionDep,
    pool: PoolQuery = "reviewers",
    limit: Limit = 100,
    offset: Offset = 0,
) -> Paged[dict[str, Any]]:
    """The pool's persons who have not bid yet, by id (chairs)."""
    return bidding.persons_without_bids(session, venue_id, pool, limit, offset)


@router.get("/venues/{venue_id}/declines", response_model=Page[DeclineOut])
def list_declines(
    venue_id: VenueIdPath,
    principal: ChairReader,
    session: SessionDep,
    pool: OptionalPoolQuery = None,
    state: Annotated[Literal["open", "reassigned"] | None, Query()] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> Paged[dict[str, Any]]:
    """Papers persons declined, with their reasons, newest first (chairs)."""
    return declines.list_declines(
        session, venue_id, pool=pool, state=state, limit=limit, offset=offset
    )


@router.post(
    "/venues/{venue_id}/declines/reassign",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=JobOut,
)
def reassign_declines(
    venue_id: VenueIdPath,
    body: DeclinesReassignIn,
    principal: Writer,
    session: SessionDep,
    runner: Runner,
) -> Job:
    """Turn the open declines of the pool's live run into an emergency re-assignment draft
    (the declined pairs removed and forbidden, only their slots filled), as a job like
    ``/assignments/live/reassign`` (``kind`` ``reassignment``); the declines are then
    ``reassigned`` and the job's result lists them too (``declines``). The draft is
    published through the usual deploy. Audited. Refused at once, nothing queued: 409
    without a live run, 422 when no decline of it is open."""
    return declines.start_declines_reassignment(
        runner, session, venue_id, pool=body.pool, reason=body.reason, actor=principal.name
    )


@router.get("/venues/{venue_id}/chairs", response_model=Page[PaperChairsOut])
def paper_chairs(
    venue_id: VenueIdPath,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Each paper's area chairs (live area-chair run) and senior area chairs (the live
    senior-area-chair run's for those area chairs), by paper id."""
    return hierarchy.chairs_page(session, venue_id, limit, offset)
