"""Explanations: the evidence behind one (paper, reviewer) score, in numbers and in words.

:meth:`recommender.affinity.model.AffinityModel.explain` assembles an :class:`Explanation`
from the fitted model:

- ``parts``: the score split into what each source adds, in the score's own units
  (:class:`ScoreParts`: text match (TF-IDF), embedding, bid, and the constant that global
  scaling or paper centering adds), summing to the score;
- ``publications``: the reviewer's publications with their similarity to the paper, their
  weight in the aggregate and their ``share`` of the score's evidence;
- ``shared_terms``: TF-IDF terms the paper shares with the reviewer's profile, without
  filler words (:data:`FILLER_TERMS`, beside the English stop words TF-IDF already drops);
- ``sentence``: one plain sentence (:func:`plain_sentence`).

``Explanation.to_dict()`` is what the API and ``recommender score --explain`` show.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from recommender.affinity.params import ScoringParams
from recommender.affinity.similarity import Standardiser

N_TERMS = 10

MAIN_SHARE = 0.8
"""The publications named in the sentence: the fewest that carry this share of the
evidence (:func:`main_publications`)."""

_FILLER = """
    able abstract account achieve achieves achieved address addresses allow allows
    approach approaches based benefit best better case cases challenge challenging
    characterize conclusion consider contribution contributions current demonstrate
    demonstrated demonstrates design different does effective efficient empirical
    empirically evaluate evaluation existing experiment experimental experiments extensive
    far finally findings framework furthermore general given goal good high importance
    hard harder important improve improved improvement improvements improves including
    introduce data learn learning model models modeling modelling
    introduced introduces investigate key known large learned leads leverage lot make makes
    method methods new novel number obtain paper papers particular perform performance
    performs possible present presented presents previous prior problem problems propose
    proposed proposes provide provides published recent recently related research result
    results second setting settings shown shows significant significantly simple specific
    state study studies suggest task tasks technique techniques terms use used uses using
    various way ways wide widely work works yield yields
"""
FILLER_TERMS = frozenset(_FILLER.split())
"""Words a research abstract uses whatever its subject ("work", "learned", "propose"): not
shown as shared terms (nor any n-gram made only of them)."""


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
    share: float = 0.0
    """Share of the score's evidence: ``max(weight x similarity, 0)`` over its sum across
    the reviewer's publications (0 for a publication that does not count)."""


