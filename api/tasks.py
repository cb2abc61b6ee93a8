"""Job handlers: computing affinities and solving assignments.

Each handler reads its inputs in one session, computes in memory (no transaction open
while it works), then writes the whole result plus the job's final state in one transaction.
"""

from __future__ import annotations

import hashlib
import math
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from sqlalchemy import delete

from api.jobs import Handler, JobContext, JobFailed
from api.models import AffinityRun, AffinityScore, AssignmentPair, AssignmentRow, Conflict
from api.store import (
    bids_frame,
    conflicts_frame,
    corpus_version,
    load_corpus,
    pins_frame,
    scores_frame,
)
from recommender.affinity.options import RunOptions
from recommender.affinity.params import ScoringParams
from recommender.corpus import Reviewer

HISTOGRAM_BINS = 20


def json_safe(value: Any) -> Any:
    """Plain JSON types: numpy scalars to Python, NaN/inf to None, tuples to lists."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    return value


def score_statistics(scores: npt.NDArray[np.floating[Any]]) -> dict[str, Any]:
    """Histogram (HISTOGRAM_BINS equal bins from min to max) and summary of all scores."""
    flat = np.asarray(scores, dtype=np.float64).ravel()
    if flat.size == 0:
        return {"count": 0, "histogram": {"edges": [], "counts": []}}
    low, high = float(flat.min()), float(flat.max())
    counts, edges = np.histogram(
        flat, bins=HISTOGRAM_BINS, range=(low, high if high > low else low + 1)
    )
    best_per_paper = scores.max(axis=1) if scores.shape[1] else np.array([])
    return json_safe(
        {
            "count": int(flat.size),
            "min": low,
            "max": high,
            "mean": float(flat.mean()),
            "std": float(flat.std()),
            "quantiles": {
                q: float(np.quantile(flat, float(q)))
                for q in ("0.1", "0.25", "0.5", "0.75", "0.9", "0.99")
            },
            "best_reviewer_score_per_paper": {
                "min": float(best_per_paper.min()) if best_per_paper.size else None,
                "mean": float(best_per_paper.mean()) if best_per_paper.size else None,
            },
            "histogram": {"edges": edges.tolist(), "counts": counts.tolist()},
        }
    )


def affinity_handler(
    default_top_n: int,
    options: RunOptions | None = None,
    models_dir: Path | None = None,
) -> Handler:
    """The affinity job: score the venue with the job's scoring parameters and the server's
    run ``options``, store each paper's and each reviewer's ``top_n`` scores (plus pinned
    pairs) and the detected conflicts; keep the fitted model under ``models_dir`` (named by
    job) so that explanations need no re-fit. Progress: texts embedded, papers scored."""
    options = options or RunOptions()

    def run(ctx: JobContext) -> None:
        from matching.topk import top_k_mask
        from recommender.affinity import AffinityModel
        from recommender.conflicts import detect_conflicts

        top_n = int(ctx.params.get("top_n") or default_top_n)
        with ctx.session() as session:
            version = corpus_version(session, ctx.venue_id)  # before the corpus: errs on stale
            reviewers, submissions = load_corpus(session, ctx.venue_id)
            pins = pins_frame(session, ctx.venue_id)
            bids = bids_frame(session, ctx.venue_id)
        if not reviewers:
            raise JobFailed(f"venue {ctx.venue_id!r} has no reviewers: upload them first")
        if not submissions:
            raise JobFailed(f"venue {ctx.venue_id!r} has no submissions: upload them first")
        try:
            # Lenient with records of version 0.1 (re-runs): their run options are dropped.
            params = ScoringParams.from_stored(ctx.params.get("config", {}))
            if params.uses_embedding:
                options.model_path(params.model)
        except ValueError as error:
            raise JobFailed(f"bad affinity config: {error}") from error
        ctx.log(
            f"{len(submissions)} papers x {len(reviewers)} reviewers, config {params.to_dict()}"
        )
        ctx.progress(0.01, "computing affinity", force=True)
        fitted = 0.7 if params.uses_embedding else 0.3
        model = AffinityModel(params, options).fit(
            reviewers, submissions, progress=ctx.sub_progress(0.01, fitted)
        )
        affinity = model.affinity(progress=ctx.sub_progress(fitted, 0.85))
        if not affinity.is_dense:
            raise JobFailed(
                f"{len(submissions)} x {len(reviewers)} scores exceed the server's in-memory "
                f"bound of {options.dense_limit_bytes} bytes that the service needs to select "
                "and store its top pairs; the administrator can raise "
                "RECOMMENDER_DENSE_LIMIT_BYTES, or score offline with "
                "`recommender score --top-k N`"
            )
        if len(bids) and params.bid_weight:
            from recommender.bids import apply_bids

            affinity = apply_bids(affinity, bids, source="venue bids").affinity
            ctx.log(f"folded {len(bids)} bids in with weight {params.bid_weight}")
        ctx.progress(0.86, "detecting conflicts", force=True)
        conflicts = detect_conflicts(reviewers, submissions)
        ctx.progress(0.92, "selecting scores to store", force=True)
        scores = np.asarray(affinity.scores, dtype=np.float64)
        paper_ids = list(affinity.paper_ids)
        reviewer_ids = list(affinity.reviewer_ids)
        keep = top_k_mask(scores, top_n)
        requested = np.zeros_like(keep)
        if len(pins):
            paper_index = pd.Index(paper_ids).get_indexer(pins["paper_id"])
            reviewer_index = pd.Index(reviewer_ids).get_indexer(pins["reviewer_id"])
            known = (paper_index >= 0) & (reviewer_index >= 0)
            requested[paper_index[known], reviewer_index[known]] = True
        stored_paper, stored_reviewer = np.nonzero(keep | requested)
        paper_array = np.asarray(paper_ids, dtype=object)
        reviewer_array = np.asarray(reviewer_ids, dtype=object)
        records = pd.DataFrame(
            {
                "paper_id": paper_array[stored_paper],
                "reviewer_id": reviewer_array[stored_reviewer],
                "score": scores[stored_paper, stored_reviewer],
                "requested": requested[stored_paper, stored_reviewer]
                & ~keep[stored_paper, stored_reviewer],
            }
        )
        statistics = score_statistics(scores)
        statistics["stored_pairs"] = len(records)
        statistics["detected_conflicts"] = len(conflicts)
        config_dict = json_safe(params.to_dict())
        ctx.progress(0.93, "saving the fitted model for explanations", force=True)
        saved = _save_model(model, models_dir, ctx.venue_id, ctx.job_id)
        ctx.progress(0.95, "writing results", force=True)
        try:
            _write_affinity_run(
                ctx,
                version,
                top_n,
                config_dict,
                paper_ids,
                reviewer_ids,
                records,
                statistics,
                conflicts,
            )
        except BaseException:
            if saved is not None:
                shutil.rmtree(saved, ignore_errors=True)
            raise

    return run


def saved_model_dir(models_dir: Path, venue_id: str, job_id: int) -> Path:
    """Where the fitted model of an affinity job is kept: one folder per venue (named by a
    digest, whatever characters the venue id holds), one per job."""
    venue_key = hashlib.sha256(venue_id.encode("utf-8")).hexdigest()[:24]
    return models_dir / venue_key / f"job-{job_id}"


def _save_model(model: Any, models_dir: Path | None, venue_id: str, job_id: int) -> Path | None:
    """Keep the fitted model of a run for explanations, and only the newest run's per venue
    (explanations are of the latest run). None if not kept: a failure to save costs speed
    only (explanations then re-fit), so it is not fatal."""
    if models_dir is None:
        return None
    from recommender.affinity.store import save_model

    target = saved_model_dir(models_dir, venue_id, job_id)
    try:
        save_model(model, target)
    except OSError:
        return None
    for older in target.parent.glob("job-*"):
        if older != target:
            shutil.rmtree(older, ignore_errors=True)
    return target


def _write_affinity_run(
    ctx: JobContext,
    version: Any,
    top_n: int,
    config_dict: dict[str, Any],
    paper_ids: list[str],
    reviewer_ids: list[str],
    records: pd.DataFrame,
    statistics: dict[str, Any],
    conflicts: pd.DataFrame,
) -> None:
    """The run, its stored scores, the detected conflicts and the job's success, in one
    transaction."""
    with ctx.session() as session:
        run_row = AffinityRun(
            venue_id=ctx.venue_id,
            job_id=ctx.job_id,
            config=config_dict,
            n_papers=len(paper_ids),
            n_reviewers=len(reviewer_ids),
            top_n=top_n,
            statistics=statistics,
            corpus_version=version,
        )
        session.add(run_row)
        session.flush()
        score_rows = records.assign(run_id=run_row.id).to_dict("records")
        for start in range(0, len(score_rows), 5000):
            session.execute(AffinityScore.__table__.insert(), score_rows[start : start + 5000])
        session.execute(
            delete(Conflict).where(Conflict.venue_id == ctx.venue_id, Conflict.source == "detected")
        )
        described = (
            conflicts.assign(
                reason=conflicts["reason"].astype(str)
                + np.where(
                    conflicts["detail"].astype(str) != "",
                    ": " + conflicts["detail"].astype(str),
                    "",
                )
            )
            if len(conflicts)
            else conflicts
        )
        conflict_rows = (
            described[["paper_id", "reviewer_id", "reason"]]
            .astype(str)
            .groupby(["paper_id", "reviewer_id"], as_index=False)["reason"]
            .agg("; ".join)
            .assign(venue_id=ctx.venue_id, source="detected")
            .to_dict("records")
        )
        if conflict_rows:
            session.execute(Conflict.__table__.insert(), conflict_rows)
        ctx.finish(
            session,
            {
                "affinity_run_id": run_row.id,
                "stored_pairs": len(records),
                "detected_conflicts": len(conflict_rows),
            },
        )
        session.commit()


def build_side_constraints(params: dict[str, Any], reviewers: Sequence[Reviewer]) -> list[Any]:
    """matching side constraints from the request's options; reviewer order as ``reviewers``."""
    from matching import Fairness, MaxPerGroup, MinScore, RequireAttribute

    constraints: list[Any] = []
    if params.get("min_score") is not None:
        constraints.append(MinScore(float(params["min_score"])))
    if params.get("max_per_affiliation") is not None:
        groups = np.array(
            [" ".join(r.affiliation.split()).casefold() for r in reviewers], dtype=object
        )
        constraints.append(MaxPerGroup(groups, int(params["max_per_affiliation"])))
    if params.get("fairness_keep") is not None:
        constraints.append(Fairness(float(params["fairness_keep"])))
    required = params.get("require_attribute")
    if required:
        mask = np.array(
            [r.attributes.get(required["name"]) == required["value"] for r in reviewers]
        )
        constraints.append(
            RequireAttribute(mask, int(required.get("min_count", 1)), name=required["name"])
        )
    return constraints


