"""AffinityModel.pair_scores scores many pairs at once, each as pair_score (and so an
explanation) gives it: every scoring setting, reviewers without publications, pairs in any
order and repeated. TF-IDF scores are identical; with embeddings the batch's matrix product
has another shape than one pair's, so BLAS may round the float32 last bit differently (as
blockwise and dense scoring do)."""

from __future__ import annotations

import numpy as np
import pytest
from test_affinity_paths import CONFIGS, corpus

from recommender.affinity import AffinityModel, ScoringParams


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.method}-{c.aggregation}")
def test_pair_scores_equal_pair_score_one_by_one(config: ScoringParams) -> None:
    reviewers, submissions = corpus()
    model = AffinityModel(config).fit(reviewers, submissions)
    rng = np.random.default_rng(1)
    papers = rng.integers(0, len(submissions), size=60)
    people = rng.integers(0, len(reviewers), size=60)
    papers[:3], people[:3] = 5, [0, 4, 0]  # reviewers 0 and 4 have no publications; a repeat
    batch = model.pair_scores(papers, people)
    one_by_one = [model.pair_score(int(p), int(r)) for p, r in zip(papers, people, strict=True)]
    expected = np.array(one_by_one, dtype=np.float32)
    if config.method == "tfidf":
        np.testing.assert_array_equal(batch, expected)
    else:
        np.testing.assert_allclose(batch, expected, rtol=0, atol=1e-6)
    assert model.explain(f"s{papers[5]}", f"R{people[5]}").score == pytest.approx(
        float(batch[5]), abs=1e-6
    )
    assert batch[0] == 0.0 and len(set(batch.tolist())) > 10
    assert model.pair_scores(np.array([], dtype=np.int64), np.array([], dtype=np.int64)).size == 0
