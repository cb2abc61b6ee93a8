"""Job handlers: computing affinities and solving assignments.

Each handler reads its inputs in one session, computes in memory (no transaction open
while it works), then writes the whole result plus the job's final state in one transaction.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import delete, insert

from recommender.affinity.options import RunOptions
from recommender.affinity.params import ScoringParams
from recommender.packaged_models import ModelNotInstalledError
from reviewer_recommender.jobs.runner import Handler, JobCancelled, JobContext, JobFailed
from reviewer_recommender.services.assignment import (
    json_safe as json_safe,  # re-exported for the routers
)
from reviewer_recommender.services.explain import saved_model_dir
from reviewer_recommender.services.limits import read_stored_limits, resolve_limits
from reviewer_recommender.services.params import AssignParams
from reviewer_recommender.storage.models import (
    AffinityRun,
    AffinityScore,
    AssignmentPair,
    AssignmentRow,
    Conflict,
    Job,
)
from reviewer_recommender.storage.repository import (
    add_numbered,
    bids_frame,
    conflicts_frame,
    corpus_version,
    load_corpus,
    pins_frame,
    scores_frame,
    stale_message,
    unscored_papers,
    unscored_reviewer_count,
)

HISTOGRAM_BINS = 20


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
        except ValueError as error:
            raise JobFailed(f"bad affinity config: {error}") from error
        if params.uses_embedding:
            try:
                options.model_path(params.model)
            except ModelNotInstalledError as error:
                # The server's installation, not the request: the CLI's message verbatim.
                raise JobFailed(str(error)) from error
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


class RunLabel(BaseModel):
    """What the chair calls a run and where it comes from (not solve options)."""

    model_config = ConfigDict(extra="forbid")

    name: str = ""
    note: str = ""
    # {"kind": "re-solve", "assignment_id": N}: the run this solve starts from
    derived_from: dict[str, Any] | None = None


class AssignmentJobParams(AssignParams):
    """The assignment job's parameters: the solve request, the affinity run it reads and
    the new run's label."""

    affinity_run_id: int
    run: RunLabel = Field(default_factory=RunLabel)


# solve options a run does not store: the API refuses them (api.schemas.AssignmentIn)
NOT_STORED = frozenset({"bid_weight", "alternates"})


