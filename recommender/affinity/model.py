"""The fitted affinity model of one venue: profiles every text once, then scores every pair
and explains any single one.

``AffinityModel(params, options).fit(reviewers, submissions)`` learns (attributes ending in
``_``, scikit-learn style): the TF-IDF vocabulary and vectors of every publication and
submission, their embeddings (``method`` embedding/combined), each publication's recency
weight and the global standardisation of each similarity channel. Then:

- :meth:`AffinityModel.affinity` scores every pair. Dense path: (paper chunk x every
  publication) similarity blocks, while ``n_papers * n_publications`` is at most
  ``options.blockwise_min_pairs``; above it, or when the full (n_papers, n_reviewers)
  float32 matrix would exceed ``options.dense_limit_bytes``, blockwise scoring
  (:mod:`recommender.affinity.blockwise`: bounded memory, same scores up to float32
  rounding). Without the full matrix the :class:`~recommender.affinity.result.Affinity`
  holds each paper's top ``options.keep_per_paper`` reviewers and each reviewer's top
  ``options.keep_per_reviewer`` papers. Rank normalisation is not affine, so ``combined`` +
  ``rank`` always uses the dense path. Scoring also learns ``score_range_``, the range
  the global finishing step (min-max scaling of ``combined``) uses.
- :meth:`AffinityModel.explain` gives the evidence for one pair without scoring the venue
  again (it needs ``score_range_`` for ``combined``: scored first if unknown).

Fitting profiles the texts (:func:`recommender.affinity.fitting.profile_venue`: TF-IDF,
embeddings, near-duplicates dropped, recency weights); the model keeps the vectors.
:func:`recommender.affinity.store.save_model` / ``load_model`` persist a fitted model, so a
service can explain any pair of a scored venue in well under a second.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from recommender.affinity.aggregation import (
    aggregate,
    aggregation_weights,
    finish,
    finish_rows,
    is_linear,
    mean_profiles,
    observed_range,
    profile_offsets,
)
from recommender.affinity.block_scoring import SparseAffinity
from recommender.affinity.blockwise import blockwise_affinity
from recommender.affinity.explain import (
    N_TERMS,
    Explanation,
    ScoreParts,
    assemble_explanation,
    plain_sentence,
    score_parts,
)
from recommender.affinity.fitting import EMBEDDING_SHARE, PublicationInfo, profile_venue
from recommender.affinity.options import RunOptions
from recommender.affinity.params import ScoringParams
from recommender.affinity.result import Affinity, csr_from_pairs
from recommender.affinity.similarity import (
    Channel,
    Standardiser,
    affine_channels,
    cosine_block,
    fit_standardisers,
    mixed_similarity,
)
from recommender.corpus import Reviewer, Submission
from recommender.profiles import TextEncoder, TfidfProfiler
from recommender.progress import ScoringMeter

FloatMatrix = npt.NDArray[np.float32]
Progress = Callable[[float, str], None]

# Elements of one (paper chunk, publication) similarity block on the dense path.
_CHUNK_ELEMENTS = 4_000_000


def _no_progress(fraction: float, stage: str) -> None:
    return None


class AffinityModel:
    """Fitted profiles of one venue: scores every pair and explains any single one.

    ``params``: what the scores are (:class:`~recommender.affinity.params.ScoringParams`);
    ``options``: how the run is carried out (:class:`~recommender.affinity.options.
    RunOptions`: model directories, cache, device, memory bounds); ``encoder``: embeds
    texts elsewhere (e.g. :class:`recommender.distributed.DaskTextEncoder`). See the
    module docstring for the fitted attributes and the scoring paths.
    """

    def __init__(
        self,
        params: ScoringParams | None = None,
        options: RunOptions | None = None,
        *,
        encoder: TextEncoder | None = None,
    ):
        self.params = params or ScoringParams()
        self.options = options or RunOptions()
        self.encoder = encoder

    # ----------------------------------------------------------------- fitting
    def fit(
        self,
        reviewers: Sequence[Reviewer],
        submissions: Sequence[Submission],
        *,
        progress: Progress | None = None,
    ) -> AffinityModel:
        """Profile every publication and submission text. ``progress(fraction, stage)``
        (fraction of this fit: texts embedded when embedding, else TF-IDF done) may raise
        to cancel. Duplicate paper or reviewer ids raise ValueError."""
        report = progress or _no_progress
        profiles = profile_venue(
            reviewers, submissions, self.params, self.options, encoder=self.encoder, report=report
        )
        self.paper_ids_ = profiles.paper_ids
        self.reviewer_ids_ = profiles.reviewer_ids
        self.publications_: Sequence[PublicationInfo] = profiles.publications
        self.offsets_ = profiles.offsets
        self.publication_weights_ = profiles.publication_weights
        self.tfidf_: TfidfProfiler | None = profiles.tfidf
        self.embedder_ = profiles.embedder
        self.pub_tfidf_ = profiles.pub_tfidf
        self.sub_tfidf_ = profiles.sub_tfidf
        self.pub_embedding_: FloatMatrix | None = profiles.pub_embedding
        self.sub_embedding_: FloatMatrix | None = profiles.sub_embedding
        # The vocabulary, read when first needed.
        self.terms_: Sequence[str] | npt.NDArray[np.str_] | None = None
        self.score_range_: tuple[float, float] | None = None
        self._index()
        profiled = 1.0 - (0.1 * (1.0 - EMBEDDING_SHARE) if self.params.uses_embedding else 0.1)
        report(profiled, "standardising similarities")
        used = {name: self.channels()[name] for name in self._channel_names()}
        self.standardisers_: dict[str, Standardiser] = fit_standardisers(used, self.params)
        report(1.0, "fitted")
        return self

    def _index(self) -> None:
        self._paper_index = {p: i for i, p in enumerate(self.paper_ids_)}
        self._reviewer_index = {r: i for i, r in enumerate(self.reviewer_ids_)}

    def _channel_names(self) -> tuple[str, ...]:
        """Channels whose global standardisation is used: both for ``combined`` (the mix),
        the method's own for ``softmax`` (its temperature unit), else none."""
        if self.params.method == "combined":
            return ("tfidf", "embedding")
        return (self.params.method,) if self.params.aggregation == "softmax" else ()

    def check_fitted(self) -> None:
        """Raise sklearn's ``NotFittedError`` unless :meth:`fit` (or a load) has run."""
        if not hasattr(self, "offsets_"):
            raise NotFittedError("this AffinityModel is not fitted yet: call fit() first")

    @property
    def has_publications(self) -> npt.NDArray[np.bool_]:
        """(n_reviewers,) whether each reviewer has any publication."""
        return np.diff(self.offsets_) > 0

    def paper_index(self, paper_id: str) -> int:
        try:
            return self._paper_index[paper_id]
        except KeyError:
            raise KeyError(f"unknown paper id {paper_id!r}") from None

    def reviewer_index(self, reviewer_id: str) -> int:
        try:
            return self._reviewer_index[reviewer_id.removeprefix("~")]
        except KeyError:
            raise KeyError(f"unknown reviewer id {reviewer_id!r}") from None

    # ---------------------------------------------------------- similarities
    def channels(self) -> dict[str, Channel]:
        """The fitted similarity channels by name (``tfidf``; ``embedding`` when fitted)."""
        self.check_fitted()
        channels = {"tfidf": Channel(self.sub_tfidf_, self.pub_tfidf_)}
        if self.sub_embedding_ is not None and self.pub_embedding_ is not None:
            channels["embedding"] = Channel(self.sub_embedding_, self.pub_embedding_)
        return channels

    def raw_similarity(self, name: str, papers: npt.NDArray[np.int64] | slice) -> FloatMatrix:
        """Cosine similarity of the given submissions to every publication: (n, n_pubs)."""
        return cosine_block(self.channels()[name], papers)

    def publication_similarity(self, papers: npt.NDArray[np.int64] | slice) -> FloatMatrix:
        """The similarity that is aggregated: (n, n_pubs), cosine or standardised mix."""
        return mixed_similarity(self.channels(), self.standardisers_, self.params, papers)

    def scale(self) -> float:
        """Std of the aggregated similarity: the unit of the softmax temperature."""
        if self.params.method == "combined":
            return 1.0
        standardiser = self.standardisers_.get(self.params.method)
        return standardiser.std if standardiser is not None else 1.0

    # ------------------------------------------------------------- scoring
    def uses_blockwise(self) -> bool:
        """Whether :meth:`affinity` scores blockwise (see the module docstring)."""
        self.check_fitted()
        params = self.params
        if params.method == "combined" and params.normalisation != "zscore":
            return False
        n_papers, n_reviewers = len(self.paper_ids_), len(self.reviewer_ids_)
        n_pubs = int(self.offsets_[-1])
        if n_papers == 0 or n_reviewers == 0 or n_pubs == 0:
            return False
        return n_papers * n_pubs > self.options.blockwise_min_pairs or not self.fits_dense()

    def fits_dense(self) -> bool:
        """Whether the full score matrix fits ``options.dense_limit_bytes``."""
        return len(self.paper_ids_) * len(self.reviewer_ids_) * 4 <= self.options.dense_limit_bytes

    def keeps_dense(self) -> bool:
        """Whether scoring keeps every pair (it fits, and ``options.keep_full_matrix``;
        the dense path always does)."""
        return self.fits_dense() and (self.options.keep_full_matrix or not self.uses_blockwise())

    def affinity(self, *, progress: Progress | None = None) -> Affinity:
        """Score every (paper, reviewer) pair (dense or blockwise: see the module
        docstring). ``progress(fraction, stage)``: fraction of papers scored, with papers
        done/total, papers/s and time left (:class:`~recommender.progress.ScoringMeter`:
        at the start, every few seconds as blocks finish, at the end); it may raise to
        cancel."""
        if self.uses_blockwise():
            return self._blockwise_affinity(progress)
        report = progress or _no_progress
        n_papers, n_reviewers = len(self.paper_ids_), len(self.reviewer_ids_)
        raw = np.zeros((n_papers, n_reviewers), dtype=np.float32)
        n_pubs = int(self.offsets_[-1])
        if n_papers and n_pubs:
            width = max(1, int(np.diff(self.offsets_).max()))
            chunk = max(1, _CHUNK_ELEMENTS // max(n_reviewers * width, n_pubs))
            meter = ScoringMeter(n_papers, -(-n_papers // chunk), report)
            meter.update(0.0, 0, force=True)
            for number, start in enumerate(range(0, n_papers, chunk), start=1):
                stop = min(n_papers, start + chunk)
                raw[start:stop] = aggregate(
                    self.publication_similarity(slice(start, stop)),
                    self.offsets_,
                    self.params,
                    weights=self.publication_weights_,
                    scale=self.scale(),
                )
                meter.update(stop / n_papers, number, force=stop == n_papers)
        has = self.has_publications
        rows = finish_rows(raw, has, self.params)
        self.score_range_ = observed_range(rows, has)
        scores = finish(rows, self.params, self.score_range_)
        scores[:, ~has] = 0.0
        return Affinity(self.paper_ids_, self.reviewer_ids_, scores, self.params)

    def affine_channels(self) -> tuple[list[Channel], float]:
        """Channels and intercept of blockwise scoring (see
        :func:`recommender.affinity.similarity.affine_channels`)."""
        return affine_channels(self.channels(), self.standardisers_, self.params)

    def blockwise_options(self) -> dict[str, Any]:
        """Keyword arguments of :func:`~recommender.affinity.blockwise.blockwise_affinity`
        (and its Dask twin) for this model's vectors, parameters and run options.

        A linear aggregation (mean) is scored against each reviewer's weighted mean
        publication vector (:func:`~recommender.affinity.aggregation.mean_profiles`): the
        same scores up to float32 rounding, for a twentieth of the work."""
        channels, intercept = self.affine_channels()
        options = self.options
        offsets = self.offsets_
        weights: npt.NDArray[np.float32] | None = self.publication_weights_
        if is_linear(self.params):
            channels = [
                Channel(
                    channel.paper_vectors,
                    mean_profiles(channel.publication_vectors, offsets, weights),
                    channel.coefficient,
                )
                for channel in channels
            ]
            offsets, weights = profile_offsets(offsets), None
        return {
            "paper_vectors": channels,
            "publication_vectors": None,
            "offsets": offsets,
            "params": self.params,
            "publication_weights": weights,
            "scale": self.scale(),
            "intercept": intercept,
            "k_per_paper": options.keep_per_paper,
            "k_per_reviewer": options.keep_per_reviewer,
            "paper_block": options.paper_block_for(len(self.reviewer_ids_)),
            "publication_block": options.publication_block,
            "keep_dense": self.keeps_dense(),
        }

    def _blockwise_affinity(self, progress: Progress | None) -> Affinity:
        return self.affinity_from_blockwise(
            blockwise_affinity(**self.blockwise_options(), progress=progress)
        )

    def affinity_from_blockwise(self, result: SparseAffinity) -> Affinity:
        """Wrap a blockwise result over this model's profiles (local or Dask) as an
        :class:`Affinity`: the full matrix when it was kept, else the kept pairs."""
        shape = (len(self.paper_ids_), len(self.reviewer_ids_))
        if (result.n_papers, result.n_reviewers) != shape:
            raise ValueError(
                f"blockwise result is {result.n_papers} x {result.n_reviewers}, the model "
                f"{shape[0]} x {shape[1]}"
            )
        self.score_range_ = result.value_range
        if result.dense is not None:
            return Affinity(self.paper_ids_, self.reviewer_ids_, result.dense_scores(), self.params)
        rows, cols, values = result.candidates()
        return Affinity(
            self.paper_ids_,
            self.reviewer_ids_,
            None,
            self.params,
            kept=csr_from_pairs(rows, cols, values, shape),
            kept_per_paper=result.k_per_paper,
            kept_per_reviewer=result.k_per_reviewer,
        )

    def _known_range(self) -> tuple[float, float] | None:
        """The global score range (scoring the venue first if it is needed and unknown)."""
        if self.params.scales_to_unit_range and self.score_range_ is None:
            self.affinity()
        return self.score_range_

    def affinity_row(self, paper: int) -> FloatMatrix:
        """Final scores of one paper against every reviewer: (n_reviewers,), the values of
        ``affinity().scores[paper]`` up to float32 rounding, also when the full matrix is
        not kept."""
        self.check_fitted()
        similarity = self.publication_similarity(np.array([paper]))
        raw = aggregate(
            similarity,
            self.offsets_,
            self.params,
            weights=self.publication_weights_,
            scale=self.scale(),
        )
        has = self.has_publications
        row = finish(finish_rows(raw, has, self.params), self.params, self._known_range())
        row[:, ~has] = 0.0
        return row[0]

    def pair_score(self, paper: int, reviewer: int) -> float:
        """Final score of one pair (by index). Reads only the reviewer's publications
        unless paper centering needs the paper's whole row."""
        self.check_fitted()
        if self.params.paper_centering:
            return float(self.affinity_row(paper)[reviewer])
        start, stop = int(self.offsets_[reviewer]), int(self.offsets_[reviewer + 1])
        if stop == start:
            return 0.0
        similarity = self._reviewer_similarity(paper, start, stop)[None, :]
        raw = aggregate(
            similarity,
            np.array([0, stop - start]),
            self.params,
            weights=self.publication_weights_[start:stop],
            scale=self.scale(),
        )
        return float(finish(raw, self.params, self._known_range())[0, 0])

    def pair_scores(
        self, papers: npt.NDArray[np.int64], reviewers: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.float32]:
        """Final scores of many pairs (by index), each as :meth:`pair_score` gives it: one
        similarity block of the distinct papers against the distinct reviewers'
        publications, aggregated at once (with paper centering, one row per distinct
        paper)."""
        self.check_fitted()
        papers = np.asarray(papers, dtype=np.int64)
        reviewers = np.asarray(reviewers, dtype=np.int64)
        found = np.zeros(len(papers), dtype=np.float32)
        if not len(papers):
            return found
        distinct, at = np.unique(papers, return_inverse=True)
        if self.params.paper_centering:
            for i, paper in enumerate(distinct):
                found[at == i] = self.affinity_row(int(paper))[reviewers[at == i]]
            return found
        people, of = np.unique(reviewers, return_inverse=True)
        starts, stops = self.offsets_[people], self.offsets_[people + 1]
        lengths = (stops - starts).astype(np.int64)
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        # every chosen reviewer's publications, in order: start + position within the run
        pubs = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
        channels = {
            name: Channel(channel.paper_vectors, channel.publication_vectors[pubs])
            for name, channel in self.channels().items()
        }
        # (TF-IDF scores are identical to pair_score's; embeddings may differ in the float32
        # last bit: BLAS rounds another shape of product differently)
        similarity = mixed_similarity(channels, self.standardisers_, self.params, distinct)
        raw = aggregate(
            similarity,
            offsets,
            self.params,
            weights=self.publication_weights_[pubs],
            scale=self.scale(),
        )
        final = finish(raw, self.params, self._known_range())
        found[:] = final[at, of]
        found[lengths[of] == 0] = 0.0
        return found

    def _reviewer_similarity(self, paper: int, start: int, stop: int) -> FloatMatrix:
        """The aggregated similarity of one paper to publications [start, stop): (n,)."""
        channels = {
            name: Channel(channel.paper_vectors, channel.publication_vectors[start:stop])
            for name, channel in self.channels().items()
        }
        return mixed_similarity(channels, self.standardisers_, self.params, np.array([paper]))[0]

    # -------------------------------------------------------------- explain
    def explain(self, paper_id: str, reviewer_id: str, *, n_terms: int = N_TERMS) -> Explanation:
        """Evidence for one pair: each of the reviewer's publications with its similarity
        and weight in the aggregate, and the top shared TF-IDF terms. Reads only this
        pair's vectors (the paper's whole row with paper centering)."""
        self.check_fitted()
        p, r = self.paper_index(paper_id), self.reviewer_index(reviewer_id)
        reviewer_key = self.reviewer_ids_[r]
        start, stop = int(self.offsets_[r]), int(self.offsets_[r + 1])
        score = self.pair_score(p, r)
        if stop == start:
            return Explanation(
                paper_id,
                reviewer_key,
                score,
                (),
                (),
                self.params,
                ScoreParts(0.0, 0.0, 0.0, score),
                plain_sentence(0, 0, 0.0, [], None),
            )
        similarity = self._reviewer_similarity(p, start, stop)
        weights = aggregation_weights(
            similarity, self.params, self.publication_weights_[start:stop], scale=self.scale()
        )
        cosines = {
            name: cosine_block(
                Channel(channel.paper_vectors, channel.publication_vectors[start:stop]),
                np.array([p]),
            )[0]
            for name, channel in self.channels().items()
        }
        params = self.params
        parts = score_parts(
            params,
            score,
            weights,
            cosines,
            self.standardisers_,
            self._known_range() if params.method == "combined" else None,
        )
        return assemble_explanation(
            paper_id,
            reviewer_key,
            score,
            params,
            self.publications_[start:stop],
            similarity,
            weights,
            cosines,
            sp.csr_matrix(self.sub_tfidf_[p]),
            self.pub_tfidf_[start:stop],
            self.term,
            n_terms,
            parts,
        )

    def term(self, column: int) -> str:
        """The TF-IDF vocabulary term of a column."""
        terms = self.terms_
        if terms is None:
            assert self.tfidf_ is not None
            terms = self.terms_ = self.tfidf_.terms
        return str(terms[column])


def compute_affinity(
    reviewers: Sequence[Reviewer],
    submissions: Sequence[Submission],
    params: ScoringParams | None = None,
    options: RunOptions | None = None,
    *,
    progress: Progress | None = None,
) -> Affinity:
    """Score every (submission, reviewer) pair under ``params`` (default: the default).
    ``progress(fraction, stage)`` covers fitting and scoring and may raise to cancel."""
    report = progress or _no_progress
    params = params or ScoringParams()
    fit_share = 0.85 if params.uses_embedding else 0.4
    model = AffinityModel(params, options).fit(
        reviewers, submissions, progress=lambda f, stage: report(fit_share * f, stage)
    )
    return model.affinity(progress=lambda f, stage: report(fit_share + (1 - fit_share) * f, stage))
