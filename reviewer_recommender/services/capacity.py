"""Whether a solve can fit by counting alone, before it is queued: the solve form's live
warning and the venue's suggested defaults. The same count as a solve's refusal
(:func:`reviewer_recommender.services.assignment.capacity`, stored demands and max loads
counted)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import InvalidRequest
from reviewer_recommender.services.limits import resolve_limits
from reviewer_recommender.services.params import AssignmentIn
from reviewer_recommender.services.pools import pool_person_ids
from reviewer_recommender.storage.models import SubmissionRow


def _ids(session: Session, model: Any, venue_id: str) -> list[str]:
    return [str(i) for i in session.scalars(select(model.id).where(model.venue_id == venue_id))]


def capacity_check(session: Session, venue_id: str, body: AssignmentIn) -> dict[str, Any]:
    """``CapacityOut`` for a solve with ``body`` in the venue as it is now."""
    from reviewer_recommender.services.assignment import capacity, capacity_shortfall

    parameters = body.solve_parameters()
    limits = resolve_limits(session, venue_id, parameters)
    resolved = body.model_copy(
        update={"demand": dict(limits.demand), "custom_max_load": dict(limits.max_load)}
    )
    if body.pool == "senior_area_chairs":
        from reviewer_recommender.services.hierarchy import area_chair_items

        _run, papers = area_chair_items(session, venue_id)
    else:
        papers = _ids(session, SubmissionRow, venue_id)
    reviewers = pool_person_ids(session, venue_id, body.pool)
    totals = capacity(resolved, papers, reviewers)
    return {
        "fits": totals.fits,
        "papers": totals.papers,
        "reviewers": totals.reviewers,
        "demand_total": totals.demand,
        "capacity_total": totals.capacity,
        "min_load_total": totals.min_load,
        "stored_demands": limits.stored_demands,
        "stored_max_loads": limits.stored_max_loads,
        "shortfall": totals.shortfall,
        "smallest_max_load": totals.smallest_max_load,
        "message": capacity_shortfall(resolved, papers, reviewers),
    }


def venue_capacity(
    session: Session,
    venue_id: str,
    *,
    reviewers_per_paper: int,
    min_load: int,
    max_load: int,
    pool: str = "reviewers",
) -> dict[str, Any]:
    """:func:`capacity_check` for a solve with these options (422 when ``min_load`` exceeds
    ``max_load``: no reviewer could meet both)."""
    if min_load > max_load:
        raise InvalidRequest(
            "validation_error",
            f"min_load: {min_load} exceeds the maximum load {max_load}; no reviewer could "
            "meet both",
        )
    body = AssignmentIn.model_validate(
        {
            "reviewers_per_paper": reviewers_per_paper,
            "min_load": min_load,
            "max_load": max_load,
            "pool": pool,
        }
    )
    return capacity_check(session, venue_id, body)


def solve_defaults(session: Session, venue_id: str) -> dict[str, Any]:
    """The solve form's defaults for the venue: the service's, with the max load raised to
    the smallest that fits when the default does not (``SolveDefaultsOut``)."""
    defaults = AssignmentIn()
    check = capacity_check(session, venue_id, defaults)
    max_load = defaults.max_load
    if not check["fits"] and check["smallest_max_load"] is not None:
        max_load = max(max_load, int(check["smallest_max_load"]))
        check = capacity_check(
            session, venue_id, defaults.model_copy(update={"max_load": max_load})
        )
    return {
        "reviewers_per_paper": defaults.reviewers_per_paper,
        "min_load": defaults.min_load,
        "max_load": max_load,
        "fits": bool(check["fits"]),
    }
