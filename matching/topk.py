"""Top-K selection on plain score arrays: the one implementation every package uses.

"Each paper's top K reviewers plus each reviewer's top K papers" decides which pairs a
scores file, a stored affinity run or a sparse assignment problem keeps. It lives here, in
the lowest layer, because it needs nothing but arrays: :mod:`matching.candidates` builds
candidate pairs with it, and :mod:`recommender` (which may import ``matching``, never the
reverse) uses it for blockwise scoring, scores files and stored runs.

Ties are deterministic everywhere: by score descending, then by index ascending (the
lower paper/reviewer index wins). Entries equal to ``-inf`` are never selected, so a caller
excludes a pair (a conflict, a reviewer without publications) by setting it to ``-inf``.
Merging partial results in any order gives the same kept set as one pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

FloatMatrix = npt.NDArray[np.floating]
IndexMatrix = npt.NDArray[np.int32]
IntArray = npt.NDArray[np.int64]

# Rows (or columns) handled per step by the union functions: bounds their temporaries.
_CHUNK_ELEMENTS = 2_000_000


@dataclass(frozen=True)
class TopK:
    """Per-row top-K: ``indices`` (n_rows, k) int32 column ids (-1 = no entry) and
    ``values`` (n_rows, k) of the input dtype (-inf where no entry), best first."""

    indices: IndexMatrix
    values: FloatMatrix

    @classmethod
    def empty(cls, n_rows: int, k: int, dtype: npt.DTypeLike = np.float32) -> TopK:
        return cls(np.full((n_rows, k), -1, dtype=np.int32), np.full((n_rows, k), -np.inf, dtype))

    @property
    def k(self) -> int:
        return int(self.indices.shape[1])


def top_k_rows(values: FloatMatrix, k: int) -> TopK:
    """Top ``k`` of each row of ``values`` (m, n): by value descending, column ascending.

    Entries equal to -inf are never selected (their slots stay -1 / -inf). Values must not
    be NaN. Returns a :class:`TopK` whose values keep the input's float dtype.
    """
    values = np.asarray(values)
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    m, n = values.shape
    out = TopK.empty(m, k, values.dtype)
    take = min(k, n)
    if take == 0 or m == 0:
        return out
    if take < n:
        threshold = -np.partition(-values, take - 1, axis=1)[:, take - 1 : take]
        above = values > threshold
        at = values == threshold
        room = take - above.sum(axis=1, keepdims=True)
        keep = above | at
        # Rows with more entries at the threshold than room keep the lowest columns; a
        # cumulative count over those rows only (rare with real-valued scores).
        tied = np.flatnonzero(at.sum(axis=1) > room[:, 0])
        if tied.size:
            at_tied = at[tied]
            keep[tied] = above[tied] | (at_tied & (np.cumsum(at_tied, axis=1) <= room[tied]))
        columns = np.nonzero(keep)[1].reshape(m, take)
    else:
        columns = np.broadcast_to(np.arange(n), (m, n))
    picked = np.take_along_axis(values, columns, axis=1)
    order = _row_order(picked, columns)
    columns = np.take_along_axis(columns, order, axis=1)
    picked = np.take_along_axis(picked, order, axis=1)
    valid = picked > -np.inf
    out.indices[:, :take] = np.where(valid, columns, -1)
    out.values[:, :take] = np.where(valid, picked, -np.inf)
    return out


def _row_order(values: FloatMatrix, ids: npt.NDArray[np.integer]) -> npt.NDArray[np.int64]:
    """Per-row permutation sorting by value descending, then id ascending (ids >= 0).

    float32: one uint64 key per entry (order-preserving bits of the value, flipped for
    descending, above the id) and one argsort per row, several times faster than a
    two-key lexsort. Other dtypes: a lexsort along each row.
    """
    if values.dtype != np.float32:
        return np.lexsort((ids, -values.astype(np.float64)), axis=1).astype(np.int64)
    bits = (values + np.float32(0.0)).view(np.uint32)  # -0 -> 0
    ascending = np.where(bits >> 31, ~bits, bits | np.uint32(0x80000000))
    key = ((~ascending).astype(np.uint64) << np.uint64(32)) | ids.astype(np.uint64)
    return np.argsort(key, axis=1).astype(np.int64)


def merge_top_k(first: TopK, second: TopK, k: int) -> TopK:
    """Top ``k`` per row of the union of two partial results over disjoint ids."""
    ids = np.concatenate([first.indices, second.indices], axis=1)
    values = np.concatenate([first.values, second.values], axis=1)
    values = np.where(ids >= 0, values, -np.inf).astype(values.dtype)
    # Missing entries sort last: give them an id larger than any real one.
    sort_ids = np.where(ids >= 0, ids, np.iinfo(np.int32).max)
    order = _row_order(values, sort_ids)[:, :k]
    out = TopK.empty(ids.shape[0], k, values.dtype)
    width = order.shape[1]
    out.indices[:, :width] = np.take_along_axis(ids, order, axis=1)
    out.values[:, :width] = np.take_along_axis(values, order, axis=1)
    return out


def offset_rows(top: TopK, offset: int) -> TopK:
    """``top`` with every present index shifted by ``offset`` (blocks to global ids)."""
    shifted = np.where(top.indices >= 0, top.indices + offset, -1).astype(np.int32)
    return TopK(shifted, top.values)


def top_k_union(
    scores: FloatMatrix | sp.spmatrix | sp.sparray, k_row: int, k_column: int | None = None
) -> tuple[IntArray, IntArray]:
    """Each row's top ``k_row`` and each column's top ``k_column`` (default ``k_row``)
    entries of ``scores``, union, as ``(row_idx, column_idx)`` sorted by row then column.

    Dense (n_rows, n_columns): every entry competes except -inf ones; worked in row and
    column chunks, so no temporary of the full size is formed. Sparse: only stored entries
    compete (explicit zeros included). Ties by index ascending (see the module docstring).
    """
    k_column = k_row if k_column is None else k_column
    if k_row < 0 or k_column < 0:
        raise ValueError("k must be non-negative")
    if sp.issparse(scores):
        return _sparse_union(sp.coo_matrix(scores), k_row, k_column)
    values = np.asarray(scores)
    if values.ndim != 2:
        raise ValueError(f"scores must be 2-D, got shape {values.shape}")
    n_rows, n_columns = values.shape
    parts_rows: list[IntArray] = []
    parts_columns: list[IntArray] = []
    step = max(1, _CHUNK_ELEMENTS // max(n_columns, 1))
    for start in range(0, n_rows, step):
        top = top_k_rows(values[start : start + step], k_row)
        r, c = np.nonzero(top.indices >= 0)
        parts_rows.append(r.astype(np.int64) + start)
        parts_columns.append(top.indices[r, c].astype(np.int64))
    step = max(1, _CHUNK_ELEMENTS // max(n_rows, 1))
    for start in range(0, n_columns, step):
        top = top_k_rows(np.ascontiguousarray(values[:, start : start + step].T), k_column)
        c, r = np.nonzero(top.indices >= 0)
        parts_columns.append(c.astype(np.int64) + start)
        parts_rows.append(top.indices[c, r].astype(np.int64))
    return _distinct_pairs(parts_rows, parts_columns, n_columns)


def top_k_mask(scores: FloatMatrix, k_row: int, k_column: int | None = None) -> np.ndarray:
    """Boolean (n_rows, n_columns) mask of :func:`top_k_union` of a dense matrix."""
    rows, columns = top_k_union(scores, k_row, k_column)
    mask = np.zeros(np.shape(scores), dtype=bool)
    mask[rows, columns] = True
    return mask


def _sparse_union(coo: sp.coo_matrix, k_row: int, k_column: int) -> tuple[IntArray, IntArray]:
    rows, columns = coo.row.astype(np.int64), coo.col.astype(np.int64)
    values = np.asarray(coo.data)
    keep = _rank_within(rows, columns, values) < k_row
    keep |= _rank_within(columns, rows, values) < k_column
    return _distinct_pairs([rows[keep]], [columns[keep]], coo.shape[1])


def _rank_within(
    group: IntArray, other: IntArray, values: npt.NDArray[np.floating]
) -> npt.NDArray[np.int64]:
    """Rank of each entry within its group: by value descending, then ``other`` ascending."""
    order = np.lexsort((other, -values.astype(np.float64), group))
    sorted_group = group[order]
    first = np.searchsorted(sorted_group, sorted_group, side="left")
    ranks = np.empty(group.size, dtype=np.int64)
    ranks[order] = np.arange(group.size) - first
    return ranks


def _distinct_pairs(
    parts_rows: list[IntArray], parts_columns: list[IntArray], n_columns: int
) -> tuple[IntArray, IntArray]:
    rows = np.concatenate(parts_rows) if parts_rows else np.zeros(0, np.int64)
    columns = np.concatenate(parts_columns) if parts_columns else np.zeros(0, np.int64)
    width = max(n_columns, 1)
    key = np.unique(rows * width + columns)
    return key // width, key % width
