"""The chair page driven in real headless Chromium against the real service, on the bundled
sample (76 ICLR 2026 submissions x 27 reviewers).

One long scenario walks the workflow a chair follows from an empty venue (sign in, create a
venue, upload, compute, check capacity, solve, browse a paper, swap in an alternate with its
preview, undo, publish with the confirmation, re-solve, compare pair by pair, export); the
smaller tests cover sign-in errors, cancellation, keyboard use and what a viewer sees. Every
test drives the page through roles, labels and text, and ends with a clean console.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from live_server import LiveServer

from .e2e_support import (
    api_get,
    new_venue_id,
    prepare_venue,
    screenshot,
)
from .page_actions import (
    JOB_TIMEOUT_MS,
    assert_console_clean,
    create_venue,
    dialog,
    expect,
    open_tab,
    pick,
    run_select,
    sign_in,
    upload,
    wait_for_job,
)

pytestmark = pytest.mark.e2e


def test_chair_workflow(
    page: Any, live_server: LiveServer, sample_files: dict[str, Any], console_errors: list[str]
) -> None:
    venue_id = new_venue_id()
    sign_in(page, live_server.admin_token)
    expect(page.get_by_test_id("whoami")).to_contain_text("e2e-admin (admin)")
    screenshot(page, "01-venues")
    create_venue(page, venue_id)

    # uploads: the sample loads, a bad file is rejected with its row-level report inline
    upload(page, "Reviewer file", sample_files["reviewers"], "Upload reviewers")
    expect(page.get_by_test_id("upload-ok-reviewers")).to_contain_text("27 reviewers in the venue")
    upload(page, "Submission file", sample_files["submissions"], "Upload submissions")
    expect(page.get_by_test_id("upload-ok-submissions")).to_contain_text("76 submissions")
    upload(page, "Bid file", sample_files["bad_bids"], "Upload bids")
    report = page.get_by_test_id("upload-error-bids")
    expect(report).to_contain_text("was not loaded")
    expect(report.get_by_test_id("problem-table")).to_contain_text("no-such-paper")
    screenshot(page, "02-data-upload-errors")

    # affinity with its progress bar, then the live capacity check of the solve form
    open_tab(page, "Compute")
    page.get_by_label("Method").select_option("tfidf")
    page.get_by_role("button", name="Compute affinity").click()
    card = wait_for_job(page, "affinity")
    expect(card.get_by_role("progressbar")).to_have_attribute("value", "100")
    capacity = page.get_by_test_id("capacity-check")
    page.get_by_label("Max papers per reviewer").fill("6")  # 27 x 6 < 76 x 3
    expect(capacity).to_contain_text("cannot succeed")
    expect(capacity).to_contain_text("228")
    page.get_by_role("button", name="Use max papers 9").click()
    expect(page.get_by_label("Max papers per reviewer")).to_have_value("9")
    expect(capacity).to_contain_text("fits")
    page.get_by_label("Run name").fill("first draft")
    page.get_by_label("Solver").select_option("flow")
    page.get_by_role("button", name="Solve assignment").click()
    wait_for_job(page, "assignment")
    # the new run is selected as soon as its job is done
    expect(run_select(page).locator("option:checked")).to_contain_text("“first draft”")
    screenshot(page, "03-compute-jobs")

    # the run says what it is; every pair is a page turn away
    open_tab(page, "Assignment")
    expect(page.get_by_role("heading", name=re.compile("“first draft”"))).to_be_visible()
    run_card = page.get_by_test_id("run-card")
    expect(run_card).to_contain_text("draft")
    expect(run_card).to_contain_text("3 per paper")
    page.get_by_label("Note", exact=True).fill("flow, loads up to 9")
    page.get_by_role("button", name="Save name and note").click()
    expect(page.get_by_test_id("toast").last).to_contain_text("Saved the name and note")
    pairs = page.get_by_role("table", name="Assigned pairs")
    expect(page.get_by_text("Pairs 1–50 of 228")).to_be_visible()
    page.get_by_role("button", name="Last page of Assigned pairs").click()
    expect(page.get_by_text("Pairs 201–228 of 228")).to_be_visible()
    expect(pairs.locator("tbody tr")).to_have_count(28)

    # the edge browser: a paper by title words, its alternates one click away, with a preview
    open_tab(page, "Papers and reviewers")
    title = api_get(live_server, f"/venues/{venue_id}/submissions/iclr2026-000-01")["title"]
    words = " ".join(title.split()[:3])
    pick(page, "Paper", words, re.compile(re.escape(title[:40])))
    paper_view = page.get_by_test_id("paper-view")
    expect(paper_view.get_by_test_id("paper-coverage")).to_contain_text("3 of 3 reviewers")
    edges = page.get_by_role("table", name="Reviewers of the paper")
    expect(edges.locator("tr.assigned-row")).to_have_count(3)
    alternates = page.get_by_test_id("alternates")
    swap = alternates.get_by_role("button", name=re.compile("^Swap alternate")).first
    expect(swap).to_be_visible()
    screenshot(page, "04-edge-browser")
    swap.click()
    preview = dialog(page, re.compile("^Swap on"))
    expect(preview.get_by_test_id("score-change")).to_contain_text("Total score")
    expect(preview).to_contain_text("Reviewer loads")
    screenshot(page, "05-edit-preview", full_page=False)
    preview.get_by_role("button", name="Apply: Swap").click()
    expect(preview).to_be_hidden()
    expect(page.get_by_test_id("toast").last).to_contain_text("done")
    # undo brings the pair back
    open_tab(page, "Assignment")
    history = page.get_by_role("table", name="Edit history")
    expect(history).to_contain_text("swap")
    page.get_by_role("button", name="Undo last edit").click()
    expect(history.locator("tbody tr").first).to_contain_text("undone")
    expect(page.get_by_role("table", name="Pinned pairs")).to_contain_text("No pinned pairs")
    screenshot(page, "06-assignment-run")

    # publishing: the confirmation names the run and the version
    page.get_by_test_id("run-card").get_by_role("button", name="Deploy").click()
    confirm = dialog(page, re.compile(r"^Deploy Run #\d+ “first draft” \(version \d+\)\?"))
    expect(confirm.get_by_test_id("no-violations")).to_be_visible()
    screenshot(page, "07-deploy-confirmation", full_page=False)
    confirm.get_by_role("button", name=re.compile("^Deploy Run")).click()
    expect(page.get_by_test_id("assignment-state")).to_have_text("live")
    expect(page.get_by_test_id("run-state")).to_have_text("live")

    # re-solve: a new draft, derived from the live run and selected when it is done
    page.get_by_role("button", name="Re-solve (keeps pins)").click()
    expect(run_select(page).locator("option")).to_have_count(2, timeout=JOB_TIMEOUT_MS)
    expect(page.get_by_test_id("run-state")).to_have_text("draft")
    expect(page.get_by_test_id("run-card")).to_contain_text("re-solve of #")

    # compare pair by pair (the re-solve equals its parent after the undo: no change)
    open_tab(page, "Compare runs")
    page.get_by_role("button", name="Compare").click()
    expect(page.get_by_test_id("compare-overlap")).to_contain_text("228 pairs shared")
    expect(page.get_by_role("table", name="Changed pairs")).to_contain_text("No pair differs")

    # export the live run
    run_select(page).select_option(index=1)
    open_tab(page, "Assignment")
    with page.expect_download() as download_info:
        page.get_by_role("button", name="Export CSV").click()
    rows = list(csv.DictReader(io.StringIO(Path(download_info.value.path()).read_text("utf-8"))))
    assert len(rows) == 228
    with page.expect_download() as download_info:
        page.get_by_role("button", name="Export JSON").click()
    assert len(json.loads(Path(download_info.value.path()).read_text("utf-8"))) == 228

    # the audit log in words
    open_tab(page, "Audit log")
    audit = page.get_by_role("table", name="Audit log")
    expect(audit).to_contain_text("assignment.deploy")
    expect(audit).not_to_contain_text("{")
    assert_console_clean(console_errors, "bids/upload")  # the bad bids file's 422, on purpose


def test_bad_token_is_reported_in_words(page: Any, console_errors: list[str]) -> None:
    sign_in(page, "rec_not-a-real-token")
    error = page.locator("#signin-error")
    expect(error).to_be_visible()
    expect(error).to_contain_text("401")
    expect(error).to_contain_text("unknown API token")
    expect(error).to_have_attribute("role", "alert")
    assert_console_clean(console_errors, "401")


def test_chair_token_sees_its_venue_and_cancels_a_job(
    page: Any,
    live_server: LiveServer,
    sample_files: dict[str, Any],
    console_errors: list[str],
    tmp_path: Path,
) -> None:
    venue_id = new_venue_id()
    chair = live_server.token("chair", venue_id, f"chair@{venue_id}")
    sign_in(page, chair)
    # a chair token has one venue: the console opens on it, focus on its heading (main content)
    expect(page.locator("#venue-heading")).to_have_text(venue_id)
    expect(page.locator("#venue-heading")).to_be_focused()
    expect(page.get_by_test_id("whoami")).to_contain_text(f"(chair of {venue_id})")
    expect(page.get_by_role("button", name="Create venue")).to_be_hidden()
    upload(page, "Reviewer file", sample_files["reviewers"], "Upload reviewers")
    expect(page.get_by_test_id("upload-ok-reviewers")).to_be_visible()
    upload(page, "Submission file", sample_files["submissions"], "Upload submissions")
    expect(page.get_by_test_id("upload-ok-submissions")).to_be_visible()
    open_tab(page, "Compute")
    # no scores yet: a normal state, said in words (no error, no 404)
    expect(page.get_by_test_id("affinity-state")).to_contain_text("No scores yet")
    page.get_by_label("Method").select_option("embedding")
    page.get_by_role("button", name="Compute affinity").click()
    card = page.locator('[data-testid="job"][data-kind="affinity"]').first
    card.get_by_role("button", name=re.compile("^Cancel")).click()
    expect(card.get_by_test_id("job-state")).to_have_text("cancelled", timeout=JOB_TIMEOUT_MS)
    expect(card).to_contain_text("Cancelled: nothing was written")
    screenshot(page, "13-job-cancelled", full_page=False)
    # solving without scores is stopped on the page, next to the form, with what to do
    page.get_by_role("button", name="Solve assignment").click()
    error = page.locator("#assignment-form .error-box")
    expect(error).to_contain_text("No affinity scores yet")
    # the job can be re-run with the same parameters
    card.get_by_role("button", name=re.compile("^Re-run")).click()
    rerun = page.locator('[data-testid="job"][data-kind="affinity"]').first
    expect(rerun).to_contain_text("re-run of job #")
    rerun.get_by_role("button", name=re.compile("^Cancel")).click()
    expect(rerun.get_by_test_id("job-state")).to_have_text("cancelled", timeout=JOB_TIMEOUT_MS)
    assert_console_clean(console_errors)


def test_keyboard_focus_tab_stops_and_heatmap(
    page: Any, live_server: LiveServer, sample_files: dict[str, Any], console_errors: list[str]
) -> None:
    venue_id, run_id = prepare_venue(
        live_server, sample_files, solve={"reviewers_per_paper": 3, "max_load": 10}
    )
    chair = live_server.token("chair", venue_id, f"chair@{venue_id}")
    page.goto("/")
    page.keyboard.press("Tab")
    expect(page.locator(".skip-link")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_label("API token")).to_be_focused()
    page.keyboard.type(chair)
    page.keyboard.press("Enter")
    # after sign-in, focus is in the main content
    expect(page.locator("#venue-heading")).to_be_focused()
    assert page.evaluate("document.querySelector('main').contains(document.activeElement)")
    data_tab = page.get_by_role("tab", name="Data")
    data_tab.focus()
    page.keyboard.press("ArrowRight")
    expect(page.get_by_role("tab", name="Compute")).to_be_focused()
    expect(page.locator("#panel-jobs")).to_be_visible()
    page.keyboard.press("End")
    expect(page.get_by_role("tab", name="Audit log")).to_be_focused()
    outline = page.get_by_role("tab", name="Audit log").evaluate(
        "el => getComputedStyle(el).outlineStyle"
    )
    assert outline != "none"

    # the assignment tab: tab stops that do not grow with the pairs (one per table)
    open_tab(page, "Assignment")
    pairs = page.get_by_role("table", name="Assigned pairs")
    expect(pairs.locator("tbody tr")).to_have_count(50)
    stops = page.evaluate(
        """() => [...document.querySelectorAll('#panel-assignment *')].filter((el) =>
            el.tabIndex >= 0 && !el.disabled && el.offsetParent !== null &&
            el.matches('a[href], button, input, select, textarea, [tabindex]')).length"""
    )
    assert stops < 60, stops
    # arrow keys move between rows; Page Down turns the page
    first = pairs.locator("tbody tr").first.get_by_role("button").first
    first.focus()
    page.keyboard.press("ArrowDown")
    focused_row = page.evaluate("document.activeElement.closest('tr').rowIndex")
    assert focused_row == 2
    page.keyboard.press("PageDown")
    expect(page.get_by_text("Pairs 51–100 of 228")).to_be_visible()

    # the heatmap: labelled axes and a keyboard path to a pair's explanation
    open_tab(page, "Scores")
    page.get_by_role("button", name="Draw heatmap").click()
    plot = page.get_by_role("application", name=re.compile(r"30 papers by \d+ reviewers"))
    expect(page.get_by_test_id("heatmap").locator("svg.heatmap-axes text").first).to_be_attached()
    plot.focus()
    page.keyboard.press("ArrowRight")
    expect(page.get_by_test_id("heatmap-readout")).to_contain_text("× reviewer")
    page.keyboard.press("Enter")
    why = dialog(page, "Why this score")
    expect(why.get_by_test_id("explain-terms").locator("li").first).to_be_visible()
    page.keyboard.press("Escape")
    expect(why).to_be_hidden()
    screenshot(page, "12-heatmap")
    assert run_id is not None
    assert_console_clean(console_errors)
