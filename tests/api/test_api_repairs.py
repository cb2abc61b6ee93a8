"""Repairs that improve a paper (issue 23, point 2), through HTTP on SQLite and PostgreSQL:
with every reviewer at their quota a paper has no alternates, yet the repairs list the
better candidates with the exact swap chain that brings each in and its cost elsewhere;
applying one changes the draft by exactly that, as one undoable change."""

from __future__ import annotations

from typing import Any

import pytest
from api_helpers import TFIDF
from conftest import Api
from tight_venue import PARAMS, REVIEWERS, SUBMISSIONS


class Draft:
    def __init__(self, api: Api):
        self.api = api
        self.venue, self.chair, self.viewer = api.new_venue()
        for kind, body in (("reviewers", REVIEWERS), ("submissions", SUBMISSIONS)):
            assert self.call("POST", f"/{kind}", json=body).status_code == 200
        scored = self.call("POST", "/affinity/jobs", json={"config": TFIDF}).json()
        assert scored["state"] == "succeeded", scored
        job = self.call("POST", "/assignments", json=PARAMS).json()
        assert job["state"] == "succeeded", job
        self.run = int(job["result"]["assignment_id"])

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.api.call(method, f"/venues/{self.venue}{path}", self.chair, **kwargs)

    def pairs(self) -> dict[tuple[str, str], float]:
        items = self.call("GET", f"/assignments/{self.run}/pairs", params={"limit": 100}).json()
        return {(p["paper_id"], p["reviewer_id"]): p["score"] for p in items["items"]}

    def repairs(self, paper: str) -> dict[str, Any]:
        response = self.call("GET", f"/assignments/{self.run}/papers/{paper}/repairs")
        assert response.status_code == 200, response.text
        return dict(response.json())


def _with_repairs(d: Draft) -> tuple[str, dict[str, Any], float]:
    for paper in ("P1", "P2", "P3"):
        found = d.repairs(paper)
        feasible = [i for i in found["items"] if i["feasible"]]
        if feasible:
            return paper, feasible[0], float(found["weakest_score"])
    pytest.fail("no paper of the tight draft has a repair")


def test_a_tight_draft_has_repairs_where_it_has_no_alternates(api: Api) -> None:
    d = Draft(api)
    paper, repair, weakest = _with_repairs(d)
    alternates = d.call(
        "GET", f"/assignments/{d.run}/papers/{paper}", params={"alternates": 5}
    ).json()["alternates"]
    # the issue: no alternate can raise the paper (the better candidates are at their quota)
    assert all(a["score"] <= weakest for a in alternates)
    assert repair["paper_change"] > 0
    assert repair["net_change"] == pytest.approx(
        repair["paper_change"] + repair["elsewhere_change"]
    )
    assert repair["load"] == repair["max_load"]  # the candidate is at their quota
    assert any(m["paper_id"] != paper for m in repair["removed"])  # a chain across papers
    assert repair["reviewer_id"] in {m["reviewer_id"] for m in repair["added"]}
    before = d.pairs()
    version = d.call("GET", f"/assignments/{d.run}").json()["version"]
    body = {"reviewer_id": repair["reviewer_id"], "version": version}
    preview = d.call("POST", f"/assignments/{d.run}/papers/{paper}/repairs/preview", json=body)
    assert preview.status_code == 200, preview.text
    assert preview.json()["objective_change"] == pytest.approx(repair["net_change"])
    assert d.pairs() == before
    applied = d.call(
        "POST", f"/assignments/{d.run}/papers/{paper}/repairs", json={**body, "reason": "weak"}
    )
    assert applied.status_code == 200, applied.text
    after = d.pairs()
    assert sum(after.values()) - sum(before.values()) == pytest.approx(repair["net_change"])
    mine = sum(s for (p, _r), s in after.items() if p == paper) - sum(
        s for (p, _r), s in before.items() if p == paper
    )
    assert mine == pytest.approx(repair["paper_change"])
    assert set(after) - set(before) == {(m["paper_id"], m["reviewer_id"]) for m in repair["added"]}
    state = d.call("GET", f"/assignments/{d.run}").json()
    assert state["summary"]["constraints"]["satisfied"] is True
    history = d.call("GET", f"/assignments/{d.run}/edits").json()["items"]
    assert history[0]["action"] == "repair"
    audit = d.call("GET", "/audit", params={"limit": 20}).json()["items"]
    assert any(e["action"] == "assignment.repair" for e in audit)
    undone = d.call("POST", f"/assignments/{d.run}/undo", json={"version": state["version"]})
    assert undone.status_code == 200, undone.text
    assert d.pairs() == before


def test_repair_refusals(api: Api) -> None:
    d = Draft(api)
    paper, repair, _weakest = _with_repairs(d)
    path = f"/assignments/{d.run}/papers/{paper}/repairs"
    holder = next(r for (p, r) in d.pairs() if p == paper)
    useless = d.call("POST", f"{path}/preview", json={"reviewer_id": holder})
    assert useless.status_code == 422, useless.text
    stale = d.call("POST", path, json={"reviewer_id": repair["reviewer_id"], "version": 99})
    assert stale.status_code == 409 and stale.json()["code"] == "stale_version"
    viewer = d.api.call("GET", f"/venues/{d.venue}{path}", d.viewer)
    assert viewer.status_code in (403, 404)
    assert d.call("GET", f"/assignments/{d.run}/papers/nope/repairs").status_code == 404


def test_reoptimise_these_papers_keep_the_rest_as_a_new_draft(api: Api) -> None:
    d = Draft(api)
    _paper, repair, _weakest = _with_repairs(d)
    before = d.pairs()
    # the neighbourhood of the repair: the paper and the papers the pairs move on
    papers = sorted({m["paper_id"] for m in (*repair["added"], *repair["removed"])})
    kept = {k: s for k, s in before.items() if k[0] not in papers}
    made = d.call("POST", f"/assignments/{d.run}/reoptimise", json={"paper_ids": papers})
    assert made.status_code == 201, made.text
    body = made.json()
    new = body["assignment"]["id"]
    assert new != d.run and body["assignment"]["state"] == "draft"
    assert body["assignment"]["derived_from"]["kind"] == "re-optimise"
    items = d.call("GET", f"/assignments/{new}/pairs", params={"limit": 100}).json()["items"]
    after = {(p["paper_id"], p["reviewer_id"]): p["score"] for p in items}
    assert {k: s for k, s in after.items() if k[0] not in papers} == kept
    # the best of those papers under the kept pairs: never below what they had
    assert body["objective_change"] >= -1e-9
    assert sum(after.values()) - sum(before.values()) == pytest.approx(body["objective_change"])
    assert d.pairs() == before  # the original draft is untouched
    check = d.call("GET", f"/assignments/{new}/check").json()
    assert check["total"] == 0
    bad = d.call("POST", f"/assignments/{d.run}/reoptimise", json={"paper_ids": ["nope"]})
    assert bad.status_code == 422 and "nope" in bad.text
    audit = d.call("GET", "/audit", params={"limit": 20}).json()["items"]
    assert any(e["action"] == "assignment.reoptimise" for e in audit)
