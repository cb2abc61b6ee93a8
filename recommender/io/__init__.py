"""Readers: files and uploads -> validated domain objects (:mod:`recommender.corpus`).

Every reader returns complete results or raises one :class:`~recommender.corpus.InputError`
listing every problem found (file, line or record, field, reason); nothing is half-loaded.
Text is whitespace-normalized, reviewer ids lose OpenReview's leading ``~``, years become
``int`` (or ``None`` when absent; anything else is a problem).
"""

from recommender.io.reviewers import (
    MAX_ZIP_COMPRESSION_RATIO,
    MAX_ZIP_MEMBERS,
    MAX_ZIP_UNCOMPRESSED_BYTES,
    parse_reviewers_upload,
    read_openreview_archives,
    read_openreview_archives_zip,
    read_reviewers,
    read_reviewers_csv,
    read_reviewers_json,
)
from recommender.io.scores import MAX_ABS_SCORE, ScoreTable, read_scores
from recommender.io.submissions import parse_submissions_upload, read_submissions
from recommender.io.tables import (
    read_bids,
    read_custom_max_papers,
    read_demand,
    read_pair_constraints,
    read_pairs,
    read_reviewer_ids,
)

__all__ = [
    "MAX_ABS_SCORE",
    "MAX_ZIP_COMPRESSION_RATIO",
    "MAX_ZIP_MEMBERS",
    "MAX_ZIP_UNCOMPRESSED_BYTES",
    "ScoreTable",
    "parse_reviewers_upload",
    "parse_submissions_upload",
    "read_bids",
    "read_custom_max_papers",
    "read_demand",
    "read_openreview_archives",
    "read_openreview_archives_zip",
    "read_pair_constraints",
    "read_pairs",
    "read_reviewer_ids",
    "read_reviewers",
    "read_reviewers_csv",
    "read_reviewers_json",
    "read_scores",
    "read_submissions",
]
