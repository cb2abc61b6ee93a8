"""Display names of reviewers and the normalised keys that type-ahead search compares.

Kept free of database imports: the models compute default keys with these functions and
migration 0003 back-fills existing rows with a copy of them.
"""

from __future__ import annotations

import re
import unicodedata

# a key is compared by prefix and substring; titles are cut (btree index entries are bounded)
KEY_MAX_LENGTH = 200
# OpenReview profile ids spell the profile's name: ~First_Middle_Last1
_PROFILE_ID = re.compile(r"^~?((?:[^\W\d_]|['.\-])+(?:_(?:[^\W\d_]|['.\-])+)+)\d+$")
_NOT_WORD = re.compile(r"[\W_]+")


def _fold(value: str) -> str:
    decomposed = unicodedata.normalize("NFKD", value)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def text_key(value: str) -> str:
    """``value`` folded for matching: accents dropped, case folded, every run of
    punctuation and spaces one space (``"Graph-Neural  Nets"`` -> ``"graph neural nets"``)."""
    return _NOT_WORD.sub(" ", _fold(value)).strip()[:KEY_MAX_LENGTH]


def id_key(value: str) -> str:
    """An id folded for matching like a text (``~Ada_Lovelace1`` -> ``ada lovelace1``,
    ``iclr-000-01`` -> ``iclr 000 01``), or, for an id of punctuation only, its folded
    self."""
    return text_key(value) or _fold(value).strip()[:KEY_MAX_LENGTH]


def name_from_profile_id(reviewer_id: str) -> str | None:
    """The name an OpenReview profile id spells (``~Ada_Lovelace1`` -> ``Ada Lovelace``),
    or None for other ids."""
    match = _PROFILE_ID.match(reviewer_id.strip())
    return match.group(1).replace("_", " ") if match else None


def display_name(reviewer_id: str, name: str | None) -> str:
    """What to call a reviewer: their profile or CSV name, else the name in their
    OpenReview profile id (archives hold no name), else their id."""
    given = (name or "").strip()
    return given or name_from_profile_id(reviewer_id) or reviewer_id
