"""Through a real server with one job worker: a cancelled fairness solve and a cancelled
embedding job each end ``cancelled`` within 5 s of the request, the worker then runs the next
job, and ``/health`` answers within a second throughout. On SQLite and PostgreSQL."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import httpx
from live_server import HealthWatch, live_server

CANCEL_DEADLINE = 5.0
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
            "publications": [{"title": text(8), "abstract": text(60)} for _ in range(3)],
        }
        for j in range(n_reviewers)
    ]
    return reviewers, submissions


def _wait(client: httpx.Client, path: str, until: set[str], timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        job: dict[str, Any] = client.get(path).json()
        if job["state"] in until or time.monotonic() > deadline:
            return job
        time.sleep(0.05)


def _cancel_and_time(client: httpx.Client, base: str, job_id: int) -> tuple[dict[str, Any], float]:
    requested = time.monotonic()
    response = client.post(f"{base}/jobs/{job_id}/cancel")
    assert response.status_code == 202, response.text
    ended = _wait(client, f"{base}/jobs/{job_id}", FINAL, 30)
    return ended, time.monotonic() - requested


def test_cancel_within_seconds_frees_the_worker_on_a_live_server(
    database_url: str, tmp_path: Path
) -> None:
    reviewers, submissions = _synthetic_venue(400, 100)
    with (
        live_server(database_url, tmp_path, job_workers=1, affinity_top_n=100) as server,
        server.client() as client,
    ):
        base = f"/venues/cancel-{time.monotonic_ns()}"
        assert client.post("/venues", json={"id": base.rsplit("/", 1)[1]}).status_code == 201
        client.post(f"{base}/reviewers", json=reviewers).raise_for_status()
        client.post(f"{base}/submissions", json=submissions).raise_for_status()
        job = client.post(f"{base}/affinity/jobs", json={"config": {"method": "tfidf"}}).json()
        assert _wait(client, f"{base}/jobs/{job['id']}", FINAL, 120)["state"] == "succeeded"

        watch = HealthWatch(server.url)
        with watch.watching():
            # max-min fairness on 400 papers x 100 reviewers: minutes of HiGHS if let run
            solve = client.post(
                f"{base}/assignments",
                json={
                    "reviewers_per_paper": 3,
                    "max_load": 12,
                    "fairness_keep": 1.0,
                    "solver": "ilp",
                },
            ).json()
            solving = _wait(client, f"{base}/jobs/{solve['id']}", {"running"}, 60)
            assert solving["state"] == "running", solving
            time.sleep(3)  # into the model building and the solve
            assert client.get(f"{base}/jobs/{solve['id']}").json()["state"] == "running"
            ended, took = _cancel_and_time(client, base, solve["id"])
            assert ended["state"] == "cancelled" and took < CANCEL_DEADLINE, (took, ended)
            assert client.get(f"{base}/assignments").json()["total"] == 0

            # an embedding job (loads a sentence-transformers model) cancelled mid-way
            embed = client.post(
                f"{base}/affinity/jobs", json={"config": {"method": "embedding"}}
            ).json()
            assert _wait(client, f"{base}/jobs/{embed['id']}", {"running"}, 60)["state"] == (
                "running"
            )
            time.sleep(1.5)
            ended, took = _cancel_and_time(client, base, embed["id"])
            assert ended["state"] == "cancelled" and took < CANCEL_DEADLINE, (took, ended)

            # the only worker is free again: the next job runs and succeeds
            quick = client.post(
                f"{base}/assignments", json={"reviewers_per_paper": 1, "max_load": 4}
            ).json()
            done = _wait(client, f"{base}/jobs/{quick['id']}", FINAL, 120)
            assert done["state"] == "succeeded", done
        assert watch.worst < 1.0, sorted(watch.latencies)[-5:]
