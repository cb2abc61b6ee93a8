"""Who sees what within a venue (the README's visibility table; tests assert it).

Chairs and admins see everything of the venue. Viewers see the live assignment and what it
needs: the venue, reviewer profiles and submissions, affinity scores and their explanations,
the live run (pairs, statistics, per-paper view, export) and who published it. They see
nothing of a chair's work in progress or of reviewers' private input:

- drafts and superseded runs: absent from lists, 404 when asked for by id;
- jobs (their parameters, logs and results name drafts): absent from lists, 404 by id;
- the audit log: only publication entries, reduced to which run went live, its version,
  the run it replaced and whether it was a rollback (no reasons, no overridden pairs);
- bids and conflict reasons: ``bid`` and ``conflict`` are null on every scored pair;
  ``/conflicts``, stored demand and max loads and the run check are 403.
"""

from __future__ import annotations

from typing import Any

from reviewer_recommender.services.audit_text import summarize
from reviewer_recommender.services.principals import Principal
from reviewer_recommender.storage.models import AuditEntry
from reviewer_recommender.storage.names import Names

PUBLIC_AUDIT_ACTIONS = frozenset({"assignment.deploy"})
PUBLIC_AUDIT_DETAIL = ("assignment_id", "version", "previous_live_id", "rollback")


def visible_states(principal: Principal, venue_id: str) -> tuple[str, ...] | None:
    """Assignment states the caller may see (None: all)."""
    return None if principal.sees_drafts(venue_id) else ("live",)


def sees_jobs(principal: Principal, venue_id: str) -> bool:
    return principal.sees_drafts(venue_id)


def sees_marks(principal: Principal, venue_id: str) -> bool:
    """Bids and conflict reasons of pairs."""
    return principal.sees_drafts(venue_id)


def audit_actions(principal: Principal, venue_id: str) -> frozenset[str] | None:
    """Audit actions the caller may see (None: all)."""
    return None if principal.sees_drafts(venue_id) else PUBLIC_AUDIT_ACTIONS


def audit_view(
    entry: AuditEntry, principal: Principal, venue_id: str, names: Names | None = None
) -> dict[str, Any]:
    """An audit entry as the caller may see it, with its one-sentence ``summary`` (made
    from what the caller sees only)."""
    detail = dict(entry.detail or {})
    if not principal.sees_drafts(venue_id):
        detail = {k: detail[k] for k in PUBLIC_AUDIT_DETAIL if k in detail}
    return {
        "id": entry.id,
        "venue_id": entry.venue_id,
        "actor": entry.actor,
        "action": entry.action,
        "summary": summarize(entry.action, detail, names or Names()),
        "detail": detail,
        "at": entry.at,
    }
