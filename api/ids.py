"""Path and query parameters of the HTTP API, with the id and text rules of
:mod:`reviewer_recommender.services.ids` (the one policy every face applies)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import Path, Query
from pydantic import AfterValidator, BeforeValidator

from reviewer_recommender.services.ids import (
    ID_MAX_LENGTH,
    MAX_ROW_ID,
    VENUE_ID_MAX_LENGTH,
    VENUE_ID_PATTERN,
    VENUE_ID_RULE,
    check_id,
    check_text,
    reviewer_id_form,
)
from reviewer_recommender.services.pools import Pool

# path and query parameters
VenueIdPath = Annotated[
    str,
    Path(
        min_length=1,
        max_length=VENUE_ID_MAX_LENGTH,
        pattern=VENUE_ID_PATTERN,
        description=f"venue id: {VENUE_ID_RULE}",
    ),
]
PaperIdPath = Annotated[
    str,
    Path(min_length=1, max_length=ID_MAX_LENGTH, description="paper id"),
    AfterValidator(check_id),
]
ReviewerIdPath = Annotated[
    str,
    BeforeValidator(reviewer_id_form),
    Path(
        min_length=1,
        max_length=ID_MAX_LENGTH,
        description="reviewer id (a leading '~' is ignored, as in uploads)",
    ),
    AfterValidator(check_id),
]
RowIdPath = Annotated[int, Path(ge=1, le=MAX_ROW_ID)]
PoolPath = Annotated[
    Pool, Path(description="the pool: reviewers, area_chairs or senior_area_chairs")
]
IdQuery = Annotated[
    str | None,
    Query(min_length=1, max_length=ID_MAX_LENGTH),
    AfterValidator(lambda value: None if value is None else check_id(value)),
]
TextQuery = Annotated[
    str | None,
    Query(max_length=300),
    AfterValidator(lambda value: None if value is None else check_text(value)),
]
StatusQuery = Annotated[
    Literal["active", "withdrawn"] | None,
    Query(description="only records of this status: active or withdrawn"),
]
ReviewerIdQuery = Annotated[
    str | None,
    BeforeValidator(reviewer_id_form),
    Query(min_length=1, max_length=ID_MAX_LENGTH),
    AfterValidator(lambda value: None if value is None else check_id(value)),
]
PoolQuery = Annotated[
    Pool,
    Query(
        description="the pool of persons: reviewers (the default), area_chairs or "
        "senior_area_chairs"
    ),
]
OptionalPoolQuery = Annotated[
    Pool | None, Query(description="only the persons or runs of this pool")
]
