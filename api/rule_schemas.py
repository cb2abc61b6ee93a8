"""Request and response bodies of a draft's own rules (pins, forbids, max loads kept with
one run until a chair promotes them to venue rules)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from reviewer_recommender.services.ids import IdText, ReviewerIdText, SafeText

RuleKind = Literal["pin", "forbid", "max_load"]


class DraftRuleOut(BaseModel):
    kind: RuleKind
    paper_id: str | None = Field(description="null for a max load")
    paper_title: str | None
    reviewer_id: str
    reviewer_name: str
    value: int | None = Field(description="a max load's value in this run")
    venue_value: int | None = Field(
        description="a max load's value at venue level (what other runs hold the reviewer to)"
    )
    reason: str
    created_by: str
    created_at: datetime


class RuleCountsOut(BaseModel):
    pin: int
    forbid: int
    max_load: int


class DraftRulesOut(BaseModel):
    assignment_id: int
    number: int | None
    items: list[DraftRuleOut]
    counts: RuleCountsOut
    total: int


class RuleKeyIn(BaseModel):
    kind: RuleKind
    paper_id: IdText | None = None
    reviewer_id: ReviewerIdText


class PromoteIn(BaseModel):
    rules: list[RuleKeyIn] | None = Field(
        default=None, description="the rules to promote; null or absent: all of the run's"
    )
    reason: SafeText = ""


class PromoteOut(BaseModel):
    assignment_id: int
    promoted: RuleCountsOut
    total: int
