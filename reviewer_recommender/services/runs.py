"""Assignment runs: finding one the caller may see, listing them, starting a solve (also
with a max-papers file) or a re-solve, naming and publishing a run, and the statistics and
one-paper view of a run (:mod:`reviewer_recommender.services.run_views` serves them with
the caller's visibility)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from pydantic import ValidationError
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import InvalidRequest, NotFound, StateConflict
from reviewer_recommender.jobs.runner import JobRunner
from reviewer_recommender.services import draft_rules
from reviewer_recommender.services.assignment import json_safe
from reviewer_recommender.services.hierarchy import (
    AREA_CHAIRS,
    SENIOR_AREA_CHAIRS,
    area_chair_items,
    live_run_of,
    run_items,
)
from reviewer_recommender.services.limits import (
    Limits,
    contradictions,
    replace_max_loads,
    resolve_limits,
    unknown_ids,
)
from reviewer_recommender.services.params import AssignmentIn, ResolveIn
from reviewer_recommender.services.pools import DEFAULT_POOL, check_pool, pool_person_ids
from reviewer_recommender.services.principals import Principal
from reviewer_recommender.services.publishing import publish
from reviewer_recommender.services.results import PaperAssignmentOut, PaperReviewerOut
from reviewer_recommender.services.visibility import visible_states
from reviewer_recommender.storage.frames import rows_frame
from reviewer_recommender.storage.models import (
    AffinityScore,
    AssignmentPair,
    AssignmentRow,
    Job,
    SubmissionRow,
)
from reviewer_recommender.storage.names import lookup
from reviewer_recommender.storage.repository import (
    Paged,
    audit,
    not_found,
    query_page,
    require_run,
    stale_message,
    start_job,
    unscored_papers,
)


def require_assignment(
    session: Session, venue_id: str, assignment_id: int, principal: Principal
) -> AssignmentRow:
    """The run, if it belongs to the venue and the caller may see it (404 otherwise)."""
    row = session.get(AssignmentRow, assignment_id)
    states = visible_states(principal, venue_id)
    if row is None or row.venue_id != venue_id or (states is not None and row.state not in states):
        raise not_found("assignment", assignment_id)
    return row


def require_draft(
    session: Session, venue_id: str, assignment_id: int, principal: Principal
) -> AssignmentRow:
    row = require_assignment(session, venue_id, assignment_id, principal)
    if row.state != "draft":
        raise StateConflict(
            "not_a_draft",
            f"assignment {assignment_id} is {row.state}; only drafts can be edited "
            "(solve again for a new draft)",
            state=row.state,
        )
    return row


def live_run(session: Session, venue_id: str, pool: str = DEFAULT_POOL) -> AssignmentRow | None:
    """The pool's live run (the reviewers' by default), if one is published."""
    return live_run_of(session, venue_id, pool)


def require_live_run(session: Session, venue_id: str, pool: str = DEFAULT_POOL) -> AssignmentRow:
    """The pool's live run (404 while none is published)."""
    row = live_run(session, venue_id, pool)
    if row is None:
        of_pool = "" if pool == DEFAULT_POOL else f" of pool {pool}"
        raise NotFound(None, f"venue {venue_id!r} has no live assignment{of_pool} yet")
    return row


def list_runs(
    session: Session,
    venue_id: str,
    principal: Principal,
    limit: int,
    offset: int,
    pool: str | None = None,
) -> Paged[AssignmentRow]:
    """The venue's runs the caller may see (of one pool when ``pool`` is given), newest
    first (viewers: the live ones)."""
    query = (
        select(AssignmentRow)
        .where(AssignmentRow.venue_id == venue_id)
        .order_by(AssignmentRow.id.desc())
    )
    if pool is not None:
        query = query.where(AssignmentRow.pool == check_pool(pool))
    states = visible_states(principal, venue_id)
    if states is not None:
        query = query.where(AssignmentRow.state.in_(states))
    return query_page(session, query, limit, offset)


