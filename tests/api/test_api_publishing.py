"""Publishing: confirmation naming the run and its version, refusal listing the hard
constraints a run breaks now, overrides, one live run per venue, rollback, audit."""

from __future__ import annotations

from typing import Any

import pytest
from api_helpers import load_venue
from conftest import Api
from sqlalchemy import update
from sqlalchemy.exc import IntegrityError

from reviewer_recommender.storage.models import AssignmentRow

PARAMS = {"reviewers_per_paper": 1, "max_load": 2, "solver": "flow"}


def _solve(api: Api, venue: str, chair: str, **params: Any) -> int:
    job = api.call("POST", f"/venues/{venue}/assignments", chair, json={**PARAMS, **params}).json()
    assert job["state"] == "succeeded", job
    return int(job["result"]["assignment_id"])


def _run(api: Api, venue: str, token: str, run: int) -> dict[str, Any]:
    return api.call("GET", f"/venues/{venue}/assignments/{run}", token).json()


def _pairs(api: Api, venue: str, token: str, run: int) -> set[tuple[str, str]]:
    items = api.call(
        "GET", f"/venues/{venue}/assignments/{run}/pairs", token, params={"limit": 1000}
    ).json()["items"]
    return {(p["paper_id"], p["reviewer_id"]) for p in items}


def _deploy(api: Api, venue: str, token: str, run: int, **body: Any) -> Any:
    version = body.pop("version", None)
    if version is None:
        version = _run(api, venue, token, run)["version"]
    return api.call(
        "POST",
        f"/venues/{venue}/assignments/{run}/deploy",
        token,
        json={"assignment_id": run, "version": version, **body},
    )


