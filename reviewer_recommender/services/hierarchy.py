"""Levels of assignment: senior area chairs → area chairs → reviewers, kept consistent.

Each pool (:mod:`reviewer_recommender.services.pools`) is solved and published on its own
(one live run per pool); the levels meet through the live runs:

- **cross-level rule** (hard): nobody reviews a paper they chair. Solving the reviewers
  forbids each pair (paper, person) of the live area-chair run; solving the area chairs
  forbids each pair of the live reviewer run (:func:`cross_level_pairs`). The forbidden
  pairs go through the one problem builder
  (:class:`reviewer_recommender.services.problem.AssignInputs` ``forbidden``) and the run's
  summary reports them (``cross_level``).
- **one institution** (optional, ``distinct_institutions``): solving the reviewers also
  forbids reviewers who share an institution with the paper's area chair
  (:func:`institution_pairs`, with the solve's ``institution_key``: the same institution
  labels as ``max_per_affiliation``'s).
- **senior area chairs** are matched to area chairs: the items of a ``senior_area_chairs``
  solve are the area chairs of the live area-chair run, and a senior area chair's affinity to
  an area chair is the mean of their ``k`` best stored scores (the pool's latest affinity
  run) over the area chair's papers in that run, leaving out papers they are in conflict
  with (:func:`senior_area_chair_scores`). An area chair's papers then belong to that
  senior area chair (:func:`paper_chairs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import StateConflict
from reviewer_recommender.storage.frames import rows_frame
from reviewer_recommender.storage.models import (
    AffinityScore,
    AssignmentPair,
    AssignmentRow,
    Conflict,
    ReviewerRow,
    SubmissionRow,
)

REVIEWERS = "reviewers"
AREA_CHAIRS = "area_chairs"
SENIOR_AREA_CHAIRS = "senior_area_chairs"
# the pool whose live run forbids pairs of a solve of this pool
OTHER_LEVEL = {REVIEWERS: AREA_CHAIRS, AREA_CHAIRS: REVIEWERS}
CHUNK = 500


def live_run_of(session: Session, venue_id: str, pool: str) -> AssignmentRow | None:
    """The pool's live run, if one is published."""
    return session.scalar(
        select(AssignmentRow).where(
            AssignmentRow.venue_id == venue_id,
            AssignmentRow.pool == pool,
            AssignmentRow.state == "live",
        )
    )


def run_pair_frame(session: Session, assignment_id: int) -> pd.DataFrame:
    """A run's ``paper_id, reviewer_id`` pairs."""
    return rows_frame(
        session.execute(
            select(AssignmentPair.paper_id, AssignmentPair.reviewer_id).where(
                AssignmentPair.assignment_id == assignment_id
            )
        ).all(),
        columns=["paper_id", "reviewer_id"],
        dtype=object,
    )


def cross_level_pairs(
    session: Session, venue_id: str, pool: str
) -> tuple[pd.DataFrame, dict[str, Any] | None]:
    """The pairs a solve of ``pool`` may not use because the other level's live run holds
    them (``paper_id, reviewer_id``), and what the run's summary says of them (None when
    no rule applies: no other level, or nothing of it is live)."""
    other = OTHER_LEVEL.get(pool)
    live = live_run_of(session, venue_id, other) if other else None
    if live is None:
        return pd.DataFrame(columns=["paper_id", "reviewer_id"], dtype=object), None
    pairs = run_pair_frame(session, live.id)
    return pairs, {
        "rule": "nobody reviews a paper they chair",
        "other_pool": other,
        "other_run": live.id,
        "other_run_number": live.number,
        "pairs": len(pairs),
    }


def institution_labels(rows: Sequence[ReviewerRow], key: str) -> dict[str, str]:
    """Each person's institution label ("" when unknown), the labels of
    :func:`reviewer_recommender.services.problem.institution_groups`."""
    from reviewer_recommender.services.problem import institution_groups
    from reviewer_recommender.storage.repository import row_to_reviewer

    labels = institution_groups([row_to_reviewer(r) for r in rows], key)
    return {r.id: str(label) for r, label in zip(rows, labels, strict=True)}


