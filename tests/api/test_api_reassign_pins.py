"""A re-assignment draft lifts, as its own rules, the venue pins it cannot hold: those of
the reviewers it withdraws and of the pairs it removes. Its check then has no pin it cannot
fix; other drafts and the venue keep the pins until the chair promotes the lifting. Through
HTTP on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from api_helpers import load_venue
from conftest import Api

PARAMS = {"reviewers_per_paper": 1, "max_load": 2, "solver": "flow"}
WITHDRAWN, REMOVED = ("P1", "Grace_Graph1"), ("P2", "Victor_Vision1")
WITHDRAWN_WHY = "reviewer withdrawn by the re-assignment"
REMOVED_WHY = "removed by the re-assignment"


class Venue:
    def __init__(self, api: Api):
        self.api = api
        self.venue, self.chair, self.viewer = api.new_venue()
        load_venue(api, self.venue, self.chair)
        pins = "paper_id,reviewer_id,value\n" + "".join(
            f"{p},{r},1\n" for p, r in (WITHDRAWN, REMOVED)
        )
        uploaded = self.call(
            "POST", "/constraints/upload", files={"file": ("pins.csv", pins.encode(), "text/csv")}
        )
        assert uploaded.status_code == 200 and uploaded.json()["created"] == 2, uploaded.text

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.api.call(method, f"/venues/{self.venue}{path}", self.chair, **kwargs)

    def solve(self) -> int:
        job = self.call("POST", "/assignments", json=PARAMS).json()
        assert job["state"] == "succeeded", job
        return int(job["result"]["assignment_id"])

    def pairs(self, run: int) -> set[tuple[str, str]]:
        items = self.call("GET", f"/assignments/{run}/pairs", params={"limit": 1000}).json()
        return {(p["paper_id"], p["reviewer_id"]) for p in items["items"]}

    def check(self, run: int) -> list[tuple[str, str | None, str | None]]:
        body = self.call("GET", f"/assignments/{run}/check").json()
        return [(v["kind"], v["paper_id"], v["reviewer_id"]) for v in body["violations"]]

    def venue_pins(self) -> set[tuple[str, str]]:
        items = self.call("GET", "/pins").json()["items"]
        return {(p["paper_id"], p["reviewer_id"]) for p in items}

    def deploy(self, run: int) -> Any:
        version = self.call("GET", f"/assignments/{run}").json()["version"]
        return self.call(
            "POST", f"/assignments/{run}/deploy", json={"assignment_id": run, "version": version}
        )

    def reassign(self) -> int:
        """Deploy a solve holding both pins, then re-assign it withdrawing the first pin's
        reviewer and removing the second pin's pair: the draft's id."""
        live = self.solve()
        assert {WITHDRAWN, REMOVED} <= self.pairs(live)
        assert self.deploy(live).status_code == 200
        response = self.call(
            "POST",
            "/assignments/live/reassign",
            json={
                "withdraw": [WITHDRAWN[1]],
                "remove": [{"paper_id": REMOVED[0], "reviewer_id": REMOVED[1]}],
                "reason": "left",
            },
        )
        assert response.status_code == 202, response.text
        assert response.json()["state"] == "succeeded", response.text
        return int(response.json()["result"]["assignment_id"])


def test_a_re_assignment_lifts_the_venue_pins_it_cannot_hold_in_its_draft_only(
    api: Api,
) -> None:
    v = Venue(api)
    draft = v.reassign()
    other = v.solve()
    assert WITHDRAWN not in v.pairs(draft) and REMOVED not in v.pairs(draft)
    # the bug: the draft's check listed both venue pins as missing, which no edit could fix
    assert v.check(draft) == []
    rules = v.call("GET", f"/assignments/{draft}/rules").json()
    lifted = {(i["paper_id"], i["reviewer_id"]): i for i in rules["items"] if i["kind"] == "unpin"}
    assert set(lifted) == {WITHDRAWN, REMOVED}
    assert lifted[WITHDRAWN]["reason"] == WITHDRAWN_WHY
    assert lifted[REMOVED]["reason"] == REMOVED_WHY
    assert lifted[WITHDRAWN]["reviewer_name"] == "Grace Graph"
    assert rules["counts"] == {"pin": 0, "forbid": 1, "max_load": 1, "unpin": 2}
    # the venue and every other run still hold the pins
    assert v.venue_pins() == {WITHDRAWN, REMOVED}
    assert v.check(other) == []
    assert {WITHDRAWN, REMOVED} <= v.pairs(other)
    # a draft edit still cannot drop a venue pin another draft holds
    refused = v.call(
        "POST",
        f"/assignments/{other}/edits",
        json={"action": "unpin", "paper_id": WITHDRAWN[0], "reviewer_id": WITHDRAWN[1]},
    )
    assert refused.status_code == 409 and refused.json()["code"] == "venue_rule", refused.text
    # in the draft the pin is lifted already: there is nothing to unpin
    lifted_already = v.call(
        "POST",
        f"/assignments/{draft}/edits",
        json={"action": "unpin", "paper_id": REMOVED[0], "reviewer_id": REMOVED[1]},
    )
    assert lifted_already.status_code == 404, lifted_already.text
    # a re-solve of the draft keeps its rules, the lifted pins included (it would otherwise
    # force a pair its own forbid and quota 0 exclude)
    resolved = v.call("POST", f"/assignments/{draft}/resolve", json={"name": "again"}).json()
    assert resolved["state"] == "succeeded", resolved
    again = int(resolved["result"]["assignment_id"])
    assert WITHDRAWN not in v.pairs(again) and REMOVED not in v.pairs(again)
    assert v.check(again) == []
    # the draft publishes without overrides; the venue keeps its pins
    assert v.deploy(draft).status_code == 200
    assert v.venue_pins() == {WITHDRAWN, REMOVED}
    assert v.check(other) == []


def test_promoting_a_lifted_pin_removes_the_venue_pin(api: Api) -> None:
    v = Venue(api)
    draft = v.reassign()
    other = v.solve()
    promoted = v.call(
        "POST",
        f"/assignments/{draft}/rules/promote",
        json={"rules": [{"kind": "unpin", "paper_id": WITHDRAWN[0], "reviewer_id": WITHDRAWN[1]}]},
    )
    assert promoted.status_code == 200, promoted.text
    assert promoted.json()["promoted"] == {"pin": 0, "forbid": 0, "max_load": 0, "unpin": 1}
    assert v.venue_pins() == {REMOVED}
    left = v.call("GET", f"/assignments/{draft}/rules").json()["items"]
    kinds = {(i["kind"], i["paper_id"]) for i in left}
    assert kinds == {("unpin", REMOVED[0]), ("forbid", REMOVED[0]), ("max_load", None)}
    assert v.check(draft) == [] and v.check(other) == []
    audit = v.call("GET", "/audit", params={"limit": 100}).json()["items"]
    promotion = next(e for e in audit if e["action"] == "draft_rules.promote")
    assert promotion["detail"]["unpins"] == 1
    everything = v.call("POST", f"/assignments/{draft}/rules/promote", json={})
    assert everything.json()["promoted"] == {"pin": 0, "forbid": 1, "max_load": 1, "unpin": 1}
    assert v.venue_pins() == set()
    # a later solve no longer forces the pairs
    later = v.solve()
    assert WITHDRAWN not in v.pairs(later) and REMOVED not in v.pairs(later)
    assert v.check(later) == []
