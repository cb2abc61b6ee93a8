"""Uploads and listings of reviewers, submissions, bids and pair constraints.

Every upload is parsed completely by :mod:`recommender.io` before anything is written and
then stored in one transaction: it is applied whole or not at all. Re-uploading an id
updates that reviewer or submission. Upload routes are plain ``def`` functions, run on the
thread pool: parsing a large file never blocks the event loop (see :mod:`api.uploads`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Query, UploadFile

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
from api.record_schemas import (
    ReviewerOut,
    SubmissionOut,
    UploadPreviewOut,
    UploadResult,
)
from api.schemas import (
    Page,
)
from api.uploads import (
    CollectionPaused,
    RawBody,
    archive_limits,
    json_list_body,
    upload_bytes,
    upload_name,
)
from recommender.corpus import Reviewer, Submission
from recommender.io import (
    parse_reviewers_upload,
    parse_submissions_upload,
)
from reviewer_recommender.services import corpus
from reviewer_recommender.services.corpus import ReviewerRecord, SubmissionRecord
from reviewer_recommender.services.pair_uploads import store_bids, store_pair_constraints
from reviewer_recommender.services.results import UploadCounts
from reviewer_recommender.services.upload_diff import UploadDiff, content_digest
from reviewer_recommender.settings import Settings
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


ReviewersFile = Annotated[
    UploadFile,
    File(description="reviewers .csv/.json/.jsonl, a ~id.jsonl archive or a .zip of them"),
]
PublicationsFile = Annotated[
    UploadFile | None, File(description="publications.csv (with reviewers.csv)")
]
SubmissionsFile = Annotated[
    UploadFile, File(description="submissions .json (OpenReview), .jsonl or .csv")
]
PreviewQuery = Annotated[
    str | None,
    Query(
        max_length=64,
        pattern="^[0-9a-f]+$",
        description="the token of the preview the chair confirmed: applies only if this is "
        "the previewed file on the venue as previewed (409 preview_stale otherwise)",
    ),
]
WithdrawAbsentQuery = Annotated[
    bool,
    Query(
        description="replace: withdraw the active records (of the pool) the file leaves "
        "out, except persons in another pool too, who leave this pool only; needs a preview "
        "token"
    ),
]


def _reviewers_file(
    settings: Settings, file: UploadFile, publications: UploadFile | None
) -> tuple[str, tuple[Reviewer, ...], str]:
    """The upload's name, its parsed persons and its content digest."""
    content = upload_bytes(file, settings, "reviewers")
    pubs = None
    if publications is not None:
        pubs = (
            upload_name(publications, "publications.csv"),
            upload_bytes(publications, settings, "publications.csv"),
        )
    name = upload_name(file, "reviewers")
    reviewers = parse_reviewers_upload(name, content, pubs, archive_limits=archive_limits(settings))
    return name, reviewers, content_digest(content, pubs[1] if pubs else None)


def _submissions_file(
    settings: Settings, file: UploadFile
) -> tuple[str, tuple[Submission, ...], str]:
    name = upload_name(file, "submissions")
    content = upload_bytes(file, settings, name)
    return name, parse_submissions_upload(name, content), content_digest(content)


@router.post("/venues/{venue_id}/reviewers/upload", response_model=UploadResult)
def upload_reviewers(
    venue_id: VenueIdPath,
    settings: SettingsDep,
    principal: Writer,
    session: SessionDep,
    _gc: CollectionPaused,
    file: ReviewersFile,
    publications: PublicationsFile = None,
    pool: PoolQuery = "reviewers",
    preview: PreviewQuery = None,
    withdraw_absent: WithdrawAbsentQuery = False,
) -> UploadCounts:
    """Upload persons from a file into a pool (reviewers by default; a person may be in
    several); 422 lists every bad row, or says the file looks like submissions; nothing is
    stored then. ``no_publications`` flags the persons without publications. A replace
    (``withdraw_absent``) withdraws the persons it leaves out whose only pool this is and
    takes those in another pool too out of this one (``withdrawn``, ``left_pool``); 409
    ``member_assigned_live`` while the pool's live run assigns one of the latter."""
    name, reviewers, digest = _reviewers_file(settings, file, publications)
    confirm = corpus.Confirm(preview, digest, withdraw_absent)
    return corpus.store_reviewers(session, venue_id, principal.name, reviewers, name, pool, confirm)


@router.post("/venues/{venue_id}/reviewers/upload/preview", response_model=UploadPreviewOut)
def preview_reviewers(
    venue_id: VenueIdPath,
    settings: SettingsDep,
    principal: Writer,
    session: SessionDep,
    _gc: CollectionPaused,
    file: ReviewersFile,
    publications: PublicationsFile = None,
    pool: PoolQuery = "reviewers",
) -> UploadDiff:
    """What uploading this file into the pool would change, before anything is stored:
    added, changed and unchanged ids, and the pool's active persons it leaves out
    (``removed``: ``withdrawing``, whose only pool it is, and ``leaving_pool``, who are in
    another pool too and would leave this one only), counted and listed; persons without
    publications; the ``token`` that confirms exactly this file (``preview`` on the
    upload)."""
    name, reviewers, digest = _reviewers_file(settings, file, publications)
    return corpus.preview_reviewers(session, venue_id, reviewers, name, pool, digest)


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
    file: SubmissionsFile,
    preview: PreviewQuery = None,
    withdraw_absent: WithdrawAbsentQuery = False,
) -> UploadCounts:
    """Upload submissions from a file; 422 lists every bad row, or says the file looks
    like reviewers; nothing is stored then."""
    name, submissions, digest = _submissions_file(settings, file)
    confirm = corpus.Confirm(preview, digest, withdraw_absent)
    return corpus.store_submissions(session, venue_id, principal.name, submissions, name, confirm)


@router.post("/venues/{venue_id}/submissions/upload/preview", response_model=UploadPreviewOut)
def preview_submissions(
    venue_id: VenueIdPath,
    settings: SettingsDep,
    principal: Writer,
    session: SessionDep,
    _gc: CollectionPaused,
    file: SubmissionsFile,
) -> UploadDiff:
    """What uploading this file would change, before anything is stored: added, changed
    and unchanged ids, and the active submissions it leaves out (``removed``), counted and
    listed; the ``token`` that confirms exactly this file (``preview`` on the upload)."""
    name, submissions, digest = _submissions_file(settings, file)
    return corpus.preview_submissions(session, venue_id, submissions, name, digest)


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
    """Replace uploaded conflicts (value -1; one a chair dismissed stays dismissed until
    restored) and add pins (value 1). A bad line or unknown id is skipped and listed in
    ``skipped`` by line; 422 names every one when no line is valid (nothing changes)."""
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
