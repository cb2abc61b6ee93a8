"""Results of the stored-venue use cases that every face shows as they are (pydantic models:
the HTTP API uses them as response bodies, other faces read their fields)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field


class PairScoreOut(BaseModel):
    paper_id: str
    paper_title: str = ""
    reviewer_id: str
    reviewer_name: str = ""
    score: float
    conflict: list[str] | None = Field(
        description="conflict reasons, empty if none; null for roles that do not see them"
    )
    bid: str | None = Field(description="the reviewer's bid; null if none or not visible")
    explanation: dict[str, Any] | None = None
    stale: bool = Field(
        default=False,
        description="the corpus changed since the affinity run: score and explanation are "
        "the run's, from the texts it scored (an affinity job refreshes them)",
    )


class PaperReviewerOut(BaseModel):
    """A reviewer of a paper in an assignment, with their load there."""

    reviewer_id: str
    reviewer_name: str = ""
    score: float
    pinned: bool = False
    rank: int | None = Field(default=None, description="alternates only: 1 = best")
    load: int = Field(description="papers the reviewer has in this assignment")
    max_load: int | None = Field(description="the reviewer's max load in this assignment")


class PaperAssignmentOut(BaseModel):
    """A paper's assigned reviewers and the next-best reviewers who could still take it."""

    paper_id: str
    paper_title: str = ""
    demand: int | None
    assigned: list[PaperReviewerOut]
    alternates: list[PaperReviewerOut] = Field(
        description="unassigned, conflict-free stored candidates with load below their max, "
        "best score first (matching.alternates)"
    )


@dataclass(frozen=True)
class UploadCounts:
    """What an upload stored: rows created and updated, and how many of that kind the venue
    has now (``UploadResult``)."""

    created: int
    updated: int
    total: int
    # persons of the upload without publications (flagged: nothing to score them with)
    no_publications: tuple[str, ...] = ()
    # records a confirmed replacing upload withdrew (active, not named by the file)
    withdrawn: int = 0
    # persons a confirmed replacing upload took out of its pool only (in another pool too)
    left_pool: int = 0
    # the file's lines left out, each {line, field, message}, and how many lines they are
    # (:mod:`reviewer_recommender.services.skipped`: the audit entry counts the same)
    skipped: tuple[dict[str, Any], ...] = ()
    skipped_lines: int = 0
