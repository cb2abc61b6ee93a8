"""Per-paper demand and per-reviewer max loads, stored as venue resources.

Uploading a file replaces the whole table (``paper_id,demand`` or ``reviewer_id,max``, the
OpenReview custom max papers format); one entry can also be set or removed on its own.
Every later solve reads the table, and publishing checks runs against it (see
:mod:`api.limits`). Chairs and admins only.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, UploadFile
from pydantic import BaseModel, Field
from sqlalchemy import select

from api.auth import ChairReader, Writer
from api.dependencies import Limit, Offset, SessionDep
from api.ids import PaperIdPath, ReviewerIdPath, VenueIdPath
from api.schemas import Page, PaperDemandOut, ReviewerMaxLoadOut, UploadResult
from api.uploads import CollectionPaused, SettingsDep, upload_bytes, upload_name
from recommender.io import read_custom_max_papers, read_demand
from reviewer_recommender.services.limits import (
    DEMANDS,
    MAX_LOADS,
    clear_stored_table,
    delete_stored_entry,
    replace_demands,
    replace_max_loads,
)
from reviewer_recommender.storage.models import PaperDemand, ReviewerMaxLoad
from reviewer_recommender.storage.repository import (
    audit,
    named_page,
    require_paper,
    require_reviewer,
)
from reviewer_recommender.storage.search_keys import display_name

router = APIRouter(tags=["limits"])


class DemandIn(BaseModel):
    demand: int = Field(ge=0, le=100_000, description="reviewers this paper needs")


class MaxLoadIn(BaseModel):
    max_load: int = Field(ge=0, le=100_000, description="most papers this reviewer takes")


class DeletedOut(BaseModel):
    deleted: int


@router.post("/venues/{venue_id}/paper-demands/upload", response_model=UploadResult)
def upload_paper_demands(
    venue_id: VenueIdPath,
    settings: SettingsDep,
    principal: Writer,
    session: SessionDep,
    _gc: CollectionPaused,
    file: Annotated[UploadFile, File(description="CSV paper_id,demand")],
) -> UploadResult:
    """Replace the venue's per-paper demand with the file's rows; papers not in the file
    take each solve's ``reviewers_per_paper``. 422 names every bad row and unknown paper;
    nothing changes then."""
    name = upload_name(file, "demand.csv")
    frame = read_demand(upload_bytes(file, settings, name), name)
    stored = replace_demands(session, venue_id, frame, name)
    audit(session, venue_id, principal.name, "paper_demands.upload", source=name, rows=stored)
    session.commit()
    return UploadResult(created=stored, updated=0, total=stored)


@router.get("/venues/{venue_id}/paper-demands", response_model=Page[PaperDemandOut])
def list_paper_demands(
    venue_id: VenueIdPath,
    principal: ChairReader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Stored per-paper demands, by paper id."""
    query = (
        select(PaperDemand).where(PaperDemand.venue_id == venue_id).order_by(PaperDemand.paper_id)
    )
    return named_page(
        session,
        venue_id,
        query,
        limit,
        offset,
        lambda d: {"paper_id": d.paper_id, "demand": d.demand},
    )


@router.put("/venues/{venue_id}/paper-demands/{paper_id}", response_model=PaperDemandOut)
def set_paper_demand(
    venue_id: VenueIdPath,
    paper_id: PaperIdPath,
    body: DemandIn,
    principal: Writer,
    session: SessionDep,
) -> PaperDemandOut:
    """Set one paper's demand (it overrides each solve's ``reviewers_per_paper``)."""
    paper = require_paper(session, venue_id, paper_id)
    row = session.get(PaperDemand, (venue_id, paper_id))
    if row is None:
        row = PaperDemand(venue_id=venue_id, paper_id=paper_id, demand=body.demand)
        session.add(row)
    else:
        row.demand = body.demand
    audit(
        session,
        venue_id,
        principal.name,
        "paper_demands.set",
        paper_id=paper_id,
        demand=body.demand,
    )
    session.commit()
    return PaperDemandOut(paper_id=paper_id, paper_title=paper.title, demand=body.demand)


@router.delete("/venues/{venue_id}/paper-demands/{paper_id}", response_model=DeletedOut)
def delete_paper_demand(
    venue_id: VenueIdPath, paper_id: PaperIdPath, principal: Writer, session: SessionDep
) -> DeletedOut:
    """Remove one paper's demand: it takes each solve's ``reviewers_per_paper`` again."""
    delete_stored_entry(session, venue_id, DEMANDS, paper_id, principal.name)
    session.commit()
    return DeletedOut(deleted=1)


