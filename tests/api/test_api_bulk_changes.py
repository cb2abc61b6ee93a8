"""Bulk changes, HotCRP style (docs/page-api.md): a CSV ``paper_id,reviewer_id,action``
previewed row by row (every bad row named with its line), then its valid lines applied with
one version bump, one undoable history entry and one audit entry, the others listed by
line; the preview, the history and the audit log count the same."""

from __future__ import annotations

import csv as csv_module
import io
from typing import Any

from api_helpers import TFIDF, load_venue
from conftest import Api

PARAMS = {"reviewers_per_paper": 1, "max_load": 2, "solver": "flow"}
REVIEWERS = ["Grace_Graph1", "Victor_Vision1", "Rita_Reinforce1", "Lena_Language1"]


class Venue:
    def __init__(self, api: Api):
        self.api = api
        self.venue, self.chair, self.viewer = api.new_venue()
        load_venue(api, self.venue, self.chair)
        job = api.call("POST", f"/venues/{self.venue}/assignments", self.chair, json=PARAMS).json()
        assert job["state"] == "succeeded", job
        self.run = int(job["result"]["assignment_id"])
        self.base = f"/venues/{self.venue}/assignments/{self.run}"

    def pairs(self) -> dict[tuple[str, str], float]:
        items = self.api.call("GET", f"{self.base}/pairs", self.chair).json()["items"]
        return {(p["paper_id"], p["reviewer_id"]): p["score"] for p in items}

    def preview(self, csv: str, **params: Any) -> dict[str, Any]:
        response = self.api.call(
            "POST",
            f"{self.base}/bulk/preview",
            self.chair,
            files={"file": ("changes.csv", csv.encode())},
            params=params,
        )
        assert response.status_code == 200, response.text
        return dict(response.json())

    def apply(self, csv: str, version: int, **form: Any) -> Any:
        return self.api.call(
            "POST",
            f"{self.base}/bulk/apply",
            self.chair,
            files={"file": ("changes.csv", csv.encode())},
            data={"version": str(version), **{k: str(v).lower() for k, v in form.items()}},
        )


def test_a_clean_file_previews_then_applies_all_at_once_and_undoes_at_once(api: Api) -> None:
    v = Venue(api)
    before = v.pairs()
    holder = {p: r for p, r in before}
    newcomer = next(r for r in REVIEWERS if r not in (holder["P4"], "Rita_Reinforce1"))
    csv = (
        "paper_id,reviewer_id,action\n"
        f"P4,{holder['P4']},remove\n"
        f"P4,~{newcomer},add\n"
        "\n"
        f"P2,{holder['P2']},pin\n"
    )
    preview = v.preview(csv)
    assert v.pairs() == before
    assert preview["version"] == 1 and preview["rows"] == 3 and preview["can_apply"] is True
    assert preview["errors"]["total"] == 0 and preview["force_required"] is False
    assert [(a["line"], a["reviewer_id"]) for a in preview["additions"]["items"]] == [(3, newcomer)]
    assert preview["additions"]["items"][0]["score"] is not None
    assert (
        preview["additions"]["items"][0]["paper_title"]
        == "Language model translation with attention"
    )
    assert [(r["line"], r["reviewer_id"]) for r in preview["removals"]["items"]] == [
        (2, holder["P4"])
    ]
    assert [c["line"] for c in preview["constraint_changes"]["items"]] == [5]
    effect = preview["effect"]
    assert effect["added_total"] == 1 and effect["removed_total"] == 1
    assert effect["constraints"]["pins_added"] == 1

    applied = v.apply(csv, version=1, reason="program committee call")
    assert applied.status_code == 200, applied.text
    result = applied.json()
    assert result["assignment"]["version"] == 2
    assert result["edit"]["action"] == "bulk" and result["edit"]["rows"] == 3
    assert result["edit"]["detail"]["source"] == "changes.csv"
    after = v.pairs()
    assert ("P4", newcomer) in after and ("P4", holder["P4"]) not in after
    audit = api.call("GET", f"/venues/{v.venue}/audit", v.chair).json()["items"][0]
    assert audit["action"] == "assignment.bulk"
    assert audit["summary"].startswith("applied 3 bulk changes from changes.csv to run #1")
    # applying the same file again: it was previewed at version 1
    assert v.apply(csv, version=1).json()["code"] == "stale_version"
    undone = api.call("POST", f"{v.base}/undo", v.chair, json={"version": 2})
    assert undone.status_code == 200, undone.text
    assert v.pairs() == before
    assert api.call("GET", f"/venues/{v.venue}/pins", v.chair).json()["total"] == 0


