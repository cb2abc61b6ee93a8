"""The persons' own page and the chairs' People tab in Chromium: a reviewer signs in with
their own token, bids on their candidates and declines a paper; an area chair sees the
reviewers of their papers; a chair opens and closes bidding and turns the declines into a
re-assignment draft. The venue is prepared through the API (four reviewers, two area
chairs, four papers, each pool's affinities, the area-chair and reviewer runs published)."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from .e2e_support import LiveServer, api_get, deploy, new_venue_id, screenshot, solve_run, wait_job
from .page_actions import assert_console_clean, dialog, expect, open_tab, run_select, sign_in

pytestmark = pytest.mark.e2e


def _person(pid: str, name: str, affiliation: str, title: str, abstract: str) -> dict[str, Any]:
    return {
        "id": pid,
        "name": name,
        "affiliation": affiliation,
        "publications": [{"title": title, "abstract": abstract, "year": 2024}],
    }


REVIEWERS = [
    _person("~Grace_Graph1", "Grace Graph", "Graph U", "Graph networks", "graph neural networks"),
    _person("~Victor_Vision1", "Victor Vision", "Vision I", "Segmentation", "image segmentation"),
    _person("~Rita_Reinforce1", "Rita Reinforce", "Agents L", "Policies", "reinforcement learning"),
    _person("~Lena_Language1", "Lena Language", "Lang C", "Translation", "language translation"),
]
AREA_CHAIRS = [
    _person("~Alan_Chair1", "Alan Chair", "Chairs A", "Graphs and images", "graph image networks"),
    _person("~Bea_Chair1", "Bea Chair", "Chairs B", "Agents and text", "reinforcement language"),
]
PAPERS = [
    {"id": "P1", "title": "Graph neural networks for molecules", "abstract": "graph networks"},
    {"id": "P2", "title": "Image segmentation decoders", "abstract": "image segmentation"},
    {"id": "P3", "title": "Offline reinforcement learning", "abstract": "reinforcement policies"},
    {"id": "P4", "title": "Language translation models", "abstract": "language translation"},
]


def _levels(server: LiveServer) -> tuple[str, int, int]:
    """A venue with reviewers and area chairs, both runs published; returns (venue id, the
    live reviewer run, the live area-chair run)."""
    venue = new_venue_id("persons")
    with server.client() as client:
        assert client.post("/venues", json={"id": venue, "name": venue}).status_code == 201
        base = f"/venues/{venue}"
        for pool, people in (("reviewers", REVIEWERS), ("area_chairs", AREA_CHAIRS)):
            response = client.post(f"{base}/reviewers", params={"pool": pool}, json=people)
            assert response.status_code == 200, response.text
        assert client.post(f"{base}/submissions", json=PAPERS).status_code == 200
        for pool in ("reviewers", "area_chairs"):
            job = client.post(
                f"{base}/affinity/jobs", json={"config": {"method": "tfidf"}, "pool": pool}
            ).json()
            wait_job(client, venue, job)
    chairs = solve_run(
        server, venue, {"pool": "area_chairs", "reviewers_per_paper": 1, "max_load": 2}
    )
    deploy(server, venue, chairs)
    reviewers = solve_run(server, venue, {"reviewers_per_paper": 2, "max_load": 2})
    deploy(server, venue, reviewers)
    return venue, reviewers, chairs


def _token(server: LiveServer, venue: str, role: str, person: str) -> str:
    with server.client() as client:
        response = client.post(
            f"/venues/{venue}/tokens", json={"name": person, "role": role, "person_id": person}
        )
        assert response.status_code == 201, response.text
        return str(response.json()["token"])


def _bidding(server: LiveServer, venue: str, value: bool) -> None:
    with server.client() as client:
        assert client.patch(f"/venues/{venue}", json={"bidding_open": value}).status_code == 200


def _pairs(server: LiveServer, venue: str, run: int) -> set[tuple[str, str]]:
    items = api_get(server, f"/venues/{venue}/assignments/{run}/pairs", limit=100)["items"]
    return {(p["paper_id"], p["reviewer_id"]) for p in items}


def test_a_reviewer_bids_on_candidates_and_declines_a_paper(
    page: Any, live_server: LiveServer, console_errors: list[str]
) -> None:
    venue, live, _chairs = _levels(live_server)
    _bidding(live_server, venue, True)
    token = _token(live_server, venue, "reviewer", "Lena_Language1")
    sign_in(page, token)
    expect(page.get_by_role("heading", name=re.compile("Lena Language"))).to_be_visible()
    expect(page.get_by_test_id("person-role")).to_contain_text("Reviewer")
    expect(page.get_by_test_id("bidding-state")).to_contain_text("Bidding is open")
    # the console (other people's data) is nowhere on the page
    expect(page.locator("#console-view")).to_be_hidden()

    candidates = page.get_by_test_id("my-candidates")
    translation = candidates.get_by_role("row", name=re.compile("Language translation models"))
    expect(translation).to_be_visible()
    translation.get_by_label(re.compile("Your bid on")).select_option("Very High")
    expect(page.get_by_role("status")).to_contain_text("Bid Very High")
    graphs = candidates.get_by_role("row", name=re.compile("Graph neural networks"))
    graphs.get_by_label(re.compile("Your bid on")).select_option("Not Willing")
    expect(page.get_by_role("status")).to_contain_text("Bid Not Willing")
    with live_server.client() as client:
        pair = client.get(f"/venues/{venue}/affinity/pairs/P4/Lena_Language1").json()
        assert pair["bid"] == "Very High"
        conflicts = client.get(
            f"/venues/{venue}/conflicts", params={"reviewer_id": "Lena_Language1"}
        ).json()["items"]
        assert ("P1", "bid") in {(c["paper_id"], c["source"]) for c in conflicts}

    # "Why?" explains her own score with her own publications
    translation.get_by_role("button", name=re.compile("Why do I score")).click()
    explain = dialog(page, "Why this score")
    expect(explain).to_contain_text("Translation")
    explain.get_by_role("button", name="Close").click()

    mine = page.get_by_test_id("my-papers")
    assigned = sorted(p for p, r in _pairs(live_server, venue, live) if r == "Lena_Language1")
    assert assigned
    row = mine.get_by_role("row", name=re.compile(re.escape(assigned[0])))
    row.get_by_role("button", name=re.compile("^Decline")).click()
    asked = dialog(page, re.compile("^Decline"))
    asked.get_by_label("Reason").fill("I co-wrote a related paper")
    asked.get_by_role("button", name="Decline paper").click()
    expect(mine.get_by_test_id("declined")).to_contain_text("I co-wrote a related paper")
    declines = api_get(live_server, f"/venues/{venue}/declines")["items"]
    assert [(d["paper_id"], d["person_id"]) for d in declines] == [(assigned[0], "Lena_Language1")]
    screenshot(page, "19-person-page")

    # once the chairs close bidding the bids stay, and cannot be changed
    _bidding(live_server, venue, False)
    page.reload()
    expect(page.get_by_test_id("bidding-state")).to_contain_text("Bidding is closed")
    expect(
        page.get_by_test_id("my-candidates").get_by_label(re.compile("Your bid on")).first
    ).to_be_disabled()
    assert_console_clean(console_errors)


def test_an_area_chair_sees_the_reviewers_of_their_papers(
    page: Any, live_server: LiveServer, console_errors: list[str]
) -> None:
    venue, live, chairs = _levels(live_server)
    chaired = sorted(p for p, r in _pairs(live_server, venue, chairs) if r == "Alan_Chair1")
    assert chaired
    sign_in(page, _token(live_server, venue, "area_chair", "Alan_Chair1"))
    expect(page.get_by_test_id("person-role")).to_contain_text("Area chair")
    mine = page.get_by_test_id("my-papers")
    expect(mine.get_by_role("columnheader", name="Reviewers")).to_be_visible()
    names = {r["id"].lstrip("~"): r["name"] for r in REVIEWERS}
    reviewers = _pairs(live_server, venue, live)
    for paper in chaired:
        row = mine.get_by_role("row", name=re.compile(re.escape(paper)))
        for paper_id, reviewer in reviewers:
            if paper_id == paper:
                expect(row).to_contain_text(names[reviewer])
    assert_console_clean(console_errors)


def test_a_chair_opens_bidding_and_turns_declines_into_a_reassignment(
    page: Any, live_server: LiveServer, console_errors: list[str]
) -> None:
    venue, live, _chairs = _levels(live_server)
    person = sorted(r for _p, r in _pairs(live_server, venue, live))[0]
    paper = sorted(p for p, r in _pairs(live_server, venue, live) if r == person)[0]
    token = _token(live_server, venue, "reviewer", person)
    declined = httpx.post(
        f"{live_server.url}/venues/{venue}/me/papers/{paper}/decline",
        headers={"Authorization": f"Bearer {token}"},
        json={"reason": "on leave"},
    )
    assert declined.status_code == 200, declined.text

    chair = live_server.token("chair", venue, f"chair@{venue}")
    sign_in(page, chair)
    open_tab(page, "People")
    expect(page.get_by_test_id("declines")).to_contain_text("on leave")
    expect(page.get_by_test_id("bidding-status")).to_have_text("Bidding is closed.")
    page.get_by_role("button", name="Open bidding").click()
    expect(page.get_by_test_id("bidding-status")).to_have_text("Bidding is open.")
    assert api_get(live_server, f"/venues/{venue}")["bidding_open"] is True
    page.get_by_role("button", name="Close bidding").click()
    expect(page.get_by_test_id("bidding-status")).to_have_text("Bidding is closed.")
    assert api_get(live_server, f"/venues/{venue}")["bidding_open"] is False

    expect(page.get_by_test_id("coverage-persons")).to_be_visible()
    screenshot(page, "20-people-tab")
    page.get_by_role("button", name="Turn open declines into a re-assignment draft").click()
    expect(page.get_by_role("tab", name="Assignment")).to_have_attribute("aria-selected", "true")
    runs = api_get(live_server, f"/venues/{venue}/assignments", pool="reviewers")["items"]
    draft = max(r["id"] for r in runs)
    assert draft != live
    expect(run_select(page)).to_have_value(str(draft))
    assert (paper, person) not in _pairs(live_server, venue, draft)
    settled = api_get(live_server, f"/venues/{venue}/declines")["items"][0]
    assert (settled["state"], settled["reassignment_id"]) == ("reassigned", draft)
    # a re-assignment job the page followed; its result names the draft and the decline
    job = api_get(live_server, f"/venues/{venue}/jobs", kind="reassignment")["items"][0]
    assert (job["state"], job["result"]["assignment_id"]) == ("succeeded", draft)
    assert job["result"]["declines"] == [settled["id"]]

    # the pool selector shows the area chairs' runs
    page.get_by_label("Pool").select_option("area_chairs")
    expect(run_select(page).locator("option:checked")).to_contain_text("#1")
    assert_console_clean(console_errors)
