"""The chair page driven in real headless Chromium against the real service.

One long scenario walks the workflow a chair follows (sign in, create a venue, upload the
sample, compute affinities, solve, inspect, pin, re-solve, compare, deploy, export); the
smaller tests cover error reporting, cancellation and keyboard use.
"""

from __future__ import annotations

import csv
import io
import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from .e2e_support import LiveServer, screenshot

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips (or, under CI=true, fails) with the reason
    expect = None

pytestmark = pytest.mark.e2e

JOB_TIMEOUT_MS = 60_000


def sign_in(page: Any, token: str) -> None:
    page.goto("/")
    page.get_by_label("API token").fill(token)
    page.get_by_role("button", name="Sign in").click()


def create_venue(page: Any, venue_id: str) -> None:
    expect(page.get_by_role("heading", name="Venues")).to_be_visible()
    page.get_by_label("Venue id").fill(venue_id)
    page.get_by_label("Name").fill(f"E2E {venue_id}")
    page.get_by_role("button", name="Create venue").click()
    expect(page.locator("#venue-heading")).to_have_text(f"E2E {venue_id}")


def upload(page: Any, label: str, path: Any, kind: str) -> Any:
    page.get_by_label(label).set_input_files(str(path))
    page.get_by_role("button", name=f"Upload {kind}").click()


def open_tab(page: Any, name: str) -> None:
    page.get_by_role("tab", name=name).click()
    expect(page.get_by_role("tab", name=name)).to_have_attribute("aria-selected", "true")


def wait_for_job(page: Any, kind: str, state: str = "succeeded", index: int = 0) -> Any:
    """The newest job card of ``kind`` (``index`` 0) once it reached ``state``."""
    card = page.locator(f'[data-testid="job"][data-kind="{kind}"]').nth(index)
    expect(card.get_by_test_id("job-state")).to_have_text(state, timeout=JOB_TIMEOUT_MS)
    return card


def upload_sample(page: Any, sample_files: dict[str, Any]) -> None:
    upload(page, "Reviewer file", sample_files["reviewers"], "reviewers")
    expect(page.get_by_test_id("upload-ok-reviewers")).to_contain_text("27 reviewers in the venue")
    upload(page, "Submission file", sample_files["submissions"], "submissions")
    expect(page.get_by_test_id("upload-ok-submissions")).to_contain_text(
        "76 submissions in the venue"
    )
    expect(page.get_by_test_id("data-summary")).to_contain_text("27")


def compute_affinity(page: Any, method: str = "tfidf") -> None:
    open_tab(page, "Compute")
    page.get_by_label("Method").select_option(method)
    page.get_by_role("button", name="Compute affinity").click()
    card = wait_for_job(page, "affinity")
    expect(card.get_by_test_id("job-progress")).to_contain_text("100%")


def solve(
    page: Any, *, solver: str = "flow", max_load: int = 10, objective: str = "max_total"
) -> None:
    open_tab(page, "Compute")
    page.get_by_label("Reviewers per paper").fill("3")
    page.get_by_label("Max papers per reviewer").fill(str(max_load))
    page.get_by_label("Solver").select_option(solver)
    page.get_by_label("Objective").select_option(objective)
    page.get_by_role("button", name="Solve assignment").click()


