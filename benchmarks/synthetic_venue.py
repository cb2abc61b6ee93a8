"""Synthetic venue TEXT corpora with topic structure, ICLR-2026-sized by default.

A venue has ``n_topics`` topics, each a Zipf distribution over its own ``topic_words`` made-up
words, plus a shared Zipf background vocabulary (generic research words) and real English
stop words. Every text (title + abstract, 150-250 words by default) mixes 1-3 topics of its
author: reviewers have a small set of home topics their publications draw from, submissions
draw 1-3 topics; ~35% of tokens are stop words, ~30% background, ~35% topic words. All token
draws are vectorised (one call per venue, not per word); everything follows one seed.

``python -m benchmarks.synthetic_venue --papers 200 --reviewers 100`` prints a summary;
with ``--write DIR`` it writes the venue as OpenReview exports (what ``recommender score``
reads): ``DIR/archives/~Reviewer_<r>1.jsonl`` expertise archives (one publication per line,
with the fields of a real crawl: title, abstract, year, ids, link, authors) and
``DIR/submissions.json`` (notes keyed by id).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from recommender.corpus import Corpus, Publication, Reviewer, Submission

ICLR_2026_SUBMISSIONS = 19_525
ICLR_2026_REVIEWERS = 18_054

_SYLLABLES = tuple(c + v for c in "bdfgklmnprstvz" for v in "aeiou") + tuple(
    c + v for c in ("tr", "pl", "st") for v in "aeio"
)


@dataclass(frozen=True)
class VenueShape:
    """Sizes and mixing proportions of a synthetic venue."""

    n_papers: int = ICLR_2026_SUBMISSIONS
    n_reviewers: int = ICLR_2026_REVIEWERS
    pubs_per_reviewer: int = 20
    n_topics: int = 200
    topic_words: int = 400
    background_words: int = 4000
    min_words: int = 150
    max_words: int = 250
    stop_share: float = 0.35
    background_share: float = 0.30
    zipf_exponent: float = 1.07


def _made_up_words(count: int, rng: np.random.Generator) -> npt.NDArray[np.str_]:
    """``count`` distinct pronounceable lowercase words (3-4 syllables)."""
    words: dict[str, None] = {}
    syllables = np.array(_SYLLABLES)
    while len(words) < count:
        n = count - len(words)
        parts = syllables[rng.integers(0, len(syllables), size=(n, 4))]
        lengths = rng.integers(3, 5, size=n)
        for row, length in zip(parts, lengths, strict=True):
            words.setdefault("".join(row[:length]), None)
    return np.array(list(words)[:count])


def _zipf_cdf(n: int, exponent: float) -> npt.NDArray[np.float64]:
    weights = 1.0 / np.arange(1, n + 1) ** exponent
    return np.cumsum(weights) / weights.sum()


class VenueTextGenerator:
    """Draws texts for a fixed vocabulary and topic structure (one seed for everything)."""

    def __init__(self, shape: VenueShape | None = None, seed: int = 0):
        self.shape = shape or VenueShape()
        self.rng = np.random.default_rng(seed)
        s = self.shape
        vocabulary = _made_up_words(s.background_words + s.n_topics * s.topic_words, self.rng)
        self.background = vocabulary[: s.background_words]
        self.topic_vocabulary = vocabulary[s.background_words :].reshape(s.n_topics, s.topic_words)
        self.stop_words = np.array(sorted(ENGLISH_STOP_WORDS))
        self._background_cdf = _zipf_cdf(s.background_words, s.zipf_exponent)
        self._topic_cdf = _zipf_cdf(s.topic_words, s.zipf_exponent)
        self._stop_cdf = _zipf_cdf(len(self.stop_words), 1.0)

    def texts(self, topic_sets: npt.NDArray[np.int64]) -> list[str]:
        """One text per row of ``topic_sets`` (n_texts, 3) topic ids: title + abstract.

        Each text mixes its row's topics with Dirichlet(1) weights; duplicate ids in a row
        simply weigh that topic more.
        """
        s, rng = self.shape, self.rng
        n_texts = topic_sets.shape[0]
        lengths = rng.integers(s.min_words, s.max_words + 1, size=n_texts)
        title_lengths = rng.integers(6, 13, size=n_texts)
        total = lengths + title_lengths
        owner = np.repeat(np.arange(n_texts), total)
        n_tokens = int(total.sum())
        mixture = rng.dirichlet(np.ones(topic_sets.shape[1]), size=n_texts)
        kind = rng.random(n_tokens)
        is_stop = kind < s.stop_share
        is_background = (~is_stop) & (kind < s.stop_share + s.background_share)
        # Titles (the first tokens of each text) are topic words only.
        position = np.arange(n_tokens) - np.repeat(np.cumsum(total) - total, total)
        in_title = position < np.repeat(title_lengths, total)
        is_stop &= ~in_title
        is_background &= ~in_title
        uniform = rng.random(n_tokens)
        tokens = np.empty(n_tokens, dtype=object)
        stop_rank = np.searchsorted(self._stop_cdf, uniform[is_stop])
        tokens[is_stop] = self.stop_words[stop_rank]
        background_rank = np.searchsorted(self._background_cdf, uniform[is_background])
        tokens[is_background] = self.background[background_rank]
        topical = ~(is_stop | is_background)
        topic_owner = owner[topical]
        choice = rng.random(topic_owner.shape[0])[:, None] > np.cumsum(mixture, 1)[topic_owner]
        slot = np.minimum(choice.sum(axis=1), topic_sets.shape[1] - 1)
        topic = topic_sets[topic_owner, slot]
        topic_rank = np.searchsorted(self._topic_cdf, uniform[topical])
        tokens[topical] = self.topic_vocabulary[topic, topic_rank]
        ends = np.cumsum(total)
        starts = ends - total
        texts = []
        for start, stop, title_length in zip(starts, ends, title_lengths, strict=True):
            words = tokens[start:stop]
            title = " ".join(words[:title_length]).capitalize()
            texts.append(f"{title}. " + " ".join(words[title_length:]).capitalize() + ".")
        return texts


def _chunked_texts(
    generator: VenueTextGenerator, topic_sets: npt.NDArray[np.int64], chunk: int = 20_000
) -> list[str]:
    """Texts in chunks: token arrays of one chunk at a time bound peak memory (~0.5 GB)."""
    texts: list[str] = []
    for start in range(0, topic_sets.shape[0], chunk):
        texts.extend(generator.texts(topic_sets[start : start + chunk]))
    return texts


def synthetic_venue_corpus(shape: VenueShape | None = None, seed: int = 0) -> Corpus:
    """A Corpus of ``shape.n_reviewers`` reviewers (``pubs_per_reviewer`` publications each)
    and ``shape.n_papers`` submissions, deterministic for a given seed."""
    shape = shape or VenueShape()
    generator = VenueTextGenerator(shape, seed)
    rng = generator.rng
    home = rng.integers(0, shape.n_topics, size=(shape.n_reviewers, 3))
    # Publications: each picks 1-3 of its reviewer's home topics (with repetition).
    pub_owner = np.repeat(np.arange(shape.n_reviewers), shape.pubs_per_reviewer)
    picks = home[pub_owner[:, None], rng.integers(0, 3, size=(pub_owner.shape[0], 3))]
    pub_texts = _chunked_texts(generator, picks)
    paper_topics = rng.integers(0, shape.n_topics, size=(shape.n_papers, 3))
    paper_topics[:, 1:] = np.where(
        rng.random((shape.n_papers, 2)) < 0.5, paper_topics[:, :1], paper_topics[:, 1:]
    )
    paper_texts = _chunked_texts(generator, paper_topics)
    years = rng.integers(2015, 2026, size=pub_owner.shape[0])
    reviewers = []
    for r in range(shape.n_reviewers):
        start = r * shape.pubs_per_reviewer
        publications = tuple(
            Publication(
                id=f"pub{j}",
                title=pub_texts[j].split(". ", 1)[0],
                abstract=pub_texts[j].split(". ", 1)[1],
                year=int(years[j]),
            )
            for j in range(start, start + shape.pubs_per_reviewer)
        )
        reviewers.append(Reviewer(id=f"rev{r}", name=f"Reviewer {r}", publications=publications))
    submissions = tuple(
        Submission(id=f"paper{p}", title=text.split(". ", 1)[0], abstract=text.split(". ", 1)[1])
        for p, text in enumerate(paper_texts)
    )
    return Corpus(reviewers=tuple(reviewers), submissions=submissions)


def reviewer_archive_id(index: int) -> str:
    """OpenReview-style profile id of synthetic reviewer ``index``."""
    return f"~Reviewer_{index}1"


def write_openreview_venue(corpus: Corpus, directory: str | Path, seed: int = 0) -> Path:
    """Write ``corpus`` as OpenReview exports under ``directory`` (see the module docstring);
    returns the directory. Author lists name the reviewer and 2-6 co-authors drawn from the
    other reviewers' names, so conflict detection has realistic work."""
    root = Path(directory)
    archives = root / "archives"
    archives.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed + 1)
    n_reviewers = len(corpus.reviewers)
    for r, reviewer in enumerate(corpus.reviewers):
        lines = []
        for publication in reviewer.publications:
            others = rng.integers(0, n_reviewers, size=int(rng.integers(2, 7)))
            authors = [f"Reviewer {int(o)}" for o in others]
            authors.insert(int(rng.integers(0, len(authors) + 1)), f"Reviewer {r}")
            digest = f"{rng.integers(0, 2**63):016x}{rng.integers(0, 2**63):016x}"[:40]
            arxiv = f"{(publication.year or 2020) % 100:02d}{int(rng.integers(1, 13)):02d}."
            arxiv += f"{int(rng.integers(0, 99999)):05d}"
            note = {
                "id": digest,
                "content": {
                    "title": publication.title,
                    "abstract": publication.abstract,
                    "year": publication.year,
                    "ssId": digest,
                    "arXivId": arxiv,
                    "link": f"https://arxiv.org/abs/{arxiv}",
                    "openAccess": True,
                    "authors": authors,
                },
            }
            lines.append(json.dumps(note))
        path = archives / f"{reviewer_archive_id(r)}.jsonl"
        path.write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
    submissions = {}
    for submission in corpus.submissions:
        authors = [f"Author {int(a)}" for a in rng.integers(0, 10 * n_reviewers, size=4)]
        submissions[submission.id] = {
            "id": submission.id,
            "content": {
                "title": submission.title,
                "abstract": submission.abstract,
                "authors": authors,
            },
        }
    (root / "submissions.json").write_text(json.dumps(submissions), encoding="utf-8")
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=200)
    parser.add_argument("--reviewers", type=int, default=100)
    parser.add_argument("--pubs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--write", type=Path, default=None, metavar="DIR", help="write OpenReview exports here"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    corpus = synthetic_venue_corpus(
        VenueShape(n_papers=args.papers, n_reviewers=args.reviewers, pubs_per_reviewer=args.pubs),
        seed=args.seed,
    )
    if args.write is not None:
        write_openreview_venue(corpus, args.write, seed=args.seed)
    elapsed = time.perf_counter() - started
    words = [len(s.text.split()) for s in corpus.submissions]
    print(
        f"{len(corpus.submissions)} submissions, {len(corpus.reviewers)} reviewers x "
        f"{args.pubs} publications in {elapsed:.1f}s; words per text: "
        f"median {int(np.median(words))}, min {min(words)}, max {max(words)}"
    )
    print("example:", corpus.submissions[0].text[:300])


if __name__ == "__main__":
    main()
