"""Checking a run against the venue's current hard constraints, publishing it, and keeping
an edited run's numbers honest.

States: ``draft`` → ``live`` → ``superseded`` (see
:class:`reviewer_recommender.storage.models.AssignmentRow`). At most
one run per venue is live. Publishing (``deploy``) names the run and the version the chair
looked at; it is refused while the run breaks a hard constraint the venue has *now*
(conflicts of interest, Not Willing/Conflict bids, forbidden pairs, pinned pairs, reviewer
loads, paper demand) unless the chair overrides each listed item with a reason. Rolling back
is publishing a superseded run again, through the same checks.

The check is :func:`matching.check_assignment` (the one checker and violation vocabulary,
shared with edits' previews and the solver checks) on the venue's stored rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import and_, select, update
from sqlalchemy.orm import Session

from matching.violations import Violation, check_assignment
from reviewer_recommender.errors import InvalidRequest, StateConflict
from reviewer_recommender.services.draft_rules import pins_with_draft, run_limits
from reviewer_recommender.services.edits import edited_summary as services_edited_summary
from reviewer_recommender.services.hierarchy import (
    SENIOR_AREA_CHAIRS,
    cross_level_exclusions,
    run_items,
)
from reviewer_recommender.services.pair_rules import exclusions_frame
from reviewer_recommender.storage.frames import rows_frame
from reviewer_recommender.storage.models import (
    AffinityScore,
    AssignmentPair,
    AssignmentRow,
    Conflict,
    DraftRule,
    utcnow,
)
from reviewer_recommender.storage.names import name_rows
from reviewer_recommender.storage.repository import audit, pool_members

# violations listed in a refusal (the total is always given)
LISTED = 1000


def run_pairs(session: Session, assignment_id: int) -> pd.DataFrame:
    return rows_frame(
        session.execute(
            select(
                AssignmentPair.paper_id,
                AssignmentPair.reviewer_id,
                AssignmentPair.score,
                AssignmentPair.pinned,
            ).where(AssignmentPair.assignment_id == assignment_id)
        ).all(),
        columns=["paper_id", "reviewer_id", "score", "pinned"],
    )


def violations(
    session: Session, row: AssignmentRow, pairs: pd.DataFrame | None = None
) -> list[Violation]:
    """Every hard constraint of the venue, as stored now, that run ``row`` breaks
    (:func:`matching.check_assignment` on the stored rows): conflicts, excluding bids and
    forbids of its pairs (by kind, then paper, reviewer), pins it lacks, then loads (by
    reviewer), then demand (by paper). ``pairs``: the run's pairs when the caller already
    read them (:func:`run_pairs`)."""
    venue_id = row.venue_id
    excluded: list[tuple[str, str, str, str | None]] = [
        (str(p), str(r), str(source), reason)
        for p, r, source, reason in session.execute(
            select(Conflict.paper_id, Conflict.reviewer_id, Conflict.source, Conflict.reason)
            .join(
                AssignmentPair,
                and_(
                    AssignmentPair.paper_id == Conflict.paper_id,
                    AssignmentPair.reviewer_id == Conflict.reviewer_id,
                ),
            )
            .where(Conflict.venue_id == venue_id, AssignmentPair.assignment_id == row.id)
            .order_by(Conflict.paper_id, Conflict.reviewer_id, Conflict.source)
        )
    ]
    # the run's own forbids of its pairs (its edits' forbids)
    excluded += [
        (str(p), str(r), "forbid", reason or "")
        for p, r, reason in session.execute(
            select(DraftRule.paper_id, DraftRule.reviewer_id, DraftRule.reason)
            .join(
                AssignmentPair,
                and_(
                    AssignmentPair.assignment_id == DraftRule.assignment_id,
                    AssignmentPair.paper_id == DraftRule.paper_id,
                    AssignmentPair.reviewer_id == DraftRule.reviewer_id,
                ),
            )
            .where(DraftRule.assignment_id == row.id, DraftRule.kind == "forbid")
            .order_by(DraftRule.paper_id, DraftRule.reviewer_id)
        )
    ]
    members = pool_members(venue_id, row.pool)
    pins = pins_with_draft(session, row)
    if row.pool == SENIOR_AREA_CHAIRS:
        # its items are area chairs: the venue's pair tables name papers, not them
        excluded = []
        pins = pins.iloc[0:0]
    if pairs is None:
        pairs = run_pairs(session, row.id)
    excluded = [*excluded, *cross_level_exclusions(session, row, pairs)]
    papers = run_items(session, row)
    reviewers = sorted(str(r) for r in session.scalars(members))
    limits = run_limits(session, row)
    max_load, min_load = limits.max_array(reviewers), limits.min_array(reviewers)
    # persons with pairs who have left the run's pool: max load 0 (their pairs are to go)
    outside = sorted(set(pairs["reviewer_id"].astype(str)) - set(reviewers))
    if outside:
        tops = dict(zip(reviewers, max_load.tolist(), strict=True))
        lows = dict(zip(reviewers, min_load.tolist(), strict=True))
        reviewers = sorted([*reviewers, *outside])
        max_load = np.array([tops.get(r, 0) for r in reviewers], dtype=np.int64)
        min_load = np.array([lows.get(r, 0) for r in reviewers], dtype=np.int64)
    found = check_assignment(
        pairs["paper_id"],
        pairs["reviewer_id"],
        paper_ids=papers,
        demand=limits.demand_array(papers),
        reviewer_ids=reviewers,
        min_load=min_load,
        max_load=max_load,
        exclusions=exclusions_frame(excluded),
        pins=pins,
    )
    return _name_withdrawn(session, venue_id, row.pool, found, set(outside))


def _name_withdrawn(
    session: Session, venue_id: str, pool: str, found: list[Violation], outside: set[str]
) -> list[Violation]:
    """The demand and load violations of withdrawn records
    (:mod:`reviewer_recommender.services.records`) and of persons ``outside`` the run's
    pool (:mod:`reviewer_recommender.services.memberships`) said as such: their pairs are
    to be removed."""
    from reviewer_recommender.services.records import withdrawn_ids

    if not any(v.kind in ("demand", "max_load") for v in found):
        return found
    if outside:
        found = [
            replace(v, detail=f"not in the {pool} pool: its pairs are to be removed ({v.detail})")
            if v.kind == "max_load" and v.reviewer_id in outside
            else v
            for v in found
        ]
    gone_persons = set(withdrawn_ids(session, venue_id, "reviewers"))
    persons = gone_persons - outside  # said above
    items = (
        gone_persons
        if pool == SENIOR_AREA_CHAIRS
        else set(withdrawn_ids(session, venue_id, "papers"))
    )
    named = []
    for v in found:
        gone = (v.kind == "demand" and v.paper_id in items) or (
            v.kind == "max_load" and v.reviewer_id in persons
        )
        named.append(
            replace(v, detail=f"withdrawn: its pairs are to be removed ({v.detail})") if gone else v
        )
    return named


def describe(violation: Violation) -> str:
    return violation.describe()


def refusal(
    row: AssignmentRow,
    found: Sequence[Violation],
    action: str,
    session: Session | None = None,
) -> StateConflict:
    """409 listing the violations (at most LISTED, named when ``session`` is given) and
    what the chair can do."""
    shown = "; ".join(describe(v) for v in found[:5])
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    message = (
        f"{action} assignment {row.id} (version {row.version}) refused: it breaks "
        f"{len(found)} of the venue's current hard constraint{'s' if len(found) != 1 else ''}"
        f": {shown}{more}. Re-solve for a draft that respects them, or override each listed "
        "item (overrides: [{paper_id, reviewer_id, reason}], paper_id or reviewer_id null "
        "for loads and demand)"
    )
    listed = [v.to_dict() for v in found[:LISTED]]
    if session is not None:
        listed = name_rows(session, row.venue_id, listed)
    return StateConflict(
        "constraint_violations",
        {
            "message": message,
            "assignment_id": row.id,
            "version": row.version,
            "total": len(found),
            "violations": listed,
        },
        total=len(found),
        violations=listed,
    )


def uncovered(
    found: Sequence[Violation], overrides: Sequence[tuple[str | None, str | None]]
) -> tuple[list[Violation], list[tuple[str | None, str | None]]]:
    """Violations no override names, and overrides that name no violation."""
    wanted = set(overrides)
    targets = {v.target for v in found}
    return [v for v in found if v.target not in wanted], [o for o in overrides if o not in targets]


def claim_version(
    session: Session, row: AssignmentRow, *, states: Sequence[str], **values: Any
) -> None:
    """Move ``row`` on from the version it was read at, atomically: bump its version (and
    set ``values``) only if nobody changed it meanwhile and it is still in ``states``;
    409 otherwise (concurrent edit or publication). Works alike on SQLite and PostgreSQL."""
    result = session.execute(
        update(AssignmentRow)
        .where(
            AssignmentRow.id == row.id,
            AssignmentRow.version == row.version,
            AssignmentRow.state.in_(list(states)),
        )
        .values(version=AssignmentRow.version + 1, **values)
        .execution_options(synchronize_session=False)
    )
    if getattr(result, "rowcount", 0) != 1:
        session.rollback()
        raise StateConflict(
            "stale_version",
            f"assignment {row.id} changed while this request ran (another edit or a "
            "publication); reload it and try again",
        )
    session.refresh(row)


def publish(
    session: Session,
    row: AssignmentRow,
    *,
    version: int,
    overrides: Sequence[tuple[str | None, str | None, str]],
    actor: str,
) -> AssignmentRow:
    """Make ``row`` the live run of its pool (see the module rules); the caller commits."""
    if row.state == "live":
        raise StateConflict("already_live", f"assignment {row.id} is already the live assignment")
    if version != row.version:
        raise StateConflict(
            "stale_version",
            f"assignment {row.id} is at version {row.version}, but the confirmation names "
            f"version {version}: it changed since it was reviewed; review it again and "
            "confirm the current version",
            version=row.version,
        )
    found = violations(session, row)
    targets = [(paper, reviewer) for paper, reviewer, _reason in overrides]
    if len(set(targets)) != len(targets):
        raise InvalidRequest("validation_error", "overrides: an item is listed twice")
    missing, stray = uncovered(found, targets)
    if stray:
        raise InvalidRequest(
            "validation_error",
            "overrides name items that break no hard constraint: "
            + "; ".join(f"paper {p!r}, reviewer {r!r}" for p, r in stray[:10])
            + " (check the ids, or send only the items the refusal listed)",
        )
    if missing:
        raise refusal(row, missing, "publishing", session)
    rollback = row.state == "superseded"
    now = utcnow()
    # The run this publication replaces is the one its own UPDATE supersedes, never one read
    # before: a publication racing this one may have replaced that in between (on SQLite the
    # UPDATE is the transaction's first write, so it runs under the write lock; on
    # PostgreSQL it sees every commit before it, and a run made live by a transaction still
    # open makes the one-live-run index refuse this one).
    replaced = session.scalars(
        update(AssignmentRow)
        .where(
            AssignmentRow.venue_id == row.venue_id,
            AssignmentRow.pool == row.pool,
            AssignmentRow.state == "live",
            AssignmentRow.id != row.id,
        )
        .values(state="superseded", superseded_at=now)
        .returning(AssignmentRow.id)
        .execution_options(synchronize_session=False)
    ).all()
    previous = replaced[0] if replaced else None
    # the version is not bumped here: the published run is the version the chair confirmed;
    # the state is the one read (so that ``rollback`` says what happened)
    result = session.execute(
        update(AssignmentRow)
        .where(
            AssignmentRow.id == row.id,
            AssignmentRow.version == version,
            AssignmentRow.state == row.state,
        )
        .values(state="live", deployed_at=now, deployed_by=actor, superseded_at=None)
        .execution_options(synchronize_session=False)
    )
    if getattr(result, "rowcount", 0) != 1:
        session.rollback()
        raise StateConflict(
            "stale_version",
            f"assignment {row.id} changed while it was being published; reload and confirm again",
        )
    by_target = {(p, r): reason for p, r, reason in overrides}
    audit(
        session,
        row.venue_id,
        actor,
        "assignment.deploy",
        assignment_id=row.id,
        version=version,
        previous_live_id=previous,
        rollback=rollback,
        overridden=[{**v.to_dict(), "reason": by_target[v.target]} for v in found],
    )
    session.flush()
    session.refresh(row)
    return row


# ---- edited runs ---------------------------------------------------------------------------


def solve_candidate(session: Session, row: AssignmentRow, paper_id: str, reviewer_id: str) -> bool:
    """Was (paper, reviewer) a candidate pair of the solve that produced ``row``? A pair
    scored on request later (``requested``) or below the run's ``min_score`` counts as not."""
    if row.affinity_run_id is None:
        return False
    stored = session.get(AffinityScore, (row.affinity_run_id, paper_id, reviewer_id))
    if stored is None or stored.requested:
        return False
    min_score = (row.parameters or {}).get("min_score")
    return min_score is None or float(stored.score) >= float(min_score)


def edited_summary(
    session: Session,
    row: AssignmentRow,
    *,
    tightening: bool,
    found: Sequence[Violation] | None = None,
    pairs: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """``row``'s summary after an edit
    (:func:`reviewer_recommender.services.edits.edited_summary`): objective
    and statistics recomputed from its pairs, the solver's bound kept and labelled
    (``bound_of``), whether it still holds (``bound_holds``), and whether the pairs satisfy
    the venue's current hard constraints (``constraints``, from :func:`violations`, or
    ``found`` when the caller already has them); ``pairs``: the run's pairs when the caller
    already read them (:func:`run_pairs`: a whole run is the slow part at 10,000 papers)."""
    reviewers = list(session.scalars(pool_members(row.venue_id, row.pool)))
    job = f"job #{row.job_id}" if row.job_id is not None else "its solve"
    if pairs is None:
        pairs = run_pairs(session, row.id)
    return services_edited_summary(
        row.summary or {},
        pairs,
        reviewers,
        violations(session, row, pairs) if found is None else found,
        tightening=tightening,
        bound_of=f"the problem solved by {job}, before edits",
    )
