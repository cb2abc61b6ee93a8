"""Leaving a pool: a person taken out of one pool stays in their others.

A person (a reviewer record) belongs to one or more pools
(:mod:`reviewer_recommender.services.pools`). Two things take someone out of a pool P:

- a chair removes that one membership (:func:`leave_pool`,
  ``DELETE /venues/{venue_id}/reviewers/{reviewer_id}/pools/{pool}``);
- a replacing upload of P (``withdraw_absent``) leaves them out of the file
  (:func:`split_absent` sorts the persons it leaves out, :func:`remove_members` applies).

One set of rules for both:

- **Their only pool.** A person whose only pool is P does not leave it: a person in no pool
  counts as a reviewer (:func:`reviewer_recommender.storage.repository.pool_members`), so
  leaving their last pool would make them one. A replace withdraws them instead, venue-wide,
  as it always did (a single-pool venue's replace is unchanged); the route refuses (409
  ``last_pool``) and says to withdraw them.
- **The live run.** While P's live (deployed) run assigns them, they stay in P: 409
  ``member_assigned_live`` naming the run, the persons and their pairs, with the body of the
  emergency re-assignment that frees them (``POST /venues/{venue_id}/assignments/live/
  reassign``). Leaving would end their token's access to the papers that run still gives them
  (a person token works only in its pool) while the venue's checks no longer see those pairs.
- **Drafts and superseded runs** keep their pairs; their checks
  (:func:`reviewer_recommender.services.publishing.violations`) count a person outside the
  run's pool as having max load 0 ("not in the ... pool: its pairs are to be removed"), so
  neither deploying a draft nor rolling back publishes them unnoticed.

Their stored max load in the pool goes with the membership (bids, conflicts and pins are the
venue's, whatever the pool, and stay). Leaving a pool marks the record changed
(``updated_at``), so a replace preview made before is stale
(:func:`reviewer_recommender.services.upload_diff.records_version`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from reviewer_recommender.errors import NotFound, StateConflict
from reviewer_recommender.services.hierarchy import live_run_of
from reviewer_recommender.services.pools import POOL_WORDS, check_pool, pools_of
from reviewer_recommender.services.records import RunPairs, runs_holding
from reviewer_recommender.storage.models import (
    AssignmentPair,
    AssignmentRow,
    PoolMember,
    ReviewerMaxLoad,
    ReviewerRow,
    utcnow,
)
from reviewer_recommender.storage.repository import audit, require_reviewer

_CHUNK = 500


@dataclass(frozen=True)
class Absent:
    """The active persons of a pool that a replacing upload leaves out, sorted:
    ``withdraw``, whose only pool it is (withdrawn venue-wide), ``leave``, who are in
    another pool too (they leave this one only), and ``held``, those of ``leave`` whom the
    pool's live run assigns (the replace is refused while it does)."""

    withdraw: list[str] = field(default_factory=list)
    leave: list[str] = field(default_factory=list)
    held: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PoolLeave:
    """A person out of one pool: the pools they are in now and the draft runs of that
    pool still holding their pairs (their checks now flag them as to be removed)."""

    id: str
    pool: str
    pools: list[str]
    runs: list[RunPairs]


def live_pairs(
    session: Session, venue_id: str, pool: str, person_ids: Sequence[str]
) -> tuple[AssignmentRow | None, dict[str, int]]:
    """The pool's live run and how many of its pairs each of ``person_ids`` holds (only
    those holding some)."""
    wanted = sorted(set(person_ids))
    live = live_run_of(session, venue_id, pool) if wanted else None
    if live is None:
        return None, {}
    held: dict[str, int] = {}
    for start in range(0, len(wanted), _CHUNK):
        for person, count in session.execute(
            select(AssignmentPair.reviewer_id, func.count())
            .where(
                AssignmentPair.assignment_id == live.id,
                AssignmentPair.reviewer_id.in_(wanted[start : start + _CHUNK]),
            )
            .group_by(AssignmentPair.reviewer_id)
        ):
            held[str(person)] = int(count)
    return live, dict(sorted(held.items()))


def split_absent(session: Session, venue_id: str, pool: str, absent: Sequence[str]) -> Absent:
    """Sort the persons a replacing upload of ``pool`` leaves out (see :class:`Absent`)."""
    if not absent:
        return Absent()
    pools = pools_of(session, venue_id, sorted(set(absent)))
    leave = sorted(p for p, theirs in pools.items() if any(o != pool for o in theirs))
    leaving = set(leave)
    withdraw = sorted(p for p in pools if p not in leaving)
    _live, held = live_pairs(session, venue_id, pool, leave)
    return Absent(withdraw, leave, sorted(held))


