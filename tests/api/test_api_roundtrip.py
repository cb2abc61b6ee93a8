"""Upload -> compute -> inspect -> assign -> edit -> deploy -> export, through HTTP."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import pytest
from api_helpers import REVIEWERS, SUBMISSIONS, TFIDF, load_venue
from conftest import Api

DATA = Path(__file__).resolve().parents[2] / "data"


def read_csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_upload_compute_assign_export(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    reviewers_file = json.dumps(REVIEWERS).encode()
    response = api.call(
        "POST",
        f"/venues/{venue}/reviewers/upload",
        chair,
        files={"file": ("reviewers.json", reviewers_file, "application/json")},
    )
    assert response.status_code == 200, response.text
    assert response.json() == {
        "created": 4,
        "updated": 0,
        "total": 4,
        "no_publications": [],
        "withdrawn": 0,
        "left_pool": 0,
        "skipped": [],
        "skipped_lines": 0,
    }
    response = api.call("POST", f"/venues/{venue}/submissions", chair, json=SUBMISSIONS)
    assert response.json() == {
        "created": 4,
        "updated": 0,
        "total": 4,
        "no_publications": [],
        "withdrawn": 0,
        "left_pool": 0,
        "skipped": [],
        "skipped_lines": 0,
    }

    # re-upload of the same ids updates instead of duplicating
    changed = [{**SUBMISSIONS[0], "title": "Graph neural networks on molecular graphs, revised"}]
    response = api.call("POST", f"/venues/{venue}/submissions", chair, json=changed)
    assert response.json() == {
        "created": 0,
        "updated": 1,
        "total": 4,
        "no_publications": [],
        "withdrawn": 0,
        "left_pool": 0,
        "skipped": [],
        "skipped_lines": 0,
    }
    paper = api.call("GET", f"/venues/{venue}/submissions/P1", viewer).json()
    assert paper["title"].endswith("revised")

    job = api.call("POST", f"/venues/{venue}/affinity/jobs", chair, json={"config": TFIDF}).json()
    assert job["state"] == "succeeded", job
    assert job["progress"] == 1.0
    run = api.call("GET", f"/venues/{venue}/affinity", viewer).json()
    assert run["n_papers"] == 4 and run["n_reviewers"] == 4 and not run["stale"]
    assert sum(run["statistics"]["histogram"]["counts"]) == 16
    assert run["statistics"]["count"] == 16

    top = api.call(
        "GET", f"/venues/{venue}/papers/P1/reviewers", viewer, params={"limit": 2}
    ).json()
    assert top["total"] == 4 and len(top["items"]) == 2
    assert top["items"][0]["reviewer_id"] == "Grace_Graph1"
    assert top["items"][0]["score"] >= top["items"][1]["score"]
    # Rita Reinforce wrote P3: an author conflict, marked in the lists for chairs only
    p3 = api.call("GET", f"/venues/{venue}/papers/P3/reviewers", chair).json()["items"]
    rita = next(item for item in p3 if item["reviewer_id"] == "Rita_Reinforce1")
    assert rita["conflict"] and "author" in rita["conflict"][0]
    p3 = api.call("GET", f"/venues/{venue}/papers/P3/reviewers", viewer).json()["items"]
    rita = next(item for item in p3 if item["reviewer_id"] == "Rita_Reinforce1")
    assert rita["conflict"] is None and rita["bid"] is None
    papers = api.call("GET", f"/venues/{venue}/reviewers/Victor_Vision1/papers", viewer).json()
    assert papers["items"][0]["paper_id"] == "P2"

    pair = api.call("GET", f"/venues/{venue}/affinity/pairs/P2/Victor_Vision1", viewer).json()
    assert pair["score"] == pytest.approx(papers["items"][0]["score"], abs=1e-6)
    explanation = pair["explanation"]
    assert explanation["publications"] and explanation["shared_terms"]
    assert {"segmentation", "image"} & {t["term"] for t in explanation["shared_terms"]}
    missing = api.call("GET", f"/venues/{venue}/affinity/pairs/P2/nobody", viewer)
    assert missing.status_code == 404 and "nobody" in missing.json()["detail"]

    job = api.call(
        "POST",
        f"/venues/{venue}/assignments",
        chair,
        json={"reviewers_per_paper": 2, "min_load": 1, "max_load": 2, "solver": "flow"},
    ).json()
    assert job["state"] == "succeeded", job
    assignment_id = job["result"]["assignment_id"]
    assignment = api.call("GET", f"/venues/{venue}/assignments/{assignment_id}", chair).json()
    assert assignment["state"] == "draft"
    assert assignment["summary"]["pairs_assigned"] == 8
    exported = api.call("GET", f"/venues/{venue}/assignments/{assignment_id}/export", chair)
    assert exported.headers["content-type"].startswith("text/csv")
    rows = read_csv(exported.text)
    assert list(rows[0]) == ["paper_id", "reviewer_id", "score"]
    assert len(rows) == 8
    assert all(sum(r["paper_id"] == p["id"] for r in rows) == 2 for p in SUBMISSIONS)
    loads = {
        r["id"].lstrip("~"): sum(row["reviewer_id"] == r["id"].lstrip("~") for row in rows)
        for r in REVIEWERS
    }
    assert set(loads.values()) == {2}
    assert ("P3", "Rita_Reinforce1") not in {(r["paper_id"], r["reviewer_id"]) for r in rows}
    as_json = api.call(
        "GET",
        f"/venues/{venue}/assignments/{assignment_id}/export",
        chair,
        params={"format": "json"},
    ).json()
    assert {(r["paper_id"], r["reviewer_id"]) for r in as_json} == {
        (r["paper_id"], r["reviewer_id"]) for r in rows
    }

    stats = api.call("GET", f"/venues/{venue}/assignments/{assignment_id}/stats", chair).json()
    assert stats["load_histogram"] == {"2": 4}
    assert stats["unassigned_reviewers"] == [] and stats["papers_below_demand"] == 0
    assert stats["papers"]["total"] == 4
    assert all(
        p["assigned"] == 2 and p["min_score"] <= p["mean_score"] for p in stats["papers"]["items"]
    )
    # every paper's scores in one answer (the page's charts), in the order of the rows
    scores = stats["paper_scores"]
    assert scores["min"] == [round(p["min_score"], 4) for p in stats["papers"]["items"]]
    assert scores["mean"] == [round(p["mean_score"], 4) for p in stats["papers"]["items"]]

    affinity_rows = read_csv(api.call("GET", f"/venues/{venue}/affinity/export", viewer).text)
    assert (
        list(affinity_rows[0]) == ["paper_id", "reviewer_id", "score"] and len(affinity_rows) == 16
    )
    conflict_rows = read_csv(api.call("GET", f"/venues/{venue}/conflicts/export", chair).text)
    assert api.call("GET", f"/venues/{venue}/conflicts/export", viewer).status_code == 403
    assert {"paper_id": "P3", "reviewer_id": "Rita_Reinforce1", "constraint": "-1"} in conflict_rows

    # a later upload makes the run stale (scores were computed on the old corpus)
    api.call("POST", f"/venues/{venue}/submissions", chair, json=changed)
    assert api.call("GET", f"/venues/{venue}/affinity", viewer).json()["stale"] is True


def test_edits_resolve_and_deploy(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    load_venue(api, venue, chair)
    # store only the top 2 per paper and per reviewer: the pin below is not among them
    job = api.call(
        "POST", f"/venues/{venue}/affinity/jobs", chair, json={"config": TFIDF, "top_n": 2}
    ).json()
    assert job["state"] == "succeeded"
    stored = read_csv(api.call("GET", f"/venues/{venue}/affinity/export", chair).text)
    assert ("P2", "Lena_Language1") not in {(r["paper_id"], r["reviewer_id"]) for r in stored}
    params = {"reviewers_per_paper": 1, "max_load": 2, "solver": "flow"}
    job = api.call("POST", f"/venues/{venue}/assignments", chair, json=params).json()
    draft = job["result"]["assignment_id"]
    base = f"/venues/{venue}/assignments/{draft}"
    pairs = {
        (p["paper_id"], p["reviewer_id"])
        for p in api.call("GET", f"{base}/pairs", chair).json()["items"]
    }
    assert ("P1", "Grace_Graph1") in pairs

    # drafts are invisible to viewers
    assert api.call("GET", base, viewer).status_code == 404
    assert api.call("GET", f"/venues/{venue}/assignments", viewer).json()["total"] == 0

    # pin an off-diagonal pair (above P2's demand of 1: forced), forbid a chosen one, swap
    off_diagonal = {"paper_id": "P2", "reviewer_id": "Lena_Language1"}
    assert api.call("POST", f"{base}/pin", chair, json=off_diagonal).status_code == 409
    pinned = api.call("POST", f"{base}/pin", chair, json={**off_diagonal, "force": True})
    assert pinned.status_code == 200, pinned.text
    assert pinned.json()["pinned"] is True
    forbidden = api.call(
        "POST",
        f"{base}/forbid",
        chair,
        json={"paper_id": "P2", "reviewer_id": "Victor_Vision1", "reason": "asked"},
    )
    assert forbidden.status_code == 200 and forbidden.json()["summary"]["edited"] is True
    swapped = api.call(
        "POST",
        f"{base}/swap",
        chair,
        json={
            "paper_id": "P4",
            "remove_reviewer_id": "Lena_Language1",
            "add_reviewer_id": "Grace_Graph1",
        },
    )
    assert swapped.status_code == 200, swapped.text
    conflict = api.call(
        "POST", f"{base}/pin", chair, json={"paper_id": "P3", "reviewer_id": "Rita_Reinforce1"}
    )
    assert conflict.status_code == 409 and "conflict" in conflict.json()["detail"]
    after = {
        (p["paper_id"], p["reviewer_id"])
        for p in api.call("GET", f"{base}/pairs", chair).json()["items"]
    }
    assert ("P2", "Lena_Language1") in after and ("P2", "Victor_Vision1") not in after
    # the pinned pair's score was computed on demand and is now stored (a requested pair)
    stored = read_csv(api.call("GET", f"/venues/{venue}/affinity/export", chair).text)
    assert ("P2", "Lena_Language1") in {(r["paper_id"], r["reviewer_id"]) for r in stored}
    assert ("P4", "Grace_Graph1") in after and ("P4", "Lena_Language1") not in after

    # the draft's pin and forbid are its own until promoted to venue rules
    promoted = api.call("POST", f"{base}/rules/promote", chair, json={})
    assert promoted.status_code == 200, promoted.text
    # re-solve: the promoted pin is forced, the promoted forbid is a conflict
    job = api.call("POST", f"/venues/{venue}/assignments", chair, json=params).json()
    assert job["state"] == "succeeded", job
    resolved = job["result"]["assignment_id"]
    new_pairs = {
        (p["paper_id"], p["reviewer_id"])
        for p in api.call("GET", f"/venues/{venue}/assignments/{resolved}/pairs", chair).json()[
            "items"
        ]
    }
    assert ("P2", "Lena_Language1") in new_pairs
    assert ("P2", "Victor_Vision1") not in new_pairs

    version = api.call("GET", f"/venues/{venue}/assignments/{resolved}", chair).json()["version"]
    deployed = api.call(
        "POST",
        f"/venues/{venue}/assignments/{resolved}/deploy",
        chair,
        json={"assignment_id": resolved, "version": version},
    ).json()
    assert deployed["state"] == "live" and deployed["deployed_by"] == f"chair@{venue}"
    assert api.call("GET", f"/venues/{venue}/assignments/{resolved}", viewer).status_code == 200
    listing = api.call("GET", f"/venues/{venue}/assignments", viewer).json()
    assert [a["id"] for a in listing["items"]] == [resolved]
    again = api.call(
        "POST",
        f"/venues/{venue}/assignments/{resolved}/pin",
        chair,
        json={"paper_id": "P1", "reviewer_id": "Grace_Graph1"},
    )
    assert again.status_code == 409

    audit = api.call("GET", f"/venues/{venue}/audit", chair, params={"limit": 100}).json()
    actions = [entry["action"] for entry in audit["items"]]
    for action in (
        "assignment.pin",
        "assignment.forbid",
        "assignment.swap",
        "assignment.deploy",
        "reviewers.upload",
        "job.assignment.start",
    ):
        assert action in actions
    assert all(entry["actor"] for entry in audit["items"])
    # a viewer reads who published what, and nothing of the edits before it
    public = api.call("GET", f"/venues/{venue}/audit", viewer).json()["items"]
    assert [(e["action"], e["actor"], e["detail"]) for e in public] == [
        (
            "assignment.deploy",
            f"chair@{venue}",
            {
                "assignment_id": resolved,
                "version": version,
                "previous_live_id": None,
                "rollback": False,
            },
        )
    ]


def test_infeasible_and_unknown_ids(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    response = api.call(
        "POST",
        f"/venues/{venue}/assignments",
        chair,
        json={"reviewers_per_paper": 3, "max_load": 1},
    )
    assert response.status_code == 409 and "infeasible" in response.json()["detail"]
    # capacity suffices but the author conflict leaves P3 with too few reviewers
    job = api.call(
        "POST",
        f"/venues/{venue}/assignments",
        chair,
        json={"reviewers_per_paper": 4, "max_load": 4, "solver": "flow"},
    ).json()
    assert job["state"] == "failed" and job["error"].startswith("infeasible")
    assert "P3" in job["error"]
    assert api.call("GET", f"/venues/{venue}/jobs/999999", chair).status_code == 404
    assert api.call("GET", f"/venues/{venue}/assignments/999999", chair).status_code == 404
    bad_solver = api.call("POST", f"/venues/{venue}/assignments", chair, json={"solver": "magic"})
    assert bad_solver.status_code == 422 and "magic" in bad_solver.json()["detail"]


@pytest.mark.skipif(
    not (DATA / "demo-reviewers" / "archives").is_dir()
    or not (DATA / "iclr2026" / "submissions.json").is_file(),
    reason="sample data not present",
)
def test_demo_data_round_trip(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as bundle:
        for path in sorted((DATA / "demo-reviewers" / "archives").glob("*.jsonl")):
            bundle.write(path, path.name)
    response = api.call(
        "POST",
        f"/venues/{venue}/reviewers/upload",
        chair,
        files={"file": ("archives.zip", archive.getvalue(), "application/zip")},
    )
    assert response.status_code == 200, response.text
    assert response.json()["total"] == 27
    submissions = (DATA / "iclr2026" / "submissions.json").read_bytes()
    response = api.call(
        "POST",
        f"/venues/{venue}/submissions/upload",
        chair,
        files={"file": ("submissions.json", submissions, "application/json")},
    )
    assert response.json()["total"] == 76
    # candidates are the stored pairs: keep every reviewer of every paper here
    job = api.call(
        "POST", f"/venues/{venue}/affinity/jobs", chair, json={"config": TFIDF, "top_n": 27}
    ).json()
    assert job["state"] == "succeeded", job
    job = api.call(
        "POST",
        f"/venues/{venue}/assignments",
        chair,
        json={"reviewers_per_paper": 3, "max_load": 9},
    ).json()
    assert job["state"] == "succeeded", job["error"]
    rows = read_csv(
        api.call(
            "GET", f"/venues/{venue}/assignments/{job['result']['assignment_id']}/export", chair
        ).text
    )
    assert len(rows) == 76 * 3
    loads: dict[str, int] = {}
    for row in rows:
        loads[row["reviewer_id"]] = loads.get(row["reviewer_id"], 0) + 1
    assert max(loads.values()) <= 9


def test_openapi_docs_are_served(api: Api) -> None:
    assert api.client.get("/docs").status_code == 200
    schema = api.client.get("/openapi.json").json()
    assert "/venues/{venue_id}/assignments/{assignment_id}/export" in schema["paths"]


def test_chair_page_is_served_at_root(api: Api) -> None:
    page = api.client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert '<script type="module"' in page.text
    script = api.client.get("/static/app.js")
    assert script.status_code == 200 and "import" in script.text


def _pairs(api: Api, venue: str, token: str, job: dict[str, object]) -> set[tuple[str, str]]:
    assert job["state"] == "succeeded", job
    assignment = job["result"]["assignment_id"]  # type: ignore[index]
    rows = read_csv(api.call("GET", f"/venues/{venue}/assignments/{assignment}/export", token).text)
    return {(r["paper_id"], r["reviewer_id"]) for r in rows}


def test_side_constraints(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    base = {"reviewers_per_paper": 2, "max_load": 2}
    solve = f"/venues/{venue}/assignments"
    free = _pairs(api, venue, chair, api.call("POST", solve, chair, json=base).json())
    # the two reviewers of P1 now share an institute and are the venue's seniors
    shared = {r for p, r in free if p == "P1"}
    assert len(shared) == 2
    moved = [
        {**r, "affiliation": "Shared Institute", "attributes": {"senior": "yes"}}
        for r in REVIEWERS
        if r["id"].lstrip("~") in shared
    ]
    assert api.call("POST", f"/venues/{venue}/reviewers", chair, json=moved).json()["updated"] == 2
    api.call("POST", f"/venues/{venue}/affinity/jobs", chair, json={"config": TFIDF})
    again = _pairs(api, venue, chair, api.call("POST", solve, chair, json=base).json())
    assert {(p, r) for p, r in again if p == "P1"} == {("P1", r) for r in shared}

    job = api.call("POST", solve, chair, json={**base, "max_per_affiliation": 1}).json()
    limited = _pairs(api, venue, chair, job)
    assert len(limited) == 8
    assert all(sum((p["id"], r) in limited for r in shared) <= 1 for p in SUBMISSIONS)

    senior = {"name": "senior", "value": "yes", "min_count": 1}
    job = api.call(
        "POST", solve, chair, json={**base, "require_attribute": senior, "fairness_keep": 0.9}
    ).json()
    seniors = _pairs(api, venue, chair, job)
    assert all(any((p["id"], r) in seniors for r in shared) for p in SUBMISSIONS)

    job = api.call("POST", solve, chair, json={**base, "min_score": 0.5}).json()
    assert job["state"] == "failed" and "infeasible" in job["error"]
