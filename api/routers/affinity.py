"""Affinity jobs, pair scores with explanations, top-N lists, statistics, exports."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, status
from fastapi.responses import StreamingResponse
from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from api.auth import ChairReader, Reader, Writer
from api.dependencies import Explainers, Limit, Offset, Runner, RunOptionsDep, SessionDep
from api.errors import ApiError
from api.exports import ExportFormat, stream_rows
from api.ids import IdQuery, PaperIdPath, ReviewerIdPath, ReviewerIdQuery, VenueIdPath
from api.schemas import AffinityJobIn, AffinityModelsOut, AffinityRunOut, ConflictOut, JobOut, Page
from recommender.affinity.params import ScoringParams
from reviewer_recommender.services.pairs import pair_score
from reviewer_recommender.services.results import PairScoreOut
from reviewer_recommender.services.tokens import Principal
from reviewer_recommender.services.visibility import sees_marks
from reviewer_recommender.storage.models import AffinityScore, Conflict, Job
from reviewer_recommender.storage.names import lookup
from reviewer_recommender.storage.repository import (
    corpus_version,
    latest_run,
    named_page,
    of_pair,
    pair_marks,
    require_paper,
    require_reviewer,
    require_run,
    start_job,
)

router = APIRouter(tags=["affinity"])


@router.post(
    "/venues/{venue_id}/affinity/jobs", status_code=status.HTTP_202_ACCEPTED, response_model=JobOut
)
def compute_affinities(
    venue_id: VenueIdPath,
    body: AffinityJobIn,
    runner: Runner,
    principal: Writer,
    session: SessionDep,
    options: RunOptionsDep,
) -> Job:
    """Start computing the venue's affinities (and detecting conflicts) in the background.
    ``config`` holds scoring parameters only; the embedding model is named among the
    server's (422 ``invalid_option`` otherwise)."""
    if body.config.uses_embedding and body.config.model not in options.model_names():
        raise ApiError(
            422,
            "invalid_option",
            f"config.model: unknown embedding model {body.config.model!r}; this server "
            f"offers {', '.join(options.model_names())}",
            field="config.model",
        )
    params = {"config": body.config.to_dict(), "top_n": body.top_n}
    return start_job(runner, session, venue_id, "affinity", params, principal.name)


@router.get("/venues/{venue_id}/affinity/models", response_model=AffinityModelsOut)
def affinity_models(
    venue_id: VenueIdPath, principal: Reader, options: RunOptionsDep
) -> AffinityModelsOut:
    """The embedding models this server offers (``config.model`` of an affinity job) and
    the default scoring parameters (the same as the command line's)."""
    return AffinityModelsOut(
        models=options.model_names(), default=ScoringParams().model, defaults=ScoringParams()
    )


def _run_out(session: Session, run: Any) -> AffinityRunOut:
    stale = corpus_version(session, run.venue_id) != run.corpus_version
    return AffinityRunOut(
        state="stale" if stale else "current",
        id=run.id,
        job_id=run.job_id,
        config=run.config,
        n_papers=run.n_papers,
        n_reviewers=run.n_reviewers,
        top_n=run.top_n,
        statistics=run.statistics,
        stale=stale,
        created_at=run.created_at,
    )


@router.get("/venues/{venue_id}/affinity", response_model=AffinityRunOut)
def get_affinity_run(
    venue_id: VenueIdPath, principal: Reader, session: SessionDep
) -> AffinityRunOut:
    """The latest affinity run: configuration, score histogram and summary statistics,
    and whether uploads made it stale; ``state: none`` (the run's fields null) while the
    venue has no scores yet."""
    run = latest_run(session, venue_id)
    if run is None:
        return AffinityRunOut(
            state="none",
            id=None,
            job_id=None,
            config=None,
            n_papers=None,
            n_reviewers=None,
            top_n=None,
            statistics=None,
            stale=False,
            created_at=None,
        )
    return _run_out(session, run)


@router.get(
    "/venues/{venue_id}/affinity/pairs/{paper_id}/{reviewer_id}", response_model=PairScoreOut
)
def get_pair(
    venue_id: VenueIdPath,
    paper_id: PaperIdPath,
    reviewer_id: ReviewerIdPath,
    explainers: Explainers,
    principal: Reader,
    session: SessionDep,
    explain: bool = True,
) -> PairScoreOut:
    """A pair's score, conflicts, bid and (``explain=true``) the evidence behind it. A pair
    the latest run did not store is scored on the fly (and not stored: reads change
    nothing). Viewers get null conflicts and bid."""
    return pair_score(
        explainers,
        session,
        venue_id,
        paper_id,
        reviewer_id,
        explain=explain,
        store=False,
        marks=sees_marks(principal, venue_id),
    )


