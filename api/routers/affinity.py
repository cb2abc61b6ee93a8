"""Affinity jobs, pair scores with explanations, top-N lists, statistics, exports."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request, status
from fastapi.responses import StreamingResponse
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from api.auth import Reader, Writer
from api.dependencies import Limit, Offset, SessionDep
from api.models import AffinityScore, Conflict, Job
from api.schemas import AffinityJobIn, AffinityRunOut, ConflictOut, JobOut, Page, PairScoreOut
from api.store import (
    audit,
    corpus_version,
    latest_run,
    paginate,
    pair_marks,
    require_paper,
    require_reviewer,
    require_run,
)
from recommender.io.safe_csv import safe_csv_writer

router = APIRouter(tags=["affinity"])
ExportFormat = Annotated[Literal["csv", "json"], Query(alias="format")]


def start_job(
    request: Request,
    session: Session,
    venue_id: str,
    kind: str,
    params: dict[str, Any],
    actor: str,
    rerun_of: int | None = None,
) -> Job:
    """Create a queued job row (committed) and hand it to the runner."""
    job = Job(
        venue_id=venue_id,
        kind=kind,
        params=params,
        created_by=actor,
        rerun_of=rerun_of,
        log=[],
        result={},
    )
    session.add(job)
    session.flush()
    audit(
        session,
        venue_id,
        actor,
        f"job.{kind}.start",
        job_id=job.id,
        params=params,
        rerun_of=rerun_of,
    )
    session.commit()
    request.app.state.jobs.submit(job.id)
    session.refresh(job)
    return job


@router.post(
    "/venues/{venue_id}/affinity/jobs", status_code=status.HTTP_202_ACCEPTED, response_model=JobOut
)
def compute_affinities(
    venue_id: str, body: AffinityJobIn, request: Request, principal: Writer, session: SessionDep
) -> Job:
    """Start computing the venue's affinities (and detecting conflicts) in the background."""
    from recommender.affinity import AffinityConfig

    try:
        config = AffinityConfig.from_dict(body.config)
    except (TypeError, ValueError) as error:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"config: {error}") from error
    params = {"config": json.loads(json.dumps(config.to_dict(), default=str)), "top_n": body.top_n}
    return start_job(request, session, venue_id, "affinity", params, principal.name)


def _run_out(session: Session, run: Any) -> AffinityRunOut:
    return AffinityRunOut(
        id=run.id,
        job_id=run.job_id,
        config=run.config,
        n_papers=run.n_papers,
        n_reviewers=run.n_reviewers,
        top_n=run.top_n,
        statistics=run.statistics,
        stale=corpus_version(session, run.venue_id) != run.corpus_version,
        created_at=run.created_at,
    )


@router.get("/venues/{venue_id}/affinity", response_model=AffinityRunOut)
def get_affinity_run(venue_id: str, principal: Reader, session: SessionDep) -> AffinityRunOut:
    """The latest affinity run: configuration, score histogram and summary statistics
    (404 while the venue has none)."""
    run = latest_run(session, venue_id)
    if run is None:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND,
            f"venue {venue_id!r} has no affinity run yet: "
            f"POST /venues/{venue_id}/affinity/jobs first",
        )
    return _run_out(session, run)


def pair_score(
    request: Request,
    session: Session,
    venue_id: str,
    paper_id: str,
    reviewer_id: str,
    *,
    explain: bool,
    store: bool,
) -> PairScoreOut:
    """Score of a pair from the latest run; a pair not stored is computed (and, with
    ``store``, kept as a requested pair)."""
    run = require_run(session, venue_id)
    require_paper(session, venue_id, paper_id)
    require_reviewer(session, venue_id, reviewer_id)
    stored = session.get(AffinityScore, (run.id, paper_id, reviewer_id))
    explanation = None
    if stored is None or explain:
        model, _stale = request.app.state.explainers.model(session, run)
        evidence = model.explain(paper_id, reviewer_id)
        explanation = evidence.to_dict() if explain else None
        score = float(stored.score) if stored is not None else float(evidence.score)
        if stored is None and store:
            session.add(
                AffinityScore(
                    run_id=run.id,
                    paper_id=paper_id,
                    reviewer_id=reviewer_id,
                    score=score,
                    requested=True,
                )
            )
            session.commit()
    else:
        score = float(stored.score)
    conflicts, bids = pair_marks(session, venue_id, [(paper_id, reviewer_id)])
    return PairScoreOut(
        paper_id=paper_id,
        reviewer_id=reviewer_id,
        score=score,
        conflict=conflicts.get((paper_id, reviewer_id), []),
        bid=bids.get((paper_id, reviewer_id)),
        explanation=explanation,
    )


@router.get(
    "/venues/{venue_id}/affinity/pairs/{paper_id}/{reviewer_id}", response_model=PairScoreOut
)
def get_pair(
    venue_id: str,
    paper_id: str,
    reviewer_id: str,
    request: Request,
    principal: Reader,
    session: SessionDep,
    explain: bool = True,
) -> PairScoreOut:
    """A pair's score, conflicts, bid and (``explain=true``) the evidence behind it."""
    return pair_score(
        request, session, venue_id, paper_id, reviewer_id, explain=explain, store=True
    )


