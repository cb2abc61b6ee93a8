"""A record's lifecycle: edit, withdraw, restore and delete a venue's papers and persons.

- **edit**: a reviewer's ``name``/``email``/``affiliation``, a paper's ``title``/``abstract``
  (the text policy of :mod:`reviewer_recommender.services.ids`); search keys follow.
- **withdraw / restore**: the record stays with its history (runs, bids, audit) but a
  withdrawn paper needs nobody (demand 0) and a withdrawn person takes no paper (max load
  0), in every pool, for every solve, re-assignment, edit check and publication check from
  now on (:func:`reviewer_recommender.services.limits.read_stored_limits` applies it: one
  home). The answer lists the runs holding the record's pairs (drafts: those pairs now
  break the record's limit; live: an emergency re-assignment without them is offered, the
  body for ``POST /assignments/live/reassign`` is in the answer).
- **delete**: only a record nothing refers to: no pair in any run, no bid, no pin, no
  decline, no person token. Otherwise 409 ``record_has_history`` (withdraw it instead);
  what does go with it: its conflicts, stored demand or max loads, pool memberships and
  scores.

Every change is audited and committed whole; an edit of a scored text (not an email) and a
delete bump the corpus version (affinities go stale), a withdrawal or restore does not (the
texts stay; the limits leave the record out).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import InvalidRequest, StateConflict
from reviewer_recommender.services.ids import text_problem
from reviewer_recommender.storage.models import (
    AffinityRun,
    AffinityScore,
    ApiToken,
    AssignmentPair,
    AssignmentRow,
    Bid,
    Conflict,
    Decline,
    PaperDemand,
    Pin,
    PoolMember,
    ReviewerMaxLoad,
    ReviewerRow,
    SubmissionRow,
    utcnow,
)
from reviewer_recommender.storage.repository import (
    audit,
    bump_corpus_version,
    pool_members,
    require_paper,
    require_reviewer,
)
from reviewer_recommender.storage.search_keys import display_name, text_key

Kind = Literal["papers", "reviewers"]
KINDS: tuple[Kind, ...] = ("papers", "reviewers")

#: The fields a chair may edit, per kind.
EDITABLE: Mapping[str, tuple[str, ...]] = {
    "papers": ("title", "abstract"),
    "reviewers": ("name", "email", "affiliation"),
}

_AUDIT_KIND = {"papers": "submission", "reviewers": "reviewer"}


@dataclass(frozen=True)
class RunPairs:
    """The pairs of a record in one run."""

    assignment_id: int
    number: int | None
    state: str
    pool: str
    pairs: list[tuple[str, str]]


@dataclass
class RecordChange:
    """What a lifecycle change did: the record's kind, id and status now, and the runs that
    hold its pairs; ``reassign``: per pool with a live run holding them, the body of the
    emergency re-assignment without the record."""

    kind: str
    id: str
    status: str
    runs: list[RunPairs] = field(default_factory=list)
    reassign: list[dict[str, Any]] = field(default_factory=list)


def _row(session: Session, venue_id: str, kind: Kind, record_id: str) -> Any:
    if kind == "papers":
        return require_paper(session, venue_id, record_id)
    return require_reviewer(session, venue_id, record_id)


def _pair_column(kind: Kind) -> Any:
    return AssignmentPair.paper_id if kind == "papers" else AssignmentPair.reviewer_id


def runs_holding(session: Session, venue_id: str, kind: Kind, record_id: str) -> list[RunPairs]:
    """The venue's draft and live runs with pairs of the record, each with those pairs."""
    found = session.execute(
        select(
            AssignmentRow.id,
            AssignmentRow.number,
            AssignmentRow.state,
            AssignmentRow.pool,
            AssignmentPair.paper_id,
            AssignmentPair.reviewer_id,
        )
        .join(AssignmentPair, AssignmentPair.assignment_id == AssignmentRow.id)
        .where(
            AssignmentRow.venue_id == venue_id,
            AssignmentRow.state.in_(("draft", "live")),
            _pair_column(kind) == record_id,
        )
        .order_by(AssignmentRow.id, AssignmentPair.paper_id, AssignmentPair.reviewer_id)
    ).all()
    runs: dict[int, RunPairs] = {}
    for run_id, number, state, pool, paper, reviewer in found:
        run = runs.setdefault(run_id, RunPairs(run_id, number, state, pool, []))
        run.pairs.append((str(paper), str(reviewer)))
    return list(runs.values())


