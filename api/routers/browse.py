"""The edge browser and the statistics of a run (logic in
:mod:`reviewer_recommender.services.browse`, reached through
:mod:`reviewer_recommender.services.run_views`).

Everything a run's readers may see: viewers read the live run's views too, with bids,
conflict reasons, forbids and stored quotas left out (null); bids are chairs' only."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from api.auth import ChairReader, Reader
from api.dependencies import Limit, Offset, SessionDep
from api.ids import PaperIdPath, ReviewerIdPath, RowIdPath, VenueIdPath
from api.page_schemas import (
    AssignmentBidsOut,
    BidOverviewOut,
    HistogramOut,
    PaperEdgesOut,
    PaperStatOut,
    ReviewerEdgesOut,
    ReviewerLoadOut,
)
from api.schemas import Page
from reviewer_recommender.services import browse, run_views

router = APIRouter(tags=["browse"])

Which = Annotated[
    Literal["all", "assigned", "candidates"],
    Query(description="assigned pairs, stored candidates, or both (assigned first)"),
]
Descending = Annotated[bool, Query(description="sort from the largest")]


@router.get(
    "/venues/{venue_id}/assignments/{assignment_id}/papers/{paper_id}/edges",
    response_model=PaperEdgesOut,
)
def paper_edges(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    paper_id: PaperIdPath,
    principal: Reader,
    session: SessionDep,
    filter: Which = "all",
    limit: Limit = 50,
    offset: Offset = 0,
) -> dict[str, Any]:
    """A paper's assigned reviewers (best score first) then its other stored candidates
    (best first), each with score, bid, conflict reasons, pin and forbid, the reviewer's
    load and max load, whether the pair can be added, and the path of its explanation."""
    return run_views.paper_edges(
        session,
        venue_id,
        assignment_id,
        paper_id,
        principal,
        which=filter,
        limit=limit,
        offset=offset,
    )


@router.get(
    "/venues/{venue_id}/assignments/{assignment_id}/reviewers/{reviewer_id}/edges",
    response_model=ReviewerEdgesOut,
)
def reviewer_edges(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    reviewer_id: ReviewerIdPath,
    principal: Reader,
    session: SessionDep,
    filter: Which = "all",
    limit: Limit = 50,
    offset: Offset = 0,
) -> dict[str, Any]:
    """A reviewer's assigned papers then their other stored candidate papers, with the
    same fields as a paper's edges (each paper's reviewer count and demand included)."""
    return run_views.reviewer_edges(
        session,
        venue_id,
        assignment_id,
        reviewer_id,
        principal,
        which=filter,
        limit=limit,
        offset=offset,
    )


@router.get(
    "/venues/{venue_id}/assignments/{assignment_id}/papers", response_model=Page[PaperStatOut]
)
def run_papers(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    principal: Reader,
    session: SessionDep,
    below_demand: Annotated[bool, Query(description="only papers below their demand")] = False,
    sort: Literal[
        "paper_id", "title", "assigned", "demand", "missing", "min_score", "mean_score"
    ] = "paper_id",
    descending: Descending = False,
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Every paper of the venue in this run: demand, reviewers assigned, missing, min and
    mean score; ``below_demand`` lists only the papers short of reviewers."""
    return run_views.paper_stats(
        session,
        venue_id,
        assignment_id,
        principal,
        below_demand=below_demand,
        sort=sort,
        descending=descending,
        limit=limit,
        offset=offset,
    )


@router.get(
    "/venues/{venue_id}/assignments/{assignment_id}/reviewers",
    response_model=Page[ReviewerLoadOut],
)
def run_reviewers(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    principal: Reader,
    session: SessionDep,
    filter: Annotated[
        Literal["all", "over", "under", "unassigned", "full"],
        Query(description="over: above max load; under: below min load; full: at or above max"),
    ] = "all",
    sort: Literal[
        "reviewer_id", "name", "load", "max_load", "min_load", "slack", "mean_score"
    ] = "reviewer_id",
    descending: Descending = False,
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Every reviewer of the venue in this run: load against min and max load (the quota;
    chairs also see the stored max load, editable with ``PUT``/``DELETE
    /venues/{venue_id}/reviewer-max-loads/{reviewer_id}``), slack, mean score."""
    return run_views.reviewer_stats(
        session,
        venue_id,
        assignment_id,
        principal,
        which=filter,
        sort=sort,
        descending=descending,
        limit=limit,
        offset=offset,
    )


@router.get("/venues/{venue_id}/assignments/{assignment_id}/histogram", response_model=HistogramOut)
def run_histogram(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    principal: Reader,
    session: SessionDep,
    bins: Annotated[int, Query(ge=1, le=200)] = 20,
) -> dict[str, Any]:
    """Histogram of the assigned pairs' scores (``bins`` equal bins from min to max)."""
    return run_views.score_histogram(session, venue_id, assignment_id, principal, bins)


@router.get("/venues/{venue_id}/assignments/{assignment_id}/bids", response_model=AssignmentBidsOut)
def run_bids(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    principal: ChairReader,
    session: SessionDep,
) -> dict[str, Any]:
    """The run's assigned pairs by the reviewer's bid on them, and how many have none
    (chairs only: bids are private)."""
    return run_views.assignment_bids(session, venue_id, assignment_id, principal)


@router.get("/venues/{venue_id}/bids/overview", response_model=BidOverviewOut)
def bids_overview(venue_id: VenueIdPath, principal: ChairReader, session: SessionDep) -> Any:
    """How many bids of each value the venue has, and how many papers and reviewers have
    bids (chairs only)."""
    return browse.bid_overview(session, venue_id)
