"""The venue's standing pair constraints as resources: pins (forced in every solve) and
forbids (chairs' exclusions in every solve), listed and removed at venue level. Removing
one changes no run; within a draft the ``unpin``/``unforbid`` edits do that, undoably
(:mod:`reviewer_recommender.services.draft_edits`)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import not_found
from reviewer_recommender.storage.models import Conflict, Pin
from reviewer_recommender.storage.repository import Paged, audit, named_page, of_pair


def list_pins(
    session: Session,
    venue_id: str,
    *,
    paper_id: str | None,
    reviewer_id: str | None,
    limit: int,
    offset: int,
) -> Paged[dict[str, Any]]:
    """The venue's pins (of one paper and/or reviewer when given), by paper then reviewer."""
    query = of_pair(select(Pin).where(Pin.venue_id == venue_id), Pin, paper_id, reviewer_id)
    return named_page(
        session,
        venue_id,
        query.order_by(Pin.paper_id, Pin.reviewer_id),
        limit,
        offset,
        lambda p: {
            "paper_id": p.paper_id,
            "reviewer_id": p.reviewer_id,
            "created_by": p.created_by,
        },
    )


def list_forbids(
    session: Session,
    venue_id: str,
    *,
    paper_id: str | None,
    reviewer_id: str | None,
    limit: int,
    offset: int,
) -> Paged[dict[str, Any]]:
    """The venue's forbids with their reasons, by paper then reviewer."""
    query = select(Conflict).where(Conflict.venue_id == venue_id, Conflict.source == "forbid")
    query = of_pair(query, Conflict, paper_id, reviewer_id)
    return named_page(
        session,
        venue_id,
        query.order_by(Conflict.paper_id, Conflict.reviewer_id),
        limit,
        offset,
        lambda c: {"paper_id": c.paper_id, "reviewer_id": c.reviewer_id, "reason": c.reason},
    )


def delete_pin(session: Session, venue_id: str, paper_id: str, reviewer_id: str, actor: str) -> int:
    """Remove a pin (404 when there is none), audited and committed; returns 1."""
    row = session.get(Pin, (venue_id, paper_id, reviewer_id))
    if row is None:
        raise not_found("pin", f"{paper_id}/{reviewer_id}")
    session.delete(row)
    audit(session, venue_id, actor, "pins.delete", paper_id=paper_id, reviewer_id=reviewer_id)
    session.commit()
    return 1


def delete_forbid(
    session: Session, venue_id: str, paper_id: str, reviewer_id: str, actor: str
) -> int:
    """Lift a forbid (404 when there is none), audited and committed; returns 1."""
    row = session.get(Conflict, (venue_id, paper_id, reviewer_id, "forbid"))
    if row is None:
        raise not_found("forbid", f"{paper_id}/{reviewer_id}")
    reason = row.reason
    session.delete(row)
    audit(
        session,
        venue_id,
        actor,
        "forbids.delete",
        paper_id=paper_id,
        reviewer_id=reviewer_id,
        forbid_reason=reason,
    )
    session.commit()
    return 1
