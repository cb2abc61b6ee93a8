"""A solve of a stored venue: the assignment use case
(:func:`reviewer_recommender.services.assignment.assign`, the one the command line calls) on
an affinity run's stored scores and the venue's conflicts, pins, bids and stored limits, its
result stored as a new draft run. The assignment job is these calls in a row."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from recommender.corpus import InputError, Reviewer
from reviewer_recommender.errors import InvalidRequest, NotFound, StateConflict
from reviewer_recommender.services.assignment import AssignResult, json_safe
from reviewer_recommender.services.draft_rules import (
    copy_rules,
    draft_max_loads,
    draft_pairs,
    without_lifted,
)
from reviewer_recommender.services.hierarchy import (
    SENIOR_AREA_CHAIRS,
    area_chair_items,
    cross_level_pairs,
    institution_pairs,
    senior_area_chair_scores,
)
from reviewer_recommender.services.limits import (
    Limits,
    StoredLimits,
    read_stored_limits,
    resolve_limits,
)
from reviewer_recommender.services.params import LEVEL_OPTIONS, AssignParams
from reviewer_recommender.services.problem import AssignInputs, Rows
from reviewer_recommender.storage.models import (
    DEFAULT_POOL,
    AffinityRun,
    AssignmentPair,
    AssignmentRow,
    Job,
)
from reviewer_recommender.storage.repository import (
    add_numbered,
    bids_frame,
    conflicts_frame,
    load_corpus,
    pins_frame,
    scores_frame,
    stale_message,
    unscored_papers,
    unscored_reviewer_count,
)

# solve options a run does not store: the API refuses them (api.schemas.AssignmentIn)
NOT_STORED = frozenset({"bid_weight", "alternates"})


class RunLabel(BaseModel):
    """What the chair calls a run and where it comes from (not solve options)."""

    model_config = ConfigDict(extra="forbid")

    name: str = ""
    note: str = ""
    # {"kind": "re-solve", "assignment_id": N}: the run this solve starts from
    derived_from: dict[str, Any] | None = None


class AssignmentJobParams(AssignParams):
    """The assignment job's parameters: the solve request, the affinity run it reads, the
    new run's label and the level options (:data:`LEVEL_OPTIONS`: the pool solved and the
    cross-level rules)."""

    affinity_run_id: int
    run: RunLabel = Field(default_factory=RunLabel)
    pool: Literal["reviewers", "area_chairs", "senior_area_chairs"] = "reviewers"
    distinct_institutions: bool = False
    sac_top_k: int = Field(default=3, ge=1, le=1000)

    def level_options(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in LEVEL_OPTIONS}


@dataclass
class StoredSolve:
    """Everything a solve of a stored venue reads: the assignment use case's inputs and
    parameters, the limits they resolve to, the affinity run and the new run's label and
    lineage; ``warnings`` about the stored inputs."""

    affinity_run_id: int
    inputs: AssignInputs
    params: AssignParams
    limits: Limits
    label: RunLabel
    derived_from: dict[str, Any] | None
    warnings: list[str] = field(default_factory=list)
    pool: str = DEFAULT_POOL
    # the level options the run records with its parameters
    level: dict[str, Any] = field(default_factory=dict)
    # what the run's summary says of the other levels' rules (``cross_level``)
    cross_level: dict[str, Any] = field(default_factory=dict)


def read_stored_solve(
    session: Session, venue_id: str, job_id: int, job_params: Mapping[str, Any]
) -> StoredSolve:
    """The solve a job's parameters ask for, with the venue's stored inputs: the affinity
    run's scores, every conflict (detected, uploaded, Not Willing bids, forbids), pins,
    bids (which only exclude here: stored scores already hold the bid preferences) and the
    venue's stored demand and max loads, which win over the request's maps, which win over
    its defaults (as files over flags on the command line). :class:`InvalidRequest` for
    bad parameters or unreadable scores, :class:`NotFound` for an unknown run,
    :class:`StateConflict` when papers needing reviewers have no scores in the run."""
    from recommender.io import ScoreTable

    try:
        params = AssignmentJobParams.model_validate(dict(job_params))
    except ValidationError as error:
        raise InvalidRequest(None, f"bad assignment parameters: {error}") from error
    run_row = session.get(AffinityRun, params.affinity_run_id)
    if run_row is None or run_row.venue_id != venue_id:
        raise NotFound(None, f"affinity run {params.affinity_run_id} not found")
    pool: str = params.pool
    solve_params = params.model_dump(exclude={"affinity_run_id", "run", *LEVEL_OPTIONS})
    level = params.level_options()
    reviewers, submissions = load_corpus(session, venue_id, pool)
    stored = read_stored_limits(session, venue_id, pool)
    limits = resolve_limits(session, venue_id, {**solve_params, "pool": pool}, stored)
    warnings: list[str] = []
    cross_level: dict[str, Any] = {}
    if pool == SENIOR_AREA_CHAIRS:
        chairs_run, paper_ids = area_chair_items(session, venue_id)
        frame = senior_area_chair_scores(
            session, venue_id, run_row.id, chairs_run.id, params.sac_top_k
        )
        source = (
            f"senior area chairs' mean top-{params.sac_top_k} scores (affinity run "
            f"{run_row.id}) over the papers of area-chair run {chairs_run.id}"
        )
        cross_level["senior_area_chairs"] = {
            "area_chair_run": chairs_run.id,
            "area_chair_run_number": chairs_run.number,
            "area_chairs": len(paper_ids),
            "top_k": params.sac_top_k,
        }
        forbidden = None
    else:
        paper_ids = [s.id for s in submissions]
        needing = [
            p for p in unscored_papers(session, venue_id, run_row.id) if limits.demand_of(p) > 0
        ]
        if needing:
            raise StateConflict("stale_affinities", stale_message(venue_id, run_row.id, needing))
        unscored_reviewers = unscored_reviewer_count(session, venue_id, run_row.id, pool)
        if unscored_reviewers:
            warnings.append(
                f"{unscored_reviewers} reviewers have no scores in affinity run {run_row.id} "
                "(uploaded after it) and cannot be assigned: recompute affinity to consider them"
            )
        frame = scores_frame(session, run_row.id)
        source = f"affinity run {run_row.id}"
        forbidden = _level_forbidden(session, venue_id, pool, params, reviewers, cross_level)
    try:
        table = ScoreTable.from_frame(frame, source=source)
    except InputError as error:
        raise InvalidRequest(None, f"cannot read the stored scores: {error}") from error
    reviewer_ids = [r.id for r in reviewers]
    conflicts = [Rows(conflicts_frame(session, venue_id, pool), "venue conflicts")]
    pins = pins_frame(session, venue_id, pool)
    source_run = resolved_from(session, venue_id, params.run)
    if source_run is not None:
        # a re-solve of a run keeps that run's own rules (its edits), and only that run's
        own_forbids = draft_pairs(session, source_run.id, "forbid")
        if len(own_forbids):
            conflicts.append(
                Rows(own_forbids[["paper_id", "reviewer_id"]], f"run {source_run.id}'s forbids")
            )
        own_pins = draft_pairs(session, source_run.id, "pin")[["paper_id", "reviewer_id"]]
        # and leaves out the venue pins that run lifts (a re-assignment's withdrawals)
        pins = without_lifted(session, source_run.id, pins)
        pins = pd.concat([pins, own_pins], ignore_index=True).drop_duplicates()
        own_max = draft_max_loads(session, source_run.id)
        if own_max:
            stored = StoredLimits(stored.demands, {**stored.max_loads, **own_max})
            limits = replace(limits, max_load={**limits.max_load, **own_max})
    inputs = AssignInputs(
        scores=table,
        conflicts=conflicts,
        pins=Rows(pins.reset_index(drop=True), "venue pins"),
        bids=Rows(bids_frame(session, venue_id, pool), "venue bids"),
        fold_bids=False,
        demand=Rows(stored.demand_rows(), "the venue's stored paper demands"),
        max_loads=Rows(stored.max_load_rows(), "the venue's stored reviewer max loads"),
        reviewers=reviewers,
        reviewers_source=f"the reviewers of venue {venue_id}",
        paper_ids=paper_ids,
        reviewer_ids=reviewer_ids,
        forbidden=None if forbidden is None else _within(forbidden, paper_ids, reviewer_ids),
    )
    if pool == SENIOR_AREA_CHAIRS:
        # the items are area chairs: the venue's pair tables name papers, not them
        both = sorted(set(paper_ids) & set(reviewer_ids))
        inputs.conflicts = Rows(
            pd.DataFrame({"paper_id": both, "reviewer_id": both}, dtype=object),
            "nobody is their own senior area chair",
        )
        inputs.pins = inputs.bids = None
    return StoredSolve(
        affinity_run_id=run_row.id,
        inputs=inputs,
        params=AssignParams.model_validate(solve_params),
        limits=limits,
        label=params.run,
        derived_from=_derived_from(session, job_id, params.run),
        warnings=warnings,
        pool=pool,
        level=level,
        cross_level=cross_level,
    )


def _level_forbidden(
    session: Session,
    venue_id: str,
    pool: str,
    params: AssignmentJobParams,
    reviewers: tuple[Reviewer, ...],
    cross_level: dict[str, Any],
) -> Rows | None:
    """The pairs the other levels forbid a solve of ``pool`` (recorded in
    ``cross_level``): the other level's live pairs, and with ``distinct_institutions``
    reviewers of the paper's area chair's institution."""
    from reviewer_recommender.storage.models import ReviewerRow

    pairs, described = cross_level_pairs(session, venue_id, pool)
    frames = [pairs]
    if described is not None:
        cross_level["chairs_do_not_review"] = described
    if params.distinct_institutions:
        if pool != "reviewers":
            raise InvalidRequest(
                "invalid_option",
                "distinct_institutions: compares a paper's reviewers with its area chair; "
                "solve the reviewers pool with it",
                field="distinct_institutions",
            )
        rows = [
            row
            for row in session.scalars(
                select(ReviewerRow).where(
                    ReviewerRow.venue_id == venue_id,
                    ReviewerRow.id.in_([r.id for r in reviewers]),
                )
            )
        ]
        same, about = institution_pairs(session, venue_id, rows, params.institution_key)
        cross_level["distinct_institutions"] = about
        frames.append(same)
    combined = pd.concat(frames, ignore_index=True).drop_duplicates()
    if not len(combined):
        return None
    return Rows(combined.reset_index(drop=True), "pairs another level forbids")


def resolved_from(session: Session, venue_id: str, label: RunLabel) -> AssignmentRow | None:
    """The run a re-solve starts from (its lineage's ``assignment_id``), if it still
    exists in the venue."""
    origin = label.derived_from or {}
    if origin.get("kind") != "re-solve" or not isinstance(origin.get("assignment_id"), int):
        return None
    row = session.get(AssignmentRow, origin["assignment_id"])
    return row if row is not None and row.venue_id == venue_id else None


def _within(rows: Rows, paper_ids: list[str], reviewer_ids: list[str]) -> Rows | None:
    """``rows`` narrowed to the solve's papers and persons (the other level's pairs name
    persons of another pool: nothing to warn about)."""
    frame = rows.frame
    inside = frame["paper_id"].isin(paper_ids) & frame["reviewer_id"].isin(reviewer_ids)
    kept = frame[inside].reset_index(drop=True)
    return Rows(kept, rows.source) if len(kept) else None


def _derived_from(session: Session, job_id: int, label: RunLabel) -> dict[str, Any] | None:
    """The new run's lineage: the label's (a re-solve), or the job it re-runs."""
    job_row = session.get(Job, job_id)
    rerun_of = job_row.rerun_of if job_row is not None else None
    if rerun_of is None:
        return label.derived_from
    original = session.get(Job, rerun_of)
    number = original.number if original is not None else None
    return {
        "kind": "rerun",
        "job_id": rerun_of,
        "job_number": number,
        "text": f"rerun of job #{number if number is not None else rerun_of}",
    }


def describe_problem(result: AssignResult) -> str:
    """The solved problem's size and the solver's choice, in a line."""
    problem = result.problem
    return (
        f"problem: {problem.n_papers} papers, {problem.n_reviewers} reviewers, "
        f"{problem.n_pairs} candidate pairs, {int(problem.forced.sum())} pinned; "
        f"{result.solver.reason}"
    )


@dataclass(frozen=True)
class StoredAssignment:
    assignment_id: int
    pairs: int


def store_assignment(
    session: Session, venue_id: str, job_id: int, solve: StoredSolve, result: AssignResult
) -> StoredAssignment:
    """Add the solve's result as the venue's next numbered draft run, with its pairs, to
    ``session``; the caller commits. The run stores its parameters and summary without the
    options a run does not keep (:data:`NOT_STORED`)."""
    extra: dict[str, Any] = {"limits": solve.limits.describe()}
    if solve.cross_level:
        extra["cross_level"] = {
            **solve.cross_level,
            "excluded_pairs": int(result.counts.get("cross_level_excluded", 0)),
        }
    summary = json_safe({**result.summary, **extra})
    for key in NOT_STORED:
        summary.get("parameters", {}).pop(key, None)
    row = add_numbered(
        session,
        AssignmentRow,
        venue_id,
        lambda number: AssignmentRow(
            venue_id=venue_id,
            number=number,
            name=solve.label.name,
            note=solve.label.note,
            derived_from=solve.derived_from,
            job_id=job_id,
            affinity_run_id=solve.affinity_run_id,
            state="draft",
            pool=solve.pool,
            parameters={
                **solve.params.model_dump(mode="json", exclude=set(NOT_STORED)),
                **solve.level,
            },
            summary=summary,
        ),
    )
    pairs = result.pairs()
    pair_rows = [
        {
            "assignment_id": row.id,
            "paper_id": p,
            "reviewer_id": r,
            "score": float(s),
            "pinned": bool(pinned),
        }
        for p, r, s, pinned in zip(
            pairs["paper_id"], pairs["reviewer_id"], pairs["score"], pairs["pinned"], strict=True
        )
    ]
    if pair_rows:
        session.execute(insert(AssignmentPair), pair_rows)
    source_run = resolved_from(session, venue_id, solve.label)
    if source_run is not None:
        copy_rules(session, source_run.id, row.id)
    return StoredAssignment(assignment_id=row.id, pairs=len(pair_rows))
