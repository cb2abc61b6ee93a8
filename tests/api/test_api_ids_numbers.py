"""Ids, text and numbers: every id an upload accepts is reachable by every route, the others
are refused naming the record and the rule; control characters and out-of-range numbers
are 422 (never 500) on SQLite and PostgreSQL alike; venue ids have a charset."""

from __future__ import annotations

import json
import unicodedata
from typing import Any
from urllib.parse import quote

import pytest
from api_helpers import REVIEWERS, SUBMISSIONS, TFIDF, load_venue
from conftest import Api
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from recommender.ids import character_problem


def _id_alphabet() -> st.SearchStrategy[str]:
    return st.characters(
        blacklist_categories=("Cc", "Cs", "Zl", "Zp"), blacklist_characters="/"
    ) | st.sampled_from(list("%?#&;.~ \\+=:@!$'\"<>[]{}|^`,"))


ids = st.text(_id_alphabet(), min_size=1, max_size=30).filter(
    lambda s: (
        s.strip() not in ("", ".", "..")
        and s.strip().lstrip("~").strip() not in ("", ".", "..")
        # the id policy: no invisible character, no space but a plain one
        and character_problem(s) is None
    )
)


def _path(value: str) -> str:
    # Starlette's TestClient unquotes the URL path it has already decoded once more, so
    # "%2500" reached the app as NUL, not "%00"; quoting twice gives the app exactly
    # ``value``, as one quoting does for a real client and server.
    return quote(quote(value, safe=""), safe="")


def _upload_pair(api: Api, venue: str, chair: str, paper: str, reviewer: str) -> Any:
    reviewers = [{**r, "id": f"{reviewer}{i}"} for i, r in enumerate(REVIEWERS[:2])]
    submissions = [{**s, "id": f"{paper}{i}"} for i, s in enumerate(SUBMISSIONS[:2])]
    first = api.call("POST", f"/venues/{venue}/reviewers", chair, json=reviewers)
    if first.status_code != 200:
        return first
    return api.call("POST", f"/venues/{venue}/submissions", chair, json=submissions)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
@given(paper=ids, reviewer=ids)
@example(paper="0", reviewer="%0")  # the reviewer ids are "%00" and "%01"
@example(paper="a b%", reviewer="~x?y#z")
def test_every_accepted_id_is_reachable_by_every_route(api: Api, paper: str, reviewer: str) -> None:
    venue, chair, _viewer = api.new_venue()
    response = _upload_pair(api, venue, chair, paper, reviewer)
    assert response.status_code == 200, response.text
    job = api.call("POST", f"/venues/{venue}/affinity/jobs", chair, json={"config": TFIDF}).json()
    assert job["state"] == "succeeded", job
    job = api.call(
        "POST",
        f"/venues/{venue}/assignments",
        chair,
        json={"reviewers_per_paper": 1, "max_load": 2, "solver": "flow"},
    ).json()
    assert job["state"] == "succeeded", job
    run = job["result"]["assignment_id"]
    stored_papers = [
        s["id"] for s in api.call("GET", f"/venues/{venue}/submissions", chair).json()["items"]
    ]
    stored_reviewers = [
        r["id"] for r in api.call("GET", f"/venues/{venue}/reviewers", chair).json()["items"]
    ]
    assert len(stored_papers) == 2 and len(stored_reviewers) == 2
    v = f"/venues/{venue}"
    for p in stored_papers:
        for r in stored_reviewers:
            pair = api.call("GET", f"{v}/affinity/pairs/{_path(p)}/{_path(r)}", chair)
            assert pair.status_code == 200, (p, r, pair.text)
            assert (pair.json()["paper_id"], pair.json()["reviewer_id"]) == (p, r)
    for p in stored_papers:
        for path in (
            f"{v}/submissions/{_path(p)}",
            f"{v}/papers/{_path(p)}/reviewers",
            f"{v}/assignments/{run}/papers/{_path(p)}",
        ):
            assert api.call("GET", path, chair).status_code == 200, (p, path)
        put = api.call("PUT", f"{v}/paper-demands/{_path(p)}", chair, json={"demand": 1})
        assert put.status_code == 200 and put.json()["paper_id"] == p
        filtered = api.call(
            "GET", f"{v}/assignments/{run}/pairs", chair, params={"paper_id": p}
        ).json()
        assert [i["paper_id"] for i in filtered["items"]] == [p]
    for r in stored_reviewers:
        for path in (f"{v}/reviewers/{_path(r)}", f"{v}/reviewers/{_path(r)}/papers"):
            assert api.call("GET", path, chair).status_code == 200, (r, path)
        put = api.call("PUT", f"{v}/reviewer-max-loads/{_path(r)}", chair, json={"max_load": 2})
        assert put.status_code == 200 and put.json()["reviewer_id"] == r
    # and through the edits, which name ids in bodies
    p, r = stored_papers[0], stored_reviewers[0]
    forbid = api.call(
        "POST", f"{v}/assignments/{run}/forbid", chair, json={"paper_id": p, "reviewer_id": r}
    )
    assert forbid.status_code == 200, forbid.text


