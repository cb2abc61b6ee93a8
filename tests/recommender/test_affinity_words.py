"""Explanations a chair can read, near-duplicate publications counted once, scoring-time
estimates and the numbers of an embedding step's progress."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from recommender.affinity import AffinityModel, RunOptions, ScoringParams
from recommender.affinity.estimate import WARN_SECONDS, estimate_scoring
from recommender.affinity.explain import FILLER_TERMS, main_publications, plain_sentence
from recommender.affinity.params import SCORING_PRESETS, preset
from recommender.affinity.similarity import near_duplicates
from recommender.corpus import Publication, Reviewer, Submission
from recommender.packaged_models import MINILM_NAME
from recommender.progress import ProgressStage, TextProgressMeter, format_duration

GRAPHS = "Graph neural networks learn molecular property prediction by message passing over atoms"
SPEECH = "Speech recognition with transformer acoustic models trained on noisy audio corpora"
VISION = "Image segmentation with convolutional networks for satellite imagery of crops"


def _pub(pid: str, text: str, year: int = 2020) -> Publication:
    title, _, abstract = text.partition(" with ")
    return Publication(pid, title, abstract or text, year)


def venue() -> tuple[list[Reviewer], list[Submission]]:
    reviewers = [
        Reviewer(
            "ada",
            publications=(
                _pub("a1", GRAPHS),
                # the arXiv and the proceedings version of one paper
                _pub("a2", GRAPHS + " (extended version)"),
                _pub("a3", VISION),
                _pub("a4", SPEECH),
            ),
        ),
        Reviewer("bob", publications=(_pub("b1", SPEECH), _pub("b2", VISION))),
        Reviewer("cy"),
    ]
    submissions = [
        Submission("s1", "Message passing for molecules", GRAPHS + " and crystals"),
        Submission("s2", "Robust speech", SPEECH + " in cars"),
    ]
    return reviewers, submissions


@pytest.mark.parametrize(
    "params",
    [
        ScoringParams(),
        ScoringParams(method="tfidf", aggregation="mean"),
        ScoringParams(method="combined", aggregation="mean", model=MINILM_NAME),
        ScoringParams(method="combined", aggregation="topk", paper_centering=True),
        ScoringParams(aggregation="softmax", temperature=0.5),
    ],
    ids=["default", "tfidf", "combined", "combined-centred", "softmax"],
)
def test_score_parts_add_up_to_the_score_in_its_own_units(params: ScoringParams) -> None:
    reviewers, submissions = venue()
    model = AffinityModel(params).fit(reviewers, submissions)
    affinity = model.affinity()
    for paper in ("s1", "s2"):
        for reviewer in ("ada", "bob", "cy"):
            explanation = model.explain(paper, reviewer)
            parts = explanation.parts
            assert parts is not None
            assert parts.total == pytest.approx(explanation.score, abs=1e-6)
            assert explanation.score == pytest.approx(affinity.score(paper, reviewer), abs=1e-5)
            if params.method == "tfidf":
                assert parts.embedding == 0.0
            if params.method == "embedding":
                assert parts.text_match == 0.0
                assert parts.baseline == pytest.approx(0.0, abs=1e-6)  # cosines as they are
            shares = [p.share for p in explanation.publications]
            assert all(s >= 0 for s in shares)
            if any(shares):
                assert sum(shares) == pytest.approx(1.0)
                assert shares == sorted(shares, reverse=True)  # largest share first


def test_explanation_in_words_names_the_papers_terms_and_bid() -> None:
    reviewers, submissions = venue()
    model = AffinityModel(ScoringParams(duplicate_threshold=None)).fit(reviewers, submissions)
    explanation = model.explain("s1", "ada")
    assert explanation.publications[0].id in {"a1", "a2"}
    assert explanation.sentence.startswith("2 of this reviewer's 4 papers are about ")
    assert "as is this submission" in explanation.sentence
    assert all(term not in FILLER_TERMS for term, _ in explanation.shared_terms)
    assert "molecular" in [term for term, _ in explanation.shared_terms]
    data = explanation.to_dict()
    assert set(data) >= {"sentence", "parts", "publications", "shared_terms", "score"}
    assert set(data["parts"]) == {"text_match", "embedding", "bid", "baseline", "total"}
    assert "share" in data["publications"][0]
    bid = explanation.with_bid(1.0)  # Very High, weight 0.1
    assert bid.score == pytest.approx(explanation.score + 0.1)
    assert bid.parts is not None and bid.parts.bid == pytest.approx(0.1)
    assert bid.parts.total == pytest.approx(bid.score)
    assert bid.sentence.endswith("The reviewer's bid raises the score by 0.1.")
    text = bid.describe()
    assert text.splitlines()[0] == f"Score {bid.score:.3f} of reviewer ada for paper s1."
    assert "Parts: embedding +" in text and "bid +0.100" in text
    assert "Publications behind it:" in text and "Shared terms: " in text
    empty = model.explain("s1", "cy")
    assert empty.sentence == "This reviewer has no publications on record, so the score is 0."
    assert empty.score == 0.0 and empty.parts is not None and empty.parts.total == 0.0


def test_sentence_and_main_publications() -> None:
    shares = np.array([0.5, 0.3, 0.15, 0.05, 0.0])
    assert main_publications(shares) == [0, 1]  # 80% reached by the first two
    assert main_publications(np.zeros(3)) == []
    assert (
        plain_sentence(20, 3, 0.82, ["graph networks", "molecules"], "A title")
        == '3 of this reviewer\'s 20 papers are about "graph networks" and "molecules", as '
        "is this submission (82% of the evidence)."
    )
    assert plain_sentence(1, 1, 1.0, [], "Only one").startswith(
        'This reviewer\'s only paper ("Only one") is close to this submission in meaning'
    )
    assert plain_sentence(5, 0, 0.0, [], None).startswith("None of this reviewer's 5 papers")


def test_near_duplicates_of_a_reviewers_own_publications_count_once() -> None:
    vectors = np.array([[1, 0], [0.99, 0.141], [0, 1], [1, 0], [1, 0]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    offsets = np.array([0, 3, 4, 5])  # [0, 1, 2] | [3] | [4]: the same vector, other owners
    assert near_duplicates(vectors, offsets, 0.9).tolist() == [False, True, False, False, False]
    assert not near_duplicates(vectors, offsets, 1.0).any()
    reviewers, submissions = venue()
    counted = AffinityModel(ScoringParams()).fit(reviewers, submissions)
    every = AffinityModel(ScoringParams(duplicate_threshold=None)).fit(reviewers, submissions)
    assert int(every.offsets_[-1]) - int(counted.offsets_[-1]) == 1  # a2 is a1 again
    ids = [p.id for p in counted.explain("s1", "ada").publications]
    assert len(ids) == 3 and ("a1" in ids) != ("a2" in ids)
    # the duplicate no longer fills a top-3 slot: the score is a1, vision, speech
    assert counted.affinity().score("s1", "ada") < every.affinity().score("s1", "ada")


def test_presets_are_valid_and_the_default_is_the_chosen_one() -> None:
    assert ScoringParams() == preset("default")
    default = ScoringParams()
    assert (default.method, default.model, default.aggregation, default.k) == (
        "embedding",
        MINILM_NAME,
        "topk",
        3,
    )
    assert default.duplicate_threshold == 0.8
    for name in SCORING_PRESETS:
        preset(name)
    with pytest.raises(ValueError, match="unknown scoring configuration 'nope'; known: default"):
        preset("nope")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("temperature", 1e-300),
        ("tfidf_min_df", 1_000_000),
        ("tfidf_max_df", 1e-320),
        ("recency_half_life", 1e-300),
        ("duplicate_threshold", 0.1),
    ],
)
def test_values_that_would_fail_a_job_are_refused_naming_the_field(
    field: str, value: float
) -> None:
    with pytest.raises(ValueError, match=f"^{field}: Input should be"):
        ScoringParams.from_dict({field: value})


def test_estimate_counts_texts_not_cached_and_learns_the_rate(tmp_path, monkeypatch) -> None:
    reviewers, submissions = venue()
    options = RunOptions(cache_dir=tmp_path / "cache")
    cold = estimate_scoring(reviewers, submissions, ScoringParams(), options)
    n_texts = 6  # 6 publications + 2 submissions, 2 publications shared by two reviewers
    assert (cold.texts_total, cold.texts_cached, cold.texts_to_embed) == (n_texts, 0, n_texts)
    assert cold.rate_source == "known" and cold.seconds == pytest.approx(n_texts / 15.0)
    assert not cold.warn and cold.model == MINILM_NAME
    assert "all-mpnet-base-v2" in cold.alternatives or not cold.alternatives
    AffinityModel(ScoringParams(), options).fit(reviewers, submissions)
    warm = estimate_scoring(reviewers, submissions, ScoringParams(), options)
    assert (warm.texts_cached, warm.texts_to_embed, warm.seconds) == (n_texts, 0, 0.0)
    assert warm.to_dict()["warn_above_seconds"] == WARN_SECONDS
    tfidf = estimate_scoring(reviewers, submissions, preset("tfidf"), options)
    assert tfidf.seconds == 0.0 and tfidf.rate_source == "none"
    # a slow model on many texts: a warning that names a faster one when there is one
    from recommender.affinity import estimate

    monkeypatch.setitem(estimate.KNOWN_TEXTS_PER_SECOND, MINILM_NAME, 0.001)
    slow = estimate_scoring(reviewers, submissions, ScoringParams(), RunOptions())
    assert slow.warn and slow.seconds == pytest.approx(n_texts / 0.001)
    assert "texts to embed with all-MiniLM-L6-v2 at 0.001 texts/s: about" in slow.message
    faster = [name for name, s in slow.alternatives.items() if s < slow.seconds]
    if faster:  # MPNet installed: it is the faster one now
        assert f" {faster[0]} would take about " in slow.message
    else:
        assert slow.message.endswith(
            "TF-IDF alone (method tfidf) embeds nothing and takes seconds."
        )


def test_the_embedding_rate_is_measured_into_the_cache(tmp_path) -> None:
    from recommender.embeddings import EmbeddingCache

    cache = EmbeddingCache(tmp_path)
    assert cache.rate("m") is None
    cache.record_rate("m", 10, 5.0)  # too few texts to measure
    assert cache.rate("m") is None
    cache.record_rate("m", 300, 20.0)
    assert cache.rate("m") == pytest.approx(15.0)
    assert cache.count("m", ["a", "b"]) == 0


def test_progress_numbers_and_words() -> None:
    clock = iter([100.0, 110.0, 130.0]).__next__
    meter = TextProgressMeter(3400, clock=clock)
    first = meter.update(0)
    assert (first.texts_per_second, first.eta_seconds) == (None, None)
    stage = meter.stage(1200)  # 30 s after the start: 40 texts/s
    assert isinstance(stage, ProgressStage) and isinstance(stage, str)
    assert stage == "embedding 1,200 / 3,400 texts, 40 texts/s, about 55 s left"
    assert stage.detail.to_dict() == {
        "texts_done": 1200,
        "texts_total": 3400,
        "texts_per_second": 40.0,
        "eta_seconds": 55.0,
        "elapsed_seconds": 30.0,
    }
    assert [format_duration(s) for s in (0.2, 40, 125, 3900, 200_000, math.inf)] == [
        "1 s",
        "40 s",
        "2 min",
        "1 h 05 min",
        "2 days 7 h",
        "an unknown time",
    ]


def test_near_duplicates_of_a_prolific_reviewer_are_found_the_same_way(monkeypatch) -> None:
    from recommender.affinity import similarity

    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(40, 16)).astype(np.float32)
    vectors[[7, 25]] = vectors[3] + 0.01  # two near-copies of publication 3
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    offsets = np.array([0, 30, 40])
    expected = near_duplicates(vectors, offsets, 0.95)
    assert np.flatnonzero(expected).tolist() == [7, 25]
    monkeypatch.setattr(similarity, "DUPLICATE_PAIRS_CHUNK", 10)  # 30 publications: per reviewer
    assert near_duplicates(vectors, offsets, 0.95).tolist() == expected.tolist()
    sparse = near_duplicates(sp.csr_matrix(vectors), offsets, 0.95)  # TF-IDF vectors too
    assert sparse.tolist() == expected.tolist()
