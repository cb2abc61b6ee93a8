"""How fast a cancel lands: the figures behind the README's "stopped within a second on
cancel" (the ILP), "a cancel is seen within half a second, even when sent to another server
process" and "a cancelled job reaches ``cancelled`` within seconds", with ``/health``
answering meanwhile. The tests check what a cancel does; this script times it.

- solver: ``IlpSolver`` (HiGHS, CBC) on 300 papers x 100 reviewers with a per-group limit,
  told to stop by its monitor mid-solve: seconds from the first "stop" to ``SolveCancelled``.
- monitor: a job's monitor on a row whose cancel flag another process sets: seconds until
  ``should_stop()`` says so (the row is read every ``poll_interval``, 0.5 s).
- runner: a ``JobRunner`` with one worker and the server's default grace (2 s); the cancel
  flag set in the row, as another server process's cancel endpoint does; seconds until the
  row says ``cancelled`` for a fairness ILP in a job process (stops by itself), and for a
  handler that never looks at the flag in a job process (ended) and in a thread (abandoned).
- live (``--live``): uvicorn with one job worker (``bench_live_safety.start_server``) and a
  400 x 100 venue; a max-min fairness ILP (once HiGHS raises the lowest paper score) and an
  embedding job (once it embeds) cancelled through HTTP: seconds from the cancel request to
  ``cancelled``, the worst ``/health`` answer meanwhile (polled every 50 ms) against the idle
  server's, and the next job on the same worker.

Each figure is measured ``--repeat`` times (median and worst printed), on a fresh SQLite
database unless ``--database-url`` is given.

    python benchmarks/bench_cancel.py [--repeat 3] [--live] [--database-url URL]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.bench_live_safety import Watch, start_server  # noqa: E402
from matching import (  # noqa: E402
    AssignmentProblem,
    Fairness,
    IlpSolver,
    MaxPerGroup,
    SolveCancelled,
    solve,
)
from reviewer_recommender.jobs.runner import Handler, Isolation, JobContext, JobRunner  # noqa: E402
from reviewer_recommender.settings import Settings  # noqa: E402
from reviewer_recommender.storage.db import Database, migrate  # noqa: E402
from reviewer_recommender.storage.models import Job, Venue  # noqa: E402

# the name a job's process imports the handlers by (this file run as a script or a module)
FACTORY = f"{__spec__.name if __spec__ else Path(__file__).stem}:handlers"
GRACE = Settings(data_dir=Path(tempfile.gettempdir())).job_cancel_grace_seconds  # the default
FINAL = {"succeeded", "failed", "cancelled", "interrupted"}


def summary(seconds: list[float]) -> str:
    return f"median {statistics.median(seconds):.2f} s, worst {max(seconds):.2f} s"


def wait_for(probe: Callable[[], Any], done: Callable[[Any], bool], timeout: float = 600) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up waiting after {timeout:g} s; last seen {value!r:.500}")
        time.sleep(0.01)


# ---- solver --------------------------------------------------------------------------------


class StopAfter:
    """A solve monitor that says stop from its n-th poll on and notes when it first did."""

    def __init__(self, polls: int):
        self.polls = 0
        self.stop_after = polls
        self.asked_at: float | None = None

    def report(self, stage: str, **_values: float | None) -> None:
        pass

    def should_stop(self) -> bool:
        self.polls += 1
        if self.polls > self.stop_after and self.asked_at is None:
            self.asked_at = time.perf_counter()
        return self.polls > self.stop_after


def grouped_problem(seed: int) -> AssignmentProblem:
    rng = np.random.default_rng(seed)
    problem = AssignmentProblem.from_dense(
        rng.random((300, 100)),
        paper_ids=[f"p{i}" for i in range(300)],
        reviewer_ids=[f"r{j}" for j in range(100)],
        demand=3,
        min_load=1,
        max_load=12,
    )
    return problem.with_side_constraints(MaxPerGroup(np.arange(100) % 7, 1))


def bench_solver(repeat: int) -> None:
    for backend in ("highs", "cbc"):
        seconds = []
        for seed in range(repeat):
            monitor = StopAfter(polls=3)  # the solver's own checks pass; the MIP is then stopped
            try:
                IlpSolver(backend=backend).solve(
                    grouped_problem(seed), monitor=monitor, time_limit=60
                )
            except SolveCancelled:
                assert monitor.asked_at is not None
                seconds.append(time.perf_counter() - monitor.asked_at)
            else:
                raise SystemExit(f"{backend}: the solve finished without being stopped")
        print(f"ILP ({backend}) told to stop mid-solve -> SolveCancelled: {summary(seconds)}")


# ---- job handlers (imported by name in a job's process) ------------------------------------


def quick(ctx: JobContext) -> None:
    with ctx.session() as session:
        ctx.finish(session, {"answer": 42})
        session.commit()


# ends the abandoned threads of stubborn() once they are measured (a job process is ended)
RELEASE = threading.Event()


def stubborn(ctx: JobContext) -> None:
    """Never looks at the cancel flag (a native call that cannot be interrupted)."""
    ctx.progress(0.1, "computing without cancel points", force=True)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and not RELEASE.is_set():
        sum(range(100_000))


def fairness(ctx: JobContext) -> None:
    """Max-min fairness over 800 papers x 200 reviewers on dense random scores: HiGHS needs
    minutes; solved with the job's monitor."""
    rng = np.random.default_rng(0)
    problem = AssignmentProblem.from_dense(
        rng.random((800, 200)),
        paper_ids=[f"p{i}" for i in range(800)],
        reviewer_ids=[f"r{j}" for j in range(200)],
        demand=3,
        max_load=12,
    ).with_side_constraints(Fairness(1.0))
    ctx.progress(0.1, "solving", force=True)
    solve(problem, solver="ilp", monitor=ctx.solve_monitor(0.1, 0.9))