def start_assignment(
    runner: JobRunner,
    session: Session,
    venue_id: str,
    body: AssignmentIn,
    actor: str,
    *,
    derived_from: dict[str, Any] | None = None,
) -> Job:
    """Validate ``body`` against the venue (options, ids, stored limits, capacity) and queue
    the solve job; the caller's pending changes are committed with the job, or rolled back
    with the refusal. 422: an option that cannot act
    (:class:`~reviewer_recommender.services.errors.OptionError` from
    :func:`reviewer_recommender.services.assignment.validate_options`),
    an unknown id, a map contradicting a stored value; 409: no affinities yet, or more reviews
    needed than the reviewers can take (stored demand and max loads counted), or papers
    needing reviewers without scores in the latest affinity run (``stale_affinities``).
    The new run is named by ``body.name``/``body.note``; ``derived_from`` records its
    lineage (a re-solve)."""
    from reviewer_recommender.services.assignment import (
        capacity,
        capacity_shortfall,
        validate_options,
    )

    pool = check_pool(body.pool)
    run = require_run(session, venue_id, pool)
    validate_options(body)
    if body.distinct_institutions and pool != DEFAULT_POOL:
        raise InvalidRequest(
            "invalid_option",
            "distinct_institutions: compares a paper's reviewers with its area chair; solve "
            "the reviewers pool with it",
            field="distinct_institutions",
        )
    parameters = body.solve_parameters()
    unknown = unknown_ids(session, venue_id, parameters)
    if unknown:
        raise InvalidRequest("unknown_ids", "; ".join(unknown[:20]))
    contradicting = contradictions(session, venue_id, parameters)
    if contradicting:
        raise InvalidRequest("contradicts_stored_limit", "; ".join(contradicting[:20]))
    if pool == SENIOR_AREA_CHAIRS:
        _chairs_run, paper_ids = area_chair_items(session, venue_id)
    else:
        paper_ids = list(
            session.scalars(select(SubmissionRow.id).where(SubmissionRow.venue_id == venue_id))
        )
    if body.distinct_institutions and live_run_of(session, venue_id, AREA_CHAIRS) is None:
        raise StateConflict(
            "no_live_area_chair_run",
            "distinct_institutions compares each paper's reviewers with its area chair: "
            "publish an area_chairs run first",
        )
    reviewer_ids = pool_person_ids(session, venue_id, pool)
    # the counting check sees what the solve will: stored rows over the request's maps
    limits = resolve_limits(session, venue_id, parameters)
    resolved = body.model_copy(
        update={"demand": dict(limits.demand), "custom_max_load": dict(limits.max_load)}
    )
    shortfall = capacity_shortfall(resolved, paper_ids, reviewer_ids)
    if shortfall:
        totals = capacity(resolved, paper_ids, reviewer_ids)
        raise StateConflict(
            "over_capacity",
            f"infeasible: {shortfall}",
            demand_total=totals.demand,
            capacity_total=totals.capacity,
            smallest_max_load=totals.smallest_max_load,
        )
    unscored = (
        []
        if pool == SENIOR_AREA_CHAIRS
        else [p for p in unscored_papers(session, venue_id, run.id) if limits.demand_of(p) > 0]
    )
    if unscored:
        raise StateConflict(
            "stale_affinities",
            stale_message(venue_id, run.id, unscored),
            papers=len(unscored),
            affinity_run_id=run.id,
        )
    label = {"name": body.name, "note": body.note, "derived_from": derived_from}
    params = {**parameters, "affinity_run_id": run.id, "run": label}
    return start_job(runner, session, venue_id, "assignment", params, actor)


def solve_with_max_loads(
    runner: JobRunner,
    session: Session,
    venue_id: str,
    body: AssignmentIn,
    max_loads: pd.DataFrame,
    source: str,
    actor: str,
) -> Job:
    """Store ``max_loads`` (a parsed ``reviewer_id, max`` file) as the venue's reviewer max
    loads, replacing them, and queue a solve with ``body``; the file's rows win over
    ``body.custom_max_load`` entries of the same reviewers. Nothing is stored when the file
    names an unknown reviewer or the solve is refused. The loads are the pool's of
    ``body``."""
    stored = replace_max_loads(session, venue_id, max_loads, source, body.pool)
    covered = set(max_loads["reviewer_id"])
    body = body.model_copy(
        update={
            "custom_max_load": {r: m for r, m in body.custom_max_load.items() if r not in covered}
        }
    )
    detail = {} if body.pool == DEFAULT_POOL else {"pool": body.pool}
    audit(
        session,
        venue_id,
        actor,
        "reviewer_max_loads.upload",
        source=source,
        rows=stored,
        **detail,
    )
    return start_assignment(runner, session, venue_id, body, actor)


