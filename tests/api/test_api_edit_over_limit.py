"""Assigning a reviewer over their quota, the whole path through HTTP: the preview refuses
with ``force_allowed`` and names the limit, the edit without ``force`` is refused and changes
nothing, with ``force`` it applies (the reviewer listed over their quota, the audit entry
recording the overfill) and undo restores the draft. On SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from api_helpers import load_venue
from conftest import Api

# four papers, four reviewers each at their quota of one: every reviewer is full
PARAMS = {"reviewers_per_paper": 1, "max_load": 1, "solver": "flow"}
REVIEWERS = ["Grace_Graph1", "Victor_Vision1", "Rita_Reinforce1", "Lena_Language1"]


class Draft:
    def __init__(self, api: Api):
        self.api = api
        self.venue, self.chair, _viewer = api.new_venue()
        load_venue(api, self.venue, self.chair)
        job = self.call("POST", "/assignments", json=PARAMS).json()
        assert job["state"] == "succeeded", job
        self.run = int(job["result"]["assignment_id"])

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.api.call(method, f"/venues/{self.venue}{path}", self.chair, **kwargs)

    def path(self, suffix: str = "") -> str:
        return f"/assignments/{self.run}{suffix}"

    def pairs(self) -> set[tuple[str, str]]:
        items = self.call("GET", self.path("/pairs"), params={"limit": 1000}).json()["items"]
        return {(p["paper_id"], p["reviewer_id"]) for p in items}

    def version(self) -> int:
        return int(self.call("GET", self.path()).json()["version"])

    def reviewers(self, which: str = "all") -> dict[str, dict[str, Any]]:
        body = self.call("GET", self.path("/reviewers"), params={"filter": which}).json()
        return {r["reviewer_id"]: r for r in body["items"]}


def test_assigning_over_a_quota_is_refused_then_forced_audited_and_undone(api: Api) -> None:
    d = Draft(api)
    before = d.pairs()
    loads = d.reviewers()
    assert all((loads[r]["load"], loads[r]["max_load"]) == (1, 1) for r in REVIEWERS)
    reviewer = "Grace_Graph1"
    paper = next(p for p, r in sorted(before) if r != reviewer and r != "Rita_Reinforce1")
    # the paper has room for a second reviewer: only the reviewer's quota stands in the way
    room = d.call("PUT", f"/paper-demands/{paper}", json={"demand": 2})
    assert room.status_code == 200, room.text
    assert d.reviewers("over") == {}
    version = d.version()
    edit = {"action": "assign", "paper_id": paper, "reviewer_id": reviewer, "version": version}

    preview = d.call("POST", d.path("/edits/preview"), json=edit)
    assert preview.status_code == 200, preview.text
    shown = preview.json()
    assert (shown["allowed"], shown["code"], shown["force_allowed"]) == (
        False,
        "would_overfill",
        True,
    )
    limit = f"reviewer {reviewer!r} would review 2 papers, over their max load of 1"
    assert limit in shown["detail"] and "demand" not in shown["detail"]
    # what force would do: the pair added, the reviewer's load 1 -> 2 of 1
    assert [(a["paper_id"], a["reviewer_id"]) for a in shown["added"]] == [(paper, reviewer)]
    load = next(r for r in shown["loads"] if r["reviewer_id"] == reviewer)
    assert (load["before"], load["after"], load["max_load"]) == (1, 2, 1)
    assert d.version() == version and d.pairs() == before

    refused = d.call("POST", d.path("/edits"), json=edit)
    assert refused.status_code == 409, refused.text
    body = refused.json()
    assert (body["code"], body["force_allowed"], body["limits"]) == (
        "would_overfill",
        True,
        [limit],
    )
    assert d.version() == version and d.pairs() == before
    audit = d.call("GET", "/audit", params={"limit": 100}).json()["items"]
    assert "assignment.assign" not in [e["action"] for e in audit]

    forced = d.call("POST", d.path("/edits"), json={**edit, "force": True, "reason": "needed"})
    assert forced.status_code == 200, forced.text
    assert forced.json()["assignment"]["version"] == version + 1
    assert d.pairs() == before | {(paper, reviewer)}
    over = d.reviewers("over")
    assert list(over) == [reviewer]
    assert (over[reviewer]["load"], over[reviewer]["max_load"]) == (2, 1)
    audit = d.call("GET", "/audit", params={"limit": 100}).json()["items"]
    entry = next(e for e in audit if e["action"] == "assignment.assign")
    assert entry["detail"]["overfilled"] == [limit]
    assert (entry["detail"]["paper_id"], entry["detail"]["reviewer_id"]) == (paper, reviewer)
    assert entry["detail"]["reason"] == "needed"
    # the draft's check lists the broken quota; the history records the forced edit
    check = d.call("GET", d.path("/check")).json()
    assert [(v["kind"], v["reviewer_id"]) for v in check["violations"]] == [("max_load", reviewer)]
    history = d.call("GET", d.path("/edits")).json()["items"]
    assert history[0]["action"] == "assign" and not history[0]["undone"]

    undone = d.call("POST", d.path("/undo"), json={"version": version + 1})
    assert undone.status_code == 200, undone.text
    assert d.pairs() == before and d.version() == version + 2
    assert d.reviewers("over") == {}
    assert d.reviewers()[reviewer]["load"] == 1
    assert d.call("GET", d.path("/check")).json()["violations"][0]["kind"] == "demand"
