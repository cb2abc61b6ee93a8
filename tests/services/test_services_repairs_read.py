"""A paper's repairs read only the pairs they touch (services.draft_pairs): the same answer
as reading the whole draft first, with conflicts, bids, forbids (the venue's and the
draft's own) and pins in play; and the vectorized check of which scored pairs a draft may
hold agrees with the one rule, pair by pair (services.pair_rules.addition_obstacles)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from benchmarks.bench_repairs import build
from reviewer_recommender.services import repairs
from reviewer_recommender.services.draft_pairs import Draft, allowed
from reviewer_recommender.services.draft_rules import FORBID, PIN
from reviewer_recommender.services.pair_rules import addition_obstacles
from reviewer_recommender.storage.db import Database, migrate
from reviewer_recommender.storage.models import (
    AffinityScore,
    AssignmentPair,
    AssignmentRow,
    Conflict,
    DraftRule,
    Pin,
)

BLOCKING = ("conflict", "bid", "forbid", "unscored")


@pytest.fixture(scope="module")
def venue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Database, int]]:
    path: Path = tmp_path_factory.mktemp("repairs") / "venue.db"
    database = Database(f"sqlite:///{path}")
    migrate(database.engine)
    draft_id = build(database, papers=240, reviewers=200, per_paper=3, top=25)
    rng = np.random.default_rng(3)
    with database.session() as session:
        scored = session.execute(select(AffinityScore.paper_id, AffinityScore.reviewer_id)).all()
        held = set(
            session.execute(select(AssignmentPair.paper_id, AssignmentPair.reviewer_id)).all()
        )
        free = [pair for pair in scored if tuple(pair) not in held]
        picked = rng.choice(len(free), size=400, replace=False)
        sources = ["detected", "uploaded", "bid", "forbid"]
        for n, i in enumerate(picked[:300]):
            p, r = free[int(i)]
            session.add(
                Conflict(venue_id="bench", paper_id=p, reviewer_id=r, source=sources[n % 4])
            )
        for i in picked[300:]:
            p, r = free[int(i)]
            session.add(DraftRule(assignment_id=draft_id, kind=FORBID, paper_id=p, reviewer_id=r))
        pinned = sorted(held)[::17]
        for p, r in pinned[::2]:
            session.add(Pin(venue_id="bench", paper_id=p, reviewer_id=r))
        for p, r in pinned[1::4]:
            session.add(DraftRule(assignment_id=draft_id, kind=PIN, paper_id=p, reviewer_id=r))
        for p, r in pinned[3::4]:
            session.execute(
                update(AssignmentPair)
                .where(AssignmentPair.paper_id == p, AssignmentPair.reviewer_id == r)
                .values(pinned=True)
            )
        session.commit()
    yield database, draft_id
    database.dispose()


def _row(session: Session, draft_id: int) -> AssignmentRow:
    row = session.get(AssignmentRow, draft_id)
    assert row is not None
    return row


def test_repairs_read_in_part_equal_the_whole_draft_read(venue: tuple[Database, int]) -> None:
    database, draft_id = venue
    with database.session() as session:
        row = _row(session, draft_id)
        whole = Draft.read(session, row).pairs
        papers = list(whole.groupby("paper_id")["score"].mean().nsmallest(25).index)
        found = 0
        for paper in papers:
            quick = repairs.find_repairs(session, row, paper)
            slow = repairs.find_repairs(session, row, paper, whole=True)
            assert quick == slow, paper
            found += sum(1 for i in quick["items"] if i["feasible"] and i["removed"])
        assert found > 0  # swap chains were found, not only empty answers


def test_allowed_pairs_agree_with_the_rule_pair_by_pair(venue: tuple[Database, int]) -> None:
    database, draft_id = venue
    with database.session() as session:
        row = _row(session, draft_id)
        papers = [f"P{i:06d}" for i in range(0, 240, 3)]
        table = repairs._scores(session, row, papers)
        draft = Draft.read(session, row, papers)
        quick = allowed(session, row, table, draft)
        held = set(zip(draft.pairs["paper_id"], draft.pairs["reviewer_id"], strict=True))
        keys = list(zip(table["paper_id"], table["reviewer_id"], strict=True))
        found = addition_obstacles(session, row, [k for k in keys if k not in held], replacing=True)
        kept = [
            k for k in keys if k in held or not any(o.kind in BLOCKING for o in found.get(k, []))
        ]
        assert list(zip(quick["paper_id"], quick["reviewer_id"], strict=True)) == kept
        assert len(kept) < len(keys)  # some pairs were blocked
