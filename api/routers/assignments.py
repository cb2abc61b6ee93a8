"""Assignments: solve (as a job), inspect, edit (pin, forbid, swap), deploy, export.

Drafts are visible to chairs only; viewers see an assignment once a chair deploys it.
Edits apply to drafts. Pins become forced pairs and forbids become conflicts in every
later solve of the venue.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
import pandas as pd
from fastapi import APIRouter, Depends, HTTPException, Query, Request, status
from fastapi.responses import StreamingResponse
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from api.auth import Principal, Reader, Writer
from api.db import get_session
from api.models import (
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
    SwapIn,
)
from api.store import audit, not_found, paginate, require_paper, require_reviewer, require_run
from api.tasks import json_safe

router = APIRouter(tags=["assignments"])
SessionDep = Annotated[Session, Depends(get_session)]
Limit = Annotated[int, Query(ge=1, le=1000)]
Offset = Annotated[int, Query(ge=0)]


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


@router.post(
    "/venues/{venue_id}/assignments", status_code=status.HTTP_202_ACCEPTED, response_model=JobOut
)
def create_assignment(
    venue_id: str, body: AssignmentIn, request: Request, principal: Writer, session: SessionDep
) -> Any:
    """Solve an assignment in the background from the latest affinities, the venue's
    conflicts (incl. forbids) and pins (forced). The job's result names the new draft."""
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
    blocking = [
        c for c in _hard_conflicts(session, venue_id, paper_id, reviewer_id) if c.source != "forbid"
    ]
    if blocking:
        reasons = "; ".join(f"{c.source}: {c.reason}" for c in blocking)
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            f"({paper_id}, {reviewer_id}) is a conflict of interest ({reasons})",
        )
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
    body: PairIn,
    request: Request,
    principal: Writer,
    session: SessionDep,
) -> AssignmentPair:
    """Require a pair: added to this draft and forced in every later solve."""
    row = require_draft(session, venue_id, assignment_id, principal)
    require_paper(session, venue_id, body.paper_id)
    require_reviewer(session, venue_id, body.reviewer_id)
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
    )
    session.commit()
    pair = session.get(AssignmentPair, (row.id, body.paper_id, body.reviewer_id))
    assert pair is not None
    return pair


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
    """Replace one reviewer of a paper with another in this draft."""
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
    )
    session.commit()
    pair = session.get(AssignmentPair, (row.id, body.paper_id, body.add_reviewer_id))
    assert pair is not None
    return pair


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
