"""Replacing an upload shows its diff first and applies only the previewed file; a file of
the wrong kind is refused before anything loads; persons without publications are flagged.
Through HTTP on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from typing import Any

from api_helpers import REVIEWERS, SUBMISSIONS
from conftest import Api


def _file(name: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    return {"file": (name, json.dumps(records).encode(), "application/json")}


def _count(api: Api, venue: str, chair: str, kind: str) -> int:
    return int(api.call("GET", f"/venues/{venue}/{kind}", chair).json()["total"])


def test_a_submissions_file_in_the_reviewers_upload_is_refused_naming_what_it_is(
    api: Api,
) -> None:
    venue, chair, _viewer = api.new_venue()
    wrong = api.call(
        "POST", f"/venues/{venue}/reviewers/upload", chair, files=_file("subs.json", SUBMISSIONS)
    )
    assert wrong.status_code == 422, wrong.text
    assert (
        "looks like a submissions file" in wrong.text and "upload it as submissions" in wrong.text
    )
    assert _count(api, venue, chair, "reviewers") == 0
    csv = b"id,title,abstract\nP1,A title,An abstract\n"
    as_csv = api.call(
        "POST",
        f"/venues/{venue}/reviewers/upload/preview",
        chair,
        files={"file": ("subs.csv", csv, "text/csv")},
    )
    assert as_csv.status_code == 422 and "looks like a submissions file" in as_csv.text
    other = api.call(
        "POST", f"/venues/{venue}/submissions/upload", chair, files=_file("revs.json", REVIEWERS)
    )
    assert other.status_code == 422 and "looks like a reviewers file" in other.text
    assert _count(api, venue, chair, "submissions") == 0


def test_persons_without_publications_are_flagged_in_the_answer(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    bare = {"id": "Nora_Nopubs1", "name": "Nora Nopubs", "email": "n@x.org"}
    response = api.call(
        "POST",
        f"/venues/{venue}/reviewers/upload",
        chair,
        files=_file("revs.json", [*REVIEWERS, bare]),
    )
    assert response.status_code == 200, response.text
    assert response.json()["no_publications"] == ["Nora_Nopubs1"]


def test_replacing_an_upload_previews_its_diff_and_applies_only_the_previewed_file(
    api: Api,
) -> None:
    venue, chair, viewer = api.new_venue()
    base = f"/venues/{venue}/submissions/upload"
    assert api.call("POST", base, chair, files=_file("s.json", SUBMISSIONS)).is_success
    renamed = {**SUBMISSIONS[0], "title": "A new title"}
    added = {"id": "P9", "title": "Fresh paper", "abstract": "New.", "authors": ["Z"]}
    new_file = [renamed, SUBMISSIONS[1], added]  # P3 and P4 left out
    assert (
        api.call("POST", f"{base}/preview", viewer, files=_file("s.json", new_file)).status_code
        == 403
    )
    preview = api.call("POST", f"{base}/preview", chair, files=_file("s.json", new_file))
    assert preview.status_code == 200, preview.text
    diff = preview.json()
    assert (diff["rows"], diff["added"], diff["changed"], diff["unchanged"], diff["removed"]) == (
        3,
        1,
        1,
        1,
        2,
    )
    assert diff["added_ids"] == ["P9"] and diff["changed_ids"] == ["P1"]
    assert diff["removed_ids"] == ["P3", "P4"] and diff["changed_fields"] == {"title": 1}
    # nothing stored by the preview
    assert _count(api, venue, chair, "submissions") == 4
    # another file under the token: refused, nothing stored
    other = [*new_file, {"id": "P10", "title": "x", "abstract": "y"}]
    stale = api.call(
        "POST",
        base,
        chair,
        params={"preview": diff["token"], "withdraw_absent": "true"},
        files=_file("s.json", other),
    )
    assert stale.status_code == 409 and stale.json()["code"] == "preview_stale"
    assert _count(api, venue, chair, "submissions") == 4
    # withdraw_absent without a preview: refused
    blind = api.call(
        "POST", base, chair, params={"withdraw_absent": "true"}, files=_file("s.json", new_file)
    )
    assert blind.status_code == 422 and blind.json()["code"] == "preview_required"
    applied = api.call(
        "POST",
        base,
        chair,
        params={"preview": diff["token"], "withdraw_absent": "true"},
        files=_file("s.json", new_file),
    )
    assert applied.status_code == 200, applied.text
    body = applied.json()
    assert (body["created"], body["updated"], body["withdrawn"]) == (1, 2, 2)
    listed = api.call("GET", f"/venues/{venue}/submissions", chair, params={"status": "withdrawn"})
    assert [p["id"] for p in listed.json()["items"]] == ["P3", "P4"]
    # the token was for the venue as it was: applying it again is stale
    again = api.call(
        "POST", base, chair, params={"preview": diff["token"]}, files=_file("s.json", new_file)
    )
    assert again.status_code == 409
    entry = next(
        e
        for e in api.call("GET", f"/venues/{venue}/audit", chair).json()["items"]
        if e["action"] == "submissions.upload" and e["detail"].get("previewed")
    )
    assert (entry["detail"]["created"], entry["detail"]["withdrawn"]) == (1, 2)


def test_a_persons_preview_counts_within_the_pool(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    path = f"/venues/{venue}/reviewers/upload"
    assert api.call("POST", path, chair, files=_file("r.json", REVIEWERS)).is_success
    chairs = api.call(
        "POST",
        f"{path}/preview",
        chair,
        params={"pool": "area_chairs"},
        files=_file("r.json", REVIEWERS[:1]),
    ).json()
    # the person exists (unchanged); the area chairs' pool is empty: nothing left out
    assert (chairs["added"], chairs["unchanged"], chairs["removed"], chairs["pool"]) == (
        0,
        1,
        0,
        "area_chairs",
    )
    fewer = api.call("POST", f"{path}/preview", chair, files=_file("r.json", REVIEWERS[:3])).json()
    assert fewer["removed_ids"] == ["Lena_Language1"]


def test_a_withdrawal_after_the_preview_makes_it_stale(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    base = f"/venues/{venue}/submissions/upload"
    assert api.call("POST", base, chair, files=_file("s.json", SUBMISSIONS)).is_success
    token = api.call("POST", f"{base}/preview", chair, files=_file("s.json", SUBMISSIONS[:3]))
    assert token.json()["removed_ids"] == ["P4"] and token.json()["withdrawn_named"] == []
    withdrawn = api.call("POST", f"/venues/{venue}/submissions/P1/withdraw", chair, json={})
    assert withdrawn.is_success
    stale = api.call(
        "POST",
        base,
        chair,
        params={"preview": token.json()["token"], "withdraw_absent": "true"},
        files=_file("s.json", SUBMISSIONS[:3]),
    )
    assert stale.status_code == 409 and stale.json()["code"] == "preview_stale"
    again = api.call("POST", f"{base}/preview", chair, files=_file("s.json", SUBMISSIONS[:3]))
    assert again.json()["withdrawn_named"] == ["P1"] and again.json()["unchanged"] == 3