def test_chair_workflow(
    page: Any,
    live_server: LiveServer,
    sample_files: dict[str, Any],
    console_errors: list[str],
    tmp_path: Path,
) -> None:
    venue_id = f"e2e-{uuid.uuid4().hex[:6]}"
    sign_in(page, live_server.admin_token)
    expect(page.get_by_test_id("whoami")).to_contain_text("e2e-admin (admin)")
    screenshot(page, "01-venues")
    create_venue(page, venue_id)

    # uploads: the sample loads, a bad file is rejected with its row-level report inline
    upload_sample(page, sample_files)
    upload(page, "Bid file", sample_files["bad_bids"], "bids")
    report = page.get_by_test_id("upload-error-bids")
    expect(report).to_contain_text("was not loaded")
    expect(report.get_by_test_id("problem-table")).to_contain_text("bad-bids.csv")
    expect(report.get_by_test_id("problem-table")).to_contain_text("no-such-paper")
    screenshot(page, "02-data-upload-errors")

    # affinity (TF-IDF for speed) with its progress bar
    compute_affinity(page)

    # a bid and a conflict on the first paper's two best reviewers, uploaded through the page
    first_paper = "iclr2026-000-01"
    bidder, conflicted = (
        r["reviewer_id"]
        for r in _api(live_server, f"/venues/{venue_id}/papers/{first_paper}/reviewers", limit=2)[
            "items"
        ]
    )
    bids = tmp_path / "bids.csv"
    bids.write_text(f"paper_id,reviewer_id,bid\n{first_paper},{bidder},High\n", encoding="utf-8")
    constraints = tmp_path / "constraints.csv"
    constraints.write_text(
        f"paper_id,reviewer_id,value\n{first_paper},{conflicted},-1\n", encoding="utf-8"
    )
    open_tab(page, "Data")
    upload(page, "Bid file", bids, "bids")
    expect(page.get_by_test_id("upload-ok-bids")).to_contain_text("bids.csv: loaded bids")
    upload(page, "Constraint file", constraints, "conflicts")
    expect(page.get_by_test_id("upload-ok-constraints")).to_contain_text("1 new")

    # the first assignment, with its progress bar
    solve(page, solver="flow")
    card = wait_for_job(page, "assignment")
    expect(card.locator("progress")).to_have_attribute("value", "100")
    screenshot(page, "03-compute-jobs")

    # inspect: histogram, heatmap, a paper with its reviewers and one explanation
    open_tab(page, "Inspect scores")
    expect(page.get_by_test_id("affinity-run-info")).to_contain_text("tfidf")
    expect(page.get_by_test_id("score-histogram").locator("svg rect.bar").first).to_be_attached()
    page.get_by_role("button", name="Draw heatmap").click()
    heatmap = page.get_by_test_id("heatmap").locator("canvas")
    expect(heatmap).to_have_attribute("aria-label", re.compile(r"30 papers by \d+ reviewers"))
    page.get_by_label("or these paper ids").fill("iclr2026-000-01, no-such-paper")
    page.get_by_role("button", name="Draw heatmap").click()
    expect(page.locator("#global-error")).to_contain_text("Unknown paper id: no-such-paper")
    page.get_by_label("or these paper ids").fill("")
    page.get_by_role("button", name="Show paper").click()
    reviewers = page.get_by_test_id("paper-reviewers")
    expect(reviewers.locator(".tag.assigned")).to_have_count(3)
    expect(reviewers.locator("tr", has_text=bidder)).to_contain_text("bid: High")
    conflict_row = reviewers.locator("tr", has_text=conflicted)
    expect(conflict_row).to_contain_text("conflict")
    expect(conflict_row.locator(".tag.assigned")).to_have_count(0)
    # alternates come from the service: not assigned, no conflict, below their max load
    expect(reviewers.locator(".tag.alternate").first).to_be_visible()
    expect(reviewers.locator(".tag.alternate").first).to_contain_text("alternate #1 (load ")
    expect(conflict_row.locator(".tag.alternate")).to_have_count(0)
    reviewers.get_by_role("button", name="Why?").first.click()
    explanation = page.get_by_test_id("explanation")
    expect(explanation.get_by_test_id("explain-publications").locator("li").first).to_be_visible()
    expect(explanation.get_by_test_id("explain-terms").locator("li").first).to_be_visible()
    expect(page.locator("#explain-title")).to_be_focused()
    screenshot(page, "04-inspect-paper-explanation")

    page.get_by_role("button", name="Show reviewer").click()
    expect(page.get_by_test_id("reviewer-load")).to_contain_text("Load in assignment")

    # assignment statistics, then pin a pair the solver did not choose
    open_tab(page, "Assignment")
    expect(page.get_by_test_id("assignment-state")).to_have_text("draft")
    expect(page.get_by_test_id("load-histogram").locator("rect.bar").first).to_be_attached()
    expect(page.get_by_test_id("paper-score-chart").locator("rect.bar.b").first).to_be_attached()
    expect(page.get_by_test_id("assignment-summary")).to_contain_text("228")  # 76 papers x 3
    loads = page.get_by_test_id("loads")
    expect(loads.locator("tbody tr")).to_have_count(27)
    expect(loads.locator("tbody tr").first).to_contain_text("10 / 10")
    paper_id, reviewer_id = _unassigned_pair(live_server, venue_id)
    page.get_by_label("Paper id", exact=True).fill(paper_id)
    page.get_by_label("Reviewer id", exact=True).fill(reviewer_id)
    page.get_by_role("button", name="Pin pair").click()
    # the paper already has its 3 reviewers: the service refuses, naming the limit, and the
    # page offers to pin anyway
    refusal = page.locator("#assignment-status")
    expect(refusal).to_contain_text("would overfill")
    expect(refusal).to_contain_text(f"paper '{paper_id}' would get 4 reviewers")
    expect(page.get_by_test_id("pins")).to_have_count(0)
    page.get_by_test_id("force-pin").click()
    expect(refusal).to_be_hidden()
    pins = page.get_by_test_id("pins")
    expect(pins).to_contain_text(paper_id)
    expect(pins).to_contain_text(reviewer_id)
    screenshot(page, "05-assignment-statistics")

    # re-solve keeps the pin; a fairness run gives something to compare with
    options = page.locator("#assignment-select option")
    page.get_by_role("button", name="Re-solve (keeps pins)").click()
    expect(page.locator("#global-status")).to_contain_text("Re-solve job")
    expect(options).to_have_count(2, timeout=JOB_TIMEOUT_MS)  # re-solve done: a new draft
    solve(page, solver="auto", objective="fairness")
    expect(options).to_have_count(3, timeout=JOB_TIMEOUT_MS)
    wait_for_job(page, "assignment")
    open_tab(page, "Assignment")
    page.locator("#assignment-select").select_option(index=1)  # the re-solve
    expect(page.get_by_test_id("pins")).to_contain_text(reviewer_id)
    page.get_by_label("Filter by paper or reviewer id").fill(paper_id)
    page.get_by_role("button", name="Filter").click()
    pinned_row = page.get_by_test_id("pairs").locator("tr", has_text=reviewer_id)
    expect(pinned_row).to_contain_text("pinned")

    open_tab(page, "Compare runs")
    page.get_by_label("Run A").select_option(index=1)
    page.get_by_label("Run B").select_option(index=0)
    page.get_by_role("button", name="Compare").click()
    expect(page.get_by_test_id("compare-column")).to_have_count(2)
    expect(page.get_by_test_id("compare-result")).to_contain_text("fairness keep=1")
    expect(page.get_by_test_id("compare-result")).to_contain_text("max total")
    # fairness cannot lower the worst paper's score, max-total cannot lower the total
    worst = page.get_by_test_id("compare-metrics").locator("tr", has_text="worst paper's")
    total = page.get_by_test_id("compare-metrics").locator("tr", has_text="total score")
    worst_a, worst_b = (float(worst.locator("td").nth(i).inner_text()) for i in (1, 2))
    total_a, total_b = (float(total.locator("td").nth(i).inner_text()) for i in (1, 2))
    assert worst_b >= worst_a - 1e-3 and total_a >= total_b - 1e-2
    expect(page.get_by_test_id("compare-overlap")).to_contain_text("pairs of run")
    screenshot(page, "06-compare-runs")

    # deploy and export the re-solved draft
    open_tab(page, "Assignment")
    page.locator("#assignment-select").select_option(index=1)
    page.get_by_role("button", name="Deploy").click()
    expect(page.get_by_test_id("assignment-state")).to_have_text("live")
    with page.expect_download() as download_info:
        page.get_by_role("button", name="Export CSV").click()
    download = download_info.value
    rows = list(csv.DictReader(io.StringIO(Path(download.path()).read_text(encoding="utf-8"))))
    assert download.suggested_filename.endswith(".csv")
    assert len(rows) == 228
    assert {"paper_id": paper_id, "reviewer_id": reviewer_id} in [
        {"paper_id": r["paper_id"], "reviewer_id": r["reviewer_id"]} for r in rows
    ]
    with page.expect_download() as download_info:
        page.get_by_role("button", name="Export JSON").click()
    exported = json.loads(Path(download_info.value.path()).read_text(encoding="utf-8"))
    assert len(exported) == 228

    open_tab(page, "Audit log")
    expect(page.get_by_test_id("audit")).to_contain_text("assignment.pin")
    expect(page.get_by_test_id("audit")).to_contain_text("assignment.deploy")
    assert console_errors == []


