"""Affinity runs of a venue: starting one (a job), the latest run's state, its stored
scores (one pair, a paper's best reviewers, a reviewer's best papers, the export) and the
venue's conflicts of interest.

Viewers see scores but not bids or conflict reasons (null; see
:mod:`reviewer_recommender.services.visibility`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from recommender.affinity.options import RunOptions
from recommender.affinity.params import ScoringParams
from reviewer_recommender.errors import InvalidRequest
from reviewer_recommender.jobs.runner import JobRunner
from reviewer_recommender.services.conflict_policy import venue_policy
from reviewer_recommender.services.explain import ExplainerCache
from reviewer_recommender.services.pairs import pair_score
from reviewer_recommender.services.pools import DEFAULT_POOL, check_pool
from reviewer_recommender.services.principals import Principal
from reviewer_recommender.services.results import PairScoreOut
from reviewer_recommender.services.visibility import sees_marks
from reviewer_recommender.storage.models import AffinityRun, AffinityScore, Conflict, Job
from reviewer_recommender.storage.names import lookup
from reviewer_recommender.storage.repository import (
    Paged,
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


@dataclass(frozen=True)
class AffinityModels:
    """The embedding models a server offers and the default scoring parameters."""

    models: list[str]
    default: str
    defaults: ScoringParams


@dataclass(frozen=True)
class AffinityRunInfo:
    """The venue's latest affinity run; ``state`` ``none`` (the run's fields None) while
    there is none, ``stale`` when reviewers or submissions were uploaded since."""

    state: str
    id: int | None = None
    job_id: int | None = None
    config: dict[str, Any] | None = None
    n_papers: int | None = None
    n_reviewers: int | None = None
    top_n: int | None = None
    statistics: dict[str, Any] | None = None
    stale: bool = False
    created_at: datetime | None = None
    pool: str = DEFAULT_POOL


def start_affinity_job(
    runner: JobRunner,
    session: Session,
    options: RunOptions,
    venue_id: str,
    config: ScoringParams,
    top_n: int | None,
    actor: str,
    pool: str = DEFAULT_POOL,
) -> Job:
    """Queue computing the affinities of the pool's persons (and detecting their conflicts
    with the venue's policy, :mod:`reviewer_recommender.services.conflict_policy`).
    Whatever would make the job fail on its parameters is refused now, by the validator
    the job itself runs (:func:`reviewer_recommender.services.affinity_store.
    affinity_job_params`): 422 naming the field, e.g. ``invalid_option`` for a model that
    is not one of the server's, ``model_not_installed`` (``config.model``) for one whose
    files this server lacks (the command line's words)."""
    params = checked_job_parameters(options, config, top_n, pool)
    # conflicts are detected with the venue's policy (its chairs' settings)
    stored_policy = venue_policy(session, venue_id)
    params["conflicts"] = stored_policy.model_dump(mode="json", exclude={"reference_year"})
    return start_job(runner, session, venue_id, "affinity", params, actor)


def checked_job_parameters(
    options: RunOptions, config: ScoringParams, top_n: int | None, pool: str
) -> dict[str, Any]:
    """An affinity job's parameters, checked as the job will check them."""
    from reviewer_recommender.services.affinity_store import affinity_job_params

    _check_model(config, options)
    params = job_parameters(config, top_n, pool)
    affinity_job_params(params, top_n or 1, options)
    return params


def _check_model(config: ScoringParams, options: RunOptions) -> None:
    if config.uses_embedding and config.model not in options.model_names():
        raise InvalidRequest(
            "invalid_option",
            f"config.model: unknown embedding model {config.model!r}; this server "
            f"offers {', '.join(options.model_names())}",
            field="config.model",
        )


def job_parameters(config: ScoringParams, top_n: int | None, pool: str) -> dict[str, Any]:
    """An affinity job's stored parameters (what the job, its re-run and its estimate
    read)."""
    params: dict[str, Any] = {"config": config.to_dict(), "top_n": top_n}
    if pool != DEFAULT_POOL:
        params["pool"] = check_pool(pool)
    return params


def estimate_affinity(
    session: Session,
    options: RunOptions,
    venue_id: str,
    config: ScoringParams,
    top_n: int | None,
    pool: str = DEFAULT_POOL,
) -> dict[str, Any]:
    """How long an affinity job with these parameters would take now (texts not yet in the
    embedding cache x the model's texts/s), refused as the job's submission would be; with
    a warning and the faster models' estimates above ten minutes
    (:func:`reviewer_recommender.services.affinity_store.estimate_affinity_job`)."""
    from reviewer_recommender.services.affinity_store import estimate_affinity_job

    params = checked_job_parameters(options, config, top_n, pool)
    estimate = estimate_affinity_job(session, venue_id, params, top_n or 1, options)
    faster = [(name, s) for name, s in estimate.alternatives.items() if s < estimate.seconds]
    return {
        **estimate.to_dict(),
        "warning": estimate.message if estimate.warn else None,
        # the fastest other model, offered when the estimate warns
        "faster_model": (
            {"name": faster[0][0], "seconds": round(faster[0][1], 1)}
            if estimate.warn and faster
            else None
        ),
    }


def affinity_models(options: RunOptions) -> AffinityModels:
    """The models of ``options`` and the default scoring parameters (the command line's)."""
    return AffinityModels(
        models=options.model_names(), default=ScoringParams().model, defaults=ScoringParams()
    )


def _run_info(session: Session, run: AffinityRun) -> AffinityRunInfo:
    stale = corpus_version(session, run.venue_id) != run.corpus_version
    return AffinityRunInfo(
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
        pool=run.pool,
    )


def latest_affinity_run(
    session: Session, venue_id: str, pool: str = DEFAULT_POOL
) -> AffinityRunInfo:
    """The pool's latest affinity run (``state`` ``none`` while it has none)."""
    run = latest_run(session, venue_id, pool)
    return AffinityRunInfo(state="none", pool=pool) if run is None else _run_info(session, run)


def pair_detail(
    explainers: ExplainerCache,
    session: Session,
    venue_id: str,
    paper_id: str,
    reviewer_id: str,
    principal: Principal,
    *,
    explain: bool,
    pool: str = DEFAULT_POOL,
) -> PairScoreOut:
    """A pair's score in the pool's latest run (scored on the fly, not stored, when the run
    lacks it), with conflicts and bid for chairs and the evidence when ``explain``."""
    return pair_score(
        explainers,
        session,
        venue_id,
        paper_id,
        reviewer_id,
        explain=explain,
        store=False,
        marks=sees_marks(principal, venue_id),
        pool=pool,
    )


def _scored_page(
    session: Session,
    venue_id: str,
    where: ColumnElement[bool],
    tiebreak: Any,
    limit: int,
    offset: int,
    principal: Principal,
    pool: str = DEFAULT_POOL,
) -> Paged[PairScoreOut]:
    """One page of the pool's latest run's stored pairs matching ``where``, best first
    (ties by ``tiebreak``), with conflicts and bids marked (chairs); an empty page while the
    pool has no scores yet."""
    run = latest_run(session, venue_id, pool)
    if run is None:
        return Paged([], 0, limit, offset)
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
    return Paged(items, int(total), limit, offset)


def top_reviewers(
    session: Session,
    venue_id: str,
    paper_id: str,
    principal: Principal,
    limit: int,
    offset: int,
    pool: str = DEFAULT_POOL,
) -> Paged[PairScoreOut]:
    """A paper's stored persons of the pool, best first (404 for an unknown paper)."""
    require_paper(session, venue_id, paper_id)
    where = AffinityScore.paper_id == paper_id
    return _scored_page(
        session, venue_id, where, AffinityScore.reviewer_id, limit, offset, principal, pool
    )


def top_papers(
    session: Session,
    venue_id: str,
    reviewer_id: str,
    principal: Principal,
    limit: int,
    offset: int,
    pool: str = DEFAULT_POOL,
) -> Paged[PairScoreOut]:
    """A person's stored papers in the pool's latest run, best first (404 for an unknown
    person)."""
    require_reviewer(session, venue_id, reviewer_id)
    where = AffinityScore.reviewer_id == reviewer_id
    return _scored_page(
        session, venue_id, where, AffinityScore.paper_id, limit, offset, principal, pool
    )


def affinity_export_rows(
    session: Session, venue_id: str, pool: str = DEFAULT_POOL
) -> Iterator[tuple[Any, ...]]:
    """The pool's latest run's scores as ``(paper_id, reviewer_id, score)``, by paper, best
    first; 409 ``no_affinities`` while there is no run."""
    run = require_run(session, venue_id, pool)
    rows = session.execute(
        select(AffinityScore.paper_id, AffinityScore.reviewer_id, AffinityScore.score)
        .where(AffinityScore.run_id == run.id)
        .order_by(AffinityScore.paper_id, AffinityScore.score.desc(), AffinityScore.reviewer_id)
    ).all()
    return iter(rows)


def affinity_export_key(session: Session, venue_id: str, pool: str = DEFAULT_POOL) -> str:
    """What identifies the content of :func:`affinity_export_rows`: the pool's latest run
    and how many scores it holds (a run's scores never change; scoring a pair on request
    only adds one). 409 ``no_affinities`` while there is no run."""
    run = require_run(session, venue_id, pool)
    count = session.scalar(
        select(func.count()).select_from(AffinityScore).where(AffinityScore.run_id == run.id)
    )
    return f"affinity|{venue_id}|{pool}|run {run.id}|{count} scores"


def list_conflicts(
    session: Session,
    venue_id: str,
    *,
    paper_id: str | None,
    reviewer_id: str | None,
    source: str | None,
    limit: int,
    offset: int,
) -> Paged[dict[str, Any]]:
    """The venue's conflicts with source and reason, by paper then reviewer, optionally of
    one paper, one reviewer or one source."""
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


def conflict_export_rows(session: Session, venue_id: str) -> Iterator[tuple[str, str, int]]:
    """One ``(paper_id, reviewer_id, -1)`` per conflicting pair (OpenReview constraints)."""
    rows = session.execute(
        select(Conflict.paper_id, Conflict.reviewer_id)
        .where(Conflict.venue_id == venue_id)
        .distinct()
        .order_by(Conflict.paper_id, Conflict.reviewer_id)
    ).all()
    return ((p, r, -1) for p, r in rows)
