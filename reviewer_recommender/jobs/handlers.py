"""Job handlers: computing affinities, solving assignments and re-assigning a live run,
each an adapter of a few lines around the services every face calls
(:mod:`reviewer_recommender.services.affinity_store` around the scoring use case,
:mod:`reviewer_recommender.services.assignment_store` around the assignment use case,
:mod:`reviewer_recommender.services.modes` and :mod:`reviewer_recommender.services.declines`
around re-assignment).

Each handler reads its inputs in one session, computes in memory (no transaction open
while it works), then writes the whole result plus the job's final state in one transaction.
A domain error becomes the job's error in words (:class:`JobFailed`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from recommender.affinity.options import RunOptions
from reviewer_recommender.errors import DomainError
from reviewer_recommender.jobs.runner import Handler, JobCancelled, JobContext, JobFailed


@contextmanager
def failing_in_words() -> Iterator[None]:
    """A domain error raised inside the block fails the job with its detail."""
    try:
        yield
    except DomainError as error:
        raise JobFailed(str(error.detail)) from error


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
        from reviewer_recommender.services import affinity_store as store

        with failing_in_words():
            params = store.affinity_job_params(ctx.params, default_top_n, options)
            with ctx.session() as session:
                inputs = store.read_scoring_inputs(session, ctx.venue_id, params.pool)
            corpus = inputs.corpus
            ctx.log(
                f"{len(corpus.submissions)} papers x {len(corpus.reviewers)} reviewers, "
                f"config {params.scoring.to_dict()}"
            )
            ctx.progress(0.01, "computing affinity", force=True)
            result = store.score_venue(
                inputs,
                params,
                options,
                progress=ctx.sub_progress(0.01, 0.92),
                check_cancelled=ctx.check_cancelled,
            )
        for warning in result.warnings:
            ctx.log(f"warning: {warning}")
        if result.bids_folded:
            ctx.log(f"folded {result.bids_folded} bids in with weight {params.scoring.bid_weight}")
        ctx.progress(0.93, "saving the fitted model for explanations", force=True)
        saved = store.save_fitted_model(
            result.model, models_dir, ctx.venue_id, ctx.job_id, params.pool
        )
        ctx.progress(0.95, "writing results", force=True)
        try:
            with ctx.session() as session:
                stored = store.store_affinity_run(
                    session, ctx.venue_id, ctx.job_id, inputs, params, result
                )
                ctx.finish(
                    session,
                    {
                        "affinity_run_id": stored.run_id,
                        "stored_pairs": stored.stored_pairs,
                        "detected_conflicts": stored.detected_conflicts,
                    },
                )
                session.commit()
        except BaseException:
            store.discard_saved_model(saved)
            raise

    return run


def assignment_handler() -> Handler:
    """The solve job: the venue's stored scores, conflicts (detected, uploaded, Not Willing
    bids, forbids), pins and limits through :func:`reviewer_recommender.services.assignment.
    assign`, the same service the command line calls; the result as a new draft run."""

    def run(ctx: JobContext) -> None:
        from matching import Infeasible
        from matching.monitor import SolveCancelled
        from recommender.corpus import InputError
        from reviewer_recommender.services import assignment_store as store
        from reviewer_recommender.services.assignment import assign
        from reviewer_recommender.services.errors import NoAssignment, OptionError

        with failing_in_words(), ctx.session() as session:
            solve = store.read_stored_solve(session, ctx.venue_id, ctx.job_id, ctx.params)
        for warning in solve.warnings:
            ctx.log(f"warning: {warning}")
        ctx.progress(0.1, "building the assignment problem", force=True)
        try:
            # the solver's stage, incumbent and bound fill the job's 0.2-0.9 progress band;
            # a cancel stops it (SolveCancelled), recorded as a cancel, not a failure
            result = assign(solve.inputs, solve.params, monitor=ctx.solve_monitor(0.2, 0.9))
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
        ctx.log(store.describe_problem(result))
        ctx.check_cancelled()
        ctx.progress(0.9, "writing the assignment", force=True)
        with ctx.session() as session:
            stored = store.store_assignment(session, ctx.venue_id, ctx.job_id, solve, result)
            ctx.finish(session, {"assignment_id": stored.assignment_id, "pairs": stored.pairs})
            session.commit()

    return run


def reassignment_handler() -> Handler:
    """The re-assignment job: the live run repaired without the withdrawn reviewers and
    removed pairs (``source`` ``live``) or without its open declines (``declines``), through
    the services the request checked it with; refused (in words) when another run went live
    since it was queued. The result names the new draft and what changed."""

    def run(ctx: JobContext) -> None:
        from reviewer_recommender.services import declines, modes

        p = ctx.params
        ctx.progress(0.1, "re-assigning the live run", force=True)
        with failing_in_words(), ctx.session() as session:
            common = {
                "pool": p["pool"],
                "reason": p["reason"],
                "actor": ctx.created_by,
                "expected_live": p["live_assignment_id"],
                "before_commit": lambda _draft, outcome: ctx.finish(session, outcome),
            }
            if p["source"] == "declines":
                declines.reassign_declines(session, ctx.venue_id, **common)
            else:
                remove = [(paper, reviewer) for paper, reviewer in p["remove"]]
                modes.reassign_live_run(
                    session, ctx.venue_id, withdraw=p["withdraw"], remove=remove, **common
                )

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
        "reassignment": reassignment_handler(),
    }