def _api(live_server: LiveServer, path: str, **params: Any) -> Any:
    """GET an API path as the admin (for test setup and for picking ids to act on)."""
    import httpx

    response = httpx.get(
        f"{live_server.url}{path}",
        params=params,
        timeout=30,
        headers={"Authorization": f"Bearer {live_server.admin_token}"},
    )
    assert response.status_code == 200, response.text
    return response.json()


def _unassigned_pair(live_server: LiveServer, venue_id: str) -> tuple[str, str]:
    """A stored, conflict-free pair that the newest assignment does not contain (via the API,
    so the test does not depend on what the page happens to list first)."""
    base = f"/venues/{venue_id}"
    newest = _api(live_server, f"{base}/assignments")["items"][0]
    pairs = _api(live_server, f"{base}/assignments/{newest['id']}/pairs", limit=1000)["items"]
    assigned = {(p["paper_id"], p["reviewer_id"]) for p in pairs}
    paper_id = pairs[0]["paper_id"]
    candidates = _api(live_server, f"{base}/papers/{paper_id}/reviewers", limit=50)["items"]
    for candidate in candidates:
        if (paper_id, candidate["reviewer_id"]) not in assigned and not candidate["conflict"]:
            return paper_id, candidate["reviewer_id"]
    raise AssertionError(f"no unassigned conflict-free reviewer for {paper_id}")


