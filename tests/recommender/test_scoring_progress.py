"""Scoring reports its progress in numbers (papers done/total, papers/s, time left) as
publication blocks finish, time-throttled, through the same callback as embedding."""

from __future__ import annotations

import numpy as np
import pytest

from recommender.affinity.blockwise import blockwise_affinity, dense_affinity
from recommender.progress import ProgressStage, ScoringMeter, ScoringProgress


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _vectors(n_papers: int, n_reviewers: int, per_reviewer: int, dim: int = 8):
    rng = np.random.default_rng(3)
    papers = rng.normal(size=(n_papers, dim)).astype(np.float32)
    pubs = rng.normal(size=(n_reviewers * per_reviewer, dim)).astype(np.float32)
    offsets = np.arange(0, n_reviewers * per_reviewer + 1, per_reviewer)
    return papers, pubs, offsets


def test_blockwise_reports_every_publication_block_with_increasing_fractions() -> None:
    papers, pubs, offsets = _vectors(n_papers=7, n_reviewers=4, per_reviewer=2)
    seen: list[tuple[float, str]] = []
    result = blockwise_affinity(
        papers,
        pubs,
        offsets,
        paper_block=3,  # 3 paper blocks: 3 + 3 + 1 papers
        publication_block=4,  # 2 publication blocks of 2 reviewers
        keep_dense=True,
        progress=lambda fraction, stage: seen.append((fraction, stage)),
        progress_every=0.0,  # no throttle: every piece of work reports
    )
    # preparing, the start, (2 publication blocks + the block's end) x 3 paper blocks, done
    assert len(seen) == 1 + 1 + 3 * (2 + 1) + 1
    scoring = [(f, s) for f, s in seen if isinstance(s, ProgressStage)]
    assert len(scoring) == 1 + 3 * 3
    fractions = [f for f, _ in scoring]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    # within a paper block the fraction moves with its publication blocks: 1.5 of 7 papers
    assert fractions[1] == pytest.approx(1.5 / 7)
    assert len(set(fractions)) == 1 + 3 * 2  # each publication block moves it
    details = [s.detail for _, s in scoring if isinstance(s.detail, ScoringProgress)]
    assert len(details) == len(scoring)
    assert [d.papers_done for d in details] == [int(f * 7 + 1e-9) for f in fractions[:-1]] + [7]
    assert [d.blocks_done for d in details][-1] == 3 and details[-1].blocks_total == 3
    assert scoring[-1][1].startswith("scoring 7 / 7 papers")
    assert seen[-1] == (1.0, "done")
    assert result.dense is not None
    assert np.allclose(result.dense, dense_affinity(papers, pubs, offsets), atol=1e-5)


def test_scoring_meter_reports_at_most_every_interval_and_always_the_ends() -> None:
    clock = FakeClock()
    seen: list[tuple[float, str]] = []
    meter = ScoringMeter(1000, 10, lambda f, s: seen.append((f, s)), every=2.0, clock=clock)
    meter.update(0.0, 0, force=True)
    for step in range(1, 10):  # a piece of work every 0.5 s
        clock.now += 0.5
        meter.update(step / 10, step - 1)
    clock.now += 0.5
    meter.update(1.0, 10, force=True)
    # the start, then at 2.0 s and 4.0 s since the last report, then the end
    assert [round(f, 2) for f, _ in seen] == [0.0, 0.4, 0.8, 1.0]
    stage = seen[1][1]
    assert isinstance(stage, ProgressStage) and isinstance(stage.detail, ScoringProgress)
    detail = stage.detail
    assert detail.papers_done == 400 and detail.papers_per_second == pytest.approx(200.0)
    assert detail.eta_seconds == pytest.approx(3.0)
    assert seen[1][1] == "scoring 400 / 1,000 papers, 200 papers/s, about 3 s left"
    assert detail.to_dict() == {
        "fraction": 0.4,
        "papers_done": 400,
        "papers_total": 1000,
        "papers_per_second": 200.0,
        "eta_seconds": 3.0,
        "elapsed_seconds": 2.0,
        "blocks_done": 3,
        "blocks_total": 10,
    }
    assert seen[-1][1] == "scoring 1,000 / 1,000 papers, 200 papers/s"


@pytest.mark.parametrize("workers", [1, 2])
def test_tfidf_fitting_reports_texts_counted_in_shares_with_the_same_vectors(
    monkeypatch, workers: int
) -> None:
    import recommender.profiles as profiles

    rng = np.random.default_rng(1)
    words = np.array(["graph", "speech", "vision", "protein", "policy", "reward", "x1"])
    texts = [" ".join(rng.choice(words, 10)) + f" doc{i % 5}" for i in range(53)]
    monkeypatch.setattr(profiles, "PARALLEL_MIN_TEXTS", 10)
    monkeypatch.setattr(profiles, "COUNT_SHARE_TEXTS", 10)
    plain = profiles.TfidfProfiler(ngram_range=(1, 2)).fit_transform(texts)
    seen: list[tuple[int, int]] = []
    stepped = profiles.TfidfProfiler(ngram_range=(1, 2), workers=workers)
    vectors = stepped.fit_transform(texts, progress=lambda done, total: seen.append((done, total)))
    # 6 shares of 9 or 8 texts, reported in order as each is counted
    assert [total for _, total in seen] == [53] * 6
    assert [done for done, _ in seen] == [9, 18, 27, 36, 45, 53]
    for part in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(vectors, part), getattr(plain, part))
    assert getattr(stepped.vectorizer_, "progress", None) is None  # not kept once fitted
