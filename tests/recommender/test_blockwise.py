"""Blockwise affinity == the dense reference (kept entries), incremental == full recompute."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
import scipy.sparse as sp

from recommender.affinity import AffinityModel, RunOptions, ScoringParams
from recommender.affinity.block_plan import offsets_from_owner, reviewer_blocks
from recommender.affinity.block_scoring import SparseAffinity
from recommender.affinity.blockwise import (
    add_papers,
    add_reviewers,
    blockwise_affinity,
    dense_affinity,
)
from recommender.affinity.similarity import Channel

N_PAPERS, N_REVIEWERS = 37, 23


def _unit_rows(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


def _offsets(rng: np.random.Generator, n_reviewers: int) -> npt.NDArray[np.int64]:
    counts = rng.integers(0, 6, size=n_reviewers)
    counts[0] = 0  # a reviewer without publications
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def _dense_inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    offsets = _offsets(rng, N_REVIEWERS)
    papers = _unit_rows(rng.normal(size=(N_PAPERS, 16)).astype(np.float32))
    pubs = _unit_rows(rng.normal(size=(int(offsets[-1]), 16)).astype(np.float32))
    return papers, pubs, offsets


def _sparse_inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    offsets = _offsets(rng, N_REVIEWERS)
    n_terms = 60
    # A few very common columns (head) and a long rare tail, like TF-IDF.
    frequency = np.r_[np.full(5, 0.8), np.full(n_terms - 5, 0.08)]

    def draw(n: int) -> sp.csr_matrix:
        mask = rng.random((n, n_terms)) < frequency
        mask[:, -1] |= ~mask.any(axis=1)
        values = np.where(mask, rng.random((n, n_terms)), 0.0).astype(np.float32)
        return sp.csr_matrix(_unit_rows(values))

    return draw(N_PAPERS), draw(int(offsets[-1])), offsets


def _full_top_k(values: npt.NDArray[np.float32], k: int) -> list[list[int]]:
    """Reference top-k by value desc then index asc, with python sorting."""
    return [
        [int(j) for j in sorted(np.flatnonzero(np.isfinite(row)), key=lambda j: (-row[j], j))[:k]]
        for row in values
    ]


def _check_against_dense(result: SparseAffinity, reference: npt.NDArray[np.float32]) -> None:
    masked = reference.copy()
    masked[:, result.empty_reviewers] = -np.inf
    expected_paper = _full_top_k(masked, result.k_per_paper)
    expected_reviewer = _full_top_k(masked.T, result.k_per_reviewer)
    for p, expected in enumerate(expected_paper):
        got = [int(j) for j in result.by_paper.indices[p] if j >= 0]
        assert got == expected, f"paper {p}"
        np.testing.assert_allclose(
            result.by_paper.values[p, : len(got)], reference[p, got], rtol=0, atol=2e-6
        )
    for r, expected in enumerate(expected_reviewer):
        got = [int(i) for i in result.by_reviewer.indices[r] if i >= 0]
        assert got == expected, f"reviewer {r}"
        np.testing.assert_allclose(
            result.by_reviewer.values[r, : len(got)], reference[got, r], rtol=0, atol=2e-6
        )


CONFIGS = [
    ScoringParams(method="tfidf", aggregation="max"),
    ScoringParams(method="tfidf", aggregation="mean"),
    ScoringParams(method="tfidf", aggregation="topk", k=2),
    ScoringParams(method="tfidf", aggregation="softmax", temperature=0.3),
    ScoringParams(method="tfidf", aggregation="topk", k=3, paper_centering=True),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.aggregation}-{c.paper_centering}")
@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_blockwise_equals_dense_reference(config: ScoringParams, kind: str) -> None:
    papers, pubs, offsets = _dense_inputs(1) if kind == "dense" else _sparse_inputs(1)
    weights = np.random.default_rng(5).uniform(0.3, 1.0, size=int(offsets[-1]))
    reference = dense_affinity(papers, pubs, offsets, params=config, publication_weights=weights)
    result = blockwise_affinity(
        papers,
        pubs,
        offsets,
        params=config,
        publication_weights=weights,
        k_per_paper=4,
        k_per_reviewer=3,
        paper_block=8,
        publication_block=7,
        keep_dense=True,
    )
    _check_against_dense(result, reference)
    np.testing.assert_allclose(result.dense_scores(), reference, rtol=0, atol=2e-6)


def test_sparse_head_tail_split_is_used_and_exact() -> None:
    papers, pubs, offsets = _sparse_inputs(2)
    config = ScoringParams(method="tfidf", aggregation="max")
    result = blockwise_affinity(
        papers,
        pubs,
        offsets,
        params=config,
        k_per_paper=5,
        k_per_reviewer=5,
        paper_block=5,
        publication_block=9,
        keep_dense=True,
    )
    reference = dense_affinity(papers, pubs, offsets, params=config)
    np.testing.assert_allclose(result.dense_scores(), reference, rtol=0, atol=2e-6)
    from recommender.affinity.block_plan import plan_blockwise

    plan = plan_blockwise([Channel(papers, pubs)], offsets, params=config)
    head = plan.channels[0].head
    assert head is not None and 0 < head.size < papers.shape[1]


def test_channels_mix_and_minmax_scaling() -> None:
    papers, pubs, offsets = _dense_inputs(3)
    sparse_papers, sparse_pubs, _ = _sparse_inputs(3)
    assert sparse_pubs.shape[0] == pubs.shape[0]  # same seed: same offsets
    channels = [Channel(papers, pubs, 0.7), Channel(sparse_papers, sparse_pubs, 0.3)]
    config = ScoringParams(method="combined", aggregation="topk", k=2)
    reference = dense_affinity(channels, None, offsets, params=config, intercept=-0.2)
    result = blockwise_affinity(
        channels,
        None,
        offsets,
        params=config,
        intercept=-0.2,
        k_per_paper=3,
        k_per_reviewer=2,
        paper_block=6,
        publication_block=5,
        keep_dense=True,
    )
    _check_against_dense(result, reference)
    valid = reference[:, ~result.empty_reviewers]
    assert result.value_range == pytest.approx((valid.min(), valid.max()), abs=2e-6)
    scaled = result.dense_scores()
    assert scaled[:, ~result.empty_reviewers].min() == pytest.approx(0.0, abs=1e-6)
    assert scaled.max() == pytest.approx(1.0, abs=1e-6)


def test_blockwise_from_model_matches_model_affinity() -> None:
    from recommender.corpus import Publication, Reviewer, Submission

    topics = [
        "graph neural networks message passing node classification",
        "reinforcement learning policy gradient exploration reward",
        "protein structure prediction folding molecules",
        "speech recognition acoustic models transcription audio",
    ]
    rng = np.random.default_rng(0)
    reviewers = []
    for r in range(9):
        pubs = tuple(
            Publication(
                id=f"p{r}-{j}",
                title=topics[(r + j) % 4].split()[0],
                abstract=" ".join(rng.permutation(topics[(r + j * j) % 4].split())),
                year=2015 + j,
            )
            for j in range(r % 4)
        )
        reviewers.append(Reviewer(id=f"r{r}", publications=pubs))
    submissions = [
        Submission(
            id=f"s{i}",
            title="paper",
            abstract=" ".join(
                rng.permutation((topics[i % 4] + " " + topics[(i + 1) % 4]).split())[:7]
            ),
        )
        for i in range(11)
    ]
    config = ScoringParams(method="tfidf", aggregation="topk", k=2, recency_half_life=3.0)
    model = AffinityModel(config).fit(reviewers, submissions)
    expected = model.affinity().scores
    assert expected is not None
    options = {**model.blockwise_options(), "paper_block": 4, "publication_block": 3}
    result = blockwise_affinity(**options)
    np.testing.assert_allclose(result.dense_scores(), expected, rtol=0, atol=2e-6)
    small = RunOptions(blockwise_min_pairs=0, paper_block=4, publication_block=3)
    blockwise_model = AffinityModel(config, small).fit(reviewers, submissions)
    assert blockwise_model.uses_blockwise()
    again = blockwise_model.affinity().scores
    assert again is not None
    np.testing.assert_allclose(again, expected, rtol=0, atol=2e-6)


def test_offsets_and_reviewer_blocks() -> None:
    offsets = offsets_from_owner([0, 0, 2, 2, 2, 3], 5)
    assert offsets.tolist() == [0, 2, 2, 5, 6, 6]
    with pytest.raises(ValueError, match="sorted"):
        offsets_from_owner([1, 0], 2)
    blocks = reviewer_blocks(np.array([0, 3, 3, 10, 11]), 4)
    assert blocks == [(0, 2), (2, 3), (3, 4)]


def test_bad_inputs_raise_clear_errors() -> None:
    papers, pubs, offsets = _dense_inputs(0)
    with pytest.raises(ValueError, match="publication vectors but offsets cover"):
        blockwise_affinity(papers, pubs[:-1], offsets)
    with pytest.raises(ValueError, match="paper dim"):
        blockwise_affinity(papers[:, :5], pubs, offsets)


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_incremental_updates_equal_full_recompute(kind: str) -> None:
    papers, pubs, offsets = _dense_inputs(4) if kind == "dense" else _sparse_inputs(4)
    # combined: the global min-max range must merge too (the channel is any vectors)
    config = ScoringParams(method="combined", aggregation="topk", k=2)
    options: dict[str, Any] = {"params": config, "paper_block": 6, "publication_block": 8}
    full = blockwise_affinity(
        papers,
        pubs,
        offsets,
        k_per_paper=4,
        k_per_reviewer=3,
        keep_dense=True,
        **options,
    )
    # Papers: first 30, then the remaining 7.
    head = blockwise_affinity(
        papers[:30],
        pubs,
        offsets,
        k_per_paper=4,
        k_per_reviewer=3,
        keep_dense=True,
        **options,
    )
    grown = add_papers(head, [Channel(papers[30:], pubs)], offsets, **options)
    # Reviewers: first 15, then the remaining 8.
    split = int(offsets[15])
    left = blockwise_affinity(
        papers,
        pubs[:split],
        offsets[:16],
        k_per_paper=4,
        k_per_reviewer=3,
        keep_dense=True,
        **options,
    )
    widened = add_reviewers(left, [Channel(papers, pubs[split:])], offsets[15:] - split, **options)
    for updated in (grown, widened):
        assert updated.n_papers == full.n_papers and updated.n_reviewers == full.n_reviewers
        np.testing.assert_array_equal(updated.by_paper.indices, full.by_paper.indices)
        np.testing.assert_array_equal(updated.by_reviewer.indices, full.by_reviewer.indices)
        np.testing.assert_allclose(updated.by_paper.values, full.by_paper.values, atol=2e-6)
        np.testing.assert_allclose(updated.dense_scores(), full.dense_scores(), atol=2e-6)
        assert updated.value_range == pytest.approx(full.value_range, abs=2e-6)
        r1, c1, v1 = updated.candidates()
        r2, c2, v2 = full.candidates()
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(c1, c2)
        np.testing.assert_allclose(v1, v2, atol=2e-6)


def test_add_reviewers_refuses_paper_centering() -> None:
    papers, pubs, offsets = _dense_inputs(0)
    config = ScoringParams(method="tfidf", aggregation="max", paper_centering=True)
    result = blockwise_affinity(papers, pubs, offsets, params=config)
    with pytest.raises(ValueError, match="paper_centering"):
        add_reviewers(result, [Channel(papers, pubs)], offsets, params=config)


def test_candidates_and_csr_are_the_union() -> None:
    papers, pubs, offsets = _dense_inputs(6)
    result = blockwise_affinity(
        papers,
        pubs,
        offsets,
        params=ScoringParams(method="embedding", aggregation="max"),
        k_per_paper=2,
        k_per_reviewer=2,
        keep_dense=False,
    )
    assert result.dense is None
    rows, cols, _ = result.candidates()
    csr = result.to_csr()
    assert csr.nnz == rows.size
    expected = {(p, int(r)) for p in range(N_PAPERS) for r in result.by_paper.indices[p] if r >= 0}
    expected |= {
        (int(p), r) for r in range(N_REVIEWERS) for p in result.by_reviewer.indices[r] if p >= 0
    }
    assert set(zip(rows.tolist(), cols.tolist(), strict=True)) == expected
    assert not np.isin(cols, np.flatnonzero(result.empty_reviewers)).any()
    with pytest.raises(ValueError, match="not kept"):
        result.dense_scores()


@pytest.mark.parametrize("aggregation", ["max", "mean", "topk"])
def test_equal_profile_fast_paths_match_aggregate_bitwise(aggregation: str) -> None:
    rng = np.random.default_rng(7)
    offsets = np.arange(0, 12 * 5 + 1, 5)
    papers = _unit_rows(rng.normal(size=(9, 8)).astype(np.float32))
    pubs = _unit_rows(rng.normal(size=(60, 8)).astype(np.float32))
    config = ScoringParams(method="embedding", aggregation=aggregation, k=3)
    result = blockwise_affinity(
        papers, pubs, offsets, params=config, paper_block=4, publication_block=20, keep_dense=True
    )
    from recommender.affinity.aggregation import aggregate

    similarity = np.zeros((9, 60), dtype=np.float32)
    # the same GEMM blocks as the blockwise run, papers and publications alike: BLAS may pick
    # another kernel (and rounding) for another block shape
    for p0 in range(0, 9, 4):
        for r0 in range(0, 60, 20):
            similarity[p0 : p0 + 4, r0 : r0 + 20] = papers[p0 : p0 + 4] @ np.ascontiguousarray(
                pubs[r0 : r0 + 20].T
            )
    expected = aggregate(similarity, offsets, config)
    np.testing.assert_array_equal(result.dense_scores(), expected)
