"""Explanations: the evidence behind one (paper, reviewer) score.

:meth:`recommender.affinity.model.AffinityModel.explain` assembles an :class:`Explanation`
from the fitted model: the reviewer's publications with their similarity to the paper and
their weight in the aggregate, and the TF-IDF terms the paper shares with the reviewer's
profile (:func:`shared_terms`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from recommender.affinity.params import ScoringParams

N_TERMS = 10


@dataclass(frozen=True)
class PublicationEvidence:
    """One reviewer publication's part in a score: ``similarity`` is what was aggregated
    (a cosine, or the standardised mix for ``combined``), ``weight`` its weight in the
    aggregate; the raw cosines of each channel are given too (None: channel not fitted)."""

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
    (the terms sum to that TF-IDF cosine), top :data:`N_TERMS`.
    """

    paper_id: str
    reviewer_id: str
    score: float
    publications: tuple[PublicationEvidence, ...]
    shared_terms: tuple[tuple[str, float], ...]
    params: ScoringParams

    def to_dict(self) -> dict[str, Any]:
        return {
            "paper_id": self.paper_id,
            "reviewer_id": self.reviewer_id,
            "score": self.score,
            "publications": [asdict(p) for p in self.publications],
            "shared_terms": [{"term": t, "contribution": c} for t, c in self.shared_terms],
            "config": self.params.to_dict(),
        }


def shared_terms(
    submission: sp.csr_matrix,
    publications: sp.csr_matrix,
    term: Callable[[int], str],
    n_terms: int = N_TERMS,
) -> tuple[tuple[str, float], ...]:
    """Top terms of the TF-IDF cosine between one submission (1, V) and the L2-normalised
    sum of a reviewer's publication vectors (n, V); ``term(column)`` names a column."""
    profile = np.asarray(publications.sum(axis=0)).ravel()
    norm = np.linalg.norm(profile)
    if norm == 0 or submission.nnz == 0:
        return ()
    profile /= norm
    contributions = submission.data * profile[submission.indices]
    order = np.argsort(-contributions, kind="stable")[:n_terms]
    return tuple(
        (term(int(submission.indices[i])), float(contributions[i]))
        for i in order
        if contributions[i] > 0
    )
