"""Job handlers: computing affinities and solving assignments.

Each handler reads its inputs in one session, computes in memory (no transaction open
while it works), then writes the whole result plus the job's final state in one transaction.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from sqlalchemy import delete

from api.jobs import Handler, JobContext, JobFailed
from api.limits import resolve_limits
from api.models import AffinityRun, AffinityScore, AssignmentPair, AssignmentRow, Conflict
from api.store import (
    bids_frame,
    conflicts_frame,
    corpus_version,
    load_corpus,
    pins_frame,
    scores_frame,
)
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


def top_mask(scores: npt.NDArray[np.floating[Any]], top_n: int) -> npt.NDArray[np.bool_]:
    """Mask of the ``top_n`` highest scores in each row and in each column of ``scores``
    (n_papers, n_reviewers): what is stored of a run."""
    n_papers, n_reviewers = scores.shape
    keep = np.zeros(scores.shape, dtype=bool)
    if n_papers == 0 or n_reviewers == 0:
        return keep
    k_row = min(top_n, n_reviewers)
    row_top = np.argpartition(-scores, k_row - 1, axis=1)[:, :k_row]
    keep[np.arange(n_papers)[:, None], row_top] = True
    k_col = min(top_n, n_papers)
    col_top = np.argpartition(-scores, k_col - 1, axis=0)[:k_col, :]
    keep[col_top, np.arange(n_reviewers)[None, :]] = True
    return keep


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


def affinity_handler(default_top_n: int) -> Handler:
    def run(ctx: JobContext) -> None:
        from recommender.affinity import AffinityConfig, compute_affinity
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
            config = AffinityConfig.from_dict(ctx.params.get("config", {}))
        except (TypeError, ValueError) as error:
            raise JobFailed(f"bad affinity config: {error}") from error
        ctx.log(
            f"{len(submissions)} papers x {len(reviewers)} reviewers, config {config.to_dict()}"
        )
        ctx.progress(0.01, "computing affinity", force=True)
        affinity = compute_affinity(
            reviewers, submissions, config, progress=ctx.sub_progress(0.01, 0.85)
        )
        if not affinity.is_dense:
            raise JobFailed(
                f"{len(submissions)} x {len(reviewers)} scores exceed the in-memory bound of "
                f"{config.dense_limit_bytes} bytes (config dense_limit_bytes) that the service "
                "needs to select and store its top pairs; raise the bound if the server has "
                "the memory, or score offline with `recommender score --top-k N`"
            )
        if len(bids) and config.bid_weight:
            from recommender.bids import apply_bids

            affinity = apply_bids(affinity, bids, source="venue bids").affinity
            ctx.log(f"folded {len(bids)} bids in with weight {config.bid_weight}")
        ctx.progress(0.86, "detecting conflicts", force=True)
        conflicts = detect_conflicts(reviewers, submissions)
        ctx.progress(0.92, "selecting scores to store", force=True)
        scores = np.asarray(affinity.scores, dtype=np.float64)
        paper_ids = list(affinity.paper_ids)
        reviewer_ids = list(affinity.reviewer_ids)
        keep = top_mask(scores, top_n)
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
        config_dict = json_safe(config.to_dict())
        ctx.progress(0.95, "writing results", force=True)
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
                delete(Conflict).where(
                    Conflict.venue_id == ctx.venue_id, Conflict.source == "detected"
                )
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

    return run


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
            limits = resolve_limits(session, ctx.venue_id, params)
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
        for key, known, what in (
            ("custom_max_load", reviewer_ids, "reviewer"),
            ("demand", paper_ids, "paper"),
        ):
            unknown = sorted(set(params.get(key) or {}) - set(known))
            if unknown:
                raise JobFailed(f"{key} names unknown {what} {unknown[0]!r}")
        # stored venue demand and max loads, then the request's maps, then its defaults
        max_load = limits.max_array(reviewer_ids)
        min_load = limits.min_array(reviewer_ids)
        demand = limits.demand_array(paper_ids)
        side_constraints = build_side_constraints(params, reviewers)
        ctx.progress(0.1, "building the assignment problem", force=True)
        try:
            problem = AssignmentProblem.from_pairs(
                scores["paper_id"].to_numpy(),
                scores["reviewer_id"].to_numpy(),
                scores["score"].to_numpy(),
                demand=demand,
                min_load=min_load,
                max_load=max_load,
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
        summary = json_safe({**assignment.summary(), "limits": limits.describe()})
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
