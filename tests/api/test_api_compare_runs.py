"""Runs that say what they are (numbers, names, notes, lineage, parameters) and runs
compared pair by pair (docs/page-api.md)."""

from __future__ import annotations

from typing import Any

import pytest
from api_helpers import load_venue
from conftest import Api

PARAMS = {"reviewers_per_paper": 1, "max_load": 2, "solver": "flow"}


def _ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def test_a_re_solve_is_numbered_named_derived_and_compared_pair_by_pair(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    load_venue(api, venue, chair)
    v = f"/venues/{venue}"
    job = _ok(
        api.call("POST", f"{v}/assignments", chair, json={**PARAMS, "name": "first try"}), 202
    )
    assert job["number"] == 2 and job["parameters_summary"] == "1 per paper, loads 0-2, solver flow"
    first = _ok(api.call("GET", f"{v}/assignments/{job['result']['assignment_id']}", chair))
    assert (first["number"], first["name"], first["note"], first["derived_from"]) == (
        1,
        "first try",
        "",
        None,
    )
    assert first["job_number"] == 2 and first["parameters_summary"].startswith("1 per paper")
    assert "bid_weight" not in first["parameters"] and "alternates" not in first["parameters"]
    labelled = _ok(
        api.call("PATCH", f"{v}/assignments/{first['id']}", chair, json={"note": "loads too tight"})
    )
    assert (labelled["name"], labelled["note"], labelled["version"]) == (
        "first try",
        "loads too tight",
        1,
    )
    assert (
        api.call("PATCH", f"{v}/assignments/{first['id']}", viewer, json={"name": "x"}).status_code
        == 403
    )
    pairs = _ok(api.call("GET", f"{v}/assignments/{first['id']}/pairs", chair))["items"]
    paper, reviewer, score = pairs[0]["paper_id"], pairs[0]["reviewer_id"], pairs[0]["score"]
    # a conflict found after the solve: the re-solve must drop the pair
    conflict = f"{paper},{reviewer},-1\n".encode()
    assert (
        api.call(
            "POST", f"{v}/constraints/upload", chair, files={"file": ("c.csv", conflict)}
        ).status_code
        == 200
    )
    resolved = _ok(
        api.call("POST", f"{v}/assignments/{first['id']}/resolve", chair, json={"name": "second"}),
        202,
    )
    assert resolved["state"] == "succeeded" and resolved["number"] == 3
    second = _ok(api.call("GET", f"{v}/assignments/{resolved['result']['assignment_id']}", chair))
    assert second["number"] == 2 and second["name"] == "second"
    assert second["derived_from"] == {
        "kind": "re-solve",
        "assignment_id": first["id"],
        "assignment_number": 1,
        "text": "re-solve of #1",
    }
    assert second["parameters"] == first["parameters"]

    base = f"{v}/assignments/{first['id']}/compare/{second['id']}"
    summary = _ok(api.call("GET", base, chair))
    assert summary["a"]["number"] == 1 and summary["b"]["name"] == "second"
    assert summary["removed"] >= 1 and summary["pairs_a"] == summary["shared"] + summary["removed"]
    assert summary["pairs_b"] == summary["shared"] + summary["added"]
    removed = _ok(api.call("GET", f"{base}/pairs", chair, params={"change": "removed"}))
    assert removed["total"] == summary["removed"]
    gone = next(
        i for i in removed["items"] if (i["paper_id"], i["reviewer_id"]) == (paper, reviewer)
    )
    assert gone["score"] == pytest.approx(score) and gone["change"] == "removed"
    assert gone["paper_title"] and gone["reviewer_name"]
    everything = _ok(api.call("GET", f"{base}/pairs", chair, params={"limit": 1}))
    assert everything["total"] == summary["added"] + summary["removed"]
    assert len(everything["items"]) == 1
    papers = _ok(api.call("GET", f"{base}/papers", chair))
    assert papers["total"] == summary["papers_changed"]
    changed = next(p for p in papers["items"] if p["paper_id"] == paper)
    assert reviewer in [r["reviewer_id"] for r in changed["removed"]]
    assert len(changed["added"]) >= 1
    reviewers = _ok(api.call("GET", f"{base}/reviewers", chair))
    assert reviewers["total"] == summary["reviewers_changed"]
    mine = next(r for r in reviewers["items"] if r["reviewer_id"] == reviewer)
    assert paper in [p["paper_id"] for p in mine["removed"]]
    assert mine["load_a"] - len(mine["removed"]) + len(mine["added"]) == mine["load_b"]
    same = _ok(api.call("GET", f"{v}/assignments/{second['id']}/compare/{second['id']}", chair))
    assert (same["added"], same["removed"], same["shared"]) == (0, 0, summary["pairs_b"])
    # viewers see only the live run, compared with itself
    assert api.call("GET", base, viewer).status_code == 404

    # a rerun of the solve job is labelled as such
    rerun = _ok(api.call("POST", f"{v}/jobs/{resolved['id']}/rerun", chair), 202)
    third = _ok(api.call("GET", f"{v}/assignments/{rerun['result']['assignment_id']}", chair))
    assert third["derived_from"]["text"] == f"rerun of job #{resolved['number']}"
    assert third["number"] == 3 and third["name"] == "second"
    summaries = [e["summary"] for e in _ok(api.call("GET", f"{v}/audit", chair))["items"]]
    assert any(s.startswith("relabelled run #1") for s in summaries), summaries
    assert any(s.startswith("uploaded constraints from c.csv") for s in summaries), summaries


def test_job_logs_are_entries_and_failures_have_codes(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    v = f"/venues/{venue}"
    affinity = _ok(api.call("GET", f"{v}/jobs", chair))["items"][0]
    assert affinity["number"] == 1 and affinity["kind"] == "affinity"
    assert all(e["level"] in ("info", "warning", "error") for e in affinity["entries"])
    assert affinity["entries"][0]["time"] and affinity["entries"][-1]["message"] == "done"
    # the config a job printed is words, not a Python dict
    assert not any("{" in e["message"] for e in affinity["entries"]), affinity["entries"]
    assert "method tfidf" in affinity["parameters_summary"]
    # P1 needs two reviewers that are not in conflict: Rita is the only reviewer left... the
    # solve is infeasible once every other candidate of P3 is forbidden
    pairs = {
        i["reviewer_id"]
        for i in _ok(api.call("GET", f"{v}/papers/P3/reviewers", chair, params={"limit": 10}))[
            "items"
        ]
    }
    constraints = "".join(f"P3,{r},-1\n" for r in sorted(pairs)).encode()
    assert (
        api.call(
            "POST", f"{v}/constraints/upload", chair, files={"file": ("c.csv", constraints)}
        ).status_code
        == 200
    )
    failed = _ok(api.call("POST", f"{v}/assignments", chair, json=PARAMS), 202)
    assert failed["state"] == "failed" and failed["error_code"] == "infeasible"
    errors = [e for e in failed["entries"] if e["level"] == "error"]
    assert errors and any("P3" in e["message"] for e in errors)


def test_readable_log_renders_old_dict_lines() -> None:
    from reviewer_recommender.services.runinfo import log_entries, readable

    assert readable("4 papers, config {'method': 'tfidf', 'top_k': None, 'w': 0.5}") == (
        "4 papers, config method tfidf, w 0.5"
    )
    assert readable("a {broken dict") == "a {broken dict"
    entries = log_entries(
        [
            "2026-01-01T00:00:00+00:00 warning: careful",
            "no stamp",
            "2026-01-01T00:00:01+00:00 boom",
        ],
        error="boom",
    )
    assert [(e["level"], e["message"]) for e in entries] == [
        ("warning", "careful"),
        ("info", "no stamp"),
        ("error", "boom"),
    ]
    assert entries[1]["time"] is None


def _every(api: Api, chair: str, path: str, **params: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    while True:
        page = _ok(api.call("GET", path, chair, params={**params, "offset": len(items)}))
        items += page["items"]
        if len(items) >= page["total"]:
            assert len(items) == page["total"]
            return items


def test_comparisons_agree_with_both_runs_pair_lists(api: Api) -> None:
    """Summary, changed pairs, papers and reviewers (found by the database, without reading
    the shared pairs) against a model built from each run's whole pair list."""
    venue, chair, _ = api.new_venue()
    load_venue(api, venue, chair)
    v = f"/venues/{venue}"
    runs = []
    for params in ({**PARAMS, "max_load": 1}, {**PARAMS, "reviewers_per_paper": 2, "max_load": 3}):
        job = _ok(api.call("POST", f"{v}/assignments", chair, json=params), 202)
        runs.append(job["result"]["assignment_id"])
    pairs = [
        {
            (p["paper_id"], p["reviewer_id"]): p["score"]
            for p in _every(api, chair, f"{v}/assignments/{r}/pairs", limit=3)
        }
        for r in runs
    ]
    a, b = pairs
    removed, added = set(a) - set(b), set(b) - set(a)
    assert removed and added  # the two solves differ
    base = f"{v}/assignments/{runs[0]}/compare/{runs[1]}"
    summary = _ok(api.call("GET", base, chair))
    assert (summary["pairs_a"], summary["pairs_b"]) == (len(a), len(b))
    assert (summary["shared"], summary["added"], summary["removed"]) == (
        len(set(a) & set(b)),
        len(added),
        len(removed),
    )
    assert summary["papers_changed"] == len({p for p, _ in removed | added})
    assert summary["reviewers_changed"] == len({r for _, r in removed | added})
    assert summary["objective_a"] == pytest.approx(sum(a.values()))
    assert summary["objective_change"] == pytest.approx(sum(b.values()) - sum(a.values()))
    assert summary["mean_score_b"] == pytest.approx(sum(b.values()) / len(b))
    listed = _every(api, chair, f"{base}/pairs", change="all", limit=2)
    assert [(i["paper_id"], i["reviewer_id"]) for i in listed] == sorted(removed | added)
    for item in listed:
        key = (item["paper_id"], item["reviewer_id"])
        assert item["change"] == ("added" if key in added else "removed")
        assert item["score"] == pytest.approx((b if key in added else a)[key])
    only_added = _every(api, chair, f"{base}/pairs", change="added")
    assert {(i["paper_id"], i["reviewer_id"]) for i in only_added} == added
    papers = _every(api, chair, f"{base}/papers", limit=2)
    assert [p["paper_id"] for p in papers] == sorted({p for p, _ in removed | added})
    for paper in papers:
        pid = paper["paper_id"]
        assert {r["reviewer_id"] for r in paper["added"]} == {r for p, r in added if p == pid}
        assert {r["reviewer_id"] for r in paper["removed"]} == {r for p, r in removed if p == pid}
        assert paper["kept"] == len({r for p, r in set(a) & set(b) if p == pid})
        mine = [s for (p, _), s in a.items() if p == pid]
        assert paper["mean_score_a"] == pytest.approx(sum(mine) / len(mine))
    reviewers = _every(api, chair, f"{base}/reviewers", limit=2)
    assert [r["reviewer_id"] for r in reviewers] == sorted({r for _, r in removed | added})
    for reviewer in reviewers:
        rid = reviewer["reviewer_id"]
        assert reviewer["load_a"] == sum(1 for _, r in a if r == rid)
        assert reviewer["load_b"] == sum(1 for _, r in b if r == rid)
        assert {p["paper_id"] for p in reviewer["added"]} == {p for p, r in added if r == rid}
        assert {p["paper_id"] for p in reviewer["removed"]} == {p for p, r in removed if r == rid}
    # a page past the end still counts them all
    for path, count in (
        ("pairs", summary["added"] + summary["removed"]),
        ("papers", summary["papers_changed"]),
        ("reviewers", summary["reviewers_changed"]),
    ):
        past = _ok(api.call("GET", f"{base}/{path}", chair, params={"offset": count + 5}))
        assert (past["items"], past["total"]) == ([], count)
