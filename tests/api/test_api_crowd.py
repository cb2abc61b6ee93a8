"""One service for many venues: a slow or hostile client costs only its own socket, a
venue's flood its own answers (429), explanations never re-fit inside a request, and job
workers are shared fairly between venues. Through HTTP, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import shutil
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from api_helpers import SUBMISSIONS, load_venue
from asgi_calls import start_stalled
from conftest import Api, make_settings
from fastapi.testclient import TestClient
from waiting import wait_until

from api.app import create_app
from recommender.affinity import AffinityModel
from reviewer_recommender.jobs.runner import JobContext
from reviewer_recommender.services.explain import ExplainerCache
from reviewer_recommender.storage.models import Job

STALL = 60.0  # bound on a hang, not a claim of speed


def _no_connection_held(api: Api, what: str) -> None:
    """Some moment with no database connection checked out (the runner's heartbeat may
    take one now and then; a request holding one would hold it all along)."""
    pool = api.database.engine.pool
    wait_until(pool.checkedout, lambda n: n == 0, what=f"no connection held while {what}")


@pytest.fixture
def limited(database_url: str, tmp_path: Path) -> Iterator[Api]:
    """A service allowing 1 request in flight per token and 2 per venue."""
    settings = make_settings(
        database_url, tmp_path, max_requests_per_token=1, max_requests_per_venue=2
    )
    app = create_app(settings)
    with TestClient(app) as client:
        yield Api(client, app.state.database)


def test_a_reader_that_stops_reading_an_export_holds_no_connection(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    load_venue(api, venue, chair)
    stalled = [
        start_stalled(api.client, "GET", f"/venues/{venue}/{what}/export", token)
        for what, token in (("affinity", viewer), ("conflicts", chair))
    ]
    try:
        for call in stalled:
            assert call.stalled.wait(STALL) and call.status == 200
        _no_connection_held(api, "two clients stop reading their exports")
        other, other_chair, _ = api.new_venue()
        assert api.call("GET", f"/venues/{other}/submissions", other_chair).status_code == 200
    finally:
        for call in stalled:
            call.release()
    for call in stalled:
        assert call.done.wait(STALL)
    rows = bytes(stalled[0].body).decode().splitlines()
    assert rows[0] == "paper_id,reviewer_id,score" and len(rows) > 1
    assert int(stalled[0].headers["content-length"]) == len(stalled[0].body)


def test_a_long_poll_holds_no_connection_while_it_waits(api: Api) -> None:
    venue, chair, _ = api.new_venue()
    runner = api.client.app.state.jobs
    with api.database.session() as session:
        job = Job(venue_id=venue, kind="affinity", params={}, log=[], result={}, owner=runner.owner)
        session.add(job)
        session.commit()
        job_id = job.id
    answers: list[Any] = []
    polls = [
        threading.Thread(
            target=lambda: answers.append(
                api.call("GET", f"/venues/{venue}/jobs/{job_id}", chair, params={"wait": 3})
            )
        )
        for _ in range(4)
    ]
    for poll in polls:
        poll.start()
    _no_connection_held(api, "four long polls wait")
    for poll in polls:
        poll.join(STALL)
    assert [a.status_code for a in answers] == [200] * 4
    assert {a.json()["state"] for a in answers} == {"queued"}


def test_a_body_that_trickles_in_holds_no_connection(api: Api) -> None:
    venue, chair, _ = api.new_venue()
    body = json.dumps(SUBMISSIONS).encode()
    call = start_stalled(
        api.client, "POST", f"/venues/{venue}/submissions", chair, body=body, stall="sending"
    )
    try:
        assert call.stalled.wait(STALL)
        _no_connection_held(api, "an upload's body is half sent")
    finally:
        call.release()
    assert call.done.wait(STALL)
    assert call.status == 200, bytes(call.body)
    assert json.loads(bytes(call.body))["created"] == len(SUBMISSIONS)


def test_requests_beyond_a_token_or_venue_limit_get_429(limited: Api) -> None:
    api = limited
    venue, chair, viewer = api.new_venue()
    load_venue(api, venue, chair)
    first = start_stalled(api.client, "GET", f"/venues/{venue}/affinity/export", viewer)
    calls = [first]
    try:
        _limits_hold(api, venue, chair, viewer, calls)
    finally:
        for call in calls:
            call.release()
    assert len(calls) == 2
    for call in calls:
        assert call.done.wait(STALL) and call.status == 200
    assert api.call("GET", f"/venues/{venue}/submissions", viewer).status_code == 200


def _limits_hold(api: Api, venue: str, chair: str, viewer: str, calls: list[Any]) -> None:
    """With ``calls[0]`` in flight for the viewer: the limits, one more stalled call for the
    chair (appended to ``calls``)."""
    assert calls[0].stalled.wait(STALL)
    refused = api.call("GET", f"/venues/{venue}/submissions", viewer)
    assert refused.status_code == 429, refused.text
    assert refused.json()["code"] == "too_many_requests"
    assert int(refused.headers["retry-after"]) >= 1
    # another token of the venue still gets in, up to the venue's limit of 2
    assert api.call("GET", f"/venues/{venue}/submissions", chair).status_code == 200
    calls.append(start_stalled(api.client, "GET", f"/venues/{venue}/affinity/export", chair))
    assert calls[1].stalled.wait(STALL)
    full = api.call("GET", f"/venues/{venue}/submissions", api.admin)
    assert full.status_code == 429 and "venue" in full.json()["detail"]
    # another venue is untouched
    other, other_chair, _ = api.new_venue()
    assert api.call("GET", f"/venues/{other}/submissions", other_chair).status_code == 200
    assert api.client.get("/health").status_code == 200


def _live_run(api: Api, venue: str, chair: str) -> tuple[int, str]:
    """A published run of the tiny venue (inline jobs) and one of its reviewers."""
    load_venue(api, venue, chair)
    params = {"reviewers_per_paper": 1, "max_load": 2, "solver": "flow"}
    job = api.call("POST", f"/venues/{venue}/assignments", chair, json=params).json()
    run = int(job["result"]["assignment_id"])
    version = api.call("GET", f"/venues/{venue}/assignments/{run}", chair).json()["version"]
    deploy = {"assignment_id": run, "version": version}
    published = api.call("POST", f"/venues/{venue}/assignments/{run}/deploy", chair, json=deploy)
    assert published.status_code == 200, published.text
    pairs = api.call("GET", f"/venues/{venue}/assignments/{run}/pairs", chair).json()["items"]
    return run, pairs[0]["reviewer_id"]


def test_reassignment_is_a_job_scheduled_fairly_never_work_in_a_request(
    api: Api, database_url: str, tmp_path: Path
) -> None:
    """A venue's re-assignments answer at once with queued jobs that hold at most one of the
    two workers; another venue's job still runs at once; each then makes its draft."""
    venue, chair, _ = api.new_venue()
    live, gone = _live_run(api, venue, chair)
    other, other_chair, _ = api.new_venue()
    settings = make_settings(
        database_url, tmp_path, inline_jobs=False, job_isolation="thread", job_workers=2
    )
    app = create_app(settings)
    release = threading.Event()

    with TestClient(app) as client:
        served = Api(client, app.state.database)
        real = app.state.jobs.handlers["reassignment"]

        def held(ctx: JobContext) -> None:
            release.wait(STALL)
            real(ctx)

        def quick(ctx: JobContext) -> None:
            with ctx.session() as session:
                ctx.finish(session, {"venue": ctx.venue_id})
                session.commit()

        app.state.jobs.handlers = {"reassignment": held, "affinity": quick}
        path = f"/venues/{venue}/assignments/live/reassign"
        queued = [
            served.call("POST", path, chair, json={"withdraw": [gone], "reason": f"try {i}"})
            for i in range(3)
        ]
        assert {q.status_code for q in queued} == {202}, [q.text for q in queued]
        assert {q.json()["kind"] for q in queued} == {"reassignment"}
        # still refused at once, nothing queued, for a bad request
        refused = served.call("POST", path, chair, json={"withdraw": ["Nobody_Here1"]})
        assert refused.status_code == 422 and refused.json()["field"] == "withdraw"
        tfidf = {"config": {"method": "tfidf"}}
        started = served.call("POST", f"/venues/{other}/affinity/jobs", other_chair, json=tfidf)
        assert started.status_code == 202
        ended = served.call(
            "GET", f"/venues/{other}/jobs/{started.json()['id']}", other_chair, params={"wait": 30}
        )
        assert ended.json()["state"] == "succeeded", ended.json()
        jobs = f"/venues/{venue}/jobs"
        states = [served.call("GET", f"{jobs}/{q.json()['id']}", chair).json() for q in queued]
        assert sorted(s["state"] for s in states) == ["queued", "queued", "running"], states
        release.set()
        drafts = []
        for q in queued:
            final = served.call("GET", f"{jobs}/{q.json()['id']}", chair, params={"wait": 30})
            assert final.json()["state"] == "succeeded", final.json()
            result = final.json()["result"]
            assert result["derived_from"] == live and result["stage"] == "fill"
            drafts.append(result["assignment_id"])
        assert len(set(drafts)) == 3
        listed = served.call("GET", jobs, chair, params={"kind": "reassignment"}).json()
        assert listed["total"] == 3


