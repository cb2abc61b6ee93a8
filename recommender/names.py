"""Names of people: folding for comparison, the name an OpenReview profile id spells, and
the name of a profile's owner read off its publications' author lists.

Kept free of database and web imports: the readers name reviewers with these functions,
and the service's search keys (``api.search_keys``) fold with the same ones.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

# a key is compared by prefix and substring; titles are cut (btree index entries are bounded)
KEY_MAX_LENGTH = 200
# OpenReview profile ids spell the profile's name: ~First_Middle_Last1
_PROFILE_ID = re.compile(r"^~?((?:[^\W\d_]|['.\-])+(?:_(?:[^\W\d_]|['.\-])+)+)\d+$")
_NOT_WORD = re.compile(r"[\W_]+")
# the share of a profile's publications an author must be on to be taken as its owner
OWNER_SHARE = 0.6
# ... and the fewest publications that can show it (one paper names all its authors equally)
OWNER_MIN_PUBLICATIONS = 2


def fold(value: str) -> str:
    """``value`` with accents dropped and case folded."""
    decomposed = unicodedata.normalize("NFKD", value)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


@functools.lru_cache(maxsize=1 << 18)
def normalize_name(name: str) -> str:
    """Accents stripped, case folded, every run of punctuation, underscores and whitespace
    one space: ``"  José  O'Neil-Ávila "`` -> ``"jose o neil avila"``. How names are
    compared everywhere (conflicts of interest, profile owners, search keys)."""
    return _NOT_WORD.sub(" ", fold(name)).strip()


def text_key(value: str) -> str:
    """``value`` folded for matching (:func:`normalize_name`), cut to ``KEY_MAX_LENGTH``
    (``"Graph-Neural  Nets"`` -> ``"graph neural nets"``)."""
    return normalize_name(value)[:KEY_MAX_LENGTH]


def name_from_profile_id(reviewer_id: str) -> str | None:
    """The name an OpenReview profile id spells (``~Ada_Lovelace1`` -> ``Ada Lovelace``),
    or None for other ids."""
    match = _PROFILE_ID.match(reviewer_id.strip())
    return match.group(1).replace("_", " ") if match else None


def profile_owner_name(author_lists: Sequence[Iterable[str]]) -> str:
    """The author whose profile these publications make up, or ``""`` when they don't tell.

    ``author_lists`` holds one list of author names per publication. The owner is the one
    author (compared folded, ``"José  Pérez"`` = ``"jose perez"``) on at least
    ``OWNER_SHARE`` of the publications, counting only publications that list authors, with
    at least ``OWNER_MIN_PUBLICATIONS`` such publications; a tie for the most publications
    tells nothing. The spelling returned is the owner's most frequent one (ties: first seen).
    """
    listed = [
        {key: name for name in authors if (key := normalize_name(name))} for authors in author_lists
    ]
    listed = [keys for keys in listed if keys]
    if len(listed) < OWNER_MIN_PUBLICATIONS:
        return ""
    on = Counter(key for keys in listed for key in keys)
    (best, count), (_, runner_up) = [*on.most_common(2), ("", 0)][:2]
    if count < OWNER_SHARE * len(listed) or runner_up == count:
        return ""
    spellings = Counter(keys[best].strip() for keys in listed if best in keys)
    return spellings.most_common(1)[0][0]
