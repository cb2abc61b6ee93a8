"""Assignment modes of the API: the randomness figures of a run, and emergency
re-assignment of the live run (logic kept out of the routers).

**Randomness.** A randomized solve (``perturbation`` and/or ``probability_cap``) stores in
its summary the metrics of :mod:`matching.randomness`, measured on the marginals it sampled
from, with the same metrics of the deterministic optimum beside them; :func:`randomness`
lays them out as a table.

**Re-assignment.** :func:`reassign_live` builds a draft from the venue's live run with
:func:`reviewer_recommender.services.reassign.reassign` (every live pair kept except those of
withdrawn
reviewers, removed pairs and pairs that are conflicts now; only the vacated slots filled,
or the fewest pairs moved), stores the withdrawals and removals as the draft's own rules
(a withdrawn reviewer's max load becomes 0, a removed pair a chair's forbid, their venue
pins lifted in the draft: its re-solves and publishing checks respect them, other runs and
the venue hold the pins until the chair promotes the draft's rules), and records the
draft's difference from the live run in its summary (``reassignment``). The draft is
published like any other, through :func:`reviewer_recommender.services.publishing.publish`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import InvalidRequest, StateConflict
from reviewer_recommender.jobs.runner import JobRunner
from reviewer_recommender.services.assignment import json_safe
from reviewer_recommender.services.draft_rules import (
    add_rule,
    copy_rules,
    draft_max_loads,
    draft_pairs,
    drop_rule,
    lift_venue_pins,
    pins_with_draft,
    rules,
)
from reviewer_recommender.services.hierarchy import SENIOR_AREA_CHAIRS, cross_level_pairs
from reviewer_recommender.services.limits import StoredLimits, read_stored_limits, resolve_limits
from reviewer_recommender.services.params import ReassignParams
from reviewer_recommender.services.pools import DEFAULT_POOL, check_pool, pool_person_ids
from reviewer_recommender.services.principals import Principal
from reviewer_recommender.services.publishing import run_pairs
from reviewer_recommender.services.runs import live_run, require_assignment
from reviewer_recommender.storage.models import (
    AssignmentPair,
    AssignmentRow,
    Job,
    SubmissionRow,
)
from reviewer_recommender.storage.repository import (
    add_numbered,
    audit,
    bids_frame,
    conflicts_frame,
    require_run,
    scores_frame,
    start_job,
)

# the kind of the jobs that re-assign a live run (of the chair's choice or of its declines)
REASSIGNMENT_JOB = "reassignment"

# changed pairs listed in a draft's summary (the counts are always complete)
LISTED_CHANGES = 5000


def randomness(row: AssignmentRow) -> dict[str, Any]:
    """The randomness table of run ``row`` (see :class:`api.schemas.RandomnessOut`)."""
    from matching.randomness import DESCRIPTIONS, METRICS

    summary = row.summary or {}
    figures = summary.get("randomness")
    solver = summary.get("solver_parameters") or {}
    if not isinstance(figures, dict):
        return {
            "assignment_id": row.id,
            "randomized": False,
            "solver": summary.get("solver"),
            "message": f"assignment {row.id} was solved deterministically "
            f"({summary.get('solver', 'unknown solver')}): every pair is certain",
            "metrics": [],
        }
    deterministic = figures.get("deterministic") or {}
    return {
        "assignment_id": row.id,
        "randomized": True,
        "solver": summary.get("solver"),
        "perturbation": solver.get("beta"),
        "probability_cap": solver.get("q"),
        "seed": summary.get("seed"),
        "expected_objective": figures.get("expected_objective"),
        "deterministic_optimum": figures.get("deterministic_optimum"),
        "sample_objective": summary.get("solver_objective", summary.get("objective")),
        "after_edits": figures.get("after_edits"),
        "message": "figures of the distribution the run was sampled from, beside the best "
        "deterministic assignment's",
        "metrics": [
            {
                "name": name,
                "label": DESCRIPTIONS[name][0],
                "description": DESCRIPTIONS[name][1],
                "randomized": figures.get(name),
                "deterministic": deterministic.get(name),
            }
            for name in METRICS
        ],
    }


def run_randomness(
    session: Session, venue_id: str, assignment_id: int, principal: Principal
) -> dict[str, Any]:
    """:func:`randomness` of a run the caller may see."""
    return randomness(require_assignment(session, venue_id, assignment_id, principal))


def _unknown(wanted: list[str], known: set[str], what: str) -> list[str]:
    return [f"unknown {what} {value!r}" for value in wanted if value not in known][:20]


def check_live_unchanged(live: AssignmentRow, expected_live: int | None) -> None:
    """409 ``live_run_changed`` when a queued re-assignment finds another live run than the
    one it was checked against (``expected_live``; None: any)."""
    if expected_live is not None and live.id != expected_live:
        raise StateConflict(
            "live_run_changed",
            f"the live run changed since the re-assignment was queued (it was run "
            f"{expected_live}, now run {live.id}): ask for the re-assignment again",
        )


def check_reassignment(
    session: Session,
    venue_id: str,
    *,
    withdraw: list[str],
    remove: list[tuple[str, str]],
    pool: str = DEFAULT_POOL,
    expected_live: int | None = None,
) -> tuple[AssignmentRow, Any, list[str], list[str], pd.DataFrame]:
    """Whether the pool's live run can be re-assigned without ``withdraw`` and ``remove``:
    (live run, affinity run, paper ids, the pool's person ids, the live pairs). 409: no live
    run (or, with ``expected_live``, another live run than that one: it changed since the
    re-assignment was queued), no affinities; 422: the senior area chairs' pool, nothing
    named, unknown reviewers, a pair to remove that is not live."""
    check_pool(pool)
    if pool == SENIOR_AREA_CHAIRS:
        raise InvalidRequest(
            "invalid_option",
            "a senior area chairs' run is re-solved, not re-assigned: solve the "
            "senior_area_chairs pool again",
            field="pool",
        )
    live = live_run(session, venue_id, pool)
    if live is None:
        of_pool = "" if pool == DEFAULT_POOL else f" of pool {pool}"
        raise StateConflict(
            None,
            f"venue {venue_id!r} has no live assignment{of_pool} to re-assign; publish one first",
        )
    check_live_unchanged(live, expected_live)
    if not withdraw and not remove:
        raise InvalidRequest(
            None,
            "nothing to re-assign: name withdrawn reviewers (withdraw) and/or pairs to remove "
            "(remove)",
        )
    run = require_run(session, venue_id, pool)
    paper_ids = list(
        session.scalars(select(SubmissionRow.id).where(SubmissionRow.venue_id == venue_id))
    )
    reviewer_ids = pool_person_ids(session, venue_id, pool)
    live_pairs = run_pairs(session, live.id)
    live_keys = set(zip(live_pairs["paper_id"], live_pairs["reviewer_id"], strict=True))
    unknown = _unknown(withdraw, set(reviewer_ids), "reviewer")
    not_live = [
        f"({p}, {r}) is not a pair of the live assignment {live.id}"
        for p, r in remove
        if (p, r) not in live_keys
    ][:20]
    parts = [
        (field, found) for field, found in (("withdraw", unknown), ("remove", not_live)) if found
    ]
    if parts:
        raise InvalidRequest(
            None,
            "; ".join(f"{field}: {'; '.join(found)}" for field, found in parts),
            field=parts[0][0],
        )
    return live, run, paper_ids, reviewer_ids, live_pairs


def reassign_live(
    session: Session,
    venue_id: str,
    *,
    withdraw: list[str],
    remove: list[tuple[str, str]],
    reason: str,
    actor: str,
    pool: str = DEFAULT_POOL,
    expected_live: int | None = None,
) -> tuple[AssignmentRow, Any]:
    """Create the re-assignment draft of the pool's live run; returns (draft row, the
    service's :class:`reviewer_recommender.services.reassign.ReassignResult`). The caller commits.

    409: no live run, no affinities, or no assignment exists even moving live pairs (the
    diagnosis); 422: nothing to do, unknown ids, a pair to remove that is not live, an
    option that cannot act (:class:`~reviewer_recommender.services.errors.OptionError`), and
    the refusals of :func:`check_reassignment`."""
    from matching import Infeasible
    from recommender.corpus import InputError
    from recommender.io import ScoreTable
    from reviewer_recommender.services.problem import Rows
    from reviewer_recommender.services.reassign import ReassignInputs, reassign

    live, run, paper_ids, reviewer_ids, live_pairs = check_reassignment(
        session, venue_id, withdraw=withdraw, remove=remove, pool=pool, expected_live=expected_live
    )
    stored = read_stored_limits(session, venue_id, pool)
    limits = resolve_limits(session, venue_id, {**(live.parameters or {}), "pool": pool}, stored)
    # the live run's own rules (its edits as a draft) hold in its re-assignment too
    forbid_rows = draft_pairs(session, live.id, "forbid")
    own_forbids = (
        [Rows(forbid_rows[["paper_id", "reviewer_id"]], "the live run's own forbids")]
        if len(forbid_rows)
        else []
    )
    limits_with_own = StoredLimits(
        stored.demands, {**stored.max_loads, **draft_max_loads(session, live.id)}
    )
    fields = set(ReassignParams.model_fields)
    params = ReassignParams.model_validate(
        {k: v for k, v in (live.parameters or {}).items() if k in fields}
    )
    inputs = ReassignInputs(
        live=Rows(live_pairs[["paper_id", "reviewer_id", "score"]], f"live assignment {live.id}"),
        scores=ScoreTable.from_frame(
            scores_frame(session, run.id), source=f"affinity run {run.id}"
        ),
        withdraw=Rows(pd.DataFrame({"reviewer_id": withdraw}, dtype=object), "withdraw"),
        remove=Rows(
            pd.DataFrame(remove, columns=["paper_id", "reviewer_id"], dtype=object), "remove"
        ),
        conflicts=[
            Rows(conflicts_frame(session, venue_id, pool), "venue conflicts"),
            *own_forbids,
            *_other_level(session, venue_id, pool, paper_ids, reviewer_ids),
        ],
        pins=Rows(pins_with_draft(session, live), "venue pins and the live run's own pins"),
        bids=Rows(bids_frame(session, venue_id, pool), "venue bids"),
        fold_bids=False,  # stored scores already hold the bid preferences
        demand=Rows(stored.demand_rows(), "the venue's stored paper demands"),
        max_loads=Rows(
            limits_with_own.max_load_rows(),
            "the venue's stored reviewer max loads and the live run's own",
        ),
        paper_ids=paper_ids,
        reviewer_ids=reviewer_ids,
    )
    try:
        result = reassign(inputs, params)
    except Infeasible as infeasible:
        raise StateConflict(
            None,
            f"no re-assignment exists, even moving live pairs: {infeasible.diagnosis}",
        ) from infeasible
    except InputError as error:
        raise InvalidRequest(None, str(error)) from error

    changes = {
        "derived_from": live.id,
        "derived_from_version": live.version,
        "withdrawn": sorted(set(withdraw)),
        "removed_pairs": [list(pair) for pair in remove],
        "reason": reason,
        "added": json_safe(result.added.head(LISTED_CHANGES).to_dict("records")),
        "removed": json_safe(result.removed.head(LISTED_CHANGES).to_dict("records")),
    }
    assignment_figures = result.assignment.summary()
    assignment_figures.pop("parameters", None)
    summary = json_safe(
        {
            **assignment_figures,
            **result.summary,
            "solver_choice": "re-assignment of the live run: " + str(result.summary["minimality"]),
            "warnings": result.warnings,
            "limits": limits.describe(),
            "reassignment": changes,
        }
    )
    label = f"#{live.number}" if live.number is not None else f"run {live.id}"
    # numbered within the venue like every run, its lineage naming the live run
    row = add_numbered(
        session,
        AssignmentRow,
        venue_id,
        lambda number: AssignmentRow(
            venue_id=venue_id,
            number=number,
            derived_from={
                "kind": "re-assignment",
                "assignment_id": live.id,
                "assignment_number": live.number,
                "text": f"re-assignment of {label} (version {live.version})",
            },
            job_id=None,
            affinity_run_id=run.id,
            state="draft",
            pool=pool,
            parameters=dict(live.parameters or {}),
            summary=summary,
        ),
    )
    _record(session, live, row, withdraw, remove, reason or f"re-assignment by {actor}", actor)
    pairs = result.pairs()
    if len(pairs):
        session.execute(
            insert(AssignmentPair),
            [
                {
                    "assignment_id": row.id,
                    "paper_id": str(p),
                    "reviewer_id": str(r),
                    "score": float(s),
                    "pinned": bool(pinned),
                }
                for p, r, s, pinned in zip(
                    pairs["paper_id"],
                    pairs["reviewer_id"],
                    pairs["score"],
                    pairs["pinned"],
                    strict=True,
                )
            ],
        )
    audit(
        session,
        venue_id,
        actor,
        "assignment.reassign",
        assignment_id=row.id,
        derived_from=live.id,
        derived_from_version=live.version,
        withdrawn=sorted(set(withdraw)),
        removed_pairs=[list(pair) for pair in remove],
        stage=result.reassignment.stage,
        kept=result.kept,
        added=len(result.added),
        removed=len(result.removed),
        moved=int((result.removed["reason"] == "moved").sum()),
        reason=reason,
    )
    session.flush()
    return row, result


def _record(
    session: Session,
    live: AssignmentRow,
    row: AssignmentRow,
    withdraw: list[str],
    remove: list[tuple[str, str]],
    reason: str,
    actor: str,
) -> None:
    """The re-assignment's rules, its own (another draft never sees them; the chair may
    promote them): the live run's, then each withdrawn reviewer's max load 0 (their own
    pins dropped, the venue's lifted) and a forbid of each removed pair (its own pin
    dropped, the venue's lifted). A lifted venue pin holds on in the venue and every other
    run; the draft's checks and re-solves leave it out."""
    copy_rules(session, live.id, row.id)
    gone = sorted(set(withdraw))
    for reviewer_id in gone:
        add_rule(session, row.id, "max_load", "", reviewer_id, actor=actor, reason=reason, value=0)
        for pin in rules(session, row.id, "pin"):
            if pin.reviewer_id == reviewer_id:
                session.delete(pin)
    for paper_id, reviewer_id in dict.fromkeys(remove):
        add_rule(session, row.id, "forbid", paper_id, reviewer_id, actor=actor, reason=reason)
        drop_rule(session, row.id, "pin", paper_id, reviewer_id)
    lift_venue_pins(session, row, gone, list(dict.fromkeys(remove)), actor=actor)
    session.flush()


def reassign_live_run(
    session: Session,
    venue_id: str,
    *,
    withdraw: list[str],
    remove: list[tuple[str, str]],
    reason: str,
    actor: str,
    pool: str = DEFAULT_POOL,
    expected_live: int | None = None,
    before_commit: Callable[[AssignmentRow, dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """:func:`reassign_live`, committed: what changed against the live run it derives from,
    with the new draft's id and number (``assignment_id``, ``assignment_number``; JSON, a
    re-assignment job's result).
    ``before_commit(draft, outcome)`` records what else the re-assignment settles in the
    same transaction (declines, the job's success)."""
    row, result = reassign_live(
        session,
        venue_id,
        withdraw=withdraw,
        remove=remove,
        reason=reason,
        actor=actor,
        pool=pool,
        expected_live=expected_live,
    )
    summary = result.summary
    outcome: dict[str, Any] = json_safe(
        {
            "assignment_id": row.id,
            "assignment_number": row.number,
            "derived_from": int((row.summary or {}).get("reassignment", {}).get("derived_from")),
            "stage": result.reassignment.stage,
            "kept": result.kept,
            "added": changed_pairs(result.added, "fills a vacated slot"),
            "removed": changed_pairs(result.removed),
            "objective": summary["objective"],
            "minimality": summary["minimality"],
            "warnings": result.warnings,
        }
    )
    if before_commit is not None:
        before_commit(row, outcome)
    session.commit()
    return outcome


def start_reassignment(
    runner: JobRunner,
    session: Session,
    venue_id: str,
    *,
    withdraw: list[str],
    remove: list[tuple[str, str]],
    reason: str,
    actor: str,
    pool: str = DEFAULT_POOL,
) -> Job:
    """Check the re-assignment (:func:`check_reassignment`: refused at once, nothing queued)
    and queue it as a ``reassignment`` job, scheduled fairly among the venues' jobs; the
    job runs :func:`reassign_live_run` against the same live run (it fails in words if
    another run went live meanwhile) and its result names the new draft."""
    live, *_ = check_reassignment(session, venue_id, withdraw=withdraw, remove=remove, pool=pool)
    params = {
        "source": "live",
        "pool": pool,
        "live_assignment_id": live.id,
        "withdraw": list(withdraw),
        "remove": [list(pair) for pair in remove],
        "reason": reason,
    }
    return start_job(runner, session, venue_id, REASSIGNMENT_JOB, params, actor)


def _other_level(
    session: Session, venue_id: str, pool: str, paper_ids: list[str], reviewer_ids: list[str]
) -> list[Any]:
    """The other level's live pairs among these papers and persons, as conflict rows
    (:func:`reviewer_recommender.services.hierarchy.cross_level_pairs`)."""
    from reviewer_recommender.services.problem import Rows

    pairs, described = cross_level_pairs(session, venue_id, pool)
    if described is None:
        return []
    inside = pairs["paper_id"].isin(paper_ids) & pairs["reviewer_id"].isin(reviewer_ids)
    kept = pairs[inside].reset_index(drop=True)
    return [Rows(kept, "pairs another level forbids")] if len(kept) else []


def changed_pairs(frame: pd.DataFrame, reason: str | None = None) -> list[dict[str, Any]]:
    """Rows ``paper_id, reviewer_id, score[, reason]`` as JSON-safe dicts."""
    if reason is not None:
        frame = frame.assign(reason=reason)
    frame = frame.assign(score=frame["score"].astype(np.float64))
    return list(json_safe(frame.to_dict("records")))
