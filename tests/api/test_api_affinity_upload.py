"""Bring your own scores: a scores file computed elsewhere stored as an affinity run, with
the checks of every upload (unknown ids, duplicates, non-finite scores named by line,
nothing stored on error), solved and explained (none available) like a computed run."""

from __future__ import annotations

from typing import Any

from api_helpers import AREA_CHAIRS, REVIEWERS, SUBMISSIONS, solve
from conftest import Api

EDGES = b"head,tail,weight\n" + b"".join(
    f"{p},~{r['id'].lstrip('~')},{0.1 * i + 0.01 * j + 0.5 * (i == j):.2f}\n".encode()
    for i, p in enumerate(("P1", "P2", "P3", "P4"))
    for j, r in enumerate(REVIEWERS)
)


def _venue(api: Api) -> tuple[str, str, str]:
    venue, chair, viewer = api.new_venue()
    for kind, items in (("reviewers", REVIEWERS), ("submissions", SUBMISSIONS)):
        assert api.call("POST", f"/venues/{venue}/{kind}", chair, json=items).is_success
    return venue, chair, viewer


def _upload(
    api: Api, venue: str, token: str, content: bytes, name: str = "specter2.csv", **params: Any
) -> Any:
    return api.call(
        "POST",
        f"/venues/{venue}/affinity/upload",
        token,
        params=params,
        files={"file": (name, content, "text/csv")},
    )


def test_openreview_edges_become_the_latest_run_and_an_assignment_solves_on_them(
    api: Api,
) -> None:
    venue, chair, viewer = _venue(api)
    response = _upload(api, venue, chair, EDGES)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["pairs"] == 16 and body["papers"] == 4 and body["reviewers"] == 4
    assert body["warnings"] == [] and body["bids_folded"] == 0
    run = api.call("GET", f"/venues/{venue}/affinity", viewer).json()
    assert run["id"] == body["run_id"] and run["state"] == "current"
    assert run["config"]["method"] == "uploaded" and run["config"]["source"] == "specter2.csv"
    assert run["statistics"]["count"] == 16 and run["statistics"]["max"] == 0.83
    top = api.call("GET", f"/venues/{venue}/papers/P4/reviewers", viewer).json()["items"]
    assert [(i["reviewer_id"], i["score"]) for i in top[:2]] == [
        ("Lena_Language1", 0.83),
        ("Rita_Reinforce1", 0.32),
    ]
    pair = api.call(
        "GET", f"/venues/{venue}/affinity/pairs/P2/Victor_Vision1", viewer, params={"explain": True}
    ).json()
    assert pair["score"] == 0.61
    assert pair["explanation"]["available"] is False
    assert "specter2.csv" in pair["explanation"]["reason"]
    run_id = solve(api, venue, chair, reviewers_per_paper=1, max_load=1)
    pairs = api.call("GET", f"/venues/{venue}/assignments/{run_id}/pairs", chair).json()
    # one reviewer each: the uploaded scores' diagonal
    assert {(p["paper_id"], p["reviewer_id"]) for p in pairs["items"]} == {
        ("P1", "Grace_Graph1"),
        ("P2", "Victor_Vision1"),
        ("P3", "Rita_Reinforce1"),
        ("P4", "Lena_Language1"),
    }
    audit = api.call("GET", f"/venues/{venue}/audit", chair).json()["items"]
    entry = next(e for e in audit if e["action"] == "affinity.upload")
    assert entry["summary"] == (
        f"uploaded affinity scores from specter2.csv: 16 pairs as affinity run "
        f"{body['run_id']} of pool reviewers"
    )
    exported = api.call("GET", f"/venues/{venue}/affinity/export", chair).text
    assert exported.splitlines()[1] == "P1,Grace_Graph1,0.5"


