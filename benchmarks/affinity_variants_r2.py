"""Affinity research, round 2: variants of the default, each compared with it pairwise by
rater-level cross-validation on a gold folder.

Reference: the default (``combined``: 10% TF-IDF + 90% all-mpnet-base-v2, each channel
globally z-scored and mixed per publication, mean over the reviewer's publications). Every
variant changes one thing (or, last, two) and is scored on every draw; then repeated
rater-level 2-fold CV (:mod:`recommender.crossval`) gives, per variant, the paired
difference to the default on all raters (± its SE), the mean and std of that difference on
the held-out halves, the share of held-out halves where the variant wins, and the draws it
wins; finally the held-out loss of *choosing* among all of them on the other half (what the
search itself is worth). Groups:

- a second local model: no installable package ships another strong one (README), so
  MiniLM, fused at the publication level;
- the lexical channel at 10%: BM25 (raw; divided by the paper's IDF mass), TF-IDF with
  ``min_df=2``, ``max_df=0.25``, bigrams, linear tf; TF-IDF of the whole profile as one
  document (score-level mix);
- reviewer-side evidence: recency weights (half-life 5, 10 years), near-duplicate
  publications sharing one weight (MPNet cosine > 0.8, 0.9), weights by typicality
  (cosine to the reviewer's own centroid), author position (the profile's owner is the
  author on most of its publications, strictly; publications where the owner is a middle
  author weigh 0.5), mean + 0.2 max, mean of the top 75%;
- paper-side: partial per-paper centering (subtract 0.25, 0.5 or 1 x the paper's mean
  over reviewers), title and abstract embedded separately and fused, sentence windows
  (mean vector; mean over a paper's windows of the best window of a publication), MPNet
  vectors centred on the draw's mean (and the top principal direction removed), rank
  normalisation of the channels instead of z-scores.

The texts are embedded once per model and view (the on-disk embedding cache keeps them;
MPNet titles, abstracts and windows are ~2,200 more texts, a few minutes on 2 cores).
From the repository root:

    python benchmarks/affinity_variants_r2.py --gold ../shared/gold-dev --splits 200
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from scipy.stats import rankdata
from sklearn.feature_extraction.text import CountVectorizer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.affinity_variants import Channels, Draw, chunks
from recommender.corpus import join_title_abstract
from recommender.crossval import cross_validate
from recommender.embeddings import default_cache_dir
from recommender.evaluate import gold_draws, read_gold_ratings
from recommender.packaged_models import MPNET_NAME, packaged_model_path
from recommender.profiles import EmbeddingProfiler, TfidfProfiler, tokenize

Matrix = npt.NDArray[np.float64]
Weights = Callable[["RoundTwoChannels", int], Matrix]
Scorer = Callable[["RoundTwoChannels", int], Matrix]


class RoundTwoChannels(Channels):
    """:class:`Channels` plus BM25, more TF-IDF options, abstract-only and per-window MPNet
    vectors, centred MPNet vectors."""

    def __init__(self, draws: list[Draw], cache_dir: Path):
        super().__init__(draws, cache_dir)
        self.window_vectors: dict[str, npt.NDArray[np.float32]] | None = None

    def _table(self, model: str, view: str) -> dict[str, npt.NDArray[np.float32]]:
        if view != "abstract":
            return super()._table(model, view)
        key = f"{model}:{view}"
        if key not in self.tables:
            items = sorted(self._items())
            profiler = EmbeddingProfiler(packaged_model_path(model), cache=self.cache)
            vectors = profiler.transform([a.strip() or t for t, a in items])
            self.tables[key] = {
                join_title_abstract(t, a): v for (t, a), v in zip(items, vectors, strict=True)
            }
        return self.tables[key]

    def _windows(self) -> dict[str, npt.NDArray[np.float32]]:
        """MPNet vectors of every sentence window (cached on disk like any text)."""
        if self.window_vectors is None:
            texts = sorted({c for item in self._items() for c in chunks(*item)})
            profiler = EmbeddingProfiler(packaged_model_path(MPNET_NAME), cache=self.cache)
            self.window_vectors = dict(zip(texts, profiler.transform(texts), strict=True))
        return self.window_vectors

    def _compute(self, draw: Draw, name: str) -> Matrix:
        if name.startswith("bm25"):
            return _bm25(draw, per_idf_mass=name == "bm25/idf")
        options = {
            "tfidf-min-df-2": {"min_df": 2},
            "tfidf-max-df-0.25": {"max_df": 0.25},
        }
        if name in options:
            profiler = TfidfProfiler(**options[name])  # type: ignore[arg-type]
            texts = [p.text for p in draw.publications]
            vectors = profiler.fit_transform(texts + [s.text for s in draw.submissions])
            return np.asarray((vectors[len(texts) :] @ vectors[: len(texts)].T).toarray())
        if name == "tfidf-profile":  # (n_papers, n_reviewers): one document per reviewer
            profiler = TfidfProfiler()
            docs = [" ".join(p.text for p in r.publications) for r in draw.reviewers]
            vectors = profiler.fit_transform(docs + [s.text for s in draw.submissions])
            return np.asarray((vectors[len(docs) :] @ vectors[: len(docs)].T).toarray())
        if name == "mpnet:windows-maxmean":
            return self._windows_max_mean(draw)
        if name.startswith("mpnet:centred"):
            table = self._table(MPNET_NAME, "text")
            pubs = np.stack([table[p.text] for p in draw.publications]).astype(np.float64)
            subs = np.stack([table[s.text] for s in draw.submissions]).astype(np.float64)
            mean = np.concatenate([pubs, subs]).mean(0)
            pubs, subs = pubs - mean, subs - mean
            if name.endswith("-pc1"):
                top = np.linalg.svd(np.concatenate([pubs, subs]), full_matrices=False)[2][:1]
                pubs, subs = pubs - (pubs @ top.T) @ top, subs - (subs @ top.T) @ top
            pubs /= np.linalg.norm(pubs, axis=1, keepdims=True)
            subs /= np.linalg.norm(subs, axis=1, keepdims=True)
            return subs @ pubs.T
        return super()._compute(draw, name)

    def _windows_max_mean(self, draw: Draw) -> Matrix:
        """Mean over the paper's windows of its best cosine with a publication's windows."""
        vectors = self._windows()
        pub_windows = [chunks(p.title, p.abstract) for p in draw.publications]
        owner = np.repeat(np.arange(len(pub_windows)), [len(w) for w in pub_windows])
        pub_matrix = np.stack([vectors[c] for w in pub_windows for c in w]).astype(np.float64)
        out = np.zeros((len(draw.submissions), len(pub_windows)))
        for i, s in enumerate(draw.submissions):
            paper = np.stack([vectors[c] for c in chunks(s.title, s.abstract)])
            similarity = paper.astype(np.float64) @ pub_matrix.T  # (paper windows, all)
            best = np.full((len(pub_windows), paper.shape[0]), -np.inf)
            np.maximum.at(best, owner, similarity.T)
            out[i] = best.mean(axis=1)
        return out


def _bm25(draw: Draw, *, per_idf_mass: bool, k1: float = 1.2, b: float = 0.75) -> Matrix:
    """Okapi BM25 of each paper (query: its distinct terms) against each publication."""
    pubs = [p.text for p in draw.publications]
    counter = CountVectorizer(
        strip_accents="unicode", tokenizer=tokenize, token_pattern=None, stop_words="english"
    )
    counts = sp.csr_matrix(counter.fit_transform(pubs + [s.text for s in draw.submissions]))
    counts = counts.astype(np.float64)
    n = len(pubs)
    df = np.asarray((counts > 0).sum(axis=0)).ravel()
    idf = np.log(1 + (counts.shape[0] - df + 0.5) / (df + 0.5))
    documents = sp.coo_matrix(counts[:n])
    length = np.asarray(documents.sum(axis=1)).ravel()
    tf = documents.data
    saturated = tf * (k1 + 1) / (tf + k1 * (1 - b + b * length[documents.row] / length.mean()))
    weights = sp.csr_matrix(
        (saturated * idf[documents.col], (documents.row, documents.col)), shape=documents.shape
    )
    query = (counts[n:] > 0).astype(np.float64)
    scores = np.asarray((query @ weights.T).toarray())
    if per_idf_mass:
        scores /= np.maximum(np.asarray(query @ idf).ravel(), 1e-12)[:, None]
    return scores


# -------------------------------------------------------------------- scoring pieces
def _global_z(s: Matrix) -> Matrix:
    return (s - s.mean()) / s.std()


def _rank_z(s: Matrix) -> Matrix:
    return (rankdata(s.ravel()).reshape(s.shape) / s.size - 0.5) * np.sqrt(12)


def weighted_aggregate(
    draw: Draw, similarity: Matrix, weights: Matrix | None, how: str = "mean", value: float = 0
) -> Matrix:
    """(n_papers, n_pubs) -> (n_papers, n_reviewers): weighted mean, mean + ``value`` x
    max, or the mean of the top ``value`` share (k scales with the profile)."""
    if how == "top-fraction":
        return draw.aggregate(similarity, how, value)
    width = int(draw.counts.max())
    valid = np.arange(width)[None, :] < draw.counts[:, None]
    columns = np.where(valid, draw.offsets[:-1, None] + np.arange(width)[None, :], 0)
    w = np.where(valid, 1.0 if weights is None else weights[columns], 0.0)
    values = similarity[:, columns]
    mean = (values * w[None]).sum(2) / w.sum(1)[None]
    if how == "mean":
        return mean
    if how == "mean+max":
        return (1 - value) * mean + value * np.where(valid[None], values, -np.inf).max(2)
    raise ValueError(how)


DEFAULT_MIX = [("tfidf", 0.1), ("mpnet:text", 0.9)]


def scorer(
    mix: list[tuple[str, float]] = DEFAULT_MIX,
    *,
    how: str = "mean",
    value: float = 0.0,
    weights: Weights | None = None,
    centering: float = 0.0,
    pre: Callable[[Matrix], Matrix] = _global_z,
) -> Scorer:
    """Standardise each channel, mix per publication, aggregate (optionally weighted), and
    subtract ``centering`` x each paper's mean over reviewers."""

    def score(store: RoundTwoChannels, d: int) -> Matrix:
        draw = store.draws[d]
        mixed = sum(w * pre(store.get(d, name)) for name, w in mix)
        scores = weighted_aggregate(
            draw, np.asarray(mixed), weights(store, d) if weights else None, how, value
        )
        return scores - centering * scores.mean(axis=1, keepdims=True)

    return score


