"""Display names of reviewers and the normalised keys that type-ahead search compares.

Kept free of database imports: the models compute default keys with these functions and
migration 0003 back-fills existing rows with a copy of them.
"""

from __future__ import annotations

from recommender.names import KEY_MAX_LENGTH, fold, name_from_profile_id, text_key

__all__ = ["KEY_MAX_LENGTH", "display_name", "id_key", "name_from_profile_id", "text_key"]


def id_key(value: str) -> str:
    """An id folded for matching like a text (``~Ada_Lovelace1`` -> ``ada lovelace1``,
    ``iclr-000-01`` -> ``iclr 000 01``), or, for an id of punctuation only, its folded
    self."""
    return text_key(value) or fold(value).strip()[:KEY_MAX_LENGTH]


def display_name(reviewer_id: str, name: str | None) -> str:
    """What to call a reviewer: their profile or CSV name (for archives, which hold no
    name, the readers' owner name: :func:`recommender.names.profile_owner_name`), else the
    name in their OpenReview profile id, else their id."""
    given = (name or "").strip()
    return given or name_from_profile_id(reviewer_id) or reviewer_id