def test_explanations_never_refit_inside_a_request(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    venue, chair, viewer = api.new_venue()
    load_venue(api, venue, chair)

    def no_refit(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("an affinity model was fitted inside a request")

    monkeypatch.setattr(AffinityModel, "fit", no_refit)
    pair = f"/venues/{venue}/affinity/pairs/P1/~Grace_Graph1"
    fresh = api.call("GET", pair, viewer)
    assert fresh.status_code == 200, fresh.text
    assert fresh.json()["stale"] is False and fresh.json()["explanation"]
    # an upload makes the run stale: the run's own model still explains, and says so
    more = [*SUBMISSIONS, {"id": "P9", "title": "Graph kernels", "abstract": "Graph kernels."}]
    assert api.call("POST", f"/venues/{venue}/submissions", chair, json=more).status_code == 200
    stale = [api.call("GET", pair, viewer) for _ in range(4)]
    assert {s.status_code for s in stale} == {200}
    assert all(s.json()["stale"] is True and s.json()["explanation"] for s in stale)
    assert stale[0].json()["score"] == fresh.json()["score"]
    newer = api.call("GET", f"/venues/{venue}/affinity/pairs/P9/~Grace_Graph1", viewer)
    assert newer.status_code == 409 and newer.json()["code"] == "stale_affinities"
    assert "affinity/jobs" in newer.json()["detail"]
    # a run whose saved model is gone: 409 naming the way out, never a re-fit
    settings = api.client.app.state.settings
    shutil.rmtree(settings.affinity_models_dir)
    api.client.app.state.explainers = ExplainerCache(
        settings.affinity_models_dir, settings.run_options
    )
    gone = api.call("GET", pair, viewer)
    assert gone.status_code == 409 and gone.json()["code"] == "no_saved_model", gone.text
    # a stored score without explanation needs no model at all
    plain = api.call("GET", pair, viewer, params={"explain": "false"})
    assert plain.status_code == 200 and plain.json()["score"] == fresh.json()["score"]


def test_another_venues_job_starts_while_one_venue_fills_the_queue(
    database_url: str, tmp_path: Path
) -> None:
    """Two workers, one venue queues six jobs that hold their worker until released: the
    other venue's job still runs at once (round-robin, at most one worker per venue)."""
    settings = make_settings(
        database_url, tmp_path, inline_jobs=False, job_isolation="thread", job_workers=2
    )
    app = create_app(settings)
    release = threading.Event()
    busy_venue = f"busy-{uuid.uuid4().hex[:6]}"

    def handler(ctx: JobContext) -> None:
        if ctx.venue_id == busy_venue:
            release.wait(STALL)
        with ctx.session() as session:
            ctx.finish(session, {"venue": ctx.venue_id})
            session.commit()

    with TestClient(app) as client:
        api = Api(client, app.state.database)
        app.state.jobs.handlers = {"affinity": handler}
        response = api.client.post(
            "/venues", json={"id": busy_venue, "name": "busy"}, headers=api.headers(api.admin)
        )
        assert response.status_code == 201
        tfidf = {"config": {"method": "tfidf"}}
        queued = [
            api.call("POST", f"/venues/{busy_venue}/affinity/jobs", api.admin, json=tfidf)
            for _ in range(6)
        ]
        assert {q.status_code for q in queued} == {202}
        other, chair, _ = api.new_venue()
        started = api.call("POST", f"/venues/{other}/affinity/jobs", chair, json=tfidf)
        assert started.status_code == 202
        job_id = started.json()["id"]
        ended = api.call("GET", f"/venues/{other}/jobs/{job_id}", chair, params={"wait": 30})
        assert ended.json()["state"] == "succeeded", ended.json()
        states = [
            api.call("GET", f"/venues/{busy_venue}/jobs/{q.json()['id']}", api.admin).json()[
                "state"
            ]
            for q in queued
        ]
        assert states.count("running") == 1 and states.count("queued") == 5, states
        release.set()
        for q in queued:
            final = api.call(
                "GET", f"/venues/{busy_venue}/jobs/{q.json()['id']}", api.admin, params={"wait": 30}
            )
            assert final.json()["state"] == "succeeded"


def test_a_venue_queues_at_most_its_bound_of_jobs_and_another_venue_still_queues(
    database_url: str, tmp_path: Path
) -> None:
    """At most ``max_queued_jobs_per_venue`` jobs of a venue queued or running, however
    many are sent at once: the rest answer 429 ``too_many_jobs`` with ``Retry-After`` and
    words naming the bound and how many wait, nothing stored; another venue still queues,
    and the venue queues again once its jobs have ended."""
    settings = make_settings(
        database_url,
        tmp_path,
        inline_jobs=False,
        job_isolation="thread",
        job_workers=2,
        max_queued_jobs_per_venue=3,
    )
    app = create_app(settings)
    release = threading.Event()
    busy_venue = f"busy-{uuid.uuid4().hex[:6]}"

    def handler(ctx: JobContext) -> None:
        if ctx.venue_id == busy_venue:
            release.wait(STALL)
        with ctx.session() as session:
            ctx.finish(session, {"venue": ctx.venue_id})
            session.commit()

    with TestClient(app) as client:
        api = Api(client, app.state.database)
        app.state.jobs.handlers = {"affinity": handler}
        made = client.post(
            "/venues", json={"id": busy_venue, "name": "busy"}, headers=api.headers(api.admin)
        )
        assert made.status_code == 201
        path = f"/venues/{busy_venue}/affinity/jobs"
        tfidf = {"config": {"method": "tfidf"}}
        answers: list[Any] = []
        sends = [
            threading.Thread(
                target=lambda: answers.append(api.call("POST", path, api.admin, json=tfidf))
            )
            for _ in range(8)
        ]
        for send in sends:
            send.start()
        for send in sends:
            send.join(STALL)
        assert sorted(a.status_code for a in answers) == [202] * 3 + [429] * 5
        for refused in (a for a in answers if a.status_code == 429):
            body = refused.json()
            assert body["code"] == "too_many_jobs", body
            assert (body["limit"], body["waiting"], body["retry_after"]) == (3, 3, 30)
            assert refused.headers["retry-after"] == "30"
            assert "already has 3 jobs queued or running" in body["detail"]
            assert "(3, RECOMMENDER_MAX_QUEUED_JOBS_PER_VENUE)" in body["detail"]
        jobs = f"/venues/{busy_venue}/jobs"
        assert api.call("GET", jobs, api.admin).json()["total"] == 3
        audit = api.call("GET", f"/venues/{busy_venue}/audit", api.admin).json()["items"]
        assert [e["action"] for e in audit].count("job.affinity.start") == 3
        # another venue is untouched by the full queue
        other, chair, _ = api.new_venue()
        started = api.call("POST", f"/venues/{other}/affinity/jobs", chair, json=tfidf)
        assert started.status_code == 202, started.text
        ended = api.call(
            "GET", f"/venues/{other}/jobs/{started.json()['id']}", chair, params={"wait": 30}
        )
        assert ended.json()["state"] == "succeeded", ended.json()
        # once the venue's jobs have ended, it queues again
        release.set()
        for accepted in (a for a in answers if a.status_code == 202):
            final = api.call(
                "GET", f"{jobs}/{accepted.json()['id']}", api.admin, params={"wait": 30}
            )
            assert final.json()["state"] == "succeeded", final.json()
        again = api.call("POST", path, api.admin, json=tfidf)
        assert again.status_code == 202, again.text