def handlers() -> dict[str, Handler]:
    return {"quick": quick, "stubborn": stubborn, "fairness": fairness}


# ---- monitor and runner --------------------------------------------------------------------


def new_job(database: Database, kind: str) -> int:
    with database.session() as session:
        if session.get(Venue, "bench") is None:
            session.add(Venue(id="bench", name="bench"))
            session.commit()
        job = Job(venue_id="bench", kind=kind, params={}, log=[], result={})
        session.add(job)
        session.commit()
        return job.id


def job_row(database: Database, job_id: int) -> Job:
    with database.session() as session:
        job = session.get(Job, job_id)
        assert job is not None
        return job


def cancel_in_row(database: Database, job_id: int) -> None:
    """What the cancel endpoint of another server process does."""
    with database.session() as session:
        job = session.get(Job, job_id)
        assert job is not None
        job.cancel_requested = True
        session.commit()


def bench_monitor(database: Database, repeat: int) -> None:
    seconds = []
    for _ in range(repeat * 3):
        job_id = new_job(database, "manual")
        with database.session() as session:
            session.get(Job, job_id).state = "running"  # type: ignore[union-attr]
            session.commit()
        monitor = JobContext(database, job_row(database, job_id), threading.Event()).solve_monitor()
        time.sleep(random.uniform(0, 0.5))  # the flag lands at any point of the poll cycle
        requested = time.perf_counter()
        cancel_in_row(database, job_id)
        wait_for(monitor.should_stop, bool)
        seconds.append(time.perf_counter() - requested)
    print(f"a job's monitor sees a cancel set by another process: {summary(seconds)}")


def bench_runner(database: Database, repeat: int) -> None:
    cases: list[tuple[str, str, Isolation, str]] = [
        ("fairness ILP in a job process", "fairness", "process", "fairness 2/3"),
        ("handler ignoring the flag, job process", "stubborn", "process", "computing"),
        ("handler ignoring the flag, thread", "stubborn", "thread", "computing"),
    ]
    for label, kind, isolation, stage in cases:
        seconds = []
        how = ""
        for _ in range(repeat):
            runner = JobRunner(
                database,
                handlers(),
                workers=1,
                isolation=isolation,
                handler_factory=FACTORY,
                cancel_grace=GRACE,
            )
            runner.start()
            try:
                job_id = new_job(database, kind)
                runner.submit(job_id)
                wait_for(
                    lambda: job_row(database, job_id),  # noqa: B023
                    lambda job: job.stage.startswith(stage) or job.state in FINAL,  # noqa: B023
                )
                requested = time.perf_counter()
                cancel_in_row(database, job_id)
                ended = wait_for(
                    lambda: job_row(database, job_id),  # noqa: B023
                    lambda job: job.state in FINAL,
                )
                seconds.append(time.perf_counter() - requested)
                how = f"{ended.state}: {ended.log[-1][26:]}"
                done = new_job(database, "quick")
                runner.submit(done)
                wait_for(lambda: job_row(database, done), lambda job: job.state in FINAL)  # noqa: B023
            finally:
                RELEASE.set()
                runner.stop()
                RELEASE.clear()
        print(f"{label}: cancel -> cancelled {summary(seconds)} (grace {GRACE:g} s; {how})")