def test_bad_token_is_reported_in_words(page: Any, console_errors: list[str]) -> None:
    sign_in(page, "rec_not-a-real-token")
    error = page.locator("#signin-error")
    expect(error).to_be_visible()
    expect(error).to_contain_text("401")
    expect(error).to_contain_text("unknown API token")
    expect(error).to_have_attribute("role", "alert")
    assert console_errors == []


def test_chair_token_sees_its_venue_and_cancels_a_job(
    page: Any,
    live_server: LiveServer,
    sample_files: dict[str, Any],
    console_errors: list[str],
    tmp_path: Path,
) -> None:
    venue_id = f"e2e-{uuid.uuid4().hex[:6]}"
    chair = live_server.token("chair", venue_id, f"chair@{venue_id}")
    sign_in(page, chair)
    # a chair token has one venue: the console opens on it directly
    expect(page.locator("#venue-heading")).to_have_text(venue_id)
    expect(page.get_by_test_id("whoami")).to_contain_text(f"(chair of {venue_id})")
    expect(page.get_by_role("button", name="Create venue")).to_be_hidden()
    upload_sample(page, sample_files)
    open_tab(page, "Compute")
    page.get_by_label("Method").select_option("embedding")
    page.get_by_role("button", name="Compute affinity").click()
    card = page.locator('[data-testid="job"][data-kind="affinity"]').first
    card.get_by_test_id("cancel-job").click()
    expect(card.get_by_test_id("job-state")).to_have_text("cancelled", timeout=JOB_TIMEOUT_MS)
    expect(page.locator("#global-status")).to_contain_text("cancelled")
    screenshot(page, "08-job-cancelled", full_page=False)
    # solving without scores is refused, and the refusal is shown next to the form; the
    # request carries the required attribute set on the form
    open_tab(page, "Compute")
    page.get_by_label("Required reviewer attribute").fill("seniority")
    page.get_by_label("Required attribute value").fill("senior")
    page.get_by_label("Reviewers with it per paper (at least)").fill("2")
    with page.expect_request(
        lambda r: r.method == "POST" and r.url.endswith(f"/venues/{venue_id}/assignments")
    ) as solve_request:
        solve(page)
    assert solve_request.value.post_data_json["require_attribute"] == {
        "name": "seniority",
        "value": "senior",
        "min_count": 2,
    }
    error = page.locator("#assignment-form .error-box")
    expect(error).to_be_visible()
    expect(error).to_contain_text("no affinit")
    # a max papers CSV sends the solve as multipart; an unknown reviewer is reported by row
    caps = tmp_path / "max-papers.csv"
    caps.write_text("reviewer_id,max\n~No_Such_Reviewer1,2\n", encoding="utf-8")
    page.get_by_label("Per-reviewer max papers (CSV, optional)").set_input_files(str(caps))
    with page.expect_response(lambda r: r.url.endswith("/assignments/with-max-papers")) as answer:
        page.get_by_role("button", name="Solve assignment").click()
    assert answer.value.status == 422
    expect(error.get_by_test_id("problem-table")).to_contain_text("max-papers.csv")
    expect(error.get_by_test_id("problem-table")).to_contain_text("No_Such_Reviewer1")
    assert console_errors == []


