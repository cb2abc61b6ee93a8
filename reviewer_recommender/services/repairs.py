"""Repairs that improve a paper of a draft: for each better candidate reviewer, the exact
rearrangement of a small neighbourhood of papers that brings them in, with its cost
elsewhere; applying one as a single undoable change; and "re-optimise these papers, keep
the rest" as a new draft.

A candidate ``c`` of paper ``t`` (scored, not assigned to it, nothing but a limit stopping
the pair: :func:`reviewer_recommender.services.pair_rules.addition_obstacles`) whose score
beats the paper's weakest unpinned reviewer may be at their quota. The neighbourhood is
``t`` and the papers ``c``'s reviewing; every other pair of the draft stays, so each
reviewer's capacity there is their max load less their load elsewhere. The flow solver
(:class:`matching.FlowSolver`) then finds the best assignment of the neighbourhood with
``(t, c)`` forced and every paper keeping its number of reviewers: a swap chain across the
papers (``c`` leaves a paper, someone with room takes their place there, ...). The repair
lists every pair it moves and the exact score change on ``t`` and elsewhere; its net change
is never hidden. A candidate who fits nowhere is offered over their quota (the edit's
``force``, with its warning), never silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from matching import AssignmentProblem, FlowSolver, Infeasible
from reviewer_recommender.errors import InvalidRequest, StateConflict
from reviewer_recommender.services.draft_pairs import Draft, allowed
from reviewer_recommender.services.draft_rules import run_limits
from reviewer_recommender.storage.models import AffinityScore, AssignmentPair, AssignmentRow
from reviewer_recommender.storage.names import lookup
from reviewer_recommender.storage.repository import require_paper

Pair = tuple[str, str]
CANDIDATES = 8  # better candidates tried per paper
NEIGHBOURHOOD = 60  # papers at most in one re-solve
HOP = 5  # best-scored reviewers of each paper a chain may pass through


SCORE_COLUMNS = ["paper_id", "reviewer_id", "score"]


def _scores(session: Session, row: AssignmentRow, papers: Sequence[str]) -> pd.DataFrame:
    """The stored scores of ``papers``, each paper's read once per :func:`find_repairs`."""
    cache: dict[str, list[Any]] = session.info.setdefault(("repair-scores", row.id), {})
    missing = [p for p in dict.fromkeys(papers) if p not in cache]
    if row.affinity_run_id is not None:
        for start in range(0, len(missing), 500):
            chunk = missing[start : start + 500]
            for p in chunk:
                cache[p] = []
            for p, r, s in session.execute(
                select(
                    AffinityScore.paper_id, AffinityScore.reviewer_id, AffinityScore.score
                ).where(
                    AffinityScore.run_id == row.affinity_run_id,
                    AffinityScore.paper_id.in_(chunk),
                )
            ):
                cache[p].append((p, r, s))
    found = [item for p in dict.fromkeys(papers) for item in cache.get(p, [])]
    return pd.DataFrame(found, columns=SCORE_COLUMNS)


def neighbourhood_table(
    session: Session, row: AssignmentRow, draft: Draft, papers: list[str]
) -> pd.DataFrame:
    """The pairs ``papers`` may have: those the draft holds, and the scored pairs nothing
    but a limit stops."""
    draft.add_papers(papers)
    table = allowed(session, row, _scores(session, row, papers), draft)
    held = draft.pairs[draft.pairs["paper_id"].isin(papers)][["paper_id", "reviewer_id", "score"]]
    return (
        pd.concat([held, table], ignore_index=True)
        .drop_duplicates(["paper_id", "reviewer_id"])
        .reset_index(drop=True)
    )


def _solve(
    draft: Draft, limits: Any, table: pd.DataFrame, papers: list[str], forced: Pair
) -> pd.DataFrame | None:
    """The best pairs of ``papers`` with ``forced`` in, every paper keeping its number of
    reviewers (the target its demand if it is short), the rest of the draft unchanged;
    None if there is no such assignment."""
    inside = draft.pairs["paper_id"].isin(papers)
    counts = draft.pairs.loc[inside].groupby("paper_id").size().reindex(papers, fill_value=0)
    target = forced[0]
    demand = counts.copy()
    demand[target] = max(
        int(counts[target]), min(limits.demand_of(target), int(counts[target]) + 1)
    )
    return solve_papers(draft, limits, table, papers, demand, [forced])


