"""A stored venue's affinity: the scoring use case (:func:`reviewer_recommender.services.scoring.
score`, the one the command line calls) on the venue's reviewers, submissions, bids and pins,
its result stored as an affinity run (the kept scores, the detected conflicts, statistics)
and its fitted model saved for explanations. The affinity job is these calls in a row."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from recommender.affinity import AffinityModel, RunOptions, ScoringParams
from recommender.affinity.estimate import ScoringEstimate
from recommender.corpus import Corpus
from recommender.packaged_models import ModelNotInstalledError
from reviewer_recommender.errors import InvalidRequest, StateConflict
from reviewer_recommender.services.assignment import json_safe
from reviewer_recommender.services.explain import saved_model_dir
from reviewer_recommender.services.params import ConflictParams
from reviewer_recommender.services.pools import DEFAULT_POOL, check_pool
from reviewer_recommender.services.problem import Rows
from reviewer_recommender.services.scoring import (
    CancelCheck,
    Progress,
    ScoreResult,
    ScoresTooLarge,
    score,
)
from reviewer_recommender.storage.models import (
    AffinityRun,
    AffinityScore,
    Conflict,
    ConflictDismissal,
)
from reviewer_recommender.storage.repository import (
    bids_frame,
    corpus_version,
    load_corpus,
    load_corpus_texts,
    pins_frame,
)

# Rows per INSERT of stored scores.
INSERT_ROWS = 5000


@dataclass(frozen=True)
class AffinityJobParams:
    """What an affinity job computes: scoring parameters, the scores kept per paper and per
    reviewer, and how conflicts are detected."""

    scoring: ScoringParams
    top_n: int
    conflicts: ConflictParams
    pool: str = DEFAULT_POOL


def affinity_job_params(
    params: Mapping[str, Any], default_top_n: int, options: RunOptions
) -> AffinityJobParams:
    """A job's stored parameters (``config``, ``top_n``, ``conflicts``), checked against
    the server's run ``options``; :class:`InvalidRequest` in words otherwise (a model that
    is not installed in the command line's words)."""
    try:
        # Lenient with records of version 0.1 (re-runs): their run options are dropped.
        scoring = ScoringParams.from_stored(params.get("config", {}))
    except ValueError as error:
        raise InvalidRequest("invalid_option", f"bad affinity config: {error}") from error
    if scoring.uses_embedding:
        try:
            options.model_path(scoring.model)
        except ModelNotInstalledError as error:
            # The server's installation, not the request: the CLI's message verbatim.
            raise InvalidRequest("model_not_installed", str(error), field="config.model") from error
        except ValueError as error:
            raise InvalidRequest("invalid_option", f"bad affinity config: {error}") from error
    try:
        conflicts = ConflictParams.model_validate(params.get("conflicts") or {})
    except ValidationError as error:
        raise InvalidRequest("invalid_option", f"bad conflict parameters: {error}") from error
    pool = check_pool(str(params.get("pool") or DEFAULT_POOL))
    return AffinityJobParams(
        scoring=scoring,
        top_n=int(params.get("top_n") or default_top_n),
        conflicts=conflicts,
        pool=pool,
    )


@dataclass(frozen=True)
class VenueScoringInputs:
    """A venue's scoring inputs, and the corpus version they were read at."""

    corpus_version: int
    corpus: Corpus
    bids: Rows
    pins: Rows
    pool: str = DEFAULT_POOL


def read_scoring_inputs(
    session: Session, venue_id: str, pool: str = DEFAULT_POOL
) -> VenueScoringInputs:
    """The pool's persons, the submissions, and the persons' bids and pins;
    :class:`StateConflict` while the pool has no persons or the venue no submissions."""
    version = corpus_version(session, venue_id)  # before the corpus: a run made stale shows it
    reviewers, submissions = load_corpus(session, venue_id, pool)
    if not reviewers:
        if pool == DEFAULT_POOL:
            raise StateConflict(None, f"venue {venue_id!r} has no reviewers: upload them first")
        raise StateConflict(
            None, f"pool {pool} of venue {venue_id!r} has no persons: upload them first"
        )
    if not submissions:
        raise StateConflict(None, f"venue {venue_id!r} has no submissions: upload them first")
    return VenueScoringInputs(
        corpus_version=version,
        corpus=Corpus(reviewers=reviewers, submissions=submissions),
        bids=Rows(bids_frame(session, venue_id, pool), "venue bids"),
        pins=Rows(pins_frame(session, venue_id, pool), "venue pins"),
        pool=pool,
    )


def estimate_affinity_job(
    session: Session,
    venue_id: str,
    params: Mapping[str, Any],
    default_top_n: int,
    options: RunOptions,
) -> ScoringEstimate:
    """How long an affinity job with these parameters (as submitted: ``config``, ``pool``,
    ...) would take on the venue now: texts not yet in the embedding cache x the model's
    texts/s (:func:`recommender.affinity.estimate.estimate_scoring`); ``warn`` above ten
    minutes, with what each faster installed model would take. Bad parameters raise
    :class:`InvalidRequest` as the job's submission does; an empty venue StateConflict."""
    from recommender.affinity.estimate import estimate_texts

    job = affinity_job_params(params, default_top_n, options)
    # the texts alone, not the corpus: the estimate only hashes them (see load_corpus_texts)
    reviewers, submissions, texts = load_corpus_texts(session, venue_id, job.pool)
    if not reviewers or not submissions:
        read_scoring_inputs(session, venue_id, job.pool)  # raises the usual StateConflict
    return estimate_texts(texts, job.scoring, options)


