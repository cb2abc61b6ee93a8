"""Uploads and listings of reviewers, submissions, bids and pair constraints.

Every upload is parsed completely by :mod:`recommender.io` before anything is written and
then stored in one transaction: it is applied whole or not at all. Re-uploading an id
updates that reviewer or submission. Upload routes are plain ``def`` functions, run on the
thread pool: parsing a large file never blocks the event loop (see :mod:`api.uploads`).
"""

from __future__ import annotations

from typing import Annotated, Any

import pandas as pd
from fastapi import APIRouter, File, UploadFile
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from api.auth import Reader, Writer
from api.dependencies import Limit, Offset, SessionDep
from api.ids import PaperIdPath, ReviewerIdPath, VenueIdPath
from api.schemas import Page, ReviewerOut, SubmissionOut, UploadResult
from api.uploads import (
    CollectionPaused,
    RawBody,
    SettingsDep,
    archive_limits,
    json_list_body,
    upload_bytes,
    upload_name,
)
from recommender.bids import EXCLUDING_BIDS
from recommender.corpus import InputError, Problem, Reviewer, Submission
from recommender.io import (
    parse_reviewers_upload,
    parse_submissions_upload,
    read_bids,
    read_pair_constraints,
)
from reviewer_recommender.services.ids import (
    check_reviewers,
    check_submissions,
    refuse_stored_lookalikes,
    text_problem,
)
from reviewer_recommender.storage.models import Bid, Conflict, Pin, ReviewerRow, SubmissionRow
from reviewer_recommender.storage.repository import (
    audit,
    bump_corpus_version,
    paginate,
    require_paper,
    require_reviewer,
    reviewer_to_row,
    submission_to_row,
    upsert,
)
from reviewer_recommender.storage.search_keys import display_name

router = APIRouter(tags=["corpus"])
BID_LABEL_MAX_LENGTH = 50  # the bids table's label column

REVIEWERS_EXAMPLE = [
    {
        "id": "~Ada_Lovelace1",
        "name": "Ada Lovelace",
        "email": "ada@example.org",
        "affiliation": "Analytical Engines Ltd",
        "publications": [{"title": "Notes on the engine", "abstract": "...", "year": 1843}],
    }
]
SUBMISSIONS_EXAMPLE = [
    {"id": "paper1", "title": "A title", "abstract": "An abstract", "authors": ["A. Author"]}
]


def _store_reviewers(
    session: Session, venue_id: str, actor: str, reviewers: tuple[Reviewer, ...], source: str
) -> UploadResult:
    check_reviewers(reviewers, source)
    refuse_stored_lookalikes(session, venue_id, "reviewer", [r.id for r in reviewers], source)
    rows = [reviewer_to_row(venue_id, r) for r in reviewers]
    return _store(session, venue_id, actor, ReviewerRow, rows, "reviewers.upload", source)


def _store_submissions(
    session: Session, venue_id: str, actor: str, submissions: tuple[Submission, ...], source: str
) -> UploadResult:
    check_submissions(submissions, source)
    refuse_stored_lookalikes(session, venue_id, "submission", [s.id for s in submissions], source)
    rows = [submission_to_row(venue_id, s) for s in submissions]
    return _store(session, venue_id, actor, SubmissionRow, rows, "submissions.upload", source)


def _store(
    session: Session,
    venue_id: str,
    actor: str,
    model: type[ReviewerRow] | type[SubmissionRow],
    rows: list[dict[str, Any]],
    action: str,
    source: str,
) -> UploadResult:
    """Upsert checked reviewer or submission rows, a new corpus version, audited and
    committed."""
    created, updated = upsert(session, model, venue_id, rows)
    bump_corpus_version(session, venue_id)
    audit(session, venue_id, actor, action, source=source, created=created, updated=updated)
    session.commit()
    total = session.scalar(select(func.count()).where(model.venue_id == venue_id)) or 0
    return UploadResult(created=created, updated=updated, total=total)


@router.post("/venues/{venue_id}/reviewers/upload", response_model=UploadResult)
def upload_reviewers(
    venue_id: VenueIdPath,
    settings: SettingsDep,
    principal: Writer,
    session: SessionDep,
    _gc: CollectionPaused,
    file: Annotated[
        UploadFile,
        File(description="reviewers .csv/.json/.jsonl, a ~id.jsonl archive or a .zip of them"),
    ],
    publications: Annotated[
        UploadFile | None, File(description="publications.csv (with reviewers.csv)")
    ] = None,
) -> UploadResult:
    """Upload reviewers from a file; 422 lists every bad row, nothing is stored then."""
    content = upload_bytes(file, settings, "reviewers")
    pubs = None
    if publications is not None:
        pubs = (
            upload_name(publications, "publications.csv"),
            upload_bytes(publications, settings, "publications.csv"),
        )
    name = upload_name(file, "reviewers")
    reviewers = parse_reviewers_upload(name, content, pubs, archive_limits=archive_limits(settings))
    return _store_reviewers(session, venue_id, principal.name, reviewers, name)


