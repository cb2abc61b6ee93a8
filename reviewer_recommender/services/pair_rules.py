"""A venue's stored pair constraints in the words of the matching layer's rules.

The venue stores what excludes a pair as conflict rows with a ``source`` (``detected``,
``uploaded``, ``bid``, ``forbid``) and a ``reason``; :func:`exclusion` maps each to the one
exclusion vocabulary (:data:`matching.violations.EXCLUSION_KINDS`), so that publishing
checks, edit previews, the edge browser and alternates all read a stored row the same way.
:func:`addition_obstacles` reads what the one rule of :mod:`matching.additions` ("can this
pair be added to this run") needs from the stored run and venue.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from matching.additions import Obstacle
from matching.additions import addition_obstacles as obstacles_of
from reviewer_recommender.services.draft_rules import own_forbid_rows, run_limits
from reviewer_recommender.services.edit_effects import paper_counts, reviewer_loads
from reviewer_recommender.storage.models import (
    AffinityScore,
    AssignmentPair,
    AssignmentRow,
    Conflict,
)

Pair = tuple[str, str]
CHUNK = 500  # papers per IN (...) query

# what each conflict source is, as an exclusion of its pair
EXCLUSION_OF_SOURCE = {
    "detected": "conflict",
    "uploaded": "conflict",
    "declared": "conflict",
    "bid": "bid",
    "forbid": "forbid",
}


def exclusion(source: str, reason: str | None) -> tuple[str, str]:
    """``(kind, reason)`` of a stored conflict row: a conflict of interest keeps its source
    in the reason (``detected: co-author ...``), a bid its label, a forbid the chair's
    reason."""
    kind = EXCLUSION_OF_SOURCE.get(source, "conflict")
    if kind == "conflict":
        return kind, f"{source}: {reason}" if reason else source
    if kind == "bid":
        return kind, (reason or "").removeprefix("bid ")
    return kind, reason or ""


def exclusions_frame(rows: Iterable[tuple[Any, Any, str, str | None]]) -> pd.DataFrame:
    """Stored ``(paper_id, reviewer_id, source, reason)`` rows as the exclusions table of
    :func:`matching.check_assignment` (``paper_id, reviewer_id, kind, reason``)."""
    records = [(str(p), str(r), *exclusion(source, reason)) for p, r, source, reason in rows]
    return pd.DataFrame(records, columns=["paper_id", "reviewer_id", "kind", "reason"])


def stored_exclusions(
    session: Session, venue_id: str, pairs: Iterable[Pair]
) -> dict[Pair, list[tuple[str, str]]]:
    """The ``(kind, reason)`` exclusions (:func:`exclusion`) the venue stores for each of
    ``pairs`` that has any, by source."""
    wanted = set(pairs)
    found: dict[Pair, list[tuple[str, str]]] = {}
    papers = sorted({p for p, _ in wanted})
    for start in range(0, len(papers), CHUNK):
        for p, r, source, reason in session.execute(
            select(Conflict.paper_id, Conflict.reviewer_id, Conflict.source, Conflict.reason)
            .where(
                Conflict.venue_id == venue_id, Conflict.paper_id.in_(papers[start : start + CHUNK])
            )
            .order_by(Conflict.paper_id, Conflict.reviewer_id, Conflict.source)
        ):
            if (p, r) in wanted:
                found.setdefault((p, r), []).append(exclusion(source, reason))
    return found


def addition_obstacles(
    session: Session, row: AssignmentRow, pairs: Sequence[Pair], *, replacing: bool = False
) -> dict[Pair, list[Obstacle]]:
    """For each of ``pairs``, why it cannot simply be added to run ``row`` now
    (:func:`matching.additions.addition_obstacles` on the stored state: the run's pairs and
    loads, the limits it is held to, the venue's conflicts, bids and forbids and the run's
    own forbids, the scores of
    the run's affinity run); empty lists for pairs that can. ``replacing``: each addition
    replaces a reviewer of the paper (its demand is no obstacle). Within
    :func:`first_additions_held`, a held pair's answer is given (once) instead of read."""
    held: dict[Pair, list[Obstacle]] | None = session.info.get(("addition-obstacles", row.id))
    if held is not None and not replacing and len(pairs) == 1 and pairs[0] in held:
        return {pairs[0]: held.pop(pairs[0])}
    wanted = list(dict.fromkeys(pairs))
    papers = sorted({p for p, _ in wanted})
    reviewers = sorted({r for _, r in wanted})
    limits = run_limits(session, row)
    loads = reviewer_loads(session, row, reviewers)
    counts = paper_counts(session, row, papers)
    exclusions = stored_exclusions(session, row.venue_id, wanted)
    for p, r, source, reason in own_forbid_rows(session, row, papers):
        if (p, r) in exclusions or (p, r) in set(wanted):
            exclusions.setdefault((p, r), []).append(exclusion(source, reason))
    assigned = _pairs_present(
        session,
        wanted,
        select(AssignmentPair.paper_id, AssignmentPair.reviewer_id).where(
            AssignmentPair.assignment_id == row.id
        ),
        AssignmentPair.paper_id,
    )
    scored = (
        _pairs_present(
            session,
            wanted,
            select(AffinityScore.paper_id, AffinityScore.reviewer_id).where(
                AffinityScore.run_id == row.affinity_run_id
            ),
            AffinityScore.paper_id,
        )
        if row.affinity_run_id is not None
        else set()
    )
    return {
        (p, r): obstacles_of(
            p,
            r,
            assigned=(p, r) in assigned,
            load=loads[r],
            max_load=limits.max_of(r),
            count=counts[p],
            demand=limits.demand_of(p),
            exclusions=exclusions.get((p, r), ()),
            scored=(p, r) in scored,
            replacing=replacing,
        )
        for p, r in wanted
    }


@contextmanager
def first_additions_held(
    session: Session,
    row: AssignmentRow,
    changes: Sequence[tuple[Pair, bool]],
    *,
    known: Mapping[Pair, list[Obstacle]] | None = None,
) -> Iterator[None]:
    """Within: :func:`addition_obstacles` of the pairs a sequence of changes adds read in
    one go (those in ``known``, read on the same state, not read again), for changes that
    check no limit (a bulk file: it checks its final state). Each ``(pair, adds)`` change
    in order; only a pair whose first change adds is held, and its answer is given once, to
    that change: what excludes a pair or assigns it changes only by a change of that pair
    (the loads in the answer may be stale: limits are not read)."""
    first: dict[Pair, bool] = {}
    for pair, adds in changes:
        first.setdefault(pair, adds)
    wanted = [pair for pair, adds in first.items() if adds]
    known = known or {}
    held = {pair: list(known[pair]) for pair in wanted if pair in known}
    missing = [pair for pair in wanted if pair not in known]
    if missing:
        held.update(addition_obstacles(session, row, missing))
    key = ("addition-obstacles", row.id)
    session.info[key] = held
    try:
        yield
    finally:
        session.info.pop(key, None)


def _pairs_present(
    session: Session, wanted: Sequence[Pair], statement: Any, paper_column: Any
) -> set[Pair]:
    """Which of ``wanted`` the ``(paper_id, reviewer_id)`` rows of ``statement`` hold."""
    want = set(wanted)
    papers = sorted({p for p, _ in want})
    found: set[Pair] = set()
    for start in range(0, len(papers), CHUNK):
        rows = session.execute(statement.where(paper_column.in_(papers[start : start + CHUNK])))
        found.update(pair for pair in ((str(p), str(r)) for p, r in rows) if pair in want)
    return found
