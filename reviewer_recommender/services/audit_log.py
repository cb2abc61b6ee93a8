"""A venue's audit log as the caller may read it (see
:mod:`reviewer_recommender.services.visibility`)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from reviewer_recommender.services.audit_text import named_ids
from reviewer_recommender.services.principals import Principal
from reviewer_recommender.services.visibility import audit_actions, audit_view
from reviewer_recommender.storage.models import AuditEntry
from reviewer_recommender.storage.names import lookup
from reviewer_recommender.storage.repository import Paged, query_page


def audit_log(
    session: Session, venue_id: str, principal: Principal, limit: int, offset: int
) -> Paged[dict[str, Any]]:
    """The venue's entries newest first, each with its one-sentence summary (``AuditOut``);
    viewers get publications only, reduced to what they may see."""
    query = select(AuditEntry).where(AuditEntry.venue_id == venue_id).order_by(AuditEntry.id.desc())
    actions = audit_actions(principal, venue_id)
    if actions is not None:
        query = query.where(AuditEntry.action.in_(sorted(actions)))
    found = query_page(session, query, limit, offset)
    ids = [named_ids(e.detail or {}) for e in found.items]
    names = lookup(
        session,
        venue_id,
        [p for papers, _ in ids for p in papers],
        [r for _, rs in ids for r in rs],
    )
    items = [audit_view(e, principal, venue_id, names) for e in found.items]
    return Paged(items, found.total, limit, offset)
