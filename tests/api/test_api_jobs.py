"""Background jobs: progress, log, cancel, failure, restart (incl. SIGKILL of a real server)."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import REVIEWERS, SUBMISSIONS, TFIDF
from conftest import Api, make_settings
from fastapi.testclient import TestClient
from live_server import run_server
from waiting import wait_until

from api.app import create_app
from reviewer_recommender.jobs.runner import JobContext, JobFailed, JobRunner
from reviewer_recommender.storage.db import Database, migrate
from reviewer_recommender.storage.models import Job, Venue

EMBEDDING = {"method": "embedding", "model": "all-MiniLM-L6-v2"}
FINAL = {"succeeded", "failed", "cancelled", "interrupted"}


@pytest.fixture
def database(database_url: str) -> Any:
    db = Database(database_url)
    migrate(db.engine)
    with db.session() as session:
        if session.get(Venue, "jobs-venue") is None:
            session.add(Venue(id="jobs-venue", name="jobs"))
            session.commit()
    yield db
    db.dispose()


def _new_job(database: Database, kind: str = "test") -> int:
    with database.session() as session:
        job = Job(venue_id="jobs-venue", kind=kind, params={"steps": 50}, log=[], result={})
        session.add(job)
        session.commit()
        return job.id


def _job(database: Database, job_id: int) -> Job:
    with database.session() as session:
        job = session.get(Job, job_id)
        assert job is not None
        return job


def test_runner_progress_cancel_and_failure(database: Database) -> None:
    started = threading.Event()
    release = threading.Event()

    def slow(ctx: JobContext) -> None:
        ctx.log("working")
        ctx.progress(0.25, "first quarter", force=True)
        started.set()
        for _ in range(int(ctx.params["steps"])):
            release.wait(0.05)
            ctx.progress(0.5, "waiting", force=True)
        raise AssertionError("a cancelled job must not get here")

    def broken(ctx: JobContext) -> None:
        raise JobFailed("input missing: upload reviewers first")

    def crashing(ctx: JobContext) -> None:
        raise ZeroDivisionError("bug")

    runner = JobRunner(database, {"test": slow, "broken": broken, "crash": crashing}, workers=2)
    runner.start()
    try:
        job_id = _new_job(database)
        runner.submit(job_id)
        assert started.wait(10)
        running = _job(database, job_id)
        assert running.state == "running" and running.progress == 0.25
        assert running.stage == "first quarter" and any("working" in line for line in running.log)
        with database.session() as session:
            session.get(Job, job_id).cancel_requested = True  # as the cancel endpoint does
            session.commit()
        runner.wait(job_id, 10)
        cancelled = _job(database, job_id)
        assert cancelled.state == "cancelled" and cancelled.result == {}
        assert "no result written" in cancelled.log[-1]

        failed_id = _new_job(database, "broken")
        runner.submit(failed_id)
        runner.wait(failed_id, 10)
        failed = _job(database, failed_id)
        assert failed.state == "failed" and failed.error == "input missing: upload reviewers first"

        crash_id = _new_job(database, "crash")
        runner.submit(crash_id)
        runner.wait(crash_id, 10)
        crashed = _job(database, crash_id)
        assert crashed.state == "failed" and "ZeroDivisionError" in crashed.error
    finally:
        runner.stop()


def test_restart_marks_unfinished_jobs_interrupted(database: Database) -> None:
    queued = _new_job(database)
    running = _new_job(database)
    with database.session() as session:
        session.get(Job, running).state = "running"
        session.commit()
    runner = JobRunner(database, {}, inline=True)
    assert runner.start() >= 2
    for job_id in (queued, running):
        job = _job(database, job_id)
        assert job.state == "interrupted" and "interrupted" in job.log[-1]


def test_background_jobs_over_http(database_url: str, tmp_path: Path) -> None:
    app = create_app(make_settings(database_url, tmp_path, inline_jobs=False))
    with TestClient(app) as client:
        api = Api(client, app.state.database)
        venue, chair, viewer = api.new_venue()
        api.call("POST", f"/venues/{venue}/reviewers", chair, json=REVIEWERS)
        api.call("POST", f"/venues/{venue}/submissions", chair, json=SUBMISSIONS)
        accepted = api.call("POST", f"/venues/{venue}/affinity/jobs", chair, json={"config": TFIDF})
        assert accepted.status_code == 202 and accepted.json()["state"] in (
            "queued",
            "running",
            "succeeded",
        )
        job_id = accepted.json()["id"]
        job = api.call("GET", f"/venues/{venue}/jobs/{job_id}", chair, params={"wait": 30}).json()
        assert job["state"] == "succeeded", job
        # jobs are chairs' work in progress: a viewer sees none of them
        assert api.call("GET", f"/venues/{venue}/jobs/{job_id}", viewer).status_code == 404
        assert api.call("GET", f"/venues/{venue}/jobs", viewer).json()["total"] == 0
        assert job["progress"] == 1.0 and job["stage"] == "done"
        assert job["started_at"] and job["finished_at"] and len(job["log"]) >= 3
        assert api.call("POST", f"/venues/{venue}/jobs/{job_id}/cancel", chair).status_code == 409
        rerun = api.call("POST", f"/venues/{venue}/jobs/{job_id}/rerun", chair).json()
        assert rerun["rerun_of"] == job_id
        rerun = api.call(
            "GET", f"/venues/{venue}/jobs/{rerun['id']}", chair, params={"wait": 30}
        ).json()
        assert rerun["state"] == "succeeded"
        assert rerun["result"]["affinity_run_id"] == job["result"]["affinity_run_id"] + 1
        listing = api.call(
            "GET", f"/venues/{venue}/jobs", chair, params={"kind": "affinity"}
        ).json()
        assert listing["total"] == 2


def test_inline_job_failure_is_reported(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    job = api.call("POST", f"/venues/{venue}/affinity/jobs", chair, json={"config": TFIDF}).json()
    assert job["state"] == "failed" and "no reviewers" in job["error"]
    bad = api.call(
        "POST", f"/venues/{venue}/affinity/jobs", chair, json={"config": {"method": "magic"}}
    )
    assert bad.status_code == 422 and "magic" in bad.text and "method" in bad.text


# ------------------------------------------------------------ a real server, killed


def _job_state(client: httpx.Client, path: str, states: set[str]) -> dict[str, Any]:
    return wait_until(
        lambda: client.get(path).json(),
        lambda job: job["state"] in states,
        what=f"{path} to be {' or '.join(sorted(states))}",
    )


def test_sigkill_during_a_job_loses_nothing(database_url: str, tmp_path: Path) -> None:
    # one worker and no embedding cache: every embedding job loads a model and embeds
    server_settings: dict[str, str | int | float] = {"job_workers": 1, "cache_dir": "none"}
    venue = f"kill-{uuid.uuid4().hex[:8]}"
    base = f"/venues/{venue}"
    with run_server(database_url, tmp_path, **server_settings) as server, server.client() as client:
        assert client.post("/venues", json={"id": venue}).status_code == 201
        client.post(f"{base}/reviewers", json=REVIEWERS).raise_for_status()
        client.post(f"{base}/submissions", json=SUBMISSIONS).raise_for_status()
        job = client.post(f"{base}/affinity/jobs", json={"config": TFIDF}).json()
        done = _job_state(client, f"{base}/jobs/{job['id']}", FINAL)
        assert done["state"] == "succeeded", done
        job = client.post(
            f"{base}/assignments", json={"reviewers_per_paper": 1, "max_load": 2}
        ).json()
        done = _job_state(client, f"{base}/jobs/{job['id']}", FINAL)
        assert done["state"] == "succeeded", done
        assignment = done["result"]["assignment_id"]
        export_before = client.get(f"{base}/assignments/{assignment}/export").text
        runs_before = client.get(f"{base}/affinity").json()

        # the embedding method loads a sentence-transformers model: seconds of real work
        # (the bundled MiniLM: any model does, and the default MPNet is 5x slower)
        slow = client.post(f"{base}/affinity/jobs", json={"config": EMBEDDING}).json()
        running = _job_state(client, f"{base}/jobs/{slow['id']}", {"running", *FINAL})
        assert running["state"] == "running", running
        server.crash()

    with run_server(database_url, tmp_path, **server_settings) as server, server.client() as client:
        job = client.get(f"{base}/jobs/{slow['id']}").json()
        assert job["state"] == "interrupted", job
        assert "interrupted" in job["log"][-1] and job["result"] == {}
        assert client.get(f"{base}/reviewers").json()["total"] == 4
        assert client.get(f"{base}/submissions").json()["total"] == 4
        assert client.get(f"{base}/assignments/{assignment}/export").text == export_before
        assert client.get(f"{base}/affinity").json()["id"] == runs_before["id"]  # none half-written
        rerun = client.post(f"{base}/jobs/{slow['id']}/rerun").json()
        finished = _job_state(client, f"{base}/jobs/{rerun['id']}", FINAL)
        assert finished["state"] == "succeeded", finished
        latest = client.get(f"{base}/affinity").json()
        assert latest["config"]["method"] == "embedding"

        # cancelling a running job: it ends cancelled and writes no affinity run
        doomed = client.post(f"{base}/affinity/jobs", json={"config": EMBEDDING}).json()
        running = _job_state(client, f"{base}/jobs/{doomed['id']}", {"running", *FINAL})
        assert running["state"] == "running", running
        cancel = client.post(f"{base}/jobs/{doomed['id']}/cancel")
        assert cancel.status_code == 202 and cancel.json()["cancel_requested"] is True
        ended = _job_state(client, f"{base}/jobs/{doomed['id']}", FINAL)
        assert ended["state"] == "cancelled", ended
        assert client.get(f"{base}/affinity").json()["id"] == latest["id"]
