"""End-to-end fixtures: the real service under uvicorn and Debian's Chromium via Playwright.

The server runs in its own process (``live_server.run_server``, as for the HTTP tests) on a
free 127.0.0.1 port with a temporary SQLite database and real background jobs. The browser
is ``/usr/bin/chromium`` (install it with ``tools/install-browser.sh``); Playwright never
downloads a browser here. Without Chromium the tests skip, except under ``CI=true``, where
they fail.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live_server import LiveServer, run_server

from .e2e_support import ARCHIVES, SUBMISSIONS, sample_reviewers_zip, venue200_files

CHROMIUM = Path(os.environ.get("RECOMMENDER_E2E_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: the e2e tests must run; see tools/install-browser.sh)")
    pytest.skip(f"{reason}; run tools/install-browser.sh to enable the e2e tests")


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    data_dir = tmp_path_factory.mktemp("e2e-service")
    with run_server(
        f"sqlite:///{data_dir / 'recommender.db'}",
        data_dir,
        admin_name="e2e-admin",
        job_workers=2,
        inline_jobs="false",
        max_upload_bytes=20 * 1024 * 1024,
    ) as server:
        yield server


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} not found")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the Python package 'playwright' is not installed")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def console_errors() -> list[str]:
    """JavaScript exceptions, console errors and every HTTP error answer (4xx/5xx) of the
    test's page: tests assert it is empty (a clean console), or that it holds only the
    errors they provoked on purpose."""
    return []


@pytest.fixture
def page(browser: Any, live_server: LiveServer, console_errors: list[str]) -> Iterator[Any]:
    """A fresh page (own storage) at the service, recording JavaScript errors, console errors
    (including Chromium's "Failed to load resource" for a 404) and HTTP error answers."""
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": 1360, "height": 900}, accept_downloads=True
    )
    context.set_default_timeout(15_000)
    page = context.new_page()
    errors = console_errors
    page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    page.on(
        "console",
        lambda message: (
            errors.append(f"console.{message.type}: {message.text}")
            if message.type == "error"
            else None
        ),
    )
    page.on(
        "response",
        lambda response: (
            errors.append(f"HTTP {response.status} {response.request.method} {response.url}")
            if response.status >= 400
            else None
        ),
    )
    try:
        yield page
    finally:
        context.close()


@pytest.fixture(scope="session")
def sample_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The bundled sample: reviewer archives zipped on the fly, the submissions JSON, and a
    bids file with row-level errors."""
    folder = tmp_path_factory.mktemp("e2e-sample")
    if not ARCHIVES.is_dir() or not SUBMISSIONS.is_file():
        pytest.fail(f"sample data missing: {ARCHIVES} and {SUBMISSIONS} are needed")
    bad_bids = folder / "bad-bids.csv"
    bad_bids.write_text("paper_id,reviewer_id,bid\nno-such-paper,~nobody1,High\n", encoding="utf-8")
    return {
        "reviewers": sample_reviewers_zip(folder),
        "submissions": SUBMISSIONS,
        "bad_bids": bad_bids,
    }


@pytest.fixture(scope="session")
def venue200_data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A generated 200-paper venue with 80 named reviewers (see e2e_support.venue200_files)."""
    return venue200_files(tmp_path_factory.mktemp("e2e-venue200"))
