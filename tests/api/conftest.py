"""Fixtures: a fresh database per test session on SQLite and on PostgreSQL.

PostgreSQL: ``RECOMMENDER_TEST_POSTGRES_URL`` (default
``postgresql+psycopg://postgres@127.0.0.1:5432/test``); a database ``recommender_test_<hex>``
is created for the session and dropped after. When the server is unreachable the Postgres
tests are skipped, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from api.app import create_app
from recommender.affinity import RunOptions
from reviewer_recommender.services.tokens import create_token
from reviewer_recommender.settings import Settings
from reviewer_recommender.storage.db import Database

DEFAULT_POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
BACKENDS = ("sqlite", "postgres")


def _postgres_database() -> Iterator[str]:
    base_url = make_url(os.environ.get("RECOMMENDER_TEST_POSTGRES_URL", DEFAULT_POSTGRES_URL))
    try:
        admin = create_engine(base_url, isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            connection.execute(text("SELECT 1"))
    except Exception as error:
        message = (
            f"PostgreSQL at {base_url.render_as_string(hide_password=True)} unreachable: {error}"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    name = f"recommender_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield base_url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session", params=BACKENDS)
def database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('db') / 'recommender.db'}"
    else:
        yield from _postgres_database()


def make_settings(database_url: str, tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": database_url,
        "data_dir": tmp_path,
        "inline_jobs": True,
        "max_upload_bytes": 2 * 1024 * 1024,
        "affinity_top_n": 5,
        "run_options": RunOptions(cache_dir=tmp_path / "embedding-cache"),
    }
    values.update(overrides)
    return Settings(**values)


class Api:
    """A TestClient plus tokens: ``admin`` (global) and per-venue chair/viewer tokens."""

    def __init__(self, client: TestClient, database: Database):
        self.client = client
        self.database = database
        self.admin = create_token(database, name="admin", role="admin")

    def headers(self, token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    def new_venue(self) -> tuple[str, str, str]:
        """A fresh venue id with a chair and a viewer token."""
        venue_id = f"venue-{uuid.uuid4().hex[:8]}"
        response = self.client.post(
            "/venues", json={"id": venue_id, "name": "Test venue"}, headers=self.headers(self.admin)
        )
        assert response.status_code == 201, response.text
        chair = create_token(
            self.database, name=f"chair@{venue_id}", role="chair", venue_id=venue_id
        )
        viewer = create_token(
            self.database, name=f"viewer@{venue_id}", role="viewer", venue_id=venue_id
        )
        return venue_id, chair, viewer

    def call(self, method: str, path: str, token: str, **kwargs: Any) -> Any:
        return self.client.request(method, path, headers=self.headers(token), **kwargs)


@pytest.fixture
def api(database_url: str, tmp_path: Path) -> Iterator[Api]:
    app = create_app(make_settings(database_url, tmp_path))
    with TestClient(app) as client:
        yield Api(client, app.state.database)