@router.post(
    "/venues/{venue_id}/reviewers",
    response_model=UploadResult,
    openapi_extra=json_list_body(
        "reviewer objects: id, name, email, affiliation, attributes, publications",
        REVIEWERS_EXAMPLE,
    ),
)
def post_reviewers(
    venue_id: VenueIdPath,
    principal: Writer,
    session: SessionDep,
    body: RawBody,
    _gc: CollectionPaused,
) -> UploadResult:
    """Upload reviewers as a JSON list (validated like a reviewers.json file)."""
    parsed = parse_reviewers_upload("request body.json", body)
    return _store_reviewers(session, venue_id, principal.name, parsed, "request body")


@router.post("/venues/{venue_id}/submissions/upload", response_model=UploadResult)
def upload_submissions(
    venue_id: VenueIdPath,
    settings: SettingsDep,
    principal: Writer,
    session: SessionDep,
    _gc: CollectionPaused,
    file: Annotated[UploadFile, File(description="submissions .json (OpenReview), .jsonl or .csv")],
) -> UploadResult:
    """Upload submissions from a file; 422 lists every bad row, nothing is stored then."""
    name = upload_name(file, "submissions")
    content = upload_bytes(file, settings, name)
    submissions = parse_submissions_upload(name, content)
    return _store_submissions(session, venue_id, principal.name, submissions, name)


@router.post(
    "/venues/{venue_id}/submissions",
    response_model=UploadResult,
    openapi_extra=json_list_body(
        "submission objects: id, title, abstract, authors, authorids, ...", SUBMISSIONS_EXAMPLE
    ),
)
def post_submissions(
    venue_id: VenueIdPath,
    principal: Writer,
    session: SessionDep,
    body: RawBody,
    _gc: CollectionPaused,
) -> UploadResult:
    """Upload submissions as a JSON list (validated like a submissions.json file)."""
    parsed = parse_submissions_upload("request body.json", body)
    return _store_submissions(session, venue_id, principal.name, parsed, "request body")


def _check_known_ids(session: Session, venue_id: str, frame: pd.DataFrame, filename: str) -> None:
    """422 naming every paper or reviewer id the venue does not have."""
    papers = set(
        session.scalars(select(SubmissionRow.id).where(SubmissionRow.venue_id == venue_id))
    )
    reviewers = set(session.scalars(select(ReviewerRow.id).where(ReviewerRow.venue_id == venue_id)))
    problems = [
        Problem(filename, None, "paper_id", f"unknown paper id {p!r}")
        for p in sorted(set(frame["paper_id"]) - papers)
    ] + [
        Problem(filename, None, "reviewer_id", f"unknown reviewer id {r!r}")
        for r in sorted(set(frame["reviewer_id"]) - reviewers)
    ]
    if problems:
        raise InputError(problems)


def _check_bid_labels(bids: pd.DataFrame, filename: str) -> None:
    """422 naming every bid cell the bids table cannot hold (too long, control characters)."""
    problems = []
    for paper_id, reviewer_id, label in bids[["paper_id", "reviewer_id", "label"]].itertuples(
        index=False
    ):
        message = text_problem(label)
        if len(label) > BID_LABEL_MAX_LENGTH:
            message = f"has {len(label)} characters; a bid has at most {BID_LABEL_MAX_LENGTH}"
        if message is not None:
            problems.append(
                Problem(filename, None, "bid", f"bid of ({paper_id}, {reviewer_id}) {message}")
            )
    if problems:
        raise InputError(problems)


