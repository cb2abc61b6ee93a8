"""Synthetic venues with topic structure, written as / read from a scores CSV.

Papers and reviewers are topic mixtures drawn from Dirichlet distributions; a pair's score
is the cosine similarity of the two mixtures plus Gaussian noise, clipped to [0, 1].
Reviewer activity is Zipf-like: a few reviewers have broad profiles (their mixture is
flattened) and so score well with many papers, as in real venues. Max loads are either
fixed or Zipf-like (many reviewers with small loads, a few with large ones).

Scores are produced in row blocks, so 20k x 20k venues never hold the dense matrix; the
CSV holds the sparse candidate pairs (each paper's and each reviewer's top-K by score),
and a second CSV the conflicts (a random fraction of all pairs).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from matching.candidates import top_k_pairs


@dataclass(frozen=True)
class SyntheticVenue:
    """Topic mixtures (papers (P, T), reviewers (R, T)), ids and loads."""

    paper_topics: npt.NDArray[np.float64]
    reviewer_topics: npt.NDArray[np.float64]
    paper_ids: list[str]
    reviewer_ids: list[str]
    max_load: npt.NDArray[np.int64]
    noise: float
    seed: int

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.paper_ids), len(self.reviewer_ids)

    def score_blocks(self, rows: int = 1000) -> Iterator[npt.NDArray[np.float64]]:
        """Scores (rows, R) for consecutive paper blocks; deterministic per block."""
        reviewers = self.reviewer_topics / np.linalg.norm(
            self.reviewer_topics, axis=1, keepdims=True
        )
        for start in range(0, self.shape[0], rows):
            papers = self.paper_topics[start : start + rows]
            papers = papers / np.linalg.norm(papers, axis=1, keepdims=True)
            rng = np.random.default_rng([self.seed, 1, start])
            noise = rng.normal(0.0, self.noise, (len(papers), len(reviewers)))
            block = papers @ reviewers.T + noise
            yield np.clip(block, 0.0, 1.0)

    def conflicts(self, rate: float) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """A random ``rate`` fraction of all pairs as (paper_idx, reviewer_idx)."""
        n_papers, n_reviewers = self.shape
        rng = np.random.default_rng([self.seed, 2])
        count = round(rate * n_papers * n_reviewers)
        keys = np.unique(rng.integers(0, n_papers * n_reviewers, size=count, dtype=np.int64))
        return keys // n_reviewers, keys % n_reviewers


def make_venue(
    n_papers: int,
    n_reviewers: int,
    *,
    topics: int = 40,
    concentration: float = 0.1,
    noise: float = 0.05,
    max_load: int = 6,
    zipf_loads: bool = False,
    seed: int = 0,
) -> SyntheticVenue:
    rng = np.random.default_rng(seed)
    paper_topics = rng.dirichlet(np.full(topics, concentration), size=n_papers)
    reviewer_topics = rng.dirichlet(np.full(topics, concentration), size=n_reviewers)
    # Zipf-like breadth: reviewer i mixes its profile with the uniform one by 1 / rank.
    breadth = 1.0 / rng.permutation(np.arange(1, n_reviewers + 1)) ** 0.5
    reviewer_topics = (1 - breadth[:, None] * 0.5) * reviewer_topics + (
        breadth[:, None] * 0.5 / topics
    )
    if zipf_loads:
        loads = np.minimum(rng.zipf(2.0, size=n_reviewers) + 1, max_load).astype(np.int64)
    else:
        loads = np.full(n_reviewers, max_load, dtype=np.int64)
    return SyntheticVenue(
        paper_topics=paper_topics,
        reviewer_topics=reviewer_topics,
        paper_ids=[f"P{i:06d}" for i in range(n_papers)],
        reviewer_ids=[f"R{j:06d}" for j in range(n_reviewers)],
        max_load=loads,
        noise=noise,
        seed=seed,
    )


def write_venue_csv(
    venue: SyntheticVenue, directory: Path, *, k: int = 50, conflict_rate: float = 0.01
) -> tuple[Path, Path]:
    """Write ``scores.csv`` (paper_id, reviewer_id, score: the top-K union, conflicts
    included, since a score source does not know them) and ``conflicts.csv``
    (paper_id, reviewer_id). Returns both paths."""
    directory.mkdir(parents=True, exist_ok=True)
    paper, reviewer, score = top_k_pairs(lambda: venue.score_blocks(), k, k)
    paper_ids = np.asarray(venue.paper_ids, dtype=object)
    reviewer_ids = np.asarray(venue.reviewer_ids, dtype=object)
    scores_path = directory / "scores.csv"
    pd.DataFrame(
        {
            "paper_id": paper_ids[paper],
            "reviewer_id": reviewer_ids[reviewer],
            "score": np.round(score, 6),
        }
    ).to_csv(scores_path, index=False)
    conflict_paper, conflict_reviewer = venue.conflicts(conflict_rate)
    conflicts_path = directory / "conflicts.csv"
    pd.DataFrame(
        {
            "paper_id": paper_ids[conflict_paper],
            "reviewer_id": reviewer_ids[conflict_reviewer],
        }
    ).to_csv(conflicts_path, index=False)
    return scores_path, conflicts_path


def read_scores_csv(path: Path) -> pd.DataFrame:
    """Read a scores CSV (paper_id, reviewer_id, score)."""
    return pd.read_csv(
        path, dtype={"paper_id": str, "reviewer_id": str, "score": np.float64}, engine="c"
    )


def read_conflicts_csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype={"paper_id": str, "reviewer_id": str}, engine="c")