def score_venue(
    inputs: VenueScoringInputs,
    params: AffinityJobParams,
    options: RunOptions,
    *,
    progress: Progress | None = None,
    check_cancelled: CancelCheck | None = None,
) -> ScoreResult:
    """The scoring use case on a venue: its bids folded in, its pins kept, conflicts
    detected, each side's ``top_n`` kept and every score summarised (which needs the full
    matrix: :class:`StateConflict` in the administrator's words past the memory bound)."""
    try:
        return score(
            inputs.corpus,
            params.scoring,
            options=options,
            bids=inputs.bids,
            pins=inputs.pins,
            conflicts=params.conflicts,
            top_k=params.top_n,
            statistics=True,
            progress=progress,
            check_cancelled=check_cancelled,
        )
    except ScoresTooLarge as error:
        papers, reviewers = error.shape
        raise StateConflict(
            "scores_too_large",
            f"{papers} x {reviewers} scores exceed the server's in-memory bound of "
            f"{error.limit_bytes} bytes that the service needs to select and store its top "
            "pairs; the administrator can raise RECOMMENDER_DENSE_LIMIT_BYTES, or score "
            "offline with `recommender score --top-k N`",
        ) from error


def save_fitted_model(
    model: AffinityModel,
    models_dir: Path | None,
    venue_id: str,
    job_id: int,
    pool: str = DEFAULT_POOL,
) -> Path | None:
    """Keep the fitted model of a run for explanations, and only the newest run's per venue
    and pool (explanations are of the pool's latest run). None if not kept: a failure to
    save costs speed only (explanations then re-fit), so it is not fatal."""
    if models_dir is None:
        return None
    from recommender.affinity.store import save_model

    target = saved_model_dir(models_dir, venue_id, job_id, pool)
    try:
        save_model(model, target)
    except OSError:
        return None
    for older in target.parent.glob("job-*"):
        if older != target:
            shutil.rmtree(older, ignore_errors=True)
    return target


def discard_saved_model(saved: Path | None) -> None:
    """Remove a model saved for a run that was not stored after all."""
    if saved is not None:
        shutil.rmtree(saved, ignore_errors=True)


@dataclass(frozen=True)
class StoredAffinityRun:
    run_id: int
    stored_pairs: int
    detected_conflicts: int


def store_affinity_run(
    session: Session,
    venue_id: str,
    job_id: int | None,
    inputs: VenueScoringInputs,
    params: AffinityJobParams,
    result: ScoreResult,
) -> StoredAffinityRun:
    """Add the run, its kept scores (pins and pairs bids exclude as ``requested``), its
    statistics and the detected conflicts of its persons (replacing their previous ones) to
    ``session``; the caller commits."""
    records = result.kept_pairs(with_excluded=True)
    statistics = dict(result.statistics or {})
    statistics["stored_pairs"] = len(records)
    run = AffinityRun(
        venue_id=venue_id,
        pool=params.pool,
        job_id=job_id,
        config=json_safe(params.scoring.to_dict()),
        n_papers=len(result.affinity.paper_ids),
        n_reviewers=len(result.affinity.reviewer_ids),
        top_n=params.top_n,
        statistics=statistics,
        corpus_version=inputs.corpus_version,
    )
    session.add(run)
    session.flush()
    score_rows = records.assign(run_id=run.id).to_dict("records")
    for start in range(0, len(score_rows), INSERT_ROWS):
        session.execute(insert(AffinityScore), score_rows[start : start + INSERT_ROWS])
    # the detected conflicts of this pool's persons are replaced (other pools' are kept)
    scored = [str(r) for r in result.affinity.reviewer_ids]
    for start in range(0, len(scored), INSERT_ROWS):
        session.execute(
            delete(Conflict).where(
                Conflict.venue_id == venue_id,
                Conflict.source == "detected",
                Conflict.reviewer_id.in_(scored[start : start + INSERT_ROWS]),
            )
        )
    detected = result.conflict_constraints()[["paper_id", "reviewer_id", "reason"]]
    dismissed = {
        (str(p), str(r))
        for p, r in session.execute(
            select(ConflictDismissal.paper_id, ConflictDismissal.reviewer_id).where(
                ConflictDismissal.venue_id == venue_id, ConflictDismissal.source == "detected"
            )
        )
    }
    if dismissed and len(detected):
        # a conflict a chair dismissed stays dismissed (until restored)
        keys = zip(detected["paper_id"], detected["reviewer_id"], strict=True)
        detected = detected[[(str(p), str(r)) not in dismissed for p, r in keys]]
    conflict_rows = detected.assign(venue_id=venue_id, source="detected").to_dict("records")
    if conflict_rows:
        session.execute(insert(Conflict), conflict_rows)
    return StoredAffinityRun(
        run_id=run.id, stored_pairs=len(records), detected_conflicts=len(conflict_rows)
    )