def solve_papers(
    draft: Draft,
    limits: Any,
    table: pd.DataFrame,
    papers: list[str],
    demand: pd.Series,
    forced: Sequence[Pair] = (),
) -> pd.DataFrame | None:
    """The best pairs of ``papers`` (rows of ``table``) with their ``demand``, the draft's
    pins and ``forced`` in, every other pair of the draft unchanged (each reviewer's room:
    their max load less their load on other papers); None if there is none."""
    draft.add_papers(papers)
    inside = draft.pairs["paper_id"].isin(papers)
    inside_load = draft.pairs.loc[inside].groupby("reviewer_id").size()
    reviewers = sorted(set(table["reviewer_id"]))
    outside_load = draft.loads_of(reviewers) - inside_load.reindex(reviewers, fill_value=0)
    room = pd.Series(limits.max_array(reviewers), index=reviewers) - outside_load
    rows = set(zip(table["paper_id"].tolist(), table["reviewer_id"].tolist(), strict=True))
    pins = [pair for pair in draft.pinned if pair in rows]
    forced_rows = pd.DataFrame(
        [*pins, *forced], columns=["paper_id", "reviewer_id"]
    ).drop_duplicates()
    try:
        problem = AssignmentProblem.from_pairs(
            table["paper_id"],
            table["reviewer_id"],
            table["score"],
            demand=demand.reindex(papers),
            max_load=room.clip(lower=0),
            forced=forced_rows,
            paper_ids=papers,
            reviewer_ids=reviewers,
            unknown_ids="ignore",
        )
        solved = FlowSolver().solve(problem)
    except (Infeasible, ValueError):
        return None
    chosen = solved.selected
    return pd.DataFrame(
        {
            "paper_id": np.asarray(problem.paper_ids, dtype=object)[problem.pair_paper[chosen]],
            "reviewer_id": np.asarray(problem.reviewer_ids, dtype=object)[
                problem.pair_reviewer[chosen]
            ],
            "score": problem.pair_score[chosen],
        }
    )


def _repair(draft: Draft, target: str, old: pd.DataFrame, new: pd.DataFrame) -> dict[str, Any]:
    """The moves from ``old`` to ``new`` (pairs of the neighbourhood) and their score change
    on ``target`` and elsewhere."""
    before = set(zip(old["paper_id"], old["reviewer_id"], strict=True))
    after = set(zip(new["paper_id"], new["reviewer_id"], strict=True))
    score_of = {
        **dict(
            zip(zip(old["paper_id"], old["reviewer_id"], strict=True), old["score"], strict=True)
        ),
        **dict(
            zip(zip(new["paper_id"], new["reviewer_id"], strict=True), new["score"], strict=True)
        ),
    }
    removed = sorted(before - after)
    added = sorted(after - before)
    on_target = sum(score_of[k] for k in added if k[0] == target) - sum(
        score_of[k] for k in removed if k[0] == target
    )
    elsewhere = sum(score_of[k] for k in added if k[0] != target) - sum(
        score_of[k] for k in removed if k[0] != target
    )
    return {
        "added": [
            {"paper_id": p, "reviewer_id": r, "score": float(score_of[(p, r)])} for p, r in added
        ],
        "removed": [
            {"paper_id": p, "reviewer_id": r, "score": float(score_of[(p, r)])} for p, r in removed
        ],
        "paper_change": float(on_target),
        "elsewhere_change": float(elsewhere),
        "net_change": float(on_target + elsewhere),
        "papers_touched": len({p for p, _ in [*added, *removed]}),
    }


def _neighbourhoods(
    session: Session, row: AssignmentRow, draft: Draft, paper_id: str, candidates: list[str]
) -> dict[str, list[str]]:
    """For each candidate, the papers a swap chain bringing them to ``paper_id`` may touch:
    the paper, the papers the candidate reviews, the papers of those papers' best-scored
    reviewers (a chain through them), and the papers of ``paper_id``'s own reviewers (where
    a displaced reviewer may go), at most :data:`NEIGHBOURHOOD`."""
    mine = sorted(draft.pairs.loc[draft.pairs["paper_id"] == paper_id, "reviewer_id"])
    by_reviewer = draft.papers_of([*candidates, *mine])
    first = {c: [p for p in by_reviewer.get(c, []) if p != paper_id] for c in candidates}
    hop = sorted({p for ps in first.values() for p in ps})
    best = (
        _scores(session, row, hop)
        .sort_values(["paper_id", "score", "reviewer_id"], ascending=[True, False, True])
        .groupby("paper_id")
        .head(HOP)
    )
    by_reviewer.update(draft.papers_of(set(best["reviewer_id"]) - set(by_reviewer)))
    next_of = best.groupby("paper_id")["reviewer_id"].agg(list).to_dict()
    around = [p for r in mine for p in by_reviewer.get(r, [])]
    return {
        c: list(
            dict.fromkeys(
                [
                    paper_id,
                    *first[c],
                    *(
                        p
                        for q in first[c]
                        for r in next_of.get(q, [])
                        for p in by_reviewer.get(r, [])
                    ),
                    *around,
                ]
            )
        )[:NEIGHBOURHOOD]
        for c in candidates
    }


