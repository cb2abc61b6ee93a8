"""Conflicts of interest managed by the chairs of a venue: the venue's detection policy
(co-author window, institution, e-mail domain) with a preview of the count it yields,
dismissing and restoring a conflict with a reason, and conflicts a chair declares.

Detection stays the one rule (:func:`reviewer_recommender.services.conflicts.detect_conflicts`,
over :func:`recommender.conflicts.detect_conflicts`); this module calls it with the venue's
policy on the venue's stored persons and submissions. A dismissed conflict leaves the
``conflicts`` table for ``conflict_dismissals`` (so every check, solve and preview stops
blocking the pair) and re-detection leaves it out until a chair restores it. Every change
is audited.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd
from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import Session

from recommender.corpus import Reviewer
from reviewer_recommender.errors import InvalidRequest, StateConflict, not_found
from reviewer_recommender.services.conflicts import conflict_constraints, detect_conflicts
from reviewer_recommender.services.params import ConflictParams
from reviewer_recommender.storage.models import (
    POOLS,
    Conflict,
    ConflictDismissal,
    ConflictPolicy,
    Venue,
    utcnow,
)
from reviewer_recommender.storage.repository import (
    Paged,
    audit,
    load_corpus,
    named_page,
    of_pair,
    require_paper,
    require_reviewer,
)

# the sources a chair may dismiss (bids and forbids are lifted where they are made)
DISMISSIBLE = ("detected", "uploaded", "declared")
POLICY_FIELDS = ("coauthor_window_years", "coauthors", "same_institution", "same_email_domain")
INSERT_ROWS = 5000


def venue_policy(session: Session, venue_id: str) -> ConflictParams:
    """The venue's stored policy (the defaults where it stores none)."""
    if session.get(Venue, venue_id) is None:
        raise not_found("venue", venue_id)
    stored = session.get(ConflictPolicy, venue_id)
    return ConflictParams.model_validate(stored.policy if stored is not None else {})


def policy_out(policy: ConflictParams) -> dict[str, Any]:
    return {name: getattr(policy, name) for name in POLICY_FIELDS}


def _persons(session: Session, venue_id: str) -> tuple[list[Reviewer], list[Any]]:
    """Every person of the venue (any pool, once) and its submissions."""
    seen: dict[str, Reviewer] = {}
    submissions: list[Any] = []
    for pool in POOLS:
        reviewers, papers = load_corpus(session, venue_id, pool)
        submissions = list(papers) or submissions
        for reviewer in reviewers:
            seen.setdefault(reviewer.id, reviewer)
    return list(seen.values()), submissions


def _dismissed(session: Session, venue_id: str) -> set[tuple[str, str]]:
    return {
        (str(p), str(r))
        for p, r in session.execute(
            select(ConflictDismissal.paper_id, ConflictDismissal.reviewer_id).where(
                ConflictDismissal.venue_id == venue_id, ConflictDismissal.source == "detected"
            )
        )
    }


def _detect(session: Session, venue_id: str, policy: ConflictParams) -> pd.DataFrame:
    """The venue's detected conflicts under ``policy``, one row per pair and reason, the
    dismissed pairs left out."""
    reviewers, submissions = _persons(session, venue_id)
    if not reviewers or not submissions:
        return pd.DataFrame(columns=["paper_id", "reviewer_id", "reason", "detail"])
    found = detect_conflicts(reviewers, submissions, policy)
    dismissed = _dismissed(session, venue_id)
    if dismissed and len(found):
        keys = list(zip(found["paper_id"], found["reviewer_id"], strict=True))
        found = found[[key not in dismissed for key in keys]].reset_index(drop=True)
    return found


def _counts(found: pd.DataFrame) -> dict[str, Any]:
    reasons = Counter(str(r) for r in found["reason"])
    pairs = set(zip(found["paper_id"], found["reviewer_id"], strict=True))
    return {
        "pairs": len(pairs),
        "by_reason": {
            name: int(reasons.get(name, 0))
            for name in ("author", "coauthor", "institution", "email_domain")
        },
        "reviewers": len({r for _, r in pairs}),
        "papers": len({p for p, _ in pairs}),
    }


