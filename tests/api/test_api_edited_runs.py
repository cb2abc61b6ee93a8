"""Edited runs: the objective is recomputed, the bound says what it refers to and whether it
still holds, the constraints are re-checked; a swap survives re-solves."""

from __future__ import annotations

from typing import Any

import pytest
from api_helpers import load_venue
from conftest import Api

PARAMS = {"reviewers_per_paper": 1, "max_load": 2, "solver": "flow"}
REVIEWERS = ["Grace_Graph1", "Victor_Vision1", "Rita_Reinforce1", "Lena_Language1"]


def _solve(api: Api, venue: str, chair: str, **params: Any) -> tuple[int, int]:
    job = api.call("POST", f"/venues/{venue}/assignments", chair, json={**PARAMS, **params}).json()
    assert job["state"] == "succeeded", job
    return int(job["result"]["assignment_id"]), int(job["id"])


def _summary(api: Api, venue: str, chair: str, run: int) -> dict[str, Any]:
    return dict(api.call("GET", f"/venues/{venue}/assignments/{run}", chair).json()["summary"])


def _pairs(api: Api, venue: str, chair: str, run: int) -> dict[tuple[str, str], float]:
    items = api.call(
        "GET", f"/venues/{venue}/assignments/{run}/pairs", chair, params={"limit": 1000}
    ).json()["items"]
    return {(p["paper_id"], p["reviewer_id"]): p["score"] for p in items}


