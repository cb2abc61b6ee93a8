"""A draft's pairs as a repair reads them: the whole draft (re-optimising keeps every other
pair), or only the papers and reviewers a repair touches (a paper's repairs at 10,000
papers read a few hundred pairs, not the draft's tens of thousands).

:class:`Draft` answers the same questions either way: the pairs of the papers read, the
pins among them, each reviewer's total load, and the papers each reviewer reviews (sorted,
so the two ways give identical neighbourhoods). :func:`allowed` keeps the scored pairs the
draft may hold, checking every pair's exclusions at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from reviewer_recommender.services.draft_rules import own_forbid_rows, pins_with_draft
from reviewer_recommender.services.edit_effects import reviewer_loads
from reviewer_recommender.services.publishing import run_pairs
from reviewer_recommender.storage.frames import rows_frame
from reviewer_recommender.storage.models import AssignmentPair, AssignmentRow, Conflict

Pair = tuple[str, str]
CHUNK = 500  # ids per IN (...) query
PAIR_COLUMNS = ["paper_id", "reviewer_id", "score", "pinned"]


@dataclass
class Draft:
    """A draft's pairs, loads and pins: all of them (``Draft.read(session, row)``) or read
    paper by paper as a repair needs them (``Draft.read(session, row, papers)``)."""

    row: AssignmentRow
    session: Session
    pairs: pd.DataFrame  # paper_id, reviewer_id, score, pinned: every pair of the papers read
    pinned: set[Pair]
    whole: bool
    loads: dict[str, int] = field(default_factory=dict)  # total loads known so far
    read_papers: set[str] = field(default_factory=set)

    @classmethod
    def read(
        cls, session: Session, row: AssignmentRow, papers: Sequence[str] | None = None
    ) -> Draft:
        pins = pins_with_draft(session, row)
        pinned = set(zip(pins["paper_id"], pins["reviewer_id"], strict=True))
        if papers is None:
            pairs = run_pairs(session, row.id)
            draft = cls(row, session, pairs.iloc[:0], pinned, whole=True)
            draft._take(pairs)
            draft.loads = {str(k): int(v) for k, v in pairs.groupby("reviewer_id").size().items()}
            return draft
        draft = cls(row, session, pd.DataFrame(columns=PAIR_COLUMNS), pinned, whole=False)
        draft.add_papers(papers)
        return draft

    def _take(self, pairs: pd.DataFrame) -> None:
        flagged = pairs[pairs["pinned"].astype(bool)]
        self.pinned |= set(zip(flagged["paper_id"], flagged["reviewer_id"], strict=True))
        self.pairs = pairs if not len(self.pairs) else pd.concat([self.pairs, pairs])
        self.pairs = self.pairs.reset_index(drop=True)

    def add_papers(self, papers: Iterable[str]) -> None:
        """Read every pair of ``papers`` not read yet."""
        if self.whole:
            return
        missing = sorted(set(papers) - self.read_papers)
        found: list[Any] = []
        for start in range(0, len(missing), CHUNK):
            found += self.session.execute(
                select(
                    AssignmentPair.paper_id,
                    AssignmentPair.reviewer_id,
                    AssignmentPair.score,
                    AssignmentPair.pinned,
                ).where(
                    AssignmentPair.assignment_id == self.row.id,
                    AssignmentPair.paper_id.in_(missing[start : start + CHUNK]),
                )
            ).all()
        self.read_papers.update(missing)
        if found:
            self._take(rows_frame(found, columns=PAIR_COLUMNS))

    def papers_of(self, reviewers: Iterable[str]) -> dict[str, list[str]]:
        """The papers each of ``reviewers`` reviews in the draft (sorted; those with none
        are left out)."""
        wanted = sorted(set(reviewers))
        if self.whole:
            mine = self.pairs[self.pairs["reviewer_id"].isin(wanted)]
            rows: list[tuple[str, str]] = list(
                zip(mine["reviewer_id"], mine["paper_id"], strict=True)
            )
        else:
            rows = []
            for start in range(0, len(wanted), CHUNK):
                rows += self.session.execute(
                    select(AssignmentPair.reviewer_id, AssignmentPair.paper_id).where(
                        AssignmentPair.assignment_id == self.row.id,
                        AssignmentPair.reviewer_id.in_(wanted[start : start + CHUNK]),
                    )
                ).all()
        found: dict[str, list[str]] = {}
        for r, p in sorted((str(r), str(p)) for r, p in rows):
            found.setdefault(r, []).append(p)
        if not self.whole:
            self.loads.update({r: len(found.get(r, [])) for r in wanted})
        return found

    def loads_of(self, reviewers: Sequence[str]) -> pd.Series:
        """Each reviewer's number of papers in the whole draft."""
        if not self.whole:
            unknown = [r for r in reviewers if r not in self.loads]
            if unknown:
                self.loads.update(reviewer_loads(self.session, self.row, unknown))
        return pd.Series([self.loads.get(r, 0) for r in reviewers], index=list(reviewers))


def blocked(session: Session, row: AssignmentRow, papers: Sequence[str]) -> pd.DataFrame:
    """The pairs of ``papers`` something other than a limit keeps out of draft ``row``: a
    stored conflict, excluding bid or forbid of the venue (every source of a stored conflict
    row is one, :func:`reviewer_recommender.services.pair_rules.exclusion`) and the draft's
    own forbids (``paper_id, reviewer_id``)."""
    ordered = sorted(set(papers))
    rows: list[tuple[str, str]] = []
    for start in range(0, len(ordered), CHUNK):
        rows += session.execute(
            select(Conflict.paper_id, Conflict.reviewer_id).where(
                Conflict.venue_id == row.venue_id,
                Conflict.paper_id.in_(ordered[start : start + CHUNK]),
            )
        ).all()
    rows += [(p, r) for p, r, _, _ in own_forbid_rows(session, row, ordered)]
    return pd.DataFrame(
        [(str(p), str(r)) for p, r in rows], columns=["paper_id", "reviewer_id"]
    ).drop_duplicates()


def allowed(
    session: Session, row: AssignmentRow, table: pd.DataFrame, draft: Draft
) -> pd.DataFrame:
    """The rows of ``table`` (stored scores of the run's affinity run) the draft may hold:
    its own pairs, and pairs nothing but a limit stops (the one rule of
    :func:`reviewer_recommender.services.pair_rules.addition_obstacles`: a scored pair
    that is not held is kept out only by an exclusion), checked all at once."""
    if not len(table):
        return table.reset_index(drop=True)
    draft.add_papers(table["paper_id"].unique())
    keys = pd.MultiIndex.from_arrays([table["paper_id"], table["reviewer_id"]])
    held = pd.MultiIndex.from_arrays([draft.pairs["paper_id"], draft.pairs["reviewer_id"]])
    out = blocked(session, row, table["paper_id"].unique().tolist())
    stopped = pd.MultiIndex.from_arrays([out["paper_id"], out["reviewer_id"]])
    keep = keys.isin(held) | ~keys.isin(stopped)
    return table[keep].reset_index(drop=True)
