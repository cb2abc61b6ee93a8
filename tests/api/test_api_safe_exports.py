"""Every CSV export is safe to open in a spreadsheet, and an export uploaded back is lossless."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from api_helpers import REVIEWERS, SUBMISSIONS, TFIDF
from conftest import Api

from recommender.io.safe_csv import FORMULA_TRIGGERS, unescape_cell

PAPER_PREFIXES = ["=", "-", "+", "@"]
REVIEWER_PREFIXES = ["@", "+", "-", "="]


def _hostile_corpus() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    reviewers = [
        {**r, "id": f"{prefix}{r['id'].lstrip('~')}"}
        for prefix, r in zip(REVIEWER_PREFIXES, REVIEWERS, strict=True)
    ]
    submissions = [
        {**s, "id": f"{prefix}{s['id']}+1"}
        for prefix, s in zip(PAPER_PREFIXES, SUBMISSIONS, strict=True)
    ]
    return reviewers, submissions


def _assert_spreadsheet_safe(text: str) -> list[list[str]]:
    rows = list(csv.reader(io.StringIO(text)))
    for row in rows:
        for cell in row:
            if cell and cell[0] in FORMULA_TRIGGERS:
                float(cell)  # only a plain number may start with + or -
    return rows


def test_exports_neutralise_formulas_and_round_trip(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    reviewers, submissions = _hostile_corpus()
    paper_ids = {s["id"] for s in submissions}
    reviewer_ids = {r["id"] for r in reviewers}
    assert api.call("POST", f"/venues/{venue}/reviewers", chair, json=reviewers).status_code == 200
    response = api.call("POST", f"/venues/{venue}/submissions", chair, json=submissions)
    assert response.status_code == 200, response.text
    # conflicts uploaded raw (an unescaped file from elsewhere): ids kept as written
    constraints = "paper_id,reviewer_id,value\n=P1+1,+Victor_Vision1,-1\n-P2+1,@Grace_Graph1,-1\n"
    response = api.call(
        "POST",
        f"/venues/{venue}/constraints/upload",
        chair,
        files={"file": ("constraints.csv", constraints.encode(), "text/csv")},
    )
    assert response.status_code == 200, response.text
    job = api.call("POST", f"/venues/{venue}/affinity/jobs", chair, json={"config": TFIDF}).json()
    assert job["state"] == "succeeded", job
    job = api.call(
        "POST", f"/venues/{venue}/assignments", chair, json={"reviewers_per_paper": 1}
    ).json()
    assert job["state"] == "succeeded", job
    assignment_id = job["result"]["assignment_id"]

    exports = {
        "affinity": f"/venues/{venue}/affinity/export",
        "conflicts": f"/venues/{venue}/conflicts/export",
        "assignment": f"/venues/{venue}/assignments/{assignment_id}/export",
    }
    for name, path in exports.items():
        response = api.call("GET", path, chair)
        assert response.status_code == 200, (name, response.text)
        _header, *rows = _assert_spreadsheet_safe(response.text)
        assert rows, name
        papers = {unescape_cell(row[0]) for row in rows}
        people = {unescape_cell(row[1]) for row in rows}
        assert papers <= paper_ids and people <= reviewer_ids, name
        # every id here begins with a trigger, so every id cell is quoted
        assert all(row[0].startswith("'") and row[1].startswith("'") for row in rows), name
        # numbers stay numbers
        assert all(isinstance(float(row[2]), float) for row in rows), name
        if name == "conflicts":
            assert {row[2] for row in rows} == {"-1"}
            exported_pairs = {(unescape_cell(r[0]), unescape_cell(r[1])) for r in rows}
            # the uploaded pairs, and the one detected (Rita authored P3)
            assert exported_pairs == {
                ("+P3+1", "-Rita_Reinforce1"),
                ("=P1+1", "+Victor_Vision1"),
                ("-P2+1", "@Grace_Graph1"),
            }
        # JSON exports carry the ids as they are
        as_json = json.loads(api.call("GET", path, chair, params={"format": "json"}).text)
        assert {row["paper_id"] for row in as_json} == papers, name

    # round trip: the exported conflicts uploaded back as constraints name the same pairs
    exported = api.call("GET", exports["conflicts"], chair).content
    response = api.call(
        "POST",
        f"/venues/{venue}/constraints/upload",
        chair,
        files={"file": ("conflicts-export.csv", exported, "text/csv")},
    )
    assert response.status_code == 200, response.text
    assert response.json()["total"] == 3
    listed = api.call("GET", f"/venues/{venue}/conflicts", chair).json()["items"]
    uploaded = {(c["paper_id"], c["reviewer_id"]) for c in listed if c["source"] == "uploaded"}
    assert uploaded == exported_pairs
