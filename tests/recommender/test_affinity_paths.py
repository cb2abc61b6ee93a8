"""AffinityModel chooses dense or blockwise scoring; Affinity without the full matrix."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from recommender.affinity import (
    Affinity,
    AffinityModel,
    RunOptions,
    ScoringParams,
    compute_affinity,
)
from recommender.corpus import Publication, Reviewer, Submission
from recommender.profiles import TfidfProfiler

TOPICS = [
    "graph neural networks message passing node classification",
    "reinforcement learning policy gradient exploration reward",
    "protein structure prediction folding molecules",
    "speech recognition acoustic models transcription audio",
    "image segmentation convolutional vision pixels",
]


def corpus(
    n_reviewers: int = 12, n_papers: int = 14, seed: int = 0, empty_reviewer: bool = True
) -> tuple[list[Reviewer], list[Submission]]:
    rng = np.random.default_rng(seed)
    reviewers = []
    for r in range(n_reviewers):
        count = r % 4 if empty_reviewer else 1 + r % 3
        pubs = tuple(
            Publication(
                id=f"p{r}-{j}",
                title=TOPICS[(r + j) % 5].split()[0],
                abstract=" ".join(rng.permutation(TOPICS[(r + j * j) % 5].split())[:5]),
                year=2015 + j,
            )
            for j in range(count)
        )
        reviewers.append(Reviewer(id=f"~R{r}", publications=pubs))
    submissions = [
        Submission(
            id=f"s{i}",
            title="paper",
            abstract=" ".join(
                rng.permutation((TOPICS[i % 5] + " " + TOPICS[(i + 2) % 5]).split())[:7]
            ),
        )
        for i in range(n_papers)
    ]
    return reviewers, submissions


def union_top_k(scores: np.ndarray, k: int) -> set[tuple[int, int]]:
    """Naive reference: each row's and each column's top k (ties by index)."""
    pairs = set()
    for p in range(scores.shape[0]):
        order = sorted(range(scores.shape[1]), key=lambda r: (-scores[p, r], r))[:k]
        pairs.update((p, r) for r in order)
    for r in range(scores.shape[1]):
        order = sorted(range(scores.shape[0]), key=lambda p: (-scores[p, r], p))[:k]
        pairs.update((p, r) for p in order)
    return pairs


CONFIGS = [
    ScoringParams(method="tfidf", aggregation="max"),
    ScoringParams(method="tfidf", aggregation="topk", k=2, recency_half_life=3.0),
    ScoringParams(method="tfidf", aggregation="softmax", paper_centering=True),
    ScoringParams(method="combined"),
    ScoringParams(method="tfidf", aggregation="mean", recency_half_life=2.0),
    ScoringParams(method="combined", aggregation="mean", paper_centering=True),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.method}-{c.aggregation}")
def test_blockwise_above_threshold_equals_dense(config: ScoringParams) -> None:
    reviewers, submissions = corpus()
    dense_model = AffinityModel(config).fit(reviewers, submissions)
    assert not dense_model.uses_blockwise()  # 14 x 18 pairs < the default threshold
    dense = dense_model.affinity()
    always = RunOptions(blockwise_min_pairs=0)
    blockwise_model = AffinityModel(config, always).fit(reviewers, submissions)
    assert blockwise_model.uses_blockwise()
    blockwise = compute_affinity(reviewers, submissions, config, always)
    assert blockwise.is_dense and dense.scores is not None and blockwise.scores is not None
    np.testing.assert_allclose(blockwise.scores, dense.scores, rtol=0, atol=1e-5)
    assert blockwise.paper_ids == dense.paper_ids and blockwise.reviewer_ids == dense.reviewer_ids


@pytest.mark.parametrize(
    "config",
    [ScoringParams(method="tfidf", paper_centering=True), ScoringParams(method="combined")],
    ids=["tfidf-centred", "combined"],
)
def test_without_the_full_matrix_the_kept_pairs_are_exact(config: ScoringParams, tmp_path) -> None:
    reviewers, submissions = corpus()
    dense = compute_affinity(reviewers, submissions, config)
    assert dense.scores is not None
    small = RunOptions(dense_limit_bytes=0, keep_per_paper=3, keep_per_reviewer=2)
    model = AffinityModel(config, small).fit(reviewers, submissions)
    sparse = model.affinity()
    assert not sparse.is_dense and sparse.scores is None and sparse.kept is not None
    stored = sparse.kept.tocoo()
    pairs = set(zip(stored.row.tolist(), stored.col.tolist(), strict=True))
    assert len(pairs) == sparse.n_pairs
    np.testing.assert_allclose(stored.data, dense.scores[stored.row, stored.col], atol=1e-5)
    has_pubs = np.array([bool(r.publications) for r in reviewers])
    masked = np.where(has_pubs[None, :], dense.scores, -np.inf)
    expected = {(p, r) for p, r in union_top_k(masked, 2) if has_pubs[r]} | {
        (p, int(r))
        for p in range(len(submissions))
        for r in sorted(np.flatnonzero(has_pubs), key=lambda r: (-masked[p, r], r))[:3]
    }
    assert pairs == expected
    # Lookups: kept pairs exact, dropped ones NaN; rankings of kept pairs.
    p, r = next(iter(pairs))
    assert sparse.score(f"s{p}", f"R{r}") == pytest.approx(float(dense.scores[p, r]), abs=1e-5)
    dropped = next((p, r) for p in range(14) for r in range(12) if (p, r) not in pairs)
    assert math.isnan(sparse.score(f"s{dropped[0]}", f"~R{dropped[1]}"))
    best = dense.top_reviewers("s0", 3)
    got = sparse.top_reviewers("s0", 3)
    assert [name for name, _ in got] == [name for name, _ in best]
    assert [name for name, _ in sparse.top_papers("R1", 2)] == [
        name for name, _ in dense.top_papers("R1", 2)
    ]
    # Explanations still give the exact score of any pair.
    assert model.explain(f"s{dropped[0]}", f"R{dropped[1]}").score == pytest.approx(
        float(dense.scores[dropped]), abs=1e-5
    )
    # Output: the kept pairs, by paper then reviewer, same in chunks.
    frame = sparse.to_frame()
    assert len(frame) == len(pairs)
    assert list(frame.columns) == ["paper_id", "reviewer_id", "score"]
    whole, chunked = tmp_path / "whole.csv", tmp_path / "chunked.csv"
    sparse.write_csv(whole)
    sparse.write_csv(chunked, chunk_pairs=4)
    assert whole.read_text() == chunked.read_text()
    with whole.open() as stream:
        rows = list(csv.reader(stream))
    assert rows[0] == ["paper_id", "reviewer_id", "score"] and len(rows) == len(pairs) + 1
    with pytest.raises(ValueError, match="exceeds the 2 pairs"):
        sparse.write_csv(tmp_path / "x.csv", top_k=3)


def test_top_k_output_is_the_union_of_paper_and_reviewer_top_lists(tmp_path) -> None:
    reviewers, submissions = corpus(empty_reviewer=False)
    config = ScoringParams(method="tfidf")
    dense = compute_affinity(reviewers, submissions, config)
    assert dense.scores is not None
    expected = union_top_k(dense.scores, 2)
    for affinity in (
        dense,
        compute_affinity(reviewers, submissions, config, RunOptions(dense_limit_bytes=0)),
    ):
        frame = affinity.to_frame(top_k=2)
        got = {
            (int(p[1:]), int(r[1:]))
            for p, r in zip(frame["paper_id"], frame["reviewer_id"], strict=True)
        }
        assert got == expected
        assert len(frame) == len(expected)
        expected_scores = dense.scores[
            frame["paper_id"].str[1:].astype(int), frame["reviewer_id"].str[1:].astype(int)
        ]
        np.testing.assert_allclose(frame["score"], expected_scores, atol=1e-6)
    whole, chunked = tmp_path / "a.csv", tmp_path / "b.csv"
    dense.write_csv(whole)
    dense.write_csv(chunked, chunk_pairs=5)
    assert whole.read_text() == chunked.read_text()
    assert len(whole.read_text().splitlines()) == 1 + 14 * 12


def test_rank_normalisation_stays_dense_and_affinity_validates() -> None:
    reviewers, submissions = corpus(n_papers=3)
    always = RunOptions(blockwise_min_pairs=0)
    config = ScoringParams(method="tfidf", normalisation="rank")
    assert AffinityModel(config, always).fit(reviewers, submissions).uses_blockwise()  # affine
    combined = ScoringParams(method="combined", normalisation="rank")
    assert not AffinityModel(combined, always).fit(reviewers, submissions).uses_blockwise()
    with pytest.raises(ValueError, match="needs scores"):
        Affinity(("a",), ("b",), None)
    with pytest.raises(ValueError, match="encoder_backend must be one of"):
        RunOptions(encoder_backend="gpu")
    with pytest.raises(ValueError, match="keep_per_paper"):
        RunOptions(keep_per_paper=0)


def test_tfidf_fit_transform_tokenises_once_with_the_same_vectors() -> None:
    reviewers, submissions = corpus()
    texts = [p.text for r in reviewers for p in r.publications] + [s.text for s in submissions]
    once = TfidfProfiler().fit_transform(texts)
    twice = TfidfProfiler().fit(texts).transform(texts)
    assert once.dtype == np.float32 and once.shape == twice.shape
    np.testing.assert_array_equal(once.toarray(), twice.toarray())
    assert TfidfProfiler().fit_transform(["the of and"]).shape == (1, 0)
