"""Run options: how a scoring run is carried out, never what it computes.

Model directories, the cache directory, the device, the encoder backend, the batch size and
the memory bounds change where files live, how long a run takes and how much memory it
needs, not the scores (the scoring path is chosen so that results agree up to float32
rounding). They are set by whoever runs the code, on the server (``RECOMMENDER_*``
environment variables, :meth:`RunOptions.from_env`) or the command line, and never by an
HTTP client, which chooses :class:`recommender.affinity.params.ScoringParams` only and names
a model among :meth:`RunOptions.model_names`.

Every limit is defined once, here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from recommender.affinity.params import MODEL_NAME_PATTERN
from recommender.embeddings import (
    CACHE_DIR_ENV,
    DEFAULT_MODEL_NAME,
    check_model_directory,
    default_cache_dir,
    default_model_path,
)
from recommender.fast_encoder import BACKENDS
from recommender.packaged_models import (
    assembled_model_path,
    packaged_model_names,
    packaged_model_path,
)

BLOCKWISE_MIN_PAIRS = 50_000_000
"""Above this many (paper, publication) pairs a venue is scored blockwise (bounded memory):
about a 2.5k-paper venue with 20k publications."""
DENSE_LIMIT_BYTES = 2 * 1024**3
"""Largest full (n_papers, n_reviewers) float32 score matrix a run keeps; above it only
each paper's and each reviewer's top pairs are kept."""
KEEP_PER_PAPER = 100
"""Reviewers kept per paper when the full matrix is not kept."""
KEEP_PER_REVIEWER = 50
"""Papers kept per reviewer when the full matrix is not kept."""
PAPER_BLOCK = 512
"""Papers scored together in one block by default (blockwise scoring, one Dask task)."""
PAPER_BLOCK_SCORES = 2**25
"""Scores (papers x reviewers) per block when a run sizes its paper blocks itself: ~128 MiB
of float32; fewer, larger blocks cost less top-K merging."""
PUBLICATION_BLOCK = 4096
"""Publications (of whole reviewers) compared with a paper block at once."""
BATCH_SIZE = 32
"""Texts per forward pass of the sentence encoder."""
MAX_BATCH_SIZE = 4096
MAX_WORKERS = 64
DEFAULT_WORKERS = max(1, min(4, os.cpu_count() or 1))
"""Term-counting processes when the environment does not say (``RECOMMENDER_WORKERS``)."""
DEVICES_PATTERN = re.compile(r"^(cpu|cuda(:\d{1,2})?|mps)$")

MODELS_ENV = "RECOMMENDER_MODELS"


@dataclass(frozen=True)
class RunOptions:
    """How to carry out a scoring run (see the module docstring).

    ``models``: extra embedding models by name, ``name -> local sentence-transformers
    directory``; :data:`~recommender.embeddings.DEFAULT_MODEL_NAME` always names the
    bundled all-MiniLM-L6-v2 and ``all-mpnet-base-v2`` the packaged MPNet
    (:mod:`recommender.packaged_models`) unless overridden here. ``cache_dir``: embedding cache and
    ONNX exports (None: embeddings are not cached). ``device``: ``cpu``, ``cuda[:N]`` or
    ``mps``; ``encoder_backend``: a :mod:`recommender.fast_encoder` backend (CPU).
    ``blockwise_min_pairs``, ``dense_limit_bytes``, ``keep_per_paper``,
    ``keep_per_reviewer``, ``paper_block`` (None: about :data:`PAPER_BLOCK_SCORES` scores
    per block, see :meth:`paper_block_for`) and ``publication_block``: the scoring path and
    what is kept (see :mod:`recommender.affinity.model`); ``keep_full_matrix=False``: a
    blockwise run keeps only each side's top pairs even when every pair would fit (enough
    for a top-K scores file, and lighter). ``workers``: processes that count TF-IDF terms
    on large venues (same vectors whatever the number). Invalid values raise ValueError.
    """

    models: Mapping[str, Path] = field(default_factory=dict)
    cache_dir: Path | None = None
    device: str = "cpu"
    encoder_backend: str = "auto"
    batch_size: int = BATCH_SIZE
    blockwise_min_pairs: int = BLOCKWISE_MIN_PAIRS
    dense_limit_bytes: int = DENSE_LIMIT_BYTES
    keep_per_paper: int = KEEP_PER_PAPER
    keep_per_reviewer: int = KEEP_PER_REVIEWER
    paper_block: int | None = None
    publication_block: int = PUBLICATION_BLOCK
    keep_full_matrix: bool = True
    workers: int = 1

    def __post_init__(self) -> None:
        problems = []
        models = {str(name): Path(path) for name, path in dict(self.models).items()}
        for name in models:
            if not re.match(MODEL_NAME_PATTERN, name) or len(name) > 100:
                problems.append(f"model name {name!r}: letters, digits, '.', '_', '-' only")
        object.__setattr__(self, "models", models)
        if self.cache_dir is not None:
            object.__setattr__(self, "cache_dir", Path(self.cache_dir))
        if not DEVICES_PATTERN.match(self.device):
            problems.append(f"device must be cpu, cuda[:N] or mps, got {self.device!r}")
        if self.encoder_backend not in BACKENDS:
            problems.append(
                f"encoder_backend must be one of {BACKENDS}, got {self.encoder_backend!r}"
            )
        if not 1 <= self.batch_size <= MAX_BATCH_SIZE:
            problems.append(f"batch_size must be in 1..{MAX_BATCH_SIZE}, got {self.batch_size}")
        for name in ("blockwise_min_pairs", "dense_limit_bytes"):
            if getattr(self, name) < 0:
                problems.append(f"{name} must be >= 0, got {getattr(self, name)}")
        if not 1 <= self.workers <= MAX_WORKERS:
            problems.append(f"workers must be in 1..{MAX_WORKERS}, got {self.workers}")
        if self.paper_block is not None and self.paper_block < 1:
            problems.append(f"paper_block must be >= 1, got {self.paper_block}")
        for name in ("keep_per_paper", "keep_per_reviewer", "publication_block"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be >= 1, got {getattr(self, name)}")
        if problems:
            raise ValueError("invalid run options: " + "; ".join(problems))

    def paper_block_for(self, n_reviewers: int) -> int:
        """Papers per block for a venue of ``n_reviewers``: ``paper_block`` if set, else
        about :data:`PAPER_BLOCK_SCORES` scores per block (64 to 8192 papers)."""
        if self.paper_block is not None:
            return self.paper_block
        return max(64, min(8192, PAPER_BLOCK_SCORES // max(n_reviewers, 1)))

    def model_names(self) -> list[str]:
        """Names a client may give as ``ScoringParams.model``: the configured models and
        the packaged ones (:mod:`recommender.packaged_models`; one whose packages are not
        installed fails when used, with the command that installs it)."""
        return sorted({DEFAULT_MODEL_NAME, *packaged_model_names(), *self.models})

    def model_path(self, name: str) -> Path:
        """The directory of the model called ``name``; ValueError naming the known ones
        (:class:`~recommender.packaged_models.ModelNotInstalledError`, a ValueError, with
        the install command for a packaged model that is not installed)."""
        if name in self.models:
            return self.models[name]
        if name == DEFAULT_MODEL_NAME:
            return default_model_path()
        if name in packaged_model_names():
            return packaged_model_path(name)
        raise ValueError(
            f"unknown embedding model {name!r}; this installation knows "
            f"{', '.join(self.model_names())}"
        )

    def resolved_model_path(self, name: str) -> Path | None:
        """:meth:`model_path` without assembling a packaged model: None while one is
        installed but not assembled yet (see
        :func:`recommender.packaged_models.assembled_model_path`)."""
        if name in packaged_model_names() and name not in self.models:
            return assembled_model_path(name)
        return self.model_path(name)

    def with_model_directory(self, path: str | os.PathLike[str]) -> tuple[RunOptions, str]:
        """Register a local model directory (command line); returns the options and the
        name it gets: the directory's name, made a valid model name."""
        directory = check_model_directory(path)
        name = re.sub(r"[^A-Za-z0-9._-]", "-", directory.name).lstrip("._-")[:100] or "model"
        return replace(self, models={**self.models, name: directory}), name

    def replace(self, **changes: Any) -> RunOptions:
        return replace(self, **changes)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> RunOptions:
        """Server/CLI options from the environment; a bad value raises ValueError naming
        the variable. ``RECOMMENDER_MODELS=name=/path,other=/path`` (each a local
        sentence-transformers directory, checked now), ``RECOMMENDER_CACHE_DIR``
        (default ``~/.cache/reviewer-recommender``; ``none`` disables the embedding cache),
        ``RECOMMENDER_DEVICE``, ``RECOMMENDER_ENCODER_BACKEND``, ``RECOMMENDER_BATCH_SIZE``,
        ``RECOMMENDER_DENSE_LIMIT_BYTES``, ``RECOMMENDER_BLOCKWISE_MIN_PAIRS``,
        ``RECOMMENDER_KEEP_PER_PAPER``, ``RECOMMENDER_KEEP_PER_REVIEWER``,
        ``RECOMMENDER_WORKERS`` (default: the CPU count, at most 4)."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        models: dict[str, Path] = {}
        for item in filter(None, (part.strip() for part in env.get(MODELS_ENV, "").split(","))):
            name, sep, path = item.partition("=")
            if not sep or not name.strip() or not path.strip():
                raise ValueError(f"${MODELS_ENV}: expected name=path, got {item!r}")
            try:
                models[name.strip()] = check_model_directory(path.strip())
            except ValueError as error:
                raise ValueError(f"${MODELS_ENV}: {name.strip()}: {error}") from None
        values["models"] = models
        values["workers"] = DEFAULT_WORKERS
        cache = env.get(CACHE_DIR_ENV, "").strip()
        if cache.lower() != "none":
            values["cache_dir"] = Path(cache).expanduser() if cache else default_cache_dir()
        numbers = {f.name: f.type for f in fields(cls)}
        for name in (
            "device",
            "encoder_backend",
            "batch_size",
            "dense_limit_bytes",
            "blockwise_min_pairs",
            "keep_per_paper",
            "keep_per_reviewer",
            "workers",
        ):
            variable = f"RECOMMENDER_{name.upper()}"
            if variable not in env:
                continue
            raw = env[variable].strip()
            if numbers[name] == "int":
                try:
                    values[name] = int(raw)
                except ValueError:
                    raise ValueError(f"${variable}: expected an integer, got {raw!r}") from None
            else:
                values[name] = raw
        try:
            return cls(**values)
        except ValueError as error:
            raise ValueError(f"environment: {error}") from None
