"""Uploads and listings of reviewers, submissions, bids and pair constraints.

Every upload is parsed completely by :mod:`recommender.io` before anything is written and
then stored in one transaction: it is applied whole or not at all. Re-uploading an id
updates that reviewer or submission. Upload routes are plain ``def`` functions, run on the
thread pool: parsing a large file never blocks the event loop (see :mod:`api.uploads`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, UploadFile

from api.auth import Reader, Writer
from api.dependencies import Limit, Offset, SessionDep, SettingsDep
from api.ids import (
    OptionalPoolQuery,
    PaperIdPath,
    PoolQuery,
    ReviewerIdPath,
    StatusQuery,
    TextQuery,
    VenueIdPath,
)
from api.schemas import Page, ReviewerOut, SubmissionOut, UploadResult
from api.uploads import (
    CollectionPaused,
    RawBody,
    archive_limits,
    json_list_body,
    upload_bytes,
    upload_name,
)
from recommender.io import (
    parse_reviewers_upload,
    parse_submissions_upload,
)
from reviewer_recommender.services import corpus
from reviewer_recommender.services.corpus import ReviewerRecord, SubmissionRecord
from reviewer_recommender.services.pair_uploads import store_bids, store_pair_constraints
from reviewer_recommender.services.results import UploadCounts
from reviewer_recommender.storage.repository import Paged

router = APIRouter(tags=["corpus"])

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
    pool: PoolQuery = "reviewers",
) -> UploadCounts:
    """Upload persons from a file into a pool (reviewers by default; a person may be in
    several); 422 lists every bad row, nothing is stored then."""
    content = upload_bytes(file, settings, "reviewers")
    pubs = None
    if publications is not None:
        pubs = (
            upload_name(publications, "publications.csv"),
            upload_bytes(publications, settings, "publications.csv"),
        )
    name = upload_name(file, "reviewers")
    reviewers = parse_reviewers_upload(name, content, pubs, archive_limits=archive_limits(settings))
    return corpus.store_reviewers(session, venue_id, principal.name, reviewers, name, pool)


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
    pool: PoolQuery = "reviewers",
) -> UploadCounts:
    """Upload persons as a JSON list (validated like a reviewers.json file) into a pool."""
    parsed = parse_reviewers_upload("request body.json", body)
    return corpus.store_reviewers(session, venue_id, principal.name, parsed, "request body", pool)


@router.post("/venues/{venue_id}/submissions/upload", response_model=UploadResult)
def upload_submissions(
    venue_id: VenueIdPath,
    settings: SettingsDep,
    principal: Writer,
    session: SessionDep,
    _gc: CollectionPaused,
    file: Annotated[UploadFile, File(description="submissions .json (OpenReview), .jsonl or .csv")],
) -> UploadCounts:
    """Upload submissions from a file; 422 lists every bad row, nothing is stored then."""
    name = upload_name(file, "submissions")
    content = upload_bytes(file, settings, name)
    submissions = parse_submissions_upload(name, content)
    return corpus.store_submissions(session, venue_id, principal.name, submissions, name)


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
) -> UploadCounts:
    """Upload submissions as a JSON list (validated like a submissions.json file)."""
    parsed = parse_submissions_upload("request body.json", body)
    return corpus.store_submissions(session, venue_id, principal.name, parsed, "request body")


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
    stored = store_bids(session, venue_id, upload_bytes(file, settings, name), name, principal.name)
    return UploadResult.model_validate(stored, from_attributes=True)


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
    content = upload_bytes(file, settings, name)
    stored = store_pair_constraints(session, venue_id, content, name, principal.name)
    return UploadResult.model_validate(stored, from_attributes=True)


@router.get("/venues/{venue_id}/reviewers", response_model=Page[ReviewerOut])
def list_reviewers(
    venue_id: VenueIdPath,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
    pool: OptionalPoolQuery = None,
    q: TextQuery = None,
    status: StatusQuery = None,
) -> Paged[ReviewerRecord]:
    """The venue's persons by id, each with their pools and status (of one pool with
    ``pool``; whose id or name contains ``q``; of one ``status``). ``no_publications``
    flags those without a profile to score."""
    return corpus.list_reviewers(session, venue_id, limit, offset, pool, q, status)


@router.get("/venues/{venue_id}/reviewers/{reviewer_id}", response_model=ReviewerOut)
def get_reviewer(
    venue_id: VenueIdPath, reviewer_id: ReviewerIdPath, principal: Reader, session: SessionDep
) -> ReviewerRecord:
    return corpus.get_reviewer(session, venue_id, reviewer_id)


@router.get("/venues/{venue_id}/submissions", response_model=Page[SubmissionOut])
def list_submissions(
    venue_id: VenueIdPath,
    principal: Reader,
    session: SessionDep,
    limit: Limit = 100,
    offset: Offset = 0,
    q: TextQuery = None,
    status: StatusQuery = None,
) -> Paged[SubmissionRecord]:
    """The venue's submissions by id, with their status (whose id or title contains ``q``;
    of one ``status``)."""
    return corpus.list_submissions(session, venue_id, limit, offset, q, status)


@router.get("/venues/{venue_id}/submissions/{paper_id}", response_model=SubmissionOut)
def get_submission(
    venue_id: VenueIdPath, paper_id: PaperIdPath, principal: Reader, session: SessionDep
) -> SubmissionRecord:
    return corpus.get_submission(session, venue_id, paper_id)
