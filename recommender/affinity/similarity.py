"""Publication similarity: how a submission compares with one reviewer publication.

A *channel* is one vector space (TF-IDF or embeddings) with L2-normalised rows, so a dot
product is a cosine. ``method="tfidf"`` or ``"embedding"`` uses one channel as is;
``"combined"`` standardises each channel with one *global* mean and std (or its empirical
CDF for ``normalisation="rank"``), fitted on a fixed sample of pairs, and mixes them with
``embedding_weight``. Global, not per reviewer: per-reviewer normalisation would erase the
cross-reviewer differences an assignment needs.

With z-scores the mix is affine in the cosines,
``sum_c coefficient_c * (paper_c @ publication_c.T) + intercept``, which is what blockwise
scoring computes (:func:`affine_channels`); rank normalisation is not affine and is scored
on the dense path only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from recommender.affinity.params import ScoringParams

FloatMatrix = npt.NDArray[np.float32]
Vectors: TypeAlias = FloatMatrix | sp.csr_matrix | sp.csr_array

STATS_SAMPLE = 250_000
"""(paper, publication) pairs sampled (seeded) to fit the global standardisation."""


@dataclass(frozen=True)
class Channel:
    """One similarity source: paper and publication vectors of the same space.

    ``paper_vectors`` (n_papers, d) and ``publication_vectors`` (n_pubs, d): dense float32
    or CSR (TF-IDF), rows L2-normalised if the dot product is to be a cosine;
    ``coefficient`` multiplies their products in an affine mix.
    """

    paper_vectors: Vectors
    publication_vectors: Vectors
    coefficient: float = 1.0


@dataclass(frozen=True)
class Standardiser:
    """Global monotone map of raw similarities: z-score, or empirical CDF (rank)."""

    mean: float
    std: float
    quantiles: npt.NDArray[np.float64] | None

    @classmethod
    def fit(cls, sample: npt.NDArray[np.float64], kind: str) -> Standardiser:
        std = float(sample.std()) if sample.size > 1 else 0.0
        quantiles = np.sort(sample) if kind == "rank" else None
        return cls(float(sample.mean()) if sample.size else 0.0, std or 1.0, quantiles)

    def __call__(self, values: FloatMatrix) -> FloatMatrix:
        if self.quantiles is not None:
            ranks = np.searchsorted(self.quantiles, values, side="left")
            ranks_right = np.searchsorted(self.quantiles, values, side="right")
            # Mid-rank in [0, 1] mapped to a standard-normal-like spread via z of uniform.
            u = (ranks + ranks_right) / (2.0 * max(len(self.quantiles), 1))
            return ((u - 0.5) * math.sqrt(12.0)).astype(np.float32)
        return ((values - self.mean) / self.std).astype(np.float32)


def as_dense(product: Any) -> FloatMatrix:
    """A matrix product's result as a dense float32 array (sparse products densified)."""
    return np.asarray(product.toarray() if sp.issparse(product) else product, np.float32)


def cosine_block(channel: Channel, papers: npt.NDArray[np.int64] | slice) -> FloatMatrix:
    """Cosines of the given papers with every publication of ``channel``: (n, n_pubs)."""
    return as_dense(channel.paper_vectors[papers] @ channel.publication_vectors.T)


def pair_cosines(
    channel: Channel, rows: npt.NDArray[np.int64], columns: npt.NDArray[np.int64]
) -> FloatMatrix:
    """Cosine of each (paper ``rows[i]``, publication ``columns[i]``) pair: (n,)."""
    papers: Any = channel.paper_vectors
    publications: Any = channel.publication_vectors
    if sp.issparse(papers):
        return np.asarray(
            papers[rows].multiply(publications[columns]).sum(axis=1), dtype=np.float32
        ).ravel()
    return np.einsum("ij,ij->i", papers[rows], publications[columns])


