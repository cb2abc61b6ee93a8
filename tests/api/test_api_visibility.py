"""The README's visibility table (role x resource), checked cell by cell against the service.

One venue is prepared per database backend: a live run, a superseded run, an edited draft
(with a chair's reason), jobs, a Not Willing bid, an author conflict, stored demand and max
loads, a reviewer token (Lena Language) and an area chair token (Grace Graph, in the area
chairs' pool too); a second venue shows who sees other venues, and a venue with every level
of assignment (``levels_world``) shows the persons' own views. Each (resource, role) cell of
the table is one test: the cell's words must be the expected ones, and the service must
behave as they say.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from api_helpers import REVIEWERS, load_venue, person_token
from conftest import Api, make_settings
from fastapi.testclient import TestClient
from levels_world import Levels

from api.app import create_app

README = Path(__file__).resolve().parents[2] / "README.md"
ROLES = ("admin", "chair", "viewer", "reviewer", "area chair")
PERSON_ROLES = ("reviewer", "area chair")
SECRET_REASON = "the chair's private reason"


class World:
    def __init__(self, api: Api):
        self.api = api
        self.venue, self.chair, self.viewer = api.new_venue()
        self.other, _other_chair, _other_viewer = api.new_venue()
        v = f"/venues/{self.venue}"
        self.base = v
        load_venue(api, self.venue, self.chair)
        params = {"reviewers_per_paper": 1, "max_load": 2, "solver": "flow"}
        self.superseded = self._solve(params)
        self.live = self._solve({**params, "max_load": 3})
        self.draft = self._solve({**params, "max_load": 4})
        self._publish(self.superseded)
        self._publish(self.live)
        pair = next(
            p
            for p in api.call("GET", f"{v}/assignments/{self.draft}/pairs", self.chair).json()[
                "items"
            ]
        )
        pinned = api.call(
            "POST",
            f"{v}/assignments/{self.draft}/pin",
            self.chair,
            json={
                "paper_id": pair["paper_id"],
                "reviewer_id": pair["reviewer_id"],
                "reason": SECRET_REASON,
            },
        )
        assert pinned.status_code == 200, pinned.text
        bids = b"paper_id,reviewer_id,bid\nP1,Lena_Language1,Not Willing\n"
        response = api.call(
            "POST", f"{v}/bids/upload", self.chair, files={"file": ("b.csv", bids, "text/csv")}
        )
        assert response.status_code == 200, response.text
        for path, body in (
            ("paper-demands/P4", {"demand": 1}),
            ("reviewer-max-loads/Grace_Graph1", {"max_load": 4}),
        ):
            assert api.call("PUT", f"{v}/{path}", self.chair, json=body).status_code == 200
        self.job = api.call("GET", f"{v}/jobs", self.chair).json()["items"][0]["id"]
        # Grace is an area chair too (no new person: the venue keeps its four)
        joined = api.call(
            "POST", f"{v}/reviewers", self.chair, params={"pool": "area_chairs"}, json=REVIEWERS[:1]
        )
        assert joined.status_code == 200, joined.text
        self.tokens = {
            "admin": api.admin,
            "chair": self.chair,
            "viewer": self.viewer,
            "reviewer": person_token(api, self.venue, self.chair, "reviewer", "Lena_Language1"),
            "area chair": person_token(api, self.venue, self.chair, "area_chair", "Grace_Graph1"),
        }
        self._levels: Levels | None = None

    def levels(self) -> Levels:
        """A venue with every level of assignment, made once (the persons' own views)."""
        if self._levels is None:
            self._levels = Levels(self.api)
        return self._levels

    def _solve(self, params: dict[str, Any]) -> int:
        job = self.api.call("POST", f"{self.base}/assignments", self.chair, json=params).json()
        assert job["state"] == "succeeded", job
        return int(job["result"]["assignment_id"])

    def _publish(self, run: int) -> None:
        response = self.api.call(
            "POST",
            f"{self.base}/assignments/{run}/deploy",
            self.chair,
            json={"assignment_id": run, "version": 1},
        )
        assert response.status_code == 200, response.text

    def get(self, role: str, path: str, **params: Any) -> Any:
        return self.api.call("GET", path, self.tokens[role], params=params)


@pytest.fixture(scope="module")
def world(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    app = create_app(make_settings(database_url, tmp_path_factory.mktemp("visibility")))
    with TestClient(app) as client:
        yield World(Api(client, app.state.database))


def _readme_table() -> dict[str, dict[str, str]]:
    text = README.read_text(encoding="utf-8")
    lines = text[text.index("### Who sees what") :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| resource"))
    block = lines[start : next(i for i in range(start, len(lines)) if not lines[i].startswith("|"))]
    rows = [line for line in block if not line.startswith("|---")]
    header = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert header == ["resource", *ROLES]
    table = {}
    for line in rows[1:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        table[cells[0]] = dict(zip(ROLES, cells[1:], strict=True))
    return table


# ---- what each cell's words mean, checked against the service -----------------------------


def _ok(response: Any) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def _venue_ids(w: World, role: str) -> set[str]:
    """Every venue the role lists, page by page (the session's database holds the venues of
    every earlier test, more than one page)."""
    ids: set[str] = set()
    while True:
        page = _ok(w.get(role, "/venues", limit=1000, offset=len(ids)))
        ids |= {v["id"] for v in page["items"]}
        if not page["items"] or len(ids) >= page["total"]:
            return ids


def _refused(w: World, role: str, paths: list[str]) -> None:
    """Every path answers 403 to the role."""
    for path in paths:
        response = w.get(role, path)
        assert response.status_code == 403, (role, path, response.text)


# what each row's resources are, as the paths a person token must be refused
PERSON_REFUSED = {
    "venues": ["/venues", "{base}", "/venues/{other}"],
    "corpus": ["{base}/reviewers", "{base}/submissions/P1", "{base}/search/reviewers?q=g"],
    "affinity": [
        "{base}/affinity",
        "{base}/affinity/pairs/P1/Lena_Language1",
        "{base}/reviewers/Grace_Graph1/papers",
        "{base}/affinity/export",
    ],
    "marks": ["{base}/conflicts", "{base}/bids/overview", "{base}/assignments/{live}/bids"],
    "limits": ["{base}/paper-demands", "{base}/reviewer-max-loads", "{base}/capacity"],
    "live": [
        "{base}/assignments",
        "{base}/assignments/live",
        "{base}/assignments/{live}/pairs",
        "{base}/assignments/{live}/reviewers",
        "{base}/assignments/{live}/papers/P1/edges",
    ],
    "drafts": ["{base}/assignments/{draft}", "{base}/assignments/{superseded}/pairs"],
    "check": ["{base}/assignments/{live}/check"],
    "jobs": ["{base}/jobs", "{base}/jobs/{job}"],
    "history": ["{base}/assignments/{draft}/edits", "{base}/pins", "{base}/forbids"],
    "audit": ["{base}/audit"],
    "tokens": ["/tokens", "{base}/tokens"],
    "chairs": ["{base}/chairs"],
    "bidding": ["{base}/bids/coverage/papers", "{base}/bids/coverage/persons", "{base}/declines"],
}


def refused_to_persons(w: World, role: str, cell: str, what: str) -> None:
    assert cell == "no"
    _refused(
        w,
        role,
        [
            p.format(
                base=w.base,
                other=w.other,
                live=w.live,
                draft=w.draft,
                superseded=w.superseded,
                job=w.job,
            )
            for p in PERSON_REFUSED[what]
        ],
    )


def venues(w: World, role: str, cell: str) -> None:
    if role in PERSON_ROLES:
        return refused_to_persons(w, role, cell, "venues")
    ids = _venue_ids(w, role)
    assert w.venue in ids
    assert (w.other in ids) == (cell == "all")
    other = w.get(role, f"/venues/{w.other}")
    assert other.status_code == (200 if cell == "all" else 403)
    assert _ok(w.get(role, w.base))["live_assignment_id"] == w.live


def corpus(w: World, role: str, cell: str) -> None:
    if role in PERSON_ROLES:
        return refused_to_persons(w, role, cell, "corpus")
    assert cell == "yes"
    assert _ok(w.get(role, f"{w.base}/reviewers"))["total"] == 4
    assert _ok(w.get(role, f"{w.base}/submissions"))["total"] == 4
    assert _ok(w.get(role, f"{w.base}/reviewers/Grace_Graph1"))["name"] == "Grace Graph"
    assert _ok(w.get(role, f"{w.base}/submissions/P1"))["id"] == "P1"
    assert _ok(w.get(role, f"{w.base}/search/papers", q="graph"))["items"][0]["id"] == "P1"
    found = _ok(w.get(role, f"{w.base}/search/reviewers", q="grace"))["items"]
    assert found[0]["id"] == "Grace_Graph1"


def affinity(w: World, role: str, cell: str) -> None:
    if role in PERSON_ROLES:
        return refused_to_persons(w, role, cell, "affinity")
    hidden = cell != "yes"
    assert _ok(w.get(role, f"{w.base}/affinity"))["n_papers"] == 4
    for path in (f"{w.base}/papers/P1/reviewers", f"{w.base}/reviewers/Lena_Language1/papers"):
        items = _ok(w.get(role, path, limit=10))["items"]
        lena = next(
            i for i in items if (i["paper_id"], i["reviewer_id"]) == ("P1", "Lena_Language1")
        )
        assert (lena["bid"] is None) == hidden and (lena["conflict"] is None) == hidden
    pair = _ok(w.get(role, f"{w.base}/affinity/pairs/P3/Rita_Reinforce1"))
    assert pair["explanation"] is not None
    assert (pair["conflict"] is None) == hidden
    assert w.get(role, f"{w.base}/affinity/export").status_code == 200


def marks(w: World, role: str, cell: str) -> None:
    if role in PERSON_ROLES:
        return refused_to_persons(w, role, cell, "marks")
    visible = cell == "yes"
    pair = _ok(w.get(role, f"{w.base}/affinity/pairs/P1/Lena_Language1"))
    assert (pair["bid"] == "Not Willing") == visible
    assert (pair["conflict"] == ["bid: bid Not Willing"]) == visible
    rita = _ok(w.get(role, f"{w.base}/affinity/pairs/P3/Rita_Reinforce1"))
    assert bool(rita["conflict"] and "author" in rita["conflict"][0]) == visible
    for path in (
        f"{w.base}/conflicts",
        f"{w.base}/conflicts/export",
        f"{w.base}/bids/overview",
        f"{w.base}/assignments/{w.live}/bids",
    ):
        assert w.get(role, path).status_code == (200 if visible else 403)
    edges = _ok(w.get(role, f"{w.base}/assignments/{w.live}/papers/P1/edges"))["items"]
    lena = next(e for e in edges if e["reviewer_id"] == "Lena_Language1")
    assert (lena["bid"] == "Not Willing") == visible
    assert (lena["conflict"] is None) == (not visible) and (lena["can_add"] is None) == (
        not visible
    )


def limits(w: World, role: str, cell: str) -> None:
    if role in PERSON_ROLES:
        return refused_to_persons(w, role, cell, "limits")
    visible = cell.startswith("yes")
    for path, key in (("paper-demands", "paper_id"), ("reviewer-max-loads", "reviewer_id")):
        response = w.get(role, f"{w.base}/{path}")
        assert response.status_code == (200 if visible else 403)
        if visible:
            assert len(response.json()["items"]) == 1 and key in response.json()["items"][0]
    assert w.get(role, f"{w.base}/capacity").status_code == (200 if visible else 403)
    assert (_ok(w.get(role, w.base))["solve_defaults"] is not None) == visible
    loads = _ok(w.get(role, f"{w.base}/assignments/{w.live}/reviewers", limit=10))["items"]
    grace = next(r for r in loads if r["reviewer_id"] == "Grace_Graph1")
    assert (grace["stored_max_load"] == 4) == visible
    assert (grace["stored_max_load"] is None) == (not visible)


RUN_VIEWS = [
    "",
    "/pairs",
    "/stats",
    "/papers/P1",
    "/export",
    "/papers",
    "/reviewers",
    "/papers/P1/edges",
    "/reviewers/Grace_Graph1/edges",
    "/histogram",
    "/randomness",
]


def _run_views(w: World, role: str, run: int) -> list[int]:
    paths = [*RUN_VIEWS, f"/compare/{run}", f"/compare/{run}/pairs"]
    return [w.get(role, f"{w.base}/assignments/{run}{p}").status_code for p in paths]


def live(w: World, role: str, cell: str) -> None:
    if role in PERSON_ROLES:
        return refused_to_persons(w, role, cell, "live")
    assert cell == "yes"
    assert _run_views(w, role, w.live) == [200] * (len(RUN_VIEWS) + 2)
    assert _ok(w.get(role, f"{w.base}/assignments/live"))["id"] == w.live
    assert w.live in [a["id"] for a in _ok(w.get(role, f"{w.base}/assignments"))["items"]]


def alternates(w: World, role: str, cell: str) -> None:
    path = f"{w.base}/assignments/{w.live}/papers/P1?alternates=100"
    if role in PERSON_ROLES:
        assert cell == "no"
        assert w.get(role, path).status_code == 403
        return
    found = _ok(w.get(role, path))["alternates"]
    if cell == "yes":
        assert found, "the world gives P1 alternates"
    else:
        assert cell == "no, an empty list"
        assert found == []


def drafts(w: World, role: str, cell: str) -> None:
    if role in PERSON_ROLES:
        return refused_to_persons(w, role, cell, "drafts")
    visible = cell == "yes"
    for run in (w.draft, w.superseded):
        assert _run_views(w, role, run) == [200 if visible else 404] * (len(RUN_VIEWS) + 2)
        compared = w.get(role, f"{w.base}/assignments/{w.live}/compare/{run}")
        assert compared.status_code == (200 if visible else 404)
    listed = {a["id"] for a in _ok(w.get(role, f"{w.base}/assignments"))["items"]}
    assert listed == ({w.live, w.draft, w.superseded} if visible else {w.live})


def check(w: World, role: str, cell: str) -> None:
    if role in PERSON_ROLES:
        return refused_to_persons(w, role, cell, "check")
    response = w.get(role, f"{w.base}/assignments/{w.live}/check")
    assert response.status_code == (200 if cell == "yes" else 403)


def jobs(w: World, role: str, cell: str) -> None:
    if role in PERSON_ROLES:
        return refused_to_persons(w, role, cell, "jobs")
    visible = cell == "yes"
    listing = _ok(w.get(role, f"{w.base}/jobs"))
    assert (listing["total"] > 0) == visible and (len(listing["items"]) > 0) == visible
    assert w.get(role, f"{w.base}/jobs/{w.job}").status_code == (200 if visible else 404)
    # the draft's solve job names it (compared field by field: the bare number could appear in
    # any response, e.g. as its "limit")
    made = {item["result"].get("assignment_id") for item in listing["items"]}
    assert (w.draft in made) == visible


def history(w: World, role: str, cell: str) -> None:
    if role in PERSON_ROLES:
        return refused_to_persons(w, role, cell, "history")
    visible = cell == "yes"
    # a chair-only resource: 403, even of the live run
    edits = w.get(role, f"{w.base}/assignments/{w.draft}/edits")
    assert edits.status_code == (200 if visible else 403)
    live_edits = w.get(role, f"{w.base}/assignments/{w.live}/edits")
    assert live_edits.status_code == (200 if visible else 403)
    if visible:
        assert SECRET_REASON in str(edits.json()["items"])
    for path in ("pins", "forbids"):
        assert w.get(role, f"{w.base}/{path}").status_code == (200 if visible else 403)


def audit(w: World, role: str, cell: str) -> None:
    if role in PERSON_ROLES:
        return refused_to_persons(w, role, cell, "audit")
    entries = _ok(w.get(role, f"{w.base}/audit", limit=1000))["items"]
    actions = {e["action"] for e in entries}
    if cell == "yes":
        assert {"assignment.pin", "assignment.deploy", "job.assignment.start"} <= actions
        assert SECRET_REASON in str(entries)
        return
    assert cell.startswith("publications only")
    assert actions == {"assignment.deploy"} and len(entries) == 2
    for entry in entries:
        assert set(entry["detail"]) == {"assignment_id", "version", "previous_live_id", "rollback"}
    assert SECRET_REASON not in str(entries) and str(w.draft) not in str(
        [e["detail"] for e in entries]
    )


def tokens(w: World, role: str, cell: str) -> None:
    if role in PERSON_ROLES:
        refused_to_persons(w, role, cell, "tokens")
    visible = cell == "yes"
    assert w.get(role, "/tokens").status_code == (200 if visible else 403)
    created = w.api.call(
        "POST",
        f"{w.base}/tokens",
        w.tokens[role],
        json={"name": f"probe-{uuid.uuid4().hex[:6]}", "role": "viewer"},
    )
    assert created.status_code == (201 if visible else 403)
    assert w.api.call("POST", "/tokens/999999/revoke", w.tokens[role]).status_code == (
        404 if visible else 403
    )


def changes(w: World, role: str, cell: str) -> None:
    token = w.tokens[role]
    if cell == "yes":
        # a change that leaves the venue as it was
        response = w.api.call("PUT", f"{w.base}/paper-demands/P4", token, json={"demand": 1})
        assert response.status_code == 200
        return
    schema = w.api.client.get("/openapi.json").json()
    for path, operations in schema["paths"].items():
        if not path.startswith("/venues/{venue_id}") or path.startswith("/venues/{venue_id}/me"):
            continue
        for method in operations:
            if method == "get":
                continue
            filled = path.replace("{venue_id}", w.venue)
            filled = re.sub(r"\{(job_id|assignment_id)\}", str(w.draft), filled)
            filled = re.sub(r"\{[a-z_]+\}", "P1", filled)
            response = w.api.call(method.upper(), filled, token, json={})
            assert response.status_code == 403, (method, path, response.text)


def own_view(w: World, role: str, cell: str) -> None:
    if role not in PERSON_ROLES:
        assert cell == "no"
        for method, path in (
            ("GET", "/me/papers"),
            ("GET", "/me/candidates"),
            ("GET", "/me/pairs/P1"),
            ("PUT", "/me/bids/P1"),
            ("POST", "/me/papers/P1/decline"),
        ):
            response = w.api.call(method, f"{w.base}{path}", w.tokens[role], json={"bid": 1})
            assert response.status_code == 403, (role, path, response.text)
        return
    levels = w.levels()
    token = levels.tokens["lena" if role == "reviewer" else "alan"]
    person = "Lena_Language1" if role == "reviewer" else "Alan_Chair1"
    run = levels.live if role == "reviewer" else levels.ac_run
    papers = levels.ok("GET", "/me/papers", token)["items"]
    assert {p["paper_id"] for p in papers} == {p for p, r in levels.pairs(run) if r == person}
    assert papers and levels.ok("GET", "/me/candidates", token)["total"] > 0
    assert levels.ok("GET", f"/me/pairs/{papers[0]['paper_id']}", token)["reviewer_id"] == person
    if cell == "own":
        assert all(p["reviewers"] is None for p in papers)
        return
    assert cell == "own, with their papers' reviewers"
    live = levels.pairs(levels.live)
    for paper in papers:
        expected = sorted(r for p, r in live if p == paper["paper_id"])
        assert [r["reviewer_id"] for r in paper["reviewers"]] == expected


def person_tokens(w: World, role: str, cell: str) -> None:
    if role in PERSON_ROLES:
        refused_to_persons(w, role, cell, "tokens")
    visible = cell == "yes"
    listed = w.get(role, f"{w.base}/tokens")
    assert listed.status_code == (200 if visible else 403)
    made = w.api.call(
        "POST",
        f"{w.base}/tokens",
        w.tokens[role],
        json={"name": "probe", "role": "reviewer", "person_id": "Victor_Vision1"},
    )
    assert made.status_code == (201 if visible else 403), made.text
    if visible:
        assert made.json()["person_id"] == "Victor_Vision1"
        revoked = w.api.call("POST", f"{w.base}/tokens/{made.json()['id']}/revoke", w.tokens[role])
        assert revoked.status_code == 200 and revoked.json()["state"] == "revoked"


def bidding(w: World, role: str, cell: str) -> None:
    if role in PERSON_ROLES:
        refused_to_persons(w, role, cell, "bidding")
    visible = cell == "yes"
    for path in ("bids/coverage/papers", "bids/coverage/persons", "declines"):
        assert w.get(role, f"{w.base}/{path}").status_code == (200 if visible else 403)
    switch = w.api.call("PATCH", w.base, w.tokens[role], json={"bidding_open": False})
    assert switch.status_code == (200 if visible else 403)
    reassign = w.api.call("POST", f"{w.base}/declines/reassign", w.tokens[role], json={})
    # chairs: nothing is declined, so nothing to re-assign
    assert reassign.status_code == (422 if visible else 403), reassign.text


def chairs(w: World, role: str, cell: str) -> None:
    if role in PERSON_ROLES:
        return refused_to_persons(w, role, cell, "chairs")
    assert cell == "yes"
    items = _ok(w.get(role, f"{w.base}/chairs"))["items"]
    assert [i["paper_id"] for i in items] == ["P1", "P2", "P3", "P4"]


RESOURCES = {
    "corpus": "reviewer profiles and submissions, search by id, name or title",
    "marks": "bids and conflict reasons (marks on pairs and edges, conflict list and export, "
    "bid overview, assignments by bid)",
    "limits": "stored paper demands and reviewer max loads (and the capacity check, suggested "
    "solve defaults, stored quotas in load views)",
    "live": "the live assignment (run, pairs, statistics, per paper and per reviewer views, "
    "edges, histogram, comparison, export)",
    "changes": "changes (uploads, jobs, edits, bulk changes, undo, run labels, publishing, "
    "stored limits)",
    "own": "a person's own view (their papers in the live run of their pool, candidates ranked "
    "by their own scores, their own bids and declines, explanations of their own pairs)",
    "person tokens": "person tokens (create, list and revoke reviewer and area chair tokens of "
    "the venue)",
    "bidding": "bidding switch, bid coverage, declines and their re-assignment",
    "chairs": "each paper's area chairs and senior area chairs (live runs)",
    "alternates": "a paper's alternates in a run (next-best reviewers, computed from "
    "conflicts, bids and forbids)",
}
CHECKS: dict[str, Callable[[World, str, str], None]] = {
    "venues": venues,
    RESOURCES["corpus"]: corpus,
    "affinity statistics, scores, explanations, score export": affinity,
    RESOURCES["marks"]: marks,
    RESOURCES["limits"]: limits,
    RESOURCES["live"]: live,
    RESOURCES["alternates"]: alternates,
    "draft and superseded assignments": drafts,
    "constraint check of a run": check,
    "jobs (parameters, logs, results)": jobs,
    "edit history, pins and forbids": history,
    "audit log": audit,
    "tokens (list, create, revoke)": tokens,
    RESOURCES["changes"]: changes,
    RESOURCES["own"]: own_view,
    RESOURCES["person tokens"]: person_tokens,
    RESOURCES["bidding"]: bidding,
    RESOURCES["chairs"]: chairs,
}
NO_PERSON = ("no", "no")
EXPECTED = {
    "venues": ("all", "own", "own", *NO_PERSON),
    "affinity statistics, scores, explanations, score export": (
        "yes",
        "yes",
        "yes, bids and conflict reasons null",
        *NO_PERSON,
    ),
    "audit log": (
        "yes",
        "yes",
        "publications only (run, version, run replaced, rollback)",
        *NO_PERSON,
    ),
    "tokens (list, create, revoke)": ("yes", "no", "no", *NO_PERSON),
    RESOURCES["alternates"]: ("yes", "yes", "no, an empty list", *NO_PERSON),
    RESOURCES["own"]: ("no", "no", "no", "own", "own, with their papers' reviewers"),
    **{
        name: ("yes", "yes", "yes", *NO_PERSON)
        for name in (RESOURCES["corpus"], RESOURCES["live"], RESOURCES["chairs"])
    },
    **{
        name: ("yes", "yes", "no", *NO_PERSON)
        for name in (
            RESOURCES["marks"],
            RESOURCES["limits"],
            "draft and superseded assignments",
            "constraint check of a run",
            "jobs (parameters, logs, results)",
            "edit history, pins and forbids",
            RESOURCES["changes"],
            RESOURCES["person tokens"],
            RESOURCES["bidding"],
        )
    },
}


def test_the_readme_table_is_the_one_tested() -> None:
    table = _readme_table()
    assert set(table) == set(CHECKS) == set(EXPECTED)
    for resource, cells in table.items():
        assert tuple(cells[r] for r in ROLES) == EXPECTED[resource], resource


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("resource", list(CHECKS))
def test_visibility_cell(world: World, resource: str, role: str) -> None:
    cell = _readme_table()[resource][role]
    CHECKS[resource](world, role, cell)