def find_repairs(
    session: Session,
    row: AssignmentRow,
    paper_id: str,
    limit: int = CANDIDATES,
    *,
    whole: bool = False,
) -> dict[str, Any]:
    """The better candidates of ``paper_id`` in draft ``row``, each with the exact repair
    that brings them in (``PaperRepairsOut``), best gain on the paper first. Only the pairs
    the repairs touch are read; ``whole``: read the whole draft first (the same answer,
    slower: the benchmark's and the tests' reference)."""
    require_paper(session, row.venue_id, paper_id)
    session.info.pop(("repair-scores", row.id), None)  # scores are read once per call
    draft = Draft.read(session, row, None if whole else [paper_id])
    limits = run_limits(session, row)
    mine = draft.pairs[draft.pairs["paper_id"] == paper_id]
    movable = mine[[(paper_id, r) not in draft.pinned for r in mine["reviewer_id"]]]
    weakest = float(movable["score"].min()) if len(movable) else None
    short = len(mine) < limits.demand_of(paper_id)
    own = allowed(session, row, _scores(session, row, [paper_id]), draft)
    own = own[~own["reviewer_id"].isin(set(mine["reviewer_id"]))]
    if not short:
        own = own[own["score"] > (weakest if weakest is not None else np.inf)]
    own = own.sort_values(["score", "reviewer_id"], ascending=[False, True]).head(limit)
    items = []
    neighbourhoods = _neighbourhoods(session, row, draft, paper_id, list(own["reviewer_id"]))
    # every neighbourhood's pairs read and checked at once
    everything = (
        neighbourhood_table(
            session,
            row,
            draft,
            list(dict.fromkeys(p for ps in neighbourhoods.values() for p in ps)),
        )
        if neighbourhoods
        else pd.DataFrame(columns=["paper_id", "reviewer_id", "score"])
    )
    draft.loads_of(sorted(set(everything["reviewer_id"])))  # every solve's loads at once
    for reviewer_id, score in zip(own["reviewer_id"], own["score"], strict=True):
        papers = neighbourhoods[reviewer_id]
        table = everything[everything["paper_id"].isin(papers)].reset_index(drop=True)
        held = draft.pairs[draft.pairs["paper_id"].isin(papers)][
            ["paper_id", "reviewer_id", "score"]
        ]
        new = _solve(draft, limits, table, papers, (paper_id, reviewer_id))
        load, most = int(draft.loads_of([reviewer_id]).iloc[0]), limits.max_of(reviewer_id)
        item: dict[str, Any] = {
            "reviewer_id": reviewer_id,
            "score": float(score),
            "load": load,
            "max_load": most,
        }
        if new is None:
            # no rearrangement within the quotas: only going over one brings them in
            item.update(
                feasible=False,
                over_quota=True,
                added=[],
                removed=[],
                paper_change=None,
                elsewhere_change=None,
                net_change=None,
                papers_touched=0,
            )
        else:
            item.update(feasible=True, over_quota=False, **_repair(draft, paper_id, held, new))
            if item["paper_change"] <= 1e-12:
                continue
        items.append(item)
    items.sort(key=lambda i: (not i["feasible"], -(i["paper_change"] or 0.0), -i["score"]))
    names = lookup(
        session,
        row.venue_id,
        [paper_id, *(m["paper_id"] for i in items for m in (*i["added"], *i["removed"]))],
        [i["reviewer_id"] for i in items]
        + [m["reviewer_id"] for i in items for m in (*i["added"], *i["removed"])],
    )
    for item in items:
        item["reviewer_name"] = names.name(item["reviewer_id"])
        for move in (*item["added"], *item["removed"]):
            move["paper_title"] = names.title(move["paper_id"])
            move["reviewer_name"] = names.name(move["reviewer_id"])
    return {
        "paper_id": paper_id,
        "paper_title": names.title(paper_id),
        "assigned": len(mine),
        "demand": limits.demand_of(paper_id),
        "weakest_score": weakest,
        "items": items,
        "message": None
        if items
        else "No better candidate: every scored reviewer above the weakest assigned one is "
        "in conflict, excluded by a bid or forbid, or already on the paper",
    }


def repair_changes(
    session: Session, row: AssignmentRow, paper_id: str, reviewer_id: str
) -> dict[str, Any]:
    """The repair of ``paper_id`` that brings ``reviewer_id`` in, as found now; 409
    ``no_repair`` if there is none within the quotas (assign over the quota instead)."""
    found = find_repairs(session, row, paper_id, limit=10_000)
    item = next((i for i in found["items"] if i["reviewer_id"] == reviewer_id), None)
    if item is None:
        raise InvalidRequest(
            "validation_error",
            f"{reviewer_id!r} would not raise the score of {paper_id!r} in draft {row.id}",
            field="reviewer_id",
        )
    if not item["feasible"]:
        raise StateConflict(
            "no_repair",
            f"no rearrangement within the quotas brings {reviewer_id!r} to {paper_id!r}: "
            "assign them over their quota instead (an edit with force)",
            force_allowed=True,
        )
    return item


def apply_pairs(session: Session, row: AssignmentRow, item: dict[str, Any]) -> None:
    """Remove and add the repair's pairs in the draft (scores as found)."""
    for move in item["removed"]:
        pair = session.get(AssignmentPair, (row.id, move["paper_id"], move["reviewer_id"]))
        if pair is not None:
            session.delete(pair)
    session.flush()
    for move in item["added"]:
        session.add(
            AssignmentPair(
                assignment_id=row.id,
                paper_id=move["paper_id"],
                reviewer_id=move["reviewer_id"],
                score=float(move["score"]),
                pinned=False,
            )
        )
    session.flush()
