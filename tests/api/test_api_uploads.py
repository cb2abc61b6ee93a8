"""Malformed uploads: each gets a precise 4xx and leaves the database unchanged."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest
from api_helpers import REVIEWERS, SUBMISSIONS, TFIDF
from conftest import Api
from sqlalchemy import func, select

from reviewer_recommender.storage.models import (
    AuditEntry,
    Bid,
    Conflict,
    Pin,
    ReviewerRow,
    SubmissionRow,
)

GOOD_CSV = b"id,title,abstract\nP9,Ninth paper,About graphs\n"


def snapshot(api: Api, venue_id: str) -> dict[str, Any]:
    """Every row the venue owns (what an upload could change)."""
    with api.database.session() as session:
        state: dict[str, Any] = {}
        for model in (ReviewerRow, SubmissionRow, Bid, Conflict, Pin):
            rows = session.scalars(select(model).where(model.venue_id == venue_id)).all()
            state[model.__tablename__] = sorted(
                repr(
                    {
                        c: getattr(r, c)
                        for c in [col.name for col in model.__table__.columns]
                        if c != "updated_at"
                    }
                )
                for r in rows
            )
        state["audit"] = session.scalar(select(func.count()).where(AuditEntry.venue_id == venue_id))
    return state


@pytest.fixture
def venue(api: Api) -> tuple[str, str]:
    venue_id, chair, _viewer = api.new_venue()
    assert (
        api.call("POST", f"/venues/{venue_id}/reviewers", chair, json=REVIEWERS).status_code == 200
    )
    assert (
        api.call("POST", f"/venues/{venue_id}/submissions", chair, json=SUBMISSIONS).status_code
        == 200
    )
    return venue_id, chair


def _ten_thousand_lines_one_bad() -> bytes:
    lines = ["id,title,abstract"] + [f"Q{i},Title {i},Abstract {i}" for i in range(10_000)]
    lines[5_001] = "Q5000,,"  # line 5002 of the file: neither title nor abstract
    return ("\n".join(lines) + "\n").encode()


SUBMISSION_CASES = {
    "truncated csv": ("s.csv", b'id,title,abstract\nP9,"Unclosed quote,about\n', 422),
    "wrong columns": ("s.csv", b"identifier,heading\nP9,Ninth\n", 422),
    "bad utf-8": ("s.csv", b"id,title,abstract\nP9,Caf\xe9 \xff,x\n", 422),
    "duplicate ids": ("s.csv", b"id,title,abstract\nP9,A,a\nP9,B,b\n", 422),
    "truncated json": ("s.json", json.dumps(SUBMISSIONS).encode()[:-7], 422),
    "unsupported type": ("s.xlsx", b"PK\x03\x04", 422),
    "ten thousand lines, one bad": ("big.csv", _ten_thousand_lines_one_bad(), 422),
}


@pytest.mark.parametrize("case", list(SUBMISSION_CASES))
def test_malformed_submission_upload(api: Api, venue: tuple[str, str], case: str) -> None:
    venue_id, chair = venue
    filename, content, expected = SUBMISSION_CASES[case]
    before = snapshot(api, venue_id)
    response = api.call(
        "POST",
        f"/venues/{venue_id}/submissions/upload",
        chair,
        files={"file": (filename, content, "application/octet-stream")},
    )
    assert response.status_code == expected, response.text
    problems = response.json()["problems"]
    assert problems and all(p["file"] == filename and p["message"] for p in problems)
    assert snapshot(api, venue_id) == before
    if case == "ten thousand lines, one bad":
        assert len(problems) == 1
        assert problems[0]["line"] == 5002 and problems[0]["field"] in ("title", "abstract")
    if case == "duplicate ids":
        assert problems[0]["line"] == 3 and problems[0]["field"] == "id"
    if case == "bad utf-8":
        assert "UTF-8" in problems[0]["message"] or "utf-8" in problems[0]["message"].lower()


def test_malformed_reviewer_uploads(api: Api, venue: tuple[str, str]) -> None:
    venue_id, chair = venue
    before = snapshot(api, venue_id)
    bad_rows = [
        {**REVIEWERS[0], "id": "New_One"},
        {"id": "", "name": "No id"},
        {**REVIEWERS[1], "email": "not-an-email"},
    ]
    response = api.call("POST", f"/venues/{venue_id}/reviewers", chair, json=bad_rows)
    assert response.status_code == 422
    fields = {p["field"] for p in response.json()["problems"]}
    assert fields == {"[1].id", "[2].email"}
    # a zip whose second archive is broken: nothing of the first one is stored either
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr(
            "~Good_One1.jsonl",
            json.dumps({"id": "n1", "content": {"title": "T", "abstract": "A"}}) + "\n",
        )
        bundle.writestr("~Bad_One1.jsonl", "{not json\n")
    response = api.call(
        "POST",
        f"/venues/{venue_id}/reviewers/upload",
        chair,
        files={"file": ("archives.zip", archive.getvalue(), "application/zip")},
    )
    assert response.status_code == 422
    assert any("Bad_One1" in p["file"] and p["line"] == 1 for p in response.json()["problems"])
    response = api.call(
        "POST",
        f"/venues/{venue_id}/reviewers/upload",
        chair,
        files={"file": ("archives.zip", b"PK\x03\x04 not really", "application/zip")},
    )
    assert response.status_code == 422
    assert snapshot(api, venue_id) == before


def test_oversized_uploads_get_413(api: Api, venue: tuple[str, str]) -> None:
    venue_id, chair = venue
    limit = api.client.app.state.settings.max_upload_bytes
    before = snapshot(api, venue_id)
    big = GOOD_CSV + b"x" * (limit + 1)
    response = api.call(
        "POST",
        f"/venues/{venue_id}/submissions/upload",
        chair,
        files={"file": ("big.csv", big, "text/csv")},
    )
    assert response.status_code == 413 and str(limit) in response.json()["detail"]
    # a JSON body over the limit is refused before it is parsed
    huge = [{**SUBMISSIONS[0], "id": "P9", "abstract": "y" * (limit + 100_000)}]
    response = api.call("POST", f"/venues/{venue_id}/submissions", chair, json=huge)
    assert response.status_code == 413
    assert snapshot(api, venue_id) == before


def test_bids_apply_their_valid_lines_and_list_the_others(api: Api, venue: tuple[str, str]) -> None:
    """HotCRP style: one unknown id no longer rejects every bid."""
    venue_id, chair = venue
    response = api.call(
        "POST",
        f"/venues/{venue_id}/bids/upload",
        chair,
        files={
            "file": (
                "bids.csv",
                b"paper_id,reviewer_id,bid\nP1,Grace_Graph1,High\nP1,Ghost,Low\n"
                b"P9,Grace_Graph1,Low\nP2,Grace_Graph1,Eager\nP3,Grace_Graph1,Low\n",
                "text/csv",
            )
        },
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["created"], body["total"]) == (2, 2)
    assert [(s["line"], s["field"], s["message"]) for s in body["skipped"]] == [
        (3, "reviewer_id", "unknown reviewer id 'Ghost'"),
        (4, "paper_id", "unknown paper id 'P9'"),
        (5, "bid", body["skipped"][2]["message"]),
    ]
    audit = api.call("GET", f"/venues/{venue_id}/audit", chair).json()["items"][0]
    assert audit["action"] == "bids.upload" and audit["detail"]["bids"] == 2
    assert audit["detail"]["skipped_lines"] == 3


def test_constraints_apply_their_valid_lines_and_count_as_the_audit_does(
    api: Api, venue: tuple[str, str]
) -> None:
    """HotCRP style, as bids: the valid conflicts and pins apply, every bad line is listed by
    its line, and the answer counts what the audit entry records (a line with two problems
    is one skipped line)."""
    venue_id, chair = venue
    content = (
        b"paper_id,reviewer_id,value\nP1,Grace_Graph1,-1\nP9,Ghost,-1\nP2,Grace_Graph1,2\n"
        b"P2,Victor_Vision1,1\nP3,Ghost,1\nP1,Grace_Graph1,1\n"
    )
    response = api.call(
        "POST",
        f"/venues/{venue_id}/constraints/upload",
        chair,
        files={"file": ("c.csv", content, "text/csv")},
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert [(s["line"], s["field"]) for s in body["skipped"]] == [
        (3, "paper_id"),
        (3, "reviewer_id"),
        (4, "value"),
        (6, "reviewer_id"),
        (7, "value"),
    ]
    assert body["skipped_lines"] == 4 and (body["created"], body["total"]) == (2, 2)
    with api.database.session() as session:
        conflicts = session.execute(
            select(Conflict.paper_id, Conflict.reviewer_id).where(
                Conflict.venue_id == venue_id, Conflict.source == "uploaded"
            )
        ).all()
        pins = session.execute(
            select(Pin.paper_id, Pin.reviewer_id).where(Pin.venue_id == venue_id)
        ).all()
    assert conflicts == [("P1", "Grace_Graph1")] and pins == [("P2", "Victor_Vision1")]
    audit = api.call("GET", f"/venues/{venue_id}/audit", chair).json()["items"][0]
    assert audit["action"] == "constraints.upload"
    detail = audit["detail"]
    assert (detail["conflicts"] + detail["pins"], detail["skipped_lines"]) == (2, 4)
    assert audit["summary"].endswith("; 4 bad lines skipped")


def test_bids_and_constraints_without_a_valid_line_change_nothing(
    api: Api, venue: tuple[str, str]
) -> None:
    venue_id, chair = venue
    before = snapshot(api, venue_id)
    response = api.call(
        "POST",
        f"/venues/{venue_id}/bids/upload",
        chair,
        files={"file": ("bids.csv", b"paper_id,reviewer_id,bid\nP1,Ghost,Low\n", "text/csv")},
    )
    assert response.status_code == 422
    assert response.json()["problems"][0]["message"] == "unknown reviewer id 'Ghost'"
    assert response.json()["problems"][0]["line"] == 2
    response = api.call(
        "POST",
        f"/venues/{venue_id}/bids/upload",
        chair,
        files={
            "file": ("bids.csv", b"paper_id,reviewer_id,bid\nP1,Grace_Graph1,Eager\n", "text/csv")
        },
    )
    assert response.status_code == 422 and response.json()["problems"][0]["line"] == 2
    # a number outside -1..1 would fold into an infinite score: refused, by line and field
    for value in (b"1e308", b"-1e308", b"2"):
        response = api.call(
            "POST",
            f"/venues/{venue_id}/bids/upload",
            chair,
            files={
                "file": ("bids.csv", b"paper_id,reviewer_id,bid\nP1,Grace_Graph1," + value + b"\n")
            },
        )
        problem = response.json()["problems"][0]
        assert response.status_code == 422 and (problem["line"], problem["field"]) == (2, "bid")
        assert "outside -1..1" in problem["message"]
    response = api.call(
        "POST",
        f"/venues/{venue_id}/constraints/upload",
        chair,
        files={"file": ("c.csv", b"paper_id,reviewer_id,value\nP1,Grace_Graph1,2\n", "text/csv")},
    )
    assert response.status_code == 422
    response = api.call(
        "POST",
        f"/venues/{venue_id}/constraints/upload",
        chair,
        files={"file": ("c.csv", b"P1,Ghost,-1\nP9,Grace_Graph1,1\n", "text/csv")},
    )
    assert response.status_code == 422
    assert [(p["line"], p["field"]) for p in response.json()["problems"]] == [
        (1, "reviewer_id"),
        (2, "paper_id"),
    ]
    assert snapshot(api, venue_id) == before

    good = (
        b"paper_id,reviewer_id,bid\nP1,Grace_Graph1,High\nP2,Grace_Graph1,Conflict\n"
        b"P3,Grace_Graph1,Not Willing\n"
    )
    response = api.call(
        "POST",
        f"/venues/{venue_id}/bids/upload",
        chair,
        files={"file": ("bids.csv", good, "text/csv")},
    )
    assert response.status_code == 200 and response.json()["created"] == 3
    conflicts = api.call("GET", f"/venues/{venue_id}/conflicts", chair).json()["items"]
    bid_conflicts = {(c["paper_id"], c["reason"]) for c in conflicts if c["source"] == "bid"}
    assert bid_conflicts == {("P2", "bid Conflict"), ("P3", "bid Not Willing")}

    # bids are folded into scores when the affinity config weights them
    pair = f"/venues/{venue_id}/affinity/pairs/P1/Grace_Graph1"
    scores = []
    for weight in (0.0, 0.2):
        config = {**TFIDF, "bid_weight": weight}
        job = api.call("POST", f"/venues/{venue_id}/affinity/jobs", chair, json={"config": config})
        assert job.json()["state"] == "succeeded", job.json()
        marked = api.call("GET", pair, chair, params={"explain": False}).json()
        assert marked["bid"] == "High"
        scores.append(marked["score"])
    assert scores[1] == pytest.approx(scores[0] + 0.2 * 0.5, abs=1e-5)


def test_bid_upload_excludes_by_the_one_bid_rule(api: Api, venue: tuple[str, str]) -> None:
    """Case and spacing do not matter to a label, a number never excludes: the stored
    conflicts are exactly the pairs recommender.bids.excludes names."""
    venue_id, chair = venue
    bids = (
        b"paper_id,reviewer_id,bid\nP1,Grace_Graph1,not  WILLING\nP2,Grace_Graph1,-1\n"
        b"P3,Grace_Graph1, conflict \nP1,Victor_Vision1,very low\n"
    )
    response = api.call(
        "POST", f"/venues/{venue_id}/bids/upload", chair, files={"file": ("b.csv", bids)}
    )
    assert response.status_code == 200 and response.json()["created"] == 4, response.text
    conflicts = api.call("GET", f"/venues/{venue_id}/conflicts", chair).json()["items"]
    assert {
        (c["paper_id"], c["reviewer_id"], c["reason"]) for c in conflicts if c["source"] == "bid"
    } == {
        ("P1", "Grace_Graph1", "bid not WILLING"),
        ("P3", "Grace_Graph1", "bid conflict"),
    }


def test_good_csv_upload_still_works(api: Api, venue: tuple[str, str]) -> None:
    venue_id, chair = venue
    response = api.call(
        "POST",
        f"/venues/{venue_id}/submissions/upload",
        chair,
        files={"file": ("s.csv", GOOD_CSV, "text/csv")},
    )
    assert response.status_code == 200 and response.json() == {
        "created": 1,
        "updated": 0,
        "total": 5,
        "no_publications": [],
        "withdrawn": 0,
        "left_pool": 0,
        "skipped": [],
        "skipped_lines": 0,
    }
