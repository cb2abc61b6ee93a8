"""Assignments: solve (as a job), inspect, edit (pin, forbid, swap), deploy, export.

Drafts are visible to chairs only; viewers see an assignment once a chair deploys it.
Edits apply to drafts. Pins become forced pairs and forbids become conflicts in every
later solve of the venue.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
import pandas as pd
from fastapi import (
    APIRouter,
    File,
    Form,
    HTTPException,
    Query,
    Request,
    UploadFile,
    status,
)
from fastapi.responses import StreamingResponse
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from api.auth import Principal, Reader, Writer
from api.dependencies import Limit, Offset, SessionDep
from api.models import (
    AffinityScore,
    AssignmentPair,
    AssignmentRow,
    Conflict,
    Pin,
    ReviewerRow,
    SubmissionRow,
    utcnow,
)
from api.routers.affinity import ExportFormat, pair_score, start_job, stream_rows
from api.schemas import (
    AssignedPairOut,
    AssignmentIn,
    AssignmentOut,
    AssignmentStatsOut,
    JobOut,
    Page,
    PairIn,
    PaperAssignmentOut,
    PaperReviewerOut,
    PinIn,
    SwapIn,
)
from api.store import audit, not_found, paginate, require_paper, require_reviewer, require_run
from api.tasks import json_safe
from api.uploads import SettingsDep, upload_bytes
from recommender.corpus import InputError, Problem
from recommender.io import read_custom_max_papers

router = APIRouter(tags=["assignments"])


def require_assignment(
    session: Session, venue_id: str, assignment_id: int, principal: Principal
) -> AssignmentRow:
    row = session.get(AssignmentRow, assignment_id)
    if (
        row is None
        or row.venue_id != venue_id
        or (row.state == "draft" and not principal.sees_drafts(venue_id))
    ):
        raise not_found("assignment", assignment_id)
    return row


def require_draft(
    session: Session, venue_id: str, assignment_id: int, principal: Principal
) -> AssignmentRow:
    row = require_assignment(session, venue_id, assignment_id, principal)
    if row.state != "draft":
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            f"assignment {assignment_id} is {row.state}; only drafts can be edited "
            "(solve again for a new draft)",
        )
    return row


def _start_assignment(
    venue_id: str,
    body: AssignmentIn,
    request: Request,
    principal: Principal,
    session: Session,
) -> Any:
    """Validate ``body`` against the venue and queue the solve job."""
    from matching import get_solver

    if body.solver != "auto":
        try:
            get_solver(body.solver, **body.options)
        except (ValueError, TypeError) as error:
            raise HTTPException(
                status.HTTP_422_UNPROCESSABLE_CONTENT, f"solver: {error}"
            ) from error
    run = require_run(session, venue_id)
    n_papers = session.scalar(select(func.count()).where(SubmissionRow.venue_id == venue_id)) or 0
    reviewer_ids = list(
        session.scalars(select(ReviewerRow.id).where(ReviewerRow.venue_id == venue_id))
    )
    unknown = sorted(set(body.custom_max_load) - set(reviewer_ids))
    if unknown:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND, f"custom_max_load: reviewer {unknown[0]!r} not found"
        )
    if body.min_load > body.max_load:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            f"min_load {body.min_load} exceeds max_load {body.max_load}",
        )
    capacity = sum(body.custom_max_load.get(r, body.max_load) for r in reviewer_ids)
    needed = n_papers * body.reviewers_per_paper
    if needed > capacity:
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            f"infeasible: {n_papers} papers x {body.reviewers_per_paper} reviewers = {needed} "
            f"reviews, but {len(reviewer_ids)} reviewers can take at most {capacity}; raise "
            "max_load or add reviewers",
        )
    params = {**body.model_dump(), "affinity_run_id": run.id}
    return start_job(request, session, venue_id, "assignment", params, principal.name)


@router.post(
    "/venues/{venue_id}/assignments", status_code=status.HTTP_202_ACCEPTED, response_model=JobOut
)
def create_assignment(
    venue_id: str, body: AssignmentIn, request: Request, principal: Writer, session: SessionDep
) -> Any:
    """Solve an assignment in the background from the latest affinities, the venue's
    conflicts (incl. forbids) and pins (forced). The job's result names the new draft."""
    return _start_assignment(venue_id, body, request, principal, session)


