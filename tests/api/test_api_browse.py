"""The edge browser and the statistics of a run (docs/page-api.md)."""

from __future__ import annotations

from typing import Any

import pytest
from api_helpers import load_venue
from conftest import Api

PARAMS = {"reviewers_per_paper": 1, "max_load": 2, "solver": "flow"}
REVIEWERS = ["Grace_Graph1", "Victor_Vision1", "Rita_Reinforce1", "Lena_Language1"]


def _ok(response: Any) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def _venue(api: Api) -> tuple[str, str, str, int]:
    venue, chair, viewer = api.new_venue()
    load_venue(api, venue, chair)
    bids = (
        b"paper_id,reviewer_id,bid\nP1,Lena_Language1,Not Willing\nP1,Grace_Graph1,Very High\n"
        b"P2,Victor_Vision1,High\nP4,Lena_Language1,High\n"
    )
    assert (
        api.call(
            "POST", f"/venues/{venue}/bids/upload", chair, files={"file": ("b.csv", bids)}
        ).status_code
        == 200
    )
    job = api.call("POST", f"/venues/{venue}/assignments", chair, json=PARAMS).json()
    assert job["state"] == "succeeded", job
    return venue, chair, viewer, int(job["result"]["assignment_id"])


def test_a_papers_edges_list_assigned_then_candidates_with_marks(api: Api) -> None:
    venue, chair, viewer, run = _venue(api)
    base = f"/venues/{venue}/assignments/{run}"
    pairs = _ok(api.call("GET", f"{base}/pairs", chair))["items"]
    holder = next(p["reviewer_id"] for p in pairs if p["paper_id"] == "P3")
    edges = _ok(api.call("GET", f"{base}/papers/P3/edges", chair))
    assert edges["paper"] == {
        "id": "P3",
        "title": "Offline policy learning",
        "demand": 1,
        "assigned": 1,
    }
    items = edges["items"]
    assert edges["total"] == len(items) >= 2
    assert items[0]["assigned"] is True and items[0]["reviewer_id"] == holder
    assert all(not i["assigned"] for i in items[1:])
    scores = [i["score"] for i in items[1:]]
    assert scores == sorted(scores, reverse=True)
    rita = next(i for i in items if i["reviewer_id"] == "Rita_Reinforce1")
    assert rita["conflict"] and "author" in rita["conflict"][0]
    assert rita["can_add"] is False and rita["reviewer_name"] == "Rita Reinforce"
    assert rita["explanation_url"] == f"/venues/{venue}/affinity/pairs/P3/Rita_Reinforce1"
    assert _ok(api.call("GET", rita["explanation_url"], chair))["score"] == pytest.approx(
        rita["score"]
    )
    # the paper is full: no candidate can be added without a swap
    assert not any(i["can_add"] for i in items)
    lena = next(
        i
        for i in _ok(api.call("GET", f"{base}/papers/P1/edges", chair))["items"]
        if i["reviewer_id"] == "Lena_Language1"
    )
    assert lena["bid"] == "Not Willing" and lena["conflict"] == ["bid: bid Not Willing"]
    only = _ok(
        api.call(
            "GET",
            f"{base}/papers/P3/edges",
            chair,
            params={"filter": "candidates", "limit": 1, "offset": 1},
        )
    )
    assert only["total"] == len(items) - 1 and len(only["items"]) == 1
    assert only["items"][0]["reviewer_id"] == items[2]["reviewer_id"]
    # viewers: drafts are invisible; on the live run, marks are null
    assert api.call("GET", f"{base}/papers/P3/edges", viewer).status_code == 404
    assert _ok(api.call("POST", f"{base}/deploy", chair, json={"assignment_id": run, "version": 1}))
    seen = _ok(api.call("GET", f"{base}/papers/P1/edges", viewer))["items"]
    assert all(i["bid"] is None and i["conflict"] is None and i["can_add"] is None for i in seen)
    assert all(i["forbidden"] is None for i in seen) and seen[0]["score"] is not None
    assert api.call("GET", f"{base}/papers/nope/edges", chair).json()["code"] == "not_found"


def test_a_reviewers_edges_and_loads(api: Api) -> None:
    venue, chair, _viewer, run = _venue(api)
    base = f"/venues/{venue}/assignments/{run}"
    pairs = _ok(api.call("GET", f"{base}/pairs", chair))["items"]
    reviewer = pairs[0]["reviewer_id"]
    load = sum(1 for p in pairs if p["reviewer_id"] == reviewer)
    edges = _ok(api.call("GET", f"{base}/reviewers/{reviewer}/edges", chair))
    assert edges["reviewer"]["id"] == reviewer and edges["reviewer"]["load"] == load
    assert edges["reviewer"]["max_load"] == 2
    assigned = [i for i in edges["items"] if i["assigned"]]
    assert len(assigned) == load and edges["items"][: len(assigned)] == assigned
    assert all(i["reviewer_load"] == load and i["paper_title"] for i in edges["items"])


