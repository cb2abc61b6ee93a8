"""Two runs compared pair by pair (logic in :mod:`api.compare`): run ``assignment_id`` is
the base, ``other_id`` the other; "added" pairs are in the other run only, "removed" ones in
the base only. Both runs must be visible to the caller (viewers: the live run only)."""

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
from reviewer_recommender.services.runs import require_assignment

router = APIRouter(tags=["compare"])

OtherId = Annotated[int, Path(ge=1, le=MAX_ROW_ID, description="the run compared to the base")]
BASE = "/venues/{venue_id}/assignments/{assignment_id}/compare/{other_id}"


def _runs(session: Any, venue_id: str, a: int, b: int, principal: Any) -> tuple[Any, Any]:
    return (
        require_assignment(session, venue_id, a, principal),
        require_assignment(session, venue_id, b, principal),
    )


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
    a, b = _runs(session, venue_id, assignment_id, other_id, principal)
    return compare.summary(session, a, b)


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
    a, b = _runs(session, venue_id, assignment_id, other_id, principal)
    return compare.pair_changes(session, a, b, change, limit, offset)


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
    a, b = _runs(session, venue_id, assignment_id, other_id, principal)
    return compare.paper_changes(session, a, b, limit, offset)


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
    a, b = _runs(session, venue_id, assignment_id, other_id, principal)
    return compare.reviewer_changes(session, a, b, limit, offset)
