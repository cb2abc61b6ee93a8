"""Assignments: solve (as a job), inspect, check, publish (deploy), export.

States: ``draft`` (chairs only; editable through :mod:`api.routers.edits`) → ``live``
(published; the one run viewers see) → ``superseded`` (was live; publishing it again is a
rollback). Publishing needs the chair's confirmation naming the run and its version, and is
refused while the run breaks the venue's current hard constraints unless each listed item is
overridden (see :mod:`reviewer_recommender.services.publishing`).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, HTTPException, Query, UploadFile, status
from fastapi.responses import StreamingResponse

from api.auth import ChairReader, Reader, Writer
from api.dependencies import Limit, Offset, Runner, SessionDep, SettingsDep
from api.exports import ExportFormat, stream_rows
from api.ids import (
    IdQuery,
    OptionalPoolQuery,
    PaperIdPath,
    PoolQuery,
    ReviewerIdQuery,
    RowIdPath,
    VenueIdPath,
)
from api.schemas import (
    AssignedPairOut,
    AssignmentOut,
    AssignmentStatsOut,
    CheckOut,
    DeployIn,
    JobOut,
    Page,
    RunLabelIn,
)
from api.uploads import CollectionPaused, model_body, parsed_body, upload_bytes, upload_name
from recommender.io import read_custom_max_papers
from reviewer_recommender.services import run_views, runs
from reviewer_recommender.services.params import AssignmentIn, ResolveIn
from reviewer_recommender.services.results import PaperAssignmentOut
from reviewer_recommender.storage.models import AssignmentRow, Job
from reviewer_recommender.storage.repository import Paged

router = APIRouter(tags=["assignments"])


@router.post(
    "/venues/{venue_id}/assignments",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=JobOut,
    openapi_extra=model_body(AssignmentIn),
)
def create_assignment(
    venue_id: VenueIdPath,
    body: Annotated[AssignmentIn, Depends(parsed_body(AssignmentIn))],
    runner: Runner,
    principal: Writer,
    session: SessionDep,
) -> Job:
    """Solve an assignment of one pool (``pool``, the reviewers' by default) in the
    background from the pool's latest affinities, the venue's conflicts (incl. forbids),
    pins (forced), the pool's stored paper demands and max loads, and the other levels'
    live runs (nobody reviews a paper they chair; ``distinct_institutions`` optional). The
    senior area chairs' pool is matched to the area chairs of the live area-chair run. The
    job's result names the new draft. The body is validated on a worker thread (it may
    hold a demand or max load per person)."""
    return runs.start_assignment(runner, session, venue_id, body, principal.name)


@router.post(
    "/venues/{venue_id}/assignments/with-max-papers",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=JobOut,
)
def create_assignment_with_max_papers(
    venue_id: VenueIdPath,
    settings: SettingsDep,
    runner: Runner,
    principal: Writer,
    session: SessionDep,
    _gc: CollectionPaused,
    max_papers: Annotated[
        UploadFile,
        File(description="CSV reviewer_id,max: per-reviewer maximum number of papers"),
    ],
    parameters: Annotated[
        str, Form(description="the solve request (AssignmentIn) as JSON text")
    ] = "{}",
) -> Job:
    """Store the file as the venue's reviewer max loads (like
    ``POST /venues/{venue_id}/reviewer-max-loads/upload``: it replaces them, and every later
    solve uses them) and solve like ``POST /venues/{venue_id}/assignments``. The file's rows
    take precedence over ``custom_max_load`` entries of ``parameters`` for the same
    reviewers. 422 names every bad row or unknown reviewer; nothing is stored or started
    then, nor when the solve is refused."""
    name = upload_name(max_papers, "max-papers.csv")
    try:
        body = AssignmentIn.model_validate_json(parameters or "{}")
    except ValueError as error:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT, f"parameters: {error}"
        ) from error
    caps = read_custom_max_papers(upload_bytes(max_papers, settings, name), name)
    return runs.solve_with_max_loads(runner, session, venue_id, body, caps, name, principal.name)


@router.get("/venues/{venue_id}/assignments", response_model=Page[AssignmentOut])
def list_assignments(
    venue_id: VenueIdPath,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 50,
    offset: Offset = 0,
    pool: OptionalPoolQuery = None,
) -> Paged[AssignmentRow]:
    """Runs (of one pool with ``pool``), newest first; viewers see only the live ones."""
    return runs.list_runs(session, venue_id, principal, limit, offset, pool)


@router.get("/venues/{venue_id}/assignments/live", response_model=AssignmentOut)
def get_live_assignment(
    venue_id: VenueIdPath, principal: Reader, session: SessionDep, pool: PoolQuery = "reviewers"
) -> AssignmentRow:
    """The pool's live (published) run (the reviewers' by default); 404 while none is."""
    return runs.require_live_run(session, venue_id, pool)


@router.get("/venues/{venue_id}/assignments/{assignment_id}", response_model=AssignmentOut)
def get_assignment(
    venue_id: VenueIdPath, assignment_id: RowIdPath, principal: Reader, session: SessionDep
) -> AssignmentRow:
    return runs.require_assignment(session, venue_id, assignment_id, principal)


@router.patch("/venues/{venue_id}/assignments/{assignment_id}", response_model=AssignmentOut)
def label_assignment(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: RunLabelIn,
    principal: Writer,
    session: SessionDep,
) -> AssignmentRow:
    """Name a run or note something on it (any state; the pairs and the version do not
    change)."""
    return runs.label_run(
        session, venue_id, assignment_id, principal, name=body.name, note=body.note
    )


@router.post(
    "/venues/{venue_id}/assignments/{assignment_id}/resolve",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=JobOut,
    openapi_extra=model_body(ResolveIn),
)
def resolve_assignment(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: Annotated[ResolveIn, Depends(parsed_body(ResolveIn))],
    runner: Runner,
    principal: Writer,
    session: SessionDep,
) -> Job:
    """Solve again from a run: its parameters (or ``parameters``), with the venue's pins,
    forbids, conflicts and stored limits as they are now; the new draft records that it is
    a re-solve of this run (``derived_from``). Refused like a new solve."""
    return runs.resolve_run(runner, session, venue_id, assignment_id, principal, body)


@router.get(
    "/venues/{venue_id}/assignments/{assignment_id}/pairs", response_model=Page[AssignedPairOut]
)
def list_pairs(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
    paper_id: IdQuery = None,
    reviewer_id: ReviewerIdQuery = None,
) -> Paged[dict[str, Any]]:
    return run_views.run_pairs(
        session,
        venue_id,
        assignment_id,
        principal,
        paper_id=paper_id,
        reviewer_id=reviewer_id,
        limit=limit,
        offset=offset,
    )


@router.get(
    "/venues/{venue_id}/assignments/{assignment_id}/stats", response_model=AssignmentStatsOut
)
def get_assignment_stats(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Load histogram, per-paper demand and min/mean score (paginated), unassigned
    reviewers."""
    return run_views.run_stats(session, venue_id, assignment_id, principal, limit, offset)


