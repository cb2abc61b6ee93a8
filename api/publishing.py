"""Checking a run against the venue's current hard constraints, publishing it, and keeping
an edited run's numbers honest.

States: ``draft`` → ``live`` → ``superseded`` (see :class:`api.models.AssignmentRow`). At most
one run per venue is live. Publishing (``deploy``) names the run and the version the chair
looked at; it is refused while the run breaks a hard constraint the venue has *now*
(conflicts of interest, Not Willing/Conflict bids, forbidden pairs, pinned pairs, reviewer
loads, paper demand) unless the chair overrides each listed item with a reason. Rolling back
is publishing a superseded run again, through the same checks.

The check is venue-level logic kept out of the routers; once the matching layer lists the
violations of a pair set against an ``AssignmentProblem``, :func:`violations` can build the
problem from the venue and translate those into the same records.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from fastapi import HTTPException, status
from sqlalchemy import and_, select, update
from sqlalchemy.orm import Session

from api.limits import resolve_limits
from api.models import (
    AffinityScore,
    AssignmentPair,
    AssignmentRow,
    Conflict,
    Pin,
    ReviewerRow,
    SubmissionRow,
    utcnow,
)
from api.store import audit

# how a conflict's source reads in a violation
CONFLICT_KINDS = {"detected": "conflict", "uploaded": "conflict", "bid": "bid", "forbid": "forbid"}
# violations listed in a refusal (the total is always given)
LISTED = 1000


@dataclass(frozen=True)
class Violation:
    """One hard constraint a run breaks. Pair constraints (``conflict``, ``bid``,
    ``forbid``, ``pin``) name a paper and a reviewer; ``max_load``/``min_load`` a reviewer;
    ``demand`` a paper."""

    kind: str
    paper_id: str | None
    reviewer_id: str | None
    detail: str

    @property
    def target(self) -> tuple[str | None, str | None]:
        return (self.paper_id, self.reviewer_id)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_pairs(session: Session, assignment_id: int) -> pd.DataFrame:
    return pd.DataFrame(
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


def violations(session: Session, row: AssignmentRow) -> list[Violation]:
    """Every hard constraint of the venue, as stored now, that run ``row`` breaks: pair
    constraints first (by paper, reviewer), then loads (by reviewer), then demand (by paper)."""
    venue_id = row.venue_id
    found: list[Violation] = []
    for paper_id, reviewer_id, source, reason in session.execute(
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
    ):
        kind = CONFLICT_KINDS.get(source, "conflict")
        words = {
            "conflict": f"conflict of interest ({source}{': ' + reason if reason else ''})",
            "bid": f"the reviewer bid {reason.removeprefix('bid ') or 'Not Willing'}",
            "forbid": f"forbidden by a chair{': ' + reason if reason else ''}",
        }[kind]
        found.append(Violation(kind, paper_id, reviewer_id, words))

    pairs = run_pairs(session, row.id)
    assigned = set(zip(pairs["paper_id"], pairs["reviewer_id"], strict=True))
    papers = list(
        session.scalars(
            select(SubmissionRow.id)
            .where(SubmissionRow.venue_id == venue_id)
            .order_by(SubmissionRow.id)
        )
    )
    reviewers = list(
        session.scalars(
            select(ReviewerRow.id).where(ReviewerRow.venue_id == venue_id).order_by(ReviewerRow.id)
        )
    )
    for paper_id, reviewer_id in session.execute(
        select(Pin.paper_id, Pin.reviewer_id)
        .where(Pin.venue_id == venue_id)
        .order_by(Pin.paper_id, Pin.reviewer_id)
    ):
        if (paper_id, reviewer_id) not in assigned:
            found.append(
                Violation(
                    "pin", paper_id, reviewer_id, "pinned by a chair but missing from this run"
                )
            )

    limits = resolve_limits(session, venue_id, row.parameters or {})
    loads = (
        pairs.groupby("reviewer_id").size().reindex(reviewers, fill_value=0)
        if reviewers
        else pd.Series(dtype=np.int64)
    )
    max_loads = limits.max_array(reviewers)
    min_loads = limits.min_array(reviewers)
    counts = loads.to_numpy(dtype=np.int64)
    for index in np.flatnonzero(counts > max_loads):
        found.append(
            Violation(
                "max_load",
                None,
                reviewers[index],
                f"reviews {counts[index]} papers, over their max load of {max_loads[index]}",
            )
        )
    for index in np.flatnonzero(counts < min_loads):
        found.append(
            Violation(
                "min_load",
                None,
                reviewers[index],
                f"reviews {counts[index]} papers, under their min load of {min_loads[index]}",
            )
        )
    per_paper = (
        pairs.groupby("paper_id").size().reindex(papers, fill_value=0)
        if papers
        else pd.Series(dtype=np.int64)
    )
    demand = limits.demand_array(papers)
    got = per_paper.to_numpy(dtype=np.int64)
    for index in np.flatnonzero(got != demand):
        found.append(
            Violation(
                "demand",
                papers[index],
                None,
                f"has {got[index]} reviewer{'s' if got[index] != 1 else ''}, needs {demand[index]}",
            )
        )
    return found


def describe(violation: Violation) -> str:
    if violation.paper_id is not None and violation.reviewer_id is not None:
        where = f"({violation.paper_id}, {violation.reviewer_id})"
    elif violation.reviewer_id is not None:
        where = f"reviewer {violation.reviewer_id}"
    else:
        where = f"paper {violation.paper_id}"
    return f"{where}: {violation.detail}"


def refusal(row: AssignmentRow, found: Sequence[Violation], action: str) -> HTTPException:
    """409 listing the violations (at most LISTED) and what the chair can do."""
    shown = "; ".join(describe(v) for v in found[:5])
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    message = (
        f"{action} assignment {row.id} (version {row.version}) refused: it breaks "
        f"{len(found)} of the venue's current hard constraint{'s' if len(found) != 1 else ''}"
        f": {shown}{more}. Re-solve for a draft that respects them, or override each listed "
        "item (overrides: [{paper_id, reviewer_id, reason}], paper_id or reviewer_id null "
        "for loads and demand)"
    )
    return HTTPException(
        status.HTTP_409_CONFLICT,
        {
            "message": message,
            "assignment_id": row.id,
            "version": row.version,
            "total": len(found),
            "violations": [v.to_dict() for v in found[:LISTED]],
        },
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
        raise HTTPException(
            status.HTTP_409_CONFLICT,
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
    """Make ``row`` the venue's live run (see the module rules); the caller commits."""
    if row.state == "live":
        raise HTTPException(
            status.HTTP_409_CONFLICT, f"assignment {row.id} is already the live assignment"
        )
    if version != row.version:
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            f"assignment {row.id} is at version {row.version}, but the confirmation names "
            f"version {version}: it changed since it was reviewed; review it again and "
            "confirm the current version",
        )
    found = violations(session, row)
    targets = [(paper, reviewer) for paper, reviewer, _reason in overrides]
    if len(set(targets)) != len(targets):
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT, "overrides: an item is listed twice"
        )
    missing, stray = uncovered(found, targets)
    if stray:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            "overrides name items that break no hard constraint: "
            + "; ".join(f"paper {p!r}, reviewer {r!r}" for p, r in stray[:10])
            + " (check the ids, or send only the items the refusal listed)",
        )
    if missing:
        raise refusal(row, missing, "publishing")
    previous = session.scalar(
        select(AssignmentRow.id).where(
            AssignmentRow.venue_id == row.venue_id,
            AssignmentRow.state == "live",
            AssignmentRow.id != row.id,
        )
    )
    rollback = row.state == "superseded"
    now = utcnow()
    session.execute(
        update(AssignmentRow)
        .where(AssignmentRow.venue_id == row.venue_id, AssignmentRow.state == "live")
        .values(state="superseded", superseded_at=now)
        .execution_options(synchronize_session=False)
    )
    # the version is not bumped here: the published run is the version the chair confirmed
    result = session.execute(
        update(AssignmentRow)
        .where(
            AssignmentRow.id == row.id,
            AssignmentRow.version == version,
            AssignmentRow.state.in_(("draft", "superseded")),
        )
        .values(state="live", deployed_at=now, deployed_by=actor, superseded_at=None)
        .execution_options(synchronize_session=False)
    )
    if getattr(result, "rowcount", 0) != 1:
        session.rollback()
        raise HTTPException(
            status.HTTP_409_CONFLICT,
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


def edited_summary(session: Session, row: AssignmentRow, *, tightening: bool) -> dict[str, Any]:
    """``row``'s summary after an edit: objective and statistics recomputed from its pairs,
    the solver's bound kept and labelled (``bound_of``), whether the bound still holds
    (``bound_holds``: every edit so far only removed or forced candidate pairs within the
    limits, so the edited problem's optimum is still at most the bound), and whether the
    pairs satisfy the venue's current hard constraints (``constraints``). ``gap`` is
    recomputed when both hold, null otherwise."""
    summary = dict(row.summary or {})
    pairs = run_pairs(session, row.id)
    scores = pairs["score"].to_numpy(dtype=np.float64)
    objective = float(scores.sum())
    found = violations(session, row)
    first_edit = not summary.get("edited")
    if first_edit:
        summary["solver_objective"] = summary.get("objective")
        summary["bound_holds"] = True
        summary["edits"] = 0
    holds = bool(summary.get("bound_holds", True)) and tightening
    bound = summary.get("upper_bound")
    per_paper = pairs.groupby("paper_id")["score"].mean() if len(pairs) else pd.Series()
    reviewers = list(
        session.scalars(select(ReviewerRow.id).where(ReviewerRow.venue_id == row.venue_id))
    )
    loads = pairs.groupby("reviewer_id").size().reindex(reviewers, fill_value=0)
    satisfied = not found
    gap = None
    if holds and satisfied and isinstance(bound, int | float):
        gap = max(0.0, (float(bound) - objective) / max(1.0, abs(float(bound))))
    job = f"job #{row.job_id}" if row.job_id is not None else "its solve"
    summary.update(
        {
            "edited": True,
            "edits": int(summary.get("edits", 0)) + 1,
            "objective": objective,
            "pairs_assigned": len(pairs),
            "mean_score": float(scores.mean()) if len(scores) else None,
            "min_score": float(scores.min()) if len(scores) else None,
            "min_paper_mean_score": float(per_paper.min()) if len(per_paper) else None,
            "load_min": int(loads.min()) if len(loads) else 0,
            "load_max": int(loads.max()) if len(loads) else 0,
            "bound_of": f"the problem solved by {job}, before edits",
            "bound_holds": holds,
            "gap": gap,
            "constraints": {
                "satisfied": satisfied,
                "violations": len(found),
                "first": [describe(v) for v in found[:5]],
            },
        }
    )
    return summary
