"""Helpers shared by the e2e tests and their fixtures (kept out of conftest.py so tests can
import them by a unique module name): a generated 200-paper venue, venues prepared through
the API, and screenshots. The server is ``live_server.LiveServer`` (tests/support)."""

from __future__ import annotations

import json
import os
import random
import uuid
import zipfile
from pathlib import Path
from typing import Any

import httpx
from live_server import LiveServer

REPO_ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT_DIR = REPO_ROOT / "artifacts" / "screenshots"
DOCS_SCREENSHOT_DIR = REPO_ROOT / "docs" / "screenshots"
ARCHIVES = REPO_ROOT / "data" / "demo-reviewers" / "archives"
SUBMISSIONS = REPO_ROOT / "data" / "iclr2026" / "submissions.json"


def screenshot(page: Any, name: str, *, full_page: bool = True) -> Path:
    """Write artifacts/screenshots/<name>.png (and docs/screenshots/ when
    UPDATE_SCREENSHOTS=1)."""
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOT_DIR / f"{name}.png"
    # passing notifications would hide what the picture is about
    page.evaluate("document.getElementById('toasts')?.replaceChildren()")
    # the page scrolls inside #scroller (an app shell): let the document hold it all, so a
    # full-page screenshot shows the whole view (through the CSSOM: the page's CSP refuses
    # style attributes and elements, not this)
    unroll = """(on) => ['body', '#scroller'].map((s) => document.querySelector(s))
      .filter(Boolean).forEach((el) => {
        el.style.height = on ? 'auto' : ''; el.style.overflow = on ? 'visible' : ''; })"""
    if full_page:
        page.evaluate(unroll, True)
    page.screenshot(path=str(path), full_page=full_page)
    if full_page:
        page.evaluate(unroll, False)
    if os.environ.get("UPDATE_SCREENSHOTS") == "1":
        DOCS_SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
        (DOCS_SCREENSHOT_DIR / f"{name}.png").write_bytes(path.read_bytes())
    return path


# ---- data sets -----------------------------------------------------------------------------


def sample_reviewers_zip(folder: Path) -> Path:
    """The bundled sample's reviewer archives zipped (the page uploads a .zip)."""
    archive_zip = folder / "demo-reviewers.zip"
    with zipfile.ZipFile(archive_zip, "w", zipfile.ZIP_DEFLATED) as bundle:
        for path in sorted(ARCHIVES.glob("*.jsonl")):
            bundle.write(path, arcname=path.name)
    return archive_zip


FIRST = [
    "Ada",
    "Grace",
    "Alan",
    "Edsger",
    "Barbara",
    "Donald",
    "Frances",
    "John",
    "Leslie",
    "Radia",
    "Tim",
    "Margaret",
    "Ken",
    "Niklaus",
    "Shafi",
    "Zoë",
    "Hedy",
    "Claude",
    "Judea",
    "Yoshua",
]
LAST = [
    "Lovelace",
    "Hopper",
    "Turing",
    "Dijkstra",
    "Liskov",
    "Knuth",
    "Allen",
    "Backus",
    "Lamport",
    "Perlman",
    "Berners",
    "Hamilton",
    "Thompson",
    "Wirth",
    "Goldwasser",
    "Müller",
    "Lamarr",
    "Shannon",
    "Pearl",
    "Bengio",
]
AFFILIATIONS = [
    "University of Toronto",
    "ETH Zürich",
    "MIT",
    "Inria",
    "University of Tokyo",
    "KAIST",
    "Mila",
    "Max Planck Institute",
    "University of Cape Town",
    "IISc Bangalore",
]


