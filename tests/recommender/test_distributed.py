"""The Dask path gives the same results as the single-process path."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from recommender.affinity import RunOptions, ScoringParams
from recommender.affinity.blockwise import blockwise_affinity
from recommender.distributed import (
    dask_blockwise_affinity,
    dask_client,
    dask_encode,
    encode_in_chunks,
    length_sorted_chunks,
)


def _inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 5, size=19)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    dense = rng.random((int(offsets[-1]), 40)) * (rng.random((int(offsets[-1]), 40)) < 0.3)
    papers = rng.random((29, 40)) * (rng.random((29, 40)) < 0.3)
    return sp.csr_matrix(papers, dtype=np.float32), sp.csr_matrix(dense, dtype=np.float32), offsets


@pytest.fixture(scope="module")
def thread_client():
    with dask_client(n_workers=1, threads_per_worker=2, processes=False) as client:
        yield client


def test_dask_blockwise_equals_local(thread_client) -> None:
    papers, pubs, offsets = _inputs(1)
    config = ScoringParams(method="tfidf", aggregation="topk", k=2)
    options: dict[str, Any] = {
        "params": config,
        "k_per_paper": 3,
        "k_per_reviewer": 4,
        "paper_block": 4,
        "publication_block": 6,
        "keep_dense": True,
    }
    local = blockwise_affinity(papers, pubs, offsets, **options)
    seen: list[tuple[float, str]] = []
    remote = dask_blockwise_affinity(
        papers,
        pubs,
        offsets,
        client=thread_client,
        progress=lambda f, s: seen.append((f, s)),
        **options,
    )
    for field in ("by_paper", "by_reviewer"):
        np.testing.assert_array_equal(getattr(remote, field).indices, getattr(local, field).indices)
        np.testing.assert_array_equal(getattr(remote, field).values, getattr(local, field).values)
    np.testing.assert_array_equal(remote.dense_scores(), local.dense_scores())
    assert seen[-1][0] == pytest.approx(1.0)
    assert [f for f, _ in seen] == sorted(f for f, _ in seen)


def test_dask_blockwise_on_local_processes() -> None:
    papers, pubs, offsets = _inputs(2)
    config = ScoringParams(method="tfidf", aggregation="max")
    options: dict[str, Any] = {
        "params": config,
        "k_per_paper": 2,
        "k_per_reviewer": 2,
        "paper_block": 8,
    }
    local = blockwise_affinity(papers, pubs, offsets, **options)
    remote = dask_blockwise_affinity(
        papers, pubs, offsets, n_workers=2, threads_per_worker=1, **options
    )
    np.testing.assert_array_equal(remote.by_paper.indices, local.by_paper.indices)
    np.testing.assert_array_equal(remote.by_reviewer.values, local.by_reviewer.values)


def test_dask_encode_equals_local_chunks(thread_client) -> None:
    texts = [
        f"text number {i} about {'graphs' if i % 2 else 'speech'} " * (1 + i % 4) for i in range(11)
    ]
    local = encode_in_chunks(texts, backend="torch", chunk_size=4)
    remote = dask_encode(texts, client=thread_client, backend="torch", chunk_size=4)
    assert remote.shape == (11, 384)
    np.testing.assert_allclose(remote, local, rtol=0, atol=1e-6)
    assert dask_encode([], client=thread_client, backend="torch").shape == (0, 384)


def test_length_sorted_chunks_cover_everything_once() -> None:
    chunks = length_sorted_chunks(["a", "ccc", "bb", "dddd", ""], 2)
    assert [c.tolist() for c in chunks] == [[3, 1], [2, 0], [4]]
    with pytest.raises(ValueError, match="chunk_size"):
        length_sorted_chunks(["a"], 0)


def test_dask_model_affinity_equals_model_affinity() -> None:
    from recommender.affinity import AffinityModel
    from recommender.corpus import Publication, Reviewer, Submission
    from recommender.distributed import dask_model_affinity

    words = ["graph", "speech", "vision", "protein", "policy", "reward", "pixels", "audio"]
    rng = np.random.default_rng(4)
    reviewers = [
        Reviewer(
            id=f"r{r}",
            publications=tuple(
                Publication(id=f"r{r}-{j}", title=" ".join(rng.choice(words, 4)), abstract="")
                for j in range(r % 3)
            ),
        )
        for r in range(8)
    ]
    submissions = [
        Submission(id=f"s{i}", title=" ".join(rng.choice(words, 5)), abstract="") for i in range(9)
    ]
    config = ScoringParams(method="tfidf", aggregation="topk", k=2, paper_centering=True)
    model = AffinityModel(config).fit(reviewers, submissions)
    local = model.affinity()
    remote = dask_model_affinity(model, n_workers=1, processes=False, paper_block=4)
    assert remote.scores is not None and local.scores is not None
    np.testing.assert_allclose(remote.scores, local.scores, rtol=0, atol=1e-6)
    sparse_model = AffinityModel(config, RunOptions(dense_limit_bytes=0, keep_per_paper=2)).fit(
        reviewers, submissions
    )
    sparse_local = sparse_model.affinity()
    sparse_remote = dask_model_affinity(sparse_model, n_workers=1, processes=False)
    assert sparse_remote.kept is not None and sparse_local.kept is not None
    assert (sparse_remote.kept != sparse_local.kept).nnz == 0
    assert sparse_remote.to_frame().equals(sparse_local.to_frame())


def test_dask_text_encoder_gives_the_local_vectors(thread_client, tmp_path) -> None:
    from recommender.distributed import DaskTextEncoder
    from recommender.embeddings import EmbeddingCache
    from recommender.profiles import EmbeddingProfiler, LocalTextEncoder

    texts = [f"{'graphs' if i % 3 else 'speech'} text {i} " * (1 + i % 5) for i in range(13)]
    local = EmbeddingProfiler(encoder=LocalTextEncoder(backend="torch", chunk_size=4))
    remote_encoder = DaskTextEncoder(thread_client, backend="torch", chunk_size=4, in_flight=2)
    assert remote_encoder.identity == local.identity  # the same cache entries
    seen: list[float] = []
    cache = EmbeddingCache(tmp_path / "cache")
    remote = EmbeddingProfiler(cache=cache, encoder=remote_encoder).transform(
        texts, progress=lambda fraction, stage: seen.append(fraction)
    )
    np.testing.assert_allclose(remote, local.transform(texts), rtol=0, atol=1e-6)
    # the start, then 4 chunks
    assert seen == sorted(seen) and seen[0] == 0.0 and seen[-1] == 1.0 and len(seen) == 5
    assert len(cache) == 13


def test_dask_score_embeds_and_scores_like_the_local_run(thread_client, tmp_path) -> None:
    from recommender.affinity import compute_affinity
    from recommender.corpus import Publication, Reviewer, Submission
    from recommender.distributed import dask_score

    words = ["graph", "speech", "vision", "protein", "policy", "reward", "pixels", "audio"]
    rng = np.random.default_rng(5)
    reviewers = [
        Reviewer(
            id=f"r{r}",
            publications=tuple(
                Publication(id=f"r{r}-{j}", title=" ".join(rng.choice(words, 4)), abstract="")
                for j in range(1 + r % 3)
            ),
        )
        for r in range(6)
    ]
    submissions = [
        Submission(id=f"s{i}", title=" ".join(rng.choice(words, 5)), abstract="") for i in range(7)
    ]
    params = ScoringParams(aggregation="topk", k=2, model="all-MiniLM-L6-v2")
    options = RunOptions(cache_dir=tmp_path / "remote", blockwise_min_pairs=0, paper_block=3)
    model, remote = dask_score(reviewers, submissions, params, options, client=thread_client)
    assert model.embedder_ is not None and model.embedder_.n_encoded == 6 * 2 + 7
    local = compute_affinity(
        reviewers, submissions, params, RunOptions(cache_dir=tmp_path / "local")
    )
    assert remote.scores is not None and local.scores is not None
    np.testing.assert_allclose(remote.scores, local.scores, rtol=0, atol=2e-5)


def test_parallel_tfidf_counting_gives_the_same_vectors(monkeypatch) -> None:
    import recommender.profiles as profiles

    rng = np.random.default_rng(0)
    words = np.array(["graph", "speech", "Vision", "prötein", "policy", "reward", "x1", "the"])
    texts = [" ".join(rng.choice(words, 12)) + f" doc{i % 7}" for i in range(60)]
    monkeypatch.setattr(profiles, "PARALLEL_MIN_TEXTS", 10)
    for ngrams in ((1, 1), (1, 2)):
        one = profiles.TfidfProfiler(ngram_range=ngrams)
        vectors = one.fit_transform(texts)
        three = profiles.TfidfProfiler(ngram_range=ngrams, workers=3)
        parallel = three.fit_transform(texts)
        assert list(three.terms) == list(one.terms)
        for part in ("indptr", "indices", "data"):
            np.testing.assert_array_equal(getattr(parallel, part), getattr(vectors, part))
