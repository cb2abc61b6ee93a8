"""Two runs compared pair by pair: which pairs one has and the other lacks, by paper and by
reviewer, and the summary. Run ``a`` is the base: "added" pairs are in ``b`` only,
"removed" pairs in ``a`` only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from sqlalchemy import Select, case, distinct, exists, func, literal, select, union_all
from sqlalchemy.orm import Session, aliased

from reviewer_recommender.services.assignment import json_safe
from reviewer_recommender.services.principals import Principal
from reviewer_recommender.services.runs import require_assignment
from reviewer_recommender.storage.frames import rows_frame
from reviewer_recommender.storage.models import AssignmentPair, AssignmentRow
from reviewer_recommender.storage.names import lookup

CHUNK = 500  # ids per IN (...) query


def _pairs(session: Session, row: AssignmentRow, column: Any, ids: Sequence[str]) -> pd.DataFrame:
    """The run's pairs (``paper_id, reviewer_id, score``) whose ``column`` is one of
    ``ids``."""
    statement = select(
        AssignmentPair.paper_id, AssignmentPair.reviewer_id, AssignmentPair.score
    ).where(AssignmentPair.assignment_id == row.id)
    wanted = sorted(set(ids))
    rows = [
        found
        for start in range(0, len(wanted), CHUNK)
        for found in session.execute(statement.where(column.in_(wanted[start : start + CHUNK])))
    ]
    return rows_frame(rows, columns=["paper_id", "reviewer_id", "score"])


def diff_frame(
    session: Session, a: AssignmentRow, b: AssignmentRow, column: Any, ids: Sequence[str]
) -> pd.DataFrame:
    """Every pair of either run among the papers or reviewers ``ids`` (of ``column``):
    ``score_a``, ``score_b`` (NaN where absent) and ``change`` (``shared``, ``added``,
    ``removed``), sorted by paper then reviewer (a page's worth: the whole runs are
    compared by the database, :func:`_changes`)."""
    merged = _pairs(session, a, column, ids).merge(
        _pairs(session, b, column, ids),
        on=["paper_id", "reviewer_id"],
        how="outer",
        suffixes=("_a", "_b"),
        indicator=True,
    )
    merged["change"] = merged["_merge"].map(
        {"both": "shared", "left_only": "removed", "right_only": "added"}
    )
    return merged.drop(columns="_merge").sort_values(
        ["paper_id", "reviewer_id"], kind="stable", ignore_index=True
    )


def _only_in(row: AssignmentRow, other: AssignmentRow, change: str) -> Select[str, str, float, str]:
    """The pairs of ``row`` that ``other`` lacks, as ``paper_id, reviewer_id, score,
    change``: found by the database on the pairs' primary key, not read and merged."""
    mine, theirs = aliased(AssignmentPair), aliased(AssignmentPair)
    return select(
        mine.paper_id, mine.reviewer_id, mine.score, literal(change).label("change")
    ).where(
        mine.assignment_id == row.id,
        ~exists().where(
            theirs.assignment_id == other.id,
            theirs.paper_id == mine.paper_id,
            theirs.reviewer_id == mine.reviewer_id,
        ),
    )


def _changes(a: AssignmentRow, b: AssignmentRow) -> Any:
    """Every pair one run has and the other lacks (``change`` added: in ``b`` only,
    removed: in ``a`` only), as a subquery."""
    return union_all(_only_in(a, b, "removed"), _only_in(b, a, "added")).subquery("changes")


def _ordered(session: Session, column: Any) -> Any:
    """``column`` ordered by code point on every database (as Python sorts the ids)."""
    return column.collate("C") if session.get_bind().dialect.name == "postgresql" else column


def _totals(session: Session, row: AssignmentRow) -> tuple[int, float]:
    """(pairs, sum of their scores) of the run."""
    count, total = session.execute(
        select(func.count(), func.coalesce(func.sum(AssignmentPair.score), 0.0)).where(
            AssignmentPair.assignment_id == row.id
        )
    ).one()
    return int(count), float(total)


