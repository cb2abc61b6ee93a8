"""Sparse candidate pairs from a score matrix: each paper's and each reviewer's top-K.

Keeping the union of every paper's top-K reviewers and every reviewer's top-K papers keeps
the pairs an optimal assignment is likely to use while shrinking 20k x 20k (4e8) pairs to
about 2e6. Conflicted pairs are never candidates; forced pairs always are.
:func:`sparse_problem` doubles K while the sparse problem is infeasible but the full one
may not be (checked by max flow), so pruning never turns a feasible venue infeasible.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from matching.diagnose import diagnose
from matching.problem import AssignmentProblem, FloatArray, Infeasible, IntArray, sorted_member
from matching.topk import TopK, merge_top_k, offset_rows, top_k_rows

ScoreSource: TypeAlias = (
    npt.NDArray[np.floating] | Callable[[], Iterable[np.ndarray]] | Iterable[np.ndarray]
)
PairMask: TypeAlias = tuple[npt.ArrayLike, npt.ArrayLike] | sp.spmatrix | sp.sparray | np.ndarray


def top_k_pairs(
    scores: ScoreSource,
    k_paper: int,
    k_reviewer: int | None = None,
    *,
    conflicts: PairMask | None = None,
    forced: PairMask | None = None,
    shape: tuple[int, int] | None = None,
) -> tuple[IntArray, IntArray, FloatArray]:
    """Union of each paper's top ``k_paper`` and each reviewer's top ``k_reviewer``
    (default ``k_paper``) non-conflicted pairs, plus the forced pairs. Ties are broken
    by index (:mod:`matching.topk`), so the pairs do not depend on how rows are blocked.

    ``scores``: a dense (n_papers, n_reviewers) array, or row blocks (2-D arrays of
    consecutive papers, all with n_reviewers columns) as an iterable or a callable
    returning one. ``conflicts``/``forced``: (paper_idx, reviewer_idx) arrays, or a boolean
    mask (dense or scipy sparse) of the full shape. ``shape`` is needed for blocks only
    when the masks are index arrays. Returns (paper_idx, reviewer_idx, score), sorted by
    paper then reviewer.
    """
    k_reviewer = k_paper if k_reviewer is None else k_reviewer
    if k_paper < 0 or k_reviewer < 0:
        raise ValueError("k must be non-negative")
    blocks = _blocks(scores)
    first = next(blocks, None)
    if first is None:
        raise ValueError("scores hold no rows")
    n_reviewers = first.shape[1]
    conflict_rows = _row_lookup(conflicts, shape, n_reviewers, "conflicts")
    forced_rows = _row_lookup(forced, shape, n_reviewers, "forced")
    best = TopK.empty(n_reviewers, k_reviewer, np.float64)  # each reviewer's top papers
    parts_paper: list[IntArray] = []
    parts_reviewer: list[IntArray] = []
    parts_score: list[FloatArray] = []
    row0 = 0
    for block in _chain(first, blocks):
        values = np.array(block, dtype=np.float64)
        if values.ndim != 2 or values.shape[1] != n_reviewers:
            raise ValueError(
                f"score block at row {row0} has shape {values.shape}, "
                f"expected (rows, {n_reviewers})"
            )
        if not np.all(np.isfinite(values)):
            bad = np.argwhere(~np.isfinite(values))[0]
            raise ValueError(f"score at (paper {row0 + bad[0]}, reviewer {bad[1]}) is not finite")
        rows = values.shape[0]
        forced_r, forced_c = forced_rows(row0, row0 + rows)
        parts_paper.append(forced_r + row0)
        parts_reviewer.append(forced_c)
        parts_score.append(values[forced_r, forced_c])
        conflict_r, conflict_c = conflict_rows(row0, row0 + rows)
        values[conflict_r, conflict_c] = -np.inf
        top = top_k_rows(values, k_paper)
        keep = top.indices >= 0
        parts_paper.append(np.broadcast_to(np.arange(rows)[:, None] + row0, keep.shape)[keep])
        parts_reviewer.append(top.indices[keep].astype(np.int64))
        parts_score.append(np.asarray(top.values[keep], dtype=np.float64))
        if k_reviewer > 0:
            column_top = top_k_rows(np.ascontiguousarray(values.T), k_reviewer)
            best = merge_top_k(best, offset_rows(column_top, row0), k_reviewer)
        row0 += rows
    keep = best.indices >= 0
    parts_paper.append(best.indices[keep].astype(np.int64))
    parts_reviewer.append(np.broadcast_to(np.arange(n_reviewers)[:, None], keep.shape)[keep])
    parts_score.append(np.asarray(best.values[keep], dtype=np.float64))
    paper = np.concatenate(parts_paper).astype(np.int64)
    reviewer = np.concatenate(parts_reviewer).astype(np.int64)
    score = np.concatenate(parts_score)
    keys = paper * n_reviewers + reviewer
    order = np.argsort(keys, kind="stable")
    distinct = np.r_[True, keys[order][1:] != keys[order][:-1]]
    first_index = order[distinct]
    return paper[first_index], reviewer[first_index], score[first_index]


def sparse_problem(
    scores: ScoreSource,
    *,
    paper_ids: Sequence[str],
    reviewer_ids: Sequence[str],
    demand: int | npt.ArrayLike,
    max_load: int | npt.ArrayLike,
    min_load: int | npt.ArrayLike = 0,
    k: int = 50,
    k_reviewer: int | None = None,
    conflicts: PairMask | None = None,
    forced: PairMask | None = None,
    side_constraints: Sequence[Any] = (),
    grow: bool = True,
) -> AssignmentProblem:
    """An :class:`AssignmentProblem` over the top-K candidate pairs.

    With ``grow`` (default), while the sparse problem fails the max-flow feasibility check
    K (both sides) is doubled and the pairs rebuilt; once K covers every pair the problem is
    the full one and its infeasibility is raised as ``Infeasible(diagnosis)``. Growing
    re-reads ``scores``, so pass an array, a sequence of blocks or a callable for blocks.
    """
    shape = (len(paper_ids), len(reviewer_ids))
    k_reviewer = k if k_reviewer is None else k_reviewer
    reread = isinstance(scores, np.ndarray) or callable(scores) or isinstance(scores, Sequence)
    while True:
        paper, reviewer, score = top_k_pairs(
            scores, k, k_reviewer, conflicts=conflicts, forced=forced, shape=shape
        )
        forced_mask = np.zeros(len(paper), dtype=bool)
        if forced is not None:
            keys = paper * shape[1] + reviewer
            forced_p, forced_r = _as_index_arrays(forced, shape)
            forced_mask = sorted_member(np.sort(forced_p * shape[1] + forced_r), keys)
        if conflicts is not None and np.any(forced_mask):
            conflict_p, conflict_r = _as_index_arrays(conflicts, shape)
            clash = sorted_member(
                np.sort(conflict_p * shape[1] + conflict_r), paper * shape[1] + reviewer
            )
            if np.any(clash & forced_mask):
                i = int(np.flatnonzero(clash & forced_mask)[0])
                raise ValueError(
                    f"pair ({paper_ids[paper[i]]}, {reviewer_ids[reviewer[i]]}) "
                    "is both forced and a conflict"
                )
        problem = AssignmentProblem(
            paper_ids=tuple(paper_ids),
            reviewer_ids=tuple(reviewer_ids),
            pair_paper=paper,
            pair_reviewer=reviewer,
            pair_score=score,
            demand=_per_item(demand, shape[0]),
            min_load=_per_item(min_load, shape[1]),
            max_load=_per_item(max_load, shape[1]),
            forced=forced_mask,
            side_constraints=tuple(side_constraints),
        )
        if not grow:
            return problem
        diagnosis = diagnose(problem)
        if not diagnosis.causes:
            return problem
        if k >= shape[1] and k_reviewer >= shape[0]:
            raise Infeasible(diagnosis)
        if not reread:
            raise ValueError(
                "the sparse problem is infeasible and K must grow, but the score "
                "blocks cannot be read twice; pass an array or a callable"
            )
        k, k_reviewer = min(2 * k, shape[1]), min(2 * k_reviewer, shape[0])


def _per_item(value: int | npt.ArrayLike, n: int) -> IntArray:
    array = np.asarray(value)
    return np.full(n, int(array), dtype=np.int64) if array.ndim == 0 else array.astype(np.int64)


def _blocks(scores: ScoreSource) -> Iterator[np.ndarray]:
    if isinstance(scores, np.ndarray):
        if scores.ndim != 2:
            raise ValueError(f"score matrix must be 2-D, got shape {scores.shape}")
        return iter([scores])
    if callable(scores):
        return iter(scores())
    return iter(scores)


def _chain(first: np.ndarray, rest: Iterator[np.ndarray]) -> Iterator[np.ndarray]:
    yield first
    yield from rest


def _as_index_arrays(mask: PairMask, shape: tuple[int, int] | None) -> tuple[IntArray, IntArray]:
    if isinstance(mask, tuple):
        papers, reviewers = (np.asarray(a, dtype=np.int64) for a in mask)
        if papers.shape != reviewers.shape:
            raise ValueError("paper and reviewer index arrays differ in length")
        return papers, reviewers
    if sp.issparse(mask):
        coo = sp.coo_array(mask)
        nonzero = coo.data != 0
        return coo.row[nonzero].astype(np.int64), coo.col[nonzero].astype(np.int64)
    dense = np.asarray(mask, dtype=bool)
    if shape is not None and dense.shape != shape:
        raise ValueError(f"mask has shape {dense.shape}, expected {shape}")
    papers, reviewers = np.nonzero(dense)
    return papers.astype(np.int64), reviewers.astype(np.int64)


def _row_lookup(
    mask: PairMask | None, shape: tuple[int, int] | None, n_reviewers: int, name: str
) -> Callable[[int, int], tuple[IntArray, IntArray]]:
    """A function giving the (local row, column) entries of ``mask`` in rows [a, b)."""
    if mask is None:
        empty = np.zeros(0, dtype=np.int64)
        return lambda a, b: (empty, empty)
    papers, reviewers = _as_index_arrays(mask, shape)
    if len(reviewers) and (reviewers.min() < 0 or reviewers.max() >= n_reviewers):
        raise ValueError(f"{name} holds a reviewer index outside 0..{n_reviewers - 1}")
    order = np.argsort(papers, kind="stable")
    papers, reviewers = papers[order], reviewers[order]

    def lookup(a: int, b: int) -> tuple[IntArray, IntArray]:
        lo, hi = np.searchsorted(papers, [a, b])
        return papers[lo:hi] - a, reviewers[lo:hi]

    return lookup
