"""Affinity jobs, pair scores with explanations, top-N lists, statistics, exports."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, File, Query, UploadFile, status
from fastapi.responses import StreamingResponse

from api.affinity_schemas import AffinityEstimateOut, AffinityUploadOut
from api.auth import ChairReader, Reader, Writer
from api.dependencies import (
    Explainers,
    Exports,
    Limit,
    Offset,
    Runner,
    RunOptionsDep,
    SessionDep,
    SettingsDep,
)
from api.exports import ExportFormat, stream_rows
from api.ids import IdQuery, PaperIdPath, PoolQuery, ReviewerIdPath, ReviewerIdQuery, VenueIdPath
from api.schemas import AffinityJobIn, AffinityModelsOut, AffinityRunOut, ConflictOut, JobOut, Page
from api.uploads import CollectionPaused, upload_bytes, upload_name
from recommender.affinity.params import DEFAULT_BID_WEIGHT
from reviewer_recommender.services import affinity_runs, affinity_upload
from reviewer_recommender.services.results import PairScoreOut
from reviewer_recommender.storage.models import Job
from reviewer_recommender.storage.repository import Paged

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
    server's (422 ``invalid_option`` otherwise). ``pool``: whose affinities (the
    reviewers' by default), each pool's latest run kept apart."""
    return affinity_runs.start_affinity_job(
        runner, session, options, venue_id, body.config, body.top_n, principal.name, body.pool
    )


@router.post("/venues/{venue_id}/affinity/estimate", response_model=AffinityEstimateOut)
def estimate_affinities(
    venue_id: VenueIdPath,
    body: AffinityJobIn,
    principal: Writer,
    session: SessionDep,
    options: RunOptionsDep,
) -> dict[str, Any]:
    """How long ``POST .../affinity/jobs`` with this body would take now, before starting
    it: the texts not yet in the embedding cache, the estimated seconds and, above ten
    minutes, ``warn`` with each faster model's estimate (``alternatives``). Refused (422)
    exactly as the job would be; 409 while the pool has no persons or the venue no
    submissions. Starts nothing."""
    return affinity_runs.estimate_affinity(
        session, options, venue_id, body.config, body.top_n, body.pool
    )


@router.post("/venues/{venue_id}/affinity/upload", response_model=AffinityUploadOut)
def upload_affinity(
    venue_id: VenueIdPath,
    settings: SettingsDep,
    principal: Writer,
    session: SessionDep,
    _gc: CollectionPaused,
    file: Annotated[
        UploadFile,
        File(
            description="scores CSV computed elsewhere: OpenReview edges head,tail,weight "
            "or paper_id,reviewer_id,score"
        ),
    ],
    pool: PoolQuery = "reviewers",
    bid_weight: Annotated[
        float,
        Query(description="the venue's bids add bid_weight x bid to their scored pair"),
    ] = DEFAULT_BID_WEIGHT,
) -> affinity_upload.UploadedScores:
    """Store a scores file as the pool's latest affinity run, checked whole first (unknown
    ids, pairs listed twice, non-finite scores: 422 naming the line, nothing stored). Its
    explanations say that none are available."""
    name = upload_name(file, "scores.csv")
    return affinity_upload.store_uploaded_scores(
        session,
        venue_id,
        upload_bytes(file, settings, name),
        name,
        principal.name,
        pool=pool,
        bid_weight=bid_weight,
    )


@router.get("/venues/{venue_id}/affinity/models", response_model=AffinityModelsOut)
def affinity_models(
    venue_id: VenueIdPath, principal: Reader, options: RunOptionsDep
) -> affinity_runs.AffinityModels:
    """The embedding models this server offers (``config.model`` of an affinity job) and
    the default scoring parameters (the same as the command line's)."""
    return affinity_runs.affinity_models(options)


