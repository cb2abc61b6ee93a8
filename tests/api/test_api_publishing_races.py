"""Racing publications (real threads, a real database file or server): every successful
deploy's audit entry names exactly the run that was live just before it, trial after trial,
on SQLite as on PostgreSQL."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from api_helpers import load_venue
from conftest import Api, make_settings
from fastapi.testclient import TestClient

from api.app import create_app

TRIALS = 6
PARAMS = {"reviewers_per_paper": 1, "solver": "flow"}


def _solve(api: Api, venue: str, chair: str, max_load: int) -> int:
    job = api.call(
        "POST", f"/venues/{venue}/assignments", chair, json={**PARAMS, "max_load": max_load}
    ).json()
    assert job["state"] == "succeeded", job
    return int(job["result"]["assignment_id"])


def _deploys_after(api: Api, venue: str, chair: str, after: int) -> list[dict[str, Any]]:
    items = api.call("GET", f"/venues/{venue}/audit", chair, params={"limit": 1000}).json()["items"]
    return [e for e in items if e["id"] > after and e["action"] == "assignment.deploy"]


def _live(api: Api, venue: str, chair: str) -> int:
    live = api.call("GET", f"/venues/{venue}/assignments/live", chair)
    assert live.status_code == 200, live.text
    return int(live.json()["id"])


def test_racing_deploys_audit_the_run_each_one_replaced(database_url: str, tmp_path: Path) -> None:
    app = create_app(make_settings(database_url, tmp_path))
    with TestClient(app) as client:
        api = Api(client, app.state.database)
        venue, chair, _viewer = api.new_venue()
        load_venue(api, venue, chair)
        runs = [_solve(api, venue, chair, max_load) for max_load in (2, 3, 4, 2, 3)]
        first = api.call(
            "POST",
            f"/venues/{venue}/assignments/{runs[0]}/deploy",
            chair,
            json={"assignment_id": runs[0], "version": 1},
        )
        assert first.status_code == 200, first.text
        for trial in range(TRIALS):
            live_before = _live(api, venue, chair)
            contenders = [r for r in runs if r != live_before]
            versions = {
                r: api.call("GET", f"/venues/{venue}/assignments/{r}", chair).json()["version"]
                for r in contenders
            }
            entries = api.call("GET", f"/venues/{venue}/audit", chair, params={"limit": 1}).json()
            last_entry = entries["items"][0]["id"]
            start = threading.Barrier(len(contenders))

            def deploy(
                run: int, start: threading.Barrier = start, versions: dict[int, int] = versions
            ) -> Any:
                start.wait(10)
                return api.call(
                    "POST",
                    f"/venues/{venue}/assignments/{run}/deploy",
                    chair,
                    json={"assignment_id": run, "version": versions[run]},
                )

            with ThreadPoolExecutor(len(contenders)) as pool:
                answers = list(pool.map(deploy, contenders))
            assert all(a.status_code in (200, 409) for a in answers), [a.text for a in answers]
            statuses = [a.status_code for a in answers]
            published = [r for r, s in zip(contenders, statuses, strict=True) if s == 200]
            assert published, [a.text for a in answers]

            # the entries form one chain from the run live before to the run live now
            replaced = {
                e["detail"]["assignment_id"]: e["detail"]["previous_live_id"]
                for e in _deploys_after(api, venue, chair, last_entry)
            }
            assert sorted(replaced) == sorted(published), (trial, replaced, published)
            current = live_before
            while replaced:
                following = [run for run, previous in replaced.items() if previous == current]
                assert len(following) == 1, (trial, current, replaced)
                current = following[0]
                del replaced[current]
            assert current == _live(api, venue, chair), trial