def label_run(
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    *,
    name: str | None,
    note: str | None,
) -> AssignmentRow:
    """Name a run the caller may see or note something on it (:func:`relabel`)."""
    row = require_assignment(session, venue_id, assignment_id, principal)
    return relabel(session, row, name=name, note=note, actor=principal.name)


def resolve_run(
    runner: JobRunner,
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    body: ResolveIn,
) -> Job:
    """Queue a re-solve of a run the caller may see (:func:`resolve`)."""
    row = require_assignment(session, venue_id, assignment_id, principal)
    return resolve(runner, session, row, body, principal.name)


def deploy_run(
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    *,
    confirmed_id: int,
    version: int,
    overrides: list[tuple[str | None, str | None, str]],
) -> AssignmentRow:
    """Publish a run (:func:`reviewer_recommender.services.publishing.publish`) and commit;
    422 when the confirmation names another run than ``assignment_id``."""
    if confirmed_id != assignment_id:
        raise InvalidRequest(
            None,
            f"the confirmation names assignment {confirmed_id}, but this request "
            f"publishes assignment {assignment_id}",
        )
    row = require_assignment(session, venue_id, assignment_id, principal)
    publish(session, row, version=version, overrides=overrides, actor=principal.name)
    session.commit()
    return row


def relabel(
    session: Session, row: AssignmentRow, *, name: str | None, note: str | None, actor: str
) -> AssignmentRow:
    """Set a run's name and/or note (audited); commits."""
    changes: dict[str, Any] = {}
    if name is not None and name != row.name:
        changes["name"] = {"from": row.name, "to": name}
        row.name = name
    if note is not None and note != row.note:
        changes["note"] = {"from": row.note, "to": note}
        row.note = note
    if changes:
        audit(
            session,
            row.venue_id,
            actor,
            "assignment.label",
            assignment_id=row.id,
            number=row.number,
            **changes,
        )
    session.commit()
    return row


def resolve(
    runner: JobRunner, session: Session, row: AssignmentRow, body: ResolveIn, actor: str
) -> Job:
    """Queue a solve with ``row``'s parameters (or the body's), labelled as its re-solve."""
    parameters = body.parameters
    if parameters is None:
        try:
            parameters = AssignmentIn.model_validate({"pool": row.pool, **(row.parameters or {})})
        except ValidationError as error:
            raise InvalidRequest(
                "invalid_option",
                f"run {row.id}'s stored parameters are not a valid solve any more: {error}; "
                "send parameters",
                field="parameters",
            ) from error
    elif "pool" not in parameters.model_fields_set:
        parameters = parameters.model_copy(update={"pool": row.pool})
    elif parameters.pool != row.pool:
        raise InvalidRequest(
            "invalid_option",
            f"parameters.pool: run {row.id} is a {row.pool} run; a re-solve of it solves the "
            f"same pool, not {parameters.pool} (start a new solve instead)",
            field="parameters.pool",
        )
    parameters = parameters.model_copy(update={"name": body.name, "note": body.note})
    label = f"#{row.number}" if row.number is not None else f"run {row.id}"
    return start_assignment(
        runner,
        session,
        row.venue_id,
        parameters,
        actor,
        derived_from={
            "kind": "re-solve",
            "assignment_id": row.id,
            "assignment_number": row.number,
            "text": f"re-solve of {label}",
        },
    )


def run_limits(session: Session, row: AssignmentRow) -> Limits:
    """The demand and loads ``row`` is held to now (its parameters, its pool's stored
    tables, its own max loads: :func:`reviewer_recommender.services.draft_rules.run_limits`)."""
    return draft_rules.run_limits(session, row)


