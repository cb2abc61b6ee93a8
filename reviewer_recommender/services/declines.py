"""Declines: a person declines a paper assigned to them, and the chairs turn the open
declines into an emergency re-assignment draft with one action.

A person declines one of their papers in the live run of their pool, with a reason
(:func:`decline_paper`; any other paper id is answered like an unknown paper). The decline
stays ``open`` until a chair turns the open declines of a pool's live run into a
re-assignment draft (:func:`reassign_declines`: the declined pairs are the re-assignment's
removed pairs, stored as the chairs' forbids, through
:func:`reviewer_recommender.services.modes.reassign_live_run`); they are then
``reassigned``, naming the draft, which is published through the usual deploy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import InvalidRequest, StateConflict, not_found
from reviewer_recommender.jobs.runner import JobRunner
from reviewer_recommender.services.hierarchy import live_run_of
from reviewer_recommender.services.persons import assigned_papers, person_of
from reviewer_recommender.services.pools import DEFAULT_POOL, check_pool
from reviewer_recommender.services.principals import Principal
from reviewer_recommender.storage.models import AssignmentPair, AssignmentRow, Decline, Job, utcnow
from reviewer_recommender.storage.names import lookup
from reviewer_recommender.storage.repository import Paged, audit, query_page, start_job


def decline_view(decline: Decline) -> dict[str, Any]:
    """What the person sees of their decline."""
    return {
        "id": decline.id,
        "paper_id": decline.paper_id,
        "assignment_id": decline.assignment_id,
        "reason": decline.reason,
        "state": decline.state,
        "created_at": decline.created_at,
    }


def decline_paper(
    session: Session, principal: Principal, paper_id: str, reason: str
) -> dict[str, Any]:
    """Decline one of the person's papers in their pool's live run (audited, committed);
    declining it again while open updates the reason. 404 for a paper not assigned to
    them, 409 once the decline was turned into a re-assignment."""
    person = person_of(principal)
    live_id, assigned = assigned_papers(session, person)
    if live_id is None or paper_id not in assigned:
        raise not_found("paper", paper_id)
    decline = session.scalar(
        select(Decline).where(
            Decline.assignment_id == live_id,
            Decline.paper_id == paper_id,
            Decline.person_id == person.person_id,
        )
    )
    if decline is not None and decline.state != "open":
        raise StateConflict(
            "already_reassigned",
            f"your decline of paper {paper_id!r} was already turned into a re-assignment",
        )
    if decline is None:
        decline = Decline(
            venue_id=person.venue_id,
            pool=person.pool,
            assignment_id=live_id,
            paper_id=paper_id,
            person_id=person.person_id,
            state="open",
            resolved_by="",
        )
        session.add(decline)
    decline.reason = reason
    audit(
        session,
        person.venue_id,
        principal.name,
        "decline.create",
        paper_id=paper_id,
        person_id=person.person_id,
        pool=person.pool,
        assignment_id=live_id,
        reason=reason,
    )
    session.commit()
    session.refresh(decline)
    return decline_view(decline)


def list_declines(
    session: Session,
    venue_id: str,
    *,
    pool: str | None,
    state: str | None,
    limit: int,
    offset: int,
) -> Paged[dict[str, Any]]:
    """The venue's declines, newest first (of one pool, in one state), with names and
    whether their run is still its pool's live run."""
    query = select(Decline).where(Decline.venue_id == venue_id).order_by(Decline.id.desc())
    if pool is not None:
        query = query.where(Decline.pool == check_pool(pool))
    if state is not None:
        query = query.where(Decline.state == state)
    found = query_page(session, query, limit, offset)
    live = dict(
        session.execute(
            select(AssignmentRow.pool, AssignmentRow.id).where(
                AssignmentRow.venue_id == venue_id, AssignmentRow.state == "live"
            )
        ).all()
    )
    names = lookup(
        session,
        venue_id,
        [d.paper_id for d in found.items],
        [d.person_id for d in found.items],
    )
    items = [
        {
            **decline_view(d),
            "paper_title": names.title(d.paper_id),
            "person_id": d.person_id,
            "person_name": names.name(d.person_id),
            "pool": d.pool,
            "resolved_at": d.resolved_at,
            "resolved_by": d.resolved_by,
            "reassignment_id": d.reassignment_id,
            "on_live_run": live.get(d.pool) == d.assignment_id,
        }
        for d in found.items
    ]
    return Paged(items, found.total, limit, offset)


