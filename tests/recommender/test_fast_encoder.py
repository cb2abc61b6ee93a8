"""Fast encoder backends agree with the float32 sentence-transformers model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from recommender.embeddings import default_model_path, load_model
from recommender.fast_encoder import (
    FastEncoder,
    choose_backend,
    export_onnx,
    has_bf16_units,
    onnx_export_dir,
)

TEXTS = [
    "Graph neural networks for molecular property prediction with message passing.",
    "We study policy gradient methods for reinforcement learning with sparse rewards.",
    "A short one.",
    "Speech recognition with self-supervised acoustic representations learned from "
    "unlabelled audio, evaluated on low-resource languages and noisy conditions.",
    "Protein structure prediction from sequence using attention over residue pairs.",
    "",
]


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    model = load_model(default_model_path())
    return model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("encoder-cache")


@pytest.mark.parametrize(
    ("backend", "min_cosine"),
    [("torch", 0.99999), ("torch-bf16", 0.99), ("onnx", 0.99999), ("onnx-int8", 0.98)],
)
def test_backend_matches_fp32(
    backend: str, min_cosine: float, reference: np.ndarray, cache_dir: Path
) -> None:
    encoder = FastEncoder(backend=backend, cache_dir=cache_dir, batch_size=4)
    vectors = encoder.encode(TEXTS)
    assert vectors.dtype == np.float32 and vectors.shape == reference.shape
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosine = (vectors * reference).sum(axis=1)
    assert cosine[:-1].min() > min_cosine, cosine
    # The empty text is only [CLS] [SEP]: int8 rounding weighs more there (0.977 measured).
    assert cosine[-1] > min_cosine - 0.01, cosine
    # Rows come back in input order even though batches are length-sorted.
    assert int(np.argmax(vectors[1] @ reference.T)) == 1


def test_onnx_export_is_cached_and_atomic(cache_dir: Path) -> None:
    first = export_onnx(default_model_path(), cache_dir)
    assert first == onnx_export_dir(default_model_path(), cache_dir)
    assert {"model.onnx", "model_int8.onnx", "export.json"} <= {p.name for p in first.iterdir()}
    stamp = (first / "model_int8.onnx").stat().st_mtime_ns
    assert export_onnx(default_model_path(), cache_dir) == first
    assert (first / "model_int8.onnx").stat().st_mtime_ns == stamp
    leftovers = [p for p in first.parent.iterdir() if p.name.startswith(".")]
    assert leftovers == []


def test_identity_differs_per_backend_and_empty_input(cache_dir: Path) -> None:
    plain = FastEncoder(backend="torch", cache_dir=cache_dir)
    quantised = FastEncoder(backend="onnx-int8", cache_dir=cache_dir)
    assert plain.identity != quantised.identity
    assert quantised.encode([]).shape == (0, 384)


def test_bad_backend_and_auto() -> None:
    with pytest.raises(ValueError, match="backend must be one of"):
        choose_backend("tpu")
    assert choose_backend("auto") == ("torch-bf16" if has_bf16_units() else "torch")


def test_unsupported_architecture_is_refused(tmp_path: Path) -> None:
    import shutil

    model = tmp_path / "model"
    shutil.copytree(default_model_path(), model)
    modules = (model / "modules.json").read_text()
    (model / "modules.json").write_text(modules.replace("models.Normalize", "models.Dense"))
    with pytest.raises(ValueError, match="Transformer \\+ Pooling"):
        export_onnx(model, tmp_path / "cache")
