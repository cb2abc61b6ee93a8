"""Embedding profiler and cache, with the real bundled MiniLM on a handful of texts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from recommender.embeddings import (
    EmbeddingCache,
    ModelDirectoryError,
    check_model_directory,
    default_model_path,
    encode_sorted,
    load_model,
    model_identity,
)
from recommender.fast_encoder import has_bf16_units
from recommender.profiles import EmbeddingProfiler, LocalTextEncoder, TfidfProfiler

TEXTS = [
    "Graph neural networks for node classification.",
    "Speech recognition with acoustic models.",
    "A",
    "Graph neural networks for node classification.",  # duplicate
    "Reinforcement learning " * 200,  # longer than max_seq_length: truncated
]


def test_embeddings_normalised_ordered_and_match_plain_encode() -> None:
    profiler = EmbeddingProfiler(backend="torch")
    vectors = profiler.transform(TEXTS)
    assert vectors.dtype == np.float32 and vectors.shape == (5, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(vectors[0], vectors[3])
    plain = load_model().encode(TEXTS, normalize_embeddings=True)
    np.testing.assert_allclose(vectors, plain, atol=1e-5)
    assert profiler.n_encoded == 4  # the duplicate is encoded once


def test_default_backend_is_close_and_never_shares_cache_entries(tmp_path) -> None:
    cache = EmbeddingCache(tmp_path / "cache")
    plain = EmbeddingProfiler(cache=cache, backend="torch")
    fast = EmbeddingProfiler(cache=cache)  # auto: bf16 where the CPU has bf16 units
    expected = "torch-bf16" if has_bf16_units() else "torch"
    assert isinstance(fast.encoder, LocalTextEncoder) and fast.encoder.backend == expected
    assert (plain.identity != fast.identity) == (expected != "torch")
    assert plain.identity == model_identity(default_model_path())
    reference = plain.transform(TEXTS)
    vectors = fast.transform(TEXTS)
    cosine = (reference * vectors).sum(axis=1)
    assert cosine.min() > 0.995
    if expected != "torch":
        assert fast.n_encoded == 4  # nothing reused from the float32 entries
        assert len(cache) == 8
    with pytest.raises(ValueError, match="CPU only"):
        EmbeddingProfiler(device="cuda", backend="torch-bf16")


def test_cache_second_call_embeds_nothing_new(tmp_path) -> None:
    cache = EmbeddingCache(tmp_path / "cache")
    first = EmbeddingProfiler(cache=cache)
    a = first.transform(TEXTS[:2])
    assert first.n_encoded == 2 and cache.misses == 2 and len(cache) == 2
    second = EmbeddingProfiler(cache=EmbeddingCache(tmp_path / "cache"))
    b = second.transform(TEXTS[:3])
    assert second.n_encoded == 1  # only the new text
    assert second.cache is not None and second.cache.hits == 2
    np.testing.assert_allclose(a, b[:2])
    third = EmbeddingProfiler(cache=EmbeddingCache(tmp_path / "cache"))
    third.transform(list(reversed(TEXTS[:3])))
    assert third.n_encoded == 0


def test_cache_is_keyed_by_model_identity(tmp_path) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.put("model-a", {"k": np.ones(3, dtype=np.float32)})
    assert cache.get("model-b", ["k"]) == {}
    np.testing.assert_array_equal(cache.get("model-a", ["k"])["k"], np.ones(3))


def test_model_identity_changes_with_config(tmp_path) -> None:
    source = default_model_path()
    copy = tmp_path / "model"
    copy.mkdir()
    for name in ("modules.json", "config.json"):
        (copy / name).write_bytes((source / name).read_bytes())
    before = model_identity(copy)
    config = json.loads((copy / "config.json").read_text())
    config["hidden_dropout_prob"] = 0.5
    (copy / "config.json").write_text(json.dumps(config))
    assert model_identity(copy) != before
    assert model_identity(source) == model_identity(source)


def test_bad_model_directory_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(ModelDirectoryError, match="not a directory"):
        check_model_directory(tmp_path / "missing")
    with pytest.raises(ModelDirectoryError, match=r"no modules\.json"):
        EmbeddingProfiler(model_path=tmp_path).transform(["x"])


def test_encode_sorted_restores_input_order() -> None:
    model = load_model()
    texts = ["short", "a much longer text about graph neural networks and more", "mid length"]
    chunks = []
    vectors = encode_sorted(
        model,
        texts,
        batch_size=2,
        chunk_size=2,
        on_chunk=lambda index, v: chunks.append(list(index)),
    )
    assert sorted(i for c in chunks for i in c) == [0, 1, 2]
    assert chunks[0][0] == 1  # longest first
    for i, text in enumerate(texts):
        np.testing.assert_allclose(
            vectors[i], model.encode([text], normalize_embeddings=True)[0], atol=1e-5
        )


def test_tfidf_profiler_shapes_and_norms() -> None:
    profiler = TfidfProfiler().fit(TEXTS)
    matrix = profiler.transform(["graph classification", "", "unseenword"])
    assert matrix.shape == (3, len(profiler.terms)) and matrix.dtype == np.float32
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    np.testing.assert_allclose(norms, [1.0, 0.0, 0.0], rtol=1e-5)
    assert "the" not in set(profiler.terms)  # stop word
    assert not any(term.isdigit() for term in profiler.terms)
    with pytest.raises(RuntimeError, match="before fit"):
        TfidfProfiler().transform(["x"])