def test_keyboard_only_sign_in_and_tab_navigation(
    page: Any, live_server: LiveServer, console_errors: list[str]
) -> None:
    venue_id = f"e2e-{uuid.uuid4().hex[:6]}"
    chair = live_server.token("chair", venue_id, f"chair@{venue_id}")
    page.goto("/")
    page.keyboard.press("Tab")
    expect(page.locator(".skip-link")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_label("API token")).to_be_focused()
    page.keyboard.type(chair)
    page.keyboard.press("Enter")
    expect(page.locator("#venue-heading")).to_have_text(venue_id)
    data_tab = page.get_by_role("tab", name="Data")
    data_tab.focus()
    page.keyboard.press("ArrowRight")
    compute_tab = page.get_by_role("tab", name="Compute")
    expect(compute_tab).to_be_focused()
    expect(compute_tab).to_have_attribute("aria-selected", "true")
    expect(page.locator("#panel-jobs")).to_be_visible()
    page.keyboard.press("End")
    expect(page.get_by_role("tab", name="Audit log")).to_be_focused()
    expect(page.locator("#panel-audit")).to_be_visible()
    # focus is visible: the focused tab gets an outline
    outline = page.get_by_role("tab", name="Audit log").evaluate(
        "el => getComputedStyle(el).outlineStyle"
    )
    assert outline != "none"
    assert console_errors == []


def _prepared_venue(live_server: LiveServer, sample_files: dict[str, Any]) -> tuple[str, int]:
    """A venue with the sample, TF-IDF scores and one draft assignment, made through the API."""
    import httpx

    venue_id = f"e2e-{uuid.uuid4().hex[:6]}"
    client = httpx.Client(
        base_url=live_server.url,
        timeout=60,
        headers={"Authorization": f"Bearer {live_server.admin_token}"},
    )
    with client:
        assert client.post("/venues", json={"id": venue_id}).status_code == 201
        for kind in ("reviewers", "submissions"):
            path = sample_files[kind]
            response = client.post(
                f"/venues/{venue_id}/{kind}/upload", files={"file": (path.name, path.read_bytes())}
            )
            assert response.status_code == 200, response.text
        for path, body in (
            ("affinity/jobs", {"config": {"method": "tfidf"}}),
            ("assignments", {"reviewers_per_paper": 3, "max_load": 10}),
        ):
            job = client.post(f"/venues/{venue_id}/{path}", json=body).json()
            job = client.get(f"/venues/{venue_id}/jobs/{job['id']}", params={"wait": 50}).json()
            assert job["state"] == "succeeded", job
        return venue_id, job["result"]["assignment_id"]


def test_viewer_sees_only_the_live_assignment_and_cannot_edit(
    page: Any, live_server: LiveServer, sample_files: dict[str, Any], console_errors: list[str]
) -> None:
    import httpx

    venue_id, assignment_id = _prepared_venue(live_server, sample_files)
    viewer = live_server.token("viewer", venue_id, f"viewer@{venue_id}")
    sign_in(page, viewer)
    expect(page.locator("#venue-heading")).to_have_text(venue_id)
    open_tab(page, "Assignment")
    expect(page.get_by_test_id("assignment-summary")).to_contain_text("No assignment yet")

    response = httpx.post(
        f"{live_server.url}/venues/{venue_id}/assignments/{assignment_id}/deploy",
        json={"assignment_id": assignment_id, "version": 1},
        headers={"Authorization": f"Bearer {live_server.admin_token}"},
    )
    assert response.status_code == 200, response.text
    page.reload()
    open_tab(page, "Assignment")
    expect(page.get_by_test_id("assignment-state")).to_have_text("live")
    expect(page.get_by_test_id("load-histogram").locator("rect.bar").first).to_be_attached()
    # the page knows the role (GET /me) and offers a viewer no uploads, jobs or edits
    expect(page.get_by_test_id("whoami")).to_contain_text("(viewer of")
    expect(page.get_by_test_id("pairs").get_by_role("button", name="Forbid")).to_have_count(0)
    for name in ("Pin pair", "Swap reviewer", "Deploy", "Re-solve (keeps pins)"):
        expect(page.get_by_role("button", name=name)).to_be_hidden()
    expect(page.get_by_role("button", name="Export CSV")).to_be_visible()
    open_tab(page, "Compute")
    expect(page.get_by_role("button", name="Compute affinity")).to_be_hidden()
    expect(page.get_by_role("button", name="Solve assignment")).to_be_hidden()
    expect(page.get_by_test_id("job-list")).to_be_visible()
    open_tab(page, "Data")
    expect(page.get_by_role("button", name="Upload reviewers")).to_be_hidden()
    screenshot(page, "07-viewer-read-only")
    # the service refuses the write anyway
    refused = httpx.post(
        f"{live_server.url}/venues/{venue_id}/affinity/jobs",
        json={"config": {"method": "tfidf"}},
        headers={"Authorization": f"Bearer {viewer}"},
    )
    assert refused.status_code == 403 and "role 'viewer' may not change" in refused.text
    assert console_errors == []
