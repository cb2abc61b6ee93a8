"""A record's lifecycle through HTTP on SQLite and PostgreSQL: list and filter, edit,
withdraw and restore (with their effect on solves, drafts and the live run), delete."""

from __future__ import annotations

from typing import Any

from api_helpers import REVIEWERS, SUBMISSIONS, load_venue, publish, solve
from conftest import Api

PARAMS = {"reviewers_per_paper": 1, "max_load": 2, "solver": "flow"}


def _pairs(api: Api, venue: str, chair: str, run: int) -> set[tuple[str, str]]:
    items = api.call(
        "GET", f"/venues/{venue}/assignments/{run}/pairs", chair, params={"limit": 1000}
    ).json()["items"]
    return {(p["paper_id"], p["reviewer_id"]) for p in items}


def _pair_rows(api: Api, venue: str, chair: str, run: int) -> list[dict[str, Any]]:
    response = api.call(
        "GET", f"/venues/{venue}/assignments/{run}/pairs", chair, params={"limit": 1000}
    )
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


def _audit(api: Api, venue: str, chair: str) -> list[dict[str, Any]]:
    response = api.call("GET", f"/venues/{venue}/audit", chair, params={"limit": 200})
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


def test_lists_page_and_filter_by_text_and_status_and_flag_empty_profiles(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    bare = {"id": "~Nora_Nopubs1", "name": "Nora Nopubs", "publications": []}
    assert api.call("POST", f"/venues/{venue}/reviewers", chair, json=[*REVIEWERS, bare]).is_success
    assert api.call("POST", f"/venues/{venue}/submissions", chair, json=SUBMISSIONS).is_success
    path = f"/venues/{venue}/reviewers"
    page = api.call("GET", path, viewer, params={"limit": 2, "offset": 1}).json()
    assert page["total"] == 5 and len(page["items"]) == 2
    found = api.call("GET", path, chair, params={"q": "vision"}).json()
    assert [r["id"] for r in found["items"]] == ["Victor_Vision1"]
    assert found["items"][0]["status"] == "active"
    assert found["items"][0]["no_publications"] is False
    nora = api.call("GET", path, chair, params={"q": "NORA"}).json()["items"]
    assert [(r["id"], r["no_publications"]) for r in nora] == [("Nora_Nopubs1", True)]
    papers = api.call(
        "GET", f"/venues/{venue}/submissions", chair, params={"q": "segmentation"}
    ).json()
    assert [p["id"] for p in papers["items"]] == ["P2"]
    by_id = api.call("GET", f"/venues/{venue}/submissions", chair, params={"q": "p3"}).json()
    assert [p["id"] for p in by_id["items"]] == ["P3"]
    assert api.call(
        "POST", f"/venues/{venue}/submissions/P2/withdraw", chair, json={"reason": "desk reject"}
    ).is_success
    withdrawn = api.call(
        "GET", f"/venues/{venue}/submissions", chair, params={"status": "withdrawn"}
    ).json()
    assert [(p["id"], p["status"]) for p in withdrawn["items"]] == [("P2", "withdrawn")]
    active = api.call("GET", f"/venues/{venue}/submissions", chair, params={"status": "active"})
    assert active.json()["total"] == 3
    bad = api.call("GET", path, chair, params={"status": "gone"})
    assert bad.status_code == 422


def test_edit_changes_fields_and_search_keys_audited_and_refuses_bad_input(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    assert api.call("POST", f"/venues/{venue}/reviewers", chair, json=REVIEWERS).is_success
    assert api.call("POST", f"/venues/{venue}/submissions", chair, json=SUBMISSIONS).is_success
    path = f"/venues/{venue}/reviewers/~Grace_Graph1"
    assert api.call("PATCH", path, viewer, json={"name": "G"}).status_code == 403
    response = api.call("PATCH", path, chair, json={"name": "Grace Hopper", "affiliation": "Navy"})
    assert response.status_code == 200, response.text
    assert (response.json()["name"], response.json()["affiliation"]) == ("Grace Hopper", "Navy")
    found = api.call("GET", f"/venues/{venue}/reviewers", chair, params={"q": "hopper"}).json()
    assert [r["id"] for r in found["items"]] == ["Grace_Graph1"]
    paper = api.call("PATCH", f"/venues/{venue}/submissions/P1", chair, json={"title": "Molecules"})
    assert paper.status_code == 200 and paper.json()["title"] == "Molecules"
    entries = [e for e in _audit(api, venue, chair) if e["action"].endswith(".edit")]
    assert {e["action"] for e in entries} == {"reviewer.edit", "submission.edit"}
    edit = next(e for e in entries if e["action"] == "reviewer.edit")
    assert edit["summary"] == "edited reviewer Grace_Graph1 (Grace Hopper): affiliation, name"
    assert edit["detail"]["fields"] == ["affiliation", "name"]
    assert edit["detail"]["before"]["name"] == "Grace Graph"
    # a field of the other kind, an empty title, a control character, an unknown id
    assert api.call("PATCH", path, chair, json={"title": "x"}).status_code == 422
    empty = api.call("PATCH", f"/venues/{venue}/submissions/P1", chair, json={"title": ""})
    assert empty.status_code == 422
    assert api.call("PATCH", path, chair, json={"name": "a\x00b"}).status_code == 422
    assert api.call("PATCH", path, chair, json={"email": "nobody"}).status_code == 422
    missing = api.call("PATCH", f"/venues/{venue}/submissions/P9", chair, json={"title": "x"})
    assert missing.status_code == 404


def test_a_withdrawn_paper_leaves_the_demand_and_its_draft_pairs_break_it(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    draft = solve(api, venue, chair, **PARAMS)
    assert any(p == "P3" for p, _ in _pairs(api, venue, chair, draft))
    response = api.call("POST", f"/venues/{venue}/submissions/P3/withdraw", chair, json={})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "withdrawn" and body["reassign"] == []
    assert [(r["assignment_id"], r["state"]) for r in body["runs"]] == [(draft, "draft")]
    assert all(p == "P3" for p, _ in body["runs"][0]["pairs"])
    # the draft's pairs of it now break its demand (0): named by the checks
    check = api.call("GET", f"/venues/{venue}/assignments/{draft}/check", chair).json()
    marked = {
        (p["paper_id"], p["withdrawn"])
        for p in _pair_rows(api, venue, chair, draft)
        if p["withdrawn"]
    }
    assert marked and marked == {("P3", "paper")}
    named = [v for v in check["violations"] if v.get("paper_id") == "P3"]
    assert named and named[0]["detail"].startswith("withdrawn: its pairs are to be removed")
    # a new solve assigns it nobody; restored, it is assigned again
    again = solve(api, venue, chair, **PARAMS)
    assert not any(p == "P3" for p, _ in _pairs(api, venue, chair, again))
    restored = api.call("POST", f"/venues/{venue}/submissions/P3/restore", chair)
    assert restored.status_code == 200 and restored.json()["status"] == "active"
    third = solve(api, venue, chair, **PARAMS)
    assert any(p == "P3" for p, _ in _pairs(api, venue, chair, third))
    actions = [e["action"] for e in _audit(api, venue, chair)]
    assert "submission.withdraw" in actions and "submission.restore" in actions


def test_withdrawing_a_live_reviewer_offers_the_emergency_reassignment(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    live = solve(api, venue, chair, **PARAMS)
    publish(api, venue, chair, live)
    gone = sorted({r for _, r in _pairs(api, venue, chair, live)})[0]
    response = api.call(
        "POST", f"/venues/{venue}/reviewers/{gone}/withdraw", chair, json={"reason": "ill"}
    )
    assert response.status_code == 200, response.text
    offers = response.json()["reassign"]
    assert [o["assignment_id"] for o in offers] == [live]
    assert offers[0]["body"]["withdraw"] == [gone]
    redo = api.call(
        "POST", f"/venues/{venue}/assignments/live/reassign", chair, json=offers[0]["body"]
    )
    assert redo.status_code == 202 and redo.json()["state"] == "succeeded", redo.text
    draft = redo.json()["result"]["assignment_id"]
    assert not any(r == gone for _, r in _pairs(api, venue, chair, draft))
    listed = api.call("GET", f"/venues/{venue}/reviewers", chair, params={"status": "withdrawn"})
    assert [r["id"] for r in listed.json()["items"]] == [gone]
    # a withdrawn paper of the live run: the offer removes its live pairs
    paper = next(p for p, _ in sorted(_pairs(api, venue, chair, live)))
    offer = api.call("POST", f"/venues/{venue}/submissions/{paper}/withdraw", chair, json={})
    removal = offer.json()["reassign"][0]["body"]["remove"]
    assert {(r["paper_id"], r["reviewer_id"]) for r in removal} == {
        pair for pair in _pairs(api, venue, chair, live) if pair[0] == paper
    }


def test_delete_only_what_nothing_refers_to(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    load_venue(api, venue, chair)
    extra = {"id": "~Nora_Nopubs1", "name": "Nora Nopubs", "publications": []}
    assert api.call("POST", f"/venues/{venue}/reviewers", chair, json=[extra]).is_success
    path = f"/venues/{venue}/reviewers/~Nora_Nopubs1"
    assert api.call("DELETE", path, viewer).status_code == 403
    assert api.call("DELETE", path, chair).status_code == 204
    assert api.call("GET", path, chair).status_code == 404
    assert api.call("DELETE", path, chair).status_code == 404
    run = solve(api, venue, chair, **PARAMS)
    paper, reviewer = sorted(_pairs(api, venue, chair, run))[0]
    refused = api.call("DELETE", f"/venues/{venue}/submissions/{paper}", chair)
    assert refused.status_code == 409, refused.text
    assert refused.json()["code"] == "record_has_history"
    assert "withdraw it instead" in refused.json()["detail"]
    assert refused.json()["references"]["assignment pairs"] >= 1
    assert api.call("DELETE", f"/venues/{venue}/reviewers/{reviewer}", chair).status_code == 409
    assert api.call("GET", f"/venues/{venue}/submissions/{paper}", chair).status_code == 200
    actions = [e["action"] for e in _audit(api, venue, chair)]
    assert actions.count("reviewer.delete") == 1
