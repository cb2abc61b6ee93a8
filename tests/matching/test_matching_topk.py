"""matching.topk: the one top-K selection (deterministic ties) every package uses."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
import scipy.sparse as sp

from matching.topk import TopK, merge_top_k, offset_rows, top_k_mask, top_k_rows, top_k_union


def _python_top_k(values: npt.NDArray[np.floating], k: int) -> list[list[int]]:
    """Reference: by value descending, then index ascending; -inf never selected."""
    return [
        [int(j) for j in sorted(np.flatnonzero(row > -np.inf), key=lambda j: (-row[j], j))[:k]]
        for row in values
    ]


def test_top_k_rows_is_deterministic_with_ties() -> None:
    values = np.array(
        [[1.0, 3.0, 3.0, 2.0, 3.0], [0.0, -np.inf, 0.0, -np.inf, -np.inf]], dtype=np.float32
    )
    assert top_k_rows(values, 2).indices.tolist() == [[1, 2], [0, 2]]
    assert top_k_rows(values, 3).indices.tolist() == [[1, 2, 4], [0, 2, -1]]
    merged = merge_top_k(
        TopK(np.array([[7, 2]], np.int32), np.array([[5.0, 4.0]], np.float32)),
        TopK(np.array([[1, -1]], np.int32), np.array([[5.0, -np.inf]], np.float32)),
        2,
    )
    assert merged.indices.tolist() == [[1, 7]]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_top_k_rows_and_merge_match_python_sorting_with_many_ties(dtype: type) -> None:
    rng = np.random.default_rng(11)
    values: npt.NDArray[np.floating] = (rng.integers(-3, 3, size=(40, 30)) / 2).astype(dtype)
    values[rng.random(values.shape) < 0.1] = -np.inf
    values[rng.random(values.shape) < 0.05] = -0.0
    expected = _python_top_k(values, 7)
    top = top_k_rows(values, 7)
    assert top.values.dtype == dtype
    assert [[int(j) for j in row if j >= 0] for row in top.indices] == expected
    # Split the columns in two halves, reduce each, merge in either order: same answer.
    left, right = top_k_rows(values[:, :13], 7), offset_rows(top_k_rows(values[:, 13:], 7), 13)
    for first, second in ((left, right), (right, left)):
        merged = merge_top_k(first, second, 7)
        assert [[int(j) for j in row if j >= 0] for row in merged.indices] == expected


def test_float64_ties_are_not_merged_by_float32_rounding() -> None:
    values = np.array([[1.0, 1.0 + 1e-12, 1.0]])
    assert top_k_rows(values, 1).indices.tolist() == [[1]]


def test_union_of_row_and_column_top_k_dense_and_sparse() -> None:
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 4, size=(23, 17)).astype(np.float32)  # many ties
    expected = set()
    for p, row in enumerate(_python_top_k(scores, 3)):
        expected |= {(p, r) for r in row}
    for r, column in enumerate(_python_top_k(scores.T, 2)):
        expected |= {(p, r) for p in column}
    rows, cols = top_k_union(scores, 3, 2)
    assert set(zip(rows.tolist(), cols.tolist(), strict=True)) == expected
    assert np.all(np.diff(rows * 17 + cols) > 0)  # sorted by row then column, distinct
    mask = top_k_mask(scores, 3, 2)
    assert mask.sum() == len(expected) and all(mask[p, r] for p, r in expected)
    # Sparse with every entry stored (zeros explicitly): the same pairs.
    coo = sp.coo_matrix(
        (scores.ravel(), (np.repeat(np.arange(23), 17), np.tile(np.arange(17), 23))),
        shape=scores.shape,
    )
    sparse_rows, sparse_cols = top_k_union(coo, 3, 2)
    assert set(zip(sparse_rows.tolist(), sparse_cols.tolist(), strict=True)) == expected
    # Only stored entries compete: drop a row's best entry and it is not selected.
    lower = sp.csr_matrix(np.where(np.arange(17) == 0, 0, scores + 1))
    lower_rows, lower_cols = top_k_union(lower, 1, 1)
    assert not np.any(lower_cols == 0) and lower_rows.size


def test_union_never_selects_minus_infinity_and_handles_empty() -> None:
    scores = np.full((3, 4), -np.inf)
    scores[1, 2] = 0.5
    rows, cols = top_k_union(scores, 2)
    assert rows.tolist() == [1] and cols.tolist() == [2]
    empty_rows, _ = top_k_union(np.zeros((0, 5)), 3)
    assert empty_rows.size == 0
    with pytest.raises(ValueError, match="non-negative"):
        top_k_union(scores, -1)