def _scored_page(
    session: Session, venue_id: str, query: Any, limit: int, offset: int
) -> dict[str, Any]:
    total = session.scalar(select(func.count()).select_from(query.order_by(None).subquery())) or 0
    rows = session.execute(query.limit(limit).offset(offset)).all()
    pairs = [(r.paper_id, r.reviewer_id) for r in rows]
    conflicts, bids = pair_marks(session, venue_id, pairs)
    items = [
        PairScoreOut(
            paper_id=r.paper_id,
            reviewer_id=r.reviewer_id,
            score=r.score,
            conflict=conflicts.get((r.paper_id, r.reviewer_id), []),
            bid=bids.get((r.paper_id, r.reviewer_id)),
        )
        for r in rows
    ]
    return {"items": items, "total": int(total), "limit": limit, "offset": offset}


@router.get("/venues/{venue_id}/papers/{paper_id}/reviewers", response_model=Page[PairScoreOut])
def top_reviewers(
    venue_id: str,
    paper_id: str,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 10,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Stored reviewers of a paper, best first, with conflicts and bids marked."""
    run = require_run(session, venue_id)
    require_paper(session, venue_id, paper_id)
    query = (
        select(AffinityScore.paper_id, AffinityScore.reviewer_id, AffinityScore.score)
        .where(AffinityScore.run_id == run.id, AffinityScore.paper_id == paper_id)
        .order_by(AffinityScore.score.desc(), AffinityScore.reviewer_id)
    )
    return _scored_page(session, venue_id, query, limit, offset)


@router.get("/venues/{venue_id}/reviewers/{reviewer_id}/papers", response_model=Page[PairScoreOut])
def top_papers(
    venue_id: str,
    reviewer_id: str,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 10,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Stored papers of a reviewer, best first, with conflicts and bids marked."""
    run = require_run(session, venue_id)
    require_reviewer(session, venue_id, reviewer_id)
    query = (
        select(AffinityScore.paper_id, AffinityScore.reviewer_id, AffinityScore.score)
        .where(AffinityScore.run_id == run.id, AffinityScore.reviewer_id == reviewer_id)
        .order_by(AffinityScore.score.desc(), AffinityScore.paper_id)
    )
    return _scored_page(session, venue_id, query, limit, offset)


def stream_rows(
    rows: Iterator[tuple[Any, ...]], header: list[str], fmt: str, filename: str
) -> StreamingResponse:
    """CSV (OpenReview style, with header; text cells spreadsheet-safe, see
    :mod:`recommender.io.safe_csv`) or a JSON list of objects."""

    def as_csv() -> Iterator[str]:
        buffer = io.StringIO()
        writer = safe_csv_writer(buffer, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            writer.writerow(row)
            if buffer.tell() > 65536:
                yield buffer.getvalue()
                buffer.seek(0)
                buffer.truncate()
        yield buffer.getvalue()

    def as_json() -> Iterator[str]:
        yield "["
        for index, row in enumerate(rows):
            yield ("," if index else "") + json.dumps(dict(zip(header, row, strict=True)))
        yield "]"

    media = "text/csv" if fmt == "csv" else "application/json"
    return StreamingResponse(
        as_csv() if fmt == "csv" else as_json(),
        media_type=media,
        headers={"Content-Disposition": f'attachment; filename="{filename}.{fmt}"'},
    )


@router.get("/venues/{venue_id}/affinity/export", response_class=StreamingResponse)
def export_affinities(
    venue_id: str, principal: Reader, session: SessionDep, fmt: ExportFormat = "csv"
) -> StreamingResponse:
    """Stored scores as ``paper_id,reviewer_id,score`` (OpenReview affinity CSV)."""
    run = require_run(session, venue_id)
    rows = session.execute(
        select(AffinityScore.paper_id, AffinityScore.reviewer_id, AffinityScore.score)
        .where(AffinityScore.run_id == run.id)
        .order_by(AffinityScore.paper_id, AffinityScore.score.desc(), AffinityScore.reviewer_id)
    ).all()
    return stream_rows(
        iter(rows), ["paper_id", "reviewer_id", "score"], fmt, f"{venue_id}-affinity"
    )


@router.get("/venues/{venue_id}/conflicts", response_model=Page[ConflictOut])
def list_conflicts(
    venue_id: str, principal: Reader, session: SessionDep, limit: Limit = 100, offset: Offset = 0
) -> dict[str, Any]:
    query = (
        select(Conflict)
        .where(Conflict.venue_id == venue_id)
        .order_by(Conflict.paper_id, Conflict.reviewer_id, Conflict.source)
    )
    items, total = paginate(session, query, limit, offset)
    return {"items": items, "total": total, "limit": limit, "offset": offset}


@router.get("/venues/{venue_id}/conflicts/export", response_class=StreamingResponse)
def export_conflicts(
    venue_id: str, principal: Reader, session: SessionDep, fmt: ExportFormat = "csv"
) -> StreamingResponse:
    """Conflicts as ``paper_id,reviewer_id,-1`` (OpenReview constraint convention), one per pair."""
    rows = session.execute(
        select(Conflict.paper_id, Conflict.reviewer_id)
        .where(Conflict.venue_id == venue_id)
        .distinct()
        .order_by(Conflict.paper_id, Conflict.reviewer_id)
    ).all()
    return stream_rows(
        ((p, r, -1) for p, r in rows),
        ["paper_id", "reviewer_id", "constraint"],
        fmt,
        f"{venue_id}-conflicts",
    )
