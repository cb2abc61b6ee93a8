"""Conflicts of interest as a use case: detect them from profiles and write them in
OpenReview's constraints format."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from recommender.conflicts import detect_conflicts as detect_from_profiles
from recommender.corpus import Reviewer, Submission
from reviewer_recommender.services.params import ConflictParams

CONSTRAINT_COLUMNS = ["paper_id", "reviewer_id", "value", "reason"]


def detect_conflicts(
    reviewers: Sequence[Reviewer], submissions: Sequence[Submission], params: ConflictParams
) -> pd.DataFrame:
    """Conflicting pairs as ``DataFrame[paper_id, reviewer_id, reason, detail]``, one row
    per pair and reason (see :func:`recommender.conflicts.detect_conflicts`)."""
    return detect_from_profiles(
        reviewers,
        submissions,
        coauthor_window_years=params.coauthor_window_years,
        reference_year=params.reference_year,
        coauthors=params.coauthors,
        same_institution=params.same_institution,
        same_email_domain=params.same_email_domain,
    )


def conflict_constraints(conflicts: pd.DataFrame) -> pd.DataFrame:
    """One row per conflicting pair: ``paper_id, reviewer_id, value`` (-1) and ``reason``
    (every reason of the pair with what matched, joined by "; ")."""
    if conflicts.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in CONSTRAINT_COLUMNS}).astype(
            {"value": "int64"}
        )
    detail = conflicts["detail"].astype(str)
    described = (
        conflicts["reason"]
        .astype(str)
        .where(detail == "", conflicts["reason"].astype(str) + ": " + detail)
    )
    grouped = (
        conflicts.assign(reason=described)
        .groupby(["paper_id", "reviewer_id"], sort=True, as_index=False)["reason"]
        .agg("; ".join)
    )
    grouped.insert(2, "value", -1)
    return grouped[CONSTRAINT_COLUMNS]
