"""The solve form's live capacity check, the venue's suggested defaults, normal states that
are not errors, the favicon (docs/page-api.md)."""

from __future__ import annotations

from typing import Any

from api_helpers import SUBMISSIONS, load_venue
from conftest import Api


def _ok(response: Any) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def test_capacity_counts_stored_limits_and_names_the_smallest_max_load(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    load_venue(api, venue, chair)
    v = f"/venues/{venue}"
    fits = _ok(api.call("GET", f"{v}/capacity", chair))
    assert fits == {
        "fits": True,
        "papers": 4,
        "reviewers": 4,
        "demand_total": 12,
        "capacity_total": 24,
        "min_load_total": 0,
        "stored_demands": 0,
        "stored_max_loads": 0,
        "shortfall": 0,
        "smallest_max_load": 3,
        "message": None,
    }
    tight = _ok(api.call("GET", f"{v}/capacity", chair, params={"max_load": 2, "min_load": 1}))
    assert (tight["fits"], tight["shortfall"], tight["smallest_max_load"]) == (False, 4, 3)
    assert tight["min_load_total"] == 4 and "12 reviews" in tight["message"]
    # the solve is refused with the same figures
    refused = api.call("POST", f"{v}/assignments", chair, json={"max_load": 2})
    assert refused.status_code == 409 and refused.json()["code"] == "over_capacity"
    assert refused.json()["capacity_total"] == tight["capacity_total"]
    # a reviewer who takes nothing: the other three must carry the load
    assert (
        api.call(
            "PUT", f"{v}/reviewer-max-loads/Lena_Language1", chair, json={"max_load": 0}
        ).status_code
        == 200
    )
    assert api.call("PUT", f"{v}/paper-demands/P4", chair, json={"demand": 1}).status_code == 200
    stored = _ok(api.call("GET", f"{v}/capacity", chair, params={"max_load": 3}))
    assert (stored["demand_total"], stored["capacity_total"]) == (10, 9)
    assert (stored["stored_demands"], stored["stored_max_loads"]) == (1, 1)
    assert stored["smallest_max_load"] == 4
    bad = api.call("GET", f"{v}/capacity", chair, params={"min_load": 3, "max_load": 2})
    assert bad.status_code == 422 and bad.json()["code"] == "validation_error"
    assert api.call("GET", f"{v}/capacity", viewer).status_code == 403


def test_the_venue_suggests_solve_defaults_that_fit(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    load_venue(api, venue, chair)
    v = f"/venues/{venue}"
    venue_out = _ok(api.call("GET", v, chair))
    assert (venue_out["papers"], venue_out["reviewers"]) == (4, 4)
    assert venue_out["solve_defaults"] == {
        "reviewers_per_paper": 3,
        "min_load": 0,
        "max_load": 6,
        "fits": True,
    }
    more = [{**SUBMISSIONS[i % 4], "id": f"X{i}", "title": f"Extra {i}"} for i in range(5)]
    assert api.call("POST", f"{v}/submissions", chair, json=more).status_code == 200
    # 9 papers x 3 = 27 reviews, 4 reviewers x 6 = 24: the smallest max load that fits is 7
    suggested = _ok(api.call("GET", v, chair))["solve_defaults"]
    assert suggested == {"reviewers_per_paper": 3, "min_load": 0, "max_load": 7, "fits": True}
    listed = _ok(api.call("GET", "/venues", chair))["items"][0]
    assert listed["solve_defaults"] == suggested and listed["papers"] == 9
    assert _ok(api.call("GET", v, viewer))["solve_defaults"] is None


def test_no_scores_yet_is_an_empty_state_and_the_favicon_is_served(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    v = f"/venues/{venue}"
    assert (
        api.call(
            "POST", f"{v}/reviewers", chair, json=[{"id": "~Ada_Lovelace1", "publications": []}]
        ).status_code
        == 200
    )
    assert api.call("POST", f"{v}/submissions", chair, json=SUBMISSIONS[:1]).status_code == 200
    state = _ok(api.call("GET", f"{v}/affinity", viewer))
    assert state["state"] == "none" and state["statistics"] is None
    for path in (f"{v}/papers/P1/reviewers", f"{v}/reviewers/Ada_Lovelace1/papers"):
        assert _ok(api.call("GET", path, chair)) == {
            "items": [],
            "total": 0,
            "limit": 10,
            "offset": 0,
        }
    assert api.call("GET", f"{v}/papers/nope/reviewers", chair).json()["code"] == "not_found"
    icon = api.client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/x-icon"
    assert icon.content[:4] == b"\x00\x00\x01\x00"


def test_solving_on_stale_scores_says_recompute_affinity(api: Api) -> None:
    from reviewer_recommender.storage.repository import start_job

    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    v = f"/venues/{venue}"
    late = [{"id": "P9", "title": "A late paper", "abstract": "graphs", "authors": []}]
    assert api.call("POST", f"{v}/submissions", chair, json=late).status_code == 200
    params = {"reviewers_per_paper": 1, "max_load": 3, "solver": "flow"}
    refused = api.call("POST", f"{v}/assignments", chair, json=params)
    assert refused.status_code == 409, refused.text
    body = refused.json()
    assert body["code"] == "stale_affinities" and body["papers"] == 1
    assert "recompute affinity" in body["detail"] and "P9" in body["detail"]
    assert "candidate reviewers" not in body["detail"]
    # a paper that needs nobody does not block the solve
    assert api.call("PUT", f"{v}/paper-demands/P9", chair, json={"demand": 0}).status_code == 200
    job = api.call("POST", f"{v}/assignments", chair, json=params).json()
    assert job["state"] == "succeeded", job
    # the job itself says so too (a paper uploaded between the check and the solve)
    assert api.call("DELETE", f"{v}/paper-demands/P9", chair).status_code == 200
    run_id = api.call("GET", f"{v}/affinity", chair).json()["id"]
    with api.database.session() as session:
        failed = start_job(
            api.client.app.state.jobs,
            session,
            venue,
            "assignment",
            {**params, "affinity_run_id": run_id},
            "test",
        )
        job_id = failed.id
    seen = api.call("GET", f"{v}/jobs/{job_id}", chair).json()
    assert seen["state"] == "failed" and seen["error_code"] == "stale_affinities"
    assert "recompute affinity" in seen["error"] and "candidate reviewers" not in seen["error"]
