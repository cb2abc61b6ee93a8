"""Edits with preview, history and undo; the venue's pins and forbids (docs/page-api.md).

A preview runs the edit's own code in a transaction that is rolled back: it must change
nothing and announce exactly what applying does."""

from __future__ import annotations

from typing import Any

import pytest
from api_helpers import load_venue
from conftest import Api

PARAMS = {"reviewers_per_paper": 1, "max_load": 2, "solver": "flow"}
REVIEWERS = ["Grace_Graph1", "Victor_Vision1", "Rita_Reinforce1", "Lena_Language1"]


class Venue:
    def __init__(self, api: Api):
        self.api = api
        self.venue, self.chair, self.viewer = api.new_venue()
        load_venue(api, self.venue, self.chair)
        job = self.call("POST", "/assignments", json=PARAMS).json()
        assert job["state"] == "succeeded", job
        self.run = int(job["result"]["assignment_id"])

    def call(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> Any:
        return self.api.call(method, f"/venues/{self.venue}{path}", token or self.chair, **kwargs)

    def run_path(self, suffix: str = "") -> str:
        return f"/assignments/{self.run}{suffix}"

    def pairs(self) -> dict[tuple[str, str], dict[str, Any]]:
        items = self.call("GET", self.run_path("/pairs"), params={"limit": 1000}).json()["items"]
        return {(p["paper_id"], p["reviewer_id"]): p for p in items}

    def state(self) -> dict[str, Any]:
        return self.call("GET", self.run_path()).json()

    def holder(self, paper: str) -> str:
        return next(r for p, r in self.pairs() if p == paper)

    def edit(self, **body: Any) -> Any:
        return self.call("POST", self.run_path("/edits"), json=body)

    def preview(self, **body: Any) -> dict[str, Any]:
        response = self.call("POST", self.run_path("/edits/preview"), json=body)
        assert response.status_code == 200, response.text
        return dict(response.json())

    def undo(self, version: int) -> Any:
        return self.call("POST", self.run_path("/undo"), json={"version": version})


def _standing(v: Venue) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """The draft's own pins and forbids (what its edits change)."""
    items = v.call("GET", v.run_path("/rules")).json()["items"]
    return {(i["paper_id"], i["reviewer_id"]) for i in items if i["kind"] == "pin"}, {
        (i["paper_id"], i["reviewer_id"]) for i in items if i["kind"] == "forbid"
    }


def _venue_rules(v: Venue) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    pins = v.call("GET", "/pins", params={"limit": 1000}).json()["items"]
    forbids = v.call("GET", "/forbids", params={"limit": 1000}).json()["items"]
    return {(p["paper_id"], p["reviewer_id"]) for p in pins}, {
        (f["paper_id"], f["reviewer_id"]) for f in forbids
    }


def test_swap_preview_changes_nothing_and_announces_what_apply_does(api: Api) -> None:
    v = Venue(api)
    pairs = v.pairs()
    old = v.holder("P1")
    scores = {
        i["reviewer_id"]: i["score"]
        for i in v.call("GET", "/papers/P1/reviewers", params={"limit": 10}).json()["items"]
    }
    loads = {r: sum(1 for _p, x in pairs if x == r) for r in REVIEWERS}
    new = min(
        (
            r
            for r in REVIEWERS
            if r not in (old, "Rita_Reinforce1") and loads[r] < 2 and r in scores
        ),
        key=lambda r: scores[r],
    )
    audit_before = v.call("GET", "/audit").json()["total"]
    body = {"action": "swap", "paper_id": "P1", "reviewer_id": new, "remove_reviewer_id": old}
    preview = v.preview(**body)
    # nothing changed
    assert v.pairs() == pairs and v.state()["version"] == 1
    assert v.call("GET", "/audit").json()["total"] == audit_before
    assert _standing(v) == (set(), set())
    assert preview["allowed"] is True and preview["code"] is None
    assert [(a["reviewer_id"], a["reviewer_name"]) for a in preview["added"]] == [
        (new, new.removesuffix("1").replace("_", " "))
    ]
    assert [r["reviewer_id"] for r in preview["removed"]] == [old]
    assert preview["objective_change"] == pytest.approx(scores[new] - scores[old])
    assert preview["constraints"] == {
        "pins_added": 1,
        "pins_removed": 0,
        "forbids_added": 1,
        "forbids_removed": 0,
    }
    if scores[new] < scores[old]:
        assert f"swap replaces a {scores[old]:.3f} pair by a {scores[new]:.3f} one" in " ".join(
            preview["warnings"]
        )
    assert {(c["reviewer_id"], c["before"], c["after"]) for c in preview["loads"]} == {
        (old, loads[old], loads[old] - 1),
        (new, loads[new], loads[new] + 1),
    }
    applied = v.edit(**body, version=1)
    assert applied.status_code == 200, applied.text
    result = applied.json()
    effect = {k: val for k, val in result["effect"].items() if k != "version"}
    assert effect == {k: val for k, val in preview.items() if k != "version"}
    assert result["assignment"]["version"] == 2 and result["effect"]["version"] == 2
    assert result["edit"]["action"] == "swap" and result["edit"]["seq"] == 1
    assert "swapped" in result["edit"]["summary"] and "P1" in result["edit"]["summary"]
    assert _standing(v) == ({("P1", new)}, {("P1", old)})


def test_undo_walks_back_edit_by_edit_to_the_solved_run(api: Api) -> None:
    v = Venue(api)
    solved_pairs, solved = v.pairs(), v.state()
    old = v.holder("P2")
    spare = next(r for r in REVIEWERS if r != old and r != v.holder("P1"))
    assert v.edit(action="forbid", paper_id="P2", reviewer_id=old).status_code == 200
    assert v.edit(action="pin", paper_id="P1", reviewer_id=spare, force=True).status_code == 200
    assert v.edit(action="unforbid", paper_id="P2", reviewer_id=old).status_code == 200
    history = v.call("GET", v.run_path("/edits")).json()
    assert history["total"] == 3
    assert [e["action"] for e in history["items"]] == ["unforbid", "pin", "forbid"]
    assert [e["version_after"] for e in history["items"]] == [4, 3, 2]
    assert v.undo(version=3).json()["code"] == "stale_version"
    # undo the unforbid: the forbid is back
    undone = v.undo(version=4)
    assert undone.status_code == 200, undone.text
    assert undone.json()["assignment"]["version"] == 5
    assert undone.json()["effect"]["constraints"]["forbids_added"] == 1
    assert _standing(v) == ({("P1", spare)}, {("P2", old)})
    # undo the forced pin: the pair leaves, the pin goes
    assert v.undo(version=5).status_code == 200
    assert _standing(v)[0] == set() and ("P1", spare) not in v.pairs()
    # undo the forbid: the pair is back with its score, the forbid goes
    last = v.undo(version=6)
    assert last.status_code == 200
    assert v.pairs() == solved_pairs and _standing(v) == (set(), set())
    state = v.state()
    assert state["version"] == 7 and state["summary"] == solved["summary"]
    assert v.undo(version=7).json()["code"] == "nothing_to_undo"
    entries = v.call("GET", v.run_path("/edits")).json()["items"]
    assert all(e["undone"] and e["undone_by"] for e in entries)
    actions = [e["action"] for e in v.call("GET", "/audit", params={"limit": 50}).json()["items"]]
    assert actions.count("assignment.undo") == 3


def test_refused_edits_preview_with_their_code(api: Api) -> None:
    v = Venue(api)
    holder = v.holder("P1")
    other = next(r for r in REVIEWERS if r not in (holder, "Rita_Reinforce1"))
    preview = v.preview(action="pin", paper_id="P1", reviewer_id=other)
    assert preview["allowed"] is False and preview["code"] == "would_overfill"
    assert preview["force_allowed"] is True
    # the effect shown is what force does: one more reviewer on P1
    assert [a["reviewer_id"] for a in preview["added"]] == [other]
    assert any(p["paper_id"] == "P1" and p["after"] == 2 for p in preview["papers"])
    assert any("over its demand" in w for w in preview["warnings"])
    conflict = v.preview(action="assign", paper_id="P3", reviewer_id="Rita_Reinforce1")
    assert (conflict["allowed"], conflict["code"], conflict["added"]) == (
        False,
        "conflict_of_interest",
        [],
    )
    assert (
        v.preview(action="assign", paper_id="P1", reviewer_id=holder)["code"] == "already_assigned"
    )
    assert v.preview(action="remove", paper_id="P1", reviewer_id=other)["code"] == "not_assigned"
    assert v.preview(action="unforbid", paper_id="P1", reviewer_id=other)["code"] == "not_found"
    stale = v.preview(action="remove", paper_id="P1", reviewer_id=holder, version=9)
    assert stale["code"] == "stale_version"
    assert (
        v.call(
            "POST",
            v.run_path("/edits/preview"),
            json={"action": "pin", "paper_id": "nope", "reviewer_id": other},
        ).json()["code"]
        == "not_found"
    )
    assert v.state()["version"] == 1


def test_assign_and_remove_change_one_draft_only(api: Api) -> None:
    v = Venue(api)
    holder = v.holder("P4")
    removed = v.edit(action="remove", paper_id="P4", reviewer_id=holder)
    assert removed.status_code == 200, removed.text
    effect = removed.json()["effect"]
    assert effect["removed_total"] == 1 and effect["constraints"]["forbids_added"] == 0
    assert any("keeps 0 of the 1 reviewers" in w for w in effect["warnings"])
    assert removed.json()["assignment"]["summary"]["bound_holds"] is True
    assert _standing(v) == (set(), set())
    added = v.edit(action="assign", paper_id="P4", reviewer_id=holder, version=2)
    assert added.status_code == 200, added.text
    assert added.json()["effect"]["added"][0]["pinned"] is False
    assert added.json()["assignment"]["summary"]["constraints"]["satisfied"] is True
    pinned = v.edit(action="pin", paper_id="P4", reviewer_id=holder)
    assert pinned.status_code == 200
    refused = v.edit(action="remove", paper_id="P4", reviewer_id=holder)
    assert refused.status_code == 409 and refused.json()["code"] == "pinned_pair"
    unpinned = v.edit(action="unpin", paper_id="P4", reviewer_id=holder)
    assert unpinned.status_code == 200
    assert v.pairs()[("P4", holder)]["pinned"] is False


def test_previews_name_each_constraint_they_break_or_mend(api: Api) -> None:
    v = Venue(api)
    holder = v.holder("P4")
    preview = v.preview(action="remove", paper_id="P4", reviewer_id=holder)
    assert (preview["violations_before"], preview["violations_after"]) == (0, 1)
    assert preview["violations_new_total"] == 1 and preview["violations_fixed"] == []
    (broken,) = preview["violations_new"]
    assert broken["kind"] == "demand" and broken["paper_id"] == "P4"
    assert broken["paper_title"] and "1" in broken["detail"]
    removed = v.edit(action="remove", paper_id="P4", reviewer_id=holder)
    assert removed.status_code == 200, removed.text
    # the run's summary after the edit (from the pairs before and the change) is what a
    # fresh check of the stored run finds, and so are its statistics
    summary = removed.json()["assignment"]["summary"]
    check = v.call("GET", v.run_path("/check")).json()
    assert summary["constraints"]["violations"] == check["total"] == 1
    pairs = v.pairs()
    assert summary["pairs_assigned"] == len(pairs)
    assert summary["objective"] == pytest.approx(sum(p["score"] for p in pairs.values()))
    mend = v.preview(action="assign", paper_id="P4", reviewer_id=holder, version=2)
    assert (mend["violations_before"], mend["violations_after"]) == (1, 0)
    assert [(x["kind"], x["paper_id"]) for x in mend["violations_fixed"]] == [("demand", "P4")]
    assert mend["violations_new"] == [] and mend["violations_fixed_total"] == 1


def test_pins_and_forbids_are_listed_with_names_and_removed_at_venue_level(api: Api) -> None:
    v = Venue(api)
    holder = v.holder("P2")
    v.edit(action="forbid", paper_id="P2", reviewer_id=holder, reason="asked")
    spare = next(r for r in REVIEWERS if r != v.holder("P1"))
    v.edit(action="pin", paper_id="P1", reviewer_id=spare, force=True)
    # a draft's edits stay in the draft until the chair promotes them
    assert _venue_rules(v) == (set(), set())
    assert _standing(v) == ({("P1", spare)}, {("P2", holder)})
    promoted = v.call("POST", v.run_path("/rules/promote"), json={})
    assert promoted.json()["promoted"] == {"pin": 1, "forbid": 1, "max_load": 0, "unpin": 0}, (
        promoted.text
    )
    assert _standing(v) == (set(), set())
    forbids = v.call("GET", "/forbids").json()
    assert forbids["total"] == 1
    assert forbids["items"][0]["reason"] == "asked"
    assert forbids["items"][0]["paper_title"] == "Image segmentation with convolutional decoders"
    assert forbids["items"][0]["reviewer_name"] == holder.removesuffix("1").replace("_", " ")
    pins = v.call("GET", "/pins", params={"paper_id": "P1"}).json()
    assert [p["reviewer_id"] for p in pins["items"]] == [spare]
    assert v.call("GET", "/pins", params={"paper_id": "P2"}).json()["total"] == 0
    for path in ("/pins", "/forbids", v.run_path("/edits")):
        assert v.call("GET", path, v.viewer).status_code == 403
    version = v.state()["version"]
    assert v.call("DELETE", f"/forbids/P2/{holder}").json() == {"deleted": 1}
    assert v.call("DELETE", f"/pins/P1/{spare}").json() == {"deleted": 1}
    assert v.call("DELETE", f"/pins/P1/{spare}").json()["code"] == "not_found"
    assert _standing(v) == (set(), set()) and v.state()["version"] == version
    actions = {e["action"] for e in v.call("GET", "/audit").json()["items"]}
    assert {"pins.delete", "forbids.delete", "draft_rules.promote"} <= actions
