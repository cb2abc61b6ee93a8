"""Honest progress and cancel points: fractions of texts embedded and of papers scored, and
a progress callback that raises stops the work between batches."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from recommender.affinity import AffinityModel, RunOptions, ScoringParams, compute_affinity
from recommender.corpus import Publication, Reviewer, Submission
from recommender.embeddings import EmbeddingCache
from recommender.packaged_models import MINILM_NAME
from recommender.profiles import EmbeddingProfiler, LocalTextEncoder
from recommender.progress import ProgressStage, TextProgress

TOPICS = ["graph neural networks", "speech recognition", "protein folding", "policy gradients"]


class Stop(Exception):
    pass


def venue(n_reviewers: int = 6, n_papers: int = 9) -> tuple[list[Reviewer], list[Submission]]:
    reviewers = [
        Reviewer(
            f"r{r}",
            publications=tuple(
                Publication(f"r{r}-{j}", f"{TOPICS[(r + j) % 4]} study {r} {j}", "", 2020)
                for j in range(1 + r % 3)
            ),
        )
        for r in range(n_reviewers)
    ]
    submissions = [Submission(f"s{i}", f"{TOPICS[i % 4]} paper {i}", "") for i in range(n_papers)]
    return reviewers, submissions


def _recorder(
    stop_after: float | None = None,
) -> tuple[list[tuple[float, str]], Callable[[float, str], None]]:
    seen: list[tuple[float, str]] = []

    def progress(fraction: float, stage: str) -> None:
        seen.append((fraction, stage))
        if stop_after is not None and fraction >= stop_after:
            raise Stop

    return seen, progress


def test_embedding_progress_counts_texts_and_cancel_keeps_finished_chunks(tmp_path) -> None:
    texts = [f"{TOPICS[i % 4]} number {i}" for i in range(7)]
    cache = EmbeddingCache(tmp_path / "cache")
    profiler = EmbeddingProfiler(
        cache=cache, encoder=LocalTextEncoder(backend="torch", chunk_size=2)
    )
    seen, progress = _recorder(stop_after=0.5)
    with pytest.raises(Stop):
        profiler.transform(texts, progress=progress)
    # chunks are sized from the measured rate (at most chunk_size=2 texts each)
    fractions = [f for f, _ in seen]
    assert fractions[0] == 0.0 and fractions == sorted(fractions) and fractions[-1] >= 0.5
    assert seen[0][1] == "embedding 0 / 7 texts"
    last = seen[-1][1]
    assert isinstance(last, ProgressStage)
    detail = last.detail  # the numbers travel with the text
    assert isinstance(detail, TextProgress)
    done = detail.texts_done
    assert detail.texts_total == 7 and done in (4, 5)
    assert seen[-1][1].startswith(f"embedding {done} / 7 texts, ")
    assert "texts/s, about " in seen[-1][1]
    assert (detail.texts_per_second or 0) > 0 and (detail.eta_seconds or 0) > 0
    assert len(cache) == done  # the chunks done before the cancel are kept
    seen, progress = _recorder()
    vectors = EmbeddingProfiler(
        cache=cache, encoder=LocalTextEncoder(backend="torch", chunk_size=2)
    ).transform(texts, progress=progress)
    assert vectors.shape == (7, 384)
    details = [stage.detail for _, stage in seen if isinstance(stage, ProgressStage)]
    counts = [d.texts_done for d in details if isinstance(d, TextProgress)]
    assert len(counts) == len(seen)
    assert counts[0] == 0 and counts[-1] == 7 - done and counts == sorted(counts)
    assert seen[-1][1].split(",")[0] == f"embedding {7 - done} / {7 - done} texts"


def test_fully_cached_texts_never_load_the_encoder(tmp_path, monkeypatch) -> None:
    texts = ["graph neural networks", "speech recognition"]
    cache = EmbeddingCache(tmp_path / "cache")
    EmbeddingProfiler(cache=cache, backend="torch").transform(texts)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the encoder was loaded although every text is cached")

    monkeypatch.setattr("recommender.fast_encoder.FastEncoder._load", refuse)
    monkeypatch.setattr("recommender.profiles.load_model", refuse)
    again = EmbeddingProfiler(cache=cache, backend="torch").transform(texts)
    assert again.shape == (2, 384)


@pytest.mark.parametrize("blockwise", [False, True])
def test_scoring_progress_is_monotone_and_a_raise_cancels(blockwise: bool, monkeypatch) -> None:
    monkeypatch.setattr("recommender.progress.REPORT_SECONDS", 0.0)  # every block reports
    reviewers, submissions = venue(n_papers=9)
    options = RunOptions(blockwise_min_pairs=0 if blockwise else 10**9, paper_block=2)
    model = AffinityModel(ScoringParams(method="tfidf"), options).fit(reviewers, submissions)
    seen, progress = _recorder()
    model.affinity(progress=progress)
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0)
    assert any(stage.startswith("scoring 9 / 9 papers, ") for _, stage in seen)
    seen, progress = _recorder(stop_after=0.4)
    with pytest.raises(Stop):
        model.affinity(progress=progress)
    if blockwise:  # stopped between paper blocks (the dense path here is one chunk)
        assert seen[-1][0] < 1.0


def test_compute_affinity_reports_one_monotone_progress(tmp_path) -> None:
    reviewers, submissions = venue()
    seen, progress = _recorder()
    affinity = compute_affinity(
        reviewers,
        submissions,
        ScoringParams(model=MINILM_NAME),
        RunOptions(cache_dir=tmp_path / "cache"),
        progress=progress,
    )
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    stages = " | ".join(stage for _, stage in seen)
    assert (
        "fitting TF-IDF" in stages
        and "embedding 21 / 21 texts" in stages
        and "scoring 9 / 9 papers" in stages
    )
    assert affinity.scores is not None and np.isfinite(affinity.scores).all()
