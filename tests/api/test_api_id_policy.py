"""One id policy through HTTP uploads (SQLite and PostgreSQL): paper ids with a line break are
refused, never rewritten into an id the venue has ("updated"); the eight reviewer ids that
display as "Ada" are refused; a new id that displays like a stored one is refused naming
both, the stored id itself still updates; venue ids alike; paths refuse invisible ids."""

from __future__ import annotations

import csv
import io
from typing import Any
from urllib.parse import quote

from conftest import Api

ADAS = [
    "Ada",
    "\u0410da",
    "Ad\u0430",
    "A\u200bda",
    "\u202eadA",
    "\uff21\uff44\uff41",
    "Ada\u034f",
    "A\u200dda",
]
BROKEN_PAPER_IDS = {"P\n1": "U+000A", "P\u20281": "U+2028", "P\x851": "U+0085"}


def _reviewer(reviewer_id: str) -> dict[str, Any]:
    return {"id": reviewer_id, "publications": [{"title": "Graph networks", "abstract": "x"}]}


def _csv(rows: list[list[str]]) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    return buffer.getvalue().encode()


def _totals(api: Api, venue: str, chair: str) -> tuple[int, int]:
    return (
        api.call("GET", f"/venues/{venue}/reviewers", chair).json()["total"],
        api.call("GET", f"/venues/{venue}/submissions", chair).json()["total"],
    )


def test_paper_ids_with_line_breaks_are_refused_never_rewritten(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    stored = api.call(
        "POST", f"/venues/{venue}/submissions", chair, json=[{"id": "P 1", "title": "Graphs"}]
    )
    assert stored.status_code == 200, stored.text
    for paper_id, character in BROKEN_PAPER_IDS.items():
        # once "updated" P 1: now refused, whether in a JSON body or a CSV file
        body = api.call(
            "POST", f"/venues/{venue}/submissions", chair, json=[{"id": paper_id, "title": "x"}]
        )
        assert body.status_code == 422, body.text
        (problem,) = body.json()["problems"]
        assert problem["field"] == "[0].id" and character in problem["message"], problem
        assert "(record 1)" in problem["message"] and "line break" in problem["message"]
        upload = api.call(
            "POST",
            f"/venues/{venue}/submissions/upload",
            chair,
            files={"file": ("papers.csv", _csv([["id", "title"], [paper_id, "x"]]), "text/csv")},
        )
        assert upload.status_code == 422, upload.text
        (problem,) = upload.json()["problems"]
        assert problem["file"] == "papers.csv" and problem["field"] == "id", problem
        assert problem["line"] in (2, 3) and character in problem["message"], problem
    titles = api.call("GET", f"/venues/{venue}/submissions", chair).json()["items"]
    assert [(s["id"], s["title"]) for s in titles] == [("P 1", "Graphs")]


def test_the_eight_adas_are_refused(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    for upload in (
        lambda: api.call(
            "POST", f"/venues/{venue}/reviewers", chair, json=[_reviewer(a) for a in ADAS]
        ),
        lambda: api.call(
            "POST",
            f"/venues/{venue}/reviewers/upload",
            chair,
            files={
                "file": (
                    "reviewers.csv",
                    _csv([["id", "name"], *([a, "Ada"] for a in ADAS)]),
                    "text/csv",
                )
            },
        ),
    ):
        response = upload()
        assert response.status_code == 422, response.text
        messages = [p["message"] for p in response.json()["problems"]]
        assert len(messages) == len(ADAS) - 1, messages  # all but the first Ada
        for invisible in ("U+200B", "U+202E", "U+034F", "U+200D"):
            assert any(invisible in m and "invisible character" in m for m in messages)
        for alike in ("\u0410da", "Ad\u0430", "\uff21\uff44\uff41"):
            assert any(f"{alike!r} looks like reviewer id 'Ada'" in m for m in messages), alike
    assert _totals(api, venue, chair) == (0, 0)


def test_a_new_id_like_a_stored_one_is_refused_naming_both(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    path = f"/venues/{venue}/reviewers"
    assert api.call("POST", path, chair, json=[_reviewer("Ada")]).status_code == 200
    for alike in ("\u0410da", "\uff21\uff44\uff41"):
        refused = api.call("POST", path, chair, json=[_reviewer("Grace"), _reviewer(alike)])
        assert refused.status_code == 422, refused.text
        (problem,) = refused.json()["problems"]
        assert (
            f"reviewer {alike!r} (record 2) looks like the venue's reviewer 'Ada'"
            in (problem["message"])
        ), problem
        assert "to update that reviewer, use its id" in problem["message"]
    updated = api.call("POST", path, chair, json=[_reviewer("Ada")])
    assert updated.status_code == 200 and updated.json()["updated"] == 1
    papers = f"/venues/{venue}/submissions"
    assert api.call("POST", papers, chair, json=[{"id": "P1", "title": "x"}]).status_code == 200
    refused = api.call("POST", papers, chair, json=[{"id": "\u0420\u0031", "title": "x"}])
    assert refused.status_code == 422 and "looks like the venue's submission 'P1'" in refused.text
    assert _totals(api, venue, chair) == (1, 1)


def test_venue_ids_that_look_alike_and_invisible_ids_in_paths_are_refused(api: Api) -> None:
    base = f"venue-{id(api) % 10_000}x1"
    created = api.call("POST", "/venues", api.admin, json={"id": base})
    assert created.status_code == 201, created.text
    alike = api.call("POST", "/venues", api.admin, json={"id": base[:-1] + "l"})
    assert alike.status_code == 409 and alike.json()["code"] == "venue_lookalike", alike.text
    assert repr(base) in alike.json()["detail"]
    venue, chair, _viewer = api.new_venue()
    for reviewer_id in ("A\u200bda", "Ada\u00a0x"):
        # quoted twice: the TestClient unquotes the path once more than a server does
        response = api.call(
            "GET", f"/venues/{venue}/reviewers/{quote(quote(reviewer_id, safe=''), safe='')}", chair
        )
        assert response.status_code == 422, (reviewer_id, response.text)