def profile_document_mix(share: float) -> Scorer:
    """Score-level mix of whole-profile TF-IDF with the MPNet mean (both z-scored)."""

    def score(store: RoundTwoChannels, d: int) -> Matrix:
        semantic = store.draws[d].aggregate(_global_z(store.get(d, "mpnet:text")), "mean")
        lexical = store.get(d, "tfidf-profile")
        return share * _global_z(lexical) + (1 - share) * _global_z(semantic)

    return score


# ------------------------------------------------------------- publication weights
def recency(half_life: float) -> Weights:
    def weights(store: RoundTwoChannels, d: int) -> Matrix:
        years = np.array(
            [np.nan if p.year is None else p.year for p in store.draws[d].publications], float
        )
        newest = np.nanmax(years)
        return 0.5 ** ((newest - np.where(np.isnan(years), newest, years)) / half_life)

    return weights


def _per_reviewer(store: RoundTwoChannels, d: int, rule: Callable[[Matrix], Matrix]) -> Matrix:
    """Apply ``rule`` to each reviewer's (n, 768) MPNet publication vectors."""
    draw = store.draws[d]
    table = store._table(MPNET_NAME, "text")
    vectors = np.stack([table[p.text] for p in draw.publications]).astype(np.float64)
    out = np.ones(len(draw.publications))
    for r in range(len(draw.counts)):
        start, stop = draw.offsets[r], draw.offsets[r + 1]
        if stop - start > 1:
            out[start:stop] = rule(vectors[start:stop])
    return out


