"""The chair page on a 2,000-paper venue (issue #23, point 9), in Chromium: sign in, every tab
renders, a paper's view opens from its address, one edit is previewed. The venue is written
straight into the server's database (benchmarks/page_venue.py: 2,000 papers, 1,200 named
reviewers, 20 stored candidates per paper) and solved through the service, so the fixture
takes seconds. Timings are benchmarks/bench_page_scale.py's business, not this test's."""

from __future__ import annotations

import re
from typing import Any

import pytest
from live_server import LiveServer

from benchmarks.page_venue import build_page_venue, paper_id

from .e2e_support import new_venue_id, solve_run
from .page_actions import assert_console_clean, dialog, expect, open_tab, pick, sign_in

pytestmark = pytest.mark.e2e

PAPERS, REVIEWERS = 2000, 1200


@pytest.fixture(scope="session")
def venue2000(live_server: LiveServer) -> dict[str, Any]:
    venue_id = new_venue_id("e2e-2000")
    build_page_venue(live_server.database_url, venue_id, papers=PAPERS, reviewers=REVIEWERS)
    run = solve_run(
        live_server, venue_id, {"reviewers_per_paper": 3, "max_load": 6, "solver": "flow"}
    )
    return {
        "id": venue_id,
        "run": run,
        "chair": live_server.token("chair", venue_id, f"chair@{venue_id}"),
    }


def test_every_tab_renders_and_an_edit_previews_on_2000_papers(
    page: Any, live_server: LiveServer, venue2000: dict[str, Any], console_errors: list[str]
) -> None:
    sign_in(page, venue2000["chair"])
    expect(page.get_by_test_id("data-summary")).to_contain_text(
        re.compile(r"2[,.\u202f\u00a0 ]?000")
    )
    open_tab(page, "Compute")
    expect(page.get_by_test_id("affinity-state")).not_to_be_empty()
    open_tab(page, "Assignment")
    expect(page.get_by_role("table", name="Assigned pairs").locator("tbody tr")).to_have_count(50)
    expect(page.get_by_text(re.compile(r"Pairs 1–50 of 6[,.\u202f\u00a0 ]?000"))).to_be_visible()
    open_tab(page, "Papers and reviewers")
    pick(page, "Paper", paper_id(1234))
    expect(
        page.get_by_role("table", name="Reviewers of the paper").locator("tbody tr")
    ).not_to_have_count(0)
    open_tab(page, "Statistics")
    expect(
        page.get_by_role("table", name="Reviewers by load").locator("tbody tr").first
    ).to_be_visible()
    for tab in ("Compare runs", "Scores", "People", "Audit log"):
        open_tab(page, tab)
        page.wait_for_load_state("networkidle")
        panel = page.locator(f"#{page.get_by_role('tab', name=tab).get_attribute('aria-controls')}")
        expect(panel).to_be_visible()
        expect(panel).not_to_be_empty()
    expect(page.locator("#global-error")).to_be_hidden()

    # a paper's view from its address, and one edit previewed there
    page.goto(f"/#/venue/{venue2000['id']}/browse?run={venue2000['run']}&paper={paper_id(1500)}")
    page.reload()
    paper_view = page.get_by_role("table", name="Reviewers of the paper")
    expect(paper_view.locator("tbody tr.assigned-row")).to_have_count(3)
    paper_view.get_by_role("button", name=re.compile(r"^Remove: ")).first.click()
    preview = dialog(page, re.compile("^Remove "))
    expect(preview.get_by_test_id("edit-effect")).to_contain_text("Total score")
    expect(preview.get_by_test_id("violations-new")).to_contain_text("paper demand not met")
    page.keyboard.press("Escape")
    expect(preview).to_be_hidden()
    assert_console_clean(console_errors)
