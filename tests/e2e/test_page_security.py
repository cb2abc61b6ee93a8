"""The chair page under its Content-Security-Policy: every view (charts, meters and the
heatmap included) runs without a single policy violation, and no other page can frame it."""

from __future__ import annotations

import re
from typing import Any

import pytest

from .e2e_support import LiveServer, prepare_venue
from .page_actions import assert_console_clean, expect, open_tab, sign_in

pytestmark = pytest.mark.e2e

# recorded from the first script on: a violation anywhere on the page lands here
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(
    `${event.violatedDirective} blocked ${event.blockedURI || "inline"} at ` +
    `${event.sourceFile}:${event.lineNumber}`);
});
"""


def test_every_view_runs_under_the_policy_without_a_violation(
    page: Any, live_server: LiveServer, sample_files: dict[str, Any], console_errors: list[str]
) -> None:
    venue_id, run_id = prepare_venue(
        live_server, sample_files, solve={"reviewers_per_paper": 3, "max_load": 10}
    )
    assert run_id is not None
    chair = live_server.token("chair", venue_id, f"chair@{venue_id}")
    page.add_init_script(RECORD_VIOLATIONS)
    answer = page.goto("/")
    assert answer is not None
    policy = answer.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy and "unsafe" not in policy
    sign_in(page, chair)
    expect(page.locator("#venue-heading")).to_be_visible()

    open_tab(page, "Compute")
    expect(page.locator("#panel-jobs")).to_be_visible()
    open_tab(page, "Assignment")
    expect(page.get_by_role("table", name="Assigned pairs").locator("tbody tr")).to_have_count(50)
    expect(page.get_by_test_id("load-histogram").locator("rect.bar").first).to_be_attached()
    open_tab(page, "Papers and reviewers")
    open_tab(page, "Statistics")
    expect(page.get_by_role("table", name="Reviewers by load")).to_be_visible()
    # the meters and legend swatches are styled through the CSSOM, as the policy allows
    expect(page.locator(".meter-fill").first).to_be_attached()
    width = page.locator(".meter-fill").first.evaluate("el => el.style.width")
    assert re.fullmatch(r"\d+%", width), width
    open_tab(page, "Scores")
    page.get_by_role("button", name="Draw heatmap").click()
    plot = page.get_by_role("application", name=re.compile(r"papers by \d+ reviewers"))
    expect(plot).to_be_visible()
    assert plot.evaluate("el => el.style.getPropertyValue('--cell')").endswith("px")
    plot.focus()
    page.keyboard.press("ArrowRight")
    expect(page.get_by_test_id("heatmap-readout")).to_contain_text("× reviewer")
    open_tab(page, "Compare runs")
    open_tab(page, "Audit log")
    open_tab(page, "Data")

    assert page.evaluate("window.__cspViolations") == []
    assert_console_clean(console_errors)


def test_another_page_cannot_frame_the_chair_page(
    page: Any, live_server: LiveServer, console_errors: list[str]
) -> None:
    page.set_content(f'<iframe id="framed" src="{live_server.url}/"></iframe>')
    frame = page.frame_locator("#framed")
    # the frame never shows the page: Chromium replaces a refused frame with an error page
    page.wait_for_timeout(1500)
    expect(frame.get_by_label("API token")).to_have_count(0)
    refused = [e for e in console_errors if "frame-ancestors" in e or "Refused to frame" in e]
    assert refused, console_errors