def near_duplicates(threshold: float) -> Weights:
    """Publications of one reviewer closer than ``threshold`` share one unit of weight."""
    return lambda store, d: _per_reviewer(
        store, d, lambda v: 1.0 / ((v @ v.T) > threshold).sum(axis=1)
    )


def typicality(store: RoundTwoChannels, d: int) -> Matrix:
    def rule(v: Matrix) -> Matrix:
        centroid = v.mean(0) / np.linalg.norm(v.mean(0))
        return np.clip(v @ centroid, 0.01, None)

    return _per_reviewer(store, d, rule)


def author_position(middle: float = 0.5, last: float = 1.0) -> Weights:
    """Weight ``middle`` where the profile's owner is a middle author (``last`` where last;
    first and sole authors 1). The owner is the author on the most of the profile's
    publications, strictly more than anyone else (else no weights: unknown owner)."""

    def weights(store: RoundTwoChannels, d: int) -> Matrix:
        draw = store.draws[d]
        out = np.ones(len(draw.publications))
        for r, reviewer in enumerate(draw.reviewers):
            seen = Counter(a for p in reviewer.publications for a in set(p.authors))
            top = seen.most_common(2)
            if not top or (len(top) > 1 and top[0][1] == top[1][1]):
                continue
            owner = top[0][0]
            for i, publication in enumerate(reviewer.publications):
                authors = list(publication.authors)
                place = authors.index(owner) if owner in authors else 0
                if place > 0:
                    is_last = place == len(authors) - 1
                    out[draw.offsets[r] + i] = last if is_last else middle
        return out

    return weights


