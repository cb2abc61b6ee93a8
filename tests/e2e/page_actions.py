"""What a chair does on the page, step by step, through what is visible (roles, labels and
text), shared by the e2e tests."""

from __future__ import annotations

import importlib
import re
from typing import Any

try:
    expect: Any = importlib.import_module("playwright.sync_api").expect
except ImportError:  # the browser fixture skips (or, under CI=true, fails) with the reason
    expect = None

JOB_TIMEOUT_MS = 90_000


def sign_in(page: Any, token: str) -> None:
    page.goto("/")
    page.get_by_label("API token").fill(token)
    page.get_by_role("button", name="Sign in").click()


def open_venue(page: Any, venue_id: str) -> None:
    """Sign-in lands on the venue list for admins: open one."""
    page.get_by_role("button", name=re.compile(rf"\({re.escape(venue_id)}\)$")).click()
    expect(page.locator("#venue-heading")).to_be_visible()


def create_venue(page: Any, venue_id: str) -> None:
    expect(page.get_by_role("heading", name="Venues")).to_be_visible()
    page.get_by_label("Venue id").fill(venue_id)
    page.get_by_label("Name", exact=True).fill(f"E2E {venue_id}")
    page.get_by_role("button", name="Create venue").click()
    expect(page.get_by_role("heading", name=f"E2E {venue_id}")).to_be_visible()


def upload(page: Any, label: str, path: Any, button: str) -> None:
    page.get_by_label(label).set_input_files(str(path))
    page.get_by_role("button", name=button).click()


def open_tab(page: Any, name: str) -> None:
    page.get_by_role("tab", name=name).click()
    expect(page.get_by_role("tab", name=name)).to_have_attribute("aria-selected", "true")


def wait_for_job(
    page: Any,
    kind: str,
    state: str = "succeeded",
    index: int = 0,
    timeout_ms: int = JOB_TIMEOUT_MS,
) -> Any:
    """The newest job card of ``kind`` (``index`` 0) once it reached ``state``."""
    card = page.locator(f'[data-testid="job"][data-kind="{kind}"]').nth(index)
    expect(card.get_by_test_id("job-state")).to_have_text(state, timeout=timeout_ms)
    return card


def pick(page: Any, label: str, text: str, option: str | re.Pattern[str] | None = None) -> None:
    """Type into a type-ahead picker and choose the suggestion (the first, or `option`)."""
    box = page.get_by_role("combobox", name=label, exact=True)
    box.fill(text)
    if not text:  # an empty box lists the first items on ArrowDown
        box.press("ArrowDown")
    listbox = page.get_by_role("listbox", name=f"{label} suggestions")
    choice = (
        listbox.get_by_role("option", name=option)
        if option is not None
        else listbox.get_by_role("option").first
    )
    choice.click()


def dialog(page: Any, name: str | re.Pattern[str]) -> Any:
    found = page.get_by_role("dialog", name=name)
    expect(found).to_be_visible()
    return found


def run_select(page: Any) -> Any:
    return page.get_by_label("Assignment run")


def assert_console_clean(errors: list[str], *allowed: str) -> None:
    """No JavaScript error, console error or HTTP error answer, except those named (by a
    substring) because the test provoked them."""
    allowed_http = [e for e in errors if e.startswith("HTTP ") and any(a in e for a in allowed)]
    unexpected = []
    for error in errors:
        if any(a in error for a in allowed):
            continue
        # Chromium's own line for an answer the test allowed (it names the status, not the URL)
        status = re.search(r"Failed to load resource: .*status of (\d+)", error)
        if status and any(e.startswith(f"HTTP {status.group(1)} ") for e in allowed_http):
            continue
        unexpected.append(error)
    assert unexpected == [], unexpected
