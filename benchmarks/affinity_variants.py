"""Affinity variants beyond the scoring parameters, cross-validated over raters on a gold folder.

The research behind the default (README, "Affinity quality"): ideas that the product's
``ScoringParams`` do not offer, each scored on every draw of a gold folder and compared with
rater-level 2-fold cross-validation (:mod:`recommender.crossval`), next to the product's own
configurations as references:

- aggregation by the closest part of a profile: mean of the top ``ceil(f * n)`` publications
  (k scales with the profile size ``n``), softmax-weighted mean (temperature in units of the
  global similarity std), max;
- per-paper calibration before aggregation: each paper's similarities to all publications
  z-scored (row z) instead of one global z-score; after aggregation: each paper's mean over
  reviewers subtracted (paper centering) or also divided by its std (paper z);
- titles only, and long texts cut into windows of whole sentences of <= 120 words (each
  prefixed by the title), embedded separately and averaged (MiniLM was trained on 128
  tokens and truncates at 256: a third of gold-dev abstracts are longer);
- lexical channel: bigrams, plain term frequency instead of sublinear;
- fusion of TF-IDF with one or two embedding models at the publication level.

Every text is embedded once per model (the on-disk embedding cache keeps them), so a rerun
costs seconds. Example (from the repository root):

    python benchmarks/affinity_variants.py --gold ../shared/gold-dev --splits 200
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from recommender.corpus import join_title_abstract
from recommender.crossval import cross_validate, format_cross_validation
from recommender.embeddings import EmbeddingCache, default_cache_dir
from recommender.evaluate import gold_draws, read_gold_ratings
from recommender.io import read_openreview_archives, read_submissions
from recommender.packaged_models import MINILM_NAME, MPNET_NAME, packaged_model_path
from recommender.profiles import EmbeddingProfiler, TfidfProfiler

Matrix = npt.NDArray[np.float64]
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")


class Draw:
    """One draw: profiles, rated pairs and the per-rater cost of a score matrix."""

    def __init__(self, directory: Path, gold: dict[str, dict[str, float]]):
        self.reviewers = read_openreview_archives(directory / "archives")
        self.submissions = read_submissions(directory / "submissions.json")
        reviewer_ids = [r.id.removeprefix("~") for r in self.reviewers]
        self.publications = [p for r in self.reviewers for p in r.publications]
        counts = np.array([len(r.publications) for r in self.reviewers])
        self.counts = counts
        self.offsets = np.concatenate([[0], np.cumsum(counts)])
        paper = {s.id: i for i, s in enumerate(self.submissions)}
        self.raters = sorted(r for r in gold if r in reviewer_ids)
        rows: list[tuple[int, int, int, int, float, float]] = []
        for k, rater in enumerate(self.raters):
            rated = gold[rater]
            papers = sorted(rated)
            column = reviewer_ids.index(rater)
            for i, a in enumerate(papers):
                for b in papers[i + 1 :]:
                    if rated[a] != rated[b]:
                        delta = rated[a] - rated[b]
                        rows.append((k, column, paper[a], paper[b], abs(delta), np.sign(delta)))
        table = np.array(rows, dtype=np.float64)
        self.rater, self.column, self.a, self.b = (table[:, i].astype(np.int64) for i in range(4))
        self.weight, self.sign = table[:, 4], table[:, 5]
        self.rater_weights = np.bincount(self.rater, self.weight, len(self.raters))

    def costs(self, scores: Matrix) -> Matrix:
        """(n_raters,) cost of a (n_papers, n_reviewers) score matrix (the gold metric)."""
        difference = scores[self.a, self.column] - scores[self.b, self.column]
        agreement = np.sign(difference) * self.sign
        cost = np.where(agreement < 0, self.weight, np.where(agreement == 0, self.weight / 2, 0))
        return np.bincount(self.rater, cost, len(self.raters)).astype(np.float64)

    def aggregate(self, similarity: Matrix, how: str, value: float = 0.0) -> Matrix:
        """(n_papers, n_pubs) -> (n_papers, n_reviewers)."""
        width = int(self.counts.max())
        valid = np.arange(width)[None, :] < self.counts[:, None]
        columns = np.where(valid, self.offsets[:-1, None] + np.arange(width)[None, :], 0)
        values = similarity[:, columns]
        if how == "mean":
            return np.where(valid[None], values, 0).sum(2) / self.counts[None]
        if how == "max":
            return np.where(valid[None], values, -np.inf).max(2)
        if how == "top-fraction":
            k = np.minimum(np.maximum(1, np.ceil(value * self.counts)), self.counts).astype(int)
            ordered = -np.sort(-np.where(valid[None], values, -np.inf), axis=2)
            keep = np.arange(width)[None, None, :] < k[None, :, None]
            return np.where(keep, ordered, 0).sum(2) / k[None]
        if how == "softmax":
            scaled = np.where(valid[None], values, -np.inf) / value
            e = np.exp(scaled - scaled.max(2, keepdims=True)) * valid[None]
            return (e * np.where(valid[None], values, 0)).sum(2) / e.sum(2)
        raise ValueError(how)


def chunks(title: str, abstract: str, words: int = 120) -> list[str]:
    """Windows of whole sentences of <= ``words`` words, each prefixed by the title."""
    sentences = [s for s in _SENTENCE_END.split(abstract.strip()) if s]
    out: list[str] = []
    current: list[str] = []
    n = 0
    for sentence in sentences:
        length = len(sentence.split())
        if current and n + length > words:
            out.append(" ".join(current))
            current, n = [], 0
        current.append(sentence)
        n += length
    if current:
        out.append(" ".join(current))
    return [join_title_abstract(title, c) for c in out] or [title]


class Channels:
    """Similarity matrices (n_papers, n_pubs) of every draw, computed once per name."""

    def __init__(self, draws: list[Draw], cache_dir: Path):
        self.draws = draws
        self.cache = EmbeddingCache(cache_dir)
        self.tables: dict[str, dict[str, npt.NDArray[np.float32]]] = {}
        self.memo: dict[tuple[int, str], Matrix] = {}

    def _items(self) -> set[tuple[str, str]]:
        items = {(p.title, p.abstract) for d in self.draws for p in d.publications}
        return items | {(s.title, s.abstract) for d in self.draws for s in d.submissions}

    def _table(self, model: str, view: str) -> dict[str, npt.NDArray[np.float32]]:
        key = f"{model}:{view}"
        if key in self.tables:
            return self.tables[key]
        profiler = EmbeddingProfiler(packaged_model_path(model), cache=self.cache)
        items = sorted(self._items())
        started = time.perf_counter()
        table: dict[str, npt.NDArray[np.float32]] = {}
        if view == "chunks":
            pieces = {item: chunks(*item) for item in items}
            texts = sorted({c for cs in pieces.values() for c in cs})
            vectors = dict(zip(texts, profiler.transform(texts), strict=True))
            for (title, abstract), cs in pieces.items():
                mean = np.mean([vectors[c] for c in cs], axis=0)
                table[join_title_abstract(title, abstract)] = mean / np.linalg.norm(mean)
        else:
            texts = [t if view == "title" else join_title_abstract(t, a) for t, a in items]
            for (title, abstract), vector in zip(items, profiler.transform(texts), strict=True):
                table[join_title_abstract(title, abstract)] = vector
        print(
            f"  embedded {model} {view}: {profiler.n_encoded} new texts "
            f"in {time.perf_counter() - started:.0f} s",
            file=sys.stderr,
        )
        self.tables[key] = table
        return table

    def get(self, d: int, name: str) -> Matrix:
        if (d, name) not in self.memo:
            self.memo[d, name] = self._compute(self.draws[d], name)
        return self.memo[d, name]

    def _compute(self, draw: Draw, name: str) -> Matrix:
        if name.startswith("tfidf"):
            options = {
                "tfidf": {},
                "tfidf-bigram": {"ngram_range": (1, 2)},
                "tfidf-linear-tf": {"sublinear_tf": False},
            }[name]
            profiler = TfidfProfiler(**options)  # type: ignore[arg-type]
            pubs = [p.text for p in draw.publications]
            vectors = profiler.fit_transform(pubs + [s.text for s in draw.submissions])
            return np.asarray((vectors[len(pubs) :] @ vectors[: len(pubs)].T).toarray())
        model, view = name.split(":")
        table = self._table({"minilm": MINILM_NAME, "mpnet": MPNET_NAME}[model], view)
        pub_vectors = np.stack([table[p.text] for p in draw.publications])
        sub_vectors = np.stack([table[s.text] for s in draw.submissions])
        return (sub_vectors @ pub_vectors.T).astype(np.float64)


def _global_z(s: Matrix) -> Matrix:
    return (s - s.mean()) / s.std()


def _row_z(s: Matrix) -> Matrix:
    return (s - s.mean(1, keepdims=True)) / s.std(1, keepdims=True)


def variant(
    channels: list[tuple[str, float]],
    how: str = "mean",
    value: float = 0.0,
    pre: Callable[[Matrix], Matrix] = _global_z,
    post: str | None = None,
) -> Callable[[Channels, int], Matrix]:
    """A scorer: standardise each channel (``pre``), mix at the publication level with the
    given weights, aggregate per reviewer, optionally calibrate each paper (``post``)."""

    def score(store: Channels, d: int) -> Matrix:
        draw = store.draws[d]
        mixed = sum(w * pre(store.get(d, name)) for name, w in channels)
        scores = draw.aggregate(np.asarray(mixed), how, value)
        if post in ("center", "z"):
            scores = scores - scores.mean(1, keepdims=True)
        if post == "z":
            scores = scores / scores.std(1, keepdims=True)
        return scores

    return score


VARIANTS: dict[str, Callable[[Channels, int], Matrix]] = {
    "tfidf+minilm 50/50 mean (v0.1 default)": variant([("tfidf", 0.5), ("minilm:text", 0.5)]),
    "minilm mean": variant([("minilm:text", 1)]),
    "minilm max": variant([("minilm:text", 1)], "max"),
    "minilm top-25% (k scales with profile)": variant([("minilm:text", 1)], "top-fraction", 0.25),
    "minilm top-50%": variant([("minilm:text", 1)], "top-fraction", 0.5),
    "minilm softmax T=1": variant([("minilm:text", 1)], "softmax", 1.0),
    "minilm softmax T=2": variant([("minilm:text", 1)], "softmax", 2.0),
    "minilm row z (per-paper calibration)": variant([("minilm:text", 1)], pre=_row_z),
    "minilm paper centering": variant([("minilm:text", 1)], post="center"),
    "minilm paper z": variant([("minilm:text", 1)], post="z"),
    "minilm titles only": variant([("minilm:title", 1)]),
    "minilm sentence windows": variant([("minilm:chunks", 1)]),
    "tfidf mean": variant([("tfidf", 1)]),
    "tfidf bigrams": variant([("tfidf-bigram", 1)]),
    "tfidf linear tf": variant([("tfidf-linear-tf", 1)]),
    "tfidf+minilm 50/50 row z": variant([("tfidf", 0.5), ("minilm:text", 0.5)], pre=_row_z),
    "mpnet mean": variant([("mpnet:text", 1)]),
    "mpnet top-50%": variant([("mpnet:text", 1)], "top-fraction", 0.5),
    "mpnet paper centering": variant([("mpnet:text", 1)], post="center"),
    "mpnet sentence windows": variant([("mpnet:chunks", 1)]),
    "mpnet+minilm 50/50": variant([("mpnet:text", 0.5), ("minilm:text", 0.5)]),
    "tfidf+mpnet 10/90": variant([("tfidf", 0.1), ("mpnet:text", 0.9)]),
    "tfidf+mpnet 50/50": variant([("tfidf", 0.5), ("mpnet:text", 0.5)]),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gold", type=Path, required=True, help="gold folder (e.g. gold-dev)")
    parser.add_argument("--splits", type=int, default=200, help="random rater splits (x2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache-dir", type=Path, default=None, help="embedding cache")
    parser.add_argument("--only", nargs="*", default=None, help="variant names to run")
    args = parser.parse_args()
    gold = read_gold_ratings(args.gold / "evaluations.tsv")
    draws = [Draw(directory, gold) for directory in gold_draws(args.gold)]
    store = Channels(draws, args.cache_dir or default_cache_dir())
    names = [n for n in VARIANTS if args.only is None or n in args.only]
    costs = np.stack(
        [
            np.mean([draws[d].costs(VARIANTS[n](store, d)) for d in range(len(draws))], 0)
            for n in names
        ]
    )
    print(f"gold: {args.gold}  draws: {len(draws)}  raters: {len(draws[0].raters)}")
    cv = cross_validate(costs, draws[0].rater_weights, names, n_splits=args.splits, seed=args.seed)
    print(format_cross_validation(cv))


if __name__ == "__main__":
    main()
