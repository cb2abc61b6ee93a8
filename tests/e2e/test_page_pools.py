"""A person's pools in the Data tab's records, in Chromium: the persons of the area chairs'
pool show their pools, and a chair takes Grace Graph (a reviewer too) out of the area chairs
with the row's button and its confirm dialog: refused while the live area-chair run assigns
her (the dialog says why and stays open), done once a live run without her is deployed, the
draft that still holds her pairs named. Alan Chair, an area chair only, has no such button.
The venue is prepared through the API."""

from __future__ import annotations

import re
from typing import Any

import pytest

from .e2e_support import LiveServer, api_get, deploy, new_venue_id, solve_run, wait_job
from .page_actions import assert_console_clean, dialog, expect, sign_in

pytestmark = pytest.mark.e2e


def _person(pid: str, name: str, title: str, abstract: str) -> dict[str, Any]:
    return {
        "id": pid,
        "name": name,
        "affiliation": "Somewhere",
        "publications": [{"title": title, "abstract": abstract, "year": 2024}],
    }


GRACE = _person("~Grace_Graph1", "Grace Graph", "Graph networks", "graph neural networks")
REVIEWERS = [
    GRACE,
    _person("~Victor_Vision1", "Victor Vision", "Segmentation", "image segmentation"),
]
ALAN = _person("~Alan_Chair1", "Alan Chair", "Graphs and images", "graph image networks")
PAPERS = [
    {"id": "P1", "title": "Graph neural networks for molecules", "abstract": "graph networks"},
    {"id": "P2", "title": "Image segmentation decoders", "abstract": "image segmentation"},
    {"id": "P3", "title": "Offline reinforcement learning", "abstract": "reinforcement policies"},
    {"id": "P4", "title": "Language translation models", "abstract": "language translation"},
]
AC_SOLVE = {"pool": "area_chairs", "reviewers_per_paper": 1, "solver": "flow"}


def _venue(server: LiveServer) -> tuple[str, int]:
    """Reviewers Grace and Victor; area chairs Alan and Grace, two papers each in the live
    area-chair run. Returns the venue and that run."""
    venue = new_venue_id("pools")
    with server.client() as client:
        assert client.post("/venues", json={"id": venue, "name": venue}).status_code == 201
        base = f"/venues/{venue}"
        for pool, people in (("reviewers", REVIEWERS), ("area_chairs", [ALAN, GRACE])):
            response = client.post(f"{base}/reviewers", params={"pool": pool}, json=people)
            assert response.status_code == 200, response.text
        assert client.post(f"{base}/submissions", json=PAPERS).status_code == 200
        job = client.post(
            f"{base}/affinity/jobs", json={"config": {"method": "tfidf"}, "pool": "area_chairs"}
        ).json()
        wait_job(client, venue, job)
    live = solve_run(server, venue, {**AC_SOLVE, "max_load": 2})
    deploy(server, venue, live)
    return venue, live


def _grace_pairs(server: LiveServer, venue: str, run: int) -> int:
    pairs = api_get(server, f"/venues/{venue}/assignments/{run}/pairs", limit=100)["items"]
    return sum(1 for p in pairs if p["reviewer_id"] == "Grace_Graph1")


def _free_grace(server: LiveServer, venue: str) -> int:
    """Deploy an area-chair run without Grace (her quota 0 while it is solved), then solve a
    draft that gives her two papers again; returns the draft."""
    quota = f"/venues/{venue}/reviewer-max-loads/Grace_Graph1"
    with server.client() as client:
        response = client.put(quota, params={"pool": "area_chairs"}, json={"max_load": 0})
        assert response.status_code == 200, response.text
    without = solve_run(server, venue, {**AC_SOLVE, "max_load": 4})
    assert _grace_pairs(server, venue, without) == 0
    deploy(server, venue, without)
    with server.client() as client:
        assert client.delete(quota, params={"pool": "area_chairs"}).status_code == 200
    draft = solve_run(server, venue, {**AC_SOLVE, "max_load": 2})
    assert _grace_pairs(server, venue, draft) == 2
    return draft


def test_a_chair_takes_a_person_out_of_one_pool_from_the_records(
    page: Any, live_server: LiveServer, console_errors: list[str]
) -> None:
    venue, live = _venue(live_server)
    assert _grace_pairs(live_server, venue, live) == 2
    sign_in(page, live_server.token("chair", venue, f"chair@{venue}"))
    page.get_by_test_id("pool-select").select_option("area_chairs")
    records = page.get_by_test_id("records")
    records.get_by_label("Records to list").select_option("reviewers")
    table = records.get_by_role("table", name="Persons")
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(2)
    grace = rows.filter(has_text="Grace_Graph1")
    alan = rows.filter(has_text="Alan_Chair1")
    expect(grace.get_by_test_id("record-pools")).to_have_text(
        re.compile("reviewers\\s*area chairs")
    )
    expect(alan.get_by_test_id("record-pools")).to_have_text("area chairs")
    expect(alan.get_by_test_id("leave-pool")).to_have_count(0)

    # the live area-chair run assigns her: the dialog says so and stays open
    grace.get_by_role("button", name="Remove Grace_Graph1 from the area chairs").click()
    leave = dialog(page, "Remove Grace_Graph1 from the area chairs")
    expect(leave).to_contain_text("stays a person of the venue, in: reviewers")
    leave.get_by_role("button", name="Remove from pool").click()
    expect(leave).to_contain_text("Grace_Graph1 (2 pairs)")
    expect(leave).to_contain_text("re-assign it without them first")
    leave.get_by_role("button", name="Cancel").click()
    expect(leave).to_have_count(0)
    assert api_get(live_server, f"/venues/{venue}/reviewers/Grace_Graph1")["pools"] == [
        "reviewers",
        "area_chairs",
    ]

    # a live run without her: she leaves; the draft holding her pairs is named
    draft = _free_grace(live_server, venue)
    number = api_get(live_server, f"/venues/{venue}/assignments/{draft}")["number"]
    grace.get_by_role("button", name="Remove Grace_Graph1 from the area chairs").click()
    leave = dialog(page, "Remove Grace_Graph1 from the area chairs")
    leave.get_by_role("button", name="Remove from pool").click()
    expect(leave).to_have_count(0)
    expect(page.get_by_test_id("toast").last).to_contain_text(
        "Grace_Graph1 removed from the area chairs"
    )
    expect(records.get_by_test_id("leave-pool-drafts")).to_contain_text(
        f"draft #{number} (2 pairs)"
    )
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Alan_Chair1")
    person = api_get(live_server, f"/venues/{venue}/reviewers/Grace_Graph1")
    assert (person["status"], person["pools"]) == ("active", ["reviewers"])
    entry = api_get(live_server, f"/venues/{venue}/audit")["items"][0]
    assert (entry["action"], entry["detail"]["pool"]) == ("reviewer.leave_pool", "area_chairs")

    # among the reviewers she shows one pool, and no button (her only pool: withdraw instead)
    page.get_by_test_id("pool-select").select_option("reviewers")
    expect(rows).to_have_count(2)
    grace = rows.filter(has_text="Grace_Graph1")
    expect(grace.get_by_test_id("record-pools")).to_have_text("reviewers")
    expect(grace.get_by_test_id("leave-pool")).to_have_count(0)
    assert_console_clean(console_errors, "member_assigned_live", "409")
