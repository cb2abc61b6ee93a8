"""Affinity: a paper x reviewer score matrix from the reviewers' publications.

Pipeline (all vectorised):

1. Profile every publication and submission text (TF-IDF and/or sentence embeddings).
2. Publication similarity ``S[p, j]`` = cosine(submission p, publication j), shape
   (n_papers, n_publications). For ``method="combined"`` the TF-IDF and embedding
   similarity matrices are each standardised with one *global* mean/std (so a reviewer who
   is far from every paper stays low: per-reviewer normalisation would erase exactly the
   cross-reviewer information an assignment needs) and averaged with ``embedding_weight``.
3. Aggregate each reviewer's publication columns into one score (``max``, ``mean``,
   ``topk`` mean, or ``softmax``-weighted mean with a temperature in units of the global
   similarity std), optionally weighting recent publications more (half-life in years).
4. Optionally subtract each paper's mean score over reviewers (``paper_centering``):
   down-weights papers that look similar to everybody (an IDF on the paper side).
5. Reviewers with zero publications score 0 (no evidence of expertise). Combined scores are
   min-max scaled to [0, 1] over the whole matrix; single-method scores stay cosines.

Scoring path: :meth:`AffinityModel.affinity` forms (paper chunk x every publication)
similarity matrices while ``n_papers * n_publications <= config.blockwise_min_pairs``
(default :data:`BLOCKWISE_MIN_PAIRS` = 5e7, ~ a 2.5k-paper venue with 20k publications),
and above it — or whenever the full (n_papers, n_reviewers) float32 matrix would exceed
``config.dense_limit_bytes`` (default :data:`DENSE_LIMIT_BYTES` = 2 GiB) — scores with
:func:`recommender.blockwise.blockwise_from_model` (bounded memory, same scores up to
float32 rounding). When the full matrix exceeds ``dense_limit_bytes`` it is not kept: the
:class:`Affinity` then holds only each paper's top ``keep_per_paper`` reviewers and each
reviewer's top ``keep_per_reviewer`` papers (union, CSR). Rank normalisation is not affine,
so ``combined`` + ``rank`` always uses the dense path.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import scipy.sparse as sp

from recommender.corpus import Reviewer, Submission
from recommender.embeddings import EmbeddingCache
from recommender.fast_encoder import BACKENDS
from recommender.io.safe_csv import write_frame_csv
from recommender.profiles import EmbeddingProfiler, TfidfProfiler

if TYPE_CHECKING:
    from recommender.blockwise import SparseAffinity

FloatMatrix = npt.NDArray[np.float32]
Progress = Callable[[float, str], None]

METHODS = ("tfidf", "embedding", "combined")
AGGREGATIONS = ("max", "mean", "topk", "softmax")
NORMALISATIONS = ("zscore", "rank")

_STATS_SAMPLE = 250_000
_CHUNK_ELEMENTS = 4_000_000
_CSV_CHUNK_PAIRS = 2_000_000

BLOCKWISE_MIN_PAIRS = 5e7
"""Above this many (paper, publication) pairs :meth:`AffinityModel.affinity` scores blockwise."""
DENSE_LIMIT_BYTES = 2 * 1024**3
"""Largest full (n_papers, n_reviewers) float32 score matrix an :class:`Affinity` keeps."""


@dataclass(frozen=True)
class AffinityConfig:
    """Everything that determines an affinity matrix (stored with it, for provenance).

    ``embedding_weight``: share of the embedding similarity in ``combined`` (TF-IDF gets
    ``1 - embedding_weight``). ``temperature``: softmax temperature in units of the global
    similarity std. ``recency_half_life``: years after which a publication counts half
    (None = all years equal; unknown years count fully); ``reference_year`` defaults to the
    newest publication year in the corpus. ``bid_weight``: used by
    :func:`recommender.bids.apply_bids` when bids are folded in. ``encoder_backend``: a
    :mod:`recommender.fast_encoder` backend (``auto`` = bfloat16 on CPUs with bf16 units,
    else float32 torch). ``blockwise_min_pairs``, ``dense_limit_bytes``,
    ``keep_per_paper`` and ``keep_per_reviewer`` choose the scoring path and what is kept
    (see the module docstring); they change memory and time, not scores.

    Defaults (combined, mean, equal weights, global z-scores) were chosen on the gold-dev
    benchmark among few-knob, principled variants (mean beat max/top-k/softmax for both
    TF-IDF and embeddings; recency weighting and rank normalisation hurt); see
    ``recommender.evaluate`` to reproduce. TF-IDF-only default aggregation: mean.
    """

    method: str = "combined"
    aggregation: str = "mean"
    k: int = 3
    temperature: float = 0.5
    embedding_weight: float = 0.5
    normalisation: str = "zscore"
    paper_centering: bool = False
    recency_half_life: float | None = None
    reference_year: int | None = None
    tfidf_ngram_max: int = 1
    tfidf_min_df: int = 1
    tfidf_max_df: float = 0.5
    model_path: str | None = None
    cache_dir: str | None = None
    batch_size: int = 32
    device: str = "cpu"
    bid_weight: float = 0.0
    encoder_backend: str = "auto"
    blockwise_min_pairs: float = BLOCKWISE_MIN_PAIRS
    dense_limit_bytes: int = DENSE_LIMIT_BYTES
    keep_per_paper: int = 100
    keep_per_reviewer: int = 50

    def __post_init__(self) -> None:
        problems = []
        if self.method not in METHODS:
            problems.append(f"method must be one of {METHODS}, got {self.method!r}")
        if self.aggregation not in AGGREGATIONS:
            problems.append(f"aggregation must be one of {AGGREGATIONS}, got {self.aggregation!r}")
        if self.normalisation not in NORMALISATIONS:
            problems.append(
                f"normalisation must be one of {NORMALISATIONS}, got {self.normalisation!r}"
            )
        if self.k < 1:
            problems.append(f"k must be >= 1, got {self.k}")
        if not self.temperature > 0:
            problems.append(f"temperature must be > 0, got {self.temperature}")
        if not 0.0 <= self.embedding_weight <= 1.0:
            problems.append(f"embedding_weight must be in [0, 1], got {self.embedding_weight}")
        if self.recency_half_life is not None and not self.recency_half_life > 0:
            problems.append(f"recency_half_life must be > 0 or None, got {self.recency_half_life}")
        if self.tfidf_ngram_max not in (1, 2, 3):
            problems.append(f"tfidf_ngram_max must be 1, 2 or 3, got {self.tfidf_ngram_max}")
        if not 0.0 < self.tfidf_max_df <= 1.0:
            problems.append(f"tfidf_max_df must be in (0, 1], got {self.tfidf_max_df}")
        if self.batch_size < 1:
            problems.append(f"batch_size must be >= 1, got {self.batch_size}")
        if self.encoder_backend not in BACKENDS:
            problems.append(
                f"encoder_backend must be one of {BACKENDS}, got {self.encoder_backend!r}"
            )
        if not self.blockwise_min_pairs >= 0:
            problems.append(f"blockwise_min_pairs must be >= 0, got {self.blockwise_min_pairs}")
        if self.dense_limit_bytes < 0:
            problems.append(f"dense_limit_bytes must be >= 0, got {self.dense_limit_bytes}")
        if self.keep_per_paper < 1 or self.keep_per_reviewer < 1:
            problems.append(
                "keep_per_paper and keep_per_reviewer must be >= 1, got "
                f"{self.keep_per_paper} and {self.keep_per_reviewer}"
            )
        if problems:
            raise ValueError("invalid AffinityConfig: " + "; ".join(problems))

    @property
    def uses_tfidf(self) -> bool:
        return self.method in ("tfidf", "combined")

    @property
    def uses_embedding(self) -> bool:
        return self.method in ("embedding", "combined")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AffinityConfig:
        """Build from a mapping; unknown keys raise ValueError naming them."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown AffinityConfig field(s): {', '.join(unknown)}")
        return cls(**dict(data))

    def replace(self, **changes: Any) -> AffinityConfig:
        return type(self).from_dict({**self.to_dict(), **changes})


