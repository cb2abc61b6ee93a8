"""Scoring one paper block against every reviewer, and merging the blocks' top-K.

:func:`score_paper_block` computes a paper block's (n_block, n_reviewers) float32 scores,
publication block by publication block (dense GEMM for embeddings and the TF-IDF head,
sparse product for the tail), aggregated per reviewer with
:func:`recommender.affinity.aggregation.aggregate` and finished row by row
(:func:`~recommender.affinity.aggregation.finish_rows`), then reduces them to each paper's
top ``k_per_paper`` reviewers and, within the block, each reviewer's top ``k_per_reviewer``
papers (:class:`BlockResult`). :class:`BlockAccumulator` merges block results in any order
(:mod:`matching.topk`: ties by index, the same kept set whatever the order) into a
:class:`SparseAffinity`, the result of a blockwise run. The local driver is
:func:`recommender.affinity.blockwise.blockwise_affinity`; the Dask one
:func:`recommender.distributed.dask_blockwise_affinity` runs the same functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from matching.topk import TopK, merge_top_k, offset_rows, top_k_rows
from recommender.affinity.aggregation import aggregate, finish, finish_rows, observed_range
from recommender.affinity.block_plan import BlockPlan
from recommender.affinity.params import ScoringParams
from recommender.affinity.similarity import Channel, Vectors

FloatMatrix = npt.NDArray[np.float32]


@dataclass(frozen=True)
class SparseAffinity:
    """Blockwise scores: each paper's top reviewers and each reviewer's top papers.

    Values are *row-finished* scores (aggregated, paper centering applied);
    :attr:`value_range` holds the (low, high) of all of them (reviewers with publications),
    which the global finishing step needs (:meth:`scaled`: min-max to [0, 1] for
    ``combined``). ``dense``: the full row-finished (n_papers, n_reviewers) matrix when it
    was kept, else None.
    """

    n_papers: int
    n_reviewers: int
    by_paper: TopK
    by_reviewer: TopK
    params: ScoringParams
    empty_reviewers: npt.NDArray[np.bool_]
    value_range: tuple[float, float] | None = None
    dense: FloatMatrix | None = None
    parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def k_per_paper(self) -> int:
        return int(self.by_paper.indices.shape[1])

    @property
    def k_per_reviewer(self) -> int:
        return int(self.by_reviewer.indices.shape[1])

    def scaled(self, values: FloatMatrix) -> FloatMatrix:
        """Map row-finished scores to final ones (the global finishing step)."""
        return finish(values, self.params, self.value_range)

    def candidates(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], FloatMatrix]:
        """Union of both top-K sets as parallel arrays ``(paper_idx, reviewer_idx, score)``,
        sorted by paper then reviewer; scores final (scaled). The input shape of
        :class:`matching.problem.AssignmentProblem` candidate pairs."""
        rows_p = np.repeat(np.arange(self.n_papers), self.k_per_paper)
        cols_p = self.by_paper.indices.reshape(-1).astype(np.int64)
        vals_p = self.by_paper.values.reshape(-1)
        cols_r = np.repeat(np.arange(self.n_reviewers), self.k_per_reviewer)
        rows_r = self.by_reviewer.indices.reshape(-1).astype(np.int64)
        vals_r = self.by_reviewer.values.reshape(-1)
        rows = np.concatenate([rows_p, rows_r])
        cols = np.concatenate([cols_p, cols_r])
        vals = np.concatenate([vals_p, vals_r])
        keep = (rows >= 0) & (cols >= 0)
        rows, cols, vals = rows[keep], cols[keep], vals[keep]
        key = rows * max(self.n_reviewers, 1) + cols
        key, first = np.unique(key, return_index=True)
        return rows[first], cols[first], self.scaled(vals[first])

    def to_csr(self) -> sp.csr_matrix:
        """The candidate union as CSR float32 (n_papers, n_reviewers), final scores."""
        rows, cols, vals = self.candidates()
        return sp.csr_matrix(
            (vals, (rows, cols)), shape=(self.n_papers, self.n_reviewers), dtype=np.float32
        )

    def dense_scores(self) -> FloatMatrix:
        """The full final matrix (only when it was kept): empty reviewers score 0."""
        if self.dense is None:
            raise ValueError("the full matrix was not kept (keep_dense=False or too large)")
        out = self.scaled(self.dense)
        out[:, self.empty_reviewers] = 0.0
        return out


# ------------------------------------------------------------------------- scoring
@dataclass(frozen=True)
class BlockResult:
    """Scores of papers [start, start + n) against every reviewer, reduced."""

    start: int
    by_paper: TopK
    by_reviewer: TopK  # reviewer's top papers within this block (global paper ids)
    low: float
    high: float
    dense: FloatMatrix | None


def score_paper_block(
    plan: BlockPlan,
    paper_parts: Sequence[tuple[Vectors, Any]],
    start: int,
    tick: Callable[[float], None] | None = None,
) -> BlockResult:
    """Score one paper block (its channel parts from :func:`paper_block_parts`).
    ``tick(fraction)``: after every publication block, the fraction of this paper block's
    similarities computed (progress within a block that takes long; it may raise)."""
    n_pubs = max(int(plan.offsets[-1]), 1)
    n_rows = paper_parts[0][0].shape[0]
    scores = np.empty((n_rows, plan.n_reviewers), dtype=np.float32)
    for number, (r0, r1) in enumerate(plan.blocks):
        similarity = None
        for channel, (dense_part, tail_part) in zip(plan.channels, paper_parts, strict=True):
            pubs_dense = channel.publication_dense[number]
            if channel.sparse:
                block = dense_part @ pubs_dense
                tail = channel.publication_tail[number]
                if tail_part is not None and tail is not None and tail_part.nnz and tail.nnz:
                    block += (tail_part @ tail).toarray()
            else:
                block = dense_part @ pubs_dense
            if channel.coefficient != 1.0:
                block *= np.float32(channel.coefficient)
            similarity = block if similarity is None else similarity + block
        assert similarity is not None
        if plan.intercept:
            similarity += np.float32(plan.intercept)
        p0, p1 = int(plan.offsets[r0]), int(plan.offsets[r1])
        weights = None if plan.weights is None else plan.weights[p0:p1]
        scores[:, r0:r1] = aggregate(
            similarity,
            plan.offsets[r0 : r1 + 1] - p0,
            plan.params,
            weights=weights,
            scale=plan.scale,
        )
        if tick is not None:
            tick(p1 / n_pubs)
    has_publications = ~plan.empty_reviewers
    finish_rows(scores, has_publications, plan.params)
    low, high = observed_range(scores, has_publications)
    dense = scores.copy() if plan.keep_dense else None
    if not has_publications.all():
        scores[:, ~has_publications] = -np.inf  # never candidates
    by_paper = top_k_rows(scores, plan.k_per_paper)
    by_reviewer = offset_rows(
        top_k_rows(np.ascontiguousarray(scores.T), plan.k_per_reviewer), start
    )
    return BlockResult(start, by_paper, by_reviewer, low, high, dense)


def paper_block_parts(
    plan: BlockPlan, channels: Sequence[Channel], start: int, stop: int
) -> list[tuple[Vectors, Any]]:
    """The channel parts of papers [start, stop) (small: what a task ships to a worker)."""
    return [
        prepared.paper_parts(channel.paper_vectors[start:stop])
        for prepared, channel in zip(plan.channels, channels, strict=True)
    ]


class BlockAccumulator:
    """Merges :class:`BlockResult` s (any order) into a :class:`SparseAffinity`."""

    def __init__(self, plan: BlockPlan, n_papers: int):
        self.plan = plan
        self.n_papers = n_papers
        self.by_paper = TopK.empty(n_papers, plan.k_per_paper)
        self.by_reviewer = TopK.empty(plan.n_reviewers, plan.k_per_reviewer)
        self.low, self.high = math.inf, -math.inf
        self.dense = (
            np.zeros((n_papers, plan.n_reviewers), dtype=np.float32) if plan.keep_dense else None
        )

    def add(self, result: BlockResult) -> None:
        n = result.by_paper.indices.shape[0]
        rows = slice(result.start, result.start + n)
        self.by_paper.indices[rows] = result.by_paper.indices
        self.by_paper.values[rows] = result.by_paper.values
        self.by_reviewer = merge_top_k(
            self.by_reviewer, result.by_reviewer, self.plan.k_per_reviewer
        )
        self.low, self.high = min(self.low, result.low), max(self.high, result.high)
        if self.dense is not None and result.dense is not None:
            self.dense[rows] = result.dense

    def result(self, parameters: dict[str, Any] | None = None) -> SparseAffinity:
        value_range = (self.low, self.high) if self.low <= self.high else None
        return SparseAffinity(
            n_papers=self.n_papers,
            n_reviewers=self.plan.n_reviewers,
            by_paper=self.by_paper,
            by_reviewer=self.by_reviewer,
            params=self.plan.params,
            empty_reviewers=self.plan.empty_reviewers,
            value_range=value_range,
            dense=self.dense,
            parameters=dict(parameters or {}),
        )


def paper_block_ranges(n_papers: int, paper_block: int) -> Iterator[tuple[int, int]]:
    for start in range(0, n_papers, paper_block):
        yield start, min(n_papers, start + paper_block)
