"""A job's own process (the ``"process"`` isolation of
:class:`reviewer_recommender.jobs.runner.JobRunner`): what runs in it, from the fork server."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

from reviewer_recommender.jobs.context import (
    CancelFlag,
    Handler,
    JobContext,
    finalize,
    run_handler,
)
from reviewer_recommender.jobs.lease import hold_lifeline, lifeline_intact
from reviewer_recommender.storage.db import Database
from reviewer_recommender.storage.models import Job


def load_factory(reference: str) -> Callable[..., dict[str, Handler]]:
    """The callable named ``"package.module:function"``."""
    module_name, _, attribute = reference.partition(":")
    factory: Callable[..., dict[str, Handler]] = getattr(
        importlib.import_module(module_name), attribute
    )
    return factory


def child_main(
    database_url: str,
    job_id: int,
    factory: str,
    factory_args: tuple[Any, ...],
    cancel: CancelFlag,
    sys_path: list[str],
    poll_interval: float,
    lifeline: Any,
) -> None:
    """A job's process: its own process group (killed as one, with any solver it starts),
    ended with the server that holds ``lifeline`` (the read end of a pipe), its own database
    connection; records its own outcome."""
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    lifeline_fd = lifeline.fileno()
    hold_lifeline(lifeline_fd)
    sys.path[:] = [*sys_path, *(p for p in sys.path if p not in sys_path)]
    database = Database(database_url)
    try:
        with database.session() as session:
            job = session.get(Job, job_id)
            if job is None or job.state != "running":
                return
            context = JobContext(
                database,
                job,
                cancel,
                poll_interval=poll_interval,
                holder_alive=lambda: lifeline_intact(lifeline_fd),
            )
            kind = job.kind
        try:
            handler = load_factory(factory)(*factory_args)[kind]
        except Exception as failure:
            detail = "".join(traceback.format_exception_only(type(failure), failure)).strip()
            finalize(database, job_id, "failed", f"internal error: {detail}", error=detail)
            return
        run_handler(database, context, handler)
    finally:
        database.dispose()