def _brief(row: AssignmentRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "number": row.number,
        "name": row.name,
        "state": row.state,
        "version": row.version,
    }


def summary(session: Session, a: AssignmentRow, b: AssignmentRow) -> dict[str, Any]:
    changes = _changes(a, b)
    removed, added, papers, reviewers = session.execute(
        select(
            func.coalesce(func.sum(case((changes.c.change == "removed", 1), else_=0)), 0),
            func.coalesce(func.sum(case((changes.c.change == "added", 1), else_=0)), 0),
            func.count(distinct(changes.c.paper_id)),
            func.count(distinct(changes.c.reviewer_id)),
        )
    ).one()
    (pairs_a, sum_a), (pairs_b, sum_b) = _totals(session, a), _totals(session, b)
    return json_safe(
        {
            "a": _brief(a),
            "b": _brief(b),
            "pairs_a": pairs_a,
            "pairs_b": pairs_b,
            "shared": pairs_a - int(removed),
            "added": int(added),
            "removed": int(removed),
            "papers_changed": int(papers),
            "reviewers_changed": int(reviewers),
            "objective_a": sum_a,
            "objective_b": sum_b,
            "objective_change": sum_b - sum_a,
            "mean_score_a": sum_a / pairs_a if pairs_a else None,
            "mean_score_b": sum_b / pairs_b if pairs_b else None,
        }
    )


def pair_changes(
    session: Session, a: AssignmentRow, b: AssignmentRow, change: str, limit: int, offset: int
) -> dict[str, Any]:
    """Pairs in one run only (``change``: added, removed or all), by paper then reviewer."""
    changes = _changes(a, b)
    wanted = ("added", "removed") if change == "all" else (change,)
    chosen = changes.c.change.in_(wanted)
    # the total with the page, from one pass over the changes (a page past the end asks again)
    rows = session.execute(
        select(
            changes.c.paper_id,
            changes.c.reviewer_id,
            changes.c.score,
            changes.c.change,
            func.count().over().label("total"),
        )
        .where(chosen)
        .order_by(_ordered(session, changes.c.paper_id), _ordered(session, changes.c.reviewer_id))
        .limit(limit)
        .offset(offset)
    ).all()
    page = [(p, r, score, c) for p, r, score, c, _ in rows]
    total = (
        int(rows[0][-1])
        if rows
        else int(session.scalar(select(func.count()).select_from(changes).where(chosen)) or 0)
    )
    names = lookup(session, a.venue_id, [str(p) for p, *_ in page], [str(r) for _, r, *_ in page])
    items = [
        {
            "paper_id": p,
            "paper_title": names.title(p),
            "reviewer_id": r,
            "reviewer_name": names.name(r),
            "change": c,
            "score": float(score),
        }
        for p, r, score, c in page
    ]
    return {"items": items, "total": total, "limit": limit, "offset": offset}


def _changed_ids(
    session: Session, a: AssignmentRow, b: AssignmentRow, side: str, limit: int, offset: int
) -> tuple[int, list[str]]:
    """(how many, a page of) the papers or reviewers (``side``: the column) whose pairs
    differ between the runs, by id."""
    column = _changes(a, b).c[side]
    # the total with the page, from one pass over the changes (a page past the end asks again)
    rows = session.execute(
        select(column, func.count().over())
        .group_by(column)
        .order_by(_ordered(session, column))
        .limit(limit)
        .offset(offset)
    ).all()
    if not rows:
        return int(session.scalar(select(func.count(distinct(column)))) or 0), []
    return int(rows[0][1]), [str(i) for i, _ in rows]


