"""Rater-level cross-validation on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest

from recommender.crossval import cross_validate, format_cross_validation
from recommender.evaluate import rater_costs


def test_held_out_losses_match_a_direct_computation() -> None:
    costs = np.array([[1.0, 0.0, 2.0, 1.0, 0.5], [0.0, 1.0, 1.0, 3.0, 0.5]])
    weights = np.array([2.0, 2.0, 4.0, 4.0, 1.0])
    cv = cross_validate(costs, weights, ["a", "b"], n_splits=3, seed=7)
    assert cv.n_folds == 6
    np.testing.assert_allclose(cv.full, [4.5 / 13, 5.5 / 13])
    masks = cv.selection_masks
    for split in range(3):  # both directions of one split: complementary halves of 2 and 3
        assert (masks[2 * split] == ~masks[2 * split + 1]).all()
        assert sorted((masks[2 * split].sum(), masks[2 * split + 1].sum())) == [2, 3]
    for fold, mask in enumerate(masks):
        held = ~mask
        for k in range(2):
            expected = costs[k, held].sum() / weights[held].sum()
            assert cv.held_out[k, fold] == pytest.approx(expected)
        chosen_on_selection = np.argmin(costs[:, mask].sum(1) / weights[mask].sum())
        assert cv.chosen["argmin"][fold] == chosen_on_selection


def test_paired_held_out_difference_and_wins_by_hand() -> None:
    # Two raters, one split: each fold holds out one rater. Candidate b is better on
    # rater 0 (cost 0 vs 1, weight 2) and worse on rater 1 (cost 1 vs 0.5, weight 1).
    costs = np.array([[1.0, 0.5], [0.0, 1.0]])
    cv = cross_validate(costs, np.array([2.0, 1.0]), ["a", "b"], n_splits=1, seed=0)
    held_rater = np.argmax(~cv.selection_masks, axis=1)  # the one held-out rater per fold
    expected = {0: 0.0 / 2 - 1.0 / 2, 1: 1.0 / 1 - 0.5 / 1}
    np.testing.assert_allclose(cv.held_out_difference(1), [expected[int(r)] for r in held_rater])
    np.testing.assert_allclose(cv.held_out_difference(0), [0.0, 0.0])
    np.testing.assert_allclose(cv.held_out_difference(0, reference=1), -cv.held_out_difference(1))
    text = format_cross_validation(cv)
    row = next(line for line in text.splitlines() if line.startswith("b "))
    assert " 50% " in row  # wins on one held-out half of two
    reference_row = next(line for line in text.splitlines() if line.startswith("a "))
    assert "(reference)" in reference_row and "%" not in reference_row


def test_a_configuration_better_on_every_rater_is_always_chosen() -> None:
    rng = np.random.default_rng(0)
    worse = rng.uniform(0.3, 0.6, size=10)
    costs = np.stack([worse, worse - 0.1, worse + 0.05])
    weights = np.ones(10)
    cv = cross_validate(costs, weights, ["a", "b", "c"], n_splits=20, seed=1)
    assert (cv.chosen["argmin"] == 1).all()
    np.testing.assert_allclose(cv.selection_losses("argmin"), cv.held_out[1])
    # Better by 0.1 on every rater: the paired SE is 0, so one-se picks it as well.
    assert (cv.chosen["one-se"] == 1).all()
    assert cv.paired_se[1] == pytest.approx(0.0, abs=1e-12)


def test_one_se_rule_keeps_the_simpler_candidate_inside_the_noise() -> None:
    rng = np.random.default_rng(3)
    simple = rng.uniform(0.2, 0.5, size=20)
    # Slightly better on average, much noisier per rater.
    complex_ = simple - 0.01 + rng.normal(0, 0.15, size=20)
    costs = np.stack([simple, complex_])
    cv = cross_validate(costs, np.ones(20), ["simple", "complex"], n_splits=50, seed=0)
    counts = cv.choice_counts("one-se")
    assert counts[0] > counts[1]
    assert cv.choice_counts("argmin")[1] > counts[1]


def test_raters_without_pairs_are_left_out_and_seed_reproduces() -> None:
    costs = np.array([[0.5, 0.0, 1.0, 0.2, 0.0]])
    weights = np.array([1.0, 0.0, 2.0, 1.0, 0.0])
    cv = cross_validate(costs, weights, ["a"], n_splits=5, seed=2)
    assert cv.n_raters == 3
    again = cross_validate(costs, weights, ["a"], n_splits=5, seed=2)
    np.testing.assert_array_equal(cv.held_out, again.held_out)
    text = format_cross_validation(cv)
    assert "3 raters" in text and "selection 'argmin'" in text and "selection 'one-se'" in text


def test_invalid_inputs_raise() -> None:
    with pytest.raises(ValueError, match="weights shape"):
        cross_validate(np.zeros((1, 3)), np.ones(2), ["a"])
    with pytest.raises(ValueError, match="labels"):
        cross_validate(np.zeros((2, 3)), np.ones(3), ["a"])
    with pytest.raises(ValueError, match="at least 2 raters"):
        cross_validate(np.zeros((1, 3)), np.array([1.0, 0.0, 0.0]), ["a"])
    with pytest.raises(ValueError, match="n_splits"):
        cross_validate(np.zeros((1, 3)), np.ones(3), ["a"], n_splits=0)


def test_rater_costs_are_means_over_draws() -> None:
    gold = {"r": {"a": 5.0, "b": 3.0, "c": 1.0}, "s": {"x": 4.0, "y": 2.0}}
    right = {"r": {"a": 3.0, "b": 2.0, "c": 1.0}, "s": {"x": 1.0, "y": 0.0}}
    # r: a-b wrong (2), others right; s: tie (2 / 2 = 1).
    mixed = {"r": {"a": 1.0, "b": 2.0, "c": 0.0}, "s": {"x": 0.0, "y": 0.0}}
    raters, costs, weights = rater_costs([(right, gold), (mixed, gold)])
    assert raters == ["r", "s"]
    np.testing.assert_allclose(weights, [8.0, 2.0])
    np.testing.assert_allclose(costs, [1.0, 0.5])
    with pytest.raises(ValueError, match="same raters"):
        rater_costs([(right, gold), ({"r": right["r"]}, {"r": gold["r"]})])