@router.post("/venues/{venue_id}/bids/upload", response_model=UploadResult)
def upload_bids(
    venue_id: VenueIdPath,
    settings: SettingsDep,
    principal: Writer,
    session: SessionDep,
    _gc: CollectionPaused,
    file: Annotated[
        UploadFile, File(description="bids CSV: paper_id, reviewer_id, bid (label or number)")
    ],
) -> UploadResult:
    """Replace the venue's bids. ``Conflict`` and ``Not Willing`` bids become conflicts
    (source ``bid``); the others are folded into scores by the next affinity job when its
    config has a non-zero ``bid_weight``."""
    name = upload_name(file, "bids.csv")
    bids = read_bids(upload_bytes(file, settings, name), name)
    _check_known_ids(session, venue_id, bids, name)
    _check_bid_labels(bids, name)
    session.execute(delete(Bid).where(Bid.venue_id == venue_id))
    session.execute(delete(Conflict).where(Conflict.venue_id == venue_id, Conflict.source == "bid"))
    records = [
        {"venue_id": venue_id, "paper_id": p, "reviewer_id": r, "label": label, "bid": float(value)}
        for p, r, label, value in bids[["paper_id", "reviewer_id", "label", "bid"]].itertuples(
            index=False
        )
    ]
    if records:
        session.execute(Bid.__table__.insert(), records)
    conflicts = [
        {
            "venue_id": venue_id,
            "paper_id": p,
            "reviewer_id": r,
            "source": "bid",
            "reason": f"bid {label}",
        }
        for p, r, label in bids[["paper_id", "reviewer_id", "label"]].itertuples(index=False)
        if " ".join(str(label).split()).casefold() in EXCLUDING_BIDS
    ]
    if conflicts:
        session.execute(Conflict.__table__.insert(), conflicts)
    audit(session, venue_id, principal.name, "bids.upload", source=name, bids=len(records))
    session.commit()
    return UploadResult(created=len(records), updated=0, total=len(records))


@router.post("/venues/{venue_id}/constraints/upload", response_model=UploadResult)
def upload_constraints(
    venue_id: VenueIdPath,
    settings: SettingsDep,
    principal: Writer,
    session: SessionDep,
    _gc: CollectionPaused,
    file: Annotated[
        UploadFile, File(description="CSV paper_id, reviewer_id, value: -1 conflict, 1 forced")
    ],
) -> UploadResult:
    """Replace uploaded conflicts (value -1) and add pins (value 1)."""
    name = upload_name(file, "constraints.csv")
    frame = read_pair_constraints(upload_bytes(file, settings, name), name)
    _check_known_ids(session, venue_id, frame, name)
    forbidden = frame[frame["value"] < 0]
    forced = frame[frame["value"] > 0]
    session.execute(
        delete(Conflict).where(Conflict.venue_id == venue_id, Conflict.source == "uploaded")
    )
    if len(forbidden):
        session.execute(
            Conflict.__table__.insert(),
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
        {"venue_id": venue_id, "paper_id": p, "reviewer_id": r, "created_by": principal.name}
        for p, r in forced[["paper_id", "reviewer_id"]].itertuples(index=False)
        if (p, r) not in existing_pins
    ]
    if new_pins:
        session.execute(Pin.__table__.insert(), new_pins)
    audit(
        session,
        venue_id,
        principal.name,
        "constraints.upload",
        source=name,
        conflicts=len(forbidden),
        pins=len(new_pins),
    )
    session.commit()
    return UploadResult(created=len(forbidden) + len(new_pins), updated=0, total=len(frame))


def _reviewer_out(row: ReviewerRow) -> ReviewerOut:
    return ReviewerOut(
        id=row.id,
        name=row.name,
        display_name=display_name(row.id, row.name),
        email=row.email,
        affiliation=row.affiliation,
        attributes=row.attributes,
        n_publications=len(row.publications),
    )


@router.get("/venues/{venue_id}/reviewers", response_model=Page[ReviewerOut])
def list_reviewers(
    venue_id: VenueIdPath,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict[str, Any]:
    query = select(ReviewerRow).where(ReviewerRow.venue_id == venue_id).order_by(ReviewerRow.id)
    items, total = paginate(session, query, limit, offset)
    return {
        "items": [_reviewer_out(r) for r in items],
        "total": total,
        "limit": limit,
        "offset": offset,
    }


@router.get("/venues/{venue_id}/reviewers/{reviewer_id}", response_model=ReviewerOut)
def get_reviewer(
    venue_id: VenueIdPath, reviewer_id: ReviewerIdPath, principal: Reader, session: SessionDep
) -> ReviewerOut:
    return _reviewer_out(require_reviewer(session, venue_id, reviewer_id))


@router.get("/venues/{venue_id}/submissions", response_model=Page[SubmissionOut])
def list_submissions(
    venue_id: VenueIdPath,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict[str, Any]:
    query = (
        select(SubmissionRow).where(SubmissionRow.venue_id == venue_id).order_by(SubmissionRow.id)
    )
    items, total = paginate(session, query, limit, offset)
    return {"items": items, "total": total, "limit": limit, "offset": offset}


@router.get("/venues/{venue_id}/submissions/{paper_id}", response_model=SubmissionOut)
def get_submission(
    venue_id: VenueIdPath, paper_id: PaperIdPath, principal: Reader, session: SessionDep
) -> SubmissionRow:
    return require_paper(session, venue_id, paper_id)