@dataclass(frozen=True)
class ScoreParts:
    """A score split into its sources, in the score's own units: ``text_match`` (the TF-IDF
    channel), ``embedding``, ``bid`` (``bid_weight x bid``, 0 when none was folded in) and
    ``baseline`` (the constant that min-max scaling of ``combined`` scores, paper centering
    or float rounding add). ``text_match + embedding + bid + baseline == total``."""

    text_match: float
    embedding: float
    bid: float
    baseline: float

    @property
    def total(self) -> float:
        return self.text_match + self.embedding + self.bid + self.baseline

    def to_dict(self) -> dict[str, float]:
        return {
            "text_match": self.text_match,
            "embedding": self.embedding,
            "bid": self.bid,
            "baseline": self.baseline,
            "total": self.total,
        }


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
    parts: ScoreParts | None = None
    sentence: str = ""

    def with_bid(self, bid: float, weight: float | None = None) -> Explanation:
        """This explanation with a bid folded in (``bid`` in -1..1, Very Low..Very High;
        ``weight`` default the parameters' ``bid_weight``): the score and ``parts.bid``
        grow by ``weight x bid`` and the sentence says so."""
        weight = self.params.bid_weight if weight is None else weight
        added = float(weight) * float(bid)
        parts = self.parts or ScoreParts(0.0, 0.0, 0.0, self.score)
        parts = replace(parts, bid=parts.bid + added)
        sentence = self.sentence
        if added:
            sign = "raises" if added > 0 else "lowers"
            sentence += f" The reviewer's bid {sign} the score by {abs(added):.3g}."
        return replace(self, score=self.score + added, parts=parts, sentence=sentence.strip())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``paper_id, reviewer_id, score, sentence, parts`` (see
        :class:`ScoreParts`; null when unknown), ``publications`` (each with ``share``),
        ``shared_terms`` (``term``, ``contribution``) and ``config``."""
        return {
            "paper_id": self.paper_id,
            "reviewer_id": self.reviewer_id,
            "score": self.score,
            "sentence": self.sentence,
            "parts": self.parts.to_dict() if self.parts is not None else None,
            "publications": [asdict(p) for p in self.publications],
            "shared_terms": [{"term": t, "contribution": c} for t, c in self.shared_terms],
            "config": self.params.to_dict(),
        }

    def describe(self, n_publications: int = 5) -> str:
        """The explanation in words (``recommender score --explain``): the sentence, the
        score's parts, the publications that carry it with their shares, the shared terms."""
        lines = [
            f"Score {self.score:.3f} of reviewer {self.reviewer_id} for paper {self.paper_id}."
        ]
        if self.sentence:
            lines.append(self.sentence)
        if self.parts is not None:
            named = [
                ("text match", self.parts.text_match),
                ("embedding", self.parts.embedding),
                ("bid", self.parts.bid),
                ("baseline", self.parts.baseline),
            ]
            shown = [f"{name} {value:+.3f}" for name, value in named if abs(value) >= 5e-4]
            lines.append("Parts: " + (", ".join(shown) if shown else "none"))
        counted = [p for p in self.publications if p.share > 0][:n_publications]
        if counted:
            lines.append("Publications behind it:")
            for p in counted:
                year = f" ({p.year})" if p.year is not None else ""
                lines.append(f"  {p.share:4.0%}  {p.title}{year}")
        if self.shared_terms:
            lines.append("Shared terms: " + ", ".join(t for t, _ in self.shared_terms))
        return "\n".join(lines)


def is_filler(term: str) -> bool:
    """Whether every word of a (possibly n-gram) term is a filler word."""
    return all(word in FILLER_TERMS for word in term.split())