def assignment_handler(solve: Callable[..., Any] | None = None) -> Handler:
    def run(ctx: JobContext) -> None:
        from matching import AssignmentProblem, Infeasible

        solver_function = solve
        if solver_function is None:
            from matching import solve as solver_function

        params = ctx.params
        with ctx.session() as session:
            run_row = session.get(AffinityRun, params["affinity_run_id"])
            if run_row is None or run_row.venue_id != ctx.venue_id:
                raise JobFailed(f"affinity run {params['affinity_run_id']} not found")
            reviewers, submissions = load_corpus(session, ctx.venue_id)
            scores = scores_frame(session, run_row.id)
            conflicts = conflicts_frame(session, ctx.venue_id)
            pins = pins_frame(session, ctx.venue_id)
        paper_ids = [s.id for s in submissions]
        reviewer_ids = [r.id for r in reviewers]
        scores = scores[
            scores["paper_id"].isin(paper_ids) & scores["reviewer_id"].isin(reviewer_ids)
        ]
        conflicts = conflicts[
            conflicts["paper_id"].isin(paper_ids) & conflicts["reviewer_id"].isin(reviewer_ids)
        ]
        pins = pins[pins["paper_id"].isin(paper_ids) & pins["reviewer_id"].isin(reviewer_ids)]
        stored = set(zip(scores["paper_id"], scores["reviewer_id"], strict=True))
        missing = [
            (p, r)
            for p, r in zip(pins["paper_id"], pins["reviewer_id"], strict=True)
            if (p, r) not in stored
        ]
        if missing:
            raise JobFailed(
                f"pinned pair(s) {missing[:5]} have no score in affinity run {run_row.id}; "
                "recompute affinities"
            )
        max_load = pd.Series(int(params["max_load"]), index=pd.Index(reviewer_ids), dtype=np.int64)
        for reviewer_id, load in params.get("custom_max_load", {}).items():
            if reviewer_id not in max_load.index:
                raise JobFailed(f"custom_max_load names unknown reviewer {reviewer_id!r}")
            max_load[reviewer_id] = int(load)
        min_load = np.minimum(int(params["min_load"]), max_load.to_numpy())
        side_constraints = build_side_constraints(params, reviewers)
        ctx.progress(0.1, "building the assignment problem", force=True)
        try:
            problem = AssignmentProblem.from_pairs(
                scores["paper_id"].to_numpy(),
                scores["reviewer_id"].to_numpy(),
                scores["score"].to_numpy(),
                demand=int(params["reviewers_per_paper"]),
                min_load=min_load,
                max_load=max_load.to_numpy(),
                conflicts=conflicts[["paper_id", "reviewer_id"]] if len(conflicts) else None,
                forced=pins if len(pins) else None,
                paper_ids=paper_ids,
                reviewer_ids=reviewer_ids,
                side_constraints=side_constraints,
            )
        except ValueError as error:
            raise JobFailed(f"cannot build the assignment problem: {error}") from error
        ctx.log(
            f"problem: {problem.n_papers} papers, {problem.n_reviewers} reviewers, "
            f"{problem.n_pairs} candidate pairs, {int(problem.forced.sum())} pinned"
        )
        ctx.progress(0.2, f"solving with {params.get('solver', 'auto')}", force=True)
        try:
            assignment = solver_function(
                problem,
                solver=params.get("solver", "auto"),
                time_limit=params.get("time_limit"),
                seed=params.get("seed"),
                **params.get("options", {}),
            )
        except Infeasible as infeasible:
            raise JobFailed(f"infeasible: {infeasible.diagnosis}") from infeasible
        except (ValueError, TypeError) as error:
            raise JobFailed(f"solver rejected the problem: {error}") from error
        ctx.check_cancelled()
        ctx.progress(0.9, "writing the assignment", force=True)
        pairs = assignment.pairs()
        pinned = set(zip(pins["paper_id"], pins["reviewer_id"], strict=True))
        summary = json_safe(assignment.summary())
        with ctx.session() as session:
            row = AssignmentRow(
                venue_id=ctx.venue_id,
                job_id=ctx.job_id,
                affinity_run_id=run_row.id,
                state="draft",
                parameters=json_safe({k: v for k, v in params.items() if k != "affinity_run_id"}),
                summary=summary,
            )
            session.add(row)
            session.flush()
            pair_rows = [
                {
                    "assignment_id": row.id,
                    "paper_id": p,
                    "reviewer_id": r,
                    "score": float(s),
                    "pinned": (p, r) in pinned,
                }
                for p, r, s in zip(
                    pairs["paper_id"], pairs["reviewer_id"], pairs["score"], strict=True
                )
            ]
            if pair_rows:
                session.execute(AssignmentPair.__table__.insert(), pair_rows)
            ctx.finish(
                session,
                {
                    "assignment_id": row.id,
                    "pairs": len(pair_rows),
                },
            )
            session.commit()

    return run