@dataclass(frozen=True, eq=False)
class Affinity:
    """Scores of (paper, reviewer) pairs, higher = better.

    ``scores``: float32 (n_papers, n_reviewers), every pair — or None when the full matrix
    was too large to keep (see :data:`DENSE_LIMIT_BYTES`); then ``kept`` holds the kept
    pairs (each paper's top reviewers and each reviewer's top papers, union) as CSR float32
    (n_papers, n_reviewers) whose stored entries (explicit zeros included) are the pairs.
    :meth:`score` of a pair that was not kept returns NaN; :meth:`top_reviewers` and
    :meth:`top_papers` rank the kept pairs; :meth:`to_frame` / :meth:`write_csv` write the
    kept pairs (every pair when ``scores`` is present).
    """

    paper_ids: tuple[str, ...]
    reviewer_ids: tuple[str, ...]
    scores: FloatMatrix | None
    config: AffinityConfig = field(default_factory=AffinityConfig)
    kept: sp.csr_matrix | None = None

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
        N reviewers and each reviewer's top N papers, union (ties by id). Without the full
        matrix this is exact only for ``N <= min(keep_per_paper, keep_per_reviewer)``;
        larger ``N`` raises ValueError.
        """
        if top_k is not None and top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {top_k}")
        if self.scores is None:
            assert self.kept is not None
            if top_k is None:
                return self.kept
            limit = min(self.config.keep_per_paper, self.config.keep_per_reviewer)
            if top_k > limit:
                raise ValueError(
                    f"top_k={top_k} exceeds the {limit} pairs per paper/reviewer kept without "
                    "the full matrix (raise keep_per_paper/keep_per_reviewer)"
                )
            return _top_k_of_sparse(self.kept, top_k)
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
        return _top_k_of_dense(self.scores, top_k)

    def iter_frames(
        self, *, top_k: int | None = None, chunk_pairs: int = _CSV_CHUNK_PAIRS
    ) -> Iterator[pd.DataFrame]:
        """The written pairs as DataFrames ``paper_id, reviewer_id, score`` of about
        ``chunk_pairs`` rows, by paper then reviewer (reviewer ids without ``~``)."""
        papers = np.array(self.paper_ids, dtype=object)
        reviewers = np.array([r.removeprefix("~") for r in self.reviewer_ids], dtype=object)
        n_papers, n_reviewers = len(papers), len(reviewers)
        if self.scores is not None and top_k is None:
            rows = max(1, chunk_pairs // max(n_reviewers, 1))
            for start in range(0, n_papers, rows):
                block = self.scores[start : start + rows]
                yield pd.DataFrame(
                    {
                        "paper_id": np.repeat(papers[start : start + rows], n_reviewers),
                        "reviewer_id": np.tile(reviewers, block.shape[0]),
                        "score": block.reshape(-1).astype(np.float64),
                    }
                )
            return
        kept = self.kept_pairs(top_k)
        counts = np.diff(kept.indptr)
        start = 0
        while start < n_papers:
            stop = int(np.searchsorted(kept.indptr, kept.indptr[start] + chunk_pairs, "right"))
            stop = min(max(stop - 1, start + 1), n_papers)
            lo, hi = kept.indptr[start], kept.indptr[stop]
            yield pd.DataFrame(
                {
                    "paper_id": np.repeat(papers[start:stop], counts[start:stop]),
                    "reviewer_id": reviewers[kept.indices[lo:hi]],
                    "score": kept.data[lo:hi].astype(np.float64),
                }
            )
            start = stop

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
        chunk_pairs: int = _CSV_CHUNK_PAIRS,
    ) -> None:
        """Write ``paper_id,reviewer_id,score`` (header, no index) atomically, in chunks of
        ``chunk_pairs`` rows: every pair (dense, ``top_k=None``), the kept pairs, or each
        paper's and each reviewer's top ``top_k`` (see :meth:`kept_pairs`)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
                stream.write("paper_id,reviewer_id,score\n")
                for frame in self.iter_frames(top_k=top_k, chunk_pairs=chunk_pairs):
                    write_frame_csv(frame, stream, index=False, header=False, float_format="%.6g")
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def _top_k_of_sparse(matrix: sp.csr_matrix, k: int) -> sp.csr_matrix:
    """Stored entries among each row's top ``k`` or each column's top ``k`` (ties by id)."""
    coo = matrix.tocoo()
    rows, cols, vals = coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data
    keep = _rank_within(rows, cols, vals) < k
    keep |= _rank_within(cols, rows, vals) < k
    return _csr_from_pairs(rows[keep], cols[keep], vals[keep], matrix.shape)