# ---- live server ---------------------------------------------------------------------------


def bench_live(database_url: str, data_dir: Path, repeat: int) -> None:
    # no embedding cache: every embedding job embeds
    process, url, token = start_server(database_url, data_dir, cache_dir="none")
    rng = random.Random(0)
    words = [f"term{i}" for i in range(300)]

    def text(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n))

    try:
        with httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=600
        ) as client:
            base = "/venues/cancel"
            client.post("/venues", json={"id": "cancel"}).raise_for_status()
            client.post(
                f"{base}/reviewers",
                json=[
                    {"id": f"R{j}", "publications": [{"title": text(8), "abstract": text(60)}] * 3}
                    for j in range(100)
                ],
            ).raise_for_status()
            client.post(
                f"{base}/submissions",
                json=[{"id": f"P{i}", "title": text(8), "abstract": text(60)} for i in range(400)],
            ).raise_for_status()

            def job(job_id: int) -> dict[str, Any]:
                answer: dict[str, Any] = client.get(f"{base}/jobs/{job_id}").json()
                return answer

            scores = client.post(f"{base}/affinity/jobs", json={"config": {"method": "tfidf"}})
            wait_for(lambda: job(scores.json()["id"]), lambda j: j["state"] in FINAL)
            with Watch(url) as idle:
                time.sleep(2)
            print(f"/health on the idle server: worst {idle.worst * 1000:.0f} ms")
            fair = {"reviewers_per_paper": 3, "max_load": 12, "fairness_keep": 1.0, "solver": "ilp"}
            embedding = {"config": {"method": "embedding", "model": "all-MiniLM-L6-v2"}}
            for label, path, body, stage in (
                ("fairness ILP, 400 x 100", "assignments", fair, "fairness 2/3"),
                ("embedding affinity job (MiniLM)", "affinity/jobs", embedding, "embed"),
            ):
                seconds, worst = [], []
                for _ in range(repeat):
                    job_id = client.post(f"{base}/{path}", json=body).json()["id"]
                    wait_for(
                        lambda: job(job_id),  # noqa: B023
                        lambda j: j["stage"].startswith(stage) or j["state"] in FINAL,  # noqa: B023
                    )
                    with Watch(url) as watch:
                        requested = time.perf_counter()
                        client.post(f"{base}/jobs/{job_id}/cancel")
                        ended = wait_for(lambda: job(job_id), lambda j: j["state"] in FINAL)  # noqa: B023
                        seconds.append(time.perf_counter() - requested)
                    worst.append(watch.worst)
                print(
                    f"{label} over HTTP: cancel -> {ended['state']} {summary(seconds)}; "
                    f"worst /health meanwhile {max(worst) * 1000:.0f} ms "
                    f"({max(worst) / max(idle.worst, 1e-3):.1f}x idle); {ended['log'][-1][26:]}"
                )
            started = time.perf_counter()
            quick_job = client.post(
                f"{base}/assignments", json={"reviewers_per_paper": 1, "max_load": 4}
            ).json()
            state = wait_for(lambda: job(quick_job["id"]), lambda j: j["state"] in FINAL)["state"]
            print(f"next job on the same worker: {state} in {time.perf_counter() - started:.1f} s")
    finally:
        process.kill()
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--live", action="store_true", help="also cancel jobs of a live server")
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        database_url = args.database_url or f"sqlite:///{Path(folder) / 'bench.db'}"
        database = Database(database_url)
        migrate(database.engine)
        bench_solver(args.repeat)
        bench_monitor(database, args.repeat)
        bench_runner(database, args.repeat)
        database.dispose()
        if args.live:
            bench_live(database_url, Path(folder), args.repeat)


if __name__ == "__main__":
    main()