def _scored_page(
    session: Session,
    venue_id: str,
    where: ColumnElement[bool],
    tiebreak: Any,
    limit: int,
    offset: int,
    principal: Principal,
) -> dict[str, Any]:
    """One page of the latest run's stored pairs matching ``where``, best first (ties by
    ``tiebreak``), with conflicts and bids marked (chairs); an empty page while the venue has
    no scores yet."""
    run = latest_run(session, venue_id)
    if run is None:
        return {"items": [], "total": 0, "limit": limit, "offset": offset}
    query = (
        select(AffinityScore.paper_id, AffinityScore.reviewer_id, AffinityScore.score)
        .where(AffinityScore.run_id == run.id, where)
        .order_by(AffinityScore.score.desc(), tiebreak)
    )
    total = session.scalar(select(func.count()).select_from(query.order_by(None).subquery())) or 0
    rows = session.execute(query.limit(limit).offset(offset)).all()
    pairs = [(r.paper_id, r.reviewer_id) for r in rows]
    marks = sees_marks(principal, venue_id)
    conflicts, bids = pair_marks(session, venue_id, pairs) if marks else ({}, {})
    names = lookup(session, venue_id, [p for p, _ in pairs], [r for _, r in pairs])
    items = [
        PairScoreOut(
            paper_id=r.paper_id,
            paper_title=names.title(r.paper_id),
            reviewer_id=r.reviewer_id,
            reviewer_name=names.name(r.reviewer_id),
            score=r.score,
            conflict=conflicts.get((r.paper_id, r.reviewer_id), []) if marks else None,
            bid=bids.get((r.paper_id, r.reviewer_id)),
        )
        for r in rows
    ]
    return {"items": items, "total": int(total), "limit": limit, "offset": offset}


@router.get("/venues/{venue_id}/papers/{paper_id}/reviewers", response_model=Page[PairScoreOut])
def top_reviewers(
    venue_id: VenueIdPath,
    paper_id: PaperIdPath,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 10,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Stored reviewers of a paper, best first, with conflicts and bids marked (chairs);
    an empty page while the venue has no scores yet."""
    require_paper(session, venue_id, paper_id)
    where = AffinityScore.paper_id == paper_id
    return _scored_page(
        session, venue_id, where, AffinityScore.reviewer_id, limit, offset, principal
    )


@router.get("/venues/{venue_id}/reviewers/{reviewer_id}/papers", response_model=Page[PairScoreOut])
def top_papers(
    venue_id: VenueIdPath,
    reviewer_id: ReviewerIdPath,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 10,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Stored papers of a reviewer, best first, with conflicts and bids marked (chairs);
    an empty page while the venue has no scores yet."""
    require_reviewer(session, venue_id, reviewer_id)
    where = AffinityScore.reviewer_id == reviewer_id
    return _scored_page(session, venue_id, where, AffinityScore.paper_id, limit, offset, principal)


@router.get("/venues/{venue_id}/affinity/export", response_class=StreamingResponse)
def export_affinities(
    venue_id: VenueIdPath, principal: Reader, session: SessionDep, fmt: ExportFormat = "csv"
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
    venue_id: VenueIdPath,
    principal: ChairReader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
    paper_id: IdQuery = None,
    reviewer_id: ReviewerIdQuery = None,
    source: Annotated[
        Literal["detected", "uploaded", "bid", "forbid"] | None,
        Query(description="detected (profiles), uploaded (constraints), bid, forbid (chairs)"),
    ] = None,
) -> dict[str, Any]:
    """Conflicts of interest with their source and reason, by paper then reviewer,
    optionally of one paper, one reviewer or one source (chairs and admins only)."""
    query = of_pair(
        select(Conflict).where(Conflict.venue_id == venue_id), Conflict, paper_id, reviewer_id
    )
    if source is not None:
        query = query.where(Conflict.source == source)
    query = query.order_by(Conflict.paper_id, Conflict.reviewer_id, Conflict.source)
    return named_page(
        session,
        venue_id,
        query,
        limit,
        offset,
        lambda c: {
            "paper_id": c.paper_id,
            "reviewer_id": c.reviewer_id,
            "source": c.source,
            "reason": c.reason,
        },
    )


@router.get("/venues/{venue_id}/conflicts/export", response_class=StreamingResponse)
def export_conflicts(
    venue_id: VenueIdPath, principal: ChairReader, session: SessionDep, fmt: ExportFormat = "csv"
) -> StreamingResponse:
    """Conflicts as ``paper_id,reviewer_id,-1`` (OpenReview constraint convention), one per
    pair (chairs and admins only)."""
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
