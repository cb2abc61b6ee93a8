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
or the fewest pairs moved), stores the withdrawals and removals as standing constraints
(a withdrawn reviewer's max load becomes 0, a removed pair a chair's forbid, their pins
are dropped: later solves and every publishing check respect them), and records the
draft's difference from the live run in its summary (``reassignment``). The draft is
published like any other, through :func:`reviewer_recommender.services.publishing.publish`.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import InvalidRequest, StateConflict
from reviewer_recommender.services.assignment import json_safe
from reviewer_recommender.services.draft_rules import (
    add_rule,
    copy_rules,
    draft_max_loads,
    draft_pairs,
    drop_rule,
    pins_with_draft,
    rules,
)
from reviewer_recommender.services.heavy import HeavyWork
from reviewer_recommender.services.hierarchy import SENIOR_AREA_CHAIRS, cross_level_pairs
from reviewer_recommender.services.limits import StoredLimits, read_stored_limits, resolve_limits
from reviewer_recommender.services.params import ReassignParams
from reviewer_recommender.services.pools import DEFAULT_POOL, check_pool, pool_person_ids
from reviewer_recommender.services.publishing import run_pairs
from reviewer_recommender.services.runs import live_run, require_assignment
from reviewer_recommender.services.tokens import Principal
from reviewer_recommender.storage.models import (
    AssignmentPair,
    AssignmentRow,
    SubmissionRow,
)
from reviewer_recommender.storage.repository import (
    add_numbered,
    audit,
    bids_frame,
    conflicts_frame,
    require_run,
    scores_frame,
)

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


def reassign_live(
    session: Session,
    venue_id: str,
    *,
    withdraw: list[str],
    remove: list[tuple[str, str]],
    reason: str,
    actor: str,
    pool: str = DEFAULT_POOL,
) -> tuple[AssignmentRow, Any]:
    """Create the re-assignment draft of the pool's live run; returns (draft row, the
    service's :class:`reviewer_recommender.services.reassign.ReassignResult`). The caller commits.

    409: no live run, no affinities, or no assignment exists even moving live pairs (the
    diagnosis); 422: nothing to do, unknown ids, a pair to remove that is not live, an
    option that cannot act (:class:`~reviewer_recommender.services.errors.OptionError`)."""
    from matching import Infeasible
    from recommender.corpus import InputError
    from recommender.io import ScoreTable
    from reviewer_recommender.services.problem import Rows
    from reviewer_recommender.services.reassign import ReassignInputs, reassign

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
    problems = _unknown(withdraw, set(reviewer_ids), "reviewer")
    problems += [
        f"({p}, {r}) is not a pair of the live assignment {live.id}"
        for p, r in remove
        if (p, r) not in live_keys
    ][:20]
    if problems:
        raise InvalidRequest(None, "; ".join(problems))
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
    pins dropped) and a forbid of each removed pair (its own pin dropped)."""
    copy_rules(session, live.id, row.id)
    for reviewer_id in sorted(set(withdraw)):
        add_rule(session, row.id, "max_load", "", reviewer_id, actor=actor, reason=reason, value=0)
        for pin in rules(session, row.id, "pin"):
            if pin.reviewer_id == reviewer_id:
                session.delete(pin)
    for paper_id, reviewer_id in dict.fromkeys(remove):
        add_rule(session, row.id, "forbid", paper_id, reviewer_id, actor=actor, reason=reason)
        drop_rule(session, row.id, "pin", paper_id, reviewer_id)
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
    before_commit: Callable[[AssignmentRow], None] | None = None,
    heavy: HeavyWork | None = None,
) -> dict[str, Any]:
    """:func:`reassign_live`, committed: the new draft and what changed against the live
    run it derives from (``ReassignOut``). ``before_commit(draft)`` records what else the
    re-assignment settles in the same transaction (declines). ``heavy``: the server's
    slots for heavy work (429 ``busy`` when the venue or the server has none free)."""
    with heavy.slot(venue_id, "re-assignment") if heavy is not None else nullcontext():
        row, result = reassign_live(
            session,
            venue_id,
            withdraw=withdraw,
            remove=remove,
            reason=reason,
            actor=actor,
            pool=pool,
        )
    if before_commit is not None:
        before_commit(row)
    session.commit()
    session.refresh(row)
    summary = result.summary
    return {
        "assignment": row,
        "derived_from": int((row.summary or {}).get("reassignment", {}).get("derived_from")),
        "stage": result.reassignment.stage,
        "kept": result.kept,
        "added": changed_pairs(result.added, "fills a vacated slot"),
        "removed": changed_pairs(result.removed),
        "objective": summary["objective"],
        "minimality": summary["minimality"],
        "warnings": result.warnings,
    }


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
