"""Aggregation and finishing: from publication similarities to final reviewer scores.

Two steps, each written once and used by every scoring path (dense, blockwise, Dask, one
row for an explanation):

1. :func:`aggregate`: each reviewer's publication similarities become one raw score
   (``max``, ``mean``, ``topk`` mean, ``softmax``-weighted mean; recency weights).
2. The finishing step, in two parts because blockwise scoring sees one paper block at a
   time: :func:`finish_rows` (row-local: paper centering) on each block, while
   :func:`observed_range` records the range of the raw scores; then :func:`finish` (global:
   min-max scaling to [0, 1] for ``combined``, reviewers without publications at 0) once
   the range of the whole matrix is known. :func:`finish_matrix` is both parts on a full
   matrix.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from recommender.affinity.params import ScoringParams

FloatMatrix = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]


def aggregate(
    similarity: FloatMatrix,
    offsets: npt.NDArray[np.int64],
    params: ScoringParams,
    *,
    weights: npt.NDArray[np.float32] | None = None,
    scale: float = 1.0,
) -> FloatMatrix:
    """Aggregate publication similarities into raw reviewer scores.

    ``similarity``: (n_papers, n_pubs), reviewer r owning columns
    ``offsets[r]:offsets[r+1]`` (``offsets[0] == 0``); ``weights`` (n_pubs,) recency
    weights (None: all 1). ``scale``: the unit of the softmax temperature. Returns float32
    (n_papers, n_reviewers); reviewers without publications get 0. max/topk use
    ``weight * similarity``; mean/softmax use weighted means.
    """
    n_papers = similarity.shape[0]
    counts = np.diff(offsets)
    n_reviewers = counts.shape[0]
    out = np.zeros((n_papers, n_reviewers), dtype=np.float32)
    if n_papers == 0 or not counts.any():
        return out
    if weights is not None and np.all(weights == 1.0):
        weights = None
    method = params.aggregation
    fast = _aggregate_unweighted(similarity, offsets, counts, params) if weights is None else None
    if fast is not None:
        return fast
    width = int(counts.max())
    # Padded (n_reviewers, width) table of publication columns; invalid slots masked.
    slots = np.arange(width)
    valid = slots[None, :] < counts[:, None]
    columns = np.where(valid, offsets[:-1, None] + slots[None, :], 0)
    w = np.ones(similarity.shape[1], np.float32) if weights is None else weights
    values = similarity[:, columns]  # (n_papers, n_reviewers, width)
    wv = np.where(valid, w[columns], 0.0).astype(np.float32)
    has = counts > 0
    if method in ("max", "topk"):
        weighted = np.where(valid[None], values * wv[None], -np.inf)
        if method == "max":
            result = weighted.max(axis=2)
        else:
            k = min(params.k, width)
            top = -np.partition(-weighted, k - 1, axis=2)[:, :, :k] if k < width else weighted
            top = np.where(np.isfinite(top), top, 0.0)
            result = top.sum(axis=2) / np.minimum(counts, params.k).clip(min=1)[None, :]
    elif method == "mean":
        total = wv.sum(axis=1)
        result = (values * wv[None]).sum(axis=2) / np.where(total > 0, total, 1.0)[None, :]
    else:  # softmax
        temperature = softmax_temperature(params, scale)
        masked = np.where(valid[None], values, -np.inf)
        peak = masked.max(axis=2, keepdims=True)
        peak = np.where(np.isfinite(peak), peak, 0.0)
        e = np.exp((masked - peak) / temperature) * wv[None]
        total = e.sum(axis=2)
        result = (e * np.where(valid[None], values, 0.0)).sum(axis=2) / np.where(
            total > 0, total, 1.0
        )
    out[:, has] = result[:, has]
    return out


MIN_TEMPERATURE = 1e-6
"""Floor of the softmax temperature in similarity units: dividing by less overflows (or,
as float32, divides by zero) and would turn scores into NaN."""


def softmax_temperature(params: ScoringParams, scale: float) -> np.float32:
    """The softmax temperature in similarity units, ``temperature x scale``, floored at
    :data:`MIN_TEMPERATURE` (float32: the dtype it divides)."""
    return np.float32(max(params.temperature * scale, MIN_TEMPERATURE))


def _aggregate_unweighted(
    similarity: FloatMatrix,
    offsets: npt.NDArray[np.int64],
    counts: npt.NDArray[np.int64],
    params: ScoringParams,
) -> FloatMatrix | None:
    """The same values as the general path for common shapes, without its padded gather
    copy (None where no shortcut applies): at most one publication per reviewer, max with
    every reviewer holding publications, and mean/topk when every profile has the same size
    (a reshape view)."""
    method = params.aggregation
    if counts.max() <= 1:
        # One publication per reviewer (e.g. mean profiles): every aggregate is its value.
        if counts.min() == 1:
            return similarity.astype(np.float32, copy=False)
        out = np.zeros((similarity.shape[0], counts.size), dtype=np.float32)
        has = counts > 0
        out[:, has] = similarity[:, offsets[:-1][has]]
        return out
    if method == "max" and counts.all():
        return np.maximum.reduceat(similarity, offsets[:-1], axis=1).astype(np.float32, copy=False)
    width = int(counts[0])
    if method not in ("topk", "mean") or not width or not np.all(counts == width):
        return None
    values = similarity.reshape(similarity.shape[0], counts.size, width)
    if method == "mean":
        return (values.sum(axis=2) / np.float32(width)).astype(np.float32)
    k = min(params.k, width)
    top = -np.partition(-values, k - 1, axis=2)[:, :, :k] if k < width else values
    return (top.sum(axis=2) / np.minimum(counts, params.k).clip(min=1)[None, :]).astype(np.float32)


def is_linear(params: ScoringParams) -> bool:
    """Whether aggregation commutes with the dot product: a (recency-weighted) mean of a
    reviewer's cosines is the dot product with the weighted mean of their publication
    vectors, so a venue can be scored against one profile vector per reviewer
    (:func:`mean_profiles`) instead of every publication: ~20x less work."""
    return params.aggregation == "mean"


def mean_profiles(
    vectors: Any, offsets: npt.NDArray[np.int64], weights: npt.NDArray[np.float32] | None = None
) -> Any:
    """Each reviewer's weighted mean publication vector: (n_reviewers_with_publications,
    d), CSR for CSR input (TF-IDF), dense float32 otherwise. Reviewers without
    publications have no row (see :func:`profile_offsets`)."""
    counts = np.diff(offsets)
    n_pubs = int(offsets[-1])
    w = np.ones(n_pubs, np.float64) if weights is None else np.asarray(weights, np.float64)
    owner = np.repeat(np.arange(counts.size), counts)
    totals = np.bincount(owner, weights=w, minlength=counts.size)
    has = counts > 0
    rows = np.cumsum(has)[owner] - 1  # row of each publication's owner among non-empty
    share = np.divide(w, totals[owner], out=np.zeros_like(w), where=totals[owner] > 0)
    averaging = sp.csr_matrix(
        (share.astype(np.float32), (rows, np.arange(n_pubs))), shape=(int(has.sum()), n_pubs)
    )
    if sp.issparse(vectors):
        profiles = sp.csr_matrix(averaging @ sp.csr_matrix(vectors, dtype=np.float32))
        profiles.sort_indices()
        return profiles
    return np.asarray(averaging @ np.asarray(vectors, np.float32), dtype=np.float32)


def profile_offsets(offsets: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Offsets over :func:`mean_profiles` rows: one row per reviewer with publications."""
    has = (np.diff(offsets) > 0).astype(np.int64)
    return np.concatenate([[0], np.cumsum(has)]).astype(np.int64)


