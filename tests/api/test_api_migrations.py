"""The Alembic migrations build exactly the schema the models declare."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from conftest import BACKENDS, Api, _postgres_database
from fastapi.testclient import TestClient
from sqlalchemy import inspect, select, text

from api.app import create_app
from reviewer_recommender.services.principals import hash_secret
from reviewer_recommender.settings import Settings
from reviewer_recommender.storage.db import Database, alembic_config, migrate
from reviewer_recommender.storage.models import ApiToken, AssignmentRow, Base, Job


def test_migrations_match_models(database_url: str) -> None:
    database = Database(database_url)
    try:
        migrate(database.engine)
        migrate(database.engine)  # idempotent at head
        with database.engine.connect() as connection:
            context = MigrationContext.configure(connection)
            assert compare_metadata(context, Base.metadata) == []
            assert set(Base.metadata.tables) <= set(inspect(connection).get_table_names())
    finally:
        database.dispose()


def test_sqlite_runs_in_wal_with_foreign_keys(tmp_path: object) -> None:
    database = Database(f"sqlite:///{tmp_path}/wal.db")
    try:
        with database.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    finally:
        database.dispose()


@pytest.fixture(params=BACKENDS)
def empty_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.db'}"
    else:
        yield from _postgres_database()


def test_0002_keeps_existing_data_and_downgrades(empty_database_url: str) -> None:
    """A 0001 database with a deployed run and a token upgrades to head (deployed -> live,
    version 1, tokens without a prefix still work) and back."""
    database = Database(empty_database_url)
    now = datetime.now(UTC)
    try:
        migrate(database.engine, "0001")
        with database.engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO venues (id, name, corpus_version, created_at) "
                    "VALUES ('old', 'Old', 0, :now)"
                ),
                {"now": now},
            )
            connection.execute(
                text(
                    "INSERT INTO api_tokens (token_hash, name, role, venue_id, created_at, "
                    "revoked) VALUES (:hash, 'legacy', 'chair', 'old', :now, :no)"
                ),
                {"hash": hash_secret("rec_legacy"), "now": now, "no": False},
            )
            for state in ("deployed", "draft", "superseded"):
                connection.execute(
                    text(
                        "INSERT INTO assignments (venue_id, state, parameters, summary, "
                        "created_at) VALUES ('old', :state, '{}', '{}', :now)"
                    ),
                    {"state": state, "now": now},
                )
        migrate(database.engine)
        with database.session() as session:
            runs = {r.state: r.version for r in session.scalars(select(AssignmentRow))}
            assert runs == {"live": 1, "draft": 1, "superseded": 1}
            token = session.scalar(select(ApiToken))
            assert token is not None and (token.prefix, token.revoked_by) == ("", "")
        app = create_app(Settings(database_url=empty_database_url, run_migrations=False))
        with TestClient(app) as client:
            me = client.get("/me", headers={"Authorization": "Bearer rec_legacy"})
            assert me.status_code == 200 and me.json()["name"] == "legacy"
            live = client.get(
                "/venues/old/assignments/live", headers={"Authorization": "Bearer rec_legacy"}
            )
            assert live.status_code == 200 and live.json()["state"] == "live"
        command.downgrade(alembic_config(database.engine), "0001")
        with database.engine.connect() as connection:
            states = set(connection.execute(text("SELECT state FROM assignments")).scalars())
            assert states == {"deployed", "draft", "superseded"}
        migrate(database.engine)
    finally:
        database.dispose()


def test_0003_backfills_keys_and_numbers_and_downgrades(empty_database_url: str) -> None:
    """A 0002 database with reviewers (one named only by its OpenReview id), submissions,
    jobs and runs of two venues upgrades to head: search keys filled, jobs and runs
    numbered per venue in id order, runs unnamed; and back to 0002 with the data kept."""
    from reviewer_recommender.services.search import search

    database = Database(empty_database_url)
    now = datetime.now(UTC)
    try:
        migrate(database.engine, "0002")
        with database.engine.begin() as connection:
            for venue in ("va", "vb"):
                connection.execute(
                    text(
                        "INSERT INTO venues (id, name, corpus_version, created_at) "
                        "VALUES (:v, :v, 0, :now)"
                    ),
                    {"v": venue, "now": now},
                )
            connection.execute(
                text(
                    "INSERT INTO reviewers (venue_id, id, name, email, affiliation, attributes, "
                    "publications, updated_at) VALUES ('va', 'Ada_Lovelace1', '', '', '', '{}', "
                    "'[]', :now), ('va', 'r2', 'Grace Hopper', '', '', '{}', '[]', :now)"
                ),
                {"now": now},
            )
            connection.execute(
                text(
                    "INSERT INTO submissions (venue_id, id, title, abstract, authors, source, "
                    "author_emails, author_ids, author_affiliations, updated_at) VALUES "
                    "('va', 'P1', 'Über Graphs', '', '[]', '', '[]', '[]', '[]', :now)"
                ),
                {"now": now},
            )
            for venue in ("va", "vb", "va"):
                connection.execute(
                    text(
                        "INSERT INTO jobs (venue_id, kind, state, progress, stage, log, params, "
                        "result, error, cancel_requested, created_by, created_at) VALUES "
                        "(:v, 'affinity', 'succeeded', 1, 'done', '[]', '{}', '{}', '', :no, "
                        "'x', :now)"
                    ),
                    {"v": venue, "now": now, "no": False},
                )
                connection.execute(
                    text(
                        "INSERT INTO assignments (venue_id, state, version, parameters, summary, "
                        "created_at, deployed_by) VALUES (:v, 'draft', 1, '{}', '{}', :now, '')"
                    ),
                    {"v": venue, "now": now},
                )
        migrate(database.engine)
        with database.session() as session:
            jobs = [(j.venue_id, j.number) for j in session.scalars(select(Job).order_by(Job.id))]
            assert jobs == [("va", 1), ("vb", 1), ("va", 2)]
            runs = list(session.scalars(select(AssignmentRow).order_by(AssignmentRow.id)))
            assert [(r.venue_id, r.number, r.name, r.note) for r in runs] == [
                ("va", 1, "", ""),
                ("vb", 1, "", ""),
                ("va", 2, "", ""),
            ]
            found = search(session, "va", "reviewers", "lovelace", 10, 0)["items"]
            assert [(i["id"], i["name"], i["match"]) for i in found] == [
                ("Ada_Lovelace1", "Ada Lovelace", "word")
            ]
            assert search(session, "va", "papers", "uber", 10, 0)["items"][0]["id"] == "P1"
        command.downgrade(alembic_config(database.engine), "0002")
        with database.engine.connect() as connection:
            columns = {c["name"] for c in inspect(connection).get_columns("assignments")}
            assert "number" not in columns and "name" not in columns
            assert "assignment_edits" not in inspect(connection).get_table_names()
            assert connection.execute(text("SELECT count(*) FROM reviewers")).scalar() == 2
            assert connection.execute(text("SELECT count(*) FROM jobs")).scalar() == 3
        migrate(database.engine)
    finally:
        database.dispose()


def test_0005_puts_existing_data_in_the_reviewers_pool_and_downgrades(
    empty_database_url: str,
) -> None:
    """A 0003 database with reviewers, a live run, stored limits, a bid and a token
    upgrades: the reviewers are the reviewers pool, runs and limits are the reviewers', the
    bid an upload's, bidding closed; the service reads it as before; and back to 0003 with
    the data kept."""
    database = Database(empty_database_url)
    now = datetime.now(UTC)
    try:
        migrate(database.engine, "0003")
        with database.engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO venues (id, name, corpus_version, created_at) "
                    "VALUES ('old', 'Old', 0, :now)"
                ),
                {"now": now},
            )
            connection.execute(
                text(
                    "INSERT INTO reviewers (venue_id, id, name, email, affiliation, attributes, "
                    "publications, updated_at, id_key, text_key) VALUES "
                    "('old', 'r1', 'Ada', '', '', '{}', '[]', :now, 'r1', 'ada'), "
                    "('old', 'r2', 'Bob', '', '', '{}', '[]', :now, 'r2', 'bob')"
                ),
                {"now": now},
            )
            connection.execute(
                text(
                    "INSERT INTO assignments (venue_id, number, state, version, parameters, "
                    "summary, created_at, deployed_by, name, note) VALUES "
                    "('old', 1, 'live', 1, '{}', '{}', :now, '', '', '')"
                ),
                {"now": now},
            )
            connection.execute(
                text(
                    "INSERT INTO reviewer_max_loads (venue_id, reviewer_id, max_load) "
                    "VALUES ('old', 'r1', 2)"
                )
            )
            connection.execute(
                text(
                    "INSERT INTO paper_demands (venue_id, paper_id, demand) VALUES ('old', 'P1', 1)"
                )
            )
            connection.execute(
                text(
                    "INSERT INTO bids (venue_id, paper_id, reviewer_id, label, bid) "
                    "VALUES ('old', 'P1', 'r1', 'High', 0.5)"
                )
            )
            connection.execute(
                text(
                    "INSERT INTO api_tokens (token_hash, name, role, venue_id, created_at, "
                    "revoked, prefix, created_by, revoked_by) VALUES "
                    "(:hash, 'chair', 'chair', 'old', :now, :no, '', '', '')"
                ),
                {"hash": hash_secret("rec_chair_0007"), "now": now, "no": False},
            )
        migrate(database.engine)
        with database.engine.connect() as connection:
            members = connection.execute(
                text("SELECT pool, person_id FROM pool_members ORDER BY person_id")
            ).all()
            assert [tuple(m) for m in members] == [("reviewers", "r1"), ("reviewers", "r2")]
            assert connection.execute(text("SELECT pool, state FROM assignments")).one() == (
                "reviewers",
                "live",
            )
            assert connection.execute(
                text("SELECT pool, reviewer_id, max_load FROM reviewer_max_loads")
            ).one() == ("reviewers", "r1", 2)
            assert connection.execute(text("SELECT pool, demand FROM paper_demands")).one() == (
                "reviewers",
                1,
            )
            assert connection.execute(text("SELECT origin FROM bids")).scalar() == "chair"
            assert connection.execute(text("SELECT person_id FROM api_tokens")).scalar() is None
        app = create_app(Settings(database_url=empty_database_url, run_migrations=False))
        headers = {"Authorization": "Bearer rec_chair_0007"}
        with TestClient(app) as client:
            venue = client.get("/venues/old", headers=headers).json()
            assert (venue["live_assignment_id"], venue["bidding_open"]) == (1, False)
            assert venue["pools"] == {"reviewers": 2, "area_chairs": 0, "senior_area_chairs": 0}
            loads = client.get("/venues/old/reviewer-max-loads", headers=headers).json()
            assert [(i["reviewer_id"], i["max_load"]) for i in loads["items"]] == [("r1", 2)]
            live = client.get("/venues/old/assignments/live", headers=headers).json()
            assert (live["id"], live["pool"]) == (1, "reviewers")
        command.downgrade(alembic_config(database.engine), "0003")
        with database.engine.connect() as connection:
            assert "pool_members" not in inspect(connection).get_table_names()
            assert connection.execute(text("SELECT count(*) FROM reviewers")).scalar() == 2
            assert connection.execute(
                text("SELECT reviewer_id, max_load FROM reviewer_max_loads")
            ).one() == ("r1", 2)
            assert connection.execute(text("SELECT state FROM assignments")).scalar() == "live"
        migrate(database.engine)
    finally:
        database.dispose()


def test_a_person_stored_in_no_pool_is_a_reviewer(api: Api) -> None:
    """Reviewer records stored without a pool (by code that names none) are the reviewers'
    pool; uploading one into another pool keeps them a reviewer."""
    from reviewer_recommender.storage.models import ReviewerRow

    venue, chair, _viewer = api.new_venue()
    with api.database.session() as session:
        session.add_all(ReviewerRow(venue_id=venue, id=f"r{i}") for i in range(3))
        session.commit()
    listed = api.call("GET", f"/venues/{venue}/reviewers", chair, params={"pool": "reviewers"})
    assert listed.json()["total"] == 3
    moved = api.call(
        "POST",
        f"/venues/{venue}/reviewers",
        chair,
        params={"pool": "area_chairs"},
        json=[{"id": "r0", "name": "Ray Zero", "publications": []}],
    )
    assert moved.status_code == 200, moved.text
    person = api.call("GET", f"/venues/{venue}/reviewers/r0", chair).json()
    assert person["pools"] == ["reviewers", "area_chairs"]
    new = api.call(
        "POST",
        f"/venues/{venue}/reviewers",
        chair,
        params={"pool": "area_chairs"},
        json=[{"id": "c1", "name": "Cy Chair", "publications": []}],
    )
    assert new.status_code == 200
    assert api.call("GET", f"/venues/{venue}/reviewers/c1", chair).json()["pools"] == [
        "area_chairs"
    ]
    assert api.call("GET", f"/venues/{venue}", chair).json()["pools"]["reviewers"] == 3
