"""Per-pair tables uploaded to a venue: bids and pair constraints.

Each upload is read (:mod:`recommender.io`) and checked against the venue before anything
is written, HotCRP style (:mod:`reviewer_recommender.services.skipped`): a bad line (unreadable,
an unknown paper or reviewer, a bid the table cannot hold) is skipped and listed by its line,
the valid lines replace what the previous upload of its kind stored, audited, in one commit;
the file is refused whole (an :class:`~recommender.corpus.InputError`, nothing changed) only
when no line is valid or the file itself is unreadable.

Bids keep their label and number; a bid that excludes its pair
(:func:`recommender.bids.excludes`: Not Willing, Conflict) is also stored as a conflict of
source ``bid`` (reason ``bid <label>``), which every later solve, publishing check and edit
respects. The other bids are folded into scores by the next affinity job when its config
has a non-zero ``bid_weight``. A bids upload replaces the chairs' bids (origin ``chair``);
the bids persons made themselves (origin ``person``, :mod:`reviewer_recommender.services.
bidding`) are kept, and win over an uploaded bid on the same pair.
"""

from __future__ import annotations

import pandas as pd
from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from recommender.bids import excluding_mask
from recommender.corpus import InputError, Problem
from recommender.io import read_bids, read_pair_constraints
from reviewer_recommender.services.ids import text_problem
from reviewer_recommender.services.results import UploadCounts
from reviewer_recommender.services.skipped import (
    lines_without,
    refuse_when_nothing_valid,
    skipped_detail,
    skipped_lines,
    skipped_rows,
)
from reviewer_recommender.storage.frames import rows_frame
from reviewer_recommender.storage.models import (
    Bid,
    Conflict,
    ConflictDismissal,
    Pin,
    ReviewerRow,
    SubmissionRow,
)
from reviewer_recommender.storage.repository import audit

BID_LABEL_MAX_LENGTH = 50  # the bids table's label column


def store_bids(
    session: Session, venue_id: str, content: bytes, name: str, actor: str
) -> UploadCounts:
    """Replace the venue's uploaded bids by the valid bids of the file ``content`` (named
    ``name`` in messages), keeping the persons' own bids; commits. HotCRP style: a bad line
    (unreadable, an unknown paper or reviewer, a bid the table cannot hold) is skipped and
    listed; the file is refused whole (nothing changes) only when no line is valid or the
    file itself is unreadable."""
    problems: list[Problem] = []
    bids = read_bids(content, name, with_lines=True, skipped=problems)
    keep = known_ids_mask(session, venue_id, bids, name, problems)
    keep &= bid_labels_mask(bids, name, problems)
    bids = bids.loc[keep]
    refuse_when_nothing_valid(len(bids), problems)
    if not len(bids):
        raise InputError([Problem(name, None, None, "no bids in file")])
    own = set(
        session.execute(
            select(Bid.paper_id, Bid.reviewer_id).where(
                Bid.venue_id == venue_id, Bid.origin == "person"
            )
        ).all()
    )
    session.execute(delete(Bid).where(Bid.venue_id == venue_id, Bid.origin == "chair"))
    records = [
        {
            "venue_id": venue_id,
            "paper_id": p,
            "reviewer_id": r,
            "label": label,
            "bid": float(value),
            "origin": "chair",
        }
        for p, r, label, value in bids[["paper_id", "reviewer_id", "label", "bid"]].itertuples(
            index=False
        )
        if (p, r) not in own
    ]
    if records:
        session.execute(insert(Bid), records)
    refresh_bid_conflicts(session, venue_id)
    audit(
        session,
        venue_id,
        actor,
        "bids.upload",
        source=name,
        bids=len(records),
        **({"kept_person_bids": len(bids) - len(records)} if len(bids) > len(records) else {}),
        **skipped_detail(problems),
    )
    session.commit()
    return UploadCounts(
        created=len(records),
        updated=0,
        total=len(bids),
        skipped=skipped_rows(problems),
        skipped_lines=skipped_lines(problems),
    )


def known_ids_mask(
    session: Session, venue_id: str, frame: pd.DataFrame, filename: str, problems: list[Problem]
) -> pd.Series:
    """Which rows of ``frame`` (with ``line``) name a paper and a reviewer the venue has;
    a problem per other row, naming its line, appended to ``problems``."""
    papers = set(
        session.scalars(select(SubmissionRow.id).where(SubmissionRow.venue_id == venue_id))
    )
    reviewers = set(session.scalars(select(ReviewerRow.id).where(ReviewerRow.venue_id == venue_id)))
    unknown_papers = set(frame["paper_id"]) - papers
    unknown_reviewers = set(frame["reviewer_id"]) - reviewers
    paper_ok = lines_without(
        frame, "paper_id", unknown_papers, "unknown paper id {!r}", problems, filename
    )
    reviewer_ok = lines_without(
        frame, "reviewer_id", unknown_reviewers, "unknown reviewer id {!r}", problems, filename
    )
    return paper_ok & reviewer_ok