def both(first: Weights, second: Weights) -> Weights:
    return lambda store, d: first(store, d) * second(store, d)


REFERENCE = "tfidf+mpnet 10/90 (default)"
VARIANTS: dict[str, dict[str, Scorer]] = {
    "reference": {REFERENCE: scorer()},
    "second local model": {
        "tfidf+mpnet+minilm 10/80/10": scorer(
            [("tfidf", 0.1), ("mpnet:text", 0.8), ("minilm:text", 0.1)]
        ),
    },
    "lexical channel": {
        "bm25 alone (tfidf alone: 0.2574)": scorer([("bm25", 1.0)]),
        "bm25+mpnet 10/90": scorer([("bm25", 0.1), ("mpnet:text", 0.9)]),
        "bm25/idf mass+mpnet 10/90": scorer([("bm25/idf", 0.1), ("mpnet:text", 0.9)]),
        "tfidf min_df=2 +mpnet 10/90": scorer([("tfidf-min-df-2", 0.1), ("mpnet:text", 0.9)]),
        "tfidf max_df=.25 +mpnet 10/90": scorer([("tfidf-max-df-0.25", 0.1), ("mpnet:text", 0.9)]),
        "tfidf bigrams +mpnet 10/90": scorer([("tfidf-bigram", 0.1), ("mpnet:text", 0.9)]),
        "tfidf linear tf +mpnet 10/90": scorer([("tfidf-linear-tf", 0.1), ("mpnet:text", 0.9)]),
        "profile-document tfidf +mpnet 10/90": profile_document_mix(0.1),
    },
    "reviewer side": {
        "recency half-life 5 y": scorer(weights=recency(5)),
        "recency half-life 10 y": scorer(weights=recency(10)),
        "near-duplicates share (cos>0.8)": scorer(weights=near_duplicates(0.8)),
        "near-duplicates share (cos>0.9)": scorer(weights=near_duplicates(0.9)),
        "typicality weights": scorer(weights=typicality),
        "author position: middle 0.5": scorer(weights=author_position(0.5)),
        "author position: middle, last 0.5": scorer(weights=author_position(0.5, 0.5)),
        "mean + 0.2 max": scorer(how="mean+max", value=0.2),
        "mean of top 75%": scorer(how="top-fraction", value=0.75),
    },
    "paper side": {
        "paper centering 0.25": scorer(centering=0.25),
        "paper centering 0.5": scorer(centering=0.5),
        "paper centering 1": scorer(centering=1.0),
        "title & text fused 10/20/70": scorer(
            [("tfidf", 0.1), ("mpnet:title", 0.2), ("mpnet:text", 0.7)]
        ),
        "title & abstract fused 10/30/60": scorer(
            [("tfidf", 0.1), ("mpnet:title", 0.3), ("mpnet:abstract", 0.6)]
        ),
        "windows, mean vector 10/90": scorer([("tfidf", 0.1), ("mpnet:chunks", 0.9)]),
        "windows, mean of best 10/90": scorer([("tfidf", 0.1), ("mpnet:windows-maxmean", 0.9)]),
        "mpnet centred 10/90": scorer([("tfidf", 0.1), ("mpnet:centred", 0.9)]),
        "mpnet centred, top PC removed": scorer([("tfidf", 0.1), ("mpnet:centred-pc1", 0.9)]),
        "rank normalisation 10/90": scorer(pre=_rank_z),
    },
    "two changes": {
        "author position + near-duplicates": scorer(
            weights=both(author_position(0.5), near_duplicates(0.8))
        ),
        "author position + windows best": scorer(
            [("tfidf", 0.1), ("mpnet:windows-maxmean", 0.9)], weights=author_position(0.5)
        ),
    },
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gold", type=Path, required=True, help="gold folder (e.g. gold-dev)")
    parser.add_argument("--splits", type=int, default=200, help="random rater splits (x2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache-dir", type=Path, default=None, help="embedding cache")
    args = parser.parse_args()
    gold = read_gold_ratings(args.gold / "evaluations.tsv")
    draws = [Draw(directory, gold) for directory in gold_draws(args.gold)]
    store = RoundTwoChannels(draws, args.cache_dir or default_cache_dir())
    groups = {name: group for group, members in VARIANTS.items() for name in members}
    scorers = {name: s for members in VARIANTS.values() for name, s in members.items()}
    names = list(scorers)
    per_draw = np.stack(
        [[draws[d].costs(scorers[n](store, d)) for d in range(len(draws))] for n in names]
    )  # (variants, draws, raters)
    weights = draws[0].rater_weights
    cv = cross_validate(per_draw.mean(1), weights, names, n_splits=args.splits, seed=args.seed)
    draw_losses = per_draw.sum(2) / weights.sum()
    print(
        f"gold: {args.gold}  draws: {len(draws)}  raters: {cv.n_raters}  folds: {cv.n_folds} "
        f"(held-out halves of {cv.n_raters // 2}-{cv.n_raters - cv.n_raters // 2} raters)"
    )
    header = (
        f"{'group':<18} {'variant':<36} {'dev':>6} {'Δ default':>15} {'held-out Δ':>15} "
        f"{'wins':>5} {'draws':>5}"
    )
    print(header + "\n" + "-" * len(header))
    for k, name in enumerate(names):
        difference = cv.held_out_difference(k)
        won = int((draw_losses[k] < draw_losses[0]).sum())
        print(
            f"{groups[name]:<18} {name[:36]:<36} {cv.full[k]:6.4f} "
            f"{cv.full[k] - cv.full[0]:+.4f}±{cv.paired_se[k]:.4f} "
            f"{difference.mean():+.4f}±{difference.std():.4f} "
            f"{100 * (difference < 0).mean():4.0f}% {won:2d}/{len(draws)}"
        )
    print()
    for label, members in [
        ("all variants", names),
        *[(g, [REFERENCE, *m]) for g, m in VARIANTS.items() if g != "reference"],
    ]:
        sub = cross_validate(
            per_draw[[names.index(n) for n in members]].mean(1),
            weights,
            members,
            n_splits=args.splits,
            seed=args.seed,
        )
        chosen = sub.selection_losses("argmin")
        gain = chosen - sub.held_out[0]
        print(
            f"choosing by argmin on one half among {label} ({len(members)}): held-out "
            f"{chosen.mean():.4f} ± {chosen.std():.4f}, vs the default {gain.mean():+.4f} "
            f"(strictly better on {100 * np.mean(gain < 0):.0f}% of halves)"
        )


if __name__ == "__main__":
    main()