def _rank_within(
    group: npt.NDArray[np.int64], other: npt.NDArray[np.int64], values: npt.NDArray[np.float32]
) -> npt.NDArray[np.int64]:
    """Rank of each entry within its group: by value descending, then ``other`` ascending."""
    order = np.lexsort((other, -values.astype(np.float64), group))
    sorted_group = group[order]
    first = np.searchsorted(sorted_group, sorted_group, side="left")
    ranks = np.empty(group.size, dtype=np.int64)
    ranks[order] = np.arange(group.size) - first
    return ranks


def _top_k_of_dense(scores: FloatMatrix, k: int) -> sp.csr_matrix:
    """Each row's top ``k`` and each column's top ``k`` of a dense matrix, union, as CSR;
    worked in row/column chunks so no full-size temporary is formed."""
    from recommender.blockwise import top_k_rows

    n_rows, n_cols = scores.shape
    parts_rows, parts_cols = [], []
    step = max(1, _CSV_CHUNK_PAIRS // max(n_cols, 1))
    for start in range(0, n_rows, step):
        top = top_k_rows(scores[start : start + step], k)
        r, c = np.nonzero(top.indices >= 0)
        parts_rows.append(r.astype(np.int64) + start)
        parts_cols.append(top.indices[r, c].astype(np.int64))
    step = max(1, _CSV_CHUNK_PAIRS // max(n_rows, 1))
    for start in range(0, n_cols, step):
        top = top_k_rows(np.ascontiguousarray(scores[:, start : start + step].T), k)
        c, r = np.nonzero(top.indices >= 0)
        parts_cols.append(c.astype(np.int64) + start)
        parts_rows.append(top.indices[c, r].astype(np.int64))
    rows = np.concatenate(parts_rows) if parts_rows else np.zeros(0, np.int64)
    cols = np.concatenate(parts_cols) if parts_cols else np.zeros(0, np.int64)
    key = np.unique(rows * max(n_cols, 1) + cols)
    rows, cols = key // max(n_cols, 1), key % max(n_cols, 1)
    return _csr_from_pairs(rows, cols, scores[rows, cols], scores.shape)


def _csr_from_pairs(
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


@dataclass(frozen=True)
class PublicationEvidence:
    """One reviewer publication's part in a score."""

    id: str
    title: str
    year: int | None
    similarity: float
    weight: float
    tfidf_similarity: float | None = None
    embedding_similarity: float | None = None


@dataclass(frozen=True)
class Explanation:
    """Why a reviewer scores what they do for a paper.

    ``publications``: sorted by contribution (weight, then similarity), highest first.
    ``shared_terms``: (term, contribution) where contribution is the product of the term's
    weights in the submission's and the reviewer profile's L2-normalised TF-IDF vectors
    (the terms sum to that TF-IDF cosine), top 10.
    """

    paper_id: str
    reviewer_id: str
    score: float
    publications: tuple[PublicationEvidence, ...]
    shared_terms: tuple[tuple[str, float], ...]
    config: AffinityConfig

    def to_dict(self) -> dict[str, Any]:
        return {
            "paper_id": self.paper_id,
            "reviewer_id": self.reviewer_id,
            "score": self.score,
            "publications": [asdict(p) for p in self.publications],
            "shared_terms": [{"term": t, "contribution": c} for t, c in self.shared_terms],
            "config": self.config.to_dict(),
        }


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


class AffinityModel:
    """Fitted profiles of one venue: scores every pair and explains any single one.

    ``AffinityModel(config).fit(reviewers, submissions)`` profiles every text once; then
    :meth:`affinity` gives the full matrix and :meth:`explain` the evidence for one pair.
    """

    def __init__(self, config: AffinityConfig | None = None):
        self.config = config or AffinityConfig()
        self.tfidf: TfidfProfiler | None = None
        self.embedder: EmbeddingProfiler | None = None

    # ----------------------------------------------------------------- fitting
    def fit(
        self,
        reviewers: Sequence[Reviewer],
        submissions: Sequence[Submission],
        *,
        progress: Progress | None = None,
    ) -> AffinityModel:
        config = self.config
        report = progress or (lambda fraction, message: None)
        self.reviewers = tuple(reviewers)
        self.submissions = tuple(submissions)
        self.paper_ids = tuple(s.id for s in self.submissions)
        self.reviewer_ids = tuple(r.id.removeprefix("~") for r in self.reviewers)
        _check_unique(self.paper_ids, "submission")
        _check_unique(self.reviewer_ids, "reviewer")
        self._paper_index = {p: i for i, p in enumerate(self.paper_ids)}
        self._reviewer_index = {r: i for i, r in enumerate(self.reviewer_ids)}
        publications = [p for r in self.reviewers for p in r.publications]
        self.publications = publications
        counts = np.array([len(r.publications) for r in self.reviewers], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        pub_texts = [p.text for p in publications]
        sub_texts = [s.text for s in self.submissions]
        self.weights = self._recency_weights()

        # TF-IDF is always fitted: explanations report shared terms whatever the method.
        report(0.0, "fitting TF-IDF vocabulary")
        self.tfidf = TfidfProfiler(
            ngram_range=(1, config.tfidf_ngram_max),
            min_df=config.tfidf_min_df,
            max_df=config.tfidf_max_df,
        )
        vectors = self.tfidf.fit_transform(pub_texts + sub_texts)
        self.pub_tfidf = vectors[: len(pub_texts)]
        self.sub_tfidf = vectors[len(pub_texts) :]
        self.pub_embedding: FloatMatrix | None = None
        self.sub_embedding: FloatMatrix | None = None
        self.score_range: tuple[float, float] | None = None
        if config.uses_embedding:
            report(0.1, f"embedding {len(pub_texts) + len(sub_texts)} texts")
            cache = EmbeddingCache(config.cache_dir) if config.cache_dir else None
            self.embedder = EmbeddingProfiler(
                config.model_path,
                cache=cache,
                batch_size=config.batch_size,
                device=config.device,
                backend=config.encoder_backend,
            )
            embedded = self.embedder.transform(pub_texts + sub_texts)
            self.pub_embedding = embedded[: len(pub_texts)]
            self.sub_embedding = embedded[len(pub_texts) :]
        report(0.8, "standardising similarities")
        self._fit_standardisers()
        report(0.85, "fitted")
        return self

    def _recency_weights(self) -> npt.NDArray[np.float32]:
        config = self.config
        weights = np.ones(len(self.publications), dtype=np.float32)
        if config.recency_half_life is None:
            return weights
        years = [p.year for p in self.publications if p.year is not None]
        reference = config.reference_year or (max(years) if years else None)
        if reference is None:
            return weights
        for j, publication in enumerate(self.publications):
            if publication.year is not None:
                age = max(0, reference - publication.year)
                weights[j] = 0.5 ** (age / config.recency_half_life)
        return weights

    def _fit_standardisers(self) -> None:
        n_papers, n_pubs = len(self.paper_ids), len(self.publications)
        self.standardisers: dict[str, Standardiser] = {}
        if n_papers == 0 or n_pubs == 0:
            return
        if n_papers * n_pubs <= _STATS_SAMPLE:
            rows = np.repeat(np.arange(n_papers), n_pubs)
            cols = np.tile(np.arange(n_pubs), n_papers)
        else:
            rng = np.random.default_rng(0)
            rows = rng.integers(0, n_papers, _STATS_SAMPLE)
            cols = rng.integers(0, n_pubs, _STATS_SAMPLE)
        for name in self._methods():
            sample = self._pair_similarities(name, rows, cols).astype(np.float64)
            self.standardisers[name] = Standardiser.fit(sample, self.config.normalisation)

    def _methods(self) -> tuple[str, ...]:
        return {"tfidf": ("tfidf",), "embedding": ("embedding",)}.get(
            self.config.method, ("tfidf", "embedding")
        )

    def _pair_similarities(
        self, name: str, rows: npt.NDArray[np.int64], cols: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.float32]:
        if name == "tfidf":
            return np.asarray(
                self.sub_tfidf[rows].multiply(self.pub_tfidf[cols]).sum(axis=1), dtype=np.float32
            ).ravel()
        assert self.sub_embedding is not None and self.pub_embedding is not None
        return np.einsum("ij,ij->i", self.sub_embedding[rows], self.pub_embedding[cols])

    # ---------------------------------------------------------- similarities
    def raw_similarity(self, name: str, papers: npt.NDArray[np.int64] | slice) -> FloatMatrix:
        """Cosine similarity of the given submissions to every publication: (n, n_pubs)."""
        if name == "tfidf":
            product = self.sub_tfidf[papers] @ self.pub_tfidf.T
            return np.asarray(product.toarray() if sp.issparse(product) else product, np.float32)
        assert self.sub_embedding is not None and self.pub_embedding is not None
        return self.sub_embedding[papers] @ self.pub_embedding.T

    def publication_similarity(self, papers: npt.NDArray[np.int64] | slice) -> FloatMatrix:
        """The similarity that is aggregated: (n, n_pubs), cosine or standardised mix."""
        config = self.config
        if config.method != "combined":
            return self.raw_similarity(config.method, papers)
        text = self.standardisers["tfidf"](self.raw_similarity("tfidf", papers))
        dense = self.standardisers["embedding"](self.raw_similarity("embedding", papers))
        w = np.float32(config.embedding_weight)
        return (np.float32(1.0) - w) * text + w * dense

    # ------------------------------------------------------------- scoring
    def uses_blockwise(self) -> bool:
        """Whether :meth:`affinity` scores blockwise (see the module docstring)."""
        config = self.config
        if config.method == "combined" and config.normalisation != "zscore":
            return False
        n_papers, n_reviewers = len(self.paper_ids), len(self.reviewer_ids)
        if n_papers == 0 or n_reviewers == 0 or len(self.publications) == 0:
            return False
        return (
            n_papers * len(self.publications) > config.blockwise_min_pairs or not self.keeps_dense()
        )

    def keeps_dense(self) -> bool:
        """Whether the full score matrix fits ``config.dense_limit_bytes``."""
        return len(self.paper_ids) * len(self.reviewer_ids) * 4 <= self.config.dense_limit_bytes

    def affinity(self, *, progress: Progress | None = None) -> Affinity:
        """Score every (paper, reviewer) pair (dense or blockwise: see the module docstring)."""
        if self.uses_blockwise():
            return self._blockwise_affinity(progress)
        report = progress or (lambda fraction, message: None)
        n_papers, n_reviewers = len(self.paper_ids), len(self.reviewer_ids)
        scores = np.zeros((n_papers, n_reviewers), dtype=np.float32)
        n_pubs = len(self.publications)
        if n_papers and n_pubs:
            counts = np.diff(self.offsets)
            width = max(1, int(counts.max()))
            chunk = max(1, _CHUNK_ELEMENTS // max(n_reviewers * width, n_pubs))
            for start in range(0, n_papers, chunk):
                stop = min(n_papers, start + chunk)
                similarity = self.publication_similarity(slice(start, stop))
                scores[start:stop] = aggregate(
                    similarity,
                    self.offsets,
                    self.config,
                    weights=self.weights,
                    scale=self.scale(),
                )
                report(0.85 + 0.15 * stop / n_papers, f"scored {stop}/{n_papers} papers")
        scores = self._finish(scores)
        return Affinity(self.paper_ids, self.reviewer_ids, scores, self.config)

    def _blockwise_affinity(self, progress: Progress | None) -> Affinity:
        from recommender.blockwise import blockwise_from_model

        report = progress or (lambda fraction, message: None)
        config = self.config
        keep = self.keeps_dense()
        result = blockwise_from_model(
            self,
            k_per_paper=config.keep_per_paper,
            k_per_reviewer=config.keep_per_reviewer,
            keep_dense=keep,
            progress=lambda fraction, stage: report(0.85 + 0.15 * fraction, stage),
        )
        return self.affinity_from_blockwise(result)

    def affinity_from_blockwise(self, result: SparseAffinity) -> Affinity:
        """Wrap a blockwise result over this model's profiles (local or Dask) as an
        :class:`Affinity`: the full matrix when it was kept, else the kept pairs."""
        if (result.n_papers, result.n_reviewers) != (len(self.paper_ids), len(self.reviewer_ids)):
            raise ValueError(
                f"blockwise result is {result.n_papers} x {result.n_reviewers}, the model "
                f"{len(self.paper_ids)} x {len(self.reviewer_ids)}"
            )
        self.score_range = result.value_range
        if result.dense is not None:
            return Affinity(self.paper_ids, self.reviewer_ids, result.dense_scores(), self.config)
        rows, cols, values = result.candidates()
        kept = _csr_from_pairs(rows, cols, values, (result.n_papers, result.n_reviewers))
        return Affinity(self.paper_ids, self.reviewer_ids, None, self.config, kept=kept)

    def scale(self) -> float:
        """Std of the aggregated similarity: the unit of the softmax temperature."""
        if self.config.method == "combined":
            return 1.0
        standardiser = self.standardisers.get(self.config.method)
        return standardiser.std if standardiser is not None else 1.0

    def _finish(self, scores: FloatMatrix) -> FloatMatrix:
        empty = np.diff(self.offsets) == 0
        if self.config.paper_centering and scores.shape[1] - empty.sum() > 0:
            scores = scores - scores[:, ~empty].mean(axis=1, keepdims=True)
        if self.config.method == "combined" and scores.size and (~empty).any():
            valid = scores[:, ~empty]
            low, high = float(valid.min()), float(valid.max())
            scores = (scores - low) / (high - low) if high > low else np.zeros_like(scores)
        scores[:, empty] = 0.0
        return scores.astype(np.float32, copy=False)

    # -------------------------------------------------------------- explain
    def explain(self, paper_id: str, reviewer_id: str, *, n_terms: int = 10) -> Explanation:
        """Evidence for one pair: driving publications and top shared TF-IDF terms."""
        if paper_id not in self._paper_index:
            raise KeyError(f"unknown paper id {paper_id!r}")
        reviewer_key = reviewer_id.removeprefix("~")
        if reviewer_key not in self._reviewer_index:
            raise KeyError(f"unknown reviewer id {reviewer_id!r}")
        p = self._paper_index[paper_id]
        r = self._reviewer_index[reviewer_key]
        start, stop = int(self.offsets[r]), int(self.offsets[r + 1])
        config = self.config
        score = float(self.affinity_row(p)[r])
        if stop == start:
            return Explanation(paper_id, reviewer_key, score, (), (), config)
        rows = np.array([p])
        similarity = self.publication_similarity(rows)[0, start:stop]
        weights = aggregation_weights(
            similarity, config, self.weights[start:stop], scale=self.scale()
        )
        raw = {
            name: self.raw_similarity(name, rows)[0, start:stop]
            for name in ("tfidf", "embedding")
            if name == "tfidf" or self.sub_embedding is not None
        }
        evidence = []
        for offset, publication in enumerate(self.publications[start:stop]):
            evidence.append(
                PublicationEvidence(
                    id=publication.id,
                    title=publication.title,
                    year=publication.year,
                    similarity=float(similarity[offset]),
                    weight=float(weights[offset]),
                    tfidf_similarity=float(raw["tfidf"][offset]),
                    embedding_similarity=(
                        float(raw["embedding"][offset]) if "embedding" in raw else None
                    ),
                )
            )
        evidence.sort(key=lambda e: (-e.weight, -e.similarity))
        return Explanation(
            paper_id,
            reviewer_key,
            score,
            tuple(evidence),
            self._shared_terms(p, r, n_terms),
            config,
        )

    def affinity_row(self, paper: int) -> FloatMatrix:
        """Final scores of one paper against every reviewer (same as ``affinity().scores[p]``,
        also when the full matrix is not kept)."""
        cached: Affinity | None = None
        if self.config.method == "combined":
            # Min-max scaling depends on the whole matrix; reuse it.
            cached = self.__dict__.get("_affinity")
            if cached is None:
                cached = self.affinity()
                self.__dict__["_affinity"] = cached
            if cached.scores is not None:
                return cached.scores[paper]
        similarity = self.publication_similarity(np.array([paper]))
        row = aggregate(
            similarity, self.offsets, self.config, weights=self.weights, scale=self.scale()
        )
        if cached is None:
            return self._finish(row)[0]
        # Blockwise without the full matrix: the same steps with its global score range.
        empty = np.diff(self.offsets) == 0
        if self.config.paper_centering and (~empty).any():
            row = row - row[:, ~empty].mean(axis=1, keepdims=True)
        low, high = self.score_range or (0.0, 0.0)
        row = (row - low) / (high - low) if high > low else np.zeros_like(row)
        row[:, empty] = 0.0
        return row.astype(np.float32)[0]

    def _shared_terms(
        self, paper: int, reviewer: int, n_terms: int
    ) -> tuple[tuple[str, float], ...]:
        assert self.tfidf is not None
        start, stop = int(self.offsets[reviewer]), int(self.offsets[reviewer + 1])
        profile = np.asarray(self.pub_tfidf[start:stop].sum(axis=0)).ravel()
        norm = np.linalg.norm(profile)
        if norm == 0:
            return ()
        profile /= norm
        submission = self.sub_tfidf[paper]
        contributions = submission.data * profile[submission.indices]
        order = np.argsort(-contributions, kind="stable")[:n_terms]
        terms = self.tfidf.terms
        return tuple(
            (str(terms[submission.indices[i]]), float(contributions[i]))
            for i in order
            if contributions[i] > 0
        )


def _check_unique(ids: Sequence[str], kind: str) -> None:
    seen: set[str] = set()
    duplicates = sorted({i for i in ids if i in seen or seen.add(i)})  # type: ignore[func-returns-value]
    if duplicates:
        raise ValueError(f"duplicate {kind} id(s): {', '.join(duplicates[:10])}")


def compute_affinity(
    reviewers: Sequence[Reviewer],
    submissions: Sequence[Submission],
    config: AffinityConfig | None = None,
    *,
    progress: Progress | None = None,
) -> Affinity:
    """Score every (submission, reviewer) pair under ``config`` (default: the chosen default)."""
    model = AffinityModel(config).fit(reviewers, submissions, progress=progress)
    return model.affinity(progress=progress)


# ------------------------------------------------------------------ aggregation
def aggregate(
    similarity: FloatMatrix,
    offsets: npt.NDArray[np.int64],
    config: AffinityConfig,
    *,
    weights: npt.NDArray[np.float32] | None = None,
    scale: float = 1.0,
) -> FloatMatrix:
    """Aggregate publication similarities into reviewer scores.

    ``similarity``: (n_papers, n_pubs), reviewer r owning columns
    ``offsets[r]:offsets[r+1]``; ``weights`` (n_pubs,) recency weights. Returns
    (n_papers, n_reviewers); reviewers without publications get 0.
    max/topk use ``weight * similarity``; mean/softmax use weighted means.
    """
    n_papers = similarity.shape[0]
    counts = np.diff(offsets)
    n_reviewers = counts.shape[0]
    out = np.zeros((n_papers, n_reviewers), dtype=np.float32)
    if n_papers == 0 or not counts.any():
        return out
    width = int(counts.max())
    # Padded (n_reviewers, width) table of publication columns; -1 marks padding.
    slots = np.arange(width)
    valid = slots[None, :] < counts[:, None]
    columns = np.where(valid, offsets[:-1, None] + slots[None, :], 0)
    w = np.ones(similarity.shape[1], np.float32) if weights is None else weights
    values = similarity[:, columns]  # (n_papers, n_reviewers, width)
    wv = np.where(valid, w[columns], 0.0).astype(np.float32)
    has = counts > 0
    method = config.aggregation
    if method in ("max", "topk"):
        weighted = np.where(valid[None], values * wv[None], -np.inf)
        if method == "max":
            result = weighted.max(axis=2)
        else:
            k = min(config.k, width)
            top = -np.partition(-weighted, k - 1, axis=2)[:, :, :k] if k < width else weighted
            top = np.where(np.isfinite(top), top, 0.0)
            result = top.sum(axis=2) / np.minimum(counts, config.k).clip(min=1)[None, :]
    elif method == "mean":
        total = wv.sum(axis=1)
        result = (values * wv[None]).sum(axis=2) / np.where(total > 0, total, 1.0)[None, :]
    else:  # softmax
        temperature = config.temperature * scale
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


def aggregation_weights(
    similarity: npt.NDArray[np.float32],
    config: AffinityConfig,
    recency: npt.NDArray[np.float32] | None = None,
    *,
    scale: float = 1.0,
) -> npt.NDArray[np.float64]:
    """Weight of each of one reviewer's publications in their aggregate.

    The aggregate equals ``sum(weights * similarity)``; for mean/softmax the weights sum
    to 1, for max/topk they are the recency weights of the chosen publications (over k).
    """
    n = similarity.shape[0]
    w = np.ones(n) if recency is None else recency.astype(np.float64)
    if n == 0:
        return w
    s = similarity.astype(np.float64)
    method = config.aggregation
    if method == "max":
        out = np.zeros(n)
        best = int(np.argmax(s * w))
        out[best] = w[best]
        return out
    if method == "topk":
        k = min(config.k, n)
        chosen = np.argsort(-(s * w), kind="stable")[:k]
        out = np.zeros(n)
        out[chosen] = w[chosen] / k
        return out
    if method == "mean":
        return w / w.sum() if w.sum() > 0 else w
    e = np.exp((s - s.max()) / (config.temperature * scale)) * w
    return e / e.sum() if e.sum() > 0 else e
