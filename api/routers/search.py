"""Type-ahead search of papers and reviewers (logic in
:mod:`reviewer_recommender.services.search`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import AfterValidator

from api.auth import Reader
from api.dependencies import Offset, SessionDep
from api.ids import VenueIdPath
from api.page_schemas import PaperHit, ReviewerHit
from api.schemas import Page
from reviewer_recommender.services.ids import check_text
from reviewer_recommender.services.search import search

router = APIRouter(tags=["search"])

SearchText = Annotated[
    str,
    Query(
        min_length=1,
        max_length=300,
        description="id, name or title, or a part of one (case and accents ignored)",
    ),
    AfterValidator(check_text),
]
SearchLimit = Annotated[int, Query(ge=1, le=200, description="matches per page")]


@router.get("/venues/{venue_id}/search/papers", response_model=Page[PaperHit])
def search_papers(
    venue_id: VenueIdPath,
    q: SearchText,
    principal: Reader,
    session: SessionDep,
    limit: SearchLimit = 20,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Papers whose id or title matches ``q``: exact id, id prefix, title prefix, a word of
    the title starting with it, then any substring; ``match`` says which."""
    return search(session, venue_id, "papers", q, limit, offset)


@router.get("/venues/{venue_id}/search/reviewers", response_model=Page[ReviewerHit])
def search_reviewers(
    venue_id: VenueIdPath,
    q: SearchText,
    principal: Reader,
    session: SessionDep,
    limit: SearchLimit = 20,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Reviewers whose id or name matches ``q`` (the name an OpenReview profile id spells
    counts when the profile has none), ranked like paper search."""
    return search(session, venue_id, "reviewers", q, limit, offset)
