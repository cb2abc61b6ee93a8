"""The chair page at 10,000 papers × 10,000 reviewers, 3 reviewers per paper (SQLite).

Builds the venue in the database (benchmarks/page_venue.py: titles, synthetic abstracts,
named reviewers with 3 synthetic publications each), scores it as the product does (the
TF-IDF affinity job through ``POST /venues/{v}/affinity/jobs``, inline: 20 stored
candidates per paper and per reviewer, the fitted model saved for explanations), solves two
runs through the service (a draft and a live one, max 6 and 4 papers per reviewer), then
times, through the app in-process (median of
``--repeat``):
  * every request each view of the page makes (the tabs, a paper's and a reviewer's view,
    the comparison, the statistics, the audit log, people), and every preview (an edit's, a
    deploy check, a bulk file's of 200 additions of pairs the affinity run did not store);
  * one edit applied, and its undo (once each, as a chair makes them);
  * a full page load through the API: the requests the page makes from sign-in to the
    Assignment tab drawn, one after another as the page makes them.
Baseline in the same run: ``GET /venues/{v}`` (authentication and one row); every figure
is also a ratio to it. Targets (issue #23): a view or preview < 1 s, an edit < 1 s, a page
load < 3 s.

With ``--chromium PATH`` it also serves the venue with uvicorn and drives the page in
Chromium (Playwright): sign-in, three reloads on the Assignment tab's address, each tab, a
comparison of the two runs, a reload on a paper's address and an edit preview, each step
timed from the click to the last answer of the requests it made (and its content drawn,
checked on every animation frame), with its slowest request.

``--workdir DIR`` keeps the venue's database there and times it again on the next run of
the same size (building and scoring 10,000 x 10,000 takes about a minute).

    python benchmarks/bench_page_scale.py [--papers 10000] [--reviewers 10000] [--repeat 3]
        [--chromium /usr/bin/chromium] [--workdir bench-work/page10k]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fastapi.testclient import TestClient  # noqa: E402
from sqlalchemy import select  # noqa: E402

from api.app import create_app  # noqa: E402
from benchmarks.page_venue import build_page_venue, paper_id, reviewer_id  # noqa: E402
from reviewer_recommender.services.tokens import create_token  # noqa: E402
from reviewer_recommender.settings import Settings  # noqa: E402
from reviewer_recommender.storage.models import AffinityRun, AffinityScore  # noqa: E402

LIMIT_VIEW_MS, LIMIT_EDIT_MS, LIMIT_LOAD_MS = 1000, 1000, 3000


def solve(client: TestClient, headers: dict[str, str], venue: str, max_load: int) -> int:
    body = {
        "reviewers_per_paper": 3,
        "max_load": max_load,
        "solver": "flow",
        "name": f"max {max_load}",
    }
    response = client.post(f"/venues/{venue}/assignments", json=body, headers=headers)
    assert response.status_code == 202, response.text
    job = response.json()
    assert job["state"] == "succeeded", job
    return int(job["result"]["assignment_id"])


def score(client: TestClient, headers: dict[str, str], venue: str) -> int:
    """The venue's affinity run, made as the page's Compute tab makes it: the TF-IDF job."""
    body = {"config": {"method": "tfidf"}, "top_n": 20}
    response = client.post(f"/venues/{venue}/affinity/jobs", json=body, headers=headers)
    assert response.status_code == 202, response.text
    job = response.json()
    assert job["state"] == "succeeded", job
    return int(job["result"]["stored_pairs"])


def non_candidates(database: Any, venue: str, n: int, reviewers: int, rows: int) -> str:
    """A bulk file of ``rows`` additions of pairs the venue's affinity run did not store."""
    with database.session() as session:
        run = session.scalars(select(AffinityRun.id).where(AffinityRun.venue_id == venue)).one()
        stored = set(
            session.execute(
                select(AffinityScore.paper_id, AffinityScore.reviewer_id).where(
                    AffinityScore.run_id == run
                )
            ).all()
        )
    pairs: list[tuple[str, str]] = []
    for i in range(n):
        pair = (paper_id(i), reviewer_id((i * 7919 + reviewers // 2) % reviewers))
        if pair not in stored:
            pairs.append(pair)
        if len(pairs) == rows:
            break
    return "".join(f"{p},{r},add\n" for p, r in pairs)


def swap_of(client: TestClient, headers: dict[str, str], base: str) -> tuple[dict[str, Any], str]:
    """The first assigned pair whose paper has a stored candidate with room (a swap that
    keeps every limit), and that candidate."""
    pairs = client.get(f"{base}/pairs", params={"limit": 50}, headers=headers).json()["items"]
    for pair in pairs:
        candidates = client.get(
            f"{base}/papers/{pair['paper_id']}/edges",
            params={"filter": "candidates", "limit": 20},
            headers=headers,
        ).json()["items"]
        for edge in candidates:
            if not edge["assigned"] and edge["reviewer_load"] < edge["reviewer_max_load"]:
                return pair, str(edge["reviewer_id"])
    raise SystemExit("no assigned pair among the first 50 has a candidate with room")


def requests_of_views(
    venue: str, draft: int, live: int, n: int
) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(view, method, path, kwargs): what each view of the page asks (api/static/views)."""
    v = f"/venues/{venue}"
    a = f"{v}/assignments/{draft}"
    paper, reviewer = paper_id(n // 2), reviewer_id(n // 3)
    page = {"params": {"offset": 0, "limit": 50}}
    return [
        ("session: me", "GET", "/me", {}),
        ("session: venues", "GET", "/venues", {"params": {"limit": 200}}),
        (
            "session: runs",
            "GET",
            f"{v}/assignments",
            {"params": {"pool": "reviewers", "limit": 200}},
        ),
        ("data: reviewers page", "GET", f"{v}/reviewers", {"params": {"limit": 1}}),
        ("data: submissions page", "GET", f"{v}/submissions", {"params": {"limit": 1}}),
        ("compute: affinity", "GET", f"{v}/affinity", {}),
        ("compute: capacity", "GET", f"{v}/capacity", {}),
        ("compute: jobs", "GET", f"{v}/jobs", page),
        ("assignment: run", "GET", a, {}),
        ("assignment: pairs page", "GET", f"{a}/pairs", page),
        ("assignment: stats", "GET", f"{a}/stats", {"params": {"limit": 1000}}),
        ("assignment: histogram", "GET", f"{a}/histogram", {}),
        ("assignment: randomness", "GET", f"{v}/assignments/{live}/randomness", {}),
        ("assignment: edits", "GET", f"{a}/edits", page),
        ("assignment: pins", "GET", f"{v}/pins", page),
        ("browse: search papers", "GET", f"{v}/search/papers", {"params": {"q": "graph 50"}}),
        ("browse: search reviewers", "GET", f"{v}/search/reviewers", {"params": {"q": "ada"}}),
        ("browse: paper", "GET", f"{a}/papers/{paper}", {}),
        ("browse: paper edges", "GET", f"{a}/papers/{paper}/edges", page),
        ("browse: reviewer edges", "GET", f"{a}/reviewers/{reviewer}/edges", page),
        ("browse: explanation", "GET", f"{v}/affinity/pairs/{paper}/{reviewer}", {}),
        (
            "stats: papers below demand",
            "GET",
            f"{a}/papers",
            {"params": {"below_demand": True, "limit": 25}},
        ),
        (
            "stats: reviewers by load",
            "GET",
            f"{a}/reviewers",
            {"params": {"sort": "load", "limit": 25}},
        ),
        ("stats: bids of the run", "GET", f"{a}/bids", {}),
        ("stats: bids overview", "GET", f"{v}/bids/overview", {}),
        ("stats: conflicts", "GET", f"{v}/conflicts", page),
        ("compare: summary", "GET", f"{a}/compare/{live}", {}),
        ("compare: pairs", "GET", f"{a}/compare/{live}/pairs", page),
        ("compare: papers", "GET", f"{a}/compare/{live}/papers", page),
        ("compare: reviewers", "GET", f"{a}/compare/{live}/reviewers", page),
        ("scores: paper's reviewers", "GET", f"{v}/papers/{paper}/reviewers", page),
        ("people: paper coverage", "GET", f"{v}/bids/coverage/papers", page),
        ("people: person coverage", "GET", f"{v}/bids/coverage/persons", page),
        ("people: declines", "GET", f"{v}/declines", page),
        ("people: tokens", "GET", f"{v}/tokens", page),
        ("audit: log", "GET", f"{v}/audit", page),
        ("preview: deploy check", "GET", f"{a}/check", {}),
    ]


def page_load(venue: str, draft: int) -> list[tuple[str, str, dict[str, Any]]]:
    """The requests of sign-in to the Assignment tab drawn, in the page's order."""
    v = f"/venues/{venue}"
    a = f"{v}/assignments/{draft}"
    page = {"params": {"offset": 0, "limit": 50}}
    return [
        ("GET", "/me", {}),
        ("GET", "/venues", {"params": {"limit": 200}}),
        ("GET", f"{v}/assignments", {"params": {"pool": "reviewers", "limit": 200}}),
        ("GET", f"{v}/reviewers", {"params": {"limit": 1}}),
        ("GET", f"{v}/submissions", {"params": {"limit": 1}}),
        ("GET", f"{v}/affinity", {}),
        ("GET", a, {}),
        ("GET", f"{a}/pairs", page),
        ("GET", f"{a}/stats", {}),
        ("GET", f"{a}/histogram", {}),
        ("GET", f"{a}/edits", page),
        ("GET", f"{v}/pins", page),
        ("GET", f"{v}/forbids", page),
    ]


# a CSS selector's first element is in the page and laid out
SHOWN = (
    "(selector) => { const e = document.querySelector(selector); "
    "return !!e && e.getClientRects().length > 0; }"
)


def rows_of(table: str) -> str:
    """CSS for a data row of the page's table called ``table`` (not its Loading… row)."""
    return f'table[aria-label="{table}"] tbody tr:not(:has(> td.muted))'


def verdict(ms: float, limit: float) -> str:
    return "ok" if ms < limit else f"OVER {limit / 1000:.0f} s"


def line(label: str, ms: float, baseline: float, limit: float) -> None:
    print(f"{label:44} {ms:8.0f}  {ms / baseline:10.1f}  {verdict(ms, limit)}")


def browse_page(page: Any, chair: str, venue: str, draft: int, live: int, n: int) -> None:
    """Sign in, reload, open each tab, a paper's view and an edit preview; each step timed
    from the click to the last answer of the requests it made (and its content drawn)."""
    inflight: set[Any] = set()
    answered: list[tuple[float, float, str]] = []  # (finished at, ms, url)
    started: dict[Any, float] = {}

    def sent(request: Any) -> None:
        inflight.add(request)
        started[request] = time.perf_counter()

    def ended(request: Any) -> None:
        inflight.discard(request)
        now = time.perf_counter()
        begun = started.pop(request, now)
        answered.append((now, (now - begun) * 1000, request.url.split("/", 3)[-1][:70]))

    page.on("request", sent)
    page.on("requestfinished", ended)
    page.on("requestfailed", ended)

    def step(label: str, action: Any, limit: float, marker: str | None = None) -> None:
        answered.clear()
        begin = time.perf_counter()
        action()
        if marker is not None:
            # checked on every animation frame: a locator's wait polls up to 500 ms apart,
            # which once counted as drawing time
            page.wait_for_function(SHOWN, arg=marker, polling="raf")
        drawn = time.perf_counter()
        quiet = drawn
        while True:  # until no request is in flight for 0.3 s
            page.wait_for_timeout(50)
            if inflight:
                quiet = time.perf_counter()
            elif time.perf_counter() - max([quiet, *[a[0] for a in answered]]) > 0.3:
                break
        end = max([drawn, *[a[0] for a in answered]])
        ms = (end - begin) * 1000
        slowest = max(answered, key=lambda a: a[1], default=None)
        worst = f"  slowest: {slowest[2]} {slowest[1]:.0f} ms" if slowest else ""
        print(f"{'Chromium: ' + label:52} {ms:8.0f}  {verdict(ms, limit)}{worst}")

    page.goto("/")
    page.get_by_label("API token").fill(chair)
    pairs = rows_of("Assigned pairs")
    step(
        "sign-in (first load, to the Data tab)",
        lambda: page.get_by_role("button", name="Sign in").click(),
        LIMIT_LOAD_MS,
        "[data-testid=data-summary] .stat",
    )
    address = f"/#/venue/{venue}/assignment?run={draft}"
    for attempt in (1, 2, 3):
        step(
            f"page load {attempt}: reload on the Assignment tab",
            lambda: (page.goto(address), page.reload()),
            LIMIT_LOAD_MS,
            pairs,
        )
    tabs = (
        "Data",
        "Compute",
        "Papers and reviewers",
        "Statistics",
        "Compare runs",
        "Scores",
        "People",
        "Audit log",
        "Assignment",
    )
    for tab in tabs:
        step(f"tab {tab}", lambda tab=tab: page.get_by_role("tab", name=tab).click(), LIMIT_VIEW_MS)
    page.get_by_role("tab", name="Compare runs").click()
    page.locator("#compare-a").select_option(str(live))
    page.locator("#compare-b").select_option(str(draft))
    page.wait_for_load_state("networkidle")  # what choosing the runs loads is not the comparison
    step(
        "compare the live run and the draft (summary and its three tables)",
        page.get_by_role("button", name="Compare", exact=True).click,
        LIMIT_VIEW_MS,
        rows_of("Reviewers whose papers changed"),
    )
    page.get_by_role("tab", name="Assignment").click()
    step(
        "page load on a paper's view (its address)",
        lambda: (
            page.goto(f"/#/venue/{venue}/browse?run={draft}&paper={paper_id(n // 2)}"),
            page.reload(),
        ),
        LIMIT_LOAD_MS,
        rows_of("Reviewers of the paper"),
    )
    edges = page.get_by_role("table", name="Reviewers of the paper")
    remove = edges.get_by_role("button", name=re.compile("^Remove: ")).first
    step("edit preview (Remove) shown", remove.click, LIMIT_VIEW_MS, "[data-testid=edit-effect]")
    page.keyboard.press("Escape")


def chromium_figures(
    database_url: str, data_dir: Path, venue: str, runs: tuple[int, int], chromium: str, n: int
) -> None:
    """Serve the database with uvicorn and time the page in Chromium."""
    from playwright.sync_api import sync_playwright

    from benchmarks.bench_api import free_port, start_server
    from reviewer_recommender.storage.db import Database

    database = Database(database_url)
    chair = create_token(database, name="bench-chair", role="chair", venue_id=venue)
    database.dispose()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(database_url, data_dir, port)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_context(
                base_url=base, viewport={"width": 1280, "height": 800}
            ).new_page()
            page.set_default_timeout(120_000)
            browse_page(page, chair, venue, *runs, n)
            browser.close()
    finally:
        server.kill()
        server.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=10_000)
    parser.add_argument("--reviewers", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--chromium", default=None, help="path of a Chromium binary: also time the page in it"
    )
    parser.add_argument(
        "--workdir",
        default=None,
        help="keep the venue's database in this folder (relative to the repo) and, when it "
        "already holds one of the same size, time that one instead of building it again",
    )
    args = parser.parse_args()
    if args.workdir:
        folder = REPO / args.workdir
        folder.mkdir(parents=True, exist_ok=True)
        measure(args, folder)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            measure(args, Path(tmp))


def build_or_reuse(
    client: TestClient, headers: dict[str, str], url: str, folder: Path, args: Any
) -> tuple[str, int, int]:
    """The venue (id, draft run, live run): the one recorded in ``folder`` when its size
    matches, otherwise built, scored, solved and deployed anew."""
    record = folder / "venue.json"
    size = {"papers": args.papers, "reviewers": args.reviewers}
    if record.exists():
        kept = json.loads(record.read_text())
        if kept["size"] == size:
            print(
                f"reusing {kept['venue']} in {folder.name}/ (load average "
                f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
            )
            return str(kept["venue"]), int(kept["draft"]), int(kept["live"])
    n = args.papers
    venue = f"bench-{uuid.uuid4().hex[:6]}"
    started = time.perf_counter()
    build_page_venue(url, venue, papers=n, reviewers=args.reviewers, stored_scores=False)
    built = time.perf_counter() - started
    started = time.perf_counter()
    stored = score(client, headers, venue)
    scored = time.perf_counter() - started
    started = time.perf_counter()
    draft = solve(client, headers, venue, 6)
    live = solve(client, headers, venue, 4)
    solved = time.perf_counter() - started
    run = client.get(f"/venues/{venue}/assignments/{live}", headers=headers).json()
    deployed = client.post(
        f"/venues/{venue}/assignments/{live}/deploy",
        headers=headers,
        json={"assignment_id": live, "version": run["version"]},
    )
    assert deployed.status_code == 200, deployed.text
    print(
        f"{n} papers x {args.reviewers} reviewers, 3 per paper ({3 * n} pairs a run), "
        f"TF-IDF job ({stored} stored pairs, fitted model saved); built in {built:.1f} s, "
        f"scored in {scored:.1f} s, two runs solved in {solved:.1f} s; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    record.write_text(json.dumps({"size": size, "venue": venue, "draft": draft, "live": live}))
    return venue, draft, live


def measure(args: Any, folder: Path) -> None:
    n = args.papers
    url = f"sqlite:///{folder / 'page.db'}"
    app = create_app(Settings(database_url=url, data_dir=folder, inline_jobs=True))
    with TestClient(app) as client:
        database = app.state.database
        headers = {"Authorization": f"Bearer {create_token(database, name='b', role='admin')}"}
        venue, draft, live = build_or_reuse(client, headers, url, folder, args)

        def timed(method: str, path: str, repeat: int, **kwargs: Any) -> float:
            times = []
            for _ in range(repeat):
                start = time.perf_counter()
                response = client.request(method, path, headers=headers, **kwargs)
                times.append(time.perf_counter() - start)
                assert response.status_code < 400, (
                    path,
                    response.status_code,
                    response.text[:300],
                )
            return statistics.median(times) * 1000

        baseline = timed("GET", f"/venues/{venue}", args.repeat)
        print(f"{'view / request':44} {'ms':>8}  {'x baseline':>10}")
        print(f"{'baseline: GET /venues/{v}':44} {baseline:8.0f}  {1.0:10.1f}")
        slowest = ("", 0.0)
        for label, method, path, kwargs in requests_of_views(venue, draft, live, n):
            ms = timed(method, path, args.repeat, **kwargs)
            slowest = max(slowest, (label, ms), key=lambda x: x[1])
            line(label, ms, baseline, LIMIT_VIEW_MS)
        base = f"/venues/{venue}/assignments/{draft}"
        first, newcomer = swap_of(client, headers, base)
        swap = {
            "action": "swap",
            "paper_id": first["paper_id"],
            "reviewer_id": newcomer,
            "remove_reviewer_id": first["reviewer_id"],
        }
        remove = {
            "action": "remove",
            "paper_id": first["paper_id"],
            "reviewer_id": first["reviewer_id"],
        }
        bulk = non_candidates(database, venue, n, args.reviewers, 200)
        for label, body in (("preview: swap", swap), ("preview: remove", remove)):
            ms = timed("POST", f"{base}/edits/preview", args.repeat, json=body)
            line(label, ms, baseline, LIMIT_VIEW_MS)
        ms = timed(
            "POST",
            f"{base}/bulk/preview",
            args.repeat,
            files={"file": ("c.csv", bulk.encode())},
        )
        line("preview: bulk file of 200 non-candidate rows", ms, baseline, LIMIT_VIEW_MS)
        version = client.get(base, headers=headers).json()["version"]
        ms = timed("POST", f"{base}/edits", 1, json={**swap, "version": version})
        line("edit: swap applied", ms, baseline, LIMIT_EDIT_MS)
        ms = timed("POST", f"{base}/undo", 1, json={"version": version + 1})
        line("edit: undo", ms, baseline, LIMIT_EDIT_MS)
        loads = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            for method, path, kwargs in page_load(venue, draft):
                response = client.request(method, path, headers=headers, **kwargs)
                assert response.status_code < 400, (path, response.text[:300])
            loads.append((time.perf_counter() - start) * 1000)
        ms = statistics.median(loads)
        line("page load (API): sign-in to Assignment drawn", ms, baseline, LIMIT_LOAD_MS)
        print(f"slowest view request: {slowest[0]} ({slowest[1]:.0f} ms)")
    if args.chromium:
        chromium_figures(url, folder, venue, (draft, live), args.chromium, n)


if __name__ == "__main__":
    main()
