"""The least-privileged roles attacked first: reviewer and area chair tokens try to read
other persons' scores, bids, loads and conflicts through every ``/me`` route and every
other route of the service, and fail.

Each test fails if anything of another person shows: their ids in an answer (other than an
area chair's view of their papers' reviewers), another person's pair through an
explanation, a conflicted paper told apart from an unknown one, a route outside ``/me``
that answers anything but 403.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from api_helpers import AREA_CHAIRS, REVIEWERS, SENIOR_AREA_CHAIRS
from conftest import Api, make_settings
from fastapi.testclient import TestClient
from levels_world import Levels

from api.app import create_app

PERSONS = sorted({p["id"].lstrip("~") for p in [*REVIEWERS, *AREA_CHAIRS, *SENIOR_AREA_CHAIRS]})
ME = re.compile(r"^/venues/\{venue_id\}/me(/|$)")


@pytest.fixture(scope="module")
def levels(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Levels]:
    app = create_app(make_settings(database_url, tmp_path_factory.mktemp("leaks")))
    with TestClient(app) as client:
        world = Levels(Api(client, app.state.database))
        world.set_bidding(True)
        # other persons' bids: none of them may show to Lena or Rita
        for name, paper, bid in (("victor", "P1", "Not Willing"), ("victor", "P4", "High")):
            assert (
                world.call(
                    "PUT", f"/me/bids/{paper}", world.tokens[name], json={"bid": bid}
                ).status_code
                == 200
            )
        yield world


def _others(me: str) -> list[str]:
    return [p for p in PERSONS if p != me]


def _fill(path: str, venue: str) -> str:
    path = path.replace("{venue_id}", venue)
    path = re.sub(r"\{(job_id|assignment_id|other_id|token_id)\}", "1", path)
    return re.sub(r"\{[a-z_]+\}", "P1", path)


def test_every_route_outside_me_refuses_a_person_token(levels: Levels) -> None:
    """Every operation of the service under /venues/{venue_id} except the person's own
    view answers 403 to a person token, for its venue and for another venue; the global
    listings too."""
    other_venue, _chair, _viewer = levels.api.new_venue()
    schema = levels.api.client.get("/openapi.json").json()
    checked = 0
    for name in ("lena", "alan"):
        token = levels.tokens[name]
        for path, operations in schema["paths"].items():
            for method in operations:
                if not path.startswith("/venues/{venue_id}"):
                    continue
                for venue in (levels.venue, other_venue):
                    if ME.match(path) and venue == levels.venue:
                        continue
                    response = levels.api.call(method.upper(), _fill(path, venue), token, json={})
                    assert response.status_code == 403, (name, method, path, response.text)
                    checked += 1
        for method, path in (
            ("GET", "/venues"),
            ("GET", "/tokens"),
            ("POST", "/venues"),
            ("POST", "/tokens/1/revoke"),
        ):
            response = levels.api.call(method, path, token, json={})
            assert response.status_code == 403, (name, path, response.text)
    assert checked > 150


def test_my_views_name_nobody_else(levels: Levels) -> None:
    for name, me in (
        ("lena", "Lena_Language1"),
        ("rita", "Rita_Reinforce1"),
        ("victor", "Victor_Vision1"),
    ):
        token = levels.tokens[name]
        for path in ("/me", "/me/papers", "/me/candidates"):
            for params in ({}, {"limit": 1000}, {"reviewer_id": "Grace_Graph1"}):
                text = levels.call("GET", path, token, params=params).text
                for other in _others(me):
                    assert other not in text, (name, path, other)
        # a query naming someone else changes nothing
        plain = levels.call("GET", "/me/candidates", token).json()
        named = levels.call(
            "GET", "/me/candidates", token, params={"person_id": "Grace_Graph1"}
        ).json()
        assert plain == named


def test_my_candidates_hold_my_scores_and_bids_only(levels: Levels) -> None:
    lena = levels.tokens["lena"]
    mine = levels.ok("GET", "/me/candidates", lena, params={"limit": 1000})["items"]
    for item in mine:
        pair = levels.ok("GET", f"/affinity/pairs/{item['paper_id']}/Lena_Language1", levels.chair)
        assert item["score"] == pytest.approx(pair["score"])
        assert item["bid"] == pair["bid"]
    # Victor's High on P4 and Not Willing on P1 are his: Lena has no bid there
    bids = {i["paper_id"]: i["bid"] for i in mine}
    assert "P4" in bids and bids["P4"] is None
    assert bids.get("P1") is None


def test_explanations_of_other_pairs_are_unknown_papers(levels: Levels) -> None:
    rita = levels.tokens["rita"]
    own = levels.ok("GET", "/me/pairs/P1", rita)
    assert own["reviewer_id"] == "Rita_Reinforce1"
    assert own["explanation"]["reviewer_id"] == "Rita_Reinforce1"
    text = str(own)
    for other in _others("Rita_Reinforce1"):
        assert other not in text
    unknown = levels.call("GET", "/me/pairs/P99", rita)
    conflicted = levels.call("GET", "/me/pairs/P3", rita)  # she wrote P3
    assert unknown.status_code == conflicted.status_code == 404
    assert unknown.text.replace("P99", "P3") == conflicted.text
    # another person's id in the path is a paper id like any other: not found
    someone = levels.call("GET", "/me/pairs/Grace_Graph1", rita)
    assert someone.status_code == 404 and "Rita" not in someone.text
    for path in ("/me/pairs/P1/Grace_Graph1", "/me/candidates/Grace_Graph1"):
        assert levels.call("GET", path, rita).status_code == 404


def test_refusals_do_not_tell_a_conflict_from_an_unknown_paper(levels: Levels) -> None:
    rita = levels.tokens["rita"]
    answers = {}
    for paper in ("P3", "P98"):
        answers[paper] = [
            levels.call("PUT", f"/me/bids/{paper}", rita, json={"bid": "High"}),
            levels.call("DELETE", f"/me/bids/{paper}", rita),
            levels.call("POST", f"/me/papers/{paper}/decline", rita, json={"reason": "x"}),
            levels.call("GET", f"/me/pairs/{paper}", rita),
        ]
    for conflicted, unknown in zip(answers["P3"], answers["P98"], strict=True):
        assert conflicted.status_code == unknown.status_code == 404
        assert conflicted.text == unknown.text.replace("P98", "P3")
    # declining a paper that is someone else's in the live run: the same answer
    theirs = next(p for p, r in levels.pairs(levels.live) if r != "Rita_Reinforce1" and p != "P3")
    mine = {p["paper_id"] for p in levels.ok("GET", "/me/papers", rita)["items"]}
    if theirs not in mine:
        refused = levels.call("POST", f"/me/papers/{theirs}/decline", rita, json={"reason": "x"})
        assert refused.status_code == 404
        assert refused.text == answers["P98"][2].text.replace("P98", theirs)


def test_paging_past_the_end_shows_nothing_more(levels: Levels) -> None:
    for name in ("lena", "alan"):
        token = levels.tokens[name]
        for path in ("/me/papers", "/me/candidates"):
            full = levels.ok("GET", path, token, params={"limit": 1000})
            past = levels.ok("GET", path, token, params={"offset": full["total"] + 5})
            assert past["items"] == [] and past["total"] == full["total"]
        too_far = levels.call("GET", "/me/candidates", token, params={"offset": -1})
        assert too_far.status_code == 422


def test_an_area_chair_sees_reviewer_names_only(levels: Levels) -> None:
    alan = levels.tokens["alan"]
    papers = levels.ok("GET", "/me/papers", alan)["items"]
    assert papers
    for paper in papers:
        for reviewer in paper["reviewers"]:
            assert set(reviewer) == {"reviewer_id", "reviewer_name"}
    # not the reviewers' scores: the scores shown are Alan's own
    for paper in papers:
        own = levels.ok("GET", f"/me/pairs/{paper['paper_id']}", alan, params={"explain": False})
        assert own["score"] == pytest.approx(paper["score"])
    # a reviewer's papers elsewhere, their candidates or bids: nothing
    text = str(levels.ok("GET", "/me/candidates", alan, params={"limit": 1000}))
    for other in _others("Alan_Chair1"):
        assert other not in text


def test_a_person_token_on_another_venue_is_refused_alike(levels: Levels) -> None:
    me = levels.api.call("GET", f"/venues/{levels.venue}/me", levels.tokens["lena"])
    assert me.status_code == 200
    # the same token on another venue, existing or not: 403 alike
    other = levels.api.call("GET", "/venues/no-such-venue/me", levels.tokens["lena"])
    existing, _c, _v = levels.api.new_venue()
    elsewhere = levels.api.call("GET", f"/venues/{existing}/me", levels.tokens["lena"])
    assert other.status_code == elsewhere.status_code == 403
