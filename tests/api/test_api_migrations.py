"""The Alembic migrations build exactly the schema the models declare."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from api.db import Database, migrate
from api.models import Base


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