def test_papers_below_demand_reviewers_by_load_histogram_and_bids(api: Api) -> None:
    venue, chair, viewer, run = _venue(api)
    base = f"/venues/{venue}/assignments/{run}"
    pairs = _ok(api.call("GET", f"{base}/pairs", chair))["items"]
    holder = next(p["reviewer_id"] for p in pairs if p["paper_id"] == "P2")
    edit = api.call(
        "POST",
        f"{base}/edits",
        chair,
        json={"action": "remove", "paper_id": "P2", "reviewer_id": holder},
    )
    assert edit.status_code == 200, edit.text
    below = _ok(api.call("GET", f"{base}/papers", chair, params={"below_demand": True}))
    assert below["total"] == 1
    assert below["items"][0] == {
        "paper_id": "P2",
        "paper_title": "Image segmentation with convolutional decoders",
        "demand": 1,
        "assigned": 0,
        "missing": 1,
        "min_score": None,
        "mean_score": None,
    }
    everything = _ok(
        api.call("GET", f"{base}/papers", chair, params={"sort": "missing", "descending": True})
    )
    assert everything["total"] == 4 and everything["items"][0]["paper_id"] == "P2"
    titles = _ok(api.call("GET", f"{base}/papers", chair, params={"sort": "title"}))["items"]
    assert [t["paper_title"] for t in titles] == sorted(t["paper_title"] for t in titles)

    assert _ok(
        api.call("PUT", f"/venues/{venue}/reviewer-max-loads/{holder}", chair, json={"max_load": 3})
    )
    loads = _ok(
        api.call("GET", f"{base}/reviewers", chair, params={"sort": "load", "descending": True})
    )
    assert loads["total"] == 4
    values = [r["load"] for r in loads["items"]]
    assert values == sorted(values, reverse=True) and sum(values) == len(pairs) - 1
    mine = next(r for r in loads["items"] if r["reviewer_id"] == holder)
    assert mine["stored_max_load"] == 3 and mine["max_load"] == 3
    assert mine["slack"] == 3 - mine["load"]
    idle = _ok(api.call("GET", f"{base}/reviewers", chair, params={"filter": "unassigned"}))
    assert all(r["load"] == 0 for r in idle["items"])
    assert idle["total"] == sum(1 for v in values if v == 0)

    histogram = _ok(api.call("GET", f"{base}/histogram", chair, params={"bins": 5}))
    assert histogram["count"] == len(pairs) - 1 and sum(histogram["counts"]) == histogram["count"]
    assert len(histogram["edges"]) == 6

    overview = _ok(api.call("GET", f"/venues/{venue}/bids/overview", chair))
    assert overview["total"] == 4 and overview["papers"] == 3 and overview["reviewers"] == 3
    assert {b["label"]: b["count"] for b in overview["by_label"]} == {
        "Very High": 1,
        "High": 2,
        "Not Willing": 1,
    }
    assert overview["by_label"][0]["label"] == "Very High"
    by_bid = _ok(api.call("GET", f"{base}/bids", chair))
    assigned_bids = {
        (p["paper_id"], p["reviewer_id"])
        for p in _ok(api.call("GET", f"{base}/pairs", chair))["items"]
    } & {("P1", "Grace_Graph1"), ("P2", "Victor_Vision1"), ("P4", "Lena_Language1")}
    assert sum(b["assigned"] for b in by_bid["by_label"]) == len(assigned_bids)
    assert by_bid["pairs"] == len(pairs) - 1 and by_bid["no_bid"] == by_bid["pairs"] - len(
        assigned_bids
    )
    for path in (f"/venues/{venue}/bids/overview", f"{base}/bids"):
        assert api.call("GET", path, viewer).status_code == 403


def test_browse_alternates_and_edits_agree_on_what_can_be_added(api: Api) -> None:
    """One rule decides whether a pair can be added: the edge browser's ``can_add``, the
    alternates of a paper and an edit's preview give the same answer for every candidate."""
    venue, chair, _viewer, run = _venue(api)
    base = f"/venues/{venue}/assignments/{run}"
    pairs = _ok(api.call("GET", f"{base}/pairs", chair))["items"]
    holder = next(p["reviewer_id"] for p in pairs if p["paper_id"] == "P1")
    # P1 loses its reviewer (room for one more), and a chair forbids one candidate
    removed = {"action": "remove", "paper_id": "P1", "reviewer_id": holder}
    _ok(api.call("POST", f"{base}/edits", chair, json=removed))
    forbidden = next(r for r in REVIEWERS if r not in (holder, "Lena_Language1"))
    forbid = {"action": "forbid", "paper_id": "P1", "reviewer_id": forbidden, "version": 2}
    _ok(api.call("POST", f"{base}/edits", chair, json=forbid))
    version = _ok(api.call("GET", base, chair))["version"]
    edges = _ok(api.call("GET", f"{base}/papers/P1/edges", chair))["items"]
    candidates = [e for e in edges if not e["assigned"]]
    assert {e["reviewer_id"]: e["can_add"] for e in candidates}[forbidden] is False
    assert any(e["can_add"] for e in candidates) and not all(e["can_add"] for e in candidates)
    lena = next(e for e in candidates if e["reviewer_id"] == "Lena_Language1")
    assert lena["can_add"] is False  # her Not Willing bid
    for edge in candidates:
        preview = _ok(
            api.call(
                "POST",
                f"{base}/edits/preview",
                chair,
                json={
                    "action": "assign",
                    "paper_id": "P1",
                    "reviewer_id": edge["reviewer_id"],
                    "version": version,
                },
            )
        )
        # a chair's forbid is lifted by an explicit addition: the only obstacle that does
        lifted = edge["forbidden"] and edge["reviewer_load"] < edge["reviewer_max_load"]
        assert preview["allowed"] is (edge["can_add"] or lifted), (edge, preview)
    paper = _ok(api.call("GET", f"{base}/papers/P1", chair, params={"alternates": 10}))
    assert {a["reviewer_id"] for a in paper["alternates"]} == {
        e["reviewer_id"] for e in candidates if e["can_add"]
    }
