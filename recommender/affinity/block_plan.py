"""Planning a blockwise run: reviewer blocks, the sparse head/tail split, prepared publications.

Publications are cut into blocks of whole reviewers (at most ``publication_block``
publications, a reviewer never straddles two blocks): ``offsets`` (n_reviewers + 1,) give
reviewer r the publication rows ``offsets[r]:offsets[r+1]``. Each channel's publication
vectors are prepared once per block, transposed and float32: dense (d, n_block) for
embeddings; for sparse TF-IDF the *head* vocabulary columns frequent on both sides as dense
(H, n_block) and the long *tail* as CSR (V - H, n_block). The resulting :class:`BlockPlan`
is everything a worker needs to score any paper block
(:func:`recommender.affinity.block_scoring.score_paper_block`); it is built once and shared
by all blocks (sent once to every Dask worker).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from recommender.affinity.options import KEEP_PER_PAPER, KEEP_PER_REVIEWER, PUBLICATION_BLOCK
from recommender.affinity.params import ScoringParams
from recommender.affinity.similarity import Channel, Vectors

FloatMatrix = npt.NDArray[np.float32]

# A vocabulary column goes to the dense GEMM when the expected fraction of (paper, pub)
# pairs sharing it exceeds this: measured break-even of BLAS vs scipy's sparse product.
_HEAD_COST_THRESHOLD = 1e-3
_MAX_HEAD_COLUMNS = 1024


def offsets_from_owner(publication_owner: npt.ArrayLike, n_reviewers: int) -> npt.NDArray[np.int64]:
    """Reviewer offsets (n_reviewers + 1,) from a sorted owner array (n_pubs,).

    Raises ValueError if ``publication_owner`` is not sorted or out of range.
    """
    owner = np.asarray(publication_owner, dtype=np.int64)
    if owner.size and (owner.min() < 0 or owner.max() >= n_reviewers):
        raise ValueError(f"publication_owner values must be in [0, {n_reviewers})")
    if owner.size > 1 and np.any(np.diff(owner) < 0):
        raise ValueError(
            "publication_owner must be sorted (each reviewer's publications contiguous)"
        )
    counts = np.bincount(owner, minlength=n_reviewers)
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def reviewer_blocks(
    offsets: npt.NDArray[np.int64], publication_block: int
) -> list[tuple[int, int]]:
    """Contiguous reviewer ranges [r0, r1) with at most ``publication_block`` publications
    each (a reviewer with more publications gets a block of their own)."""
    n_reviewers = len(offsets) - 1
    blocks: list[tuple[int, int]] = []
    start = 0
    while start < n_reviewers:
        limit = offsets[start] + publication_block
        stop = int(np.searchsorted(offsets, limit, side="right")) - 1
        stop = min(max(stop, start + 1), n_reviewers)
        blocks.append((start, stop))
        start = stop
    return blocks


def _head_columns(
    paper_vectors: sp.csr_matrix, publication_vectors: sp.csr_matrix
) -> npt.NDArray[np.int64]:
    """Vocabulary columns frequent on both sides: cheaper in a dense GEMM than sparse."""
    n_papers, n_pubs = paper_vectors.shape[0], publication_vectors.shape[0]
    if n_papers == 0 or n_pubs == 0:
        return np.zeros(0, dtype=np.int64)
    width = paper_vectors.shape[1]
    paper_df = np.bincount(paper_vectors.indices, minlength=width) / n_papers
    pub_df = np.bincount(publication_vectors.indices, minlength=width) / n_pubs
    cost = paper_df * pub_df
    head = np.flatnonzero(cost > _HEAD_COST_THRESHOLD)
    if head.size > _MAX_HEAD_COLUMNS:
        head = np.sort(np.argsort(-cost, kind="stable")[:_MAX_HEAD_COLUMNS])
    return head.astype(np.int64)


@dataclass(frozen=True)
class _PreparedChannel:
    """A channel ready for block products. Sparse: head/tail split of the vocabulary."""

    coefficient: float
    sparse: bool
    head: npt.NDArray[np.int64] | None
    tail: npt.NDArray[np.int64] | None
    # Per publication block: dense (d or H, nq) transposed block, and sparse tail (Vt, nq).
    publication_dense: list[FloatMatrix]
    publication_tail: list[sp.csr_matrix | None]

    def paper_parts(self, paper_vectors: Vectors) -> tuple[Vectors, sp.csr_matrix | None]:
        if not self.sparse:
            return np.ascontiguousarray(paper_vectors, dtype=np.float32), None
        csr = sp.csr_matrix(paper_vectors, dtype=np.float32)
        return np.ascontiguousarray(csr[:, self.head].toarray()), csr[:, self.tail]


def _prepare_channel(
    channel: Channel,
    blocks: Sequence[tuple[int, int]],
    offsets: npt.NDArray[np.int64],
    head: npt.NDArray[np.int64] | None,
) -> _PreparedChannel:
    pubs = channel.publication_vectors
    sparse = sp.issparse(pubs)
    dense_parts: list[FloatMatrix] = []
    tail_parts: list[sp.csr_matrix | None] = []
    if sparse:
        csr = sp.csr_matrix(pubs, dtype=np.float32)
        assert head is not None
        mask = np.ones(csr.shape[1], dtype=bool)
        mask[head] = False
        tail = np.flatnonzero(mask)
        for r0, r1 in blocks:
            rows = csr[int(offsets[r0]) : int(offsets[r1])]
            dense_parts.append(np.ascontiguousarray(rows[:, head].toarray().T))
            tail_parts.append(sp.csr_matrix(rows[:, tail].T))
        return _PreparedChannel(channel.coefficient, True, head, tail, dense_parts, tail_parts)
    array = np.asarray(pubs, dtype=np.float32)
    for r0, r1 in blocks:
        dense_parts.append(np.ascontiguousarray(array[int(offsets[r0]) : int(offsets[r1])].T))
        tail_parts.append(None)
    return _PreparedChannel(channel.coefficient, False, None, None, dense_parts, tail_parts)


@dataclass(frozen=True)
class BlockPlan:
    """Everything a worker needs to score any paper block: prepared publication blocks
    and the scoring parameters. Built once (:func:`plan_blockwise`), shared by all blocks
    (sent once to every Dask worker)."""

    channels: tuple[_PreparedChannel, ...]
    offsets: npt.NDArray[np.int64]
    blocks: tuple[tuple[int, int], ...]
    params: ScoringParams
    weights: FloatMatrix | None
    scale: float
    intercept: float
    k_per_paper: int
    k_per_reviewer: int
    keep_dense: bool

    @property
    def n_reviewers(self) -> int:
        return len(self.offsets) - 1

    @property
    def empty_reviewers(self) -> npt.NDArray[np.bool_]:
        return np.diff(self.offsets) == 0


def plan_blockwise(
    channels: Sequence[Channel],
    offsets: npt.ArrayLike,
    *,
    params: ScoringParams | None = None,
    publication_weights: npt.ArrayLike | None = None,
    scale: float = 1.0,
    intercept: float = 0.0,
    k_per_paper: int = KEEP_PER_PAPER,
    k_per_reviewer: int = KEEP_PER_REVIEWER,
    publication_block: int = PUBLICATION_BLOCK,
    keep_dense: bool = False,
) -> BlockPlan:
    """Validate inputs and prepare publication blocks (see :func:`blockwise_affinity`)."""
    params = params or ScoringParams()
    offsets = np.asarray(offsets, dtype=np.int64)
    if offsets.ndim != 1 or offsets.size < 1 or offsets[0] != 0 or np.any(np.diff(offsets) < 0):
        raise ValueError("offsets must be non-decreasing, start at 0, length n_reviewers + 1")
    if not channels:
        raise ValueError("at least one channel (paper/publication vectors) is needed")
    n_pubs = int(offsets[-1])
    for number, channel in enumerate(channels):
        n_q, d_q = channel.publication_vectors.shape
        d_p = channel.paper_vectors.shape[1]
        if n_q != n_pubs:
            raise ValueError(
                f"channel {number}: {n_q} publication vectors but offsets cover {n_pubs}"
            )
        if d_p != d_q:
            raise ValueError(f"channel {number}: paper dim {d_p} != publication dim {d_q}")
        if sp.issparse(channel.paper_vectors) != sp.issparse(channel.publication_vectors):
            raise ValueError(
                f"channel {number}: paper and publication vectors must both be sparse or both dense"
            )
    if k_per_paper < 1 or k_per_reviewer < 1:
        raise ValueError("k_per_paper and k_per_reviewer must be >= 1")
    if publication_block < 1:
        raise ValueError("publication_block must be >= 1")
    weights = None
    if publication_weights is not None:
        weights = np.asarray(publication_weights, dtype=np.float32)
        if weights.shape != (n_pubs,):
            raise ValueError(f"publication_weights shape {weights.shape} != ({n_pubs},)")
        if np.all(weights == 1.0):
            weights = None
    blocks = tuple(reviewer_blocks(offsets, publication_block))
    prepared = []
    for channel in channels:
        head = None
        if sp.issparse(channel.publication_vectors):
            head = _head_columns(
                sp.csr_matrix(channel.paper_vectors), sp.csr_matrix(channel.publication_vectors)
            )
        prepared.append(_prepare_channel(channel, blocks, offsets, head))
    return BlockPlan(
        channels=tuple(prepared),
        offsets=offsets,
        blocks=blocks,
        params=params,
        weights=weights,
        scale=float(scale),
        intercept=float(intercept),
        k_per_paper=int(k_per_paper),
        k_per_reviewer=int(k_per_reviewer),
        keep_dense=keep_dense,
    )