def assignment_handler() -> Handler:
    """The solve job: stored scores, conflicts (detected, uploaded, Not Willing bids,
    forbids) and pins of the venue through :func:`reviewer_recommender.services.assignment.assign`,
    the same
    service the command line calls."""

    def run(ctx: JobContext) -> None:
        from matching import Infeasible
        from matching.monitor import SolveCancelled
        from recommender.corpus import InputError
        from recommender.io import ScoreTable
        from reviewer_recommender.services import assignment as service
        from reviewer_recommender.services.errors import NoAssignment, OptionError
        from reviewer_recommender.services.problem import AssignInputs, Rows

        try:
            params = AssignmentJobParams.model_validate(ctx.params)
        except ValidationError as error:
            raise JobFailed(f"bad assignment parameters: {error}") from error
        with ctx.session() as session:
            run_row = session.get(AffinityRun, params.affinity_run_id)
            if run_row is None or run_row.venue_id != ctx.venue_id:
                raise JobFailed(f"affinity run {params.affinity_run_id} not found")
            reviewers, submissions = load_corpus(session, ctx.venue_id)
            scores = scores_frame(session, run_row.id)
            conflicts = conflicts_frame(session, ctx.venue_id)
            pins = pins_frame(session, ctx.venue_id)
            bids = bids_frame(session, ctx.venue_id)
            # the venue's stored demand and max loads win over the request's maps, which
            # win over its defaults (as files over flags on the command line)
            stored = read_stored_limits(session, ctx.venue_id)
            limits = resolve_limits(
                session, ctx.venue_id, params.model_dump(exclude={"affinity_run_id", "run"}), stored
            )
            unscored = unscored_papers(session, ctx.venue_id, run_row.id)
            unscored_reviewers = unscored_reviewer_count(session, ctx.venue_id, run_row.id)
            job_row = session.get(Job, ctx.job_id)
            rerun_of = job_row.rerun_of if job_row is not None else None
            original = session.get(Job, rerun_of) if rerun_of is not None else None
        needing = [p for p in unscored if limits.demand_of(p) > 0]
        if needing:
            raise JobFailed(stale_message(ctx.venue_id, run_row.id, needing))
        if unscored_reviewers:
            ctx.log(
                f"warning: {unscored_reviewers} reviewers have no scores in affinity run "
                f"{run_row.id} (uploaded after it) and cannot be assigned: recompute affinity "
                "to consider them"
            )
        source = f"affinity run {run_row.id}"
        try:
            table = ScoreTable.from_frame(scores, source=source)
        except InputError as error:
            raise JobFailed(f"cannot read the stored scores: {error}") from error
        inputs = AssignInputs(
            scores=table,
            conflicts=Rows(conflicts, "venue conflicts"),
            pins=Rows(pins, "venue pins"),
            # stored scores already hold the bid preferences (affinity job); bids here
            # only exclude Not Willing pairs
            bids=Rows(bids, "venue bids"),
            fold_bids=False,
            demand=Rows(stored.demand_rows(), "the venue's stored paper demands"),
            max_loads=Rows(stored.max_load_rows(), "the venue's stored reviewer max loads"),
            reviewers=reviewers,
            reviewers_source=f"the reviewers of venue {ctx.venue_id}",
            paper_ids=[s.id for s in submissions],
            reviewer_ids=[r.id for r in reviewers],
        )
        params_only = AssignParams.model_validate(
            params.model_dump(exclude={"affinity_run_id", "run"})
        )
        ctx.progress(0.1, "building the assignment problem", force=True)
        try:
            # the solver's stage, incumbent and bound fill the job's 0.2-0.9 progress band;
            # a cancel stops it (SolveCancelled), recorded as a cancel, not a failure
            result = service.assign(inputs, params_only, monitor=ctx.solve_monitor(0.2, 0.9))
        except InputError as error:
            raise JobFailed(f"cannot build the assignment problem: {error}") from error
        except OptionError as error:
            raise JobFailed(f"{error.option}: {error.message}") from error
        except Infeasible as infeasible:
            for cause in getattr(infeasible.diagnosis, "causes", []):
                ctx.log(f"cause: {cause.message} (fix: {cause.relaxation})")
            raise JobFailed(f"infeasible: {infeasible.diagnosis}") from infeasible
        except NoAssignment as error:
            raise JobFailed(str(error)) from error
        except SolveCancelled as error:
            raise JobCancelled() from error
        for warning in result.warnings:
            ctx.log(f"warning: {warning}")
        ctx.log(
            f"problem: {result.problem.n_papers} papers, {result.problem.n_reviewers} "
            f"reviewers, {result.problem.n_pairs} candidate pairs, "
            f"{int(result.problem.forced.sum())} pinned; {result.solver.reason}"
        )
        ctx.check_cancelled()
        ctx.progress(0.9, "writing the assignment", force=True)
        pairs = result.pairs()
        derived_from = params.run.derived_from
        if rerun_of is not None:
            number = original.number if original is not None else None
            derived_from = {
                "kind": "rerun",
                "job_id": rerun_of,
                "job_number": number,
                "text": f"rerun of job #{number if number is not None else rerun_of}",
            }
        summary = json_safe({**result.summary, "limits": limits.describe()})
        for key in NOT_STORED:
            summary.get("parameters", {}).pop(key, None)
        with ctx.session() as session:
            row = add_numbered(
                session,
                AssignmentRow,
                ctx.venue_id,
                lambda number: AssignmentRow(
                    venue_id=ctx.venue_id,
                    number=number,
                    name=params.run.name,
                    note=params.run.note,
                    derived_from=derived_from,
                    job_id=ctx.job_id,
                    affinity_run_id=run_row.id,
                    state="draft",
                    parameters=params_only.model_dump(mode="json", exclude=set(NOT_STORED)),
                    summary=summary,
                ),
            )
            pair_rows = [
                {
                    "assignment_id": row.id,
                    "paper_id": p,
                    "reviewer_id": r,
                    "score": float(s),
                    "pinned": bool(pinned),
                }
                for p, r, s, pinned in zip(
                    pairs["paper_id"],
                    pairs["reviewer_id"],
                    pairs["score"],
                    pairs["pinned"],
                    strict=True,
                )
            ]
            if pair_rows:
                session.execute(insert(AssignmentPair), pair_rows)
            ctx.finish(session, {"assignment_id": row.id, "pairs": len(pair_rows)})
            session.commit()

    return run


def job_handlers(
    affinity_top_n: int,
    run_options: RunOptions | None = None,
    affinity_models_dir: Path | None = None,
) -> dict[str, Handler]:
    """The service's job handlers by kind (a job's process rebuilds them by this name, from
    the same arguments)."""
    return {
        "affinity": affinity_handler(affinity_top_n, run_options, affinity_models_dir),
        "assignment": assignment_handler(),
    }
