"""Who-am-I, pin limits, alternates per paper, custom max papers, affinity before any run."""

from __future__ import annotations

import json
from typing import Any

from api_helpers import load_venue
from conftest import Api

REVIEWER_IDS = ["Grace_Graph1", "Victor_Vision1", "Rita_Reinforce1", "Lena_Language1"]


def _solve(api: Api, venue: str, chair: str, **params: Any) -> int:
    job = api.call(
        "POST", f"/venues/{venue}/assignments", chair, json={"solver": "flow", **params}
    ).json()
    assert job["state"] == "succeeded", job
    return int(job["result"]["assignment_id"])


def _pairs(api: Api, venue: str, token: str, assignment: int) -> set[tuple[str, str]]:
    items = api.call(
        "GET", f"/venues/{venue}/assignments/{assignment}/pairs", token, params={"limit": 1000}
    ).json()["items"]
    return {(p["paper_id"], p["reviewer_id"]) for p in items}


def test_me_names_the_calling_token(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    me = api.call("GET", "/me", api.admin).json()
    assert {k: me[k] for k in ("name", "role", "venue_id", "expires_at")} == {
        "name": "admin",
        "role": "admin",
        "venue_id": None,
        "expires_at": None,
    }
    assert isinstance(me["token_id"], int)
    me = api.call("GET", "/me", chair).json()
    assert {k: me[k] for k in ("name", "role", "venue_id")} == {
        "name": f"chair@{venue}",
        "role": "chair",
        "venue_id": venue,
    }
    assert api.call("GET", "/me", viewer).json()["role"] == "viewer"
    assert api.client.get("/me").status_code == 401


def test_no_affinity_run_yet_is_a_state_not_an_error(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    missing = api.call("GET", f"/venues/{venue}/affinity", chair)
    assert missing.status_code == 200
    assert missing.json()["state"] == "none" and missing.json()["id"] is None
    load_venue(api, venue, chair)
    current = api.call("GET", f"/venues/{venue}/affinity", chair).json()
    assert current["state"] == "current" and current["n_papers"] == 4
    more = [{"id": "P9", "title": "New", "abstract": "late", "authors": []}]
    assert api.call("POST", f"/venues/{venue}/submissions", chair, json=more).status_code == 200
    assert api.call("GET", f"/venues/{venue}/affinity", chair).json()["state"] == "stale"


def test_pin_that_overfills_is_refused_unless_forced(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    draft = _solve(api, venue, chair, reviewers_per_paper=1, max_load=1)
    base = f"/venues/{venue}/assignments/{draft}"
    before = _pairs(api, venue, chair, draft)
    assert len(before) == 4
    reviewer_of_p1 = next(r for p, r in before if p == "P1")
    other = next(r for r in REVIEWER_IDS if r not in (reviewer_of_p1, "Rita_Reinforce1"))
    pair = {"paper_id": "P1", "reviewer_id": other}

    refused = api.call("POST", f"{base}/pin", chair, json=pair)
    assert refused.status_code == 409
    detail = refused.json()["detail"]
    assert f"reviewer {other!r} would review 2 papers, over their max load of 1" in detail
    assert "paper 'P1' would get 2 reviewers, over its demand of 1" in detail
    assert "force=true" in detail
    assert _pairs(api, venue, chair, draft) == before  # nothing changed
    pins = api.call("GET", f"/venues/{venue}/audit", chair).json()["items"]
    assert "assignment.pin" not in [entry["action"] for entry in pins]

    # an already assigned pair overfills nothing
    kept = api.call(
        "POST", f"{base}/pin", chair, json={"paper_id": "P1", "reviewer_id": reviewer_of_p1}
    )
    assert kept.status_code == 200 and kept.json()["pinned"] is True

    forced = api.call("POST", f"{base}/pin", chair, json={**pair, "force": True})
    assert forced.status_code == 200, forced.text
    assert forced.json()["pinned"] is True
    assert _pairs(api, venue, chair, draft) == before | {("P1", other)}
    audit = api.call("GET", f"/venues/{venue}/audit", chair).json()["items"]
    forced_entry = next(e for e in audit if e["detail"].get("reviewer_id") == other)
    assert len(forced_entry["detail"]["overfilled"]) == 2

    # a conflict of interest is refused even with force
    conflict = api.call(
        "POST",
        f"{base}/pin",
        chair,
        json={"paper_id": "P3", "reviewer_id": "Rita_Reinforce1", "force": True},
    )
    assert conflict.status_code == 409 and "conflict of interest" in conflict.json()["detail"]


def test_pin_names_only_the_broken_limit(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    draft = _solve(
        api, venue, chair, reviewers_per_paper=1, max_load=4, custom_max_load={"Lena_Language1": 1}
    )
    pairs = _pairs(api, venue, chair, draft)
    loads = {r: sum(1 for _, x in pairs if x == r) for r in REVIEWER_IDS}
    paper, reviewer = next(
        (p, r)
        for p in ("P1", "P2", "P4")
        for r in REVIEWER_IDS
        if (p, r) not in pairs and r != "Lena_Language1" and loads[r] < 4
    )
    refused = api.call(
        "POST",
        f"/venues/{venue}/assignments/{draft}/pin",
        chair,
        json={"paper_id": paper, "reviewer_id": reviewer},
    )
    assert refused.status_code == 409
    assert "demand of 1" in refused.json()["detail"]
    assert "max load" not in refused.json()["detail"]
    # the custom max load is the reviewer's limit
    lena_paper = next(p for p in ("P1", "P2", "P3", "P4") if (p, "Lena_Language1") not in pairs)
    assert loads["Lena_Language1"] == 1
    refused = api.call(
        "POST",
        f"/venues/{venue}/assignments/{draft}/pin",
        chair,
        json={"paper_id": lena_paper, "reviewer_id": "Lena_Language1"},
    )
    assert refused.status_code == 409
    assert "over their max load of 1" in refused.json()["detail"]


def test_alternates_skip_assigned_conflicted_and_full_reviewers(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    load_venue(api, venue, chair)
    # every reviewer is at max load 1: nobody can take another paper
    full = _solve(api, venue, chair, reviewers_per_paper=1, max_load=1)
    paper = api.call("GET", f"/venues/{venue}/assignments/{full}/papers/P1", chair).json()
    assert paper["demand"] == 1 and len(paper["assigned"]) == 1
    assert paper["assigned"][0]["load"] == 1 and paper["assigned"][0]["max_load"] == 1
    assert paper["alternates"] == []

    draft = _solve(api, venue, chair, reviewers_per_paper=1, max_load=2)
    pairs = _pairs(api, venue, chair, draft)
    loads = {r: sum(1 for _, x in pairs if x == r) for r in REVIEWER_IDS}
    scores = {
        item["reviewer_id"]: item
        for item in api.call(
            "GET", f"/venues/{venue}/papers/P3/reviewers", chair, params={"limit": 10}
        ).json()["items"]
    }
    expected = sorted(
        (
            r
            for r, item in scores.items()
            if ("P3", r) not in pairs and not item["conflict"] and loads[r] < 2
        ),
        key=lambda r: (-scores[r]["score"], r),
    )
    paper = api.call(
        "GET", f"/venues/{venue}/assignments/{draft}/papers/P3", chair, params={"alternates": 10}
    ).json()
    assert [a["reviewer_id"] for a in paper["alternates"]] == expected
    assert "Rita_Reinforce1" not in [a["reviewer_id"] for a in paper["alternates"]]
    assert [a["rank"] for a in paper["alternates"]] == list(range(1, len(expected) + 1))
    assert all(a["load"] < a["max_load"] == 2 for a in paper["alternates"])
    assert {a["reviewer_id"] for a in paper["assigned"]} == {r for p, r in pairs if p == "P3"}
    one = api.call(
        "GET", f"/venues/{venue}/assignments/{draft}/papers/P3", chair, params={"alternates": 1}
    ).json()
    assert one["alternates"] == paper["alternates"][:1]

    # drafts stay invisible to viewers; unknown papers are 404
    assert (
        api.call("GET", f"/venues/{venue}/assignments/{draft}/papers/P3", viewer).status_code == 404
    )
    missing = api.call("GET", f"/venues/{venue}/assignments/{draft}/papers/nope", chair)
    assert missing.status_code == 404 and "nope" in missing.json()["detail"]


def test_custom_max_papers_upload_caps_reviewers(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    path = f"/venues/{venue}/assignments/with-max-papers"
    parameters = {
        "reviewers_per_paper": 1,
        "max_load": 2,
        "solver": "flow",
        "custom_max_load": {"Victor_Vision1": 2, "Lena_Language1": 2},
    }
    caps = b"reviewer_id,max\n~Grace_Graph1,0\nVictor_Vision1,1\n"
    job = api.call(
        "POST",
        path,
        chair,
        data={"parameters": json.dumps(parameters)},
        files={"max_papers": ("max.csv", caps, "text/csv")},
    )
    assert job.status_code == 202, job.text
    assert job.json()["state"] == "succeeded", job.json()
    assignment_id = job.json()["result"]["assignment_id"]
    stored = api.call("GET", f"/venues/{venue}/assignments/{assignment_id}", chair).json()
    # the file is stored as the venue's max loads; its rows override the body's entries for
    # the same reviewers, the body's others stay in the request
    assert stored["parameters"]["custom_max_load"] == {"Lena_Language1": 2}
    assert stored["summary"]["limits"]["custom_max_load"] == {
        "Grace_Graph1": 0,
        "Victor_Vision1": 1,
        "Lena_Language1": 2,
    }
    listed = api.call("GET", f"/venues/{venue}/reviewer-max-loads", chair).json()
    assert {(i["reviewer_id"], i["max_load"]) for i in listed["items"]} == {
        ("Grace_Graph1", 0),
        ("Victor_Vision1", 1),
    }
    pairs = _pairs(api, venue, chair, assignment_id)
    assert not any(r == "Grace_Graph1" for _, r in pairs)
    assert sum(r == "Victor_Vision1" for _, r in pairs) <= 1
    assert len(pairs) == 4

    unknown = api.call(
        "POST",
        path,
        chair,
        files={"max_papers": ("max.csv", b"reviewer_id,max\n~Nobody1,3\n", "text/csv")},
    )
    assert unknown.status_code == 422
    assert unknown.json()["problems"][0]["file"] == "max.csv"
    assert "Nobody1" in unknown.json()["problems"][0]["message"]
    bad_row = api.call(
        "POST",
        path,
        chair,
        files={"max_papers": ("max.csv", b"reviewer_id,max\nGrace_Graph1,many\n", "text/csv")},
    )
    assert bad_row.status_code == 422
    problem = bad_row.json()["problems"][0]
    assert (problem["line"], problem["field"]) == (2, "max")
    bad_json = api.call(
        "POST",
        path,
        chair,
        data={"parameters": "{not json"},
        files={"max_papers": ("max.csv", caps, "text/csv")},
    )
    assert bad_json.status_code == 422 and "parameters" in bad_json.json()["detail"]
    # too little capacity once the caps apply: refused before any job starts
    tight = api.call(
        "POST",
        path,
        chair,
        data={"parameters": json.dumps({"reviewers_per_paper": 1, "max_load": 1})},
        files={"max_papers": ("max.csv", caps, "text/csv")},
    )
    assert tight.status_code == 409 and "infeasible" in tight.json()["detail"]


def test_swap_that_overfills_a_reviewer_is_refused_unless_forced(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    draft = _solve(api, venue, chair, reviewers_per_paper=1, max_load=1)
    base = f"/venues/{venue}/assignments/{draft}"
    before = _pairs(api, venue, chair, draft)
    reviewer_of = dict(before)
    # every reviewer is at their max load of 1: moving P2's reviewer onto P1 overfills them
    swap = {
        "paper_id": "P1",
        "remove_reviewer_id": reviewer_of["P1"],
        "add_reviewer_id": reviewer_of["P2"],
    }
    refused = api.call("POST", f"{base}/swap", chair, json=swap)
    assert refused.status_code == 409
    detail = refused.json()["detail"]
    assert f"reviewer {reviewer_of['P2']!r} would review 2 papers" in detail
    assert "demand" not in detail  # a swap keeps the paper's reviewer count
    assert _pairs(api, venue, chair, draft) == before
    forced = api.call("POST", f"{base}/swap", chair, json={**swap, "force": True})
    assert forced.status_code == 200, forced.text
    assert (("P1", reviewer_of["P2"])) in _pairs(api, venue, chair, draft)