def _archive_publications() -> list[dict[str, Any]]:
    seen: set[str] = set()
    publications = []
    for path in sorted(ARCHIVES.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            note = json.loads(line)
            content = note.get("content", {})
            title, abstract = content.get("title"), content.get("abstract")
            if not title or not abstract or title in seen:
                continue
            seen.add(title)
            publications.append(
                {"title": title, "abstract": abstract, "year": content.get("year") or 2022}
            )
    return publications


def venue200_files(folder: Path, *, papers: int = 200, reviewers: int = 80) -> dict[str, Path]:
    """A generated venue of `papers` submissions (the 76 ICLR 2026 abstracts of the sample and
    abstracts of the sample reviewers' publications) and `reviewers` named reviewers whose
    profiles are other publications of the sample, with affiliations and e-mails; plus bids
    and conflicts files. Deterministic (seeded)."""
    rng = random.Random(2026)
    publications = _archive_publications()
    rng.shuffle(publications)
    iclr = json.loads(SUBMISSIONS.read_text(encoding="utf-8"))
    submissions = [
        {
            "id": paper_id,
            "title": note["content"]["title"],
            "abstract": note["content"]["abstract"],
            "authors": [],
        }
        for paper_id, note in iclr.items()
    ]
    extra = papers - len(submissions)
    for index, publication in enumerate(publications[:extra]):
        submissions.append(
            {
                "id": f"v200-{index + 1:03d}",
                "title": publication["title"],
                "abstract": publication["abstract"],
                "authors": [],
            }
        )
    profile_pool = publications[extra:]
    people = []
    names = [f"{first} {last}" for last in LAST for first in FIRST]
    rng.shuffle(names)
    for index in range(reviewers):
        name = names[index]
        picks = rng.sample(range(len(profile_pool)), 5)
        people.append(
            {
                "id": f"~{name.replace(' ', '_')}{index + 1}",
                "name": name,
                "email": f"{name.split()[0].lower()}.{index + 1}@example.org",
                "affiliation": AFFILIATIONS[index % len(AFFILIATIONS)],
                "publications": [
                    {"id": f"pub-{index}-{k}", **profile_pool[k]} for k in sorted(picks)
                ],
            }
        )
    folder.mkdir(parents=True, exist_ok=True)
    paths = {
        "submissions": folder / "venue200-submissions.json",
        "reviewers": folder / "venue200-reviewers.json",
    }
    paths["submissions"].write_text(json.dumps(submissions), encoding="utf-8")
    paths["reviewers"].write_text(json.dumps(people), encoding="utf-8")
    return paths


# ---- venues prepared through the API (fast; the page is tested on what it shows) -------------


def new_venue_id(prefix: str = "e2e") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def wait_job(client: httpx.Client, venue_id: str, job: dict[str, Any]) -> dict[str, Any]:
    for _ in range(20):
        job = client.get(f"/venues/{venue_id}/jobs/{job['id']}", params={"wait": 30}).json()
        if job["state"] not in ("queued", "running"):
            break
    assert job["state"] == "succeeded", job
    return job


def upload(client: httpx.Client, venue_id: str, kind: str, name: str, content: bytes) -> None:
    response = client.post(f"/venues/{venue_id}/{kind}/upload", files={"file": (name, content)})
    assert response.status_code == 200, response.text


def prepare_venue(
    server: LiveServer,
    files: dict[str, Path],
    *,
    venue_id: str | None = None,
    name: str = "",
    solve: dict[str, Any] | None = None,
) -> tuple[str, int | None]:
    """A venue with the files uploaded, TF-IDF scores and (with `solve`) one draft run."""
    venue_id = venue_id or new_venue_id()
    with server.client() as client:
        response = client.post("/venues", json={"id": venue_id, "name": name or venue_id})
        assert response.status_code == 201, response.text
        for kind in ("reviewers", "submissions"):
            path = files[kind]
            upload(client, venue_id, kind, path.name, path.read_bytes())
        job = client.post(
            f"/venues/{venue_id}/affinity/jobs", json={"config": {"method": "tfidf"}}
        ).json()
        wait_job(client, venue_id, job)
        if solve is None:
            return venue_id, None
        return venue_id, solve_run(server, venue_id, solve)


def solve_run(server: LiveServer, venue_id: str, body: dict[str, Any]) -> int:
    with server.client() as client:
        response = client.post(f"/venues/{venue_id}/assignments", json=body)
        assert response.status_code == 202, response.text
        job = wait_job(client, venue_id, response.json())
        return int(job["result"]["assignment_id"])


def api_get(server: LiveServer, path: str, **params: Any) -> Any:
    with server.client() as client:
        response = client.get(path, params=params)
        assert response.status_code == 200, response.text
        return response.json()


def api_post(server: LiveServer, path: str, body: Any) -> Any:
    with server.client() as client:
        response = client.post(path, json=body)
        assert response.status_code in (200, 201, 202), response.text
        return response.json()


def deploy(server: LiveServer, venue_id: str, run_id: int) -> None:
    run = api_get(server, f"/venues/{venue_id}/assignments/{run_id}")
    api_post(
        server,
        f"/venues/{venue_id}/assignments/{run_id}/deploy",
        {"assignment_id": run_id, "version": run["version"]},
    )
