"""Explanations a chair can read, through the API: the plain sentence, the score split into
its parts in the score's units (the bid's part included, so they add up to the score), the
publications with their share of the evidence, shared terms without filler words. A viewer
sees the score but not the bid's part; a person sees their own."""

from __future__ import annotations

import pytest
from api_helpers import load_venue, person_token
from conftest import Api

from recommender.affinity.explain import FILLER_TERMS

BIDS = b"paper_id,reviewer_id,bid\nP1,Grace_Graph1,Very High\nP3,Rita_Reinforce1,Low\n"


def _venue(api: Api, bid_weight: float = 0.2) -> tuple[str, str, str]:
    venue, chair, viewer = api.new_venue()
    load_venue(api, venue, chair)
    upload = api.call(
        "POST", f"/venues/{venue}/bids/upload", chair, files={"file": ("b.csv", BIDS, "text/csv")}
    )
    assert upload.is_success, upload.text
    job = api.call(
        "POST",
        f"/venues/{venue}/affinity/jobs",
        chair,
        json={"config": {"method": "tfidf", "aggregation": "mean", "bid_weight": bid_weight}},
    ).json()
    assert job["state"] == "succeeded", job
    return venue, chair, viewer


def _explained(api: Api, venue: str, token: str, paper: str, reviewer: str) -> dict:
    response = api.call("GET", f"/venues/{venue}/affinity/pairs/{paper}/{reviewer}", token)
    assert response.status_code == 200, response.text
    return response.json()


def test_the_parts_add_up_to_the_score_with_the_bid_and_shares_sum_to_one(api: Api) -> None:
    venue, chair, _viewer = _venue(api)
    pair = _explained(api, venue, chair, "P1", "Grace_Graph1")
    ex = pair["explanation"]
    assert ex["available"] is True
    parts = ex["parts"]
    assert parts["bid"] == pytest.approx(0.2)  # Very High (1) x bid_weight 0.2
    assert parts["text_match"] > 0 and parts["embedding"] == 0
    summed = parts["text_match"] + parts["embedding"] + parts["bid"] + parts["baseline"]
    assert summed == pytest.approx(parts["total"]) and parts["total"] == pytest.approx(
        pair["score"], abs=1e-6
    )
    shares = [p["share"] for p in ex["publications"]]
    assert sum(shares) == pytest.approx(1.0) and all(0 <= s <= 1 for s in shares)
    assert ex["sentence"].startswith("2 of this reviewer's 2 papers are about")
    assert "bid raises the score by 0.2" in ex["sentence"]
    terms = [t["term"] for t in ex["shared_terms"]]
    assert "graph" in terms and not [t for t in terms if t in FILLER_TERMS]
    # a Low bid lowers it; a pair without a bid has no bid part
    low = _explained(api, venue, chair, "P3", "Rita_Reinforce1")["explanation"]
    assert low["parts"]["bid"] == pytest.approx(-0.1)
    assert "learning" not in [t["term"] for t in low["shared_terms"]]  # a filler word
    plain = _explained(api, venue, chair, "P2", "Victor_Vision1")["explanation"]
    assert plain["parts"]["bid"] == 0 and "bid" not in plain["sentence"]


def test_a_viewer_sees_the_score_but_not_the_bids_part_a_person_sees_their_own(
    api: Api,
) -> None:
    venue, chair, viewer = _venue(api)
    seen = _explained(api, venue, viewer, "P1", "Grace_Graph1")
    assert seen["bid"] is None and seen["explanation"]["parts"]["bid"] is None
    assert "bid" not in seen["explanation"]["sentence"]
    assert seen["explanation"]["parts"]["total"] == pytest.approx(seen["score"], abs=1e-6)
    grace = person_token(api, venue, chair, "reviewer", "Grace_Graph1")
    own = api.call("GET", f"/venues/{venue}/me/pairs/P1", grace).json()
    assert own["bid"] == "Very High"
    assert own["explanation"]["parts"]["bid"] == pytest.approx(0.2)
