"""The affinity result: scores of (paper, reviewer) pairs with the parameters behind them.

An :class:`Affinity` holds either every pair (a float32 matrix) or, when that matrix would
exceed the run's memory bound, only each paper's top reviewers and each reviewer's top
papers (CSR). It answers single scores and rankings, and writes the OpenReview scores CSV
``paper_id,reviewer_id,score`` (every pair, or each side's top K through
:func:`matching.topk.top_k_union`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd
import scipy.sparse as sp

from matching.topk import top_k_union
from recommender.affinity.params import ScoringParams
from recommender.io.atomic import temporary_beside
from recommender.io.safe_csv import escape_cell

FloatMatrix = npt.NDArray[np.float32]

CSV_CHUNK_PAIRS = 2_000_000
"""Pairs formatted at once when writing a scores CSV (bounds the writer's memory)."""


@dataclass(frozen=True, eq=False)
class Affinity:
    """Scores of (paper, reviewer) pairs, higher = better.

    ``scores``: float32 (n_papers, n_reviewers), every pair — or None when the full matrix
    was too large to keep (see :data:`recommender.affinity.options.DENSE_LIMIT_BYTES`);
    then ``kept`` holds the kept pairs (each paper's top ``kept_per_paper`` reviewers and
    each reviewer's top ``kept_per_reviewer`` papers, union) as CSR float32 (n_papers,
    n_reviewers) whose stored entries (explicit zeros included) are the pairs.
    :meth:`score` of a pair that was not kept returns NaN; :meth:`top_reviewers` and
    :meth:`top_papers` rank the kept pairs; :meth:`to_frame` / :meth:`write_csv` write the
    kept pairs (every pair when ``scores`` is present). ``params``: what produced them.
    """

    paper_ids: tuple[str, ...]
    reviewer_ids: tuple[str, ...]
    scores: FloatMatrix | None
    params: ScoringParams = field(default_factory=ScoringParams)
    kept: sp.csr_matrix | None = None
    kept_per_paper: int = 0
    kept_per_reviewer: int = 0

    def __post_init__(self) -> None:
        shape = (len(self.paper_ids), len(self.reviewer_ids))
        if self.scores is None and self.kept is None:
            raise ValueError("an Affinity needs scores (every pair) or kept (CSR of pairs)")
        if self.scores is not None and self.scores.shape != shape:
            raise ValueError(
                f"scores shape {self.scores.shape} != (n_papers={len(self.paper_ids)}, "
                f"n_reviewers={len(self.reviewer_ids)})"
            )
        if self.kept is not None:
            if self.kept.shape != shape:
                raise ValueError(f"kept shape {self.kept.shape} != {shape}")
            kept = sp.csr_matrix(self.kept, dtype=np.float32)
            kept.sort_indices()
            object.__setattr__(self, "kept", kept)

    @property
    def is_dense(self) -> bool:
        """True when every pair's score is held (``scores`` is not None)."""
        return self.scores is not None

    @property
    def n_pairs(self) -> int:
        """Pairs held: every pair when dense, else the kept ones."""
        if self.scores is not None:
            return int(self.scores.size)
        assert self.kept is not None
        return int(self.kept.nnz)

    def _paper_index(self, paper_id: str) -> int:
        try:
            return self._paper_lookup[paper_id]
        except KeyError:
            raise KeyError(f"unknown paper id {paper_id!r}") from None

    def _reviewer_index(self, reviewer_id: str) -> int:
        try:
            return self._reviewer_lookup[reviewer_id.removeprefix("~")]
        except KeyError:
            raise KeyError(f"unknown reviewer id {reviewer_id!r}") from None

    @property
    def _paper_lookup(self) -> dict[str, int]:
        lookup = self.__dict__.get("_papers")
        if lookup is None:
            lookup = {p: i for i, p in enumerate(self.paper_ids)}
            object.__setattr__(self, "_papers", lookup)
        return lookup

    @property
    def _reviewer_lookup(self) -> dict[str, int]:
        lookup = self.__dict__.get("_reviewers")
        if lookup is None:
            lookup = {r.removeprefix("~"): i for i, r in enumerate(self.reviewer_ids)}
            object.__setattr__(self, "_reviewers", lookup)
        return lookup

    def _kept_by_column(self) -> sp.csc_matrix:
        columns = self.__dict__.get("_kept_csc")
        if columns is None:
            assert self.kept is not None
            columns = self.kept.tocsc()
            columns.sort_indices()
            object.__setattr__(self, "_kept_csc", columns)
        return columns

    def score(self, paper_id: str, reviewer_id: str) -> float:
        """The pair's score; NaN when the full matrix was not kept and this pair was not."""
        p, r = self._paper_index(paper_id), self._reviewer_index(reviewer_id)
        if self.scores is not None:
            return float(self.scores[p, r])
        assert self.kept is not None
        start, stop = self.kept.indptr[p], self.kept.indptr[p + 1]
        row = self.kept.indices[start:stop]
        at = int(np.searchsorted(row, r))
        if at < row.size and row[at] == r:
            return float(self.kept.data[start + at])
        return math.nan

    def top_reviewers(self, paper_id: str, n: int = 10) -> list[tuple[str, float]]:
        """The ``n`` best reviewers of a paper, best first (ties by reviewer order)."""
        p = self._paper_index(paper_id)
        if self.scores is not None:
            row = self.scores[p]
            order = np.argsort(-row, kind="stable")[:n]
            return [(self.reviewer_ids[i], float(row[i])) for i in order]
        assert self.kept is not None
        start, stop = self.kept.indptr[p], self.kept.indptr[p + 1]
        return self._ranked(self.kept.indices[start:stop], self.kept.data[start:stop], n, True)

    def top_papers(self, reviewer_id: str, n: int = 10) -> list[tuple[str, float]]:
        """The ``n`` papers a reviewer fits best, best first."""
        r = self._reviewer_index(reviewer_id)
        if self.scores is not None:
            column = self.scores[:, r]
            order = np.argsort(-column, kind="stable")[:n]
            return [(self.paper_ids[i], float(column[i])) for i in order]
        columns = self._kept_by_column()
        start, stop = columns.indptr[r], columns.indptr[r + 1]
        return self._ranked(columns.indices[start:stop], columns.data[start:stop], n, False)

    def _ranked(
        self,
        ids: npt.NDArray[np.int32],
        values: npt.NDArray[np.float32],
        n: int,
        reviewers: bool,
    ) -> list[tuple[str, float]]:
        names = self.reviewer_ids if reviewers else self.paper_ids
        order = np.argsort(-values, kind="stable")[:n]  # ids ascending: ties by order
        return [(names[int(ids[i])], float(values[i])) for i in order]

    def kept_pairs(self, top_k: int | None = None) -> sp.csr_matrix:
        """The pairs :meth:`write_csv` writes, as CSR float32 (n_papers, n_reviewers).

        ``top_k=None``: every pair (dense) or the kept ones. ``top_k=N``: each paper's top
        N reviewers and each reviewer's top N papers, union (ties by index, see
        :mod:`matching.topk`). Without the full matrix this is exact only for
        ``N <= min(kept_per_paper, kept_per_reviewer)``; larger ``N`` raises ValueError.
        """
        if top_k is not None and top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {top_k}")
        if self.scores is None:
            assert self.kept is not None
            if top_k is None:
                return self.kept
            limit = min(self.kept_per_paper, self.kept_per_reviewer)
            if top_k > limit:
                raise ValueError(
                    f"top_k={top_k} exceeds the {limit} pairs per paper/reviewer kept without "
                    "the full matrix (raise keep_per_paper/keep_per_reviewer)"
                )
            if top_k == self.kept_per_paper == self.kept_per_reviewer:
                return self.kept  # exactly what was kept
            rows, cols = top_k_union(self.kept, top_k)
            return csr_from_pairs(
                rows, cols, _stored_values(self.kept, rows, cols), self.kept.shape
            )
        if top_k is None:
            n_rows, n_cols = self.scores.shape
            return sp.csr_matrix(
                (
                    self.scores.reshape(-1),
                    np.tile(np.arange(n_cols, dtype=np.int32), n_rows),
                    np.arange(n_rows + 1, dtype=np.int64) * n_cols,
                ),
                shape=self.scores.shape,
            )
        rows, cols = top_k_union(self.scores, top_k)
        return csr_from_pairs(rows, cols, self.scores[rows, cols], self.scores.shape)

    def iter_pairs(
        self, *, top_k: int | None = None, chunk_pairs: int = CSV_CHUNK_PAIRS
    ) -> Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], FloatMatrix]]:
        """The written pairs as ``(paper_idx, reviewer_idx, score)`` arrays of about
        ``chunk_pairs`` pairs, by paper then reviewer (see :meth:`kept_pairs`)."""
        n_papers, n_reviewers = len(self.paper_ids), len(self.reviewer_ids)
        if self.scores is not None and top_k is None:
            rows = max(1, chunk_pairs // max(n_reviewers, 1))
            for start in range(0, n_papers, rows):
                block = self.scores[start : start + rows]
                yield (
                    np.repeat(np.arange(start, start + block.shape[0]), n_reviewers),
                    np.tile(np.arange(n_reviewers), block.shape[0]),
                    block.reshape(-1),
                )
            return
        kept = self.kept_pairs(top_k)
        counts = np.diff(kept.indptr)
        start = 0
        while start < n_papers:
            stop = int(np.searchsorted(kept.indptr, kept.indptr[start] + chunk_pairs, "right"))
            stop = min(max(stop - 1, start + 1), n_papers)
            lo, hi = kept.indptr[start], kept.indptr[stop]
            yield (
                np.repeat(np.arange(start, stop), counts[start:stop]),
                kept.indices[lo:hi].astype(np.int64),
                kept.data[lo:hi],
            )
            start = stop

    def iter_frames(
        self, *, top_k: int | None = None, chunk_pairs: int = CSV_CHUNK_PAIRS
    ) -> Iterator[pd.DataFrame]:
        """The written pairs as DataFrames ``paper_id, reviewer_id, score`` of about
        ``chunk_pairs`` rows, by paper then reviewer (reviewer ids without ``~``)."""
        papers = np.array(self.paper_ids, dtype=object)
        reviewers = np.array([r.removeprefix("~") for r in self.reviewer_ids], dtype=object)
        for rows, cols, values in self.iter_pairs(top_k=top_k, chunk_pairs=chunk_pairs):
            yield pd.DataFrame(
                {
                    "paper_id": papers[rows],
                    "reviewer_id": reviewers[cols],
                    "score": values.astype(np.float64),
                }
            )

    def iter_csv(
        self, *, top_k: int | None = None, chunk_pairs: int = CSV_CHUNK_PAIRS
    ) -> Iterator[str]:
        """The rows of :meth:`write_csv` (no header) as text chunks: ids spreadsheet-safe
        (:func:`recommender.io.safe_csv.escape_cell`) and quoted as CSV needs, scores with six
        significant digits (``%.6g``); pairs whose score is not finite (excluded by the
        caller) are left out. Formatted directly, several times faster than a DataFrame's
        ``to_csv`` on millions of pairs."""
        papers = [_csv_cell(escape_cell(p)) for p in self.paper_ids]
        reviewers = [_csv_cell(escape_cell(r.removeprefix("~"))) for r in self.reviewer_ids]
        for rows, cols, values in self.iter_pairs(top_k=top_k, chunk_pairs=chunk_pairs):
            finite = np.isfinite(values)
            if not finite.all():
                rows, cols, values = rows[finite], cols[finite], values[finite]
            yield "".join(
                [
                    f"{papers[p]},{reviewers[r]},{v:.6g}\n"
                    for p, r, v in zip(
                        rows.tolist(),
                        cols.tolist(),
                        values.astype(np.float64).tolist(),
                        strict=True,
                    )
                ]
            )

    def to_frame(self, *, top_k: int | None = None) -> pd.DataFrame:
        """The written pairs as rows ``paper_id, reviewer_id, score`` (see :meth:`write_csv`)."""
        frames = list(self.iter_frames(top_k=top_k))
        if not frames:
            return pd.DataFrame(
                {
                    "paper_id": pd.Series([], dtype=object),
                    "reviewer_id": pd.Series([], dtype=object),
                    "score": pd.Series([], dtype=np.float64),
                }
            )
        return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]

    def write_csv(
        self,
        path: str | os.PathLike[str],
        *,
        top_k: int | None = None,
        chunk_pairs: int = CSV_CHUNK_PAIRS,
    ) -> None:
        """Write ``paper_id,reviewer_id,score`` (header, no index) atomically, in chunks of
        ``chunk_pairs`` rows: every pair (dense, ``top_k=None``), the kept pairs, or each
        paper's and each reviewer's top ``top_k`` (see :meth:`kept_pairs`)."""
        target = Path(path)
        handle, temporary = temporary_beside(target)
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
                stream.write("paper_id,reviewer_id,score\n")
                for text in self.iter_csv(top_k=top_k, chunk_pairs=chunk_pairs):
                    stream.write(text)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def _csv_cell(text: str) -> str:
    """``text`` as one CSV cell (quoted when it holds a comma, quote or line break), as
    Python's csv module and pandas write it."""
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _stored_values(
    matrix: sp.csr_matrix, rows: npt.NDArray[np.int64], cols: npt.NDArray[np.int64]
) -> FloatMatrix:
    """Values of stored entries (given by row and column) of a CSR with sorted indices."""
    width = max(matrix.shape[1], 1)
    stored = np.repeat(np.arange(matrix.shape[0], dtype=np.int64), np.diff(matrix.indptr))
    keys = stored * width + matrix.indices
    return np.asarray(matrix.data[np.searchsorted(keys, rows * width + cols)], dtype=np.float32)


def csr_from_pairs(
    rows: npt.NDArray[np.int64],
    cols: npt.NDArray[np.int64],
    values: npt.NDArray[np.float32],
    shape: tuple[int, int],
) -> sp.csr_matrix:
    """CSR whose stored entries are exactly the given distinct pairs (zeros kept)."""
    order = np.lexsort((cols, rows))
    rows, cols = rows[order], cols[order]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=shape[0]))])
    return sp.csr_matrix(
        (np.asarray(values, np.float32)[order], cols.astype(np.int32), indptr.astype(np.int64)),
        shape=shape,
    )
