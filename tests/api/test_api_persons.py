"""Pools, the levels of assignment, person tokens and each person's own view, through the
HTTP API on both databases (the contract of issue #24 and its bad inputs).

One venue per backend: reviewers, area chairs (with Grace Graph, who is a reviewer too)
and senior area chairs in their pools, each pool's affinities; a reviewer draft solved
before any area chair was live (``early``), the live area-chair run, the live reviewer run
(solved with the cross-level rule), person tokens made by the chair.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from api_helpers import load_levels, load_venue, person_token, publish, solve
from conftest import Api, make_settings
from fastapi.testclient import TestClient
from levels_world import Levels

from api.app import create_app


@pytest.fixture(scope="module")
def levels(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Levels]:
    app = create_app(make_settings(database_url, tmp_path_factory.mktemp("levels")))
    with TestClient(app) as client:
        yield Levels(Api(client, app.state.database))


# ---- pools -----------------------------------------------------------------------------------


def test_uploads_take_the_pool_and_persons_list_theirs(levels: Levels) -> None:
    chairs = levels.ok("GET", "/reviewers", levels.chair, params={"pool": "area_chairs"})
    assert {r["id"] for r in chairs["items"]} == {"Alan_Chair1", "Bea_Chair1", "Grace_Graph1"}
    grace = levels.ok("GET", "/reviewers/Grace_Graph1", levels.chair)
    assert grace["pools"] == ["reviewers", "area_chairs"]
    venue = levels.ok("GET", "", levels.chair)
    assert venue["pools"] == {"reviewers": 4, "area_chairs": 3, "senior_area_chairs": 2}
    assert venue["live_assignments"] == {"reviewers": levels.live, "area_chairs": levels.ac_run}
    assert venue["live_assignment_id"] == levels.live


def test_an_unknown_pool_is_refused_naming_it_and_nothing_is_written(levels: Levels) -> None:
    before = levels.ok("GET", "", levels.chair)["reviewers"]
    person = [{"id": "~New_Person1", "name": "New Person", "publications": []}]
    for method, path, kwargs in (
        ("POST", "/reviewers", {"params": {"pool": "chairs"}, "json": person}),
        ("GET", "/reviewers", {"params": {"pool": "chairs"}}),
        ("GET", "/affinity", {"params": {"pool": "chairs"}}),
        ("GET", "/assignments/live", {"params": {"pool": "chairs"}}),
        ("GET", "/reviewer-max-loads", {"params": {"pool": "chairs"}}),
        ("POST", "/affinity/jobs", {"json": {"pool": "chairs"}}),
        ("POST", "/assignments", {"json": {"pool": "chairs"}}),
    ):
        response = levels.call(method, path, levels.chair, **kwargs)
        assert response.status_code == 422, (path, response.text)
        assert "chairs" in response.text and "pool" in response.text, response.text
    assert levels.ok("GET", "", levels.chair)["reviewers"] == before


def test_affinities_runs_and_live_runs_are_per_pool(levels: Levels) -> None:
    run = levels.ok("GET", "/affinity", levels.chair, params={"pool": "area_chairs"})
    assert (run["pool"], run["n_reviewers"]) == ("area_chairs", 3)
    assert levels.ok("GET", "/affinity", levels.chair)["n_reviewers"] == 4
    ac_runs = levels.ok("GET", "/assignments", levels.chair, params={"pool": "area_chairs"})
    assert [r["id"] for r in ac_runs["items"]] == [levels.ac_run]
    assert ac_runs["items"][0]["pool"] == "area_chairs"
    live = levels.ok("GET", "/assignments/live", levels.viewer, params={"pool": "area_chairs"})
    assert live["id"] == levels.ac_run
    assert levels.ok("GET", "/assignments/live", levels.viewer)["id"] == levels.live
    # both are live at once; viewers see both
    listed = {r["id"] for r in levels.ok("GET", "/assignments", levels.viewer)["items"]}
    assert listed == {levels.live, levels.ac_run}
    # one pair per paper in the area-chair run, persons of that pool only
    chairs = levels.pairs(levels.ac_run)
    assert len(chairs) == 4
    assert {r for _, r in chairs} <= {"Alan_Chair1", "Bea_Chair1", "Grace_Graph1"}


def test_limits_are_per_pool(levels: Levels) -> None:
    put = levels.call(
        "PUT",
        "/reviewer-max-loads/Alan_Chair1",
        levels.chair,
        params={"pool": "area_chairs"},
        json={"max_load": 2},
    )
    assert put.status_code == 200, put.text
    try:
        assert levels.ok("GET", "/reviewer-max-loads", levels.chair)["items"] == []
        stored = levels.ok(
            "GET", "/reviewer-max-loads", levels.chair, params={"pool": "area_chairs"}
        )
        assert [i["reviewer_id"] for i in stored["items"]] == ["Alan_Chair1"]
        # Alan is no reviewer: the reviewers pool has no such person
        refused = levels.call(
            "PUT", "/reviewer-max-loads/Alan_Chair1", levels.chair, json={"max_load": 1}
        )
        assert refused.status_code == 404 and "Alan_Chair1" in refused.text
        senior_demand = levels.call(
            "PUT",
            "/paper-demands/P1",
            levels.chair,
            params={"pool": "senior_area_chairs"},
            json={"demand": 1},
        )
        assert senior_demand.status_code == 422, senior_demand.text
    finally:
        levels.call(
            "DELETE",
            "/reviewer-max-loads/Alan_Chair1",
            levels.chair,
            params={"pool": "area_chairs"},
        )


# ---- levels ----------------------------------------------------------------------------------


def test_nobody_reviews_a_paper_they_chair(levels: Levels) -> None:
    chairs = levels.pairs(levels.ac_run)
    early = levels.pairs(levels.early)
    live = levels.pairs(levels.live)
    # Grace chairs P1 (her field); as a reviewer she would review it, and no longer does
    assert ("P1", "Grace_Graph1") in chairs and ("P1", "Grace_Graph1") in early
    assert not (live & chairs)
    summary = levels.ok("GET", f"/assignments/{levels.live}", levels.chair)["summary"]
    rule = summary["cross_level"]["chairs_do_not_review"]
    assert (rule["other_pool"], rule["other_run"]) == ("area_chairs", levels.ac_run)
    assert summary["cross_level"]["excluded_pairs"] >= 1
    # the draft solved before breaks the rule now: its check and publishing say so
    check = levels.ok("GET", f"/assignments/{levels.early}/check", levels.chair)
    found = [v for v in check["violations"] if v["paper_id"] == "P1" and v["kind"] == "conflict"]
    assert any("area chair of this paper" in v["detail"] for v in found), check
    refused = levels.call(
        "POST",
        f"/assignments/{levels.early}/deploy",
        levels.chair,
        json={"assignment_id": levels.early, "version": 1},
    )
    assert refused.status_code == 409 and "constraint_violations" in refused.text


def test_reviewers_not_from_the_area_chairs_institution(levels: Levels) -> None:
    run = solve(
        levels.api,
        levels.venue,
        levels.chair,
        reviewers_per_paper=1,
        max_load=3,
        distinct_institutions=True,
    )
    affiliation = {
        r["id"]: r["affiliation"]
        for r in levels.ok("GET", "/reviewers", levels.chair, params={"limit": 100})["items"]
    }
    chair_of = dict(levels.pairs(levels.ac_run))
    for paper, reviewer in levels.pairs(run):
        assert affiliation[reviewer] != affiliation[chair_of[paper]], (paper, reviewer)
    summary = levels.ok("GET", f"/assignments/{run}", levels.chair)["summary"]
    assert summary["cross_level"]["distinct_institutions"]["pairs"] >= 1
    assert levels.ok("GET", f"/assignments/{run}", levels.chair)["parameters"][
        "distinct_institutions"
    ]
    wrong_pool = levels.call(
        "POST",
        "/assignments",
        levels.chair,
        json={"pool": "area_chairs", "distinct_institutions": True},
    )
    assert wrong_pool.status_code == 422 and "distinct_institutions" in wrong_pool.text


def test_senior_area_chairs_are_matched_to_area_chairs(levels: Levels) -> None:
    run = solve(
        levels.api,
        levels.venue,
        levels.chair,
        pool="senior_area_chairs",
        reviewers_per_paper=1,
        max_load=3,
    )
    pairs = levels.pairs(run)
    area_chairs = {r for _, r in levels.pairs(levels.ac_run)}
    assert {ac for ac, _ in pairs} == area_chairs
    assert {sac for _, sac in pairs} <= {"Sam_Senior1", "Sue_Senior1"}
    summary = levels.ok("GET", f"/assignments/{run}", levels.chair)["summary"]
    assert summary["cross_level"]["senior_area_chairs"]["area_chair_run"] == levels.ac_run
    publish(levels.api, levels.venue, levels.chair, run)
    senior_of = dict(pairs)
    chairs = levels.ok("GET", "/chairs", levels.viewer)["items"]
    chair_of = dict(levels.pairs(levels.ac_run))
    for item in chairs:
        ac = chair_of[item["paper_id"]]
        assert [c["reviewer_id"] for c in item["area_chairs"]] == [ac]
        assert [c["reviewer_id"] for c in item["senior_area_chairs"]] == [senior_of[ac]]
    alan_papers = levels.ok("GET", "/me/papers", levels.tokens["alan"])["items"]
    for paper in alan_papers:
        assert [s["reviewer_id"] for s in paper["senior_area_chairs"]] == [senior_of["Alan_Chair1"]]


def test_senior_area_chairs_need_a_live_area_chair_run(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    load_levels(api, venue, chair)
    response = api.call(
        "POST", f"/venues/{venue}/assignments", chair, json={"pool": "senior_area_chairs"}
    )
    assert response.status_code == 409, response.text
    assert response.json()["code"] == "no_live_area_chair_run"


# ---- person tokens ---------------------------------------------------------------------------


def _token_count(levels: Levels) -> int:
    return int(levels.ok("GET", "/tokens", levels.chair)["total"])


def test_a_chair_creates_person_tokens_and_bad_ones_are_refused(levels: Levels) -> None:
    before = _token_count(levels)
    for token, body, status, words in (
        (levels.chair, {"role": "reviewer", "person_id": "Nobody1"}, 422, "Nobody1"),
        (levels.chair, {"role": "area_chair", "person_id": "Lena_Language1"}, 422, "area_chairs"),
        (levels.chair, {"role": "reviewer"}, 422, "person"),
        (levels.chair, {"role": "viewer"}, 403, "admin"),
        (levels.chair, {"role": "chair", "person_id": "Lena_Language1"}, 403, "admin"),
        (levels.viewer, {"role": "reviewer", "person_id": "Lena_Language1"}, 403, "viewer"),
        (levels.tokens["lena"], {"role": "reviewer", "person_id": "Lena_Language1"}, 403, "me"),
    ):
        response = levels.call("POST", "/tokens", token, json={"name": "probe", **body})
        assert response.status_code == status, (body, response.text)
        assert words in response.text, (body, response.text)
    assert _token_count(levels) == before
    listed = levels.ok("GET", "/tokens", levels.chair)["items"]
    assert {t["role"] for t in listed} == {"reviewer", "area_chair"}
    assert {t["person_id"] for t in listed} >= {"Lena_Language1", "Alan_Chair1"}
    assert all("token" not in t for t in listed)
    # an admin makes a person token too, and revokes it
    made = levels.call(
        "POST",
        "/tokens",
        levels.api.admin,
        json={"name": "by admin", "role": "reviewer", "person_id": "Grace_Graph1"},
    )
    assert made.status_code == 201 and made.json()["person_id"] == "Grace_Graph1"
    token_id = made.json()["id"]
    revoked = levels.call("POST", f"/tokens/{token_id}/revoke", levels.chair)
    assert revoked.status_code == 200 and revoked.json()["state"] == "revoked"
    assert levels.call("GET", "/me", made.json()["token"]).status_code == 401


def test_venue_me_names_the_person_role_and_pools(levels: Levels) -> None:
    me = levels.ok("GET", "/me", levels.tokens["lena"])
    assert (me["person_id"], me["role"], me["pools"]) == (
        "Lena_Language1",
        "reviewer",
        ["reviewers"],
    )
    alan = levels.ok("GET", "/me", levels.tokens["alan"])
    assert (alan["person_id"], alan["role"], alan["pools"]) == (
        "Alan_Chair1",
        "area_chair",
        ["area_chairs"],
    )
    chair = levels.ok("GET", "/me", levels.chair)
    assert (chair["person_id"], chair["role"], chair["pools"]) == (None, "chair", [])
    who = levels.api.call("GET", "/me", levels.tokens["lena"]).json()
    assert (who["role"], who["person_id"]) == ("reviewer", "Lena_Language1")
    for path in ("/me/papers", "/me/candidates", "/me/pairs/P1"):
        assert levels.call("GET", path, levels.chair).status_code == 403
        assert levels.call("GET", path, levels.viewer).status_code == 403


# ---- a person's own view ---------------------------------------------------------------------


def test_my_papers_are_my_pairs_in_the_live_run(levels: Levels) -> None:
    live = levels.pairs(levels.live)
    for name, person in (("lena", "Lena_Language1"), ("victor", "Victor_Vision1")):
        mine = levels.ok("GET", "/me/papers", levels.tokens[name])
        assert mine["assignment_id"] == levels.live
        assert {p["paper_id"] for p in mine["items"]} == {p for p, r in live if r == person}
        assert mine["total"] == len(mine["items"])
        assert all(p["reviewers"] is None for p in mine["items"])


def test_an_area_chair_sees_the_reviewers_of_their_papers(levels: Levels) -> None:
    live = levels.pairs(levels.live)
    chaired = {p for p, r in levels.pairs(levels.ac_run) if r == "Alan_Chair1"}
    mine = levels.ok("GET", "/me/papers", levels.tokens["alan"])
    assert {p["paper_id"] for p in mine["items"]} == chaired and chaired
    for paper in mine["items"]:
        expected = sorted(r for p, r in live if p == paper["paper_id"])
        assert [r["reviewer_id"] for r in paper["reviewers"]] == expected
        assert all(r["reviewer_name"] for r in paper["reviewers"])


def test_my_candidates_best_first_paged_without_conflicts(levels: Levels) -> None:
    rita = levels.tokens["rita"]
    everything = levels.ok("GET", "/me/candidates", rita, params={"limit": 100})
    scores = [c["score"] for c in everything["items"]]
    assert scores == sorted(scores, reverse=True)
    # Rita wrote P3: a detected conflict, left out without a word
    assert "P3" not in {c["paper_id"] for c in everything["items"]}
    assert "P3" not in str(everything)
    first = levels.ok("GET", "/me/candidates", rita, params={"limit": 1})
    second = levels.ok("GET", "/me/candidates", rita, params={"limit": 1, "offset": 1})
    assert first["total"] == everything["total"] == len(everything["items"])
    assert [first["items"][0], second["items"][0]] == everything["items"][:2]
    past = levels.ok("GET", "/me/candidates", rita, params={"offset": 500})
    assert past["items"] == [] and past["total"] == everything["total"]


def test_the_explanation_of_my_own_pair(levels: Levels) -> None:
    lena = levels.tokens["lena"]
    pair = levels.ok("GET", "/me/pairs/P4", lena)
    assert (pair["reviewer_id"], pair["paper_id"]) == ("Lena_Language1", "P4")
    assert pair["explanation"]["publications"][0]["title"] == "Transformers for machine translation"
    assert pair["conflict"] is None


def test_bids_while_bidding_is_open(levels: Levels) -> None:
    lena = levels.tokens["lena"]
    levels.set_bidding(False)
    closed = levels.call("PUT", "/me/bids/P4", lena, json={"bid": "High"})
    assert closed.status_code == 409 and closed.json()["code"] == "bidding_closed"
    levels.set_bidding(True)
    try:
        for bid, label in (("High", "High"), (" very  LOW ", "Very Low"), (0.25, "0.25")):
            answer = levels.ok("PUT", "/me/bids/P4", lena, json={"bid": bid})
            assert answer["bid"] == label
        candidates = levels.ok("GET", "/me/candidates", lena, params={"limit": 100})["items"]
        assert next(c for c in candidates if c["paper_id"] == "P4")["bid"] == "0.25"
        # Not Willing excludes the pair (a conflict of source bid) and stays changeable
        levels.ok("PUT", "/me/bids/P2", lena, json={"bid": "Not Willing"})
        conflicts = levels.ok(
            "GET", "/conflicts", levels.chair, params={"reviewer_id": "Lena_Language1"}
        )["items"]
        assert {"P2"} <= {c["paper_id"] for c in conflicts if c["source"] == "bid"}
        levels.ok("PUT", "/me/bids/P2", lena, json={"bid": "Neutral"})
        conflicts = levels.ok(
            "GET", "/conflicts", levels.chair, params={"reviewer_id": "Lena_Language1"}
        )["items"]
        assert "P2" not in {c["paper_id"] for c in conflicts if c["source"] == "bid"}
        # the chair sees the person's bid; an upload of the chairs' bids keeps it
        assert levels.ok("GET", "/affinity/pairs/P4/Lena_Language1", levels.chair)["bid"] == "0.25"
        upload = b"paper_id,reviewer_id,bid\nP4,Lena_Language1,Very High\nP1,Victor_Vision1,Low\n"
        stored = levels.call(
            "POST",
            "/bids/upload",
            levels.chair,
            files={"file": ("bids.csv", upload, "text/csv")},
        )
        assert stored.status_code == 200 and stored.json()["created"] == 1, stored.text
        assert levels.ok("GET", "/affinity/pairs/P4/Lena_Language1", levels.chair)["bid"] == "0.25"
        removed = levels.ok("DELETE", "/me/bids/P2", lena)
        assert removed["bid"] is None
    finally:
        levels.set_bidding(False)
    closed = levels.call("PUT", "/me/bids/P4", lena, json={"bid": "Low"})
    assert closed.status_code == 409
    candidates = levels.ok("GET", "/me/candidates", lena, params={"limit": 100})["items"]
    assert next(c for c in candidates if c["paper_id"] == "P4")["bid"] == "0.25"


def test_bad_bids_are_refused_naming_them_and_nothing_is_written(levels: Levels) -> None:
    rita = levels.tokens["rita"]
    levels.set_bidding(True)
    try:
        unknown = levels.call("PUT", "/me/bids/P99", rita, json={"bid": "High"})
        conflicted = levels.call("PUT", "/me/bids/P3", rita, json={"bid": "High"})
        assert unknown.status_code == conflicted.status_code == 404
        assert "P99" in unknown.text and "P3" in conflicted.text
        assert unknown.text.replace("P99", "P3") == conflicted.text
        for bid in ("Maybe", "nan", "inf", True, None, ""):
            response = levels.call("PUT", "/me/bids/P1", rita, json={"bid": bid})
            assert response.status_code == 422, (bid, response.text)
            assert "bid" in response.text
        extra = levels.call("PUT", "/me/bids/P1", rita, json={"bid": "High", "person": "x"})
        assert extra.status_code == 422
    finally:
        levels.set_bidding(False)
    pairs = levels.ok("GET", "/affinity/pairs/P1/Rita_Reinforce1", levels.chair)
    assert pairs["bid"] is None
    # the chairs' switch: only chairs, and only a boolean
    assert levels.call("PATCH", "", levels.viewer, json={"bidding_open": True}).status_code == 403
    assert levels.call("PATCH", "", rita, json={"bidding_open": True}).status_code == 403
    assert levels.call("PATCH", "", levels.chair, json={"bidding_open": "yes"}).status_code == 422


def test_bid_coverage_for_the_chairs(levels: Levels) -> None:
    victor = levels.tokens["victor"]
    levels.set_bidding(True)
    try:
        levels.ok("PUT", "/me/bids/P2", victor, json={"bid": "Very High"})
        covered = levels.ok(
            "GET", "/bids/coverage/papers", levels.chair, params={"min_positive": 1}
        )
        below = {p["paper_id"]: p["positive_bids"] for p in covered["items"]}
        assert "P2" not in below and set(below.values()) == {0}
        all_below = levels.ok(
            "GET", "/bids/coverage/papers", levels.chair, params={"min_positive": 5}
        )
        assert all_below["total"] == 4
        assert all_below["items"][0]["positive_bids"] <= all_below["items"][-1]["positive_bids"]
        silent = levels.ok("GET", "/bids/coverage/persons", levels.chair)["items"]
        assert "Victor_Vision1" not in {p["person_id"] for p in silent}
        chairs_silent = levels.ok(
            "GET", "/bids/coverage/persons", levels.chair, params={"pool": "area_chairs"}
        )
        assert {p["person_id"] for p in chairs_silent["items"]} >= {"Alan_Chair1", "Bea_Chair1"}
        for path in ("/bids/coverage/papers", "/bids/coverage/persons", "/declines"):
            assert levels.call("GET", path, levels.viewer).status_code == 403
            assert levels.call("GET", path, victor).status_code == 403
    finally:
        levels.ok("DELETE", "/me/bids/P2", victor)
        levels.set_bidding(False)


def test_declines_become_a_reassignment_in_one_action(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    base = f"/venues/{venue}"
    load_venue(api, venue, chair)
    live = solve(api, venue, chair, reviewers_per_paper=1, max_load=2)
    publish(api, venue, chair, live)
    pairs = api.call("GET", f"{base}/assignments/{live}/pairs", chair).json()["items"]
    paper, person = pairs[0]["paper_id"], pairs[0]["reviewer_id"]
    other = next(p["paper_id"] for p in pairs if p["reviewer_id"] != person)
    token = person_token(api, venue, chair, "reviewer", person)

    none_open = api.call("POST", f"{base}/declines/reassign", chair, json={})
    assert none_open.status_code == 422 and none_open.json()["field"] == "pool"
    for target in (other, "P99"):
        refused = api.call(
            "POST", f"{base}/me/papers/{target}/decline", token, json={"reason": "busy"}
        )
        assert refused.status_code == 404 and target in refused.text
    empty = api.call("POST", f"{base}/me/papers/{paper}/decline", token, json={"reason": ""})
    assert empty.status_code == 422
    assert api.call("GET", f"{base}/declines", chair).json()["total"] == 0

    declined = api.call(
        "POST", f"{base}/me/papers/{paper}/decline", token, json={"reason": "on leave"}
    )
    assert declined.status_code == 200 and declined.json()["state"] == "open"
    mine = api.call("GET", f"{base}/me/papers", token).json()["items"]
    assert next(p for p in mine if p["paper_id"] == paper)["decline_reason"] == "on leave"
    listed = api.call("GET", f"{base}/declines", chair).json()["items"]
    assert [(d["paper_id"], d["person_id"], d["reason"]) for d in listed] == [
        (paper, person, "on leave")
    ]
    job = api.call("POST", f"{base}/declines/reassign", chair, json={"pool": "reviewers"})
    # a re-assignment job (inline here), its result naming the draft and the declines
    assert job.status_code == 202, job.text
    assert (job.json()["kind"], job.json()["state"]) == ("reassignment", "succeeded")
    assert job.json()["parameters_summary"] == f"the open declines of live run {live}"
    made = job.json()["result"]
    draft = made["assignment_id"]
    assert made["declines"] == [listed[0]["id"]] and made["derived_from"] == live
    assert (paper, person) in {(r["paper_id"], r["reviewer_id"]) for r in made["removed"]}
    draft_pairs = api.call("GET", f"{base}/assignments/{draft}/pairs", chair).json()["items"]
    assert (paper, person) not in {(p["paper_id"], p["reviewer_id"]) for p in draft_pairs}
    assert any(p["paper_id"] == paper for p in draft_pairs)
    settled = api.call("GET", f"{base}/declines", chair).json()["items"][0]
    assert (settled["state"], settled["reassignment_id"]) == ("reassigned", draft)
    again = api.call("POST", f"{base}/me/papers/{paper}/decline", token, json={"reason": "x"})
    assert again.status_code == 409
    audit = api.call("GET", f"{base}/audit", chair, params={"limit": 100}).json()["items"]
    assert {"decline.create", "declines.reassign"} <= {e["action"] for e in audit}
    assert api.call("POST", f"{base}/declines/reassign", viewer, json={}).status_code == 403
    # settled: refused at once, nothing queued
    assert api.call("POST", f"{base}/declines/reassign", chair, json={}).status_code == 422
    jobs = api.call("GET", f"{base}/jobs", chair, params={"kind": "reassignment"}).json()
    assert jobs["total"] == 1