@pytest.mark.parametrize(
    ("kind", "record", "rule"),
    [
        ("reviewers", {"id": "a/b"}, "contains '/'"),
        ("submissions", {"id": "10.1145/3"}, "contains '/'"),
        ("submissions", {"id": ".."}, "path step"),
        ("reviewers", {"id": "~."}, "path step"),
        ("reviewers", {"id": "x" * 301}, "at most 300"),
        ("reviewers", {"id": "tab\there"}, "U+0009"),
        ("reviewers", {"id": "line\u2028break"}, "U+2028"),
        ("submissions", {"abstract": "nul \u0000 byte"}, "U+0000 (NUL)"),
        ("submissions", {"title": "bell \u0007"}, "U+0007"),
        ("reviewers", {"name": "escape \u001b[31m"}, "U+001B"),
        ("reviewers", {"attributes": {"level": "senior\u0000"}}, "U+0000"),
    ],
)
def test_ids_and_text_that_cannot_be_stored_or_reached_are_refused_naming_the_record(
    api: Api, kind: str, record: dict[str, Any], rule: str
) -> None:
    venue, chair, _viewer = api.new_venue()
    base = (REVIEWERS if kind == "reviewers" else SUBMISSIONS)[1]
    good = (REVIEWERS if kind == "reviewers" else SUBMISSIONS)[0]
    response = api.call("POST", f"/venues/{venue}/{kind}", chair, json=[good, {**base, **record}])
    assert response.status_code == 422, response.text
    problems = response.json()["problems"]
    assert len(problems) == 1 and "(record 2)" in problems[0]["message"], problems
    assert rule in problems[0]["message"]
    assert api.call("GET", f"/venues/{venue}/{kind}", chair).json()["total"] == 0


