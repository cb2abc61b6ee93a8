"""A venue with every level of assignment, for the tests of pools and persons: reviewers,
area chairs (with Grace Graph, a reviewer too) and senior area chairs in their pools, each
pool's affinities, a reviewer draft solved before any area chair was live (``early``), the
live area-chair run, the live reviewer run (solved under the cross-level rule), and person
tokens the chair made."""

from __future__ import annotations

from typing import Any

from api_helpers import load_levels, load_venue, person_token, publish, solve
from conftest import Api


class Levels:
    def __init__(self, api: Api):
        self.api = api
        self.venue, self.chair, self.viewer = api.new_venue()
        self.base = f"/venues/{self.venue}"
        load_venue(api, self.venue, self.chair)
        load_levels(api, self.venue, self.chair)
        self.early = solve(api, self.venue, self.chair, reviewers_per_paper=2, max_load=3)
        self.ac_run = solve(
            api, self.venue, self.chair, pool="area_chairs", reviewers_per_paper=1, max_load=2
        )
        publish(api, self.venue, self.chair, self.ac_run)
        self.live = solve(api, self.venue, self.chair, reviewers_per_paper=2, max_load=3)
        publish(api, self.venue, self.chair, self.live)
        self.tokens = {
            "lena": person_token(api, self.venue, self.chair, "reviewer", "Lena_Language1"),
            "rita": person_token(api, self.venue, self.chair, "reviewer", "~Rita_Reinforce1"),
            "victor": person_token(api, self.venue, self.chair, "reviewer", "Victor_Vision1"),
            "alan": person_token(api, self.venue, self.chair, "area_chair", "Alan_Chair1"),
        }

    def call(self, method: str, path: str, token: str, **kwargs: Any) -> Any:
        return self.api.call(method, f"{self.base}{path}", token, **kwargs)

    def ok(self, method: str, path: str, token: str, **kwargs: Any) -> Any:
        response = self.call(method, path, token, **kwargs)
        assert response.status_code in (200, 201, 202), response.text
        return response.json()

    def pairs(self, run: int) -> set[tuple[str, str]]:
        items = self.ok("GET", f"/assignments/{run}/pairs", self.chair, params={"limit": 1000})
        return {(p["paper_id"], p["reviewer_id"]) for p in items["items"]}

    def set_bidding(self, value: bool) -> None:
        assert self.ok("PATCH", "", self.chair, json={"bidding_open": value})["bidding_open"] is (
            value
        )
