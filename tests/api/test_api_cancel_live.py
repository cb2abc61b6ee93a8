"""Through a real server with one job worker: a fairness solve and an embedding job, each
cancelled while it works, end ``cancelled`` and write nothing; ``/health`` answers meanwhile;
the worker then runs the next job. On SQLite and PostgreSQL. How fast (cancel to
``cancelled``, ``/health`` latency under load) is measured by ``benchmarks/bench_cancel.py``;
that a solver stops by itself rather than being ended, by ``test_api_cancel.py``."""

from __future__ import annotations

import random
import uuid
from pathlib import Path
from typing import Any

import httpx
from live_server import run_server
from waiting import wait_until

FINAL = {"succeeded", "failed", "cancelled", "interrupted"}


def _synthetic_venue(n_papers: int, n_reviewers: int) -> tuple[list[Any], list[Any]]:
    rng = random.Random(0)
    words = [f"term{i}" for i in range(300)]

    def text(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n))

    submissions = [{"id": f"P{i}", "title": text(8), "abstract": text(60)} for i in range(n_papers)]
    reviewers = [
        {
            "id": f"R{j}",
            "name": f"Reviewer {j}",
            "publications": [{"title": text(8), "abstract": text(60)} for _ in range(10)],
        }
        for j in range(n_reviewers)
    ]
    return reviewers, submissions


def _wait(client: httpx.Client, path: str, until: set[str]) -> dict[str, Any]:
    return wait_until(
        lambda: client.get(path).json(),
        lambda job: job["state"] in until,
        what=f"{path} to be {' or '.join(sorted(until))}",
    )


def _wait_for_stage(client: httpx.Client, path: str, started: str) -> dict[str, Any]:
    """The job still running, its stage starting with ``started``."""
    job = wait_until(
        lambda: client.get(path).json(),
        lambda job: (
            job["state"] in FINAL
            or (job["state"] == "running" and job["stage"].startswith(started))
        ),
        what=f"{path} to report a stage starting {started!r}",
    )
    assert job["state"] == "running", job
    return job


def _cancel(client: httpx.Client, path: str) -> dict[str, Any]:
    response = client.post(f"{path}/cancel")
    assert response.status_code == 202, response.text
    return _wait(client, path, FINAL)


def test_cancel_stops_the_work_and_frees_the_worker_on_a_live_server(
    database_url: str, tmp_path: Path
) -> None:
    reviewers, submissions = _synthetic_venue(400, 100)
    with (
        run_server(
            database_url, tmp_path, job_workers=1, affinity_top_n=100, cache_dir="none"
        ) as server,
        server.client() as client,
    ):
        venue = f"cancel-{uuid.uuid4().hex[:8]}"
        base = f"/venues/{venue}"
        assert client.post("/venues", json={"id": venue}).status_code == 201
        client.post(f"{base}/reviewers", json=reviewers).raise_for_status()
        client.post(f"{base}/submissions", json=submissions).raise_for_status()
        job = client.post(f"{base}/affinity/jobs", json={"config": {"method": "tfidf"}}).json()
        assert _wait(client, f"{base}/jobs/{job['id']}", FINAL)["state"] == "succeeded"
        scores = client.get(f"{base}/affinity").json()["id"]

        # max-min fairness on 400 papers x 100 reviewers: minutes of HiGHS if let run
        solve = client.post(
            f"{base}/assignments",
            json={"reviewers_per_paper": 3, "max_load": 12, "fairness_keep": 1.0, "solver": "ilp"},
        ).json()
        path = f"{base}/jobs/{solve['id']}"
        _wait_for_stage(client, path, "fairness 2/3")  # HiGHS raising the lowest paper score
        assert client.get("/health").status_code == 200
        ended = _cancel(client, path)
        assert ended["state"] == "cancelled" and ended["result"] == {}, ended
        assert client.get(f"{base}/assignments").json()["total"] == 0

        # an embedding job (loads a sentence-transformers model, then embeds) cancelled
        # mid-way; the bundled MiniLM (any model does), and no embedding cache, so it embeds
        embed = client.post(
            f"{base}/affinity/jobs",
            json={"config": {"method": "embedding", "model": "all-MiniLM-L6-v2"}},
        ).json()
        path = f"{base}/jobs/{embed['id']}"
        # the job's own process reporting (its first stage, "computing affinity", is soon
        # replaced by the embedding's progress, which a poll can see instead)
        running = wait_until(
            lambda: client.get(path).json(),
            lambda job: (
                job["state"] in FINAL or (job["state"] == "running" and job["progress"] > 0)
            ),
            what=f"{path} to report progress",
        )
        assert running["state"] == "running", running
        assert client.get("/health").status_code == 200
        ended = _cancel(client, path)
        assert ended["state"] == "cancelled" and ended["result"] == {}, ended
        assert client.get(f"{base}/affinity").json()["id"] == scores  # no new scores

        # the only worker is free again: the next job runs and succeeds
        quick = client.post(
            f"{base}/assignments", json={"reviewers_per_paper": 1, "max_load": 4}
        ).json()
        done = _wait(client, f"{base}/jobs/{quick['id']}", FINAL)
        assert done["state"] == "succeeded", done