def _reassign_offers(kind: Kind, record_id: str, runs: list[RunPairs]) -> list[dict[str, Any]]:
    offers = []
    for run in runs:
        if run.state != "live":
            continue
        body: dict[str, Any] = {"pool": run.pool, "reason": f"{record_id} withdrawn"}
        if kind == "reviewers":
            body["withdraw"] = [record_id]
        else:
            body["remove"] = [{"paper_id": p, "reviewer_id": r} for p, r in run.pairs]
        offers.append({"assignment_id": run.assignment_id, "number": run.number, "body": body})
    return offers


def edit_record(
    session: Session,
    venue_id: str,
    kind: Kind,
    record_id: str,
    changes: Mapping[str, str | None],
    actor: str,
) -> Any:
    """Change the record's editable fields given (None: keep); 422 naming a field that
    cannot be edited or a text the policy refuses. Returns the row."""
    row = _row(session, venue_id, kind, record_id)
    given = {k: v for k, v in changes.items() if v is not None}
    problems = [
        f"{name}: not editable (editable: {', '.join(EDITABLE[kind])})"
        for name in given
        if name not in EDITABLE[kind]
    ]
    problems += [
        f"{name}: {problem}"
        for name, value in given.items()
        if (problem := text_problem(str(value))) is not None
    ]
    if kind == "papers" and "title" in given and not str(given["title"]).strip():
        problems.append("title: must not be empty")
    email = str(given.get("email") or "")
    if email and "@" not in email:
        problems.append(f"email: not an email address: {email!r}")
    if problems:
        raise InvalidRequest("invalid_record", "; ".join(problems))
    before = {name: getattr(row, name) for name in given}
    changed = {name: value for name, value in given.items() if before[name] != value}
    if not changed:
        return row
    for name, value in changed.items():
        setattr(row, name, value)
    row.text_key = text_key(row.title if kind == "papers" else display_name(row.id, row.name))
    row.updated_at = utcnow()
    if any(name != "email" for name in changed):
        bump_corpus_version(session, venue_id)
    audit(
        session,
        venue_id,
        actor,
        f"{_AUDIT_KIND[kind]}.edit",
        id=record_id,
        fields=sorted(changed),
        before={name: before[name] for name in changed},
    )
    session.commit()
    return row


def set_status(
    session: Session,
    venue_id: str,
    kind: Kind,
    record_id: str,
    status: Literal["active", "withdrawn"],
    actor: str,
    reason: str = "",
) -> RecordChange:
    """Withdraw (``withdrawn``) or restore (``active``) the record; doing it twice is a
    no-op (not audited again)."""
    row = _row(session, venue_id, kind, record_id)
    runs = runs_holding(session, venue_id, kind, record_id)
    if row.status != status:
        # the texts stay: the scores do not go stale (the limits leave the record out)
        row.status = status
        row.updated_at = utcnow()
        action = "withdraw" if status == "withdrawn" else "restore"
        audit(
            session,
            venue_id,
            actor,
            f"{_AUDIT_KIND[kind]}.{action}",
            id=record_id,
            reason=reason,
            runs=[r.assignment_id for r in runs],
            pairs=sum(len(r.pairs) for r in runs),
        )
        session.commit()
    offers = _reassign_offers(kind, record_id, runs) if status == "withdrawn" else []
    return RecordChange(kind, record_id, status, runs, offers)