def _stored_detected(session: Session, venue_id: str) -> set[tuple[str, str]]:
    return {
        (str(p), str(r))
        for p, r in session.execute(
            select(Conflict.paper_id, Conflict.reviewer_id).where(
                Conflict.venue_id == venue_id, Conflict.source == "detected"
            )
        )
    }


def preview_policy(session: Session, venue_id: str, policy: ConflictParams) -> dict[str, Any]:
    """What detecting with ``policy`` would store (``ConflictPolicyPreviewOut``): pairs and
    reasons, beside the venue's policy and the detected pairs stored now."""
    current = venue_policy(session, venue_id)
    found = _detect(session, venue_id, policy)
    stored = _stored_detected(session, venue_id)
    proposed = set(zip(found["paper_id"], found["reviewer_id"], strict=True))
    return {
        "policy": policy_out(policy),
        "current_policy": policy_out(current),
        "counts": _counts(found),
        "stored_pairs": len(stored),
        "added": len(proposed - stored),
        "removed": len(stored - proposed),
        "dismissed": len(_dismissed(session, venue_id)),
    }


def set_policy(
    session: Session, venue_id: str, policy: ConflictParams, actor: str
) -> dict[str, Any]:
    """Store ``policy`` as the venue's and re-detect its conflicts with it now (the detected
    rows replaced; dismissed pairs stay out). Audited and committed."""
    preview = preview_policy(session, venue_id, policy)
    dump = policy.model_dump(mode="json", exclude={"reference_year"})
    stored = session.get(ConflictPolicy, venue_id)
    if stored is None:
        session.add(ConflictPolicy(venue_id=venue_id, policy=dump, updated_by=actor))
    else:
        stored.policy, stored.updated_by, stored.updated_at = dump, actor, utcnow()
    found = _detect(session, venue_id, policy)
    session.execute(
        delete(Conflict).where(Conflict.venue_id == venue_id, Conflict.source == "detected")
    )
    rows = (
        conflict_constraints(found)[["paper_id", "reviewer_id", "reason"]]
        .assign(venue_id=venue_id, source="detected")
        .to_dict("records")
    )
    for start in range(0, len(rows), INSERT_ROWS):
        session.execute(insert(Conflict), rows[start : start + INSERT_ROWS])
    session.flush()
    audit(
        session,
        venue_id,
        actor,
        "conflict_policy.set",
        policy=policy_out(policy),
        previous=preview["current_policy"],
        pairs=preview["counts"]["pairs"],
        added=preview["added"],
        removed=preview["removed"],
    )
    session.commit()
    return preview


def policy_state(session: Session, venue_id: str) -> dict[str, Any]:
    """The venue's policy and what it stores now (``ConflictPolicyOut``)."""
    counts = Counter(
        str(source)
        for (source,) in session.execute(
            select(Conflict.source).where(Conflict.venue_id == venue_id)
        )
    )
    return {
        "policy": policy_out(venue_policy(session, venue_id)),
        "stored": {name: int(counts.get(name, 0)) for name in ("detected", "uploaded", "declared")},
        "dismissed": int(
            session.scalar(select(func.count()).where(ConflictDismissal.venue_id == venue_id)) or 0
        ),
    }


# ---- dismissing, restoring, declaring -----------------------------------------------------


def _need_reason(reason: str, what: str) -> str:
    reason = reason.strip()
    if not reason:
        raise InvalidRequest("validation_error", f"{what} needs a reason", field="reason")
    return reason


def dismiss(
    session: Session, venue_id: str, paper_id: str, reviewer_id: str, reason: str, actor: str
) -> dict[str, Any]:
    """Dismiss the pair's conflicts (detected, uploaded or declared) with the chair's
    ``reason``: they stop blocking the pair until restored. 404 if it has none; audited and
    committed."""
    reason = _need_reason(reason, "dismissing a conflict")
    rows = list(
        session.scalars(
            select(Conflict).where(
                Conflict.venue_id == venue_id,
                Conflict.paper_id == paper_id,
                Conflict.reviewer_id == reviewer_id,
                Conflict.source.in_(DISMISSIBLE),
            )
        )
    )
    if not rows:
        raise not_found("conflict", f"{paper_id}/{reviewer_id}")
    for row in rows:
        existing = session.get(ConflictDismissal, (venue_id, paper_id, reviewer_id, row.source))
        if existing is not None:
            session.delete(existing)
            session.flush()
        session.add(
            ConflictDismissal(
                venue_id=venue_id,
                paper_id=paper_id,
                reviewer_id=reviewer_id,
                source=row.source,
                conflict_reason=row.reason,
                reason=reason,
                dismissed_by=actor,
            )
        )
        session.delete(row)
    session.flush()
    sources = sorted(r.source for r in rows)
    audit(
        session,
        venue_id,
        actor,
        "conflict.dismiss",
        paper_id=paper_id,
        reviewer_id=reviewer_id,
        sources=sources,
        reason=reason,
    )
    session.commit()
    return {"paper_id": paper_id, "reviewer_id": reviewer_id, "sources": sources}


