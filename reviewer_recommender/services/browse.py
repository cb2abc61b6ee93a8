"""Read-only views of a run for the chair page: the edge browser (a paper's or a reviewer's
assigned and candidate pairs), per-paper and per-reviewer statistics, the score histogram
of the assigned pairs, and bids (overview, assignments by bid value).

Candidates are the stored scores of the run's affinity run. ``marks`` (bids, conflict
reasons, forbids, and whether a pair can be added — the one rule of
:func:`reviewer_recommender.services.pair_rules.addition_obstacles` — which would reveal a
conflict) follow :func:`reviewer_recommender.services.visibility.sees_marks`: null for
viewers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

import numpy as np
import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from reviewer_recommender.services.assignment import json_safe
from reviewer_recommender.services.draft_rules import lifted_pins, own_pairs
from reviewer_recommender.services.edit_effects import paper_counts, reviewer_loads
from reviewer_recommender.services.pair_rules import addition_obstacles
from reviewer_recommender.services.runs import run_limits
from reviewer_recommender.storage.frames import rows_frame
from reviewer_recommender.storage.models import (
    AffinityScore,
    AssignmentPair,
    AssignmentRow,
    Bid,
    Pin,
)
from reviewer_recommender.storage.names import lookup
from reviewer_recommender.storage.repository import pair_marks

Pair = tuple[str, str]


def _pinned(session: Session, venue_id: str, pairs: Sequence[Pair]) -> set[Pair]:
    """Which of ``pairs`` are pinned at venue level."""
    wanted = set(pairs)
    if not wanted:
        return set()
    papers = sorted({p for p, _ in wanted})
    reviewers = sorted({r for _, r in wanted})
    return {
        (p, r)
        for p, r in session.execute(
            select(Pin.paper_id, Pin.reviewer_id).where(
                Pin.venue_id == venue_id, Pin.paper_id.in_(papers), Pin.reviewer_id.in_(reviewers)
            )
        )
    } & wanted


def _edge_frame(assigned: list[Any], candidates: list[Any], key: str) -> pd.DataFrame:
    """Assigned pairs first (best score first), then the stored candidates not assigned."""
    taken = pd.DataFrame(assigned, columns=[key, "score", "pinned"]).assign(assigned=True)
    rest = pd.DataFrame(candidates, columns=[key, "score"]).assign(assigned=False, pinned=False)
    rest = rest[~rest[key].isin(set(taken[key]))]
    frame = pd.concat(
        [
            taken.sort_values(["score", key], ascending=[False, True], kind="stable"),
            rest.sort_values(["score", key], ascending=[False, True], kind="stable"),
        ],
        ignore_index=True,
    )
    return frame


def _filtered(frame: pd.DataFrame, which: str) -> pd.DataFrame:
    if which == "assigned":
        return frame[frame["assigned"]]
    if which == "candidates":
        return frame[~frame["assigned"]]
    return frame


def _edges(
    session: Session,
    row: AssignmentRow,
    pairs: list[Pair],
    page: pd.DataFrame,
    *,
    marks: bool,
) -> list[dict[str, Any]]:
    venue_id = row.venue_id
    limits = run_limits(session, row)
    papers = sorted({p for p, _ in pairs})
    reviewers = sorted({r for _, r in pairs})
    loads = reviewer_loads(session, row, reviewers)
    counts = paper_counts(session, row, papers)
    names = lookup(session, venue_id, papers, reviewers)
    pins = (_pinned(session, venue_id, pairs) - lifted_pins(session, row.id)) | own_pairs(
        session, row, "pin", pairs
    )
    conflicts, bids = pair_marks(session, venue_id, pairs) if marks else ({}, {})
    # whether a pair can be added would reveal a conflict: chairs only, as the marks
    obstacles = addition_obstacles(session, row, pairs) if marks else {}
    edges = []
    for (p, r), (_, item) in zip(pairs, page.iterrows(), strict=True):
        reasons = conflicts.get((p, r), [])
        found = obstacles.get((p, r), [])
        assigned = bool(item["assigned"])
        edges.append(
            {
                "paper_id": p,
                "paper_title": names.title(p),
                "reviewer_id": r,
                "reviewer_name": names.name(r),
                "score": None if pd.isna(item["score"]) else float(item["score"]),
                "assigned": assigned,
                "pinned": bool(item["pinned"]) or (p, r) in pins,
                "forbidden": any(o.kind == "forbid" for o in found) if marks else None,
                "bid": bids.get((p, r)) if marks else None,
                "conflict": reasons if marks else None,
                "reviewer_load": loads[r],
                "reviewer_max_load": limits.max_of(r),
                "paper_assigned": counts[p],
                "paper_demand": limits.demand_of(p),
                "can_add": not found if marks else None,
                "explanation_url": f"/venues/{quote(venue_id)}/affinity/pairs/"
                f"{quote(p, safe='')}/{quote(r, safe='')}",
            }
        )
    return edges


def paper_edges(
    session: Session,
    row: AssignmentRow,
    paper_id: str,
    which: str,
    limit: int,
    offset: int,
    *,
    marks: bool,
) -> dict[str, Any]:
    """A paper's assigned reviewers and candidates (``PaperEdgesOut``)."""
    assigned = session.execute(
        select(AssignmentPair.reviewer_id, AssignmentPair.score, AssignmentPair.pinned).where(
            AssignmentPair.assignment_id == row.id, AssignmentPair.paper_id == paper_id
        )
    ).all()
    candidates = (
        session.execute(
            select(AffinityScore.reviewer_id, AffinityScore.score).where(
                AffinityScore.run_id == row.affinity_run_id, AffinityScore.paper_id == paper_id
            )
        ).all()
        if row.affinity_run_id is not None
        else []
    )
    frame = _filtered(_edge_frame(list(assigned), list(candidates), "reviewer_id"), which)
    page = frame.iloc[offset : offset + limit]
    pairs = [(paper_id, str(r)) for r in page["reviewer_id"]]
    limits = run_limits(session, row)
    return {
        "paper": {
            "id": paper_id,
            "title": lookup(session, row.venue_id, [paper_id]).title(paper_id),
            "demand": limits.demand_of(paper_id),
            "assigned": len(assigned),
        },
        "items": _edges(session, row, pairs, page, marks=marks),
        "total": len(frame),
        "limit": limit,
        "offset": offset,
    }


