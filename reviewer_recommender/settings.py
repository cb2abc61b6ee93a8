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
    ``max_upload_bytes``: larger uploaded files and upload bodies get 413.
    ``max_json_bytes``: larger bodies of other requests (JSON decoded on the event loop) get
    413.
    ``max_archive_members``, ``max_uncompressed_bytes``, ``max_compression_ratio``: what one
    uploaded zip may hold and expand to (in all, however many members; see
    :mod:`recommender.io.archives`).
    ``job_workers``: affinity and assignment jobs running at once.
    ``job_isolation``: ``"process"`` (each job in a child process, killed when a cancel is not
    honoured within ``job_cancel_grace_seconds``) or ``"thread"``
    (see :mod:`reviewer_recommender.jobs.runner`).
    ``job_venue_cap``: jobs of one venue running at once (0: one less than ``job_workers``,
    at least 1), so another venue's job always finds a worker soon (see
    :mod:`reviewer_recommender.jobs.runner`).
    ``max_queued_jobs_per_venue``: jobs of one venue queued or running at once; one more is
    refused with 429 ``too_many_jobs`` and ``Retry-After``
    (:func:`reviewer_recommender.storage.repository.start_job`).
    ``max_requests_per_venue``, ``max_requests_per_token``: requests in flight at once for
    one venue and for one token; beyond, 429 with ``Retry-After`` (:mod:`api.admission`).
    ``database_pool_size``, ``database_pool_timeout``: database connections kept (plus
    twice as many more on demand) and seconds a request waits for one.
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
    max_json_bytes: int = 2 * 1024 * 1024
    max_archive_members: int = 100_000
    max_uncompressed_bytes: int = 256 * 1024 * 1024
    max_compression_ratio: float = 100.0
    job_workers: int = 2
    job_isolation: str = "process"
    job_cancel_grace_seconds: float = 2.0
    job_venue_cap: int = 0
    max_queued_jobs_per_venue: int = 20
    max_requests_per_venue: int = 24
    max_requests_per_token: int = 12
    database_pool_size: int = 10
    database_pool_timeout: float = 30.0
    inline_jobs: bool = False
    run_migrations: bool = True
    affinity_top_n: int = 50
    run_options: RunOptions = field(default_factory=RunOptions.from_env)

    def __post_init__(self) -> None:
        if not self.database_url:
            object.__setattr__(
                self, "database_url", f"sqlite:///{Path(self.data_dir) / 'recommender.db'}"
            )
        if self.max_upload_bytes <= 0 or self.max_json_bytes <= 0:
            raise ValueError("max_upload_bytes and max_json_bytes must be positive")
        if self.max_archive_members < 1 or self.max_uncompressed_bytes < 1:
            raise ValueError("archive limits must be positive")
        if self.max_compression_ratio < 1:
            raise ValueError("max_compression_ratio must be at least 1")
        if self.job_workers < 1:
            raise ValueError("job_workers must be at least 1")
        if self.job_isolation not in ("process", "thread"):
            raise ValueError("job_isolation must be 'process' or 'thread'")
        if self.job_venue_cap < 0:
            raise ValueError("job_venue_cap must be 0 (automatic) or positive")
        if self.max_queued_jobs_per_venue < 1:
            raise ValueError("max_queued_jobs_per_venue must be at least 1")
        if min(self.max_requests_per_venue, self.max_requests_per_token) < 1:
            raise ValueError("max_requests_per_venue and max_requests_per_token must be positive")
        if self.database_pool_size < 1 or self.database_pool_timeout <= 0:
            raise ValueError("database_pool_size and database_pool_timeout must be positive")
        if not 0 <= self.job_cancel_grace_seconds <= 60:
            raise ValueError("job_cancel_grace_seconds must be between 0 and 60")

    @property
    def venue_job_cap(self) -> int:
        """Jobs of one venue running at once (``job_venue_cap``, or one less than the
        workers when 0)."""
        return self.job_venue_cap or max(1, self.job_workers - 1)

    @property
    def affinity_models_dir(self) -> Path:
        """Where fitted affinity models of finished runs are kept (fast explanations)."""
        return Path(self.data_dir) / "affinity-models"

    @classmethod
    def from_env(cls) -> Settings:
        """Read ``RECOMMENDER_DATA_DIR``, ``RECOMMENDER_DATABASE_URL``,
        ``RECOMMENDER_MAX_UPLOAD_BYTES``, ``RECOMMENDER_MAX_JSON_BYTES``,
        ``RECOMMENDER_MAX_ARCHIVE_MEMBERS``,
        ``RECOMMENDER_MAX_UNCOMPRESSED_BYTES``, ``RECOMMENDER_MAX_COMPRESSION_RATIO``,
        ``RECOMMENDER_JOB_WORKERS``, ``RECOMMENDER_JOB_ISOLATION``,
        ``RECOMMENDER_JOB_CANCEL_GRACE_SECONDS``, ``RECOMMENDER_JOB_VENUE_CAP``,
        ``RECOMMENDER_MAX_QUEUED_JOBS_PER_VENUE``,
        ``RECOMMENDER_MAX_REQUESTS_PER_VENUE``, ``RECOMMENDER_MAX_REQUESTS_PER_TOKEN``,
        ``RECOMMENDER_DATABASE_POOL_SIZE``, ``RECOMMENDER_DATABASE_POOL_TIMEOUT``,
        ``RECOMMENDER_INLINE_JOBS``, ``RECOMMENDER_RUN_MIGRATIONS``,
        ``RECOMMENDER_AFFINITY_TOP_N`` and the run options' variables (see
        :meth:`recommender.affinity.options.RunOptions.from_env`)."""
        env = os.environ
        return cls(
            data_dir=_default_data_dir(),
            database_url=env.get("RECOMMENDER_DATABASE_URL", ""),
            max_upload_bytes=int(env.get("RECOMMENDER_MAX_UPLOAD_BYTES", 20 * 1024 * 1024)),
            max_json_bytes=int(env.get("RECOMMENDER_MAX_JSON_BYTES", 2 * 1024 * 1024)),
            max_archive_members=int(env.get("RECOMMENDER_MAX_ARCHIVE_MEMBERS", 100_000)),
            max_uncompressed_bytes=int(
                env.get("RECOMMENDER_MAX_UNCOMPRESSED_BYTES", 256 * 1024 * 1024)
            ),
            max_compression_ratio=float(env.get("RECOMMENDER_MAX_COMPRESSION_RATIO", 100)),
            job_workers=int(env.get("RECOMMENDER_JOB_WORKERS", 2)),
            job_isolation=env.get("RECOMMENDER_JOB_ISOLATION", "process"),
            job_cancel_grace_seconds=float(env.get("RECOMMENDER_JOB_CANCEL_GRACE_SECONDS", 2.0)),
            job_venue_cap=int(env.get("RECOMMENDER_JOB_VENUE_CAP", 0)),
            max_queued_jobs_per_venue=int(env.get("RECOMMENDER_MAX_QUEUED_JOBS_PER_VENUE", 20)),
            max_requests_per_venue=int(env.get("RECOMMENDER_MAX_REQUESTS_PER_VENUE", 24)),
            max_requests_per_token=int(env.get("RECOMMENDER_MAX_REQUESTS_PER_TOKEN", 12)),
            database_pool_size=int(env.get("RECOMMENDER_DATABASE_POOL_SIZE", 10)),
            database_pool_timeout=float(env.get("RECOMMENDER_DATABASE_POOL_TIMEOUT", 30)),
            inline_jobs=_env_bool("RECOMMENDER_INLINE_JOBS", False),
            run_migrations=_env_bool("RECOMMENDER_RUN_MIGRATIONS", True),
            affinity_top_n=int(env.get("RECOMMENDER_AFFINITY_TOP_N", 50)),
            run_options=RunOptions.from_env(),
        )
