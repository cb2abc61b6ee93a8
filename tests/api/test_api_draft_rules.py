"""A draft's edits stay in that draft (issue 23, point 3): its pins, forbids and a
re-assignment's withdrawals are the run's own rules until the chair promotes them to venue
rules; another draft, a new solve or a perturbed run never inherits them. Through HTTP on
SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from api_helpers import load_venue
from conftest import Api

PARAMS = {"reviewers_per_paper": 1, "max_load": 2, "solver": "flow"}


class Venue:
    def __init__(self, api: Api, **params: Any):
        self.api = api
        self.venue, self.chair, self.viewer = api.new_venue()
        load_venue(api, self.venue, self.chair)
        self.run = self.solve(**params)

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.api.call(method, f"/venues/{self.venue}{path}", self.chair, **kwargs)

    def solve(self, **params: Any) -> int:
        job = self.call("POST", "/assignments", json={**PARAMS, **params}).json()
        assert job["state"] == "succeeded", job
        return int(job["result"]["assignment_id"])

    def pairs(self, run: int) -> set[tuple[str, str]]:
        items = self.call("GET", f"/assignments/{run}/pairs", params={"limit": 1000}).json()
        return {(p["paper_id"], p["reviewer_id"]) for p in items["items"]}

    def rules(self, run: int) -> set[tuple[str, str | None, str]]:
        body = self.call("GET", f"/assignments/{run}/rules").json()
        return {(i["kind"], i["paper_id"], i["reviewer_id"]) for i in body["items"]}

    def swap_out(self, run: int, paper: str) -> tuple[str, str]:
        """Swap the holder of ``paper`` for another reviewer (forced): (old, new)."""
        old = next(r for p, r in self.pairs(run) if p == paper)
        candidates = self.call("GET", f"/papers/{paper}/reviewers", params={"limit": 10}).json()
        new = next(
            c["reviewer_id"]
            for c in candidates["items"]
            if c["reviewer_id"] != old and not c.get("conflict")
        )
        body = {
            "action": "swap",
            "paper_id": paper,
            "reviewer_id": new,
            "remove_reviewer_id": old,
            "force": True,
        }
        done = self.call("POST", f"/assignments/{run}/edits", json=body)
        assert done.status_code == 200, done.text
        return old, new


def test_a_swap_stays_in_its_draft_and_a_perturbed_run_does_not_inherit_it(api: Api) -> None:
    v = Venue(api, max_load=4)
    old, new = v.swap_out(v.run, "P1")
    assert v.rules(v.run) == {("pin", "P1", new), ("forbid", "P1", old)}
    # nothing at venue level
    assert v.call("GET", "/pins").json()["total"] == 0
    assert v.call("GET", "/forbids").json()["total"] == 0
    # the example: a perturbed run reported a pair probability of 1 (the swap's pin
    # forced into it); now it samples freely under its cap
    capped = v.solve(solver="randomized", probability_cap=0.5, seed=1, max_load=4)
    table = v.call("GET", f"/assignments/{capped}/randomness").json()
    max_probability = next(m for m in table["metrics"] if m["name"] == "max_probability")
    assert max_probability["randomized"] <= 0.5 + 1e-9
    assert v.rules(capped) == set()
    # a plain new solve is the venue's solve, not the edited draft's
    fresh = v.solve(max_load=4)
    assert v.pairs(fresh) == v.pairs(v.solve(max_load=4)) and v.rules(fresh) == set()
    check = v.call("GET", f"/assignments/{fresh}/check").json()
    assert check["total"] == 0


def test_a_re_solve_of_a_draft_keeps_its_own_rules(api: Api) -> None:
    v = Venue(api)
    old, new = v.swap_out(v.run, "P1")
    resolved = v.call("POST", f"/assignments/{v.run}/resolve", json={"name": "again"}).json()
    assert resolved["state"] == "succeeded", resolved
    again = int(resolved["result"]["assignment_id"])
    assert ("P1", new) in v.pairs(again) and ("P1", old) not in v.pairs(again)
    assert v.rules(again) == v.rules(v.run)


def test_promote_makes_a_drafts_rules_venue_rules_for_every_later_solve(api: Api) -> None:
    v = Venue(api)
    old, new = v.swap_out(v.run, "P1")
    other = v.solve()
    empty = v.call("POST", f"/assignments/{v.run}/rules/promote", json={"rules": []})
    assert empty.status_code == 422, empty.text
    missing = v.call(
        "POST",
        f"/assignments/{v.run}/rules/promote",
        json={"rules": [{"kind": "pin", "paper_id": "P2", "reviewer_id": new}]},
    )
    assert missing.status_code == 404, missing.text
    viewer = api.call(
        "POST", f"/venues/{v.venue}/assignments/{v.run}/rules/promote", v.viewer, json={}
    )
    assert viewer.status_code in (403, 404)
    promoted = v.call(
        "POST",
        f"/assignments/{v.run}/rules/promote",
        json={"rules": [{"kind": "forbid", "paper_id": "P1", "reviewer_id": old}], "reason": "ok"},
    )
    assert promoted.status_code == 200, promoted.text
    assert promoted.json()["promoted"] == {"pin": 0, "forbid": 1, "max_load": 0, "unpin": 0}
    assert v.rules(v.run) == {("pin", "P1", new)}
    forbids = v.call("GET", "/forbids").json()["items"]
    assert [(f["paper_id"], f["reviewer_id"]) for f in forbids] == [("P1", old)]
    # the venue rule now holds in the other draft (it breaks it if it had the pair) and in
    # every later solve
    later = v.solve()
    assert ("P1", old) not in v.pairs(later)
    if ("P1", old) in v.pairs(other):
        check = v.call("GET", f"/assignments/{other}/check").json()
        assert any(x["paper_id"] == "P1" and x["reviewer_id"] == old for x in check["violations"])
    # a draft edit cannot lift a venue rule
    refused = v.call(
        "POST",
        f"/assignments/{later}/edits",
        json={"action": "pin", "paper_id": "P1", "reviewer_id": old, "force": True},
    )
    assert refused.status_code == 409 and refused.json()["code"] == "venue_rule", refused.text
    rest = v.call("POST", f"/assignments/{v.run}/rules/promote", json={})
    assert rest.json()["promoted"] == {"pin": 1, "forbid": 0, "max_load": 0, "unpin": 0}
    again = v.call("POST", f"/assignments/{v.run}/rules/promote", json={})
    assert again.status_code == 409 and again.json()["code"] == "nothing_to_promote"
    audit = v.call("GET", "/audit", params={"limit": 100}).json()["items"]
    promotions = [e for e in audit if e["action"] == "draft_rules.promote"]
    assert len(promotions) == 2 and promotions[-1]["detail"]["forbids"] == 1


def _publish(v: Venue, run: int) -> None:
    version = v.call("GET", f"/assignments/{run}").json()["version"]
    done = v.call(
        "POST", f"/assignments/{run}/deploy", json={"assignment_id": run, "version": version}
    )
    assert done.status_code == 200, done.text


def test_a_withdrawal_is_the_re_assignments_own_quota_not_the_venues(api: Api) -> None:
    v = Venue(api)
    _publish(v, v.run)
    other = v.solve()
    gone = sorted(r for _, r in v.pairs(v.run))[0]
    response = v.call("POST", "/assignments/live/reassign", json={"withdraw": [gone]})
    assert response.status_code == 202 and response.json()["state"] == "succeeded", response.text
    draft = response.json()["result"]["assignment_id"]
    assert v.rules(draft) == {("max_load", None, gone)}
    # the venue stores nothing: other drafts keep their quota (the "10 / 0")
    assert v.call("GET", "/reviewer-max-loads").json()["total"] == 0

    def quota(run: int) -> dict[str, Any]:
        items = v.call("GET", f"/assignments/{run}/reviewers", params={"limit": 100}).json()
        return next(i for i in items["items"] if i["reviewer_id"] == gone)

    assert (quota(draft)["max_load"], quota(draft)["draft_max_load"]) == (0, 0)
    assert (quota(other)["max_load"], quota(other)["draft_max_load"]) == (2, None)
    assert v.call("GET", f"/assignments/{other}/check").json()["total"] == 0
    assert v.call("GET", f"/assignments/{draft}/check").json()["total"] == 0
    listed = v.call("GET", f"/assignments/{draft}/rules").json()["items"]
    assert (listed[0]["value"], listed[0]["venue_value"]) == (0, 2)
    promoted = v.call("POST", f"/assignments/{draft}/rules/promote", json={})
    assert promoted.json()["promoted"]["max_load"] == 1
    stored = v.call("GET", "/reviewer-max-loads").json()["items"]
    assert [(s["reviewer_id"], s["max_load"]) for s in stored] == [(gone, 0)]
    assert quota(other)["max_load"] == 0