def reviewer_edges(
    session: Session,
    row: AssignmentRow,
    reviewer_id: str,
    which: str,
    limit: int,
    offset: int,
    *,
    marks: bool,
) -> dict[str, Any]:
    """A reviewer's assigned papers and candidate papers (``ReviewerEdgesOut``)."""
    assigned = session.execute(
        select(AssignmentPair.paper_id, AssignmentPair.score, AssignmentPair.pinned).where(
            AssignmentPair.assignment_id == row.id, AssignmentPair.reviewer_id == reviewer_id
        )
    ).all()
    candidates = (
        session.execute(
            select(AffinityScore.paper_id, AffinityScore.score).where(
                AffinityScore.run_id == row.affinity_run_id,
                AffinityScore.reviewer_id == reviewer_id,
            )
        ).all()
        if row.affinity_run_id is not None
        else []
    )
    frame = _filtered(_edge_frame(list(assigned), list(candidates), "paper_id"), which)
    page = frame.iloc[offset : offset + limit]
    pairs = [(str(p), reviewer_id) for p in page["paper_id"]]
    limits = run_limits(session, row)
    return {
        "reviewer": {
            "id": reviewer_id,
            "name": lookup(session, row.venue_id, (), [reviewer_id]).name(reviewer_id),
            "load": len(assigned),
            "min_load": limits.min_of(reviewer_id),
            "max_load": limits.max_of(reviewer_id),
        },
        "items": _edges(session, row, pairs, page, marks=marks),
        "total": len(frame),
        "limit": limit,
        "offset": offset,
    }


# ---- statistics -----------------------------------------------------------------------------


def _run_pairs(session: Session, row: AssignmentRow) -> pd.DataFrame:
    return rows_frame(
        session.execute(
            select(AssignmentPair.paper_id, AssignmentPair.reviewer_id, AssignmentPair.score).where(
                AssignmentPair.assignment_id == row.id
            )
        ).all(),
        columns=["paper_id", "reviewer_id", "score"],
    )


