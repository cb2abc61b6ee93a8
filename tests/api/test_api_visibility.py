"""The README's visibility table (role x resource), checked cell by cell against the service.

One venue is prepared per database backend: a live run, a superseded run, an edited draft
(with a chair's reason), jobs, a Not Willing bid, an author conflict, stored demand and max
loads; a second venue shows who sees other venues. Each (resource, role) cell of the table is
one test: the cell's words must be the expected ones, and the service must behave as they say.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from api_helpers import load_venue
from conftest import Api, make_settings
from fastapi.testclient import TestClient

from api.app import create_app

README = Path(__file__).resolve().parents[2] / "README.md"
ROLES = ("admin", "chair", "viewer")
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
        self.tokens = {"admin": api.admin, "chair": self.chair, "viewer": self.viewer}

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


def venues(w: World, role: str, cell: str) -> None:
    ids = _venue_ids(w, role)
    assert w.venue in ids
    assert (w.other in ids) == (cell == "all")
    other = w.get(role, f"/venues/{w.other}")
    assert other.status_code == (200 if cell == "all" else 403)
    assert _ok(w.get(role, w.base))["live_assignment_id"] == w.live


def corpus(w: World, role: str, cell: str) -> None:
    assert cell == "yes"
    assert _ok(w.get(role, f"{w.base}/reviewers"))["total"] == 4
    assert _ok(w.get(role, f"{w.base}/submissions"))["total"] == 4
    assert _ok(w.get(role, f"{w.base}/reviewers/Grace_Graph1"))["name"] == "Grace Graph"
    assert _ok(w.get(role, f"{w.base}/submissions/P1"))["id"] == "P1"
    assert _ok(w.get(role, f"{w.base}/search/papers", q="graph"))["items"][0]["id"] == "P1"
    found = _ok(w.get(role, f"{w.base}/search/reviewers", q="grace"))["items"]
    assert found[0]["id"] == "Grace_Graph1"


def affinity(w: World, role: str, cell: str) -> None:
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
    assert cell == "yes"
    assert _run_views(w, role, w.live) == [200] * (len(RUN_VIEWS) + 2)
    assert _ok(w.get(role, f"{w.base}/assignments/live"))["id"] == w.live
    assert w.live in [a["id"] for a in _ok(w.get(role, f"{w.base}/assignments"))["items"]]


def drafts(w: World, role: str, cell: str) -> None:
    visible = cell == "yes"
    for run in (w.draft, w.superseded):
        assert _run_views(w, role, run) == [200 if visible else 404] * (len(RUN_VIEWS) + 2)
        compared = w.get(role, f"{w.base}/assignments/{w.live}/compare/{run}")
        assert compared.status_code == (200 if visible else 404)
    listed = {a["id"] for a in _ok(w.get(role, f"{w.base}/assignments"))["items"]}
    assert listed == ({w.live, w.draft, w.superseded} if visible else {w.live})


def check(w: World, role: str, cell: str) -> None:
    response = w.get(role, f"{w.base}/assignments/{w.live}/check")
    assert response.status_code == (200 if cell == "yes" else 403)


def jobs(w: World, role: str, cell: str) -> None:
    visible = cell == "yes"
    listing = _ok(w.get(role, f"{w.base}/jobs"))
    assert (listing["total"] > 0) == visible and (len(listing["items"]) > 0) == visible
    assert w.get(role, f"{w.base}/jobs/{w.job}").status_code == (200 if visible else 404)
    # the draft's solve job names it (compared field by field: the bare number could appear in
    # any response, e.g. as its "limit")
    made = {item["result"].get("assignment_id") for item in listing["items"]}
    assert (w.draft in made) == visible


def history(w: World, role: str, cell: str) -> None:
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
        if not path.startswith("/venues/{venue_id}"):
            continue
        for method in operations:
            if method == "get":
                continue
            filled = path.replace("{venue_id}", w.venue)
            filled = re.sub(r"\{(job_id|assignment_id)\}", str(w.draft), filled)
            filled = re.sub(r"\{[a-z_]+\}", "P1", filled)
            response = w.api.call(method.upper(), filled, token, json={})
            assert response.status_code == 403, (method, path, response.text)


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
}
CHECKS: dict[str, Callable[[World, str, str], None]] = {
    "venues": venues,
    RESOURCES["corpus"]: corpus,
    "affinity statistics, scores, explanations, score export": affinity,
    RESOURCES["marks"]: marks,
    RESOURCES["limits"]: limits,
    RESOURCES["live"]: live,
    "draft and superseded assignments": drafts,
    "constraint check of a run": check,
    "jobs (parameters, logs, results)": jobs,
    "edit history, pins and forbids": history,
    "audit log": audit,
    "tokens (list, create, revoke)": tokens,
    RESOURCES["changes"]: changes,
}
EXPECTED = {
    "venues": ("all", "own", "own"),
    "affinity statistics, scores, explanations, score export": (
        "yes",
        "yes",
        "yes, bids and conflict reasons null",
    ),
    "audit log": ("yes", "yes", "publications only (run, version, run replaced, rollback)"),
    "tokens (list, create, revoke)": ("yes", "no", "no"),
    **{name: ("yes", "yes", "yes") for name in (RESOURCES["corpus"], RESOURCES["live"])},
    **{
        name: ("yes", "yes", "no")
        for name in (
            RESOURCES["marks"],
            RESOURCES["limits"],
            "draft and superseded assignments",
            "constraint check of a run",
            "jobs (parameters, logs, results)",
            "edit history, pins and forbids",
            RESOURCES["changes"],
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
