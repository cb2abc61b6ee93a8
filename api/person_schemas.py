"""Bodies and answers of a person's own view (``/venues/{v}/me...``) and of the chairs'
bidding, declines and levels views (:mod:`api.routers.persons`)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr

from reviewer_recommender.services.ids import SafeText
from reviewer_recommender.services.pools import Pool


class VenueMeOut(BaseModel):
    """Who the caller is in the venue: a person token's person, role and pools."""

    person_id: str | None = Field(description="the person a reviewer/area_chair token is for")
    role: str
    pools: list[str] = Field(description="the pools the person belongs to")
    name: str = Field(description="the person's display name (the token's for other roles)")
    venue_id: str
    venue_name: str
    bidding_open: bool
    pool: str | None = Field(default=None, description="the pool the token speaks in")
    live_assignment_id: int | None = Field(
        default=None, description="the live run of that pool, if one is published"
    )


class PersonRef(BaseModel):
    reviewer_id: str
    reviewer_name: str = ""


class MyPaperOut(BaseModel):
    """A paper assigned to the person in their pool's live run."""

    paper_id: str
    paper_title: str = ""
    score: float = Field(description="the person's own score for the paper")
    declined: bool
    decline_reason: str | None
    decline_state: Literal["open", "reassigned"] | None
    reviewers: list[PersonRef] | None = Field(
        default=None, description="area chairs: the paper's reviewers in the live reviewer run"
    )
    senior_area_chairs: list[PersonRef] | None = Field(
        default=None, description="area chairs: their senior area chair for the paper"
    )


class MyPapersOut(BaseModel):
    items: list[MyPaperOut]
    total: int
    limit: int
    offset: int
    assignment_id: int | None = Field(description="the pool's live run (null: none yet)")


class CandidateOut(BaseModel):
    """A paper the person may bid on, with their own score and bid."""

    paper_id: str
    paper_title: str = ""
    score: float
    bid: str | None = Field(description="the person's own bid, if any")
    assigned: bool = Field(description="assigned to them in the live run")


class BidIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bid: StrictFloat | StrictInt | StrictStr = Field(
        description="Very High, High, Neutral, Low, Very Low, Not Willing, Conflict, or a number",
        examples=["High"],
    )


class BidOut(BaseModel):
    paper_id: str
    bid: str | None
    value: float | None
    excludes: bool = Field(description="Not Willing or Conflict: the pair is never assigned")


class DeclineIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: SafeText = Field(min_length=1, max_length=2000, description="why, for the chairs")


class MyDeclineOut(BaseModel):
    id: int
    paper_id: str
    assignment_id: int
    reason: str
    state: Literal["open", "reassigned"]
    created_at: datetime


class DeclineOut(MyDeclineOut):
    """A decline as the chairs list it."""

    paper_title: str = ""
    person_id: str
    person_name: str = ""
    pool: str
    resolved_at: datetime | None
    resolved_by: str
    reassignment_id: int | None
    on_live_run: bool = Field(description="its run is still the pool's live run")


class DeclinesReassignIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pool: Pool = "reviewers"
    reason: SafeText = Field(default="", max_length=1000)


class PaperCoverageOut(BaseModel):
    paper_id: str
    paper_title: str = ""
    positive_bids: int
    bids: int


class PersonWithoutBidsOut(BaseModel):
    person_id: str
    person_name: str = ""


class PaperChairsOut(BaseModel):
    paper_id: str
    paper_title: str = ""
    area_chairs: list[PersonRef]
    senior_area_chairs: list[PersonRef]
