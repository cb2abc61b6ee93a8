"""Conflicts managed by the chairs (issue 23, point 4), through HTTP on SQLite and
PostgreSQL: the venue's detection policy with the count it yields (previewed before it is
saved), dismissing and restoring a conflict with a reason (audited; a dismissed conflict no
longer blocks the pair and re-detection keeps it out), declared conflicts, and profile ids
deciding authorship where every author has one."""

from __future__ import annotations

from typing import Any

from api_helpers import TFIDF
from conftest import Api


def _reviewer(rid: str, name: str, **fields: Any) -> dict[str, Any]:
    return {
        "id": rid,
        "name": name,
        "email": fields.pop("email", f"{rid.strip('~').lower()}@mail{rid[-1]}.example.org"),
        "affiliation": fields.pop("affiliation", f"{name} Lab"),
        "publications": fields.pop(
            "publications",
            [{"title": "Graph networks", "abstract": "Graph neural networks.", "year": 2024}],
        ),
    }


REVIEWERS = [
    # co-authored with P1's author in 2019: outside a 3-year window
    _reviewer(
        "~Ann_Old1",
        "Ann Old",
        publications=[
            {
                "title": "Old graph work",
                "abstract": "Graph networks.",
                "year": 2019,
                "authors": ["Ann Old", "Bo Author"],
            }
        ],
    ),
    _reviewer("~Lou_Ratliff3", "L. Ratliff"),
    _reviewer("~Inst_Mate1", "Inst Mate", affiliation="Same University"),
    _reviewer("~Dom_Mate1", "Dom Mate", email="dom@same.edu"),
    _reviewer("~Free_Person1", "Free Person"),
]

SUBMISSIONS = [
    {
        "id": "P1",
        "title": "Graph networks for molecules",
        "abstract": "Graph neural networks on molecular graphs.",
        "authors": ["Bo Author"],
        "authorids": ["bo@same.edu"],
        "author_affiliations": ["Same University"],
    },
    {
        "id": "P2",
        "title": "Graph learning at scale",
        "abstract": "Scalable graph neural networks.",
        "authors": ["L. Ratliff"],
    },
    {
        "id": "P3",
        "title": "Graphs with profile ids",
        "abstract": "Graph neural networks with ids.",
        "authors": ["L. Ratliff"],
        "authorids": ["~Lil_Ratliff1"],
    },
]


def _venue(api: Api) -> tuple[str, str, str]:
    venue, chair, viewer = api.new_venue()
    for kind, body in (("reviewers", REVIEWERS), ("submissions", SUBMISSIONS)):
        response = api.call("POST", f"/venues/{venue}/{kind}", chair, json=body)
        assert response.status_code == 200, response.text
    job = api.call("POST", f"/venues/{venue}/affinity/jobs", chair, json={"config": TFIDF})
    assert job.json()["state"] == "succeeded", job.text
    return venue, chair, viewer


def _conflicts(api: Api, venue: str, chair: str) -> set[tuple[str, str, str]]:
    items = api.call("GET", f"/venues/{venue}/conflicts", chair, params={"limit": 1000}).json()
    return {(c["paper_id"], c["reviewer_id"], c["source"]) for c in items["items"]}


def test_policy_preview_then_save_redetects_with_the_count_it_showed(api: Api) -> None:
    venue, chair, viewer = _venue(api)
    base = f"/venues/{venue}/conflict-policy"
    state = api.call("GET", base, chair).json()
    assert state["policy"] == {
        "coauthor_window_years": 3,
        "coauthors": True,
        "same_institution": True,
        "same_email_domain": True,
    }
    detected = {(p, r) for p, r, s in _conflicts(api, venue, chair) if s == "detected"}
    # the defaults: institution and e-mail domain of P1, L. Ratliff by name on P2 only (P3
    # gives every author's profile id, and it is not theirs); the 2019 co-author is missed
    assert detected == {("P1", "Inst_Mate1"), ("P1", "Dom_Mate1"), ("P2", "Lou_Ratliff3")}
    assert state["stored"]["detected"] == 3
    wider = {"coauthor_window_years": None, "same_institution": False, "same_email_domain": False}
    preview = api.call("POST", f"{base}/preview", chair, json=wider)
    assert preview.status_code == 200, preview.text
    body = preview.json()
    assert body["counts"]["pairs"] == 2
    assert body["counts"]["by_reason"] == {
        "author": 1,
        "coauthor": 1,
        "institution": 0,
        "email_domain": 0,
    }
    assert (body["stored_pairs"], body["added"], body["removed"]) == (3, 1, 2)
    # a preview changes nothing
    assert {(p, r) for p, r, s in _conflicts(api, venue, chair) if s == "detected"} == detected
    assert api.call("POST", f"{base}/preview", viewer, json=wider).status_code == 403
    bad = api.call("POST", f"{base}/preview", chair, json={"coauthor_window_years": -1})
    assert bad.status_code == 422
    saved = api.call("PUT", base, chair, json=wider)
    assert saved.status_code == 200, saved.text
    assert saved.json()["counts"] == body["counts"]
    assert {(p, r) for p, r, s in _conflicts(api, venue, chair) if s == "detected"} == {
        ("P1", "Ann_Old1"),
        ("P2", "Lou_Ratliff3"),
    }
    assert api.call("GET", base, chair).json()["policy"]["coauthor_window_years"] is None
    # a later affinity run detects with the venue's policy
    job = api.call("POST", f"/venues/{venue}/affinity/jobs", chair, json={"config": TFIDF})
    assert job.json()["state"] == "succeeded"
    assert ("P1", "Ann_Old1", "detected") in _conflicts(api, venue, chair)
    audit = api.call("GET", f"/venues/{venue}/audit", chair, params={"limit": 50}).json()
    entry = next(e for e in audit["items"] if e["action"] == "conflict_policy.set")
    assert entry["detail"]["added"] == 1 and entry["detail"]["removed"] == 2


