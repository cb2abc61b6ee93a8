"""Names beside ids: paper titles and reviewer display names for the ids a response holds.

Every response that carries a ``paper_id`` also carries ``paper_title``, and every
``reviewer_id`` a ``reviewer_name``
(:func:`reviewer_recommender.storage.search_keys.display_name`); an id the venue
no longer has gets ``""``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from reviewer_recommender.storage.models import ReviewerRow, SubmissionRow
from reviewer_recommender.storage.search_keys import display_name

# above this many ids, one query for the whole venue beats chunked IN lists
_WHOLE_VENUE = 2000
_CHUNK = 500


@dataclass(frozen=True)
class Names:
    """Titles by paper id and display names by reviewer id."""

    titles: Mapping[str, str] = field(default_factory=dict)
    names: Mapping[str, str] = field(default_factory=dict)

    def title(self, paper_id: str | None) -> str:
        return self.titles.get(paper_id, "") if paper_id is not None else ""

    def name(self, reviewer_id: str | None) -> str:
        return self.names.get(reviewer_id, "") if reviewer_id is not None else ""


def _lookup(
    session: Session, venue_id: str, model: Any, column: Any, ids: Iterable[str | None]
) -> dict[str, Any]:
    wanted = sorted({i for i in ids if i is not None})
    if not wanted:
        return {}
    base = select(model.id, column).where(model.venue_id == venue_id)
    if len(wanted) > _WHOLE_VENUE:
        return {str(i): v for i, v in session.execute(base)}
    found: dict[str, Any] = {}
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        found.update({str(i): v for i, v in session.execute(base.where(model.id.in_(chunk)))})
    return found


def lookup(
    session: Session,
    venue_id: str,
    paper_ids: Iterable[str | None] = (),
    reviewer_ids: Iterable[str | None] = (),
) -> Names:
    """Titles of ``paper_ids`` and names of ``reviewer_ids`` in the venue."""
    titles = _lookup(session, venue_id, SubmissionRow, SubmissionRow.title, paper_ids)
    names = {
        i: display_name(i, n)
        for i, n in _lookup(session, venue_id, ReviewerRow, ReviewerRow.name, reviewer_ids).items()
    }
    return Names({k: str(v or "") for k, v in titles.items()}, names)


PAPER_KEYS = ("paper_id",)
REVIEWER_KEYS = ("reviewer_id", "remove_reviewer_id", "add_reviewer_id", "other_reviewer_id")


def _named_key(key: str, suffix: str) -> str:
    return key.removesuffix("_id") + suffix


def name_rows(
    session: Session,
    venue_id: str,
    rows: Sequence[dict[str, Any]],
    *,
    names: Names | None = None,
) -> list[dict[str, Any]]:
    """``rows`` with ``paper_title`` beside ``paper_id`` and ``reviewer_name`` (and
    ``remove_reviewer_name``, ...) beside each reviewer id key they hold."""
    if names is None:
        names = lookup(
            session,
            venue_id,
            (r.get(k) for r in rows for k in PAPER_KEYS),
            (r.get(k) for r in rows for k in REVIEWER_KEYS),
        )
    named = []
    for row in rows:
        item = dict(row)
        for key in PAPER_KEYS:
            if key in item:
                item[_named_key(key, "_title")] = names.title(item[key])
        for key in REVIEWER_KEYS:
            if key in item:
                item[_named_key(key, "_name")] = names.name(item[key])
        named.append(item)
    return named
