"""Per-paper demand and per-reviewer max loads, stored as venue resources.

Uploading a file replaces the whole table (``paper_id,demand`` or ``reviewer_id,max``, the
OpenReview custom max papers format); one entry can also be set or removed on its own.
Every later solve reads the table, and publishing checks runs against it (see
:mod:`reviewer_recommender.services.limits`). Kept per pool (``?pool=``, the reviewers' by
default). Chairs and admins only.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, UploadFile
from pydantic import BaseModel, Field

from api.auth import ChairReader, Writer
from api.dependencies import Limit, Offset, SessionDep, SettingsDep
from api.ids import PaperIdPath, PoolQuery, ReviewerIdPath, VenueIdPath
from api.page_schemas import DeletedOut
from api.record_schemas import (
    UploadResult,
)
from api.schemas import (
    Page,
    PaperDemandOut,
    ReviewerMaxLoadOut,
)
from api.uploads import CollectionPaused, upload_bytes, upload_name
from reviewer_recommender.services import limit_uploads, limits
from reviewer_recommender.services.results import UploadCounts
from reviewer_recommender.storage.repository import Paged

router = APIRouter(tags=["limits"])


class DemandIn(BaseModel):
    demand: int = Field(ge=0, le=100_000, description="reviewers this paper needs")


class MaxLoadIn(BaseModel):
    max_load: int = Field(ge=0, le=100_000, description="most papers this reviewer takes")


@router.post("/venues/{venue_id}/paper-demands/upload", response_model=UploadResult)
def upload_paper_demands(
    venue_id: VenueIdPath,
    settings: SettingsDep,
    principal: Writer,
    session: SessionDep,
    _gc: CollectionPaused,
    file: Annotated[UploadFile, File(description="CSV paper_id,demand")],
    pool: PoolQuery = "reviewers",
) -> UploadCounts:
    """Replace the venue's per-paper demand with the file's valid rows; papers not in the
    file take each solve's ``reviewers_per_paper``. A bad row or unknown paper is skipped and
    listed in ``skipped`` by line; 422 names every one when no row is valid (nothing
    changes then)."""
    name = upload_name(file, "demand.csv")
    content = upload_bytes(file, settings, name)
    return limit_uploads.upload_demands(session, venue_id, content, name, principal.name, pool)


@router.get("/venues/{venue_id}/paper-demands", response_model=Page[PaperDemandOut])
def list_paper_demands(
    venue_id: VenueIdPath,
    principal: ChairReader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
    pool: PoolQuery = "reviewers",
) -> Paged[dict[str, Any]]:
    """Stored per-paper demands, by paper id."""
    return limits.list_demands(session, venue_id, limit, offset, pool)


@router.put("/venues/{venue_id}/paper-demands/{paper_id}", response_model=PaperDemandOut)
def set_paper_demand(
    venue_id: VenueIdPath,
    paper_id: PaperIdPath,
    body: DemandIn,
    principal: Writer,
    session: SessionDep,
    pool: PoolQuery = "reviewers",
) -> limits.PaperDemandEntry:
    """Set one paper's demand (it overrides each solve's ``reviewers_per_paper``)."""
    return limits.set_demand(session, venue_id, paper_id, body.demand, principal.name, pool)


@router.delete("/venues/{venue_id}/paper-demands/{paper_id}", response_model=DeletedOut)
def delete_paper_demand(
    venue_id: VenueIdPath,
    paper_id: PaperIdPath,
    principal: Writer,
    session: SessionDep,
    pool: PoolQuery = "reviewers",
) -> DeletedOut:
    """Remove one paper's demand: it takes each solve's ``reviewers_per_paper`` again."""
    limits.delete_stored_entry(session, venue_id, limits.DEMANDS, paper_id, principal.name, pool)
    return DeletedOut(deleted=1)


@router.delete("/venues/{venue_id}/paper-demands", response_model=DeletedOut)
def clear_paper_demands(
    venue_id: VenueIdPath, principal: Writer, session: SessionDep, pool: PoolQuery = "reviewers"
) -> DeletedOut:
    """Remove every stored demand of the pool."""
    count = limits.clear_stored_table(session, venue_id, limits.DEMANDS, principal.name, pool)
    return DeletedOut(deleted=count)


@router.post("/venues/{venue_id}/reviewer-max-loads/upload", response_model=UploadResult)
def upload_reviewer_max_loads(
    venue_id: VenueIdPath,
    settings: SettingsDep,
    principal: Writer,
    session: SessionDep,
    _gc: CollectionPaused,
    file: Annotated[UploadFile, File(description="CSV reviewer_id,max (custom max papers)")],
    pool: PoolQuery = "reviewers",
) -> UploadCounts:
    """Replace the venue's per-reviewer max loads with the file's valid rows; reviewers not
    in the file take each solve's ``max_load``. A bad row or unknown reviewer is skipped and
    listed in ``skipped`` by line; 422 names every one when no row is valid."""
    name = upload_name(file, "max-loads.csv")
    content = upload_bytes(file, settings, name)
    return limit_uploads.upload_max_loads(session, venue_id, content, name, principal.name, pool)


@router.get("/venues/{venue_id}/reviewer-max-loads", response_model=Page[ReviewerMaxLoadOut])
def list_reviewer_max_loads(
    venue_id: VenueIdPath,
    principal: ChairReader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
    pool: PoolQuery = "reviewers",
) -> Paged[dict[str, Any]]:
    """Stored per-reviewer max loads, by reviewer id."""
    return limits.list_max_loads(session, venue_id, limit, offset, pool)


@router.put(
    "/venues/{venue_id}/reviewer-max-loads/{reviewer_id}", response_model=ReviewerMaxLoadOut
)
def set_reviewer_max_load(
    venue_id: VenueIdPath,
    reviewer_id: ReviewerIdPath,
    body: MaxLoadIn,
    principal: Writer,
    session: SessionDep,
    pool: PoolQuery = "reviewers",
) -> limits.ReviewerMaxLoadEntry:
    """Set one reviewer's max load, their quota (it overrides each solve's ``max_load``)."""
    return limits.set_max_load(session, venue_id, reviewer_id, body.max_load, principal.name, pool)


@router.delete("/venues/{venue_id}/reviewer-max-loads/{reviewer_id}", response_model=DeletedOut)
def delete_reviewer_max_load(
    venue_id: VenueIdPath,
    reviewer_id: ReviewerIdPath,
    principal: Writer,
    session: SessionDep,
    pool: PoolQuery = "reviewers",
) -> DeletedOut:
    """Remove one reviewer's max load: they take each solve's ``max_load`` again."""
    limits.delete_stored_entry(
        session, venue_id, limits.MAX_LOADS, reviewer_id, principal.name, pool
    )
    return DeletedOut(deleted=1)


@router.delete("/venues/{venue_id}/reviewer-max-loads", response_model=DeletedOut)
def clear_reviewer_max_loads(
    venue_id: VenueIdPath, principal: Writer, session: SessionDep, pool: PoolQuery = "reviewers"
) -> DeletedOut:
    """Remove every stored max load of the pool."""
    count = limits.clear_stored_table(session, venue_id, limits.MAX_LOADS, principal.name, pool)
    return DeletedOut(deleted=count)