def paper_changes(
    session: Session, a: AssignmentRow, b: AssignmentRow, limit: int, offset: int
) -> dict[str, Any]:
    """Papers whose reviewers differ: who joined, who left, how many stayed."""
    total, page_ids = _changed_ids(session, a, b, "paper_id", limit, offset)
    rows = diff_frame(session, a, b, AssignmentPair.paper_id, page_ids)
    names = lookup(session, a.venue_id, page_ids, list(rows["reviewer_id"]))
    items = []
    for paper_id, group in rows.groupby("paper_id", sort=True):

        def listed(kind: str, column: str, g: pd.DataFrame = group) -> list[dict[str, Any]]:
            part = g[g["change"] == kind].sort_values(column, ascending=False)
            return [
                {"reviewer_id": r, "reviewer_name": names.name(r), "score": float(s)}
                for r, s in part[["reviewer_id", column]].itertuples(index=False)
            ]

        items.append(
            json_safe(
                {
                    "paper_id": paper_id,
                    "paper_title": names.title(str(paper_id)),
                    "added": listed("added", "score_b"),
                    "removed": listed("removed", "score_a"),
                    "kept": int((group["change"] == "shared").sum()),
                    "mean_score_a": float(group["score_a"].mean()),
                    "mean_score_b": float(group["score_b"].mean()),
                }
            )
        )
    return {"items": items, "total": total, "limit": limit, "offset": offset}


def reviewer_changes(
    session: Session, a: AssignmentRow, b: AssignmentRow, limit: int, offset: int
) -> dict[str, Any]:
    """Reviewers whose papers differ: load in each run, papers gained and lost."""
    total, page_ids = _changed_ids(session, a, b, "reviewer_id", limit, offset)
    rows = diff_frame(session, a, b, AssignmentPair.reviewer_id, page_ids)
    names = lookup(session, a.venue_id, list(rows["paper_id"]), page_ids)
    items = []
    for reviewer_id, group in rows.groupby("reviewer_id", sort=True):

        def listed(kind: str, column: str, g: pd.DataFrame = group) -> list[dict[str, Any]]:
            part = g[g["change"] == kind].sort_values(column, ascending=False)
            return [
                {"paper_id": p, "paper_title": names.title(p), "score": float(s)}
                for p, s in part[["paper_id", column]].itertuples(index=False)
            ]

        items.append(
            {
                "reviewer_id": reviewer_id,
                "reviewer_name": names.name(str(reviewer_id)),
                "load_a": int(group["score_a"].notna().sum()),
                "load_b": int(group["score_b"].notna().sum()),
                "added": listed("added", "score_b"),
                "removed": listed("removed", "score_a"),
            }
        )
    return {"items": items, "total": total, "limit": limit, "offset": offset}


# ---- two runs the caller may see, by id ----------------------------------------------------


def _runs(
    session: Session, venue_id: str, base_id: int, other_id: int, principal: Principal
) -> tuple[AssignmentRow, AssignmentRow]:
    """Both runs, if both belong to the venue and the caller may see them (404 otherwise)."""
    return (
        require_assignment(session, venue_id, base_id, principal),
        require_assignment(session, venue_id, other_id, principal),
    )


def compare_summary(
    session: Session, venue_id: str, base_id: int, other_id: int, principal: Principal
) -> dict[str, Any]:
    """:func:`summary` of two runs (``CompareOut``)."""
    return summary(session, *_runs(session, venue_id, base_id, other_id, principal))


def compare_pairs(
    session: Session,
    venue_id: str,
    base_id: int,
    other_id: int,
    principal: Principal,
    *,
    change: str,
    limit: int,
    offset: int,
) -> dict[str, Any]:
    """:func:`pair_changes` of two runs."""
    a, b = _runs(session, venue_id, base_id, other_id, principal)
    return pair_changes(session, a, b, change, limit, offset)


def compare_papers(
    session: Session,
    venue_id: str,
    base_id: int,
    other_id: int,
    principal: Principal,
    *,
    limit: int,
    offset: int,
) -> dict[str, Any]:
    """:func:`paper_changes` of two runs."""
    a, b = _runs(session, venue_id, base_id, other_id, principal)
    return paper_changes(session, a, b, limit, offset)


def compare_reviewers(
    session: Session,
    venue_id: str,
    base_id: int,
    other_id: int,
    principal: Principal,
    *,
    limit: int,
    offset: int,
) -> dict[str, Any]:
    """:func:`reviewer_changes` of two runs."""
    a, b = _runs(session, venue_id, base_id, other_id, principal)
    return reviewer_changes(session, a, b, limit, offset)
