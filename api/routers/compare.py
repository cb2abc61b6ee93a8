"""Two runs compared pair by pair (logic in :mod:`reviewer_recommender.services.compare`):
run ``assignment_id`` is the base, ``other_id`` the other; "added" pairs are in the other
run only, "removed" ones in the base only. Both runs must be visible to the caller (viewers:
the live run only)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query

from api.auth import Reader
from api.dependencies import Limit, Offset, SessionDep
from api.ids import RowIdPath, VenueIdPath
from api.page_schemas import CompareOut, PairChangeOut, PaperDiffOut, ReviewerDiffOut
from api.schemas import Page
from reviewer_recommender.services import compare
from reviewer_recommender.services.ids import MAX_ROW_ID

router = APIRouter(tags=["compare"])

OtherId = Annotated[int, Path(ge=1, le=MAX_ROW_ID, description="the run compared to the base")]
BASE = "/venues/{venue_id}/assignments/{assignment_id}/compare/{other_id}"


@router.get(BASE, response_model=CompareOut)
def compare_runs(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    other_id: OtherId,
    principal: Reader,
    session: SessionDep,
) -> dict[str, Any]:
    """Pairs shared, added and removed, papers and reviewers changed, objectives and mean
    scores of both runs."""
    return compare.compare_summary(session, venue_id, assignment_id, other_id, principal)


@router.get(f"{BASE}/pairs", response_model=Page[PairChangeOut])
def compare_pairs(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    other_id: OtherId,
    principal: Reader,
    session: SessionDep,
    change: Annotated[
        Literal["all", "added", "removed"],
        Query(description="added: in the other run only; removed: in the base only"),
    ] = "all",
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict[str, Any]:
    """The pairs one run has and the other lacks, with their scores, by paper."""
    return compare.compare_pairs(
        session,
        venue_id,
        assignment_id,
        other_id,
        principal,
        change=change,
        limit=limit,
        offset=offset,
    )


@router.get(f"{BASE}/papers", response_model=Page[PaperDiffOut])
def compare_papers(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    other_id: OtherId,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Papers whose reviewers differ: reviewers added and removed (best first), how many
    stayed, mean score in each run."""
    return compare.compare_papers(
        session, venue_id, assignment_id, other_id, principal, limit=limit, offset=offset
    )


@router.get(f"{BASE}/reviewers", response_model=Page[ReviewerDiffOut])
def compare_reviewers(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    other_id: OtherId,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Reviewers whose papers differ: load in each run, papers gained and lost."""
    return compare.compare_reviewers(
        session, venue_id, assignment_id, other_id, principal, limit=limit, offset=offset
    )
