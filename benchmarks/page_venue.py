"""A large venue for the chair page, written straight into a service's database:
``papers`` submissions with made-up titles and synthetic abstracts, ``reviewers`` named
reviewers with affiliations and 3 synthetic publications each
(benchmarks/synthetic_venue.py's texts), and, with ``stored_scores``, one affinity run of
``candidates`` random stored scores per paper written straight in (seconds; that run has no
fitted model, so explanations answer 409 ``no_saved_model``). Without ``stored_scores`` the
caller scores the venue as the product does (``POST /venues/{v}/affinity/jobs``). Solving
(through the service) makes its runs. Deterministic.

Shared by ``benchmarks/bench_page_scale.py`` (10,000 × 10,000, scored through the API's
TF-IDF job) and the Chromium tests' 2,000-paper venue (tests/e2e/test_page_scale.py, stored
scores).
"""

from __future__ import annotations

import numpy as np
from sqlalchemy import insert, select

from benchmarks.synthetic_venue import VenueShape, synthetic_venue_corpus
from recommender.corpus import Reviewer, Submission
from reviewer_recommender.storage.db import Database
from reviewer_recommender.storage.models import (
    AffinityRun,
    AffinityScore,
    PoolMember,
    ReviewerRow,
    SubmissionRow,
    Venue,
)
from reviewer_recommender.storage.repository import reviewer_to_row, submission_to_row

WORDS = [
    "graph",
    "neural",
    "robust",
    "sparse",
    "learning",
    "vision",
    "language",
    "reinforcement",
    "policy",
    "diffusion",
    "kernel",
    "bayesian",
    "causal",
    "federated",
    "private",
    "adversarial",
    "transformer",
    "attention",
    "contrastive",
    "generative",
    "optimal",
    "transport",
    "meta",
    "continual",
    "few-shot",
    "retrieval",
    "planning",
    "symbolic",
    "equivariant",
    "physics",
    "molecular",
    "protein",
    "speech",
    "audio",
    "video",
    "tabular",
    "fairness",
    "alignment",
]
FIRST = [
    "Ada",
    "Grace",
    "Alan",
    "Edsger",
    "Barbara",
    "Donald",
    "Frances",
    "John",
    "Leslie",
    "Radia",
    "Tim",
    "Margaret",
]
LAST = [
    "Lovelace",
    "Hopper",
    "Turing",
    "Dijkstra",
    "Liskov",
    "Knuth",
    "Allen",
    "Backus",
    "Lamport",
    "Perlman",
    "Wirth",
]
AFFILIATIONS = ("ETH Zürich", "MIT", "Inria", "KAIST", "Mila", "IISc Bangalore", "Univ. of Tokyo")


def paper_id(index: int) -> str:
    return f"P{index + 1:05d}"


def reviewer_id(index: int) -> str:
    return f"{FIRST[index % len(FIRST)]}_{LAST[(index // len(FIRST)) % len(LAST)]}{index + 1}"


def build_page_venue(
    database_url: str,
    venue_id: str,
    *,
    papers: int,
    reviewers: int,
    candidates: int = 20,
    seed: int = 0,
    stored_scores: bool = True,
) -> None:
    """Create venue ``venue_id`` with its submissions and reviewers, and (``stored_scores``)
    one affinity run of random scores."""
    rng = np.random.default_rng(seed)
    texts = synthetic_venue_corpus(
        VenueShape(
            n_papers=papers,
            n_reviewers=reviewers,
            pubs_per_reviewer=3,
            n_topics=100,
            min_words=40,
            max_words=80,
        ),
        seed,
    )
    words = np.array(WORDS)
    picks = rng.integers(0, len(words), size=(papers, 5))
    database = Database(database_url)
    try:
        with database.session() as session:
            session.add(Venue(id=venue_id, name=f"Generated venue {venue_id}"))
            session.flush()
            submissions = [
                submission_to_row(
                    venue_id,
                    Submission(
                        id=paper_id(i),
                        title=" ".join(words[picks[i]]).capitalize() + f" ({i + 1})",
                        abstract=texts.submissions[i].abstract,
                    ),
                )
                for i in range(papers)
            ]
            people = [
                reviewer_to_row(
                    venue_id,
                    Reviewer(
                        id=reviewer_id(i),
                        name=reviewer_id(i).rstrip("0123456789").replace("_", " "),
                        email=f"r{i + 1}@example.org",
                        affiliation=AFFILIATIONS[i % len(AFFILIATIONS)],
                        publications=texts.reviewers[i].publications,
                    ),
                )
                for i in range(reviewers)
            ]
            for start in range(0, max(papers, reviewers), 5000):
                if submissions[start : start + 5000]:
                    session.execute(insert(SubmissionRow), submissions[start : start + 5000])
                if people[start : start + 5000]:
                    session.execute(insert(ReviewerRow), people[start : start + 5000])
                    members = [
                        {"venue_id": venue_id, "pool": "reviewers", "person_id": p["id"]}
                        for p in people[start : start + 5000]
                    ]
                    session.execute(insert(PoolMember), members)
            if not stored_scores:
                session.commit()
                return
            version = session.scalar(select(Venue.corpus_version).where(Venue.id == venue_id))
            run = AffinityRun(
                venue_id=venue_id,
                n_papers=papers,
                n_reviewers=reviewers,
                top_n=candidates,
                config={"method": "tfidf"},
                corpus_version=version or 0,
            )
            session.add(run)
            session.flush()
            # candidates of paper i: a band of reviewers around i (every reviewer is someone's)
            offsets = rng.choice(max(reviewers // 4, candidates), size=candidates, replace=False)
            scores = rng.random((papers, candidates)).astype(float)
            rows = [
                {
                    "run_id": run.id,
                    "paper_id": paper_id(i),
                    "reviewer_id": reviewer_id((i * reviewers // papers + int(off)) % reviewers),
                    "score": float(scores[i, k]),
                    "requested": False,
                }
                for i in range(papers)
                for k, off in enumerate(offsets)
            ]
            for start in range(0, len(rows), 20000):
                session.execute(insert(AffinityScore), rows[start : start + 20000])
            session.commit()
    finally:
        database.dispose()