def test_control_characters_in_uploaded_files_are_named(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    csv = b"id,title,abstract\nP1,Fine,An abstract\nP2,Bad\x00title,An abstract\n"
    response = api.call(
        "POST",
        f"/venues/{venue}/submissions/upload",
        chair,
        files={"file": ("papers\x00.csv", csv, "text/csv")},
    )
    assert response.status_code == 422, response.text
    (problem,) = response.json()["problems"]
    assert problem["file"].startswith("papers") and "\x00" not in problem["file"]
    assert problem["field"] == "title"
    assert "submission 'P2' (record 2)" in problem["message"]
    # an unpaired surrogate in a JSON body (valid JSON, not storable text)
    body = b'[{"id": "P1", "title": "\\ud800", "abstract": "x"}]'
    response = api.client.post(
        f"/venues/{venue}/submissions",
        content=body,
        headers={**api.headers(chair), "content-type": "application/json"},
    )
    assert response.status_code == 422 and "surrogate" in response.text
    assert api.call("GET", f"/venues/{venue}/submissions", chair).json()["total"] == 0


def test_control_characters_in_request_fields_paths_and_queries_are_422(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    job = api.call(
        "POST",
        f"/venues/{venue}/assignments",
        chair,
        json={"reviewers_per_paper": 1, "max_load": 2, "solver": "flow"},
    ).json()
    run = job["result"]["assignment_id"]
    v = f"/venues/{venue}"
    cases: list[tuple[str, str, Any]] = [
        ("POST", f"{v}/assignments/{run}/forbid", {"paper_id": "P1", "reviewer_id": "a\u0000"}),
        (
            "POST",
            f"{v}/assignments/{run}/forbid",
            {"paper_id": "P1", "reviewer_id": "Grace_Graph1", "reason": "\u0000"},
        ),
        ("POST", f"{v}/assignments", {"custom_max_load": {"Grace\u0000": 1}}),
        ("POST", f"{v}/assignments", {"demand": {"P1/2": 1}}),
        ("POST", "/venues", {"id": "new-venue", "name": "nul\u0000"}),
        ("GET", f"{v}/reviewers/a%00b", None),
        ("GET", f"{v}/affinity/pairs/P1/%1B", None),
        ("GET", f"{v}/assignments/{run}/pairs?paper_id=%00", None),
        ("PUT", f"{v}/paper-demands/P%0A1", {"demand": 1}),
    ]
    for method, path, body in cases:
        token = api.admin if path == "/venues" else chair
        response = api.call(method, path, token, json=body)
        assert response.status_code == 422, (method, path, response.text)
    raw = api.client.post(
        f"{v}/assignments/{run}/forbid",
        content=b'{"paper_id": "P1", "reviewer_id": "\\udc80x"}',
        headers={**api.headers(chair), "content-type": "application/json"},
    )
    assert raw.status_code == 422
    raw.json()  # the error body is valid JSON, however odd its input
    nan = api.client.post(
        f"{v}/assignments",
        content=b'{"min_score": NaN}',
        headers={**api.headers(chair), "content-type": "application/json"},
    )
    assert nan.status_code == 422 and nan.json()["detail"][0]["input"] == "nan"
    conflicts = api.call("GET", f"{v}/conflicts", chair).json()["items"]
    assert not [c for c in conflicts if c["source"] == "forbid"]


@pytest.mark.parametrize(
    "path",
    [
        "/venues/{v}/reviewers?offset=9223372036854775808",
        "/venues/{v}/reviewers?offset=-1",
        "/venues/{v}/reviewers?limit=99999999999999999999",
        "/venues/{v}/audit?offset=1000000001",
        "/venues/{v}/assignments/99999999999999999999999",
        "/venues/{v}/assignments/2147483648/pairs",
        "/venues/{v}/assignments/0",
        "/venues/{v}/assignments/-5/stats",
        "/venues/{v}/jobs/9223372036854775808",
        "/venues/{v}/assignments/1/papers/P1?alternates=9223372036854775808",
        "/venues/{v}/jobs/1?wait=1e309",
    ],
)
def test_out_of_range_numbers_are_422(api: Api, path: str) -> None:
    venue, chair, _viewer = api.new_venue()
    response = api.call("GET", path.replace("{v}", venue), chair)
    assert response.status_code == 422, response.text


def test_largest_valid_ids_are_404_and_large_bodies_numbers_422(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    v = f"/venues/{venue}"
    for path in (f"{v}/assignments/2147483647", f"{v}/jobs/2147483647"):
        assert api.call("GET", path, chair).status_code == 404
    for body in (
        {"max_load": 10**20},
        {"custom_max_load": {"Grace_Graph1": 10**20}},
        {"demand": {"P1": -1}},
        {"seed": 2**64},
    ):
        response = api.call("POST", f"{v}/assignments", chair, json=body)
        assert response.status_code == 422, (body, response.text)
    for raw in (b'{"time_limit": 1e309}', b'{"max_load": 1e400}', b'{"min_score": -Infinity}'):
        response = api.client.post(
            f"{v}/assignments",
            content=raw,
            headers={**api.headers(chair), "content-type": "application/json"},
        )
        assert response.status_code == 422, (raw, response.text)
    deploy = api.call(
        "POST", f"{v}/assignments/1/deploy", chair, json={"assignment_id": 1, "version": 2**63}
    )
    assert deploy.status_code == 422


@pytest.mark.parametrize(
    "venue_id", ["a\r\nb", "a b", "-start", "x" * 101, "é", "a/b", "", "a\u0000"]
)
def test_venue_ids_have_a_charset(api: Api, venue_id: str) -> None:
    response = api.call("POST", "/venues", api.admin, json={"id": venue_id})
    assert response.status_code == 422, response.text
    if venue_id and "/" not in venue_id:
        listed = api.call("GET", f"/venues/{quote(venue_id, safe='')}/reviewers", api.admin)
        assert listed.status_code == 422, listed.text


def test_exports_name_their_file_safely(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    exported = api.call("GET", f"/venues/{venue}/affinity/export", chair)
    assert exported.headers["content-disposition"] == (
        f'attachment; filename="{venue}-affinity.csv"'
    )
    from api.exports import attachment_name

    assert attachment_name('a\r\nb"; x=y', "csv") == "a_b_x_y.csv"


def test_the_rules_agree_with_unicode_categories() -> None:
    from reviewer_recommender.services.ids import id_problem, text_problem

    for code in [*range(0x00, 0x20), 0x7F, 0x85, 0x9F, 0x2028, 0x2029, 0xD800]:
        character = chr(code)
        assert id_problem(f"a{character}b") is not None
        allowed = character in "\t\n\r"
        assert (text_problem(f"a{character}b") is None) == allowed, hex(code)
    for value in ("~Ada_Lovelace1", "ada@example.org", "P 1", "a%2Fb", "é", "日本", "a.b"):
        assert id_problem(value) is None, value
    # invisible (format) characters are refused: they change an id, not how it looks
    assert unicodedata.category("\u200b") == "Cf" and id_problem("a\u200bb") is not None
    assert json.loads(json.dumps("ok")) == "ok"


def test_openreview_tilde_ids_name_the_stored_reviewer(api: Api) -> None:
    """Uploads store reviewer ids without OpenReview's leading '~'; paths, queries and
    bodies accept either form."""
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    v = f"/venues/{venue}"
    grace = api.call("GET", f"{v}/reviewers/~Grace_Graph1", chair)
    assert grace.status_code == 200 and grace.json()["id"] == "Grace_Graph1"
    pair = api.call("GET", f"{v}/affinity/pairs/P1/~Grace_Graph1", chair).json()
    assert pair["reviewer_id"] == "Grace_Graph1"
    job = api.call(
        "POST",
        f"{v}/assignments",
        chair,
        json={"reviewers_per_paper": 1, "max_load": 2, "custom_max_load": {"~Lena_Language1": 0}},
    ).json()
    assert job["state"] == "succeeded", job
    run = job["result"]["assignment_id"]
    assert job["params"]["custom_max_load"] == {"Lena_Language1": 0}
    listed = api.call(
        "GET", f"{v}/assignments/{run}/pairs", chair, params={"reviewer_id": "~Grace_Graph1"}
    ).json()
    assert {i["reviewer_id"] for i in listed["items"]} <= {"Grace_Graph1"}
    forbid = api.call(
        "POST",
        f"{v}/assignments/{run}/forbid",
        chair,
        json={"paper_id": "P1", "reviewer_id": "~Grace_Graph1"},
    )
    assert forbid.status_code == 200
    rules = api.call("GET", f"{v}/assignments/{run}/rules", chair).json()["items"]
    assert ("P1", "Grace_Graph1", "forbid") in {
        (c["paper_id"], c["reviewer_id"], c["kind"]) for c in rules
    }