def test_every_bad_row_is_named_with_its_line_and_the_valid_ones_apply(api: Api) -> None:
    v = Venue(api)
    before = v.pairs()
    holder = {p: r for p, r in before}
    other = next(r for r in REVIEWERS if r not in (holder["P1"], "Rita_Reinforce1"))
    csv = (
        f"P1,{other},add\n"
        "P9,Grace_Graph1,add\n"
        "P1,Nobody1,remove\n"
        "P3,Rita_Reinforce1,add\n"
        f"P1,{other},remove\n"
        "P2,Grace_Graph1,shuffle\n"
        "P2,only two cells\n"
        f"P1,{other},add\n"
        f"P2,{next(r for r in REVIEWERS if r != holder['P2'])},remove\n"
    )
    preview = v.preview(csv)
    assert preview["can_apply"] is True and preview["effect"]["added_total"] == 1
    assert (preview["rows"], preview["applied_rows"], preview["skipped_lines"]) == (9, 1, 7)
    errors = {(e["line"], e["code"]) for e in preview["errors"]["items"]}
    assert errors == {
        (2, "not_found"),
        (3, "not_found"),
        (4, "conflict_of_interest"),
        (5, "contradicting_rows"),
        (6, "unknown_action"),
        (7, "malformed_row"),
        (9, "not_assigned"),
    }
    warned = [(w["line"], w["code"]) for w in preview["warnings"]["items"]]
    assert (8, "no_effect") in warned and (1, "would_overfill") in warned
    assert [a["line"] for a in preview["additions"]["items"]] == [1]
    paged = v.preview(csv, limit=2, offset=2)
    assert paged["errors"]["total"] == 7 and len(paged["errors"]["items"]) == 2
    assert v.preview("")["errors"]["items"][0]["code"] == "empty_file"
    applied = v.apply(csv, version=1, force=True)
    assert applied.status_code == 200, applied.text
    assert {(e["line"], e["code"]) for e in applied.json()["skipped"]} == errors
    assert ("P1", other) in v.pairs()
    assert api.call("GET", v.base, v.chair).json()["version"] == 2
    # a file of which no line changes the run: refused, every line named
    nothing = "P9,Grace_Graph1,add\nP2,Grace_Graph1,shuffle\n"
    refused = v.apply(nothing, version=2)
    assert refused.status_code == 422 and refused.json()["code"] == "invalid_rows"
    assert {e["line"] for e in refused.json()["errors"]} == {1, 2}
    assert "line 1" in refused.json()["detail"]


def test_a_file_with_bad_rows_counts_every_line_and_keeps_its_valid_remove(api: Api) -> None:
    """The issue's 5-row file with 3 bad rows: "5 rows", and its valid remove previewed."""
    v = Venue(api)
    holder = {p: r for p, r in v.pairs()}
    csv = (
        "paper_id,reviewer_id,action\n"
        f"P4,{holder['P4']},remove\n"
        "P9,Grace_Graph1,add\n"
        "P2,only two cells\n"
        "P2,Grace_Graph1,shuffle\n"
        f"P1,{holder['P1']},pin\n"
    )
    preview = v.preview(csv)
    assert (preview["rows"], preview["applied_rows"], preview["skipped_lines"]) == (5, 2, 3)
    assert [(r["line"], r["reviewer_id"]) for r in preview["removals"]["items"]] == [
        (2, holder["P4"])
    ]
    assert preview["effect"]["removed_total"] == 1