def _references(session: Session, venue_id: str, kind: Kind, record_id: str) -> dict[str, int]:
    """How many rows of each kind of history name the record."""
    column = _pair_column(kind)
    counts = {
        "assignment pairs": session.scalar(
            select(func.count())
            .select_from(AssignmentPair)
            .join(AssignmentRow, AssignmentRow.id == AssignmentPair.assignment_id)
            .where(AssignmentRow.venue_id == venue_id, column == record_id)
        ),
        "bids": session.scalar(
            select(func.count()).where(
                Bid.venue_id == venue_id,
                (Bid.paper_id if kind == "papers" else Bid.reviewer_id) == record_id,
            )
        ),
        "pins": session.scalar(
            select(func.count()).where(
                Pin.venue_id == venue_id,
                (Pin.paper_id if kind == "papers" else Pin.reviewer_id) == record_id,
            )
        ),
        "declines": session.scalar(
            select(func.count()).where(
                Decline.venue_id == venue_id,
                (Decline.paper_id if kind == "papers" else Decline.person_id) == record_id,
            )
        ),
    }
    if kind == "reviewers":
        counts["person tokens"] = session.scalar(
            select(func.count()).where(
                ApiToken.venue_id == venue_id, ApiToken.person_id == record_id
            )
        )
    return {name: int(n or 0) for name, n in counts.items() if n}


def delete_record(session: Session, venue_id: str, kind: Kind, record_id: str, actor: str) -> None:
    """Delete a record nothing refers to, with its conflicts, stored limits, pool
    memberships and scores; 409 ``record_has_history`` naming what refers to it."""
    row = _row(session, venue_id, kind, record_id)
    history = _references(session, venue_id, kind, record_id)
    if history:
        named = ", ".join(f"{n} {what}" for what, n in history.items())
        raise StateConflict(
            "record_has_history",
            f"{_AUDIT_KIND[kind]} {record_id!r} has history ({named}): withdraw it instead "
            "(it keeps its history and is no longer assigned)",
            references=history,
        )
    runs = select(AffinityRun.id).where(AffinityRun.venue_id == venue_id)
    if kind == "papers":
        session.execute(
            delete(Conflict).where(Conflict.venue_id == venue_id, Conflict.paper_id == record_id)
        )
        session.execute(
            delete(PaperDemand).where(
                PaperDemand.venue_id == venue_id, PaperDemand.paper_id == record_id
            )
        )
        session.execute(
            delete(AffinityScore).where(
                AffinityScore.run_id.in_(runs), AffinityScore.paper_id == record_id
            )
        )
    else:
        session.execute(
            delete(Conflict).where(Conflict.venue_id == venue_id, Conflict.reviewer_id == record_id)
        )
        session.execute(
            delete(ReviewerMaxLoad).where(
                ReviewerMaxLoad.venue_id == venue_id, ReviewerMaxLoad.reviewer_id == record_id
            )
        )
        session.execute(
            delete(PoolMember).where(
                PoolMember.venue_id == venue_id, PoolMember.person_id == record_id
            )
        )
        session.execute(
            delete(AffinityScore).where(
                AffinityScore.run_id.in_(runs), AffinityScore.reviewer_id == record_id
            )
        )
    session.delete(row)
    bump_corpus_version(session, venue_id)
    audit(session, venue_id, actor, f"{_AUDIT_KIND[kind]}.delete", id=record_id)
    session.commit()


def withdrawn_ids(
    session: Session, venue_id: str, kind: Kind, pool: str | None = None
) -> list[str]:
    """The venue's withdrawn papers or persons (of ``pool`` when given), by id."""
    model: Any = SubmissionRow if kind == "papers" else ReviewerRow
    query = select(model.id).where(model.venue_id == venue_id, model.status == "withdrawn")
    if pool is not None and kind == "reviewers":
        query = query.where(model.id.in_(pool_members(venue_id, pool)))
    return sorted(str(i) for i in session.scalars(query))


def withdrawn_among(session: Session, venue_id: str, kind: Kind, ids: list[str]) -> set[str]:
    """Which of ``ids`` (a page's worth) are withdrawn papers or persons."""
    model: Any = SubmissionRow if kind == "papers" else ReviewerRow
    wanted = sorted(set(ids))
    found: set[str] = set()
    for start in range(0, len(wanted), 500):
        found.update(
            str(i)
            for i in session.scalars(
                select(model.id).where(
                    model.venue_id == venue_id,
                    model.status == "withdrawn",
                    model.id.in_(wanted[start : start + 500]),
                )
            )
        )
    return found
