"""Helpers shared by the e2e tests and their fixtures (kept out of conftest.py so tests can
import them by a unique module name)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT_DIR = REPO_ROOT / "artifacts" / "screenshots"
DOCS_SCREENSHOT_DIR = REPO_ROOT / "docs" / "screenshots"


@dataclass
class LiveServer:
    """The running service: its base URL, database URL and tokens (admin is global)."""

    url: str
    database_url: str
    admin_token: str
    app: Any

    def token(self, role: str, venue_id: str, name: str) -> str:
        from api.auth import create_token
        from api.db import Database

        database = Database(self.database_url)
        try:
            return create_token(
                database, name=name, role=role, venue_id=venue_id, create_venue=True
            )
        finally:
            database.dispose()


def screenshot(page: Any, name: str, *, full_page: bool = True) -> Path:
    """Write artifacts/screenshots/<name>.png (and docs/screenshots/ when
    UPDATE_SCREENSHOTS=1)."""
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOT_DIR / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    if os.environ.get("UPDATE_SCREENSHOTS") == "1":
        DOCS_SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
        (DOCS_SCREENSHOT_DIR / f"{name}.png").write_bytes(path.read_bytes())
    return path
