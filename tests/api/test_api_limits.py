"""Per-paper demand and per-reviewer max loads as stored venue resources, used by every
solve."""

from __future__ import annotations

import json
from typing import Any

from api_helpers import load_venue
from conftest import Api

PARAMS = {"reviewers_per_paper": 1, "max_load": 3, "solver": "flow"}


def _upload(api: Api, venue: str, token: str, kind: str, content: bytes) -> Any:
    return api.call(
        "POST",
        f"/venues/{venue}/{kind}/upload",
        token,
        files={"file": (f"{kind}.csv", content, "text/csv")},
    )


def _listed(api: Api, venue: str, token: str, kind: str) -> dict[str, int]:
    items = api.call("GET", f"/venues/{venue}/{kind}", token).json()["items"]
    key, value = ("paper_id", "demand") if kind == "paper-demands" else ("reviewer_id", "max_load")
    return {item[key]: item[value] for item in items}


def _solve(api: Api, venue: str, chair: str, **params: Any) -> dict[str, Any]:
    job = api.call("POST", f"/venues/{venue}/assignments", chair, json={**PARAMS, **params})
    assert job.status_code == 202, job.text
    assert job.json()["state"] == "succeeded", job.json()
    run = job.json()["result"]["assignment_id"]
    pairs = api.call(
        "GET", f"/venues/{venue}/assignments/{run}/pairs", chair, params={"limit": 1000}
    ).json()["items"]
    return {"id": run, "pairs": {(p["paper_id"], p["reviewer_id"]) for p in pairs}}


def _per(pairs: set[tuple[str, str]], index: int) -> dict[str, int]:
    counts: dict[str, int] = {}
    for pair in pairs:
        counts[pair[index]] = counts.get(pair[index], 0) + 1
    return counts