@router.delete("/venues/{venue_id}/paper-demands", response_model=DeletedOut)
def clear_paper_demands(
    venue_id: VenueIdPath, principal: Writer, session: SessionDep
) -> DeletedOut:
    """Remove every stored demand of the venue."""
    count = clear_stored_table(session, venue_id, DEMANDS, principal.name)
    session.commit()
    return DeletedOut(deleted=count)


@router.post("/venues/{venue_id}/reviewer-max-loads/upload", response_model=UploadResult)
def upload_reviewer_max_loads(
    venue_id: VenueIdPath,
    settings: SettingsDep,
    principal: Writer,
    session: SessionDep,
    _gc: CollectionPaused,
    file: Annotated[UploadFile, File(description="CSV reviewer_id,max (custom max papers)")],
) -> UploadResult:
    """Replace the venue's per-reviewer max loads with the file's rows; reviewers not in the
    file take each solve's ``max_load``. 422 names every bad row and unknown reviewer."""
    name = upload_name(file, "max-loads.csv")
    frame = read_custom_max_papers(upload_bytes(file, settings, name), name)
    stored = replace_max_loads(session, venue_id, frame, name)
    audit(session, venue_id, principal.name, "reviewer_max_loads.upload", source=name, rows=stored)
    session.commit()
    return UploadResult(created=stored, updated=0, total=stored)


@router.get("/venues/{venue_id}/reviewer-max-loads", response_model=Page[ReviewerMaxLoadOut])
def list_reviewer_max_loads(
    venue_id: VenueIdPath,
    principal: ChairReader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Stored per-reviewer max loads, by reviewer id."""
    query = (
        select(ReviewerMaxLoad)
        .where(ReviewerMaxLoad.venue_id == venue_id)
        .order_by(ReviewerMaxLoad.reviewer_id)
    )
    return named_page(
        session,
        venue_id,
        query,
        limit,
        offset,
        lambda m: {"reviewer_id": m.reviewer_id, "max_load": m.max_load},
    )


@router.put(
    "/venues/{venue_id}/reviewer-max-loads/{reviewer_id}", response_model=ReviewerMaxLoadOut
)
def set_reviewer_max_load(
    venue_id: VenueIdPath,
    reviewer_id: ReviewerIdPath,
    body: MaxLoadIn,
    principal: Writer,
    session: SessionDep,
) -> ReviewerMaxLoadOut:
    """Set one reviewer's max load, their quota (it overrides each solve's ``max_load``)."""
    reviewer = require_reviewer(session, venue_id, reviewer_id)
    row = session.get(ReviewerMaxLoad, (venue_id, reviewer_id))
    if row is None:
        row = ReviewerMaxLoad(venue_id=venue_id, reviewer_id=reviewer_id, max_load=body.max_load)
        session.add(row)
    else:
        row.max_load = body.max_load
    audit(
        session,
        venue_id,
        principal.name,
        "reviewer_max_loads.set",
        reviewer_id=reviewer_id,
        max_load=body.max_load,
    )
    session.commit()
    return ReviewerMaxLoadOut(
        reviewer_id=reviewer_id,
        reviewer_name=display_name(reviewer_id, reviewer.name),
        max_load=body.max_load,
    )


@router.delete("/venues/{venue_id}/reviewer-max-loads/{reviewer_id}", response_model=DeletedOut)
def delete_reviewer_max_load(
    venue_id: VenueIdPath, reviewer_id: ReviewerIdPath, principal: Writer, session: SessionDep
) -> DeletedOut:
    """Remove one reviewer's max load: they take each solve's ``max_load`` again."""
    delete_stored_entry(session, venue_id, MAX_LOADS, reviewer_id, principal.name)
    session.commit()
    return DeletedOut(deleted=1)


@router.delete("/venues/{venue_id}/reviewer-max-loads", response_model=DeletedOut)
def clear_reviewer_max_loads(
    venue_id: VenueIdPath, principal: Writer, session: SessionDep
) -> DeletedOut:
    """Remove every stored max load of the venue."""
    count = clear_stored_table(session, venue_id, MAX_LOADS, principal.name)
    session.commit()
    return DeletedOut(deleted=count)
