"""Type-ahead search at 20,000 papers and 20,000 reviewers (SQLite, and PostgreSQL when a
URL is given).

Fills one venue, then times :func:`reviewer_recommender.services.search.search` (what ``GET
.../search/papers`` and
``.../search/reviewers`` run: ranked page of 20 plus the total) for a mix of type-ahead
queries (one letter, a prefix, a word, an id, a rare substring). Baseline in the same run:
the query one would write without the folded key columns and their indexes, matching
``lower(title)`` / ``lower(id)`` with the same page and total; figures are p50/p95 in ms and
the baseline as a ratio.

    python benchmarks/bench_search.py [--rows 20000] [--repeat 20]
        [--postgres-url postgresql+psycopg://postgres@127.0.0.1:5432/test]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, func, insert, or_, select, text
from sqlalchemy.engine import make_url

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from recommender.corpus import Reviewer, Submission  # noqa: E402
from reviewer_recommender.services.search import search  # noqa: E402
from reviewer_recommender.storage.db import Database, migrate  # noqa: E402
from reviewer_recommender.storage.models import ReviewerRow, SubmissionRow, Venue  # noqa: E402
from reviewer_recommender.storage.repository import reviewer_to_row, submission_to_row  # noqa: E402

WORDS = [
    *("graph", "vision", "language", "policy", "kernel", "bandit", "privacy", "robust"),
    *("causal", "sparse", "transformer", "diffusion", "federated", "quantum", "neural"),
    *("bayesian", "optimal", "convex", "reinforcement", "contrastive"),
]
QUERIES = ("g", "gra", "transformer", "sub0123", "sub01234", "ayesian opt", "zzq")
PEOPLE = ("a", "mar", "lovelace", "ada_lovelace12", "ada lovelace123", "qqq")


def fill(database: Database, venue: str, rows: int) -> None:
    with database.session() as session:
        session.add(Venue(id=venue, name=venue))
        session.flush()
        papers = [
            submission_to_row(
                venue,
                Submission(
                    id=f"sub{i:05d}",
                    title=" ".join(
                        WORDS[(i * k + k * k) % len(WORDS)] for k in range(1, 7)
                    ).title(),
                    abstract="an abstract " * 20,
                ),
            )
            for i in range(rows)
        ]
        names = ("Ada_Lovelace", "Maria_Curie", "Alan_Turing", "Emmy_Noether", "Kurt_Godel")
        people = [
            reviewer_to_row(venue, Reviewer(id=f"{names[i % len(names)]}{i}")) for i in range(rows)
        ]
        for start in range(0, rows, 5000):
            session.execute(insert(SubmissionRow), papers[start : start + 5000])
            session.execute(insert(ReviewerRow), people[start : start + 5000])
        session.commit()
        if session.get_bind().dialect.name == "postgresql":
            session.execute(text("ANALYZE submissions"))
            session.execute(text("ANALYZE reviewers"))
        else:
            session.execute(text("ANALYZE"))
        session.commit()


def baseline(session: Any, venue: str, kind: str, query: str) -> Any:
    """Without the key columns: lower() of the raw columns, substring match, same page."""
    model: Any = SubmissionRow if kind == "papers" else ReviewerRow
    column = model.title if kind == "papers" else model.id
    needle = f"%{query.lower()}%"
    where = (
        model.venue_id == venue,
        or_(func.lower(model.id).like(needle), func.lower(column).like(needle)),
    )
    total = session.scalar(select(func.count()).where(*where))
    page = session.execute(
        select(model.id, column).where(*where).order_by(func.lower(column)).limit(20)
    ).all()
    return total, page


def timed(fn: Any, repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def run(label: str, url: str, rows: int, repeat: int) -> None:
    database = Database(url)
    migrate(database.engine)
    venue = f"bench-{uuid.uuid4().hex[:8]}"
    started = time.perf_counter()
    fill(database, venue, rows)
    seconds = time.perf_counter() - started
    print(f"\n{label}: {rows} papers + {rows} reviewers loaded in {seconds:.1f} s")
    print(
        f"{'kind':10} {'query':18} {'total':>6} {'p50 ms':>8} {'p95 ms':>8} "
        f"{'baseline p50':>13} {'ratio':>6}"
    )
    with database.session() as session:
        for kind, queries in (("papers", QUERIES), ("reviewers", PEOPLE)):
            for query in queries:
                result = search(session, venue, kind, query, 20, 0)
                p50, p95 = timed(
                    lambda k=kind, q=query: search(session, venue, k, q, 20, 0), repeat
                )
                b50, _ = timed(lambda k=kind, q=query: baseline(session, venue, k, q), repeat)
                print(
                    f"{kind:10} {query!r:18} {result['total']:>6} {p50:>8.2f} {p95:>8.2f} "
                    f"{b50:>13.2f} {b50 / p50:>5.1f}x"
                )
    database.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--postgres-url", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run("SQLite", f"sqlite:///{Path(tmp) / 'search.db'}", args.rows, args.repeat)
    if args.postgres_url:
        base = make_url(args.postgres_url)
        name = f"bench_search_{uuid.uuid4().hex[:8]}"
        admin = create_engine(base, isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            run(
                "PostgreSQL",
                base.set(database=name).render_as_string(hide_password=False),
                args.rows,
                args.repeat,
            )
        finally:
            with admin.connect() as connection:
                connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()


if __name__ == "__main__":
    main()
