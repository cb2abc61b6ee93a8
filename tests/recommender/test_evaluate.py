"""The gold-standard metric on hand-computed cases."""

from __future__ import annotations

import math

import pytest

from recommender.evaluate import (
    bootstrap_loss,
    format_report,
    pair_accuracy,
    pairwise_loss,
    read_gold_ratings,
)

GOLD = {"r": {"a": 5.0, "b": 3.0, "c": 1.0}}


def test_perfect_order_is_zero() -> None:
    assert pairwise_loss({"r": {"a": 0.9, "b": 0.5, "c": 0.1}}, GOLD) == 0.0


def test_reversed_order_is_one() -> None:
    assert pairwise_loss({"r": {"a": 0.1, "b": 0.5, "c": 0.9}}, GOLD) == 1.0


def test_all_ties_is_half() -> None:
    assert pairwise_loss({"r": {"a": 0.3, "b": 0.3, "c": 0.3}}, GOLD) == 0.5


def test_mixed_case_by_hand() -> None:
    # Pairs (|Δ|): a-b 2, a-c 4, b-c 2 -> total 8.
    # Predicted a=0.2, b=0.5, c=0.2: a-b wrong (2), a-c tie (2), b-c right (0) -> 4/8.
    assert pairwise_loss({"r": {"a": 0.2, "b": 0.5, "c": 0.2}}, GOLD) == pytest.approx(0.5)
    # Predicted b > a > c: only a-b wrong -> 2/8.
    assert pairwise_loss({"r": {"a": 0.5, "b": 0.6, "c": 0.1}}, GOLD) == pytest.approx(0.25)


def test_pooled_over_raters_and_equal_ratings_ignored() -> None:
    gold = {"r": {"a": 5.0, "b": 3.0, "c": 1.0}, "s": {"x": 4.0, "y": 4.0, "z": 3.0}}
    # r: a-b wrong (2) of 8; s: x-y equal -> ignored, x-z right, y-z tie (0.5) of 2 -> 2.5/10
    predicted = {"r": {"a": 0.5, "b": 0.6, "c": 0.1}, "s": {"x": 0.9, "y": 0.1, "z": 0.1}}
    assert pairwise_loss(predicted, gold) == pytest.approx(2.5 / 10)


def test_accuracy_easy_and_hard_pairs() -> None:
    gold = {"r": {"a": 5.0, "b": 4.0, "c": 2.0, "d": 1.0}}
    predicted = {"r": {"a": 0.1, "b": 0.9, "c": 0.5, "d": 0.5}}
    # hard: a-b (both >= 4) wrong -> 0; easy: a-c wrong, a-d wrong, b-c right, b-d right.
    assert pair_accuracy(predicted, gold, "hard") == 0.0
    assert pair_accuracy(predicted, gold, "easy") == 0.5
    assert math.isnan(pair_accuracy(predicted, {"r": {"a": 3.0, "b": 2.5}}, "hard"))


def test_missing_prediction_is_an_error() -> None:
    with pytest.raises(KeyError, match="paper 'c'"):
        pairwise_loss({"r": {"a": 1.0, "b": 0.0}}, GOLD)


def test_bootstrap_interval_contains_point_estimate() -> None:
    gold = {f"r{i}": {"a": 5.0, "b": 3.0, "c": 1.0} for i in range(6)}
    predicted = {
        f"r{i}": ({"a": 0.9, "b": 0.5, "c": 0.1} if i % 2 else {"a": 0.1, "b": 0.5, "c": 0.9})
        for i in range(6)
    }
    loss = pairwise_loss(predicted, gold)
    low, high = bootstrap_loss([(predicted, gold)], samples=300, seed=1)
    assert low <= loss <= high
    assert 0.0 <= low < high <= 1.0
    assert (low, high) == bootstrap_loss([(predicted, gold)], samples=300, seed=1)


def test_read_gold_ratings(tmp_path) -> None:
    header = "ParticipantID\t" + "\t".join(
        [f"Paper{i}" for i in range(1, 11)] + [f"Expertise{i}" for i in range(1, 11)]
    )
    row = "7\tp1\tp2" + "\t" * 8 + "\t4.5\t2" + "\t" * 8
    path = tmp_path / "evaluations.tsv"
    path.write_text(header + "\n" + row + "\n")
    assert read_gold_ratings(path) == {"7": {"p1": 4.5, "p2": 2.0}}


def test_format_report_lists_configurations() -> None:
    from recommender.affinity import ScoringParams
    from recommender.evaluate import ConfigResult, GoldReport

    result = ConfigResult(
        ScoringParams(method="tfidf"), 0.25, (0.25,), 0.2, 0.3, 0.8, 0.6, 1.0, "tfidf mean"
    )
    text = format_report(GoldReport("gold", 3, 1, (result,)))
    assert "tfidf mean" in text and "0.2500" in text and "[0.200, 0.300]" in text