def test_forbid_recomputes_the_objective_and_flags_the_broken_demand(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    run, job = _solve(api, venue, chair)
    solved = _summary(api, venue, chair, run)
    assert "edited" not in solved and solved["objective"] <= solved["upper_bound"] + 1e-9
    pairs = _pairs(api, venue, chair, run)
    assert solved["objective"] == pytest.approx(sum(pairs.values()))

    (paper, reviewer), score = max(pairs.items(), key=lambda item: item[1])
    forbidden = api.call(
        "POST",
        f"/venues/{venue}/assignments/{run}/forbid",
        chair,
        json={"paper_id": paper, "reviewer_id": reviewer},
    )
    assert forbidden.status_code == 200
    edited = forbidden.json()["summary"]
    assert edited["edited"] is True and edited["edits"] == 1
    assert edited["objective"] == pytest.approx(solved["objective"] - score)
    assert edited["objective"] == pytest.approx(sum(_pairs(api, venue, chair, run).values()))
    assert edited["solver_objective"] == pytest.approx(solved["objective"])
    assert edited["upper_bound"] == pytest.approx(solved["upper_bound"])
    assert edited["bound_of"] == f"the problem solved by job #{job}, before edits"
    # removing a pair only tightens the problem: the solve's bound still bounds it
    assert edited["bound_holds"] is True
    # ... but the paper now lacks a reviewer: no gap is claimed for a run that breaks limits
    assert edited["constraints"]["satisfied"] is False
    assert edited["constraints"]["violations"] == 1
    assert edited["constraints"]["first"] == [f"paper {paper}: has 0 reviewers, needs 1"]
    assert edited["gap"] is None
    assert edited["pairs_assigned"] == len(pairs) - 1


def test_swap_within_limits_keeps_the_bound_and_a_forced_pin_drops_it(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    run, _job = _solve(api, venue, chair, max_load=2)
    pairs = _pairs(api, venue, chair, run)
    loads = {r: sum(1 for _p, x in pairs if x == r) for r in REVIEWERS}
    stored = {
        (item["paper_id"], item["reviewer_id"]): item
        for p in ("P1", "P2", "P4")
        for item in api.call(
            "GET", f"/venues/{venue}/papers/{p}/reviewers", chair, params={"limit": 10}
        ).json()["items"]
    }
    paper, old = next((p, r) for p, r in sorted(pairs) if p != "P3")
    new = next(
        r
        for r in REVIEWERS
        if (paper, r) not in pairs and loads[r] < 2 and not stored[(paper, r)]["conflict"]
    )
    swapped = api.call(
        "POST",
        f"/venues/{venue}/assignments/{run}/swap",
        chair,
        json={"paper_id": paper, "remove_reviewer_id": old, "add_reviewer_id": new},
    )
    assert swapped.status_code == 200, swapped.text
    assert swapped.json()["pinned"] is True
    summary = _summary(api, venue, chair, run)
    after = _pairs(api, venue, chair, run)
    assert summary["objective"] == pytest.approx(sum(after.values()))
    assert summary["bound_holds"] is True and summary["constraints"]["satisfied"] is True
    assert summary["gap"] == pytest.approx(
        max(0.0, (summary["upper_bound"] - summary["objective"]) / max(1.0, summary["upper_bound"]))
    )
    assert summary["objective"] <= summary["upper_bound"] + 1e-9

    # a pin forced over the paper's demand relaxes the problem: the bound is no longer proven
    extra = next(r for r in REVIEWERS if (paper, r) not in after and r not in (old,))
    forced = api.call(
        "POST",
        f"/venues/{venue}/assignments/{run}/pin",
        chair,
        json={"paper_id": paper, "reviewer_id": extra, "force": True},
    )
    if forced.status_code == 409:  # the extra reviewer is in conflict with this paper
        pytest.skip(forced.json()["detail"])
    summary = _summary(api, venue, chair, run)
    assert summary["bound_holds"] is False and summary["gap"] is None
    assert summary["constraints"]["satisfied"] is False
    assert summary["edits"] == 2


def test_a_swap_survives_a_re_solve(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    run, _job = _solve(api, venue, chair, max_load=2)
    pairs = _pairs(api, venue, chair, run)
    loads = {r: sum(1 for _p, x in pairs if x == r) for r in REVIEWERS}
    paper, old = next((p, r) for p, r in sorted(pairs) if p == "P1")
    new = next(r for r in REVIEWERS if r != old and loads[r] < 2 and r != "Rita_Reinforce1")
    swapped = api.call(
        "POST",
        f"/venues/{venue}/assignments/{run}/swap",
        chair,
        json={
            "paper_id": paper,
            "remove_reviewer_id": old,
            "add_reviewer_id": new,
            "reason": "asked to swap",
        },
    )
    assert swapped.status_code == 200, swapped.text
    rules = [
        {k: c[k] for k in ("kind", "paper_id", "reviewer_id", "reason")}
        for c in api.call("GET", f"/venues/{venue}/assignments/{run}/rules", chair).json()["items"]
    ]
    assert {"kind": "forbid", "paper_id": paper, "reviewer_id": old, "reason": "asked to swap"} in (
        rules
    )
    # the draft's own rule: not a venue conflict
    conflicts = api.call("GET", f"/venues/{venue}/conflicts", chair).json()["items"]
    assert not any(c["source"] == "forbid" for c in conflicts)
    # the re-solve of the draft would rather have the best reviewer back; the swap holds
    job = api.call("POST", f"/venues/{venue}/assignments/{run}/resolve", chair, json={}).json()
    assert job["state"] == "succeeded", job
    resolved = int(job["result"]["assignment_id"])
    again = _pairs(api, venue, chair, resolved)
    assert (paper, new) in again and (paper, old) not in again
    listed = api.call(
        "GET", f"/venues/{venue}/assignments/{resolved}/pairs", chair, params={"paper_id": paper}
    ).json()["items"]
    assert [(p["reviewer_id"], p["pinned"]) for p in listed] == [(new, True)]
    audit = api.call("GET", f"/venues/{venue}/audit", chair).json()["items"]
    swap = next(e for e in audit if e["action"] == "assignment.swap")
    assert swap["detail"]["removed"] == old and swap["detail"]["added"] == new
    assert swap["detail"]["version"] == 2


def test_swapping_in_a_conflict_or_a_pinned_pair_is_refused_and_changes_nothing(
    api: Api,
) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    run, _job = _solve(api, venue, chair, max_load=2)
    pairs = _pairs(api, venue, chair, run)
    old = next(r for p, r in pairs if p == "P3")
    refused = api.call(
        "POST",
        f"/venues/{venue}/assignments/{run}/swap",
        chair,
        json={"paper_id": "P3", "remove_reviewer_id": old, "add_reviewer_id": "Rita_Reinforce1"},
    )
    assert refused.status_code == 409 and "conflict of interest" in refused.json()["detail"]
    assert _pairs(api, venue, chair, run) == pairs
    run_row = api.call("GET", f"/venues/{venue}/assignments/{run}", chair).json()
    assert run_row["version"] == 1 and "edited" not in run_row["summary"]
    conflicts = api.call("GET", f"/venues/{venue}/conflicts", chair).json()["items"]
    assert not [c for c in conflicts if c["source"] == "forbid"]