@router.get("/venues/{venue_id}/affinity", response_model=AffinityRunOut)
def get_affinity_run(
    venue_id: VenueIdPath, principal: Reader, session: SessionDep, pool: PoolQuery = "reviewers"
) -> affinity_runs.AffinityRunInfo:
    """The pool's latest affinity run: configuration, score histogram and summary
    statistics, and whether uploads made it stale; ``state: none`` (the run's fields null)
    while the pool has no scores yet."""
    return affinity_runs.latest_affinity_run(session, venue_id, pool)


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
    pool: PoolQuery = "reviewers",
) -> PairScoreOut:
    """A pair's score, conflicts, bid and (``explain=true``) the evidence behind it. A pair
    the latest run did not store is scored on the fly (and not stored: reads change
    nothing). Viewers get null conflicts and bid."""
    return affinity_runs.pair_detail(
        explainers, session, venue_id, paper_id, reviewer_id, principal, explain=explain, pool=pool
    )


@router.get("/venues/{venue_id}/papers/{paper_id}/reviewers", response_model=Page[PairScoreOut])
def top_reviewers(
    venue_id: VenueIdPath,
    paper_id: PaperIdPath,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 10,
    offset: Offset = 0,
    pool: PoolQuery = "reviewers",
) -> Paged[PairScoreOut]:
    """Stored persons of the pool for a paper, best first, with conflicts and bids marked
    (chairs); an empty page while the pool has no scores yet."""
    return affinity_runs.top_reviewers(session, venue_id, paper_id, principal, limit, offset, pool)


@router.get("/venues/{venue_id}/reviewers/{reviewer_id}/papers", response_model=Page[PairScoreOut])
def top_papers(
    venue_id: VenueIdPath,
    reviewer_id: ReviewerIdPath,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 10,
    offset: Offset = 0,
    pool: PoolQuery = "reviewers",
) -> Paged[PairScoreOut]:
    """Stored papers of a person in the pool's latest run, best first, with conflicts and
    bids marked (chairs); an empty page while the pool has no scores yet."""
    return affinity_runs.top_papers(session, venue_id, reviewer_id, principal, limit, offset, pool)


@router.get("/venues/{venue_id}/affinity/export", response_class=StreamingResponse)
def export_affinities(
    venue_id: VenueIdPath,
    principal: Reader,
    session: SessionDep,
    exports: Exports,
    fmt: ExportFormat = "csv",
    pool: PoolQuery = "reviewers",
) -> StreamingResponse:
    """The pool's stored scores as ``paper_id,reviewer_id,score`` (OpenReview affinity
    CSV), written once per run (and count of scores) and kept as a file for every reader."""
    return exports.respond(
        affinity_runs.affinity_export_key(session, venue_id, pool),
        lambda: affinity_runs.affinity_export_rows(session, venue_id, pool),
        ["paper_id", "reviewer_id", "score"],
        fmt,
        f"{venue_id}-affinity",
        before_waiting=session.rollback,
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
        Literal["detected", "uploaded", "declared", "bid", "forbid"] | None,
        Query(
            description="detected (profiles), uploaded (constraints), declared (chairs), "
            "bid, forbid (chairs)"
        ),
    ] = None,
) -> Paged[dict[str, Any]]:
    """Conflicts of interest with their source and reason, by paper then reviewer,
    optionally of one paper, one reviewer or one source (chairs and admins only)."""
    return affinity_runs.list_conflicts(
        session,
        venue_id,
        paper_id=paper_id,
        reviewer_id=reviewer_id,
        source=source,
        limit=limit,
        offset=offset,
    )


@router.get("/venues/{venue_id}/conflicts/export", response_class=StreamingResponse)
def export_conflicts(
    venue_id: VenueIdPath, principal: ChairReader, session: SessionDep, fmt: ExportFormat = "csv"
) -> StreamingResponse:
    """Conflicts as ``paper_id,reviewer_id,-1`` (OpenReview constraint convention), one per
    pair (chairs and admins only)."""
    return stream_rows(
        affinity_runs.conflict_export_rows(session, venue_id),
        ["paper_id", "reviewer_id", "constraint"],
        fmt,
        f"{venue_id}-conflicts",
    )