def open_declines(
    session: Session, venue_id: str, pool: str, expected_live: int | None = None
) -> tuple[AssignmentRow, list[Decline]]:
    """The pool's live run and its open declines (of pairs still in it), oldest first.
    409 while the pool has no live run, or another than ``expected_live``
    (:func:`reviewer_recommender.services.modes.check_live_unchanged`); 422 when none of
    its declines is open."""
    from reviewer_recommender.services.modes import check_live_unchanged

    check_pool(pool)
    live = live_run_of(session, venue_id, pool)
    if live is None:
        of_pool = "" if pool == DEFAULT_POOL else f" of pool {pool}"
        raise StateConflict(None, f"venue {venue_id!r} has no live assignment{of_pool}")
    check_live_unchanged(live, expected_live)
    declines = list(
        session.scalars(
            select(Decline)
            .join(
                AssignmentPair,
                (AssignmentPair.assignment_id == Decline.assignment_id)
                & (AssignmentPair.paper_id == Decline.paper_id)
                & (AssignmentPair.reviewer_id == Decline.person_id),
            )
            .where(
                Decline.venue_id == venue_id,
                Decline.assignment_id == live.id,
                Decline.state == "open",
            )
            .order_by(Decline.id)
        )
    )
    if not declines:
        raise InvalidRequest(
            None,
            f"no open decline of the live {pool} run #{live.number or live.id} to re-assign",
            field="pool",
        )
    return live, declines


def start_declines_reassignment(
    runner: JobRunner, session: Session, venue_id: str, *, pool: str, reason: str, actor: str
) -> Job:
    """Check that the pool's live run has open declines (:func:`open_declines`: refused at
    once, nothing queued) and queue their re-assignment as a ``reassignment`` job
    (:func:`reassign_declines` against the same live run, with the declines open when it
    runs); its result names the new draft and the declines it settles."""
    from reviewer_recommender.services.modes import REASSIGNMENT_JOB

    live, _declines = open_declines(session, venue_id, pool)
    params = {"source": "declines", "pool": pool, "live_assignment_id": live.id, "reason": reason}
    return start_job(runner, session, venue_id, REASSIGNMENT_JOB, params, actor)


def reassign_declines(
    session: Session,
    venue_id: str,
    *,
    pool: str,
    reason: str,
    actor: str,
    expected_live: int | None = None,
    before_commit: Callable[[AssignmentRow, dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Turn the open declines of the pool's live run into an emergency re-assignment draft
    (:func:`reviewer_recommender.services.modes.reassign_live_run` with the declined pairs
    removed), marking them ``reassigned`` with the draft, in one transaction (audited):
    what changed, the draft's id and the declines settled (JSON). The refusals of
    :func:`open_declines`; 409 ``live_run_changed`` when ``expected_live`` is no longer
    the live run. ``before_commit(draft, outcome)`` as for ``reassign_live_run``."""
    from reviewer_recommender.services.modes import reassign_live_run

    live, declines = open_declines(session, venue_id, pool, expected_live)
    words = "; ".join(f"{d.person_id} declined {d.paper_id}: {d.reason}" for d in declines)
    why = reason or f"declines: {words}"[:1000]
    settled = [d.id for d in declines]

    def settle(draft: AssignmentRow, outcome: dict[str, Any]) -> None:
        now = utcnow()
        for decline in declines:
            decline.state = "reassigned"
            decline.resolved_at = now
            decline.resolved_by = actor
            decline.reassignment_id = draft.id
        audit(
            session,
            venue_id,
            actor,
            "declines.reassign",
            pool=pool,
            assignment_id=draft.id,
            derived_from=live.id,
            declines=settled,
        )
        if before_commit is not None:
            before_commit(draft, {**outcome, "declines": settled})

    result = reassign_live_run(
        session,
        venue_id,
        withdraw=[],
        remove=[(d.paper_id, d.person_id) for d in declines],
        reason=why,
        actor=actor,
        pool=pool,
        expected_live=expected_live,
        before_commit=settle,
    )
    return {**result, "declines": settled}
