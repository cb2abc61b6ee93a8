"""Layouts (issue #23, point 8), measured in Chromium on the bundled sample: at 390×844 no
view scrolls sideways, every visible control is at least 24 px each way and the edit dialog
fits the viewport; at 1280×800 a solve's progress is in view and a toast covers no control;
a viewer gets a viewer's page (no chair tabs, no chair wording)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from live_server import LiveServer
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from .e2e_support import deploy, prepare_venue
from .page_actions import assert_console_clean, dialog, expect, open_tab, sign_in

pytestmark = pytest.mark.e2e

CHAIR_TABS = (
    "Data",
    "Compute",
    "Assignment",
    "Papers and reviewers",
    "Statistics",
    "Compare runs",
    "Scores",
    "People",
    "Audit log",
)

# every visible control smaller than 24 px either way (WCAG 2.2 target size, minimum)
SMALL_CONTROLS = """(root) => [...document.querySelector(root).querySelectorAll(
    'button, a[href], input:not([type=hidden]), select, textarea, summary, [role=tab]')]
  .filter((el) => {
    if (el.closest('[hidden]') || el.classList.contains('skip-link')) return false;
    const box = el.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) return false;
    if (getComputedStyle(el).visibility === 'hidden') return false;
    return box.width < 24 || box.height < 24;
  })
  .map((el) => `${el.tagName.toLowerCase()} "${(el.getAttribute('aria-label') || el.textContent
    || el.id).trim().slice(0, 40)}" ${Math.round(el.getBoundingClientRect().width)}x${Math.round(
    el.getBoundingClientRect().height)}`)"""

# the page's width: the document's, and the scrolling area's that holds the views
WIDTHS = """() => { const scroller = document.getElementById('scroller');
  return [Math.max(document.documentElement.scrollWidth,
    scroller.scrollWidth + (window.innerWidth - scroller.clientWidth)), window.innerWidth]; }"""
WIDE = """() => [...document.querySelectorAll('body *')].filter((el) => !el.closest('[hidden]')
  && el.getBoundingClientRect().right > window.innerWidth + 1).slice(-12)
  .map((el) => `${el.tagName}.${el.className} #${el.id} `
    + `${Math.round(el.getBoundingClientRect().right)}`)"""


@pytest.fixture(scope="module")
def venue(live_server: LiveServer, sample_files: dict[str, Any]) -> dict[str, Any]:
    venue_id, run = prepare_venue(
        live_server, sample_files, solve={"reviewers_per_paper": 3, "max_load": 10}
    )
    return {"id": venue_id, "run": run}


def _fits(page: Any, where: str, root: str = "body") -> None:
    scroll, inner = page.evaluate(WIDTHS)
    assert scroll <= inner, (
        f"{where}: the page is {scroll} px wide in a {inner} px viewport: {page.evaluate(WIDE)}"
    )
    small = page.evaluate(SMALL_CONTROLS, root)
    assert small == [], f"{where}: controls under 24 px: {small}"


def test_a_phone_sized_viewport_needs_no_sideways_scroll_and_has_big_enough_controls(
    page: Any, live_server: LiveServer, venue: dict[str, Any], console_errors: list[str]
) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/")
    _fits(page, "sign-in")
    sign_in(page, live_server.token("chair", venue["id"], f"chair@{venue['id']}"))
    expect(page.locator("#venue-heading")).to_be_visible()
    for tab in CHAIR_TABS:
        open_tab(page, tab)
        page.wait_for_load_state("networkidle")
        if tab == "Assignment":
            expect(page.get_by_role("table", name="Assigned pairs")).to_be_visible()
        _fits(page, f"tab {tab}")
    open_tab(page, "Assignment")
    page.get_by_role("button", name=re.compile(r"^Remove: Remove ")).first.click()
    edit = dialog(page, re.compile("^Remove "))
    expect(edit.get_by_test_id("edit-effect")).to_be_visible()
    box = edit.bounding_box()
    assert box is not None
    assert box["x"] >= 0 and box["y"] >= 0, box
    assert box["x"] + box["width"] <= 390 and box["y"] + box["height"] <= 844, box
    _fits(page, "edit dialog", "dialog[open]")
    page.keyboard.press("Escape")
    assert_console_clean(console_errors)


def test_at_1280_by_800_progress_stays_in_view_and_toasts_cover_no_control(
    page: Any, live_server: LiveServer, venue: dict[str, Any], console_errors: list[str]
) -> None:
    page.set_viewport_size({"width": 1280, "height": 800})
    sign_in(page, live_server.token("chair", venue["id"], f"chair@{venue['id']}"))
    open_tab(page, "Compute")
    page.get_by_label("Run name").fill("layout check")
    cards = page.locator('[data-testid="job"][data-kind="assignment"]')
    before = cards.count()
    page.get_by_role("button", name="Solve assignment").click()
    # the new job's card (the venue's earlier solves have cards too, further down)
    expect(cards).to_have_count(before + 1)
    job = cards.first
    expect(job).to_be_visible()
    # in view once the page has drawn it (the job list may be redrawn as its refresh answers)
    in_view = """() => {
        const el = document.querySelector('[data-testid="job"][data-kind="assignment"]');
        const box = el && el.getBoundingClientRect();
        return !!box && box.top >= 0 && box.top < window.innerHeight; }"""
    try:
        page.wait_for_function(in_view, timeout=5000)
    except PlaywrightTimeout as error:  # the page's state in the failure's words
        where = page.evaluate(
            """() => JSON.stringify({ scrollTop: document.getElementById('scroller').scrollTop,
                 cards: [...document.querySelectorAll('[data-testid=job]')].slice(0, 4)
                   .map((j) => [j.id, j.dataset.kind, Math.round(j.getBoundingClientRect().top)])
             })"""
        )
        raise AssertionError(f"the new job's progress is off-screen: {where}") from error
    toast = page.get_by_test_id("toast").last
    expect(toast).to_be_visible()
    covered = toast.evaluate(
        """(toast) => { const t = toast.getBoundingClientRect();
          const controls = 'main button, main input, main select, main textarea';
          return [...document.querySelectorAll(controls)]
            .filter((el) => !el.closest('[hidden]') && el.getClientRects().length)
            .filter((el) => {
              // the part of the control the scrolling area shows (the rest is scrolled away)
              const c = el.getBoundingClientRect();
              const s = document.getElementById('scroller').getBoundingClientRect();
              const b = { left: Math.max(c.left, s.left), right: Math.min(c.right, s.right),
                          top: Math.max(c.top, s.top), bottom: Math.min(c.bottom, s.bottom) };
              if (b.left >= b.right || b.top >= b.bottom) return false;
              return b.left < t.right && b.right > t.left
                && b.top < t.bottom && b.bottom > t.top; })
            .map((el) => el.getAttribute('aria-label') || el.textContent.trim() || el.id); }"""
    )
    assert covered == [], f"the toast covers {covered}"
    assert_console_clean(console_errors)


def test_a_viewer_gets_a_viewers_page(
    page: Any, live_server: LiveServer, venue: dict[str, Any], console_errors: list[str]
) -> None:
    deploy(live_server, venue["id"], venue["run"])
    sign_in(page, live_server.token("viewer", venue["id"], f"viewer@{venue['id']}"))
    expect(page.get_by_test_id("assignment-state")).to_have_text("live")
    visible = [
        name for name in CHAIR_TABS if page.get_by_role("tab", name=name, exact=True).is_visible()
    ]
    assert visible == ["Assignment", "Papers and reviewers", "Statistics", "Scores"], visible
    chair_words = re.compile(r"\b(draft|deploy|solve|upload|chairs? see|quota file)\b", re.I)
    for name in visible:
        open_tab(page, name)
        page.wait_for_load_state("networkidle")
        text = page.locator("#main").inner_text()
        found = chair_words.search(text)
        assert not found, (name, text[max(0, found.start() - 80) : found.end() + 80])
    page.set_viewport_size({"width": 390, "height": 844})
    for name in visible:
        open_tab(page, name)
        page.wait_for_load_state("networkidle")
        _fits(page, f"viewer tab {name}")
    assert_console_clean(console_errors)