def test_paper_reviewer_score_columns_fold_the_venues_bids_and_pools_are_apart(
    api: Api,
) -> None:
    venue, chair, _viewer = _venue(api)
    bids = b"paper_id,reviewer_id,bid\nP1,Grace_Graph1,Very High\nP2,Grace_Graph1,Not Willing\n"
    assert api.call(
        "POST", f"/venues/{venue}/bids/upload", chair, files={"file": ("b.csv", bids, "text/csv")}
    ).is_success
    content = b"paper_id,reviewer_id,score\nP1,Grace_Graph1,0.5\nP2,Grace_Graph1,0.25\n"
    body = _upload(api, venue, chair, content, bid_weight=0.5).json()
    assert body["bids_folded"] == 1
    assert any("2 of the venue's 4 papers" in w for w in body["warnings"])
    scores = api.call("GET", f"/venues/{venue}/reviewers/Grace_Graph1/papers", chair).json()
    assert [(i["paper_id"], i["score"]) for i in scores["items"]] == [("P1", 1.0), ("P2", 0.25)]
    # a pair the file does not score has no score: said, not invented
    missing = api.call("GET", f"/venues/{venue}/affinity/pairs/P3/Grace_Graph1", chair)
    assert missing.status_code == 409 and missing.json()["code"] == "pair_not_scored"
    # the area chairs' pool knows none of the reviewers
    assert api.call(
        "POST",
        f"/venues/{venue}/reviewers",
        chair,
        params={"pool": "area_chairs"},
        json=AREA_CHAIRS,
    ).is_success
    refused = _upload(api, venue, chair, content, pool="area_chairs")
    assert refused.status_code == 422
    assert refused.json()["problems"][0]["message"].startswith(
        "unknown reviewer id 'Grace_Graph1' (not among pool area_chairs)"
    )
    ok = _upload(
        api, venue, chair, b"paper_id,reviewer_id,score\nP1,Alan_Chair1,2\n", pool="area_chairs"
    )
    assert ok.status_code == 200, ok.text
    pools = {
        pool: api.call("GET", f"/venues/{venue}/affinity", chair, params={"pool": pool}).json()
        for pool in ("reviewers", "area_chairs")
    }
    assert pools["reviewers"]["id"] == body["run_id"]
    assert pools["area_chairs"]["id"] == ok.json()["run_id"]


def test_bad_files_are_refused_by_line_and_field_and_nothing_is_stored(api: Api) -> None:
    venue, chair, viewer = _venue(api)
    cases = {
        b"head,tail,weight\nP1,Grace_Graph1,0.5\nP9,Grace_Graph1,0.5\n": (3, "paper_id", "P9"),
        b"head,tail,weight\nP1,Grace_Graph1,0.5\n\nP2,~Nobody1,0.5\n": (
            4,
            "reviewer_id",
            "Nobody1",
        ),
        b"head,tail,weight\nP1,Grace_Graph1,0.5\nP1,~Grace_Graph1,0.7\n": (3, None, "listed again"),
        b"head,tail,weight\nP1,Grace_Graph1,0.5\nP2,Grace_Graph1,nan\n": (3, "score", "finite"),
        b"head,tail,weight\nP1,Grace_Graph1,inf\n": (2, "score", "finite"),
        b"head,tail,weight\nP1,Grace_Graph1,high\n": (2, "score", "not a number"),
        b"paper_id,score\nP1,0.5\n": (1, "reviewer_id", "missing"),
        b"": (None, None, "empty"),
    }
    for content, (line, field, words) in cases.items():
        response = _upload(api, venue, chair, content)
        assert response.status_code == 422, (content, response.text)
        problem = response.json()["problems"][0]
        assert problem["file"] == "specter2.csv", problem
        assert (problem["line"], problem["field"]) == (line, field), (content, problem)
        assert words in problem["message"], (content, problem)
    weight = _upload(api, venue, chair, EDGES, bid_weight="nan")
    assert weight.status_code == 422 and weight.json()["field"] == "bid_weight"
    pool = _upload(api, venue, chair, EDGES, pool="everyone")
    assert pool.status_code == 422
    assert _upload(api, venue, viewer, EDGES).status_code == 403
    assert api.call("GET", f"/venues/{venue}/affinity", chair).json()["state"] == "none"