def evidence_shares(contributions: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Each publication's share of the positive evidence (sums to 1 unless all are <= 0)."""
    positive = np.clip(contributions, 0.0, None)
    total = positive.sum()
    return positive / total if total > 0 else np.zeros_like(positive)


def main_publications(shares: npt.NDArray[np.float64], share: float = MAIN_SHARE) -> list[int]:
    """Indices of the fewest publications whose shares reach ``share`` (largest first)."""
    order = np.argsort(-shares, kind="stable")
    chosen: list[int] = []
    covered = 0.0
    for i in order:
        if shares[i] <= 0 or covered >= share - 1e-9:
            break
        chosen.append(int(i))
        covered += float(shares[i])
    return chosen


def plain_sentence(
    n_publications: int,
    main: int,
    main_share: float,
    terms: Sequence[str],
    first_title: str | None,
) -> str:
    """One sentence for a chair, e.g. ``3 of this reviewer's 20 papers are about graph
    neural networks, message passing and molecules, as is this submission (82% of the
    evidence).``"""
    if n_publications == 0:
        return "This reviewer has no publications on record, so the score is 0."
    if main == 0:
        return (
            f"None of this reviewer's {_papers(n_publications)} is closer to this submission "
            "than the venue's average pair."
        )
    lead = (
        f"{main} of this reviewer's {_papers(n_publications)}"
        if n_publications > 1
        else "This reviewer's only paper"
    )
    verb = "are" if main > 1 else "is"
    share = f" ({main_share:.0%} of the evidence)" if n_publications > 1 else ""
    if terms:
        return f"{lead} {verb} about {_listing(terms[:3])}, as is this submission{share}."
    if not first_title:
        title = ""
    elif main > 1:
        title = f', e.g. "{first_title}",'
    else:
        title = f' ("{first_title}")'
    return (
        f"{lead}{title} {verb} close to this submission in meaning, without distinctive "
        f"shared terms{share}."
    )


def _papers(n: int) -> str:
    return f"{n} papers" if n != 1 else "1 paper"


def _listing(items: Sequence[str]) -> str:
    items = [f'"{item}"' for item in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


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
    order = np.argsort(-contributions, kind="stable")
    found: list[tuple[str, float]] = []
    for i in order:
        if contributions[i] <= 0 or len(found) >= n_terms:
            break
        name = term(int(submission.indices[i]))
        if not is_filler(name):
            found.append((name, float(contributions[i])))
    return tuple(found)


def score_parts(
    params: ScoringParams,
    score: float,
    weights: npt.NDArray[np.float64],
    cosines: Mapping[str, npt.NDArray[np.float32]],
    standardisers: Mapping[str, Standardiser],
    value_range: tuple[float, float] | None,
) -> ScoreParts:
    """Split one pair's score into text match, embedding and the constant (see
    :class:`ScoreParts`). The aggregate is ``sum_j weight_j x similarity_j`` and the
    similarity is one channel's cosine or the affine mix of both standardised channels, so
    each channel's part is its share of that sum, in final units (divided by the global
    range ``value_range`` for ``combined``). Rank normalisation is not affine in the
    cosines: its whole score is reported as ``baseline``."""
    text = embedding = 0.0
    if params.method == "tfidf":
        text = float(weights @ cosines["tfidf"].astype(np.float64))
    elif params.method == "embedding":
        embedding = float(weights @ cosines["embedding"].astype(np.float64))
    elif params.normalisation == "zscore":
        a = params.embedding_weight
        t, e = standardisers["tfidf"], standardisers["embedding"]
        low, high = value_range or (0.0, 1.0)
        span = high - low if high > low else 1.0
        text = (1 - a) * float(weights @ ((cosines["tfidf"] - t.mean) / t.std)) / span
        embedding = a * float(weights @ ((cosines["embedding"] - e.mean) / e.std)) / span
    return ScoreParts(text, embedding, 0.0, score - text - embedding)


def assemble_explanation(
    paper_id: str,
    reviewer_id: str,
    score: float,
    params: ScoringParams,
    publications: Sequence[Any],
    similarity: npt.NDArray[np.float32],
    weights: npt.NDArray[np.float64],
    cosines: Mapping[str, npt.NDArray[np.float32]],
    submission: sp.csr_matrix,
    publication_tfidf: sp.csr_matrix,
    term: Callable[[int], str],
    n_terms: int,
    parts: ScoreParts,
) -> Explanation:
    """One pair's :class:`Explanation` from its reviewer's publications (``id``, ``title``,
    ``year``), their aggregated ``similarity``, aggregation ``weights`` and raw ``cosines``
    per channel, and the TF-IDF rows of the submission (1, V) and of the publications."""
    shares = evidence_shares(weights * similarity.astype(np.float64))
    evidence = [
        PublicationEvidence(
            id=publication.id,
            title=publication.title,
            year=publication.year,
            similarity=float(similarity[offset]),
            weight=float(weights[offset]),
            tfidf_similarity=float(cosines["tfidf"][offset]),
            embedding_similarity=(
                float(cosines["embedding"][offset]) if "embedding" in cosines else None
            ),
            share=float(shares[offset]),
        )
        for offset, publication in enumerate(publications)
    ]
    terms = shared_terms(submission, publication_tfidf, term, n_terms)
    main = main_publications(shares)
    main_terms = (
        shared_terms(submission, publication_tfidf[np.array(main)], term, 3) if main else ()
    )
    sentence = plain_sentence(
        len(publications),
        len(main),
        float(shares[main].sum()) if main else 0.0,
        [t for t, _ in main_terms],
        evidence[main[0]].title if main else None,
    )
    evidence.sort(key=lambda e: (-e.share, -e.weight, -e.similarity))
    return Explanation(
        paper_id, reviewer_id, score, tuple(evidence), terms, params, parts, sentence
    )
