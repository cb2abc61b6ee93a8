"""Re-optimise some papers of a run and keep the rest, as a new draft.

The chosen papers' pairs are solved again by the flow solver (:func:`
reviewer_recommender.services.repairs.solve_papers`): each paper gets its demand from the
pairs nothing but a limit stops (the one rule), each reviewer's room is their max load less
their load on the papers kept, the run's pins hold. Every other pair is copied as it is, with
the run's own rules; the new draft says what it derives from and what changed."""

from __future__ import annotations

from typing import Any

import pandas as pd
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import InvalidRequest, StateConflict
from reviewer_recommender.services.draft_rules import copy_rules, run_limits
from reviewer_recommender.services.publishing import edited_summary
from reviewer_recommender.services.repairs import Draft, neighbourhood_table, solve_papers
from reviewer_recommender.storage.models import AssignmentPair, AssignmentRow, SubmissionRow
from reviewer_recommender.storage.repository import add_numbered, audit

MAX_PAPERS = 500


def reoptimise(
    session: Session, row: AssignmentRow, paper_ids: list[str], actor: str, name: str = ""
) -> tuple[AssignmentRow, dict[str, Any]]:
    """The new draft (added to ``session``, not committed) and what changed: ``papers``,
    ``added``, ``removed``, ``objective_change`` (on those papers; the rest is unchanged)."""
    papers = list(dict.fromkeys(paper_ids))
    if not papers or len(papers) > MAX_PAPERS:
        raise InvalidRequest(
            "validation_error",
            f"name between 1 and {MAX_PAPERS} papers to re-optimise",
            field="paper_ids",
        )
    known = set(
        session.scalars(
            select(SubmissionRow.id).where(
                SubmissionRow.venue_id == row.venue_id, SubmissionRow.id.in_(papers)
            )
        )
    )
    unknown = [p for p in papers if p not in known]
    if unknown:
        raise InvalidRequest(
            "validation_error", f"unknown papers: {', '.join(unknown[:10])}", field="paper_ids"
        )
    draft = Draft.read(session, row)
    limits = run_limits(session, row)
    table = neighbourhood_table(session, row, draft, papers)
    demand = pd.Series([limits.demand_of(p) for p in papers], index=papers)
    new = solve_papers(draft, limits, table, papers, demand)
    if new is None:
        raise StateConflict(
            "infeasible",
            f"the {len(papers)} papers cannot all get their reviewers while the rest of run "
            f"{row.id} stays: widen the choice, or raise quotas",
        )
    inside = draft.pairs["paper_id"].isin(papers)
    old = draft.pairs.loc[inside]
    before = set(zip(old["paper_id"], old["reviewer_id"], strict=True))
    after = set(zip(new["paper_id"], new["reviewer_id"], strict=True))
    label = f"#{row.number}" if row.number is not None else f"run {row.id}"
    created = add_numbered(
        session,
        AssignmentRow,
        row.venue_id,
        lambda number: AssignmentRow(
            venue_id=row.venue_id,
            number=number,
            name=name or f"{label}, {len(papers)} papers re-optimised",
            derived_from={
                "kind": "re-optimise",
                "assignment_id": row.id,
                "assignment_number": row.number,
                "papers": papers[:50],
                "text": f"re-optimisation of {len(papers)} papers of {label} (the rest kept)",
            },
            job_id=None,
            affinity_run_id=row.affinity_run_id,
            state="draft",
            pool=row.pool,
            parameters=dict(row.parameters or {}),
            summary=dict(row.summary or {}),
        ),
    )
    pinned = draft.pinned
    kept = draft.pairs.loc[~inside]
    records = [
        {
            "assignment_id": created.id,
            "paper_id": str(p),
            "reviewer_id": str(r),
            "score": float(s),
            "pinned": bool(flag),
        }
        for p, r, s, flag in zip(
            kept["paper_id"], kept["reviewer_id"], kept["score"], kept["pinned"], strict=True
        )
    ] + [
        {
            "assignment_id": created.id,
            "paper_id": str(p),
            "reviewer_id": str(r),
            "score": float(s),
            "pinned": (p, r) in pinned,
        }
        for p, r, s in zip(new["paper_id"], new["reviewer_id"], new["score"], strict=True)
    ]
    if records:
        session.execute(insert(AssignmentPair), records)
    copy_rules(session, row.id, created.id)
    session.flush()
    created.summary = edited_summary(session, created, tightening=False)
    change = float(new["score"].sum()) - float(old["score"].sum())
    outcome = {
        "papers": len(papers),
        "added": len(after - before),
        "removed": len(before - after),
        "objective_change": change,
    }
    audit(
        session,
        row.venue_id,
        actor,
        "assignment.reoptimise",
        assignment_id=created.id,
        derived_from=row.id,
        **outcome,
    )
    return created, outcome