@router.post(
    "/venues/{venue_id}/assignments/with-max-papers",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=JobOut,
)
def create_assignment_with_max_papers(
    venue_id: str,
    request: Request,
    settings: SettingsDep,
    principal: Writer,
    session: SessionDep,
    max_papers: Annotated[
        UploadFile,
        File(description="CSV reviewer_id,max: per-reviewer maximum number of papers"),
    ],
    parameters: Annotated[
        str, Form(description="the solve request (AssignmentIn) as JSON text")
    ] = "{}",
) -> Any:
    """Solve like ``POST /venues/{venue_id}/assignments``, with per-reviewer max loads from
    a ``reviewer_id,max`` CSV (OpenReview custom max papers). Rows of the file override
    ``custom_max_load`` entries of ``parameters``; the merged map is stored with the draft's
    parameters, so a re-solve posting them keeps it. 422 names every bad row or unknown
    reviewer; nothing is started then."""
    name = max_papers.filename or "max-papers.csv"
    try:
        body = AssignmentIn.model_validate_json(parameters or "{}")
    except ValueError as error:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT, f"parameters: {error}"
        ) from error
    caps = read_custom_max_papers(upload_bytes(max_papers, settings, name), name)
    known = set(session.scalars(select(ReviewerRow.id).where(ReviewerRow.venue_id == venue_id)))
    unknown = sorted(set(caps["reviewer_id"]) - known)
    if unknown:
        raise InputError(
            [Problem(name, None, "reviewer_id", f"unknown reviewer id {r!r}") for r in unknown]
        )
    merged = {
        **body.custom_max_load,
        **{str(r): int(m) for r, m in zip(caps["reviewer_id"], caps["max"], strict=True)},
    }
    body = body.model_copy(update={"custom_max_load": merged})
    return _start_assignment(venue_id, body, request, principal, session)


@router.get("/venues/{venue_id}/assignments", response_model=Page[AssignmentOut])
def list_assignments(
    venue_id: str, principal: Reader, session: SessionDep, limit: Limit = 50, offset: Offset = 0
) -> dict[str, Any]:
    query = (
        select(AssignmentRow)
        .where(AssignmentRow.venue_id == venue_id)
        .order_by(AssignmentRow.id.desc())
    )
    if not principal.sees_drafts(venue_id):
        query = query.where(AssignmentRow.state != "draft")
    items, total = paginate(session, query, limit, offset)
    return {"items": items, "total": total, "limit": limit, "offset": offset}


@router.get("/venues/{venue_id}/assignments/{assignment_id}", response_model=AssignmentOut)
def get_assignment(
    venue_id: str, assignment_id: int, principal: Reader, session: SessionDep
) -> AssignmentRow:
    return require_assignment(session, venue_id, assignment_id, principal)


@router.get(
    "/venues/{venue_id}/assignments/{assignment_id}/pairs", response_model=Page[AssignedPairOut]
)
def list_pairs(
    venue_id: str,
    assignment_id: int,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
    paper_id: str | None = None,
    reviewer_id: str | None = None,
) -> dict[str, Any]:
    require_assignment(session, venue_id, assignment_id, principal)
    query = select(AssignmentPair).where(AssignmentPair.assignment_id == assignment_id)
    if paper_id is not None:
        query = query.where(AssignmentPair.paper_id == paper_id)
    if reviewer_id is not None:
        query = query.where(AssignmentPair.reviewer_id == reviewer_id)
    query = query.order_by(
        AssignmentPair.paper_id, AssignmentPair.score.desc(), AssignmentPair.reviewer_id
    )
    items, total = paginate(session, query, limit, offset)
    return {"items": items, "total": total, "limit": limit, "offset": offset}


