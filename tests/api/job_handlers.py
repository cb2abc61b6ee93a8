"""Job handlers for the runner tests, importable by name (``job_handlers:handlers``) so that
the process isolation can rebuild them in a job's own process."""

from __future__ import annotations

import inspect
import os
import signal
import time
from typing import Any

import numpy as np

from reviewer_recommender.jobs.runner import Handler, JobContext


def slow_fairness_problem(n_papers: int = 800, n_reviewers: int = 200, seed: int = 0) -> Any:
    """Max-min fairness over papers on dense random scores: HiGHS needs minutes for it."""
    from matching import AssignmentProblem, Fairness

    rng = np.random.default_rng(seed)
    scores = rng.random((n_papers, n_reviewers))
    problem = AssignmentProblem.from_dense(
        scores,
        paper_ids=[f"p{i}" for i in range(n_papers)],
        reviewer_ids=[f"r{j}" for j in range(n_reviewers)],
        demand=3,
        min_load=0,
        max_load=int(np.ceil(n_papers * 3 / n_reviewers)),
    )
    return problem.with_side_constraints(Fairness(1.0))


def quick(ctx: JobContext) -> None:
    ctx.progress(0.5, "halfway", force=True)
    with ctx.session() as session:
        ctx.finish(session, {"answer": 42})
        session.commit()


def stubborn(ctx: JobContext) -> None:
    """Never looks at the cancel flag (a native call that cannot be interrupted). It reports
    its stage with ``record_progress``, which never raises for a cancel: ``progress`` would
    be a cancel point, and a cancel landing between its write and its check would end the
    job there instead of testing the kill."""
    ctx.record_progress(0.1, "computing without cancel points", force=True)
    deadline = time.monotonic() + float(ctx.params.get("seconds", 600))
    while time.monotonic() < deadline:
        sum(range(100_000))
    with ctx.session() as session:
        ctx.finish(session, {"late": True})
        session.commit()


def fairness(ctx: JobContext) -> None:
    """A slow fairness ILP solved with the job's monitor where the solver takes one."""
    from matching import solve

    ctx.progress(0.05, "building the problem", force=True)
    problem = slow_fairness_problem(int(ctx.params.get("papers", 800)))
    options: dict[str, Any] = {}
    if "monitor" in inspect.signature(solve).parameters:
        options["monitor"] = ctx.solve_monitor(0.1, 0.9)
    ctx.progress(0.1, "solving", force=True)
    assignment = solve(problem, solver="ilp", **options)
    with ctx.session() as session:
        ctx.finish(session, {"objective": float(assignment.objective)})
        session.commit()


def crash(ctx: JobContext) -> None:
    """Dies like a process killed by the kernel for its memory."""
    ctx.progress(0.2, "about to die", force=True)
    os.kill(os.getpid(), signal.SIGKILL)


def handlers() -> dict[str, Handler]:
    return {"quick": quick, "stubborn": stubborn, "fairness": fairness, "crash": crash}
