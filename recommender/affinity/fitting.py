"""Profiling a venue's texts: the vectors an :class:`~recommender.affinity.model.AffinityModel`
is fitted with.

:func:`profile_venue` turns every publication and submission text into TF-IDF vectors
(always: explanations report shared terms whatever the method) and, when the method uses
them, sentence embeddings; drops a reviewer's near-duplicate publications; and weighs each
publication by its recency. The model keeps the result as its fitted attributes and scores
and explains with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from recommender.affinity.options import RunOptions
from recommender.affinity.params import ScoringParams
from recommender.affinity.similarity import near_duplicates
from recommender.corpus import Reviewer, Submission
from recommender.embeddings import EmbeddingCache
from recommender.profiles import EmbeddingProfiler, TextEncoder, TfidfProfiler

FloatMatrix = npt.NDArray[np.float32]
Progress = Callable[[float, str], None]

# Share of the profiling progress that embedding takes when texts are embedded.
EMBEDDING_SHARE = 0.85


class PublicationInfo(Protocol):
    """What an explanation shows of a publication."""

    @property
    def id(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def year(self) -> int | None: ...


@dataclass(frozen=True)
class VenueProfiles:
    """Every text of a venue as vectors. Publications are those kept (near-duplicates of a
    reviewer's own dropped), reviewer r's rows ``offsets[r]:offsets[r + 1]``."""

    paper_ids: tuple[str, ...]
    reviewer_ids: tuple[str, ...]
    publications: Sequence[PublicationInfo]
    offsets: npt.NDArray[np.int64]
    publication_weights: npt.NDArray[np.float32]
    tfidf: TfidfProfiler
    embedder: EmbeddingProfiler | None
    pub_tfidf: sp.csr_matrix
    sub_tfidf: sp.csr_matrix
    pub_embedding: FloatMatrix | None
    sub_embedding: FloatMatrix | None


def profile_venue(
    reviewers: Sequence[Reviewer],
    submissions: Sequence[Submission],
    params: ScoringParams,
    options: RunOptions,
    *,
    encoder: TextEncoder | None = None,
    report: Progress,
) -> VenueProfiles:
    """Profile every publication and submission text. ``report(fraction, stage)``
    (fraction of the profiling: texts embedded when embedding, else TF-IDF done; it reaches
    ``0.9 * (1 - EMBEDDING_SHARE) + EMBEDDING_SHARE`` or 0.9, the rest is the model's) may
    raise to cancel. Duplicate paper or reviewer ids raise ValueError."""
    paper_ids = tuple(s.id for s in submissions)
    reviewer_ids = tuple(r.id.removeprefix("~") for r in reviewers)
    check_unique(paper_ids, "submission")
    check_unique(reviewer_ids, "reviewer")
    publications = [p for r in reviewers for p in r.publications]
    counts = np.array([len(r.publications) for r in reviewers], dtype=np.int64)
    pub_texts = [p.text for p in publications]
    sub_texts = [s.text for s in submissions]
    embedding_share = EMBEDDING_SHARE if params.uses_embedding else 0.0
    tfidf_done = (1.0 - embedding_share) * 0.9

    # TF-IDF is always fitted: explanations report shared terms whatever the method.
    report(0.0, f"fitting TF-IDF on {len(pub_texts) + len(sub_texts):,} texts")
    tfidf = TfidfProfiler(
        ngram_range=(1, params.tfidf_ngram_max),
        min_df=params.tfidf_min_df,
        max_df=params.tfidf_max_df,
        workers=options.workers,
    )
    counting_share = 0.8 * tfidf_done  # counting terms is most of fitting TF-IDF
    vectors = tfidf.fit_transform(
        pub_texts + sub_texts,
        progress=lambda done, total: report(
            counting_share * done / max(total, 1),
            f"fitting TF-IDF: {done:,} / {total:,} texts counted",
        ),
    )
    report(tfidf_done, "fitted TF-IDF")
    pub_embedding: FloatMatrix | None = None
    sub_embedding: FloatMatrix | None = None
    embedder = None
    if params.uses_embedding:
        cache = EmbeddingCache(options.cache_dir) if options.cache_dir else None
        embedder = EmbeddingProfiler(
            options.model_path(params.model),
            cache=cache,
            batch_size=options.batch_size,
            device=options.device,
            backend=options.encoder_backend,
            encoder=encoder,
        )
        report(tfidf_done, f"embedding {len(pub_texts) + len(sub_texts):,} texts")
        embedded = embedder.transform(
            pub_texts + sub_texts,
            progress=lambda fraction, stage: report(tfidf_done + embedding_share * fraction, stage),
        )
        pub_embedding = embedded[: len(pub_texts)]
        sub_embedding = embedded[len(pub_texts) :]

    if params.duplicate_threshold is not None and publications:
        # Near-duplicates of a reviewer's own publications count once: dropped from the
        # profile (their vectors, their place in the explanations).
        pub_vectors = pub_embedding if pub_embedding is not None else vectors[: len(pub_texts)]
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        duplicate = near_duplicates(pub_vectors, offsets, params.duplicate_threshold)
        if duplicate.any():
            keep = np.flatnonzero(~duplicate)
            owner = np.repeat(np.arange(counts.size), counts)
            counts = np.bincount(owner[keep], minlength=counts.size).astype(np.int64)
            publications = [publications[j] for j in keep]
            if pub_embedding is not None:
                pub_embedding = pub_embedding[keep]
            vectors = sp.vstack(
                [vectors[: len(pub_texts)][keep], vectors[len(pub_texts) :]], format="csr"
            )
            pub_texts = [pub_texts[j] for j in keep]
    return VenueProfiles(
        paper_ids=paper_ids,
        reviewer_ids=reviewer_ids,
        publications=publications,
        offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        publication_weights=recency_weights(publications, params),
        tfidf=tfidf,
        embedder=embedder,
        pub_tfidf=vectors[: len(pub_texts)],
        sub_tfidf=vectors[len(pub_texts) :],
        pub_embedding=pub_embedding,
        sub_embedding=sub_embedding,
    )


def check_unique(ids: Sequence[str], kind: str) -> None:
    """ValueError naming up to ten ids that occur more than once."""
    seen: set[str] = set()
    duplicates = sorted({i for i in ids if i in seen or seen.add(i)})  # type: ignore[func-returns-value]
    if duplicates:
        raise ValueError(f"duplicate {kind} id(s): {', '.join(duplicates[:10])}")


def recency_weights(
    publications: Sequence[PublicationInfo], params: ScoringParams
) -> npt.NDArray[np.float32]:
    """(n_pubs,) weight of each publication: ``0.5 ** (age / recency_half_life)``, age in
    years before ``reference_year`` (default the newest year); 1 when unknown or off."""
    weights = np.ones(len(publications), dtype=np.float32)
    if params.recency_half_life is None:
        return weights
    years = [p.year for p in publications if p.year is not None]
    reference = params.reference_year or (max(years) if years else None)
    if reference is None:
        return weights
    for j, publication in enumerate(publications):
        if publication.year is not None:
            age = max(0, reference - publication.year)
            weights[j] = 0.5 ** (age / params.recency_half_life)
    return weights