def test_deploy_needs_a_confirmation_naming_run_and_version(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    run = _solve(api, venue, chair)
    path = f"/venues/{venue}/assignments/{run}/deploy"
    assert api.call("POST", path, chair).status_code == 422  # no body: no confirmation
    wrong_run = api.call("POST", path, chair, json={"assignment_id": run + 1, "version": 1})
    assert wrong_run.status_code == 422 and "confirmation names" in wrong_run.json()["detail"]
    stale = api.call("POST", path, chair, json={"assignment_id": run, "version": 2})
    assert stale.status_code == 409 and "version 1" in stale.json()["detail"]
    assert _run(api, venue, chair, run)["state"] == "draft"
    ok = api.call("POST", path, chair, json={"assignment_id": run, "version": 1})
    assert ok.status_code == 200, ok.text
    assert ok.json()["state"] == "live" and ok.json()["version"] == 1
    again = api.call("POST", path, chair, json={"assignment_id": run, "version": 1})
    assert again.status_code == 409 and "already the live" in again.json()["detail"]


def test_every_edit_bumps_the_version_the_confirmation_must_name(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    run = _solve(api, venue, chair, max_load=4)
    base = f"/venues/{venue}/assignments/{run}"
    assert _run(api, venue, chair, run)["version"] == 1
    reviewer_of_p1 = next(r for p, r in _pairs(api, venue, chair, run) if p == "P1")
    pair = {"paper_id": "P1", "reviewer_id": reviewer_of_p1}
    assert api.call("POST", f"{base}/pin", chair, json=pair).status_code == 200
    assert _run(api, venue, chair, run)["version"] == 2
    assert api.call("POST", f"{base}/unpin", chair, json=pair).status_code == 200
    assert _run(api, venue, chair, run)["version"] == 3
    refused = _deploy(api, venue, chair, run, version=2)
    assert refused.status_code == 409 and "version 3" in refused.json()["detail"]
    # a refused edit does not bump it
    assert api.call("POST", f"{base}/unpin", chair, json=pair).status_code == 404
    assert _run(api, venue, chair, run)["version"] == 3
    assert _deploy(api, venue, chair, run, version=3).status_code == 200


def test_one_live_run_superseded_rollback_and_audit(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    load_venue(api, venue, chair)
    first = _solve(api, venue, chair)
    second = _solve(api, venue, chair, max_load=3)
    assert api.call("GET", f"/venues/{venue}", viewer).json()["live_assignment_id"] is None
    assert api.call("GET", f"/venues/{venue}/assignments/live", viewer).status_code == 404

    assert _deploy(api, venue, chair, first).status_code == 200
    assert _deploy(api, venue, api.admin, second).status_code == 200
    states = {r: _run(api, venue, chair, r)["state"] for r in (first, second)}
    assert states == {first: "superseded", second: "live"}
    assert _run(api, venue, chair, first)["superseded_at"] is not None
    assert api.call("GET", f"/venues/{venue}", viewer).json()["live_assignment_id"] == second
    assert api.call("GET", f"/venues/{venue}/assignments/live", viewer).json()["id"] == second
    # the superseded run stays available to chairs, not to viewers; it cannot be edited
    assert api.call("GET", f"/venues/{venue}/assignments/{first}", viewer).status_code == 404
    edit = api.call(
        "POST",
        f"/venues/{venue}/assignments/{first}/forbid",
        chair,
        json={"paper_id": "P1", "reviewer_id": "Grace_Graph1"},
    )
    assert edit.status_code == 409 and "only drafts" in edit.json()["detail"]

    # rolling back is publishing the superseded run again, through the same checks
    rollback = _deploy(api, venue, chair, first)
    assert rollback.status_code == 200, rollback.text
    states = {r: _run(api, venue, chair, r)["state"] for r in (first, second)}
    assert states == {first: "live", second: "superseded"}
    listing = api.call("GET", f"/venues/{venue}/assignments", viewer).json()
    assert [a["id"] for a in listing["items"]] == [first]

    audit = api.call("GET", f"/venues/{venue}/audit", chair, params={"limit": 100}).json()
    published = [e for e in audit["items"] if e["action"] == "assignment.deploy"]
    assert [(e["actor"], e["detail"]["assignment_id"]) for e in published] == [
        (f"chair@{venue}", first),
        ("admin", second),
        (f"chair@{venue}", first),
    ]
    assert published[0]["detail"]["rollback"] is True
    assert published[0]["detail"]["previous_live_id"] == second
    assert published[1]["detail"]["previous_live_id"] == first
    assert published[2]["detail"]["previous_live_id"] is None


def test_the_database_holds_at_most_one_live_run_per_venue(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    first = _solve(api, venue, chair)
    second = _solve(api, venue, chair, max_load=3)
    assert _deploy(api, venue, chair, first).status_code == 200
    with api.database.session() as session:
        with pytest.raises(IntegrityError):
            session.execute(
                update(AssignmentRow).where(AssignmentRow.id == second).values(state="live")
            )
            session.flush()
        session.rollback()


def test_publishing_an_old_draft_is_refused_while_it_breaks_a_later_forbid(api: Api) -> None:
    """An older draft holds a pair the chair forbade later."""
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    old = _solve(api, venue, chair)
    newer = _solve(api, venue, chair)
    paper, reviewer = sorted(_pairs(api, venue, chair, newer))[0]
    forbid = api.call(
        "POST",
        f"/venues/{venue}/assignments/{newer}/forbid",
        chair,
        json={"paper_id": paper, "reviewer_id": reviewer, "reason": "advisor of the author"},
    )
    assert forbid.status_code == 200
    assert (paper, reviewer) in _pairs(api, venue, chair, old)
    # the forbid is the newer draft's own until the chair promotes it to a venue rule
    assert api.call("GET", f"/venues/{venue}/assignments/{old}/check", chair).json()["total"] == 0
    promoted = api.call(
        "POST", f"/venues/{venue}/assignments/{newer}/rules/promote", chair, json={}
    )
    assert promoted.status_code == 200, promoted.text

    refused = _deploy(api, venue, chair, old)
    assert refused.status_code == 409
    body = refused.json()["detail"]
    assert body["total"] == 1 and body["assignment_id"] == old
    assert body["violations"] == [
        {
            "kind": "forbid",
            "paper_id": paper,
            "paper_title": body["violations"][0]["paper_title"],
            "reviewer_id": reviewer,
            "reviewer_name": reviewer.removesuffix("1").replace("_", " "),
            "detail": "forbidden by a chair: advisor of the author",
        }
    ]
    assert body["violations"][0]["paper_title"]
    assert f"({paper}, {reviewer})" in body["message"] and "override" in body["message"]
    assert _run(api, venue, chair, old)["state"] == "draft"
    check = api.call("GET", f"/venues/{venue}/assignments/{old}/check", chair).json()
    assert check["total"] == 1 and check["violations"] == body["violations"]

    # an override must name exactly what is listed
    stray = _deploy(
        api,
        venue,
        chair,
        old,
        overrides=[{"paper_id": "P4", "reviewer_id": "Grace_Graph1", "reason": "x"}],
    )
    assert stray.status_code == 422 and "break no hard constraint" in stray.json()["detail"]
    reasonless = _deploy(
        api, venue, chair, old, overrides=[{"paper_id": paper, "reviewer_id": reviewer}]
    )
    assert reasonless.status_code == 422
    published = _deploy(
        api,
        venue,
        chair,
        old,
        overrides=[{"paper_id": paper, "reviewer_id": reviewer, "reason": "program chair ok"}],
    )
    assert published.status_code == 200, published.text
    entry = api.call("GET", f"/venues/{venue}/audit", chair).json()["items"][0]
    assert entry["action"] == "assignment.deploy"
    listed = {k: v for k, v in body["violations"][0].items() if not k.endswith(("_title", "_name"))}
    assert entry["detail"]["overridden"] == [{**listed, "reason": "program chair ok"}]


def test_publishing_checks_bids_pins_loads_and_demand_as_stored_now(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    run = _solve(api, venue, chair)
    assert api.call("GET", f"/venues/{venue}/assignments/{run}/check", chair).json()["total"] == 0
    pairs = sorted(_pairs(api, venue, chair, run))
    (bid_paper, bid_reviewer), (other_paper, _r) = pairs[0], pairs[1]
    bids = f"paper_id,reviewer_id,bid\n{bid_paper},{bid_reviewer},Not Willing\n".encode()
    uploaded = api.call(
        "POST",
        f"/venues/{venue}/bids/upload",
        chair,
        files={"file": ("bids.csv", bids, "text/csv")},
    )
    assert uploaded.status_code == 200, uploaded.text
    loads: dict[str, int] = {}
    for _p, r in pairs:
        loads[r] = loads.get(r, 0) + 1
    busiest = max(loads, key=lambda r: (loads[r], r))
    capped = api.call(
        "PUT",
        f"/venues/{venue}/reviewer-max-loads/{busiest}",
        chair,
        json={"max_load": loads[busiest] - 1},
    )
    assert capped.status_code == 200, capped.text
    demanded = api.call(
        "PUT", f"/venues/{venue}/paper-demands/{other_paper}", chair, json={"demand": 2}
    )
    assert demanded.status_code == 200, demanded.text
    # a pin placed on another draft, once promoted, is a constraint of the venue too
    other = _solve(api, venue, chair, max_load=3)
    missing_pin = next(
        (p, r)
        for p in ("P1", "P2", "P4")
        for r in ("Grace_Graph1", "Victor_Vision1", "Lena_Language1")
        if (p, r) not in _pairs(api, venue, chair, run) and (p, r) != (bid_paper, bid_reviewer)
    )
    pinned = api.call(
        "POST",
        f"/venues/{venue}/assignments/{other}/pin",
        chair,
        json={"paper_id": missing_pin[0], "reviewer_id": missing_pin[1], "force": True},
    )
    assert pinned.status_code == 200, pinned.text
    assert api.call(
        "POST", f"/venues/{venue}/assignments/{other}/rules/promote", chair, json={}
    ).json()["promoted"] == {"pin": 1, "forbid": 0, "max_load": 0, "unpin": 0}

    refused = _deploy(api, venue, chair, run)
    assert refused.status_code == 409
    found = {
        (v["kind"], v["paper_id"], v["reviewer_id"]) for v in refused.json()["detail"]["violations"]
    }
    assert ("bid", bid_paper, bid_reviewer) in found
    assert ("max_load", None, busiest) in found
    assert ("demand", other_paper, None) in found
    assert ("pin", *missing_pin) in found
    # a re-solve respects them all and publishes without overrides
    fresh = _solve(api, venue, chair, max_load=3)
    assert api.call("GET", f"/venues/{venue}/assignments/{fresh}/check", chair).json() == {
        "assignment_id": fresh,
        "version": 1,
        "state": "draft",
        "total": 0,
        "limit": 1000,
        "offset": 0,
        "violations": [],
    }
    assert _deploy(api, venue, chair, fresh).status_code == 200


def test_an_edit_racing_a_publication_loses_cleanly(api: Api) -> None:
    """Edits and publication move a run on from the version they read, atomically."""
    from reviewer_recommender.errors import StateConflict
    from reviewer_recommender.services.publishing import claim_version

    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    run = _solve(api, venue, chair)
    with api.database.session() as reader:
        stale = reader.get(AssignmentRow, run)
        assert stale is not None and stale.version == 1
        # meanwhile another request edits the run
        reviewer_of_p1 = next(r for p, r in _pairs(api, venue, chair, run) if p == "P1")
        pinned = api.call(
            "POST",
            f"/venues/{venue}/assignments/{run}/pin",
            chair,
            json={"paper_id": "P1", "reviewer_id": reviewer_of_p1},
        )
        assert pinned.status_code == 200
        with pytest.raises(StateConflict) as refused:
            claim_version(reader, stale, states=("draft",))
        assert refused.value.code == "stale_version"
    assert _run(api, venue, chair, run)["version"] == 2


def test_concurrent_publications_leave_exactly_one_live_run(
    database_url: str, tmp_path: Any
) -> None:
    """Two chairs publish two runs at the same moment (real threads, real database): each
    gets 200 or 409, never a 5xx, and the venue ends with exactly one live run."""
    from concurrent.futures import ThreadPoolExecutor

    from conftest import make_settings
    from fastapi.testclient import TestClient

    from api.app import create_app

    app = create_app(make_settings(database_url, tmp_path))
    with TestClient(app) as client:
        api = Api(client, app.state.database)
        venue, chair, _viewer = api.new_venue()
        load_venue(api, venue, chair)
        runs = [_solve(api, venue, chair, max_load=m) for m in (2, 3, 4, 2)]
        for attempt in range(3):
            pair = runs[2 * (attempt % 2) : 2 * (attempt % 2) + 2]
            versions = {r: _run(api, venue, chair, r)["version"] for r in pair}

            def publish(run: int, version: int) -> Any:
                return api.call(
                    "POST",
                    f"/venues/{venue}/assignments/{run}/deploy",
                    chair,
                    json={"assignment_id": run, "version": version},
                )

            with ThreadPoolExecutor(2) as pool:
                answers = list(pool.map(publish, pair, [versions[r] for r in pair]))
            assert all(a.status_code in (200, 409) for a in answers), [a.text for a in answers]
            assert any(a.status_code == 200 for a in answers)
            states = [_run(api, venue, chair, r)["state"] for r in runs]
            assert states.count("live") == 1, states


def test_the_checker_the_api_and_the_page_share_the_violation_kinds() -> None:
    """The page decides on ``kind``: every kind the venue check reports has a schema value
    and a label on the page, and no other."""
    import re
    from pathlib import Path
    from typing import get_args

    from api import app
    from api.schemas import ViolationOut
    from matching.violations import ASSIGNMENT_KINDS

    assert get_args(ViolationOut.model_fields["kind"].annotation) == ASSIGNMENT_KINDS
    # the words of the deploy dialog and the edit previews (components/violations.js)
    page = (Path(app.__file__).parent / "static" / "components" / "violations.js").read_text()
    words = re.search(r"export const KIND_WORDS = \{(.*?)\};", page, re.S)
    assert words is not None
    assert set(re.findall(r"(\w+):", words.group(1))) == set(ASSIGNMENT_KINDS)