def institution_pairs(
    session: Session, venue_id: str, reviewers: Sequence[ReviewerRow], key: str
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """(paper, reviewer) pairs where the reviewer shares an institution (``key``:
    affiliation or email domain) with the paper's area chair in the live area-chair run;
    409 while no area-chair run is live (the rule has nothing to read)."""
    live = live_run_of(session, venue_id, AREA_CHAIRS)
    if live is None:
        raise StateConflict(
            "no_live_area_chair_run",
            "distinct_institutions compares each paper's reviewers with its area chair: "
            "publish an area_chairs run first",
        )
    chairs = run_pair_frame(session, live.id)
    chair_ids = sorted(set(chairs["reviewer_id"]))
    chair_rows = [
        row
        for start in range(0, len(chair_ids), CHUNK)
        for row in session.scalars(
            select(ReviewerRow).where(
                ReviewerRow.venue_id == venue_id,
                ReviewerRow.id.in_(chair_ids[start : start + CHUNK]),
            )
        )
    ]
    chair_label = institution_labels(chair_rows, key)
    reviewer_label = institution_labels(list(reviewers), key)
    papers = chairs.assign(label=chairs["reviewer_id"].map(chair_label).fillna(""))
    people = pd.DataFrame(
        {"reviewer_id": list(reviewer_label), "label": list(reviewer_label.values())},
        dtype=object,
    )
    same = papers[papers["label"] != ""][["paper_id", "label"]].merge(people, on="label")
    pairs = same[["paper_id", "reviewer_id"]].drop_duplicates().reset_index(drop=True)
    return pairs, {"institution_key": key, "area_chair_run": live.id, "pairs": len(pairs)}


def area_chair_items(session: Session, venue_id: str) -> tuple[AssignmentRow, list[str]]:
    """The live area-chair run and its area chairs (the items senior area chairs are
    matched to); 409 while none is live."""
    live = live_run_of(session, venue_id, AREA_CHAIRS)
    if live is None:
        raise StateConflict(
            "no_live_area_chair_run",
            "senior area chairs are matched to the area chairs of the live area-chair run: "
            "publish an area_chairs run first",
        )
    chairs = sorted(
        str(r)
        for r in session.scalars(
            select(AssignmentPair.reviewer_id)
            .where(AssignmentPair.assignment_id == live.id)
            .distinct()
        )
    )
    return live, chairs


def senior_area_chair_scores(
    session: Session, venue_id: str, affinity_run_id: int, area_chair_run_id: int, top_k: int
) -> pd.DataFrame:
    """``paper_id`` (an area chair), ``reviewer_id`` (a senior area chair), ``score``: the
    mean of the senior area chair's ``top_k`` best stored scores in ``affinity_run_id``
    over the area chair's papers in run ``area_chair_run_id``; papers the senior area chair
    is in conflict with are left out, and nobody is matched to themselves."""
    chaired = run_pair_frame(session, area_chair_run_id).rename(
        columns={"reviewer_id": "area_chair"}
    )
    papers = sorted(set(chaired["paper_id"]))
    scores: list[tuple[str, str, float]] = []
    conflicts: set[tuple[str, str]] = set()
    for start in range(0, len(papers), CHUNK):
        chunk = papers[start : start + CHUNK]
        scores += [
            (str(p), str(r), float(s))
            for p, r, s in session.execute(
                select(AffinityScore.paper_id, AffinityScore.reviewer_id, AffinityScore.score)
                .where(AffinityScore.run_id == affinity_run_id)
                .where(AffinityScore.paper_id.in_(chunk))
            )
        ]
        conflicts.update(
            (str(p), str(r))
            for p, r in session.execute(
                select(Conflict.paper_id, Conflict.reviewer_id).where(
                    Conflict.venue_id == venue_id, Conflict.paper_id.in_(chunk)
                )
            )
        )
    frame = pd.DataFrame(scores, columns=["paper_id", "reviewer_id", "score"])
    if conflicts and len(frame):
        keys = pd.MultiIndex.from_frame(frame[["paper_id", "reviewer_id"]])
        frame = frame[~keys.isin(list(conflicts))]
    joined = chaired.merge(frame, on="paper_id")
    joined = joined[joined["area_chair"] != joined["reviewer_id"]]
    if joined.empty:
        return pd.DataFrame(columns=["paper_id", "reviewer_id", "score"])
    best = (
        joined.sort_values("score", ascending=False, kind="stable")
        .groupby(["area_chair", "reviewer_id"], sort=True)
        .head(top_k)
    )
    aggregated = best.groupby(["area_chair", "reviewer_id"], sort=True)["score"].mean()
    return aggregated.reset_index().rename(columns={"area_chair": "paper_id"})


def paper_chairs(
    session: Session, venue_id: str, paper_ids: Sequence[str]
) -> dict[str, dict[str, list[str]]]:
    """Each paper's area chairs (live area-chair run) and senior area chairs (those the
    live senior-area-chair run gives its area chairs)."""
    found: dict[str, dict[str, list[str]]] = {
        p: {AREA_CHAIRS: [], SENIOR_AREA_CHAIRS: []} for p in paper_ids
    }
    chairs_run = live_run_of(session, venue_id, AREA_CHAIRS)
    if chairs_run is None or not paper_ids:
        return found
    chairs = run_pair_frame(session, chairs_run.id)
    chairs = chairs[chairs["paper_id"].isin(list(paper_ids))]
    seniors_run = live_run_of(session, venue_id, SENIOR_AREA_CHAIRS)
    seniors = (
        run_pair_frame(session, seniors_run.id)
        if seniors_run is not None
        else pd.DataFrame(columns=["paper_id", "reviewer_id"])
    )
    senior_of: dict[str, list[str]] = {}
    for chair, senior in zip(seniors["paper_id"], seniors["reviewer_id"], strict=True):
        senior_of.setdefault(str(chair), []).append(str(senior))
    for paper, chair in sorted(zip(chairs["paper_id"], chairs["reviewer_id"], strict=True)):
        entry = found[str(paper)]
        entry[AREA_CHAIRS].append(str(chair))
        for senior in sorted(senior_of.get(str(chair), [])):
            if senior not in entry[SENIOR_AREA_CHAIRS]:
                entry[SENIOR_AREA_CHAIRS].append(senior)
    return found


def run_items(session: Session, row: AssignmentRow) -> list[str]:
    """What the run's pairs give persons to, sorted: the venue's papers, or for a senior
    area chairs' run the area chairs (of the live area-chair run, and of its pairs)."""
    if row.pool != SENIOR_AREA_CHAIRS:
        return sorted(
            session.scalars(select(SubmissionRow.id).where(SubmissionRow.venue_id == row.venue_id))
        )
    chairs = set(
        session.scalars(
            select(AssignmentPair.paper_id).where(AssignmentPair.assignment_id == row.id)
        )
    )
    live = live_run_of(session, row.venue_id, AREA_CHAIRS)
    if live is not None:
        chairs.update(
            session.scalars(
                select(AssignmentPair.reviewer_id).where(AssignmentPair.assignment_id == live.id)
            )
        )
    return sorted(chairs)


def cross_level_exclusions(
    session: Session, row: AssignmentRow, pairs: pd.DataFrame
) -> list[tuple[str, str, str, str]]:
    """Pairs of run ``row`` that the other level's live run holds, as stored exclusion rows
    ``(paper_id, reviewer_id, source, reason)`` (a conflict of source ``cross-level``):
    what publishing and edit previews check besides the venue's conflicts."""
    other_pairs, described = cross_level_pairs(session, row.venue_id, row.pool)
    if described is None or not len(pairs) or not len(other_pairs):
        return []
    both = pairs[["paper_id", "reviewer_id"]].merge(other_pairs, on=["paper_id", "reviewer_id"])
    number = described["other_run_number"] or described["other_run"]
    what = "area chair" if described["other_pool"] == AREA_CHAIRS else "reviewer"
    reason = f"{what} of this paper in the live {described['other_pool']} run #{number}"
    return [
        (str(p), str(r), "cross-level", reason)
        for p, r in sorted(zip(both["paper_id"], both["reviewer_id"], strict=True))
    ]


def chairs_page(session: Session, venue_id: str, limit: int, offset: int) -> dict[str, Any]:
    """The venue's papers by id, each with its area chairs and senior area chairs from the
    live runs (``Page[PaperChairsOut]``)."""
    from reviewer_recommender.storage.names import lookup

    query = select(SubmissionRow.id).where(SubmissionRow.venue_id == venue_id)
    total = len(list(session.scalars(query)))
    papers = [
        str(p)
        for p in session.scalars(query.order_by(SubmissionRow.id).limit(limit).offset(offset))
    ]
    chairs = paper_chairs(session, venue_id, papers)
    people = sorted({r for entry in chairs.values() for ids in entry.values() for r in ids})
    names = lookup(session, venue_id, papers, people)
    items = [
        {
            "paper_id": p,
            "paper_title": names.title(p),
            **{
                pool: [{"reviewer_id": r, "reviewer_name": names.name(r)} for r in chairs[p][pool]]
                for pool in (AREA_CHAIRS, SENIOR_AREA_CHAIRS)
            },
        }
        for p in papers
    ]
    return {"items": items, "total": total, "limit": limit, "offset": offset}
