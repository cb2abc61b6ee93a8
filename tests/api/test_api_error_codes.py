"""Every 4xx body carries a stable ``code`` beside the human ``detail`` (docs/page-api.md),
so that clients decide on the code, never on message text."""

from __future__ import annotations

from typing import Any

from api_helpers import load_venue
from conftest import Api

PARAMS = {"reviewers_per_paper": 1, "max_load": 2, "solver": "flow"}


def _code(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = dict(response.json())
    assert body["code"] == code, body
    assert body["detail"], body
    return body


def _solve(api: Api, venue: str, chair: str, **params: Any) -> int:
    job = api.call("POST", f"/venues/{venue}/assignments", chair, json={**PARAMS, **params})
    assert job.json()["state"] == "succeeded", job.text
    return int(job.json()["result"]["assignment_id"])


def test_auth_lookup_and_validation_codes(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    base = f"/venues/{venue}"
    _code(api.client.get(f"{base}/reviewers"), 401, "unauthorized")
    _code(api.call("GET", f"{base}/reviewers", "rec_not-a-token"), 401, "unauthorized")
    _code(api.call("GET", "/tokens", chair), 403, "forbidden")
    _code(api.call("GET", f"{base}/conflicts", viewer), 403, "forbidden")
    _code(api.call("GET", f"{base}/reviewers/nobody", chair), 404, "not_found")
    _code(api.call("GET", f"{base}/assignments/999999", chair), 404, "not_found")
    body = _code(
        api.call("GET", f"{base}/reviewers", chair, params={"limit": 0}), 422, "validation_error"
    )
    assert isinstance(body["detail"], list) and body["detail"][0]["loc"][-1] == "limit"
    bad = b"id,title\n,no id\n"
    body = _code(
        api.call("POST", f"{base}/submissions/upload", chair, files={"file": ("s.csv", bad)}),
        422,
        "invalid_input",
    )
    assert body["problems"] and body["problems"][0]["file"] == "s.csv"
    _code(api.call("POST", "/venues", api.admin, json={"id": venue}), 409, "venue_exists")
    _code(api.call("POST", f"{base}/assignments", chair, json=PARAMS), 409, "no_affinities")


def test_solve_refusals_have_codes(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    base = f"/venues/{venue}"
    body = _code(
        api.call(
            "POST", f"{base}/assignments", chair, json={"reviewers_per_paper": 3, "max_load": 1}
        ),
        409,
        "over_capacity",
    )
    assert (body["demand_total"], body["capacity_total"], body["smallest_max_load"]) == (12, 4, 3)
    body = _code(
        api.call(
            "POST", f"{base}/assignments", chair, json={"solver": "flow", "fairness_keep": 0.5}
        ),
        422,
        "invalid_option",
    )
    assert body["field"] == "solver"
    _code(
        api.call("POST", f"{base}/assignments", chair, json={"demand": {"nope": 1}}),
        422,
        "unknown_ids",
    )
    assert api.call("PUT", f"{base}/paper-demands/P1", chair, json={"demand": 2}).status_code == 200
    _code(
        api.call("POST", f"{base}/assignments", chair, json={"demand": {"P1": 1}}),
        422,
        "contradicts_stored_limit",
    )


def test_option_errors_from_matching_name_the_field(api: Api, monkeypatch: Any) -> None:
    """There is one OptionError: raised by matching's validation, it is a 422 naming the
    field before a solve is queued, and names the field when the solve job refuses it."""
    import matching

    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    base = f"/venues/{venue}"
    body = _code(
        api.call("POST", f"{base}/assignments", chair, json={"solver": "magic"}),
        422,
        "invalid_option",
    )
    assert body["field"] == "solver" and body["detail"].startswith("solver: unknown solver")

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise matching.OptionError("max_per_group", "no paper has two candidates of a group")

    monkeypatch.setattr(matching, "validate_options", refuse)
    job = api.call("POST", f"{base}/assignments", chair, json=PARAMS).json()
    assert job["state"] == "failed", job
    assert job["error"] == "max_per_affiliation: no paper has two candidates of a group"


def test_edit_and_publishing_refusals_have_codes(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    base = f"/venues/{venue}"
    run = _solve(api, venue, chair)
    pairs = api.call("GET", f"{base}/assignments/{run}/pairs", chair).json()["items"]
    holder = next(p["reviewer_id"] for p in pairs if p["paper_id"] == "P1")
    other = next(r for r in ("Grace_Graph1", "Victor_Vision1", "Lena_Language1") if r != holder)
    body = _code(
        api.call(
            "POST",
            f"{base}/assignments/{run}/pin",
            chair,
            json={"paper_id": "P1", "reviewer_id": other},
        ),
        409,
        "would_overfill",
    )
    assert body["force_allowed"] is True and body["limits"]
    body = _code(
        api.call(
            "POST",
            f"{base}/assignments/{run}/pin",
            chair,
            json={"paper_id": "P3", "reviewer_id": "Rita_Reinforce1", "force": True},
        ),
        409,
        "conflict_of_interest",
    )
    assert any("author" in reason for reason in body["reasons"])
    body = _code(
        api.call(
            "POST",
            f"{base}/assignments/{run}/deploy",
            chair,
            json={"assignment_id": run, "version": 7},
        ),
        409,
        "stale_version",
    )
    assert body["version"] == 1
    forbid = api.call(
        "POST",
        f"{base}/assignments/{run}/forbid",
        chair,
        json={"paper_id": "P1", "reviewer_id": holder},
    )
    assert forbid.status_code == 200
    body = _code(
        api.call(
            "POST",
            f"{base}/assignments/{run}/deploy",
            chair,
            json={"assignment_id": run, "version": 2},
        ),
        409,
        "constraint_violations",
    )
    assert body["total"] == 1 and body["violations"][0]["kind"] == "demand"
    assert body["detail"]["violations"] == body["violations"]
    live = _solve(api, venue, chair)
    deploy = {"assignment_id": live, "version": 1}
    assert (
        api.call("POST", f"{base}/assignments/{live}/deploy", chair, json=deploy).status_code == 200
    )
    _code(
        api.call("POST", f"{base}/assignments/{live}/deploy", chair, json=deploy),
        409,
        "already_live",
    )
    body = _code(
        api.call(
            "POST",
            f"{base}/assignments/{live}/forbid",
            chair,
            json={"paper_id": "P1", "reviewer_id": holder},
        ),
        409,
        "not_a_draft",
    )
    assert body["state"] == "live"
    job = api.call("GET", f"{base}/jobs", chair).json()["items"][0]
    body = _code(api.call("POST", f"{base}/jobs/{job['id']}/cancel", chair), 409, "job_ended")
    assert body["state"] == "succeeded"