def sample_pairs(
    n_papers: int, n_publications: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Every pair when there are at most :data:`STATS_SAMPLE`, else a seeded sample."""
    if n_papers * n_publications <= STATS_SAMPLE:
        rows = np.repeat(np.arange(n_papers), n_publications)
        columns = np.tile(np.arange(n_publications), n_papers)
        return rows, columns
    rng = np.random.default_rng(0)
    return rng.integers(0, n_papers, STATS_SAMPLE), rng.integers(0, n_publications, STATS_SAMPLE)


def fit_standardisers(
    channels: dict[str, Channel], params: ScoringParams
) -> dict[str, Standardiser]:
    """One :class:`Standardiser` per channel, fitted on the same sample of pairs."""
    if not channels:
        return {}
    first = next(iter(channels.values()))
    n_papers, n_pubs = first.paper_vectors.shape[0], first.publication_vectors.shape[0]
    if n_papers == 0 or n_pubs == 0:
        return {}
    rows, columns = sample_pairs(n_papers, n_pubs)
    return {
        name: Standardiser.fit(
            pair_cosines(channel, rows, columns).astype(np.float64), params.normalisation
        )
        for name, channel in channels.items()
    }


def mixed_similarity(
    channels: dict[str, Channel],
    standardisers: dict[str, Standardiser],
    params: ScoringParams,
    papers: npt.NDArray[np.int64] | slice,
) -> FloatMatrix:
    """The similarity that is aggregated, (n, n_pubs): the method's cosine, or for
    ``combined`` the standardised mix ``(1 - w) * tfidf + w * embedding``."""
    if params.method != "combined":
        return cosine_block(channels[params.method], papers)
    text = standardisers["tfidf"](cosine_block(channels["tfidf"], papers))
    dense = standardisers["embedding"](cosine_block(channels["embedding"], papers))
    w = np.float32(params.embedding_weight)
    return (np.float32(1.0) - w) * text + w * dense


def affine_channels(
    channels: dict[str, Channel],
    standardisers: dict[str, Standardiser],
    params: ScoringParams,
) -> tuple[list[Channel], float]:
    """Channels with coefficients, and the intercept, reproducing :func:`mixed_similarity`
    as ``sum_c coefficient_c * cosine_c + intercept`` (blockwise scoring).

    ``combined`` = (1-w) (t - m_t)/s_t + w (e - m_e)/s_e. Rank normalisation is not
    affine: ValueError (score on the dense path).
    """
    if params.method != "combined":
        return [channels[params.method]], 0.0
    if params.normalisation != "zscore":
        raise ValueError(
            "blockwise scoring supports normalisation='zscore' only (rank normalisation "
            "is not affine); score on the dense path"
        )
    text, dense = standardisers["tfidf"], standardisers["embedding"]
    w = params.embedding_weight
    tfidf, embedding = channels["tfidf"], channels["embedding"]
    mixed = [
        Channel(tfidf.paper_vectors, tfidf.publication_vectors, (1.0 - w) / text.std),
        Channel(embedding.paper_vectors, embedding.publication_vectors, w / dense.std),
    ]
    return mixed, -(1.0 - w) * text.mean / text.std - w * dense.mean / dense.std


DUPLICATE_PAIRS_CHUNK = 100_000
"""Within-reviewer publication pairs compared at once by :func:`near_duplicates`."""


def near_duplicates(
    vectors: Vectors, offsets: npt.NDArray[np.int64], threshold: float
) -> npt.NDArray[np.bool_]:
    """(n_pubs,) True for each publication whose cosine with an *earlier* publication of the
    same reviewer is at least ``threshold``: the arXiv and proceedings versions of one
    paper, or a paper listed twice, count once. ``vectors``: L2-normalised rows (dense or
    CSR), reviewer r owning rows ``offsets[r]:offsets[r+1]``. Vectorised over reviewers
    with the same number of publications, in chunks of :data:`DUPLICATE_PAIRS_CHUNK`
    pairs."""
    counts = np.diff(offsets)
    n_pubs = int(offsets[-1]) if offsets.size else 0
    duplicate = np.zeros(n_pubs, dtype=bool)
    channel = Channel(vectors, vectors)
    for count in np.unique(counts[counts > 1]):
        first, second = np.triu_indices(int(count), 1)
        starts = offsets[:-1][counts == count]
        if first.size > DUPLICATE_PAIRS_CHUNK:
            # a reviewer with hundreds of publications: their own (count x count) cosines
            for start in starts:
                block = vectors[start : start + count]
                gram = as_dense(block @ block.T)
                close = np.triu(gram >= threshold, k=1).any(axis=0)
                duplicate[start : start + count] |= close
            continue
        per_chunk = max(1, DUPLICATE_PAIRS_CHUNK // first.size)
        for at in range(0, starts.size, per_chunk):
            base = starts[at : at + per_chunk, None]
            rows = (base + first[None, :]).ravel()
            columns = (base + second[None, :]).ravel()
            close = pair_cosines(channel, rows, columns) >= threshold
            duplicate[columns[close]] = True
    return duplicate
