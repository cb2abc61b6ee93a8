"""Engine, sessions and schema migrations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def make_engine(database_url: str, pool_size: int = 10, pool_timeout: float = 30.0) -> Engine:
    """An engine for ``database_url``; SQLite gets WAL, foreign keys and a busy timeout.
    ``pool_size`` connections are kept, twice as many more opened on demand; a request waits
    ``pool_timeout`` seconds at most for one."""
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        if url.database and url.database != ":memory:":
            Path(url.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            pool_pre_ping=True,
            **_pool(url, pool_size, pool_timeout),
        )

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True, **_pool(url, pool_size, pool_timeout))


def _pool(url: Any, pool_size: int, pool_timeout: float) -> dict[str, Any]:
    if url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:"):
        return {}  # an in-memory database lives in one connection (SingletonThreadPool)
    return {"pool_size": pool_size, "max_overflow": 2 * pool_size, "pool_timeout": pool_timeout}


def alembic_config(engine: Engine) -> Config:
    """Programmatic Alembic configuration (no alembic.ini): migrations ship in the package."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["engine"] = engine
    return config


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the schema of ``engine``'s database up to ``revision``."""
    command.upgrade(alembic_config(engine), revision)


class Database:
    """An engine and its session factory."""

    def __init__(self, database_url: str, pool_size: int = 10, pool_timeout: float = 30.0):
        self.engine = make_engine(database_url, pool_size, pool_timeout)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)

    def session(self) -> Session:
        return self.sessions()

    def dispose(self) -> None:
        self.engine.dispose()
