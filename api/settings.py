"""Service settings, read from ``RECOMMENDER_*`` environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from recommender.affinity.options import RunOptions


def _default_data_dir() -> Path:
    return Path(os.environ.get("RECOMMENDER_DATA_DIR", Path.home() / ".local/share/recommender"))


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class Settings:
    """Everything the service reads from its environment.

    ``database_url``: SQLAlchemy URL (``sqlite:///...`` or ``postgresql+psycopg://...``);
    default a SQLite file ``recommender.db`` under ``data_dir``.
    ``max_upload_bytes``: larger request bodies and files get 413.
    ``job_workers``: background threads running affinity and assignment jobs.
    ``inline_jobs``: run each job to completion inside the request that starts it (tests).
    ``affinity_top_n``: stored scores per paper and per reviewer (plus requested pairs).
    ``run_options``: how affinity jobs run — the embedding models clients may name, the
    embedding cache, device, batch size and memory bounds
    (:meth:`recommender.affinity.options.RunOptions.from_env`: ``RECOMMENDER_MODELS``,
    ``RECOMMENDER_CACHE_DIR``, ...). Server-side only: a client chooses scoring parameters
    and a model by name, never a path, a device or a limit.
    """

    data_dir: Path = field(default_factory=_default_data_dir)
    database_url: str = ""
    max_upload_bytes: int = 20 * 1024 * 1024
    job_workers: int = 2
    inline_jobs: bool = False
    run_migrations: bool = True
    affinity_top_n: int = 50
    run_options: RunOptions = field(default_factory=RunOptions.from_env)

    def __post_init__(self) -> None:
        if not self.database_url:
            object.__setattr__(
                self, "database_url", f"sqlite:///{Path(self.data_dir) / 'recommender.db'}"
            )
        if self.max_upload_bytes <= 0:
            raise ValueError("max_upload_bytes must be positive")
        if self.job_workers < 1:
            raise ValueError("job_workers must be at least 1")

    @property
    def affinity_models_dir(self) -> Path:
        """Where fitted affinity models of finished runs are kept (fast explanations)."""
        return Path(self.data_dir) / "affinity-models"

    @classmethod
    def from_env(cls) -> Settings:
        """Read ``RECOMMENDER_DATA_DIR``, ``RECOMMENDER_DATABASE_URL``,
        ``RECOMMENDER_MAX_UPLOAD_BYTES``, ``RECOMMENDER_JOB_WORKERS``,
        ``RECOMMENDER_INLINE_JOBS``, ``RECOMMENDER_RUN_MIGRATIONS``,
        ``RECOMMENDER_AFFINITY_TOP_N`` and the run options' variables (see
        :meth:`recommender.affinity.options.RunOptions.from_env`)."""
        env = os.environ
        return cls(
            data_dir=_default_data_dir(),
            database_url=env.get("RECOMMENDER_DATABASE_URL", ""),
            max_upload_bytes=int(env.get("RECOMMENDER_MAX_UPLOAD_BYTES", 20 * 1024 * 1024)),
            job_workers=int(env.get("RECOMMENDER_JOB_WORKERS", 2)),
            inline_jobs=_env_bool("RECOMMENDER_INLINE_JOBS", False),
            run_migrations=_env_bool("RECOMMENDER_RUN_MIGRATIONS", True),
            affinity_top_n=int(env.get("RECOMMENDER_AFFINITY_TOP_N", 50)),
            run_options=RunOptions.from_env(),
        )
