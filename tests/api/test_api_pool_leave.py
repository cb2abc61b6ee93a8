"""A person leaves one pool, not the venue: a replacing upload of a pool takes the persons
it leaves out of that pool only when they are in another (and withdraws only those whose
only pool it is), and a chair takes one person out of one pool. Preview, answer and audit
give the same counts. Through HTTP on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from typing import Any

from api_helpers import AREA_CHAIRS, REVIEWERS, SUBMISSIONS, TFIDF, load_venue, publish, solve
from conftest import Api


def _file(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {"file": ("people.json", json.dumps(records).encode(), "application/json")}


class Venue:
    def __init__(self, api: Api, venue: str, chair: str, viewer: str):
        self.api, self.venue, self.chair, self.viewer = api, venue, chair, viewer
        self.base = f"/venues/{venue}"

    def call(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> Any:
        return self.api.call(method, f"{self.base}{path}", token or self.chair, **kwargs)

    def ok(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.call(method, path, **kwargs)
        assert response.status_code in (200, 201, 202), response.text
        return response.json()

    def person(self, person_id: str) -> tuple[str, list[str]]:
        found = self.ok("GET", f"/reviewers/{person_id}")
        return found["status"], found["pools"]

    def preview(self, pool: str, people: list[dict[str, Any]]) -> dict[str, Any]:
        return dict(
            self.ok("POST", "/reviewers/upload/preview", params={"pool": pool}, files=_file(people))
        )

    def replace(self, pool: str, people: list[dict[str, Any]], token: str) -> Any:
        return self.call(
            "POST",
            "/reviewers/upload",
            params={"pool": pool, "preview": token, "withdraw_absent": "true"},
            files=_file(people),
        )

    def audit(self, action: str) -> list[dict[str, Any]]:
        items = self.ok("GET", "/audit", params={"limit": 200})["items"]
        return [e for e in items if e["action"] == action]


def _new(api: Api) -> Venue:
    return Venue(api, *api.new_venue())


def _counts(diff: dict[str, Any]) -> tuple[int, int, int, list[str], list[str], list[str]]:
    return (
        diff["removed"],
        diff["withdrawing"],
        diff["leaving_pool"],
        diff["removed_ids"],
        diff["leaving_pool_ids"],
        diff["leaving_assigned"],
    )


def test_replacing_the_area_chairs_upload_takes_a_reviewer_out_of_that_pool_only(
    api: Api,
) -> None:
    v = _new(api)
    assert v.call("POST", "/reviewers", json=REVIEWERS).is_success
    assert v.call("POST", "/submissions", json=SUBMISSIONS).is_success
    # Grace Graph is a reviewer and an area chair; Bea Chair is an area chair only
    chairs = [*AREA_CHAIRS, REVIEWERS[0]]
    assert v.call("POST", "/reviewers", params={"pool": "area_chairs"}, json=chairs).is_success
    diff = v.preview("area_chairs", AREA_CHAIRS[:1])
    assert _counts(diff) == (2, 1, 1, ["Bea_Chair1", "Grace_Graph1"], ["Grace_Graph1"], [])
    applied = v.replace("area_chairs", AREA_CHAIRS[:1], diff["token"])
    assert applied.status_code == 200, applied.text
    body = applied.json()
    assert (body["created"], body["updated"], body["withdrawn"], body["left_pool"]) == (0, 1, 1, 1)
    # Grace: still an active reviewer, out of the area chairs; Bea: withdrawn, as before
    assert v.person("Grace_Graph1") == ("active", ["reviewers"])
    assert v.person("Bea_Chair1") == ("withdrawn", ["area_chairs"])
    assert v.person("Alan_Chair1") == ("active", ["area_chairs"])
    reviewers = v.ok("GET", "/reviewers", params={"pool": "reviewers", "status": "active"})
    assert [r["id"] for r in reviewers["items"]] == [
        "Grace_Graph1",
        "Lena_Language1",
        "Rita_Reinforce1",
        "Victor_Vision1",
    ]
    chairs_now = v.ok("GET", "/reviewers", params={"pool": "area_chairs"})["items"]
    assert [(r["id"], r["status"]) for r in chairs_now] == [
        ("Alan_Chair1", "active"),
        ("Bea_Chair1", "withdrawn"),
    ]
    (entry,) = [e for e in v.audit("reviewers.upload") if e["detail"].get("previewed")]
    detail = entry["detail"]
    assert (detail["pool"], detail["withdrawn"], detail["left_pool"]) == ("area_chairs", 1, 1)
    assert "1 not in the file withdrawn" in entry["summary"]
    assert "1 not in the file out of the area_chairs pool" in entry["summary"]
    # the reviewers are her only pool now: a reviewers file without her would withdraw her
    again = v.preview("reviewers", REVIEWERS[1:])
    assert _counts(again) == (1, 1, 0, ["Grace_Graph1"], [], [])


def test_replacing_the_reviewers_upload_keeps_an_area_chair_who_reviews(api: Api) -> None:
    v = _new(api)
    assert v.call("POST", "/reviewers", json=REVIEWERS).is_success
    chairs = [*AREA_CHAIRS, REVIEWERS[0]]
    assert v.call("POST", "/reviewers", params={"pool": "area_chairs"}, json=chairs).is_success
    diff = v.preview("reviewers", REVIEWERS[2:])
    assert _counts(diff) == (
        2,
        1,
        1,
        ["Grace_Graph1", "Victor_Vision1"],
        ["Grace_Graph1"],
        [],
    )
    body = v.replace("reviewers", REVIEWERS[2:], diff["token"]).json()
    assert (body["withdrawn"], body["left_pool"]) == (1, 1)
    assert v.person("Grace_Graph1") == ("active", ["area_chairs"])
    assert v.person("Victor_Vision1") == ("withdrawn", ["reviewers"])


def test_a_single_pool_venue_replaces_as_before(api: Api) -> None:
    v = _new(api)
    assert v.call("POST", "/reviewers", json=REVIEWERS).is_success
    diff = v.preview("reviewers", REVIEWERS[:3])
    assert _counts(diff) == (1, 1, 0, ["Lena_Language1"], [], [])
    body = v.replace("reviewers", REVIEWERS[:3], diff["token"]).json()
    assert (body["withdrawn"], body["left_pool"], body["updated"]) == (1, 0, 3)
    assert v.person("Lena_Language1") == ("withdrawn", ["reviewers"])
    (entry,) = [e for e in v.audit("reviewers.upload") if e["detail"].get("previewed")]
    assert (entry["detail"]["withdrawn"], entry["detail"]["left_pool"]) == (1, 0)
    assert "out of the" not in entry["summary"]


def _chairs_world(api: Api) -> Venue:
    """Reviewers and papers with affinities; area chairs Alan Chair and Grace Graph (a
    reviewer too) with theirs: one area chair per paper, two papers each at most, so each
    area-chair solve gives Grace two papers."""
    v = _new(api)
    load_venue(api, v.venue, v.chair)
    chairs = [AREA_CHAIRS[0], REVIEWERS[0]]
    assert v.call("POST", "/reviewers", params={"pool": "area_chairs"}, json=chairs).is_success
    job = v.ok("POST", "/affinity/jobs", json={"config": TFIDF, "pool": "area_chairs"})
    assert job["state"] == "succeeded", job
    return v


def _ac_solve(v: Venue, max_load: int) -> int:
    return solve(
        v.api, v.venue, v.chair, pool="area_chairs", reviewers_per_paper=1, max_load=max_load
    )


def _grace_pairs(v: Venue, run: int) -> int:
    items = v.ok("GET", f"/assignments/{run}/pairs", params={"limit": 100})["items"]
    return sum(1 for p in items if p["reviewer_id"] == "Grace_Graph1")


def test_a_chair_takes_a_person_out_of_one_pool(api: Api) -> None:
    v = _chairs_world(api)
    leave = "/reviewers/Grace_Graph1/pools/area_chairs"
    first = _ac_solve(v, 2)
    assert _grace_pairs(v, first) == 2
    publish(api, v.venue, v.chair, first)
    assert v.call("DELETE", leave, v.viewer).status_code == 403
    # the live area-chair run assigns her: refused, with the re-assignment that frees her
    held = v.call("DELETE", leave)
    assert held.status_code == 409, held.text
    answer = held.json()
    assert answer["code"] == "member_assigned_live" and answer["persons"] == {"Grace_Graph1": 2}
    assert "Grace_Graph1 (2 pairs)" in answer["detail"] and "re-assign" in answer["detail"]
    assert answer["reassign"] == {
        "pool": "area_chairs",
        "withdraw": ["Grace_Graph1"],
        "reason": "leaving the area_chairs pool",
    }
    # a replace that would take her out is refused the same way, shown by its preview
    diff = v.preview("area_chairs", [AREA_CHAIRS[0]])
    assert _counts(diff) == (1, 0, 1, ["Grace_Graph1"], ["Grace_Graph1"], ["Grace_Graph1"])
    refused = v.replace("area_chairs", [AREA_CHAIRS[0]], diff["token"])
    assert refused.status_code == 409 and refused.json()["code"] == "member_assigned_live"
    assert v.person("Grace_Graph1") == ("active", ["reviewers", "area_chairs"])
    # her only pool: refused, saying to withdraw instead; not in a pool, or no such person: 404
    only = v.call("DELETE", "/reviewers/Alan_Chair1/pools/area_chairs")
    assert only.status_code == 409 and only.json()["code"] == "last_pool"
    assert "withdraw them instead" in only.json()["detail"]
    absent = v.call("DELETE", "/reviewers/Alan_Chair1/pools/senior_area_chairs")
    assert absent.status_code == 404 and absent.json()["code"] == "not_in_pool"
    assert "'Alan_Chair1'" in absent.json()["detail"]
    assert "senior_area_chairs" in absent.json()["detail"]
    nobody = v.call("DELETE", "/reviewers/Nobody_Here1/pools/area_chairs")
    assert nobody.status_code == 404 and "'Nobody_Here1'" in nobody.json()["detail"]
    bogus = v.call("DELETE", "/reviewers/Alan_Chair1/pools/chairs")
    assert bogus.status_code == 422 and "pool" in bogus.text
    # a live run without her (her quota 0, Alan takes all four), then a draft with her
    v.ok("PUT", "/reviewer-max-loads/Grace_Graph1", params={"pool": "area_chairs"},
         json={"max_load": 0})  # fmt: skip
    without = _ac_solve(v, 4)
    assert _grace_pairs(v, without) == 0
    publish(api, v.venue, v.chair, without)
    v.ok("DELETE", "/reviewer-max-loads/Grace_Graph1", params={"pool": "area_chairs"})
    draft = _ac_solve(v, 2)
    assert _grace_pairs(v, draft) == 2
    stale = v.preview("area_chairs", [AREA_CHAIRS[0]])["token"]
    left = v.call("DELETE", leave)
    assert left.status_code == 200, left.text
    out = left.json()
    assert (out["id"], out["pool"], out["pools"]) == ("Grace_Graph1", "area_chairs", ["reviewers"])
    assert [(r["assignment_id"], r["state"], len(r["pairs"])) for r in out["runs"]] == [
        (draft, "draft", 2)
    ]
    assert v.person("Grace_Graph1") == ("active", ["reviewers"])
    assert v.call("DELETE", leave).json()["code"] == "not_in_pool"
    # a preview made before is stale; the draft and the earlier run flag her pairs
    assert v.replace("area_chairs", [AREA_CHAIRS[0]], stale).json()["code"] == "preview_stale"
    for run in (draft, first):
        deploy = v.call(
            "POST", f"/assignments/{run}/deploy", json={"assignment_id": run, "version": 1}
        )
        assert deploy.status_code == 409 and deploy.json()["code"] == "constraint_violations"
        (flagged,) = [x for x in deploy.json()["violations"] if x["kind"] == "max_load"]
        assert flagged["reviewer_id"] == "Grace_Graph1"
        assert flagged["detail"].startswith("not in the area_chairs pool: its pairs are to be")
        assert "reviews 2 papers, over their max load of 0" in flagged["detail"]
    (entry,) = v.audit("reviewer.leave_pool")
    assert entry["detail"] == {
        "id": "Grace_Graph1",
        "pool": "area_chairs",
        "pools": ["reviewers"],
        "runs": [draft],
        "pairs": 2,
    }
    assert entry["summary"] == (
        "took Grace_Graph1 (Grace Graph) out of the area_chairs pool "
        "(their 2 draft pairs are to be removed)"
    )