def assignment_stats(
    session: Session, row: AssignmentRow, limit: int, offset: int
) -> dict[str, Any]:
    """Load histogram, per-paper min/mean score (paginated), unassigned reviewers."""
    venue_id = row.venue_id
    pairs = rows_frame(
        session.execute(
            select(AssignmentPair.paper_id, AssignmentPair.reviewer_id, AssignmentPair.score).where(
                AssignmentPair.assignment_id == row.id
            )
        ).all(),
        columns=["paper_id", "reviewer_id", "score"],
    )
    reviewer_ids = pd.Index(pool_person_ids(session, venue_id, row.pool))
    paper_ids = pd.Index(run_items(session, row))
    loads = pairs.groupby("reviewer_id").size().reindex(reviewer_ids, fill_value=0)
    histogram = loads.value_counts().sort_index()
    limits = run_limits(session, row)
    per_paper = (
        pairs.groupby("paper_id")["score"]
        .agg(["size", "min", "mean"])
        .reindex(paper_ids)
        .rename(columns={"size": "assigned", "min": "min_score", "mean": "mean_score"})
    )
    per_paper["assigned"] = per_paper["assigned"].fillna(0).astype(np.int64)
    per_paper["demand"] = limits.demand_array(list(paper_ids))
    page = per_paper.iloc[offset : offset + limit]
    titles = lookup(session, venue_id, [str(p) for p in page.index])
    papers = [
        json_safe(
            {
                "paper_id": pid,
                "paper_title": titles.title(str(pid)),
                "demand": int(rec.demand),
                "assigned": int(rec.assigned),
                "min_score": float(rec.min_score),
                "mean_score": float(rec.mean_score),
            }
        )
        for pid, rec in page.iterrows()
    ]
    scores = pairs["score"].to_numpy(dtype=np.float64)
    summary = json_safe(
        {
            "pairs": len(pairs),
            "total_score": float(scores.sum()),
            "mean_score": float(scores.mean()) if len(scores) else None,
            "min_score": float(scores.min()) if len(scores) else None,
            "min_paper_mean_score": float(per_paper["mean_score"].min())
            if len(per_paper)
            else None,
            "load_min": int(loads.min()) if len(loads) else 0,
            "load_max": int(loads.max()) if len(loads) else 0,
        }
    )
    # every paper's lowest and mean assigned score (None: no pair), for charts: one request
    # instead of paging through every paper's row (ten requests at 10,000 papers)
    rounded = per_paper[["min_score", "mean_score"]].astype(np.float64).round(4)
    paper_scores = {
        "min": [None if np.isnan(x) else float(x) for x in rounded["min_score"].to_numpy()],
        "mean": [None if np.isnan(x) else float(x) for x in rounded["mean_score"].to_numpy()],
    }
    return {
        "load_histogram": {str(k): int(v) for k, v in histogram.items()},
        "papers": {"items": papers, "total": len(per_paper), "limit": limit, "offset": offset},
        "paper_scores": paper_scores,
        "unassigned_reviewers": [str(r) for r in loads.index[loads.to_numpy() == 0]],
        "papers_below_demand": int((per_paper["assigned"] < per_paper["demand"]).sum()),
        "summary": summary,
    }


