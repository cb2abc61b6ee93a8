"""Affinity scores: aggregation against a naive loop, explanations, CSV output."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from recommender.affinity import (
    Affinity,
    AffinityModel,
    RunOptions,
    ScoringParams,
    aggregate,
    aggregation_weights,
    compute_affinity,
)
from recommender.corpus import Publication, Reviewer, Submission
from recommender.packaged_models import MINILM_NAME


def naive_aggregate(similarity, offsets, config, weights):
    out = np.zeros((similarity.shape[0], len(offsets) - 1))
    for p in range(similarity.shape[0]):
        for r in range(len(offsets) - 1):
            s = similarity[p, offsets[r] : offsets[r + 1]].astype(np.float64)
            w = weights[offsets[r] : offsets[r + 1]].astype(np.float64)
            if len(s) == 0:
                continue
            if config.aggregation == "max":
                out[p, r] = max(s * w)
            elif config.aggregation == "mean":
                out[p, r] = (s * w).sum() / w.sum()
            elif config.aggregation == "topk":
                out[p, r] = sum(sorted(s * w, reverse=True)[: config.k]) / min(config.k, len(s))
            else:
                e = np.exp((s - s.max()) / config.temperature) * w
                out[p, r] = (e * s).sum() / e.sum()
    return out


@pytest.mark.parametrize("aggregation", ["max", "mean", "topk", "softmax"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_aggregation_matches_naive_loop(aggregation: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 6, size=7)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    similarity = rng.uniform(-0.2, 1.0, size=(5, int(offsets[-1]))).astype(np.float32)
    weights = rng.uniform(0.1, 1.0, size=int(offsets[-1])).astype(np.float32)
    config = ScoringParams(method="tfidf", aggregation=aggregation, k=3, temperature=0.3)
    got = aggregate(similarity, offsets, config, weights=weights)
    expected = naive_aggregate(similarity, offsets, config, weights)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    assert got.dtype == np.float32 and got.shape == (5, 7)
    assert np.all(got[:, counts == 0] == 0)


@pytest.mark.parametrize("aggregation", ["max", "mean", "topk", "softmax"])
def test_aggregation_weights_reproduce_the_aggregate(aggregation: str) -> None:
    rng = np.random.default_rng(5)
    s = rng.uniform(0, 1, 6).astype(np.float32)
    recency = rng.uniform(0.2, 1, 6).astype(np.float32)
    config = ScoringParams(aggregation=aggregation, k=2, temperature=0.2)
    weights = aggregation_weights(s, config, recency)
    expected = aggregate(s[None, :], np.array([0, 6]), config, weights=recency)[0, 0]
    if aggregation in ("max", "topk"):
        assert (weights * s).sum() == pytest.approx(expected, rel=1e-5)
    else:
        assert weights.sum() == pytest.approx(1.0)
        assert (weights * s).sum() == pytest.approx(expected, rel=1e-5)


def pub(pid: str, title: str, abstract: str, year: int | None = 2020) -> Publication:
    return Publication(pid, title, abstract, year)


REVIEWERS = (
    Reviewer(
        "~Ann_A1",
        publications=(
            pub(
                "a1", "Graph neural networks", "Message passing on graphs for node classification."
            ),
            pub("a2", "Graph pooling", "Hierarchical pooling of graph neural networks.", 2018),
        ),
    ),
    Reviewer(
        "Bob_B1",
        publications=(
            pub("b1", "Speech recognition", "Acoustic models for speech recognition with HMMs."),
        ),
    ),
    Reviewer("Cat_C1"),  # no publications
)
SUBMISSIONS = (
    Submission("p1", "Scalable graph neural networks", "Node classification on large graphs."),
    Submission("p2", "End-to-end speech recognition", "Acoustic modelling without HMMs."),
)


def test_tfidf_affinity_ranks_the_right_reviewer_and_zero_for_empty_profiles() -> None:
    affinity = compute_affinity(REVIEWERS, SUBMISSIONS, ScoringParams(method="tfidf"))
    assert affinity.paper_ids == ("p1", "p2")
    assert affinity.reviewer_ids == ("Ann_A1", "Bob_B1", "Cat_C1")
    assert affinity.scores.dtype == np.float32 and affinity.scores.shape == (2, 3)
    assert affinity.top_reviewers("p1", 1)[0][0] == "Ann_A1"
    assert affinity.top_reviewers("p2", 1)[0][0] == "Bob_B1"
    assert affinity.top_papers("~Ann_A1", 1)[0][0] == "p1"
    assert affinity.score("p1", "Cat_C1") == 0.0
    assert affinity.score("p1", "~Ann_A1") == affinity.score("p1", "Ann_A1") > 0
    with pytest.raises(KeyError, match="unknown paper"):
        affinity.score("nope", "Ann_A1")


def test_mean_aggregation_is_mean_of_publication_cosines() -> None:
    model = AffinityModel(ScoringParams(method="tfidf", aggregation="mean")).fit(
        REVIEWERS, SUBMISSIONS
    )
    cosines = (model.sub_tfidf_ @ model.pub_tfidf_.T).toarray()
    assert model.affinity().scores[0, 0] == pytest.approx(cosines[0, :2].mean(), rel=1e-5)


def test_explanation_names_driving_publication_and_shared_terms() -> None:
    model = AffinityModel(ScoringParams(method="tfidf", aggregation="max")).fit(
        REVIEWERS, SUBMISSIONS
    )
    explanation = model.explain("p1", "~Ann_A1")
    assert explanation.reviewer_id == "Ann_A1"
    assert explanation.score == pytest.approx(model.affinity().score("p1", "Ann_A1"))
    top = explanation.publications[0]
    assert top.id == "a1" and top.weight == 1.0 and top.year == 2020  # no recency
    assert top.similarity == pytest.approx(explanation.score, rel=1e-5)
    terms = dict(explanation.shared_terms)
    assert {"graph", "node", "classification"} <= set(terms)
    assert "speech" not in terms
    assert list(terms.values()) == sorted(terms.values(), reverse=True)
    as_dict = explanation.to_dict()
    assert as_dict["publications"][0]["id"] == "a1"
    assert as_dict["config"]["aggregation"] == "max"
    empty = model.explain("p1", "Cat_C1")
    assert empty.score == 0.0 and empty.publications == () and empty.shared_terms == ()


def test_write_csv_openreview_format(tmp_path) -> None:
    affinity = Affinity(
        ("p1", "p2"), ("~Ann", "Bob"), np.array([[0.5, 0.25], [1.0, 0.0]], dtype=np.float32)
    )
    path = tmp_path / "out" / "scores.csv"
    affinity.write_csv(path)
    with path.open() as stream:
        rows = list(csv.reader(stream))
    assert rows[0] == ["paper_id", "reviewer_id", "score"]
    assert rows[1:] == [
        ["p1", "Ann", "0.5"],
        ["p1", "Bob", "0.25"],
        ["p2", "Ann", "1"],
        ["p2", "Bob", "0"],
    ]
    assert [p.name for p in path.parent.iterdir()] == ["scores.csv"]


def test_params_round_trip_and_validation() -> None:
    config = ScoringParams(method="tfidf", aggregation="topk", k=5, recency_half_life=3.0)
    assert ScoringParams.from_dict(config.to_dict()) == config
    assert ScoringParams.from_dict({}) == ScoringParams()
    with pytest.raises(ValueError, match="metod: unknown field"):
        ScoringParams.from_dict({"metod": "tfidf"})
    with pytest.raises(ValueError, match="aggregation"):
        ScoringParams(aggregation="median")
    for field, value in [
        ("k", 0),
        ("k", 10**9),
        ("temperature", 0),
        ("embedding_weight", 2),
        ("tfidf_max_df", 1.5),
        ("model", "../etc"),
        ("bid_weight", 1e9),
    ]:
        with pytest.raises(ValueError, match=field):
            ScoringParams.from_dict({field: value})
    with pytest.raises(ValueError):  # frozen: what produced a score cannot drift
        config.method = "embedding"  # type: ignore[misc]
    assert config.replace(k=2).k == 2 and config.k == 5


def test_run_options_are_not_scoring_parameters() -> None:
    for field in ("cache_dir", "model_path", "batch_size", "device", "dense_limit_bytes"):
        with pytest.raises(ValueError, match=f"{field}: unknown field"):
            ScoringParams.from_dict({field: 1})
    # Records of version 0.1 (AffinityConfig held both) still read, run options dropped.
    legacy = {"method": "tfidf", "cache_dir": "/tmp/x", "batch_size": 32, "device": "cpu"}
    # (and, made before near-duplicates counted once, with none counted once)
    assert ScoringParams.from_stored(legacy) == ScoringParams(
        method="tfidf", duplicate_threshold=None
    )
    with pytest.raises(ValueError, match="model directory"):
        ScoringParams.from_stored({"model_path": "/somewhere"})
    with pytest.raises(ValueError, match=r"batch_size must be in 1\.\.4096"):
        RunOptions(batch_size=100_000_000)
    with pytest.raises(ValueError, match="device"):
        RunOptions(device="tpu; rm -rf /")
    with pytest.raises(ValueError, match="unknown embedding model 'nope'"):
        RunOptions().model_path("nope")


def test_run_options_from_the_environment(tmp_path) -> None:
    from recommender.embeddings import DEFAULT_MODEL_NAME, default_model_path

    options = RunOptions.from_env(
        {
            "RECOMMENDER_MODELS": f"mini={default_model_path()}",
            "RECOMMENDER_CACHE_DIR": str(tmp_path),
            "RECOMMENDER_BATCH_SIZE": "64",
        }
    )
    assert options.model_names() == sorted([DEFAULT_MODEL_NAME, "all-mpnet-base-v2", "mini"])
    assert options.model_path("mini") == default_model_path()
    assert options.cache_dir == tmp_path and options.batch_size == 64
    assert RunOptions.from_env({"RECOMMENDER_CACHE_DIR": "none"}).cache_dir is None
    with pytest.raises(ValueError, match="RECOMMENDER_MODELS"):
        RunOptions.from_env({"RECOMMENDER_MODELS": f"bad={tmp_path}"})
    with pytest.raises(ValueError, match="RECOMMENDER_BATCH_SIZE: expected an integer"):
        RunOptions.from_env({"RECOMMENDER_BATCH_SIZE": "lots"})


def test_cache_directory_variable_and_its_deprecated_name(monkeypatch, tmp_path) -> None:
    from recommender.embeddings import default_cache_dir

    monkeypatch.delenv("RECOMMENDER_CACHE_DIR", raising=False)
    monkeypatch.setenv("RECOMMENDER_CACHE", str(tmp_path / "old"))
    with pytest.warns(DeprecationWarning, match="RECOMMENDER_CACHE_DIR"):
        assert default_cache_dir() == tmp_path / "old"
    monkeypatch.setenv("RECOMMENDER_CACHE_DIR", str(tmp_path / "new"))
    assert default_cache_dir() == tmp_path / "new"


def test_unfitted_model_says_so() -> None:
    with pytest.raises(NotFittedError, match="not fitted"):
        AffinityModel().affinity()
    model = AffinityModel(ScoringParams(method="tfidf")).fit(REVIEWERS, SUBMISSIONS)
    assert model.paper_ids_ == ("p1", "p2") and model.offsets_.tolist() == [0, 2, 3, 3]


def test_recency_weighting_prefers_recent_publications() -> None:
    config = ScoringParams(method="tfidf", aggregation="mean", recency_half_life=1.0)
    model = AffinityModel(config).fit(REVIEWERS, SUBMISSIONS)
    assert model.publication_weights_[0] == 1.0  # 2020 = newest year
    assert model.publication_weights_[1] == pytest.approx(0.25)  # two years older


def test_duplicate_ids_rejected() -> None:
    with pytest.raises(ValueError, match="duplicate submission"):
        compute_affinity(REVIEWERS, SUBMISSIONS + SUBMISSIONS[:1], ScoringParams(method="tfidf"))


def test_combined_scores_in_unit_range_and_explained() -> None:
    # The bundled MiniLM: this checks the combined scale, not a model (the default model is
    # exercised end to end in tests/test_cli.py).
    params = ScoringParams(method="combined", model=MINILM_NAME)
    model = AffinityModel(params).fit(REVIEWERS, SUBMISSIONS)
    affinity = model.affinity()
    assert affinity.scores.min() >= 0.0 and affinity.scores.max() == pytest.approx(1.0)
    assert affinity.top_reviewers("p2", 1)[0][0] == "Bob_B1"
    explanation = model.explain("p2", "Bob_B1")
    assert explanation.publications[0].embedding_similarity is not None
    assert explanation.score == pytest.approx(affinity.score("p2", "Bob_B1"))


def test_degenerate_corpora_score_zero() -> None:
    config = ScoringParams(method="tfidf")
    assert compute_affinity((), (), config).scores.shape == (0, 0)
    no_pubs = compute_affinity((Reviewer("x"),), SUBMISSIONS, config)
    assert no_pubs.scores.tolist() == [[0.0], [0.0]]
    stop_words_only = (Reviewer("y", publications=(pub("q", "the", "of"),)),)
    blank = AffinityModel(config).fit(stop_words_only, (Submission("p", "and", ""),))
    assert blank.affinity().scores.tolist() == [[0.0]]
    assert blank.explain("p", "y").shared_terms == ()
