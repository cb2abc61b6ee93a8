"""Bidding: persons bid on their candidate papers while the chairs keep it open, and the
chairs see how well the papers are covered.

A person's bid (:func:`set_own_bid`) uses the one bid vocabulary
(:func:`recommender.bids.parse_bid`: Very High, High, Neutral, Low, Very Low, Not Willing,
Conflict, or a number) and is stored with origin ``person``: a chairs' bids upload never
overwrites it (:func:`reviewer_recommender.services.pair_uploads.store_bids`). An excluding
bid (Not Willing, Conflict) is a conflict of source ``bid`` like an uploaded one, so every
later solve and publishing check respects it; the others are folded into scores by the next
affinity job. One bid per person and paper, whatever the pool.

A person bids only on their candidates (:mod:`reviewer_recommender.services.persons`): any
other paper id, unknown or in conflict with them, is answered alike (404 naming the id).
While bidding is closed a bid is refused with 409 ``bidding_closed``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from recommender.bids import BID_VALUES, EXCLUDING_BIDS, normalise_label, parse_bid
from reviewer_recommender.errors import InvalidRequest, StateConflict, not_found
from reviewer_recommender.services.pair_uploads import BID_LABEL_MAX_LENGTH
from reviewer_recommender.services.persons import Person, is_candidate, person_of
from reviewer_recommender.services.pools import check_pool, members_query
from reviewer_recommender.services.principals import Principal
from reviewer_recommender.storage.frames import rows_frame
from reviewer_recommender.storage.models import (
    Bid,
    Conflict,
    ReviewerRow,
    SubmissionRow,
    Venue,
    utcnow,
)
from reviewer_recommender.storage.names import lookup
from reviewer_recommender.storage.repository import Paged, audit
from reviewer_recommender.storage.search_keys import display_name

# how a label is stored: the vocabulary's words, capitalised as OpenReview writes them
CANONICAL_LABELS = {label: label.title() for label in (*BID_VALUES, *EXCLUDING_BIDS)}


def _open_bidding(session: Session, venue_id: str) -> None:
    venue = session.get(Venue, venue_id)
    if venue is None or not venue.bidding_open:
        raise StateConflict(
            "bidding_closed",
            f"bidding is closed in venue {venue_id!r}: bids can be made and changed only while "
            "the chairs keep it open",
        )


def _bid_cell(value: str | float) -> tuple[str, float, bool]:
    """``(label, number, excludes)`` of a bid as the person sent it; 422 naming it when it
    is not in the vocabulary."""
    try:
        number, excluding = parse_bid(value)
    except ValueError as error:
        raise InvalidRequest("invalid_bid", f"bid: {error}", field="bid") from error
    if isinstance(value, str) and normalise_label(value) in CANONICAL_LABELS:
        label = CANONICAL_LABELS[normalise_label(value)]
    else:
        label = f"{number:g}"
    if len(label) > BID_LABEL_MAX_LENGTH:
        raise InvalidRequest("invalid_bid", f"bid: {value!r} is too long", field="bid")
    return label, number, excluding


def _candidate(session: Session, person: Person, paper_id: str) -> None:
    if not is_candidate(session, person, paper_id):
        raise not_found("paper", paper_id)


def set_own_bid(
    session: Session, principal: Principal, paper_id: str, value: str | float
) -> dict[str, Any]:
    """Store the person's bid on one of their candidates (audited, committed): 409 while
    bidding is closed, 404 for a paper that is not their candidate, 422 for a bid outside
    the vocabulary; nothing is written then."""
    person = person_of(principal)
    _open_bidding(session, person.venue_id)
    _candidate(session, person, paper_id)
    label, number, excluding = _bid_cell(value)
    key = (person.venue_id, paper_id, person.person_id)
    row = session.get(Bid, key)
    if row is None:
        row = Bid(venue_id=person.venue_id, paper_id=paper_id, reviewer_id=person.person_id)
        session.add(row)
    row.label, row.bid, row.origin, row.updated_at = label, number, "person", utcnow()
    _set_bid_conflict(session, person, paper_id, label if excluding else None)
    audit(
        session,
        person.venue_id,
        principal.name,
        "bid.set",
        paper_id=paper_id,
        person_id=person.person_id,
        bid=label,
    )
    session.commit()
    return {"paper_id": paper_id, "bid": label, "value": number, "excludes": excluding}


def remove_own_bid(session: Session, principal: Principal, paper_id: str) -> dict[str, Any]:
    """Withdraw the person's bid on one of their candidates (audited, committed); the same
    refusals as :func:`set_own_bid`."""
    person = person_of(principal)
    _open_bidding(session, person.venue_id)
    _candidate(session, person, paper_id)
    row = session.get(Bid, (person.venue_id, paper_id, person.person_id))
    if row is not None:
        session.delete(row)
        _set_bid_conflict(session, person, paper_id, None)
        audit(
            session,
            person.venue_id,
            principal.name,
            "bid.remove",
            paper_id=paper_id,
            person_id=person.person_id,
        )
    session.commit()
    return {"paper_id": paper_id, "bid": None, "value": None, "excludes": False}


def _set_bid_conflict(session: Session, person: Person, paper_id: str, label: str | None) -> None:
    """The pair's conflict of source ``bid``: present with an excluding ``label``, gone
    otherwise."""
    session.execute(
        delete(Conflict).where(
            Conflict.venue_id == person.venue_id,
            Conflict.paper_id == paper_id,
            Conflict.reviewer_id == person.person_id,
            Conflict.source == "bid",
        )
    )
    if label is not None:
        session.add(
            Conflict(
                venue_id=person.venue_id,
                paper_id=paper_id,
                reviewer_id=person.person_id,
                source="bid",
                reason=f"bid {label}",
            )
        )
    session.flush()


# ---- the chairs' view: coverage -----------------------------------------------------------


def _pool_bids(session: Session, venue_id: str, pool: str) -> pd.DataFrame:
    members = members_query(venue_id, pool)
    return rows_frame(
        session.execute(
            select(Bid.paper_id, Bid.reviewer_id, Bid.label, Bid.bid).where(
                Bid.venue_id == venue_id, Bid.reviewer_id.in_(members)
            )
        ).all(),
        columns=["paper_id", "reviewer_id", "label", "bid"],
    )


def paper_coverage(
    session: Session, venue_id: str, pool: str, min_positive: int, limit: int, offset: int
) -> Paged[dict[str, Any]]:
    """Papers with fewer than ``min_positive`` positive bids (a preference above 0) from the
    pool's persons, fewest first (then by id), with their positive and total bids."""
    check_pool(pool)
    bids = _pool_bids(session, venue_id, pool)
    papers = pd.Index(
        sorted(session.scalars(select(SubmissionRow.id).where(SubmissionRow.venue_id == venue_id))),
        name="paper_id",
    )
    excluding = bids["label"].map(lambda c: normalise_label(c) in EXCLUDING_BIDS).astype(bool)
    positive = bids[(bids["bid"] > 0) & ~excluding].groupby("paper_id").size()
    every = bids.groupby("paper_id").size()
    frame = pd.DataFrame(
        {
            "positive_bids": positive.reindex(papers, fill_value=0).astype(int),
            "bids": every.reindex(papers, fill_value=0).astype(int),
        }
    ).reset_index()
    frame = frame[frame["positive_bids"] < min_positive].sort_values(
        ["positive_bids", "paper_id"], kind="stable"
    )
    page = frame.iloc[offset : offset + limit]
    titles = lookup(session, venue_id, list(page["paper_id"]))
    items = [
        {
            "paper_id": str(p),
            "paper_title": titles.title(str(p)),
            "positive_bids": int(positive_bids),
            "bids": int(count),
        }
        for p, positive_bids, count in page[["paper_id", "positive_bids", "bids"]].itertuples(
            index=False
        )
    ]
    return Paged(items, len(frame), limit, offset)


def persons_without_bids(
    session: Session, venue_id: str, pool: str, limit: int, offset: int
) -> Paged[dict[str, Any]]:
    """The pool's persons who have not bid on any paper, by id."""
    check_pool(pool)
    bidders = select(Bid.reviewer_id).where(Bid.venue_id == venue_id).distinct()
    query = (
        select(ReviewerRow.id, ReviewerRow.name)
        .where(
            ReviewerRow.venue_id == venue_id,
            ReviewerRow.id.in_(members_query(venue_id, pool)),
            ReviewerRow.id.not_in(bidders),
        )
        .order_by(ReviewerRow.id)
    )
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.execute(query.limit(limit).offset(offset)).all()
    items = [{"person_id": str(i), "person_name": display_name(str(i), name)} for i, name in rows]
    return Paged(items, int(total), limit, offset)