def _check(api: Api, venue: str, chair: str, run: int) -> list[dict[str, Any]]:
    return list(
        api.call("GET", f"/venues/{venue}/assignments/{run}/check", chair).json()["violations"]
    )


def test_dismiss_and_restore_a_conflict_with_a_reason(api: Api) -> None:
    venue, chair, viewer = _venue(api)
    pair = "/conflicts/P2/Lou_Ratliff3"
    assert api.call("POST", f"/venues/{venue}{pair}/dismiss", chair, json={}).status_code == 422
    assert (
        api.call("POST", f"/venues/{venue}{pair}/dismiss", viewer, json={"reason": "x"}).status_code
        == 403
    )
    missing = api.call(
        "POST", f"/venues/{venue}/conflicts/P3/Free_Person1/dismiss", chair, json={"reason": "x"}
    )
    assert missing.status_code == 404
    dismissed = api.call(
        "POST",
        f"/venues/{venue}{pair}/dismiss",
        chair,
        json={"reason": "a different L. Ratliff (checked with the author)"},
    )
    assert dismissed.status_code == 200, dismissed.text
    assert dismissed.json()["sources"] == ["detected"]
    assert ("P2", "Lou_Ratliff3", "detected") not in _conflicts(api, venue, chair)
    listed = api.call("GET", f"/venues/{venue}/conflicts/dismissed", chair).json()["items"]
    assert [(d["paper_id"], d["reviewer_id"], d["reason"]) for d in listed] == [
        ("P2", "Lou_Ratliff3", "a different L. Ratliff (checked with the author)")
    ]
    assert "matches by name" in listed[0]["conflict_reason"]
    # the pair is no longer blocked: a draft may hold it, publishing checks pass
    job = api.call(
        "POST",
        f"/venues/{venue}/assignments",
        chair,
        json={"reviewers_per_paper": 1, "max_load": 1, "solver": "flow"},
    ).json()
    run = int(job["result"]["assignment_id"])
    assign = api.call(
        "POST",
        f"/venues/{venue}/assignments/{run}/edits/preview",
        chair,
        json={"action": "assign", "paper_id": "P2", "reviewer_id": "Lou_Ratliff3", "force": True},
    ).json()
    assert assign["code"] != "conflict_of_interest"
    # re-detection (a new affinity run) keeps it out
    api.call("POST", f"/venues/{venue}/affinity/jobs", chair, json={"config": TFIDF})
    assert ("P2", "Lou_Ratliff3", "detected") not in _conflicts(api, venue, chair)
    restored = api.call("POST", f"/venues/{venue}{pair}/restore", chair, json={"reason": "oops"})
    assert restored.status_code == 200, restored.text
    assert ("P2", "Lou_Ratliff3", "detected") in _conflicts(api, venue, chair)
    again = api.call("POST", f"/venues/{venue}{pair}/restore", chair, json={})
    assert again.status_code == 404
    actions = [
        e["action"]
        for e in api.call("GET", f"/venues/{venue}/audit", chair, params={"limit": 50}).json()[
            "items"
        ]
    ]
    assert {"conflict.dismiss", "conflict.restore"} <= set(actions)


