"""Addresses and deliberate publishing (issue #23, points 5 and 7), in Chromium on the
bundled sample: every venue, tab, run, paper and reviewer view has an address that survives
a reload and can be sent to a co-chair, who signs in and lands on it; sign-in holds across
the tabs of one browser session (and sign-out too) without the token in the address or in
localStorage; Enter pressed again and again never publishes; an edit preview names each
hard constraint it breaks."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

import pytest
from live_server import LiveServer

from .e2e_support import api_get, prepare_venue
from .page_actions import assert_console_clean, dialog, expect, open_tab, pick, run_select, sign_in

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def venue(live_server: LiveServer, sample_files: dict[str, Any]) -> dict[str, Any]:
    """A sample venue with two draft runs and a chair token."""
    venue_id, first = prepare_venue(
        live_server, sample_files, solve={"reviewers_per_paper": 3, "max_load": 10}
    )
    from .e2e_support import solve_run

    second = solve_run(live_server, venue_id, {"reviewers_per_paper": 2, "max_load": 10})
    return {
        "id": venue_id,
        "runs": (first, second),
        "chair": live_server.token("chair", venue_id, f"chair@{venue_id}"),
    }


def _hash(page: Any) -> str:
    return unquote(page.evaluate("location.hash"))


def test_every_view_has_an_address_that_survives_reload_and_reaches_a_co_chair(
    page: Any, live_server: LiveServer, venue: dict[str, Any], console_errors: list[str]
) -> None:
    venue_id, chair = venue["id"], venue["chair"]
    first, second = venue["runs"]
    sign_in(page, chair)
    expect(page.locator("#venue-heading")).to_be_visible()
    expect(page).to_have_url(re.compile(rf"#/venue/{re.escape(venue_id)}/data\?run={second}$"))
    # a tab and a run chosen: the address names both; a reload comes back to them
    run_select(page).select_option(str(first))
    open_tab(page, "Statistics")
    assert _hash(page) == f"#/venue/{venue_id}/stats?run={first}"
    page.reload()
    expect(page.get_by_role("tab", name="Statistics")).to_have_attribute("aria-selected", "true")
    expect(run_select(page)).to_have_value(str(first))
    expect(page.get_by_role("table", name="Reviewers by load")).to_be_visible()

    # a paper's view
    open_tab(page, "Papers and reviewers")
    paper = api_get(live_server, f"/venues/{venue_id}/assignments/{first}/pairs", limit=1)["items"][
        0
    ]
    pick(page, "Paper", paper["paper_id"])
    expect(page.locator("#edge-title")).to_be_visible()
    paper_address = page.url
    assert _hash(page) == f"#/venue/{venue_id}/browse?run={first}&paper={paper['paper_id']}"
    assert chair not in page.url
    page.reload()
    expect(page.get_by_role("tab", name="Papers and reviewers")).to_have_attribute(
        "aria-selected", "true"
    )
    expect(page.get_by_role("table", name="Reviewers of the paper")).to_contain_text(
        paper["reviewer_name"]
    )

    # a reviewer's view
    pick(
        page,
        "Reviewer",
        paper["reviewer_name"].split()[-1],
        re.compile(re.escape(paper["reviewer_name"])),
    )
    expect(page.get_by_role("table", name="Papers of the reviewer")).to_be_visible()
    assert _hash(page).endswith(f"&reviewer={paper['reviewer_id']}")
    reviewer_address = page.url
    page.reload()
    expect(page.get_by_role("table", name="Papers of the reviewer")).to_contain_text(
        paper["paper_title"][:20]
    )

    # another tab of the same browser session is signed in and opens the address
    second_tab = page.context.new_page()
    second_tab.goto(paper_address)
    expect(second_tab.get_by_role("table", name="Reviewers of the paper")).to_contain_text(
        paper["reviewer_name"]
    )
    expect(second_tab.locator("#signin-view")).to_be_hidden()
    # the token is kept per tab (sessionStorage), never in localStorage or the address
    assert second_tab.evaluate("localStorage.length") == 0
    assert chair not in second_tab.url
    # a link pasted into an open tab goes there
    second_tab.evaluate(f"location.hash = {_hash(page)!r}")
    expect(second_tab.get_by_role("table", name="Papers of the reviewer")).to_be_visible()
    # signing out in one tab signs out the others
    second_tab.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("API token")).to_be_visible()
    expect(page.locator("#console-view")).to_be_hidden()
    second_tab.close()

    # a co-chair (another browser) opens the link: asked to sign in, then lands on it
    co_chair = page.context.browser.new_context(base_url=live_server.url)
    try:
        other = co_chair.new_page()
        other.goto(reviewer_address)
        expect(other.get_by_label("API token")).to_be_visible()
        other.get_by_label("API token").fill(
            live_server.token("chair", venue_id, f"co-chair@{venue_id}")
        )
        other.get_by_role("button", name="Sign in").click()
        expect(other.get_by_role("table", name="Papers of the reviewer")).to_contain_text(
            paper["paper_title"][:20]
        )
        expect(run_select(other)).to_have_value(str(first))
    finally:
        co_chair.close()
    assert_console_clean(console_errors)


def test_enter_again_and_again_never_publishes_and_previews_name_what_breaks(
    page: Any, live_server: LiveServer, venue: dict[str, Any], console_errors: list[str]
) -> None:
    venue_id, chair = venue["id"], venue["chair"]
    first, _second = venue["runs"]
    sign_in(page, chair)
    run_select(page).select_option(str(first))
    open_tab(page, "Assignment")
    deploy_button = page.get_by_test_id("run-card").get_by_role("button", name="Deploy")
    deploy_button.focus()
    for _ in range(6):
        page.keyboard.press("Enter")
        page.wait_for_timeout(150)
    confirm = dialog(page, re.compile(r"^Deploy Run #\d+"))
    confirm_button = confirm.get_by_role("button", name=re.compile("^Deploy Run"))
    expect(confirm_button).not_to_be_focused()
    for _ in range(4):
        page.keyboard.press("Enter")
        page.wait_for_timeout(100)
    expect(confirm).to_be_visible()
    run = api_get(live_server, f"/venues/{venue_id}/assignments/{first}")
    assert run["state"] == "draft"
    page.keyboard.press("Escape")
    expect(confirm).to_be_hidden()

    # an edit preview names the constraint it breaks: which paper, which rule
    remove = page.get_by_role("button", name=re.compile(r"^Remove: Remove ")).first
    title = re.search(r"“(.*)”", remove.get_attribute("aria-label") or "")
    assert title is not None
    remove.click()
    edit = dialog(page, re.compile("^Remove "))
    broken = edit.get_by_test_id("violations-new")
    expect(broken).to_contain_text("paper demand not met")
    expect(broken).to_contain_text(f"paper “{title.group(1)}”")
    expect(edit).to_contain_text("Hard constraints the run breaks: 0 now, 1 after this change")
    # focus is in the reason field, not on Apply; Enter there applies nothing
    expect(edit.get_by_label("Reason")).to_be_focused()
    for _ in range(3):
        page.keyboard.press("Enter")
    expect(edit).to_be_visible()
    assert (
        api_get(live_server, f"/venues/{venue_id}/assignments/{first}")["version"] == run["version"]
    )
    page.keyboard.press("Escape")
    assert_console_clean(console_errors)