@router.get(
    "/venues/{venue_id}/assignments/{assignment_id}/papers/{paper_id}",
    response_model=PaperAssignmentOut,
)
def paper_in_assignment(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    paper_id: PaperIdPath,
    principal: Reader,
    session: SessionDep,
    alternates: Annotated[int, Query(ge=0, le=100)] = 3,
) -> PaperAssignmentOut:
    """A paper's assigned reviewers and up to ``alternates`` next-best reviewers: the run's
    stored candidates of the paper that are not assigned, not in conflict, and whose load
    in this run is below their max load, best score first. Viewers get no alternates (an
    empty list): which reviewers they leave out would reveal private conflicts and bids."""
    return run_views.paper_in_run(session, venue_id, assignment_id, paper_id, principal, alternates)


@router.get(
    "/venues/{venue_id}/assignments/{assignment_id}/export", response_class=StreamingResponse
)
def export_assignment(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    principal: Reader,
    session: SessionDep,
    fmt: ExportFormat = "csv",
) -> StreamingResponse:
    """Pairs as ``paper_id,reviewer_id,score`` (OpenReview assignment convention)."""
    return stream_rows(
        run_views.run_export_rows(session, venue_id, assignment_id, principal),
        ["paper_id", "reviewer_id", "score"],
        fmt,
        f"{venue_id}-assignment-{assignment_id}",
    )


@router.get("/venues/{venue_id}/assignments/{assignment_id}/check", response_model=CheckOut)
def check_assignment(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    principal: ChairReader,
    session: SessionDep,
    limit: Limit = 1000,
    offset: Offset = 0,
) -> run_views.RunCheck:
    """Every hard constraint of the venue, as it is now, that the run breaks: what
    publishing it would refuse (chairs and admins only); ``limit``/``offset`` page the
    list, ``total`` counts it whole."""
    return run_views.check_run(session, venue_id, assignment_id, principal, limit, offset)


@router.post("/venues/{venue_id}/assignments/{assignment_id}/deploy", response_model=AssignmentOut)
def deploy_assignment(
    venue_id: VenueIdPath,
    assignment_id: RowIdPath,
    body: DeployIn,
    principal: Writer,
    session: SessionDep,
) -> AssignmentRow:
    """Publish a run: it becomes the venue's live assignment (what viewers see) and the
    previous live one becomes superseded. Publishing a superseded run again is a rollback.

    The body confirms the run (``assignment_id``, as in the path) and the ``version`` the
    chair reviewed (409 if it changed since). 409 lists every hard constraint the venue has
    now that the run breaks (conflicts, Not Willing bids, forbids, pins, loads, demand)
    unless ``overrides`` names each listed item with a reason; overrides and the previous
    live run are recorded in the audit log."""
    return runs.deploy_run(
        session,
        venue_id,
        assignment_id,
        principal,
        confirmed_id=body.assignment_id,
        version=body.version,
        overrides=[(o.paper_id, o.reviewer_id, o.reason) for o in body.overrides],
    )
