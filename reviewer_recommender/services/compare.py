"""Two runs compared pair by pair: which pairs one has and the other lacks, by paper and by
reviewer, and the summary. Run ``a`` is the base: "added" pairs are in ``b`` only,
"removed" pairs in ``a`` only."""

from __future__ import annotations

from typing import Any

import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from reviewer_recommender.services.assignment import json_safe
from reviewer_recommender.services.runs import require_assignment
from reviewer_recommender.services.tokens import Principal
from reviewer_recommender.storage.frames import rows_frame
from reviewer_recommender.storage.models import AssignmentPair, AssignmentRow
from reviewer_recommender.storage.names import lookup


def _pairs(session: Session, row: AssignmentRow) -> pd.DataFrame:
    return rows_frame(
        session.execute(
            select(AssignmentPair.paper_id, AssignmentPair.reviewer_id, AssignmentPair.score).where(
                AssignmentPair.assignment_id == row.id
            )
        ).all(),
        columns=["paper_id", "reviewer_id", "score"],
    )


def diff_frame(session: Session, a: AssignmentRow, b: AssignmentRow) -> pd.DataFrame:
    """Every pair of either run: ``score_a``, ``score_b`` (NaN where absent) and ``change``
    (``shared``, ``added``, ``removed``), sorted by paper then reviewer."""
    merged = _pairs(session, a).merge(
        _pairs(session, b),
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


def _brief(row: AssignmentRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "number": row.number,
        "name": row.name,
        "state": row.state,
        "version": row.version,
    }


def summary(session: Session, a: AssignmentRow, b: AssignmentRow) -> dict[str, Any]:
    frame = diff_frame(session, a, b)
    changed = frame[frame["change"] != "shared"]
    score_a, score_b = frame["score_a"].dropna(), frame["score_b"].dropna()
    return json_safe(
        {
            "a": _brief(a),
            "b": _brief(b),
            "pairs_a": len(score_a),
            "pairs_b": len(score_b),
            "shared": int((frame["change"] == "shared").sum()),
            "added": int((frame["change"] == "added").sum()),
            "removed": int((frame["change"] == "removed").sum()),
            "papers_changed": int(changed["paper_id"].nunique()),
            "reviewers_changed": int(changed["reviewer_id"].nunique()),
            "objective_a": float(score_a.sum()),
            "objective_b": float(score_b.sum()),
            "objective_change": float(score_b.sum() - score_a.sum()),
            "mean_score_a": float(score_a.mean()) if len(score_a) else None,
            "mean_score_b": float(score_b.mean()) if len(score_b) else None,
        }
    )


def pair_changes(
    session: Session, a: AssignmentRow, b: AssignmentRow, change: str, limit: int, offset: int
) -> dict[str, Any]:
    """Pairs in one run only (``change``: added, removed or all), by paper then reviewer."""
    frame = diff_frame(session, a, b)
    wanted = ("added", "removed") if change == "all" else (change,)
    frame = frame[frame["change"].isin(wanted)]
    page = frame.iloc[offset : offset + limit]
    names = lookup(session, a.venue_id, list(page["paper_id"]), list(page["reviewer_id"]))
    items = [
        {
            "paper_id": p,
            "paper_title": names.title(p),
            "reviewer_id": r,
            "reviewer_name": names.name(r),
            "change": c,
            "score": float(sb if c == "added" else sa),
        }
        for p, r, sa, sb, c in page[
            ["paper_id", "reviewer_id", "score_a", "score_b", "change"]
        ].itertuples(index=False)
    ]
    return {"items": items, "total": len(frame), "limit": limit, "offset": offset}


def paper_changes(
    session: Session, a: AssignmentRow, b: AssignmentRow, limit: int, offset: int
) -> dict[str, Any]:
    """Papers whose reviewers differ: who joined, who left, how many stayed."""
    frame = diff_frame(session, a, b)
    changed = sorted(set(frame.loc[frame["change"] != "shared", "paper_id"]))
    page_ids = changed[offset : offset + limit]
    rows = frame[frame["paper_id"].isin(page_ids)]
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
    return {"items": items, "total": len(changed), "limit": limit, "offset": offset}


def reviewer_changes(
    session: Session, a: AssignmentRow, b: AssignmentRow, limit: int, offset: int
) -> dict[str, Any]:
    """Reviewers whose papers differ: load in each run, papers gained and lost."""
    frame = diff_frame(session, a, b)
    changed = sorted(set(frame.loc[frame["change"] != "shared", "reviewer_id"]))
    page_ids = changed[offset : offset + limit]
    rows = frame[frame["reviewer_id"].isin(page_ids)]
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
    return {"items": items, "total": len(changed), "limit": limit, "offset": offset}


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