def refuse_held(
    venue_id: str, pool: str, live: AssignmentRow | None, held: dict[str, int]
) -> StateConflict:
    """409 ``member_assigned_live``: the persons the pool's live run still assigns, with
    the body of the emergency re-assignment without them."""
    number = live.number if live is not None else None
    run = f"live run #{number}" if number is not None else "the live run"
    named = ", ".join(f"{p} ({n} pair{'s' if n != 1 else ''})" for p, n in held.items())
    body = {"pool": pool, "withdraw": list(held), "reason": f"leaving the {pool} pool"}
    return StateConflict(
        "member_assigned_live",
        f"{run} of the {pool} pool assigns {named}: re-assign it without them first "
        f"(POST /venues/{venue_id}/assignments/live/reassign with the body given, then "
        "deploy that draft), then take them out of the pool",
        pool=pool,
        assignment_id=live.id if live is not None else None,
        number=number,
        persons=held,
        reassign=body,
    )


def remove_members(session: Session, venue_id: str, pool: str, person_ids: Sequence[str]) -> int:
    """Take persons out of one pool, with their stored max load in it, in the caller's
    transaction (the rules are the caller's: see the module); marks their records changed.
    Returns how many left."""
    wanted = sorted(set(person_ids))
    left = 0
    now = utcnow()
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        result: Any = session.execute(
            delete(PoolMember).where(
                PoolMember.venue_id == venue_id,
                PoolMember.pool == pool,
                PoolMember.person_id.in_(chunk),
            )
        )
        left += int(result.rowcount or 0)
        session.execute(
            delete(ReviewerMaxLoad).where(
                ReviewerMaxLoad.venue_id == venue_id,
                ReviewerMaxLoad.pool == pool,
                ReviewerMaxLoad.reviewer_id.in_(chunk),
            )
        )
        session.execute(
            update(ReviewerRow)
            .where(ReviewerRow.venue_id == venue_id, ReviewerRow.id.in_(chunk))
            .values(updated_at=now)
        )
    return left


def leave_pool(session: Session, venue_id: str, person_id: str, pool: str, actor: str) -> PoolLeave:
    """Take a person out of one pool (audited ``reviewer.leave_pool``), with their stored
    max load in it; they stay in their other pools, with their record, history and scores.
    404 when the person is not stored or not in the pool; 409 ``last_pool`` when it is
    their only pool (withdraw them instead); 409 ``member_assigned_live`` while the pool's
    live run assigns them (re-assign it without them first). Their pairs in the pool's
    drafts and superseded runs stay, flagged by those runs' checks as to be removed."""
    check_pool(pool)
    require_reviewer(session, venue_id, person_id)
    theirs = pools_of(session, venue_id, [person_id])[person_id]
    words = POOL_WORDS[pool]
    if pool not in theirs:
        raise NotFound(
            "not_in_pool",
            f"person {person_id!r} is not in the {pool} pool of venue {venue_id!r} "
            f"(their pools: {', '.join(theirs) or 'none'})",
            pool=pool,
            pools=theirs,
        )
    if theirs == [pool]:
        raise StateConflict(
            "last_pool",
            f"the {pool} pool is the only pool of person {person_id!r}: a person in no pool "
            f"counts as a reviewer, so they cannot leave it; withdraw them instead (kept with "
            f"their history, no longer assigned as a {words} or in any pool)",
            pool=pool,
            pools=theirs,
        )
    live, held = live_pairs(session, venue_id, pool, [person_id])
    if held:
        raise refuse_held(venue_id, pool, live, held)
    remove_members(session, venue_id, pool, [person_id])
    runs = [r for r in runs_holding(session, venue_id, "reviewers", person_id) if r.pool == pool]
    remaining = [p for p in theirs if p != pool]
    audit(
        session,
        venue_id,
        actor,
        "reviewer.leave_pool",
        id=person_id,
        pool=pool,
        pools=remaining,
        runs=[r.assignment_id for r in runs],
        pairs=sum(len(r.pairs) for r in runs),
    )
    session.commit()
    return PoolLeave(person_id, pool, remaining, runs)