def aggregation_weights(
    similarity: npt.NDArray[np.float32],
    params: ScoringParams,
    recency: npt.NDArray[np.float32] | None = None,
    *,
    scale: float = 1.0,
) -> npt.NDArray[np.float64]:
    """Weight of each of one reviewer's publications in their aggregate (explanations).

    The aggregate equals ``sum(weights * similarity)``; for mean/softmax the weights sum
    to 1, for max/topk they are the recency weights of the chosen publications (over k).
    """
    n = similarity.shape[0]
    w = np.ones(n) if recency is None else recency.astype(np.float64)
    if n == 0:
        return w
    s = similarity.astype(np.float64)
    method = params.aggregation
    if method == "max":
        out = np.zeros(n)
        best = int(np.argmax(s * w))
        out[best] = w[best]
        return out
    if method == "topk":
        k = min(params.k, n)
        chosen = np.argsort(-(s * w), kind="stable")[:k]
        out = np.zeros(n)
        out[chosen] = w[chosen] / k
        return out
    if method == "mean":
        return w / w.sum() if w.sum() > 0 else w
    e = np.exp((s - s.max()) / softmax_temperature(params, scale)) * w
    return e / e.sum() if e.sum() > 0 else e


# --------------------------------------------------------------------- finishing
def finish_rows(
    raw: FloatMatrix, has_publications: BoolArray, params: ScoringParams
) -> FloatMatrix:
    """Row-local finishing of raw scores (n_papers, n_reviewers): with ``paper_centering``
    each row's mean over reviewers with publications is subtracted (in place)."""
    if params.paper_centering and has_publications.any() and raw.size:
        # Always through the mask: its copy's memory order fixes the summation order, so
        # the means (and scores) do not depend on whether every reviewer has publications.
        raw -= raw[:, has_publications].mean(axis=1, keepdims=True)
    return raw


def observed_range(rows: FloatMatrix, has_publications: BoolArray) -> tuple[float, float]:
    """(low, high) of the scores of reviewers with publications; (inf, -inf) if none."""
    if not has_publications.any() or rows.shape[0] == 0:
        return math.inf, -math.inf
    valid = rows if has_publications.all() else rows[:, has_publications]
    return float(valid.min()), float(valid.max())


def finish(
    values: FloatMatrix, params: ScoringParams, value_range: tuple[float, float] | None
) -> FloatMatrix:
    """Global finishing of (row-finished) scores: for ``combined`` min-max scaling with
    the range of the whole matrix (all zero when it is empty or flat); others unchanged."""
    if not params.scales_to_unit_range:
        return values.astype(np.float32, copy=False)
    low, high = value_range if value_range is not None else (math.inf, -math.inf)
    if not high > low:
        return np.zeros_like(values, dtype=np.float32)
    return ((values - np.float32(low)) / np.float32(high - low)).astype(np.float32)


def finish_matrix(
    raw: FloatMatrix, has_publications: BoolArray, params: ScoringParams
) -> FloatMatrix:
    """Both finishing parts on a full raw matrix: final float32 scores; reviewers without
    publications score 0."""
    rows = finish_rows(raw, has_publications, params)
    scores = finish(rows, params, observed_range(rows, has_publications))
    scores[:, ~has_publications] = 0.0
    return scores