def test_stored_demand_is_uploaded_listed_replaced_and_used_by_every_solve(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    load_venue(api, venue, chair)
    uploaded = _upload(api, venue, chair, "paper-demands", b"paper_id,demand\nP1,2\nP2,0\n")
    assert uploaded.status_code == 200, uploaded.text
    assert uploaded.json()["total"] == 2
    assert _listed(api, venue, chair, "paper-demands") == {"P1": 2, "P2": 0}
    assert api.call("GET", f"/venues/{venue}/paper-demands", viewer).status_code == 403

    run = _solve(api, venue, chair)
    assert _per(run["pairs"], 0) == {"P1": 2, "P3": 1, "P4": 1}
    stats = api.call("GET", f"/venues/{venue}/assignments/{run['id']}/stats", chair).json()
    demands = {p["paper_id"]: p["demand"] for p in stats["papers"]["items"]}
    assert demands == {"P1": 2, "P2": 0, "P3": 1, "P4": 1}
    assert stats["papers_below_demand"] == 0
    paper = api.call("GET", f"/venues/{venue}/assignments/{run['id']}/papers/P1", chair).json()
    assert paper["demand"] == 2
    summary = api.call("GET", f"/venues/{venue}/assignments/{run['id']}", chair).json()["summary"]
    assert summary["limits"]["demand"] == {"P1": 2, "P2": 0}
    assert summary["limits"]["stored_demands"] == 2

    # replacing the table: P2 takes the default again
    assert _upload(api, venue, chair, "paper-demands", b"P4,2\n").status_code == 200
    assert _listed(api, venue, chair, "paper-demands") == {"P4": 2}
    put = api.call("PUT", f"/venues/{venue}/paper-demands/P3", chair, json={"demand": 0})
    assert put.json() == {"paper_id": "P3", "paper_title": "Offline policy learning", "demand": 0}
    assert _per(_solve(api, venue, chair)["pairs"], 0) == {"P1": 1, "P2": 1, "P4": 2}
    deleted = api.call("DELETE", f"/venues/{venue}/paper-demands/P3", chair)
    assert deleted.json() == {"deleted": 1}
    assert api.call("DELETE", f"/venues/{venue}/paper-demands/P3", chair).status_code == 404
    assert api.call("DELETE", f"/venues/{venue}/paper-demands", chair).json() == {"deleted": 1}
    assert _per(_solve(api, venue, chair)["pairs"], 0) == {"P1": 1, "P2": 1, "P3": 1, "P4": 1}
    actions = [
        e["action"] for e in api.call("GET", f"/venues/{venue}/audit", chair).json()["items"]
    ]
    for action in ("paper_demands.upload", "paper_demands.set", "paper_demands.delete"):
        assert action in actions


def test_stored_max_loads_cap_every_solve_and_win_over_a_solve_map(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    caps = b"reviewer_id,max\n~Grace_Graph1,0\nVictor_Vision1,1\n"
    assert _upload(api, venue, chair, "reviewer-max-loads", caps).status_code == 200
    assert _listed(api, venue, chair, "reviewer-max-loads") == {
        "Grace_Graph1": 0,
        "Victor_Vision1": 1,
    }
    loads = _per(_solve(api, venue, chair)["pairs"], 1)
    assert "Grace_Graph1" not in loads and loads.get("Victor_Vision1", 0) <= 1
    # a solve's own map covers the reviewers the table does not; a contradiction is refused
    loads = _per(_solve(api, venue, chair, custom_max_load={"Lena_Language1": 0})["pairs"], 1)
    assert "Lena_Language1" not in loads and "Grace_Graph1" not in loads
    refused = api.call(
        "POST",
        f"/venues/{venue}/assignments",
        chair,
        json={**PARAMS, "custom_max_load": {"Grace_Graph1": 2}},
    )
    assert refused.status_code == 422
    assert "the venue stores max load 0 for 'Grace_Graph1'" in refused.json()["detail"]
    # the stored caps count in the capacity check before any job starts
    tight = api.call(
        "POST",
        f"/venues/{venue}/assignments",
        chair,
        json={**PARAMS, "max_load": 1, "reviewers_per_paper": 1},
    )
    assert tight.status_code == 409 and "can take at most 3" in tight.json()["detail"]


def test_bad_rows_and_unknown_ids_are_skipped_by_line_and_refused_when_none_is_valid(
    api: Api,
) -> None:
    """HotCRP style: the valid rows replace the stored ones, each bad row is listed by its
    line and counted as the audit entry counts it; a file without a valid row changes
    nothing (422 naming every row)."""
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    assert _upload(api, venue, chair, "paper-demands", b"P1,2\n").status_code == 200
    bad = _upload(api, venue, chair, "paper-demands", b"paper_id,demand\nP1,two\nP2,-1\n,1\nP9,1\n")
    assert bad.status_code == 422
    problems = {(p["line"], p["field"]) for p in bad.json()["problems"]}
    assert problems == {(2, "demand"), (3, "demand"), (4, "paper_id"), (5, "paper_id")}
    header_only = _upload(api, venue, chair, "reviewer-max-loads", b"reviewer_id,quota\nnobody,1\n")
    assert header_only.status_code == 422
    assert _listed(api, venue, chair, "paper-demands") == {"P1": 2}
    assert _listed(api, venue, chair, "reviewer-max-loads") == {}

    mixed = _upload(
        api,
        venue,
        chair,
        "paper-demands",
        b"paper_id,demand\nP1,two\nP2,-1\nP3,99999999999999999999\n,1\nP4,1\nP4,2\nP9,1\n",
    )
    assert mixed.status_code == 200, mixed.text
    body = mixed.json()
    assert [(p["line"], p["field"]) for p in body["skipped"]] == [
        (2, "demand"),
        (3, "demand"),
        (4, "demand"),
        (5, "paper_id"),
        (7, "demand"),
        (8, "paper_id"),
    ]
    assert body["skipped"][-1]["message"] == "unknown paper id 'P9'"
    assert (body["created"], body["total"], body["skipped_lines"]) == (1, 1, 6)
    assert _listed(api, venue, chair, "paper-demands") == {"P4": 1}
    loads = _upload(
        api, venue, chair, "reviewer-max-loads", b"reviewer_id,quota\nnobody,1\nGrace_Graph1,2\n"
    )
    assert loads.status_code == 200, loads.text
    assert [(p["line"], p["message"]) for p in loads.json()["skipped"]] == [
        (2, "unknown reviewer id 'nobody' in pool reviewers")
    ]
    assert _listed(api, venue, chair, "reviewer-max-loads") == {"Grace_Graph1": 2}
    entries = api.call("GET", f"/venues/{venue}/audit", chair).json()["items"][:2]
    assert [(e["action"], e["detail"]["rows"], e["detail"]["skipped_lines"]) for e in entries] == [
        ("reviewer_max_loads.upload", 1, 1),
        ("paper_demands.upload", 1, 6),
    ]
    assert entries[1]["summary"] == (
        "uploaded 1 paper demands from paper-demands.csv; 6 bad lines skipped"
    )
    for path, body in (
        ("paper-demands/P9", {"demand": 1}),
        ("reviewer-max-loads/nobody", {"max_load": 1}),
    ):
        assert api.call("PUT", f"/venues/{venue}/{path}", chair, json=body).status_code == 404
    for path, body in (
        ("paper-demands/P1", {"demand": -1}),
        ("reviewer-max-loads/Grace_Graph1", {"max_load": 10**12}),
    ):
        assert api.call("PUT", f"/venues/{venue}/{path}", chair, json=body).status_code == 422
    refused = api.call(
        "POST",
        f"/venues/{venue}/assignments",
        chair,
        json={**PARAMS, "demand": {"P9": 1}, "custom_max_load": {"nobody": 1}},
    )
    assert refused.status_code == 422
    assert "paper 'P9' not found" in refused.json()["detail"]
    assert "reviewer 'nobody' not found" in refused.json()["detail"]


def test_with_max_papers_stores_the_file_and_a_refused_solve_stores_nothing(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    path = f"/venues/{venue}/assignments/with-max-papers"
    tight = api.call(
        "POST",
        path,
        chair,
        data={"parameters": json.dumps({"reviewers_per_paper": 2, "max_load": 1})},
        files={"max_papers": ("max.csv", b"Grace_Graph1,0\n", "text/csv")},
    )
    assert tight.status_code == 409
    assert _listed(api, venue, chair, "reviewer-max-loads") == {}
    job = api.call(
        "POST",
        path,
        chair,
        data={"parameters": json.dumps(PARAMS)},
        files={"max_papers": ("max.csv", b"Grace_Graph1,0\n", "text/csv")},
    )
    assert job.status_code == 202 and job.json()["state"] == "succeeded", job.text
    assert _listed(api, venue, chair, "reviewer-max-loads") == {"Grace_Graph1": 0}
    # a plain re-solve keeps the cap: it is the venue's now
    assert "Grace_Graph1" not in _per(_solve(api, venue, chair)["pairs"], 1)


def test_stored_demand_counts_in_the_capacity_check_and_options_are_checked_first(
    api: Api,
) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    body = {**PARAMS, "max_load": 1, "reviewers_per_paper": 1}
    jobs = api.call("GET", f"/venues/{venue}/jobs", chair).json()["total"]
    # 4 papers x 1 fits 4 reviewers x 1; a stored demand of 4 for P1 does not (7 > 4)
    assert _upload(api, venue, chair, "paper-demands", b"P1,4\n").status_code == 200
    tight = api.call("POST", f"/venues/{venue}/assignments", chair, json=body)
    assert tight.status_code == 409, tight.text
    assert "need 7 reviews in total" in tight.json()["detail"]
    assert "can take at most 4" in tight.json()["detail"]
    # an option that cannot act is refused in the service's words, before any job
    refused = api.call(
        "POST",
        f"/venues/{venue}/assignments",
        chair,
        json={**PARAMS, "fairness_keep": 0.5},
    )
    assert refused.status_code == 422, refused.text
    assert refused.json()["detail"].startswith("solver: the min-cost flow solver cannot enforce")
    backend = api.call(
        "POST", f"/venues/{venue}/assignments", chair, json={**PARAMS, "ilp_backend": "cbc"}
    )
    assert backend.status_code == 422 and backend.json()["detail"].startswith("ilp_backend:")
    # so is a time limit on an exact flow, which could not stop it
    limited = api.call(
        "POST", f"/venues/{venue}/assignments", chair, json={**PARAMS, "time_limit": 30}
    )
    assert limited.status_code == 422 and limited.json()["detail"].startswith("time_limit:")
    assert api.call("GET", f"/venues/{venue}/jobs", chair).json()["total"] == jobs