def test_declared_conflicts_block_the_pair_and_can_be_dismissed(api: Api) -> None:
    venue, chair, _viewer = _venue(api)
    path = f"/venues/{venue}/conflicts"
    body = {"paper_id": "P3", "reviewer_id": "Free_Person1", "reason": "PhD advisor"}
    assert api.call("POST", path, chair, json={**body, "reason": ""}).status_code == 422
    assert api.call("POST", path, chair, json={**body, "paper_id": "nope"}).status_code == 404
    declared = api.call("POST", path, chair, json=body)
    assert declared.status_code == 201, declared.text
    assert api.call("POST", path, chair, json=body).json()["code"] == "already_declared"
    assert ("P3", "Free_Person1", "declared") in _conflicts(api, venue, chair)
    job = api.call(
        "POST",
        f"/venues/{venue}/assignments",
        chair,
        json={"reviewers_per_paper": 1, "max_load": 1, "solver": "flow"},
    ).json()
    run = int(job["result"]["assignment_id"])
    preview = api.call(
        "POST",
        f"/venues/{venue}/assignments/{run}/edits/preview",
        chair,
        json={"action": "assign", "paper_id": "P3", "reviewer_id": "Free_Person1", "force": True},
    ).json()
    assert preview["code"] == "conflict_of_interest" and "PhD advisor" in preview["detail"]
    assert api.call(
        "POST", f"{path}/P3/Free_Person1/dismiss", chair, json={"reason": "declared by mistake"}
    ).json()["sources"] == ["declared"]
    assert ("P3", "Free_Person1", "declared") not in _conflicts(api, venue, chair)
    assert _check(api, venue, chair, run) == []


def test_a_dismissed_uploaded_conflict_stays_dismissed_across_re_uploads(api: Api) -> None:
    venue, chair, _viewer = _venue(api)

    def upload(name: str, rows: str) -> None:
        response = api.call(
            "POST",
            f"/venues/{venue}/constraints/upload",
            chair,
            files={"file": (name, f"paper_id,reviewer_id,value\n{rows}".encode())},
        )
        assert response.status_code == 200, response.text

    upload("first.csv", "P1,Free_Person1,-1\nP3,Ann_Old1,-1\n")
    assert {("P1", "Free_Person1", "uploaded"), ("P3", "Ann_Old1", "uploaded")} <= _conflicts(
        api, venue, chair
    )
    pair = f"/venues/{venue}/conflicts/P1/Free_Person1"
    dismissed = api.call("POST", f"{pair}/dismiss", chair, json={"reason": "not a conflict"})
    assert dismissed.status_code == 200 and dismissed.json()["sources"] == ["uploaded"]
    # the same file again, and a corrected one still naming the pair: it stays dismissed
    upload("first.csv", "P1,Free_Person1,-1\nP3,Ann_Old1,-1\n")
    upload("second.csv", "P1,Free_Person1,-1\nP2,Ann_Old1,-1\n")
    found = _conflicts(api, venue, chair)
    assert ("P1", "Free_Person1", "uploaded") not in found
    assert ("P2", "Ann_Old1", "uploaded") in found and ("P3", "Ann_Old1", "uploaded") not in found
    # re-detection (a new affinity run, a policy saved again) keeps it out too
    job = api.call("POST", f"/venues/{venue}/affinity/jobs", chair, json={"config": TFIDF})
    assert job.json()["state"] == "succeeded", job.text
    policy = api.call("GET", f"/venues/{venue}/conflict-policy", chair).json()
    saved = api.call("PUT", f"/venues/{venue}/conflict-policy", chair, json=policy["policy"])
    assert saved.status_code == 200, saved.text
    assert ("P1", "Free_Person1", "uploaded") not in _conflicts(api, venue, chair)
    listed = api.call("GET", f"/venues/{venue}/conflicts/dismissed", chair).json()["items"]
    assert [(d["paper_id"], d["reviewer_id"], d["source"]) for d in listed] == [
        ("P1", "Free_Person1", "uploaded")
    ]
    audit = api.call("GET", f"/venues/{venue}/audit", chair, params={"limit": 1}).json()
    assert audit["items"][0]["action"] in {"conflict_policy.set", "constraints.upload"}
    # the chair restores it: back, with the latest file's reason; the next upload keeps it
    restored = api.call("POST", f"{pair}/restore", chair, json={"reason": "it is one"})
    assert restored.status_code == 200, restored.text
    assert ("P1", "Free_Person1", "uploaded") in _conflicts(api, venue, chair)
    items = api.call("GET", f"/venues/{venue}/conflicts", chair, params={"limit": 1000}).json()
    reason = next(
        c["reason"]
        for c in items["items"]
        if (c["paper_id"], c["reviewer_id"], c["source"]) == ("P1", "Free_Person1", "uploaded")
    )
    assert "second.csv" in reason
    upload("second.csv", "P1,Free_Person1,-1\nP2,Ann_Old1,-1\n")
    assert ("P1", "Free_Person1", "uploaded") in _conflicts(api, venue, chair)