def _ids(session: Session, model: Any, venue_id: str) -> list[str]:
    return [str(i) for i in session.scalars(select(model.id).where(model.venue_id == venue_id))]


def _page(frame: pd.DataFrame, sort: str, descending: bool, key: str) -> pd.DataFrame:
    columns = [sort, key] if sort != key else [key]
    ascending = [not descending, True] if sort != key else [not descending]
    return frame.sort_values(columns, ascending=ascending, na_position="last", kind="stable")


def paper_stats(
    session: Session,
    row: AssignmentRow,
    *,
    below_demand: bool,
    sort: str,
    descending: bool,
    limit: int,
    offset: int,
) -> dict[str, Any]:
    """Per paper (per area chair in a senior area chairs' run): demand, assigned, missing,
    min and mean score (``Page[PaperStatOut]``)."""
    from reviewer_recommender.services.hierarchy import run_items

    venue_id = row.venue_id
    paper_ids = run_items(session, row)
    pairs = _run_pairs(session, row)
    limits = run_limits(session, row)
    frame = (
        pairs.groupby("paper_id")["score"]
        .agg(["size", "min", "mean"])
        .reindex(pd.Index(paper_ids, name="paper_id"))
        .rename(columns={"size": "assigned", "min": "min_score", "mean": "mean_score"})
        .reset_index()
    )
    frame["assigned"] = frame["assigned"].fillna(0).astype(np.int64)
    frame["demand"] = limits.demand_array(paper_ids)
    frame["missing"] = np.maximum(0, frame["demand"] - frame["assigned"])
    if below_demand:
        frame = frame[frame["assigned"] < frame["demand"]]
    if sort == "title":
        titles = lookup(session, venue_id, paper_ids)
        frame = frame.assign(title=[titles.title(p).casefold() for p in frame["paper_id"]])
    ordered = _page(frame, sort, descending, "paper_id")
    page = ordered.iloc[offset : offset + limit]
    names = lookup(session, venue_id, list(page["paper_id"]))
    items = [
        json_safe(
            {
                "paper_id": p,
                "paper_title": names.title(p),
                "demand": int(rec.demand),
                "assigned": int(rec.assigned),
                "missing": int(rec.missing),
                "min_score": float(rec.min_score),
                "mean_score": float(rec.mean_score),
            }
        )
        for p, rec in zip(page["paper_id"], page.itertuples(index=False), strict=True)
    ]
    return {"items": items, "total": len(frame), "limit": limit, "offset": offset}


def reviewer_stats(
    session: Session,
    row: AssignmentRow,
    *,
    which: str,
    sort: str,
    descending: bool,
    limit: int,
    offset: int,
    chair: bool,
) -> dict[str, Any]:
    """Per reviewer: load against min and max load (quota), slack, mean score
    (``Page[ReviewerLoadOut]``); ``which``: all, over (above max), under (below min),
    unassigned, full (at max)."""
    from reviewer_recommender.services.limits import stored_max_loads
    from reviewer_recommender.services.pools import pool_person_ids

    venue_id = row.venue_id
    reviewer_ids = pool_person_ids(session, venue_id, row.pool)
    pairs = _run_pairs(session, row)
    limits = run_limits(session, row)
    frame = (
        pairs.groupby("reviewer_id")["score"]
        .agg(["size", "mean"])
        .reindex(pd.Index(reviewer_ids, name="reviewer_id"))
        .rename(columns={"size": "load", "mean": "mean_score"})
        .reset_index()
    )
    frame["load"] = frame["load"].fillna(0).astype(np.int64)
    frame["max_load"] = limits.max_array(reviewer_ids)
    frame["min_load"] = limits.min_array(reviewer_ids)
    frame["slack"] = frame["max_load"] - frame["load"]
    masks = {
        "over": frame["load"] > frame["max_load"],
        "under": frame["load"] < frame["min_load"],
        "unassigned": frame["load"] == 0,
        "full": frame["load"] >= frame["max_load"],
    }
    if which in masks:
        frame = frame[masks[which]]
    if sort == "name":
        names_all = lookup(session, venue_id, (), reviewer_ids)
        frame = frame.assign(name=[names_all.name(r).casefold() for r in frame["reviewer_id"]])
    ordered = _page(frame, sort, descending, "reviewer_id")
    page = ordered.iloc[offset : offset + limit]
    names = lookup(session, venue_id, (), list(page["reviewer_id"]))
    stored = stored_max_loads(session, venue_id, row.pool) if chair else {}
    items = [
        json_safe(
            {
                "reviewer_id": r,
                "reviewer_name": names.name(r),
                "load": int(rec.load),
                "min_load": int(rec.min_load),
                "max_load": int(rec.max_load),
                "stored_max_load": stored.get(r),
                "draft_max_load": limits.draft_max_load.get(r) if chair else None,
                "slack": int(rec.slack),
                "mean_score": float(rec.mean_score),
            }
        )
        for r, rec in zip(page["reviewer_id"], page.itertuples(index=False), strict=True)
    ]
    return {"items": items, "total": len(frame), "limit": limit, "offset": offset}


