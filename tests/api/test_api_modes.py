"""Randomized runs' randomness table and emergency re-assignment drafts, through HTTP on
SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from api_helpers import load_venue
from conftest import Api

PARAMS = {"reviewers_per_paper": 1, "max_load": 2}
METRICS = [
    "quality_ratio",
    "max_probability",
    "avg_max_probability",
    "l2_norm",
    "entropy",
    "support_size",
]


def _solve(api: Api, venue: str, chair: str, **params: Any) -> int:
    job = api.call("POST", f"/venues/{venue}/assignments", chair, json={**PARAMS, **params}).json()
    assert job["state"] == "succeeded", job
    return int(job["result"]["assignment_id"])


def _pairs(api: Api, venue: str, token: str, run: int) -> set[tuple[str, str]]:
    items = api.call(
        "GET", f"/venues/{venue}/assignments/{run}/pairs", token, params={"limit": 1000}
    ).json()["items"]
    return {(p["paper_id"], p["reviewer_id"]) for p in items}


def _deploy(api: Api, venue: str, token: str, run: int) -> Any:
    version = api.call("GET", f"/venues/{venue}/assignments/{run}", token).json()["version"]
    return api.call(
        "POST",
        f"/venues/{venue}/assignments/{run}/deploy",
        token,
        json={"assignment_id": run, "version": version},
    )


def test_randomized_runs_store_their_randomness_beside_the_deterministic_optimum(
    api: Api,
) -> None:
    venue, chair, viewer = api.new_venue()
    load_venue(api, venue, chair)
    run = _solve(api, venue, chair, perturbation=0.5, seed=3, max_load=4)
    row = api.call("GET", f"/venues/{venue}/assignments/{run}", chair).json()
    assert row["summary"]["solver"] == "perturbed"
    stored = row["summary"]["randomness"]
    table = api.call("GET", f"/venues/{venue}/assignments/{run}/randomness", chair)
    assert table.status_code == 200, table.text
    body = table.json()
    assert body["randomized"] is True and body["perturbation"] == 0.5 and body["seed"] == 3
    assert [m["name"] for m in body["metrics"]] == METRICS
    by_name = {m["name"]: m for m in body["metrics"]}
    for name in METRICS:
        assert by_name[name]["randomized"] == stored[name]
        assert by_name[name]["deterministic"] == stored["deterministic"][name]
        assert by_name[name]["label"] and by_name[name]["description"]
    assert by_name["quality_ratio"]["randomized"] >= 0.5 - 1e-9  # 1 - beta, scores >= 0
    assert by_name["entropy"]["deterministic"] == 0
    assert by_name["support_size"]["deterministic"] == 4
    assert body["deterministic_optimum"] >= body["expected_objective"] - 1e-9
    # the same table as the run's: visible to whoever sees the run, nobody else
    assert api.call("GET", f"/venues/{venue}/assignments/{run}/randomness", viewer).status_code == (
        404
    )
    assert body["after_edits"] is None
    # an edited run is no longer a sample of that distribution: the table says so
    paper, reviewer = sorted(_pairs(api, venue, chair, run))[0]
    pinned = api.call(
        "POST",
        f"/venues/{venue}/assignments/{run}/pin",
        chair,
        json={"paper_id": paper, "reviewer_id": reviewer},
    )
    assert pinned.status_code == 200, pinned.text
    edited = api.call("GET", f"/venues/{venue}/assignments/{run}/randomness", chair).json()
    assert edited["after_edits"] and edited["metrics"] == body["metrics"]
    assert _deploy(api, venue, chair, run).status_code == 200
    seen = api.call("GET", f"/venues/{venue}/assignments/{run}/randomness", viewer)
    assert seen.status_code == 200 and seen.json()["metrics"] == body["metrics"]


def test_probability_cap_runs_have_the_table_and_deterministic_runs_none(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    capped = _solve(api, venue, chair, probability_cap=0.5, seed=1, max_load=4)
    body = api.call("GET", f"/venues/{venue}/assignments/{capped}/randomness", chair).json()
    assert body["randomized"] is True and body["solver"] == "randomized"
    max_probability = next(m for m in body["metrics"] if m["name"] == "max_probability")
    assert max_probability["randomized"] <= 0.5 + 1e-9
    plain = _solve(api, venue, chair, solver="flow")
    body = api.call("GET", f"/venues/{venue}/assignments/{plain}/randomness", chair).json()
    assert body["randomized"] is False and body["metrics"] == []


def test_perturbation_options_refused_in_words(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    path = f"/venues/{venue}/assignments"
    for bad in ({"perturbation": 0}, {"perturbation": 1.5}, {"perturbation": "x"}):
        assert api.call("POST", path, chair, json={**PARAMS, **bad}).status_code == 422
    wrong = api.call("POST", path, chair, json={**PARAMS, "perturbation": 0.2, "solver": "ilp"})
    assert wrong.status_code == 422 and "perturbation" in wrong.json()["detail"]
    lonely = api.call("POST", path, chair, json={**PARAMS, "solver": "perturbed"})
    assert lonely.status_code == 422 and "needs a perturbation" in lonely.json()["detail"]


def _live_venue(api: Api) -> tuple[str, str, str, int]:
    venue, chair, viewer = api.new_venue()
    load_venue(api, venue, chair)
    run = _solve(api, venue, chair, solver="flow")
    assert _deploy(api, venue, chair, run).status_code == 200
    return venue, chair, viewer, run


def test_reassign_keeps_every_other_live_pair_and_deploys_through_the_checks(api: Api) -> None:
    venue, chair, viewer, live = _live_venue(api)
    live_pairs = _pairs(api, venue, chair, live)
    gone = sorted({r for _, r in live_pairs})[0]
    path = f"/venues/{venue}/assignments/live/reassign"
    assert api.call("POST", path, viewer, json={"withdraw": [gone]}).status_code == 403
    response = api.call("POST", path, chair, json={"withdraw": [f"~{gone}"], "reason": "ill"})
    # a job like a solve (run inline here), its result naming the new draft
    assert response.status_code == 202, response.text
    job = response.json()
    assert (job["kind"], job["state"]) == ("reassignment", "succeeded"), job
    assert job["parameters_summary"] == f"live run {live} without 1 reviewer(s) and 0 pair(s)"
    body = job["result"]
    draft = body["assignment_id"]
    row = api.call("GET", f"/venues/{venue}/assignments/{draft}", chair).json()
    assert row["state"] == "draft" and body["derived_from"] == live
    # numbered within the venue like a solve's run, its lineage naming the live run
    live_number = api.call("GET", f"/venues/{venue}/assignments/{live}", chair).json()["number"]
    assert row["number"] == live_number + 1
    assert row["derived_from"] == {
        "kind": "re-assignment",
        "assignment_id": live,
        "assignment_number": live_number,
        "text": f"re-assignment of #{live_number} (version 1)",
    }
    assert body["stage"] == "fill"
    new_pairs = _pairs(api, venue, chair, draft)
    untouched = {pair for pair in live_pairs if pair[1] != gone}
    assert untouched <= new_pairs
    assert not any(r == gone for _, r in new_pairs)
    removed = {(p["paper_id"], p["reviewer_id"]) for p in body["removed"]}
    added = {(p["paper_id"], p["reviewer_id"]) for p in body["added"]}
    assert removed == live_pairs - untouched
    assert added == new_pairs - live_pairs and len(added) == len(removed)
    assert {p["reason"] for p in body["removed"]} == {"withdrawn"}
    assert body["kept"] == len(untouched)
    summary = row["summary"]
    assert summary["reassignment"]["derived_from"] == live
    assert summary["reassignment"]["withdrawn"] == [gone]
    # the withdrawal is the draft's own quota (max load 0), not the venue's: the old live run
    # does not break it
    loads = api.call("GET", f"/venues/{venue}/reviewer-max-loads", chair)
    assert loads.status_code == 200 and loads.json()["items"] == []
    rules = api.call("GET", f"/venues/{venue}/assignments/{draft}/rules", chair).json()["items"]
    assert [(r["kind"], r["reviewer_id"], r["value"]) for r in rules] == [("max_load", gone, 0)]
    check = api.call("GET", f"/venues/{venue}/assignments/{live}/check", chair).json()
    assert check["total"] == 0
    assert api.call("GET", f"/venues/{venue}/assignments/{draft}/check", chair).json()["total"] == 0
    # published like any draft: confirmation and checks
    assert _deploy(api, venue, chair, draft).status_code == 200
    assert api.call("GET", f"/venues/{venue}/assignments/live", viewer).json()["id"] == draft
    # the job re-run now: another run is live than the one it was checked against
    rerun = api.call("POST", f"/venues/{venue}/jobs/{job['id']}/rerun", chair)
    assert rerun.status_code == 202 and rerun.json()["state"] == "failed", rerun.text
    assert rerun.json()["error"].startswith("the live run changed since the re-assignment")
    assert api.call("GET", f"/venues/{venue}/assignments/live", viewer).json()["id"] == draft
    audit = api.call("GET", f"/venues/{venue}/audit", chair, params={"limit": 100})
    assert audit.status_code == 200
    entry = next(e for e in audit.json()["items"] if e["action"] == "assignment.reassign")
    assert entry["detail"]["derived_from"] == live and entry["detail"]["withdrawn"] == [gone]


def test_reassign_removed_pairs_become_the_drafts_forbids(api: Api) -> None:
    venue, chair, _viewer, live = _live_venue(api)
    pair = sorted(_pairs(api, venue, chair, live))[0]
    response = api.call(
        "POST",
        f"/venues/{venue}/assignments/live/reassign",
        chair,
        json={"remove": [{"paper_id": pair[0], "reviewer_id": pair[1]}]},
    )
    assert response.status_code == 202, response.text
    body = response.json()["result"]
    assert [(p["paper_id"], p["reviewer_id"], p["reason"]) for p in body["removed"]] == [
        (pair[0], pair[1], "removed")
    ]
    draft = body["assignment_id"]
    assert len(body["added"]) == 1 and pair not in _pairs(api, venue, chair, draft)
    rules = api.call("GET", f"/venues/{venue}/assignments/{draft}/rules", chair).json()["items"]
    assert [(r["kind"], r["paper_id"], r["reviewer_id"]) for r in rules] == [
        ("forbid", pair[0], pair[1])
    ]


def test_reassign_refusals(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    path = f"/venues/{venue}/assignments/live/reassign"
    none_live = api.call("POST", path, chair, json={"withdraw": ["Grace_Graph1"]})
    assert none_live.status_code == 409 and "no live assignment" in none_live.json()["detail"]
    run = _solve(api, venue, chair, solver="flow")
    assert _deploy(api, venue, chair, run).status_code == 200
    nothing = api.call("POST", path, chair, json={})
    assert nothing.status_code == 422 and "nothing to re-assign" in nothing.json()["detail"]
    unknown = api.call("POST", path, chair, json={"withdraw": ["Nobody_Here1"]})
    assert unknown.status_code == 422 and "Nobody_Here1" in unknown.json()["detail"]
    assert unknown.json()["field"] == "withdraw"
    live_pairs = _pairs(api, venue, chair, run)
    outside = next(
        (p, r)
        for p in ("P1", "P2", "P3", "P4")
        for r in ("Grace_Graph1", "Victor_Vision1", "Rita_Reinforce1", "Lena_Language1")
        if (p, r) not in live_pairs
    )
    not_live = api.call(
        "POST", path, chair, json={"remove": [{"paper_id": outside[0], "reviewer_id": outside[1]}]}
    )
    assert not_live.status_code == 422 and "not a pair of the live" in not_live.json()["detail"]
    assert not_live.json()["field"] == "remove"
    extra = api.call("POST", path, chair, json={"withdraw": [], "solver": "flow"})
    assert extra.status_code == 422
    # 4 papers x 1 reviewer, max 2 each: three withdrawals leave 2 slots for 4 papers
    everyone = ["Grace_Graph1", "Victor_Vision1", "Rita_Reinforce1"]
    infeasible = api.call("POST", path, chair, json={"withdraw": everyone})
    # found only by solving: the job fails in words
    assert infeasible.status_code == 202, infeasible.text
    assert infeasible.json()["state"] == "failed"
    assert "no re-assignment exists" in infeasible.json()["error"]
    # nothing was stored by the refused requests and the failed job; only that job was queued
    assert api.call("GET", f"/venues/{venue}/assignments/live", chair).json()["id"] == run
    listed = api.call("GET", f"/venues/{venue}/assignments", chair).json()
    assert listed["total"] == 1
    jobs = api.call("GET", f"/venues/{venue}/jobs", chair, params={"kind": "reassignment"})
    assert [j["id"] for j in jobs.json()["items"]] == [infeasible.json()["id"]]