def bid_labels_mask(bids: pd.DataFrame, filename: str, problems: list[Problem]) -> pd.Series:
    """Which bids (with ``line``) the bids table can hold; a problem per other one."""
    ok = []
    for line, label in bids[["line", "label"]].itertuples(index=False):
        message = text_problem(label)
        if len(label) > BID_LABEL_MAX_LENGTH:
            message = f"has {len(label)} characters; a bid has at most {BID_LABEL_MAX_LENGTH}"
        ok.append(message is None)
        if message is not None:
            problems.append(Problem(filename, int(line), "bid", f"bid {message}"))
    return pd.Series(ok, index=bids.index, dtype=bool)


def refresh_bid_conflicts(session: Session, venue_id: str) -> None:
    """The venue's conflicts of source ``bid``: one per stored bid that excludes its pair
    (Not Willing, Conflict), whoever made it; in the caller's transaction."""
    session.execute(delete(Conflict).where(Conflict.venue_id == venue_id, Conflict.source == "bid"))
    stored = rows_frame(
        session.execute(
            select(Bid.paper_id, Bid.reviewer_id, Bid.label).where(Bid.venue_id == venue_id)
        ).all(),
        columns=["paper_id", "reviewer_id", "label"],
    )
    excluded = stored.loc[excluding_mask(stored["label"])] if len(stored) else stored
    conflicts = [
        {
            "venue_id": venue_id,
            "paper_id": p,
            "reviewer_id": r,
            "source": "bid",
            "reason": f"bid {label}",
        }
        for p, r, label in excluded.itertuples(index=False)
    ]
    if conflicts:
        session.execute(insert(Conflict), conflicts)


def store_pair_constraints(
    session: Session, venue_id: str, content: bytes, name: str, actor: str
) -> UploadCounts:
    """Replace the venue's uploaded conflicts by the file's valid ``-1`` rows (but those a
    chair dismissed, which stay dismissed until restored) and add its valid ``1`` rows as
    pins (pins already there are kept); commits. A bad line (unreadable, an unknown paper or
    reviewer) is skipped and listed; the file is refused whole when lines were skipped and
    no ``-1`` or ``1`` row is left (a file of ``0`` rows alone clears the uploaded
    conflicts)."""
    problems: list[Problem] = []
    frame = read_pair_constraints(content, name, with_lines=True, skipped=problems)
    frame = frame.loc[known_ids_mask(session, venue_id, frame, name, problems)]
    refuse_when_nothing_valid(len(frame), problems)
    forbidden = frame[frame["value"] < 0]
    forced = frame[frame["value"] > 0]
    session.execute(
        delete(Conflict).where(Conflict.venue_id == venue_id, Conflict.source == "uploaded")
    )
    # an uploaded conflict a chair dismissed stays dismissed (until restored): the file's
    # row for it only updates what a restore brings back
    dismissed = {
        (str(row.paper_id), str(row.reviewer_id)): row
        for row in session.scalars(
            select(ConflictDismissal).where(
                ConflictDismissal.venue_id == venue_id, ConflictDismissal.source == "uploaded"
            )
        )
    }
    if dismissed and len(forbidden):
        keys = list(zip(forbidden["paper_id"], forbidden["reviewer_id"], strict=True))
        for key in keys:
            if key in dismissed:
                dismissed[key].conflict_reason = name
        forbidden = forbidden[[key not in dismissed for key in keys]]
    kept_dismissed = len(frame[frame["value"] < 0]) - len(forbidden)
    if len(forbidden):
        session.execute(
            insert(Conflict),
            [
                {
                    "venue_id": venue_id,
                    "paper_id": p,
                    "reviewer_id": r,
                    "source": "uploaded",
                    "reason": name,
                }
                for p, r in forbidden[["paper_id", "reviewer_id"]].itertuples(index=False)
            ],
        )
    existing_pins = set(
        session.execute(select(Pin.paper_id, Pin.reviewer_id).where(Pin.venue_id == venue_id)).all()
    )
    new_pins = [
        {"venue_id": venue_id, "paper_id": p, "reviewer_id": r, "created_by": actor}
        for p, r in forced[["paper_id", "reviewer_id"]].itertuples(index=False)
        if (p, r) not in existing_pins
    ]
    if new_pins:
        session.execute(insert(Pin), new_pins)
    audit(
        session,
        venue_id,
        actor,
        "constraints.upload",
        source=name,
        conflicts=len(forbidden),
        pins=len(new_pins),
        dismissed_kept=kept_dismissed,
        **skipped_detail(problems),
    )
    session.commit()
    return UploadCounts(
        created=len(forbidden) + len(new_pins),
        updated=0,
        total=len(frame),
        skipped=skipped_rows(problems),
        skipped_lines=skipped_lines(problems),
    )
