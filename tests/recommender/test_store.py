"""A saved fitted model explains and scores exactly like the one that was fitted."""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest

from recommender.affinity import Affinity, AffinityModel, RunOptions, ScoringParams
from recommender.affinity.store import load_model, save_model
from recommender.corpus import Publication, Reviewer, Submission

TOPICS = ["graph neural networks", "speech recognition", "protein folding", "policy gradients"]


def venue() -> tuple[list[Reviewer], list[Submission]]:
    reviewers = [
        Reviewer(
            f"~R{r}",
            publications=tuple(
                Publication(
                    f"r{r}-{j}",
                    f"{TOPICS[(r + j) % 4]} study, with ünïcode {r} {j}",
                    f"abstract about {TOPICS[(r * j) % 4]}",
                    2015 + j if j % 2 else None,
                )
                for j in range(r % 4)
            ),
        )
        for r in range(7)
    ]
    submissions = [
        Submission(f"s{i}", f"{TOPICS[i % 4]} paper {i}", f"{TOPICS[(i + 1) % 4]}")
        for i in range(6)
    ]
    return reviewers, submissions


@pytest.mark.parametrize(
    "params",
    [
        ScoringParams(method="tfidf", aggregation="topk", k=2, recency_half_life=2.0),
        ScoringParams(method="tfidf", paper_centering=True),
        ScoringParams(),
        ScoringParams(normalisation="rank", aggregation="softmax"),
    ],
    ids=["tfidf-topk-recency", "tfidf-centred", "combined", "combined-rank"],
)
def test_saved_model_explains_and_scores_like_the_fitted_one(params, tmp_path) -> None:
    reviewers, submissions = venue()
    options = RunOptions(cache_dir=tmp_path / "cache")
    model = AffinityModel(params, options).fit(reviewers, submissions)
    scores = model.affinity().scores
    assert scores is not None
    save_model(model, tmp_path / "model")
    loaded = load_model(tmp_path / "model", options)
    assert loaded.tfidf_ is None  # nothing re-fitted: vectors and vocabulary come from disk
    for paper in ("s0", "s3"):
        for reviewer in ("R1", "~R2", "R4", "R0"):
            assert loaded.explain(paper, reviewer).to_dict() == (
                model.explain(paper, reviewer).to_dict()
            )
    again = loaded.affinity().scores
    assert again is not None
    np.testing.assert_array_equal(again, scores)
    # Saving again replaces the directory whole.
    save_model(loaded, tmp_path / "model")
    assert load_model(tmp_path / "model").explain("s1", "R3").to_dict() == (
        model.explain("s1", "R3").to_dict()
    )


def test_loading_something_else_says_so(tmp_path) -> None:
    with pytest.raises(ValueError, match="not a saved affinity model"):
        load_model(tmp_path)


def test_csv_rows_quote_ids_as_pandas_does_and_skip_excluded_pairs(tmp_path) -> None:
    papers = ("p,1", 'p"2', "p3")
    reviewers = ("~r 1", "r\n2")
    scores = np.array([[0.5, -0.25], [1e-7, 12345678.0], [-np.inf, 0.125]], dtype=np.float32)
    affinity = Affinity(papers, reviewers, scores)
    ours = "".join(affinity.iter_csv())
    finite = np.isfinite(scores)
    expected = pd.DataFrame(
        {
            "paper_id": np.repeat(papers, 2)[finite.ravel()],
            "reviewer_id": np.tile(["r 1", "r\n2"], 3)[finite.ravel()],
            "score": scores.astype(np.float64).ravel()[finite.ravel()],
        }
    ).to_csv(index=False, header=False, float_format="%.6g", lineterminator="\n")
    assert ours == expected
    rows = list(csv.reader(io.StringIO(ours)))
    assert rows[0] == ["p,1", "r 1", "0.5"] and len(rows) == 5