def test_the_history_and_the_audit_log_count_the_same_pairs(api: Api) -> None:
    """The issue's "2 added" (history) vs "3 added" (audit): a pin of a pair the run
    already holds adds no pair."""
    v = Venue(api)
    holder = {p: r for p, r in v.pairs()}
    extra = [
        (p, next(r for r in REVIEWERS if r not in (holder[p], "Rita_Reinforce1")))
        for p in ("P1", "P2")
    ]
    csv = "".join(f"{p},{r},add\n" for p, r in extra) + f"P4,{holder['P4']},pin\n"
    preview = v.preview(csv)
    assert preview["effect"]["added_total"] == 2 and preview["applied_rows"] == 3
    applied = v.apply(csv, version=1, force=True)
    assert applied.status_code == 200, applied.text
    edit = applied.json()["edit"]
    history = api.call("GET", f"{v.base}/edits", v.chair).json()["items"][0]
    audit = api.call("GET", f"/venues/{v.venue}/audit", v.chair).json()["items"][0]
    assert audit["action"] == "assignment.bulk"
    assert edit["detail"]["added"] == history["detail"]["added"] == audit["detail"]["added"] == 2
    assert audit["detail"]["rows"] == history["rows"] == 3
    assert "(2 added, 0 removed)" in audit["summary"]


def test_additions_over_limits_need_force(api: Api) -> None:
    v = Venue(api)
    holder = {p: r for p, r in v.pairs()}
    extra = next(r for r in REVIEWERS if r not in (holder["P1"], "Rita_Reinforce1"))
    csv = f"P1,{extra},add\n"
    preview = v.preview(csv)
    assert preview["can_apply"] is True and preview["force_required"] is True
    forced = [w for w in preview["warnings"]["items"] if w["force_required"]]
    assert all(w["line"] == 1 for w in forced)
    assert any("over its demand of 1 (lines 1)" in w["message"] for w in forced)
    refused = v.apply(csv, version=1)
    assert refused.status_code == 409
    assert refused.json()["code"] == "would_overfill" and refused.json()["force_allowed"] is True
    forced = v.apply(csv, version=1, force=True)
    assert forced.status_code == 200, forced.text
    assert ("P1", extra) in v.pairs()
    summary = forced.json()["assignment"]["summary"]
    assert summary["constraints"]["satisfied"] is False


def test_non_candidate_additions_are_scored_at_once_as_one_by_one(api: Api) -> None:
    """A file's pairs the run did not store are scored in one call of the saved model:
    each previewed and applied score is the pair's own score (as its explanation gives
    it)."""
    v = Venue(api)
    job = api.call(
        "POST", f"/venues/{v.venue}/affinity/jobs", v.chair, json={"config": TFIDF, "top_n": 2}
    ).json()
    assert job["state"] == "succeeded", job
    job = api.call("POST", f"/venues/{v.venue}/assignments", v.chair, json=PARAMS).json()
    v.run = int(job["result"]["assignment_id"])
    v.base = f"/venues/{v.venue}/assignments/{v.run}"
    stored = {
        (r["paper_id"], r["reviewer_id"])
        for r in csv_module.DictReader(
            io.StringIO(api.call("GET", f"/venues/{v.venue}/affinity/export", v.chair).text)
        )
    }
    held = v.pairs()
    fresh = [
        (p, r)
        for p in ("P1", "P2", "P3", "P4")
        for r in REVIEWERS
        if (p, r) not in stored and (p, r) not in held
    ][:5]
    assert len(fresh) >= 3
    one_by_one = {
        (p, r): api.call(
            "GET",
            f"/venues/{v.venue}/affinity/pairs/{p}/{r}",
            v.chair,
            params={"explain": "true"},
        ).json()["score"]
        for p, r in fresh
    }
    csv = "".join(f"{p},{r},add\n" for p, r in fresh)
    preview = v.preview(csv)
    previewed = {
        (a["paper_id"], a["reviewer_id"]): a["score"] for a in preview["additions"]["items"]
    }
    assert previewed == one_by_one
    applied = v.apply(csv, version=preview["version"], force=True)
    assert applied.status_code == 200, applied.text
    after = v.pairs()
    assert {pair: after[pair] for pair in fresh} == one_by_one