def restore(
    session: Session, venue_id: str, paper_id: str, reviewer_id: str, reason: str, actor: str
) -> dict[str, Any]:
    """Put the pair's dismissed conflicts back. 404 if none is dismissed; audited and
    committed."""
    rows = list(
        session.scalars(
            select(ConflictDismissal).where(
                ConflictDismissal.venue_id == venue_id,
                ConflictDismissal.paper_id == paper_id,
                ConflictDismissal.reviewer_id == reviewer_id,
            )
        )
    )
    if not rows:
        raise not_found("dismissed conflict", f"{paper_id}/{reviewer_id}")
    for row in rows:
        if session.get(Conflict, (venue_id, paper_id, reviewer_id, row.source)) is None:
            session.add(
                Conflict(
                    venue_id=venue_id,
                    paper_id=paper_id,
                    reviewer_id=reviewer_id,
                    source=row.source,
                    reason=row.conflict_reason,
                )
            )
        session.delete(row)
    session.flush()
    sources = sorted(r.source for r in rows)
    audit(
        session,
        venue_id,
        actor,
        "conflict.restore",
        paper_id=paper_id,
        reviewer_id=reviewer_id,
        sources=sources,
        reason=reason.strip(),
    )
    session.commit()
    return {"paper_id": paper_id, "reviewer_id": reviewer_id, "sources": sources}


def declare(
    session: Session, venue_id: str, paper_id: str, reviewer_id: str, reason: str, actor: str
) -> dict[str, Any]:
    """A conflict the chair declares (source ``declared``) with a reason; 409 if the pair
    already has one; audited and committed."""
    reason = _need_reason(reason, "declaring a conflict")
    require_paper(session, venue_id, paper_id)
    require_reviewer(session, venue_id, reviewer_id)
    if session.get(Conflict, (venue_id, paper_id, reviewer_id, "declared")) is not None:
        raise StateConflict(
            "already_declared", f"({paper_id}, {reviewer_id}) is already a declared conflict"
        )
    session.add(
        Conflict(
            venue_id=venue_id,
            paper_id=paper_id,
            reviewer_id=reviewer_id,
            source="declared",
            reason=reason,
        )
    )
    session.flush()
    audit(
        session,
        venue_id,
        actor,
        "conflict.declare",
        paper_id=paper_id,
        reviewer_id=reviewer_id,
        reason=reason,
    )
    session.commit()
    return {"paper_id": paper_id, "reviewer_id": reviewer_id, "sources": ["declared"]}


def list_dismissed(
    session: Session,
    venue_id: str,
    *,
    paper_id: str | None,
    reviewer_id: str | None,
    limit: int,
    offset: int,
) -> Paged[dict[str, Any]]:
    """The venue's dismissed conflicts with both reasons, by paper then reviewer."""
    query = of_pair(
        select(ConflictDismissal).where(ConflictDismissal.venue_id == venue_id),
        ConflictDismissal,
        paper_id,
        reviewer_id,
    ).order_by(ConflictDismissal.paper_id, ConflictDismissal.reviewer_id, ConflictDismissal.source)
    return named_page(
        session,
        venue_id,
        query,
        limit,
        offset,
        lambda d: {
            "paper_id": d.paper_id,
            "reviewer_id": d.reviewer_id,
            "source": d.source,
            "conflict_reason": d.conflict_reason,
            "reason": d.reason,
            "dismissed_by": d.dismissed_by,
            "dismissed_at": d.dismissed_at,
        },
    )