def paper_view(
    session: Session, row: AssignmentRow, paper_id: str, n_alternates: int
) -> PaperAssignmentOut:
    """A paper's assigned reviewers and up to ``n_alternates`` next-best reviewers.

    Alternates (:func:`matching.alternates`) are the run's affinity candidates of the paper
    (its stored scores) that could replace an assigned reviewer: not assigned, and nothing
    in the one rule of :func:`reviewer_recommender.services.pair_rules.addition_obstacles`
    stops adding them (no conflict, excluding bid or forbid, below their max load in this
    run), best score first. The problem is built by
    :func:`reviewer_recommender.services.problem.build_problem` from those candidates, the
    rule's refusals as exclusions and the reviewers' remaining loads."""
    from matching import Assignment
    from matching import alternates as next_best
    from recommender.io import ScoreTable
    from reviewer_recommender.services.pair_rules import addition_obstacles
    from reviewer_recommender.services.params import AssignParams
    from reviewer_recommender.services.problem import AssignInputs, Rows, build_problem

    venue_id = row.venue_id
    limits = run_limits(session, row)
    demand = limits.demand_of(paper_id)
    assigned = rows_frame(
        session.execute(
            select(AssignmentPair.reviewer_id, AssignmentPair.score, AssignmentPair.pinned)
            .where(AssignmentPair.assignment_id == row.id, AssignmentPair.paper_id == paper_id)
            .order_by(AssignmentPair.score.desc(), AssignmentPair.reviewer_id)
        ).all(),
        columns=["reviewer_id", "score", "pinned"],
    )
    loads = dict(
        session.execute(
            select(AssignmentPair.reviewer_id, func.count())
            .where(AssignmentPair.assignment_id == row.id)
            .group_by(AssignmentPair.reviewer_id)
        ).all()
    )
    candidates = rows_frame(
        session.execute(
            select(AffinityScore.reviewer_id, AffinityScore.score).where(
                AffinityScore.run_id == row.affinity_run_id, AffinityScore.paper_id == paper_id
            )
        ).all()
        if row.affinity_run_id is not None
        else [],
        columns=["reviewer_id", "score"],
    )
    # the assigned pairs are rows of the table even if the run does not hold them (a pin
    # scored on a later run): alternates() needs the assignment as a subset of the pairs
    table = pd.concat(
        [assigned[["reviewer_id", "score"]], candidates], ignore_index=True
    ).drop_duplicates("reviewer_id", keep="first")
    reviewer_ids = [str(r) for r in table["reviewer_id"]]
    assigned_ids = set(assigned["reviewer_id"])
    others = [r for r in reviewer_ids if r not in assigned_ids]
    obstacles = addition_obstacles(session, row, [(paper_id, r) for r in others], replacing=True)
    refused = [r for r in others if obstacles[(paper_id, r)]]
    remaining = np.maximum(
        0, limits.max_array(reviewer_ids) - np.array([loads.get(r, 0) for r in reviewer_ids])
    )
    built = build_problem(
        AssignInputs(
            scores=ScoreTable.from_frame(
                table.assign(paper_id=paper_id), source=f"the scores of run {row.id}"
            ),
            conflicts=Rows(
                pd.DataFrame({"paper_id": paper_id, "reviewer_id": refused}, dtype=object),
                "pairs that cannot be added",
            ),
            demand=Rows(pd.DataFrame({"paper_id": [paper_id], "demand": [demand]}), "demand"),
            max_loads=Rows(
                pd.DataFrame({"reviewer_id": reviewer_ids, "max": remaining}), "remaining loads"
            ),
            paper_ids=[paper_id],
            reviewer_ids=reviewer_ids,
            fold_bids=False,
        ),
        AssignParams(min_load=0),
    )
    problem = built.problem
    pair_reviewer_ids = np.asarray(problem.reviewer_ids, dtype=object)[problem.pair_reviewer]
    selected = np.flatnonzero(np.isin(pair_reviewer_ids, list(assigned_ids))).astype(np.int64)
    total = float(problem.pair_score[selected].sum())
    stored = Assignment(
        problem=problem, selected=selected, objective=total, upper_bound=total, solver="stored"
    )
    best = next_best(problem, stored, n_alternates)
    names = lookup(session, venue_id, [paper_id], [*assigned["reviewer_id"], *best["reviewer_id"]])
    return PaperAssignmentOut(
        paper_id=paper_id,
        paper_title=names.title(paper_id),
        demand=int(demand),
        assigned=[
            PaperReviewerOut(
                reviewer_id=r,
                reviewer_name=names.name(r),
                score=float(score),
                pinned=bool(pinned),
                load=loads.get(r, 0),
                max_load=limits.max_of(r),
            )
            for r, score, pinned in assigned.itertuples(index=False)
        ],
        alternates=[
            PaperReviewerOut(
                reviewer_id=r,
                reviewer_name=names.name(r),
                score=float(score),
                rank=int(rank),
                load=loads.get(r, 0),
                max_load=limits.max_of(r),
            )
            for r, score, rank in best[["reviewer_id", "score", "rank"]].itertuples(index=False)
        ],
    )