def score_histogram(session: Session, row: AssignmentRow, bins: int) -> dict[str, Any]:
    """Histogram of the assigned pairs' scores: ``bins`` equal bins from min to max."""
    scores = np.array(
        session.scalars(
            select(AssignmentPair.score).where(AssignmentPair.assignment_id == row.id)
        ).all(),
        dtype=np.float64,
    )
    scores = scores[np.isfinite(scores)]
    if scores.size == 0:
        return {"count": 0, "min": None, "max": None, "mean": None, "edges": [], "counts": []}
    low, high = float(scores.min()), float(scores.max())
    counts, edges = np.histogram(scores, bins=bins, range=(low, high if high > low else low + 1))
    return {
        "count": int(scores.size),
        "min": low,
        "max": high,
        "mean": float(scores.mean()),
        "edges": [float(e) for e in edges],
        "counts": [int(c) for c in counts],
    }


def _label_order(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(["bid", "label"], ascending=[False, True], na_position="last")


def bid_overview(session: Session, venue_id: str) -> dict[str, Any]:
    """Counts per bid value over the venue's bids (``BidOverviewOut``)."""
    rows = session.execute(
        select(Bid.label, func.max(Bid.bid), func.count())
        .where(Bid.venue_id == venue_id)
        .group_by(Bid.label)
    ).all()
    frame = _label_order(rows_frame(rows, columns=["label", "bid", "count"]))
    total = int(frame["count"].sum()) if len(frame) else 0
    papers = session.scalar(
        select(func.count(func.distinct(Bid.paper_id))).where(Bid.venue_id == venue_id)
    )
    reviewers = session.scalar(
        select(func.count(func.distinct(Bid.reviewer_id))).where(Bid.venue_id == venue_id)
    )
    return {
        "total": total,
        "papers": int(papers or 0),
        "reviewers": int(reviewers or 0),
        "by_label": [
            {"label": str(label), "bid": _finite(bid), "count": int(count)}
            for label, bid, count in frame.itertuples(index=False)
        ],
    }


def _finite(value: Any) -> float | None:
    return float(value) if value is not None and np.isfinite(float(value)) else None


def assignment_bids(session: Session, row: AssignmentRow) -> dict[str, Any]:
    """The run's assigned pairs by the reviewer's bid on them (``AssignmentBidsOut``)."""
    pairs = int(
        session.scalar(select(func.count()).where(AssignmentPair.assignment_id == row.id)) or 0
    )
    rows = session.execute(
        select(Bid.label, func.max(Bid.bid), func.count())
        .join(
            AssignmentPair,
            (AssignmentPair.paper_id == Bid.paper_id)
            & (AssignmentPair.reviewer_id == Bid.reviewer_id),
        )
        .where(Bid.venue_id == row.venue_id, AssignmentPair.assignment_id == row.id)
        .group_by(Bid.label)
    ).all()
    frame = _label_order(rows_frame(rows, columns=["label", "bid", "assigned"]))
    with_bid = int(frame["assigned"].sum()) if len(frame) else 0
    return {
        "pairs": pairs,
        "by_label": [
            {"label": str(label), "bid": _finite(bid), "assigned": int(count)}
            for label, bid, count in frame.itertuples(index=False)
        ],
        "no_bid": pairs - with_bid,
    }
