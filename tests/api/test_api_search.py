"""Type-ahead search of papers and reviewers (docs/page-api.md): ranking, folding of case
and accents, names from OpenReview profile ids, pagination, and 20,000 rows of each on the
indexes of migration 0003."""

from __future__ import annotations

import uuid
from typing import Any

from api_helpers import load_venue
from conftest import Api
from sqlalchemy import insert, text

from recommender.corpus import Reviewer, Submission
from reviewer_recommender.storage.models import ReviewerRow, SubmissionRow, Venue
from reviewer_recommender.storage.repository import reviewer_to_row, submission_to_row


def _search(api: Api, venue: str, token: str, kind: str, q: str, **params: Any) -> dict[str, Any]:
    response = api.call("GET", f"/venues/{venue}/search/{kind}", token, params={"q": q, **params})
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_papers_and_reviewers_rank_by_how_they_match(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    load_venue(api, venue, chair)
    extra = [
        {"id": "~Ada_Lovelace1", "publications": []},
        {"id": "~Émile_Graphé2", "publications": []},
    ]
    assert api.call("POST", f"/venues/{venue}/reviewers", chair, json=extra).status_code == 200
    papers = [{"id": "P10", "title": "Über Graphen und Netze", "abstract": "x", "authors": ["A"]}]
    assert api.call("POST", f"/venues/{venue}/submissions", chair, json=papers).status_code == 200

    found = _search(api, venue, viewer, "papers", "graph")
    assert [(i["id"], i["match"]) for i in found["items"]] == [
        ("P1", "prefix"),
        ("P10", "word"),
    ]
    assert found["items"][0]["title"] == "Graph neural networks on molecular graphs"
    assert [(i["id"], i["match"]) for i in _search(api, venue, chair, "papers", "p1")["items"]] == [
        ("P1", "id"),
        ("P10", "id_prefix"),
    ]
    assert [i["id"] for i in _search(api, venue, chair, "papers", "UBER")["items"]] == ["P10"]
    assert _search(api, venue, chair, "papers", "decoders")["items"][0]["match"] == "word"
    assert _search(api, venue, chair, "papers", "egmentat")["items"][0]["match"] == "substring"
    assert _search(api, venue, chair, "papers", "%")["total"] == 0
    assert _search(api, venue, chair, "papers", "zzz")["total"] == 0

    ada = _search(api, venue, chair, "reviewers", "lovelace")["items"]
    assert [(i["id"], i["name"], i["match"]) for i in ada] == [
        ("Ada_Lovelace1", "Ada Lovelace", "word")
    ]
    emile = _search(api, venue, chair, "reviewers", "emile")["items"]
    assert [(i["id"], i["name"], i["match"]) for i in emile] == [
        ("Émile_Graphé2", "Émile Graphé", "id_prefix")
    ]
    graph = _search(api, venue, chair, "reviewers", "graph")
    # both by a word of the name, then by name
    assert [i["id"] for i in graph["items"]] == ["Émile_Graphé2", "Grace_Graph1"]
    assert graph["items"][1]["affiliation"] == "Graph University"
    paged = _search(api, venue, chair, "reviewers", "a", limit=2, offset=1)
    assert paged["total"] >= 5 and len(paged["items"]) == 2 and paged["offset"] == 1
    everyone = _search(api, venue, chair, "reviewers", "a", limit=200)["items"]
    assert paged["items"] == everyone[1:3]
    bad = api.call("GET", f"/venues/{venue}/search/papers", chair, params={"q": ""})
    assert bad.status_code == 422 and bad.json()["code"] == "validation_error"


N = 20_000


def test_search_at_20000_papers_and_reviewers(api: Api) -> None:
    venue = f"big-{uuid.uuid4().hex[:8]}"
    words = ["graph", "vision", "language", "policy", "kernel", "bandit", "privacy", "robust"]
    with api.database.session() as session:
        session.add(Venue(id=venue, name=venue))
        session.flush()
        submissions = [
            submission_to_row(
                venue,
                Submission(
                    id=f"sub{i:05d}",
                    title=f"{words[i % 8].title()} methods for {words[(i // 8) % 8]} number {i}",
                    abstract="",
                ),
            )
            for i in range(N)
        ]
        reviewers = [
            reviewer_to_row(venue, Reviewer(id=f"Person_{words[i % 8].title()}{i}"))
            for i in range(N)
        ]
        for start in range(0, N, 5000):
            session.execute(insert(SubmissionRow), submissions[start : start + 5000])
            session.execute(insert(ReviewerRow), reviewers[start : start + 5000])
        session.commit()
        dialect = session.get_bind().dialect.name
        if dialect == "sqlite":
            session.execute(text("ANALYZE"))
            plan = " ".join(
                str(row[-1])
                for row in session.execute(
                    text(
                        "EXPLAIN QUERY PLAN SELECT id FROM submissions WHERE venue_id = :v "
                        "AND (id_key LIKE '%kern%' OR text_key LIKE '%kern%') "
                        "ORDER BY text_key LIMIT 20"
                    ),
                    {"v": venue},
                )
            )
            assert "COVERING INDEX ix_submissions_text_key" in plan, plan

    kernel = _search(api, venue, api.admin, "papers", "kernel", limit=5)
    assert kernel["total"] == sum("kernel" in s["title"].lower() for s in submissions)
    assert all(i["match"] == "prefix" for i in kernel["items"])
    assert kernel["items"][0]["title"].startswith("Kernel methods")
    exact = _search(api, venue, api.admin, "papers", "sub12345")["items"]
    assert exact[0] == {
        "id": "sub12345",
        "title": "Vision methods for robust number 12345",
        "match": "id",
    }
    assert _search(api, venue, api.admin, "papers", "number 1999")["total"] == 11
    people = _search(api, venue, api.admin, "reviewers", "person robust1999", limit=50)
    assert [(i["id"], i["match"]) for i in people["items"][:2]] == [
        ("Person_Robust1999", "id"),
        ("Person_Robust19991", "id_prefix"),
    ]
    assert people["total"] == 3 and people["items"][0]["name"] == "Person Robust"
    assert _search(api, venue, api.admin, "reviewers", "privacy", limit=1)["total"] == N // 8