@router.get(
    "/venues/{venue_id}/assignments/{assignment_id}/stats", response_model=AssignmentStatsOut
)
def assignment_stats(
    venue_id: str,
    assignment_id: int,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Load histogram, per-paper min/mean score (paginated), unassigned reviewers."""
    row = require_assignment(session, venue_id, assignment_id, principal)
    pairs = pd.DataFrame(
        session.execute(
            select(AssignmentPair.paper_id, AssignmentPair.reviewer_id, AssignmentPair.score).where(
                AssignmentPair.assignment_id == assignment_id
            )
        ).all(),
        columns=["paper_id", "reviewer_id", "score"],
    )
    reviewer_ids = pd.Index(
        sorted(session.scalars(select(ReviewerRow.id).where(ReviewerRow.venue_id == venue_id)))
    )
    paper_ids = pd.Index(
        sorted(session.scalars(select(SubmissionRow.id).where(SubmissionRow.venue_id == venue_id)))
    )
    loads = pairs.groupby("reviewer_id").size().reindex(reviewer_ids, fill_value=0)
    histogram = loads.value_counts().sort_index()
    demand = int(row.parameters.get("reviewers_per_paper", 0))
    per_paper = (
        pairs.groupby("paper_id")["score"]
        .agg(["size", "min", "mean"])
        .reindex(paper_ids)
        .rename(columns={"size": "assigned", "min": "min_score", "mean": "mean_score"})
    )
    per_paper["assigned"] = per_paper["assigned"].fillna(0).astype(np.int64)
    page = per_paper.iloc[offset : offset + limit]
    papers = [
        json_safe(
            {
                "paper_id": pid,
                "demand": demand,
                "assigned": int(rec.assigned),
                "min_score": float(rec.min_score),
                "mean_score": float(rec.mean_score),
            }
        )
        for pid, rec in page.iterrows()
    ]
    scores = pairs["score"].to_numpy(dtype=np.float64)
    summary = json_safe(
        {
            "pairs": len(pairs),
            "total_score": float(scores.sum()),
            "mean_score": float(scores.mean()) if len(scores) else None,
            "min_score": float(scores.min()) if len(scores) else None,
            "min_paper_mean_score": float(per_paper["mean_score"].min())
            if len(per_paper)
            else None,
            "load_min": int(loads.min()) if len(loads) else 0,
            "load_max": int(loads.max()) if len(loads) else 0,
        }
    )
    return {
        "load_histogram": {str(k): int(v) for k, v in histogram.items()},
        "papers": {"items": papers, "total": len(per_paper), "limit": limit, "offset": offset},
        "unassigned_reviewers": [str(r) for r in loads.index[loads.to_numpy() == 0]],
        "papers_below_demand": int((per_paper["assigned"] < demand).sum()),
        "summary": summary,
    }


@router.get(
    "/venues/{venue_id}/assignments/{assignment_id}/papers/{paper_id}",
    response_model=PaperAssignmentOut,
)
def paper_in_assignment(
    venue_id: str,
    assignment_id: int,
    paper_id: str,
    principal: Reader,
    session: SessionDep,
    alternates: Annotated[int, Query(ge=0, le=100)] = 3,
) -> PaperAssignmentOut:
    """A paper's assigned reviewers and up to ``alternates`` next-best reviewers.

    Alternates (``matching.alternates``) are the assignment's affinity-run candidates of the
    paper (its stored scores) that are not assigned, not in conflict, and whose load in this
    assignment is below their max load, best score first."""
    from matching import Assignment, AssignmentProblem
    from matching import alternates as next_best

    row = require_assignment(session, venue_id, assignment_id, principal)
    require_paper(session, venue_id, paper_id)
    parameters = row.parameters or {}
    demand = parameters.get("reviewers_per_paper")
    assigned = pd.DataFrame(
        session.execute(
            select(AssignmentPair.reviewer_id, AssignmentPair.score, AssignmentPair.pinned)
            .where(AssignmentPair.assignment_id == row.id, AssignmentPair.paper_id == paper_id)
            .order_by(AssignmentPair.score.desc(), AssignmentPair.reviewer_id)
        ).all(),
        columns=["reviewer_id", "score", "pinned"],
    )
    loads = dict(
        session.execute(
            select(AssignmentPair.reviewer_id, func.count())
            .where(AssignmentPair.assignment_id == row.id)
            .group_by(AssignmentPair.reviewer_id)
        ).all()
    )
    candidates = pd.DataFrame(
        session.execute(
            select(AffinityScore.reviewer_id, AffinityScore.score).where(
                AffinityScore.run_id == row.affinity_run_id, AffinityScore.paper_id == paper_id
            )
        ).all()
        if row.affinity_run_id is not None
        else [],
        columns=["reviewer_id", "score"],
    )
    # the assigned pairs are rows of the table even if the run does not hold them (a pin
    # scored on a later run): alternates() needs the assignment as a subset of the pairs
    table = pd.concat(
        [assigned[["reviewer_id", "score"]], candidates], ignore_index=True
    ).drop_duplicates("reviewer_id", keep="first")
    reviewer_ids = [str(r) for r in table["reviewer_id"]]
    assigned_ids = set(assigned["reviewer_id"])
    unlimited = np.iinfo(np.int32).max

    def max_of(reviewer_id: str) -> int | None:
        return reviewer_max_load(parameters, reviewer_id)

    remaining = pd.Series(
        [
            max(0, (max_of(r) if max_of(r) is not None else unlimited) - loads.get(r, 0))
            for r in reviewer_ids
        ],
        index=pd.Index(reviewer_ids),
        dtype=np.int64,
    )
    in_table = set(reviewer_ids)
    conflicted = sorted(
        {
            str(r)
            for r in session.scalars(
                select(Conflict.reviewer_id).where(
                    Conflict.venue_id == venue_id, Conflict.paper_id == paper_id
                )
            )
        }
        & (in_table - assigned_ids)
    )
    problem = AssignmentProblem.from_pairs(
        np.full(len(table), paper_id, dtype=object),
        table["reviewer_id"].to_numpy(dtype=object),
        table["score"].to_numpy(dtype=np.float64),
        demand=int(demand or 0),
        max_load=remaining,
        conflicts=(np.full(len(conflicted), paper_id, dtype=object), np.array(conflicted))
        if conflicted
        else None,
        paper_ids=[paper_id],
        reviewer_ids=reviewer_ids,
    )
    pair_reviewer_ids = np.asarray(problem.reviewer_ids, dtype=object)[problem.pair_reviewer]
    selected = np.flatnonzero(np.isin(pair_reviewer_ids, list(assigned_ids))).astype(np.int64)
    total = float(problem.pair_score[selected].sum())
    stored = Assignment(
        problem=problem, selected=selected, objective=total, upper_bound=total, solver="stored"
    )
    best = next_best(problem, stored, alternates)
    return PaperAssignmentOut(
        paper_id=paper_id,
        demand=None if demand is None else int(demand),
        assigned=[
            PaperReviewerOut(
                reviewer_id=r,
                score=float(score),
                pinned=bool(pinned),
                load=loads.get(r, 0),
                max_load=max_of(r),
            )
            for r, score, pinned in assigned.itertuples(index=False)
        ],
        alternates=[
            PaperReviewerOut(
                reviewer_id=r,
                score=float(score),
                rank=int(rank),
                load=loads.get(r, 0),
                max_load=max_of(r),
            )
            for r, score, rank in best[["reviewer_id", "score", "rank"]].itertuples(index=False)
        ],
    )


@router.get(
    "/venues/{venue_id}/assignments/{assignment_id}/export", response_class=StreamingResponse
)
def export_assignment(
    venue_id: str,
    assignment_id: int,
    principal: Reader,
    session: SessionDep,
    fmt: ExportFormat = "csv",
) -> StreamingResponse:
    """Pairs as ``paper_id,reviewer_id,score`` (OpenReview assignment convention)."""
    require_assignment(session, venue_id, assignment_id, principal)
    rows = session.execute(
        select(AssignmentPair.paper_id, AssignmentPair.reviewer_id, AssignmentPair.score)
        .where(AssignmentPair.assignment_id == assignment_id)
        .order_by(AssignmentPair.paper_id, AssignmentPair.score.desc(), AssignmentPair.reviewer_id)
    ).all()
    return stream_rows(
        iter(rows),
        ["paper_id", "reviewer_id", "score"],
        fmt,
        f"{venue_id}-assignment-{assignment_id}",
    )


def _mark_edited(row: AssignmentRow) -> None:
    row.summary = {**row.summary, "edited": True}


def _hard_conflicts(
    session: Session, venue_id: str, paper_id: str, reviewer_id: str
) -> list[Conflict]:
    return list(
        session.scalars(
            select(Conflict).where(
                Conflict.venue_id == venue_id,
                Conflict.paper_id == paper_id,
                Conflict.reviewer_id == reviewer_id,
            )
        )
    )


def _refuse_conflict(session: Session, venue_id: str, paper_id: str, reviewer_id: str) -> None:
    """409 if the pair is a conflict of interest (a chair's forbid is not: adding lifts it)."""
    blocking = [
        c for c in _hard_conflicts(session, venue_id, paper_id, reviewer_id) if c.source != "forbid"
    ]
    if blocking:
        reasons = "; ".join(f"{c.source}: {c.reason}" for c in blocking)
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            f"({paper_id}, {reviewer_id}) is a conflict of interest ({reasons})",
        )


def reviewer_max_load(parameters: dict[str, Any], reviewer_id: str) -> int | None:
    """A reviewer's max load under an assignment's stored solve parameters (None: no limit)."""
    custom = parameters.get("custom_max_load") or {}
    if reviewer_id in custom:
        return int(custom[reviewer_id])
    max_load = parameters.get("max_load")
    return None if max_load is None else int(max_load)


def _overfilled_limits(
    session: Session,
    row: AssignmentRow,
    paper_id: str,
    reviewer_id: str,
    *,
    adds_reviewer_to_paper: bool = True,
) -> list[str]:
    """The limits adding (paper, reviewer) to the draft would break: the reviewer's max load
    and, unless another reviewer of the paper leaves (a swap), the paper's demand
    (reviewers_per_paper). Empty if the pair is already there."""
    if session.get(AssignmentPair, (row.id, paper_id, reviewer_id)) is not None:
        return []

    def count(*where: Any) -> int:
        return int(
            session.scalar(
                select(func.count()).where(AssignmentPair.assignment_id == row.id, *where)
            )
            or 0
        )

    limits = []
    max_load = reviewer_max_load(row.parameters, reviewer_id)
    load = count(AssignmentPair.reviewer_id == reviewer_id)
    if max_load is not None and load + 1 > max_load:
        limits.append(
            f"reviewer {reviewer_id!r} would review {load + 1} papers, over their max load "
            f"of {max_load}"
        )
    demand = row.parameters.get("reviewers_per_paper")
    reviewers = count(AssignmentPair.paper_id == paper_id)
    if adds_reviewer_to_paper and demand is not None and reviewers + 1 > int(demand):
        limits.append(
            f"paper {paper_id!r} would get {reviewers + 1} reviewers, over its demand of {demand}"
        )
    return limits


def _refuse_overfill(action: str, assignment_id: int, limits: list[str], advice: str) -> None:
    raise HTTPException(
        status.HTTP_409_CONFLICT,
        f"{action} would overfill draft {assignment_id}: {'; '.join(limits)}. {advice}",
    )


def _stored_pair(
    session: Session, row: AssignmentRow, paper_id: str, reviewer_id: str
) -> AssignmentPair:
    pair = session.get(AssignmentPair, (row.id, paper_id, reviewer_id))
    assert pair is not None
    return pair


def _add_pair(
    request: Request,
    session: Session,
    venue_id: str,
    row: AssignmentRow,
    paper_id: str,
    reviewer_id: str,
    *,
    pinned: bool,
) -> None:
    _refuse_conflict(session, venue_id, paper_id, reviewer_id)
    session.execute(
        delete(Conflict).where(
            Conflict.venue_id == venue_id,
            Conflict.paper_id == paper_id,
            Conflict.reviewer_id == reviewer_id,
            Conflict.source == "forbid",
        )
    )
    score = pair_score(
        request, session, venue_id, paper_id, reviewer_id, explain=False, store=True
    ).score
    existing = session.get(AssignmentPair, (row.id, paper_id, reviewer_id))
    if existing is None:
        session.add(
            AssignmentPair(
                assignment_id=row.id,
                paper_id=paper_id,
                reviewer_id=reviewer_id,
                score=score,
                pinned=pinned,
            )
        )
    elif pinned:
        existing.pinned = True


@router.post("/venues/{venue_id}/assignments/{assignment_id}/pin", response_model=AssignedPairOut)
def pin_pair(
    venue_id: str,
    assignment_id: int,
    body: PinIn,
    request: Request,
    principal: Writer,
    session: SessionDep,
) -> AssignmentPair:
    """Require a pair: added to this draft and forced in every later solve.

    409 if the pair is a conflict of interest, or if adding it would exceed the reviewer's
    max load or the paper's demand in this draft (the message names the limits) unless
    ``force`` is true."""
    row = require_draft(session, venue_id, assignment_id, principal)
    require_paper(session, venue_id, body.paper_id)
    require_reviewer(session, venue_id, body.reviewer_id)
    _refuse_conflict(session, venue_id, body.paper_id, body.reviewer_id)
    limits = _overfilled_limits(session, row, body.paper_id, body.reviewer_id)
    if limits and not body.force:
        _refuse_overfill(
            f"pinning ({body.paper_id}, {body.reviewer_id})",
            assignment_id,
            limits,
            "Swap a reviewer out instead, or send force=true to pin anyway",
        )
    _add_pair(request, session, venue_id, row, body.paper_id, body.reviewer_id, pinned=True)
    if session.get(Pin, (venue_id, body.paper_id, body.reviewer_id)) is None:
        session.add(
            Pin(
                venue_id=venue_id,
                paper_id=body.paper_id,
                reviewer_id=body.reviewer_id,
                created_by=principal.name,
            )
        )
    _mark_edited(row)
    audit(
        session,
        venue_id,
        principal.name,
        "assignment.pin",
        assignment_id=assignment_id,
        paper_id=body.paper_id,
        reviewer_id=body.reviewer_id,
        reason=body.reason,
        overfilled=limits,
    )
    session.commit()
    return _stored_pair(session, row, body.paper_id, body.reviewer_id)


@router.post("/venues/{venue_id}/assignments/{assignment_id}/unpin", response_model=AssignedPairOut)
def unpin_pair(
    venue_id: str, assignment_id: int, body: PairIn, principal: Writer, session: SessionDep
) -> AssignmentPair:
    """Drop a pin: the pair stays in this draft but is no longer forced."""
    row = require_draft(session, venue_id, assignment_id, principal)
    pin = session.get(Pin, (venue_id, body.paper_id, body.reviewer_id))
    pair = session.get(AssignmentPair, (row.id, body.paper_id, body.reviewer_id))
    if pin is None or pair is None:
        raise not_found("pin", f"{body.paper_id}/{body.reviewer_id}")
    session.delete(pin)
    pair.pinned = False
    _mark_edited(row)
    audit(
        session,
        venue_id,
        principal.name,
        "assignment.unpin",
        assignment_id=assignment_id,
        paper_id=body.paper_id,
        reviewer_id=body.reviewer_id,
        reason=body.reason,
    )
    session.commit()
    return pair


@router.post("/venues/{venue_id}/assignments/{assignment_id}/forbid", response_model=AssignmentOut)
def forbid_pair(
    venue_id: str, assignment_id: int, body: PairIn, principal: Writer, session: SessionDep
) -> AssignmentRow:
    """Forbid a pair: removed from this draft and a conflict in every later solve."""
    row = require_draft(session, venue_id, assignment_id, principal)
    require_paper(session, venue_id, body.paper_id)
    require_reviewer(session, venue_id, body.reviewer_id)
    if session.get(Conflict, (venue_id, body.paper_id, body.reviewer_id, "forbid")) is None:
        session.add(
            Conflict(
                venue_id=venue_id,
                paper_id=body.paper_id,
                reviewer_id=body.reviewer_id,
                source="forbid",
                reason=body.reason or f"forbidden by {principal.name}",
            )
        )
    session.execute(
        delete(Pin).where(
            Pin.venue_id == venue_id,
            Pin.paper_id == body.paper_id,
            Pin.reviewer_id == body.reviewer_id,
        )
    )
    session.execute(
        delete(AssignmentPair).where(
            AssignmentPair.assignment_id == row.id,
            AssignmentPair.paper_id == body.paper_id,
            AssignmentPair.reviewer_id == body.reviewer_id,
        )
    )
    _mark_edited(row)
    audit(
        session,
        venue_id,
        principal.name,
        "assignment.forbid",
        assignment_id=assignment_id,
        paper_id=body.paper_id,
        reviewer_id=body.reviewer_id,
        reason=body.reason,
    )
    session.commit()
    return row


@router.post("/venues/{venue_id}/assignments/{assignment_id}/swap", response_model=AssignedPairOut)
def swap_reviewer(
    venue_id: str,
    assignment_id: int,
    body: SwapIn,
    request: Request,
    principal: Writer,
    session: SessionDep,
) -> AssignmentPair:
    """Replace one reviewer of a paper with another in this draft.

    409 if the incoming reviewer would go over their max load, unless ``force`` is true."""
    row = require_draft(session, venue_id, assignment_id, principal)
    require_paper(session, venue_id, body.paper_id)
    require_reviewer(session, venue_id, body.add_reviewer_id)
    old = session.get(AssignmentPair, (row.id, body.paper_id, body.remove_reviewer_id))
    if old is None:
        raise not_found("assigned pair", f"{body.paper_id}/{body.remove_reviewer_id}")
    if session.get(AssignmentPair, (row.id, body.paper_id, body.add_reviewer_id)) is not None:
        raise HTTPException(
            status.HTTP_409_CONFLICT, f"{body.add_reviewer_id!r} already reviews {body.paper_id!r}"
        )
    if old.pinned:
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            f"({body.paper_id}, {body.remove_reviewer_id}) is pinned; unpin it first",
        )
    limits = _overfilled_limits(
        session, row, body.paper_id, body.add_reviewer_id, adds_reviewer_to_paper=False
    )
    if limits and not body.force:
        _refuse_overfill(
            f"swapping {body.add_reviewer_id!r} into {body.paper_id!r}",
            assignment_id,
            limits,
            "Send force=true to swap anyway",
        )
    session.delete(old)
    _add_pair(request, session, venue_id, row, body.paper_id, body.add_reviewer_id, pinned=False)
    _mark_edited(row)
    audit(
        session,
        venue_id,
        principal.name,
        "assignment.swap",
        assignment_id=assignment_id,
        paper_id=body.paper_id,
        removed=body.remove_reviewer_id,
        added=body.add_reviewer_id,
        overfilled=limits,
    )
    session.commit()
    return _stored_pair(session, row, body.paper_id, body.add_reviewer_id)


@router.post("/venues/{venue_id}/assignments/{assignment_id}/deploy", response_model=AssignmentOut)
def deploy_assignment(
    venue_id: str, assignment_id: int, principal: Writer, session: SessionDep
) -> AssignmentRow:
    """Publish a draft to viewers; the previously deployed assignment becomes superseded."""
    row = require_draft(session, venue_id, assignment_id, principal)
    for previous in session.scalars(
        select(AssignmentRow).where(
            AssignmentRow.venue_id == venue_id, AssignmentRow.state == "deployed"
        )
    ):
        previous.state = "superseded"
    row.state = "deployed"
    row.deployed_at = utcnow()
    audit(session, venue_id, principal.name, "assignment.deploy", assignment_id=assignment_id)
    session.commit()
    return row
