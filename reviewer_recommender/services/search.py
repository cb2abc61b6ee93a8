"""Type-ahead search of a venue's papers and reviewers by id, name or title.

The query and the stored keys are folded alike (:mod:`api.search_keys`: case and accents
ignored, punctuation runs as one space in names and titles). Matches rank: the exact id,
an id prefix, a name/title prefix, a word prefix inside the name/title, a substring of
either; ties by name/title, then id. The keys have their own indexes (migration 0003):
the id-prefix index answers the id ranks, and the name/title index covers every column
the query reads, so a substring search scans that small index, not the table and its
publications.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, case, func, literal, or_, select
from sqlalchemy.orm import Session

from reviewer_recommender.storage.models import ReviewerRow, SubmissionRow
from reviewer_recommender.storage.search_keys import display_name, id_key, text_key

RANKS = ("id", "id_prefix", "prefix", "word", "substring")


def _like(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _conditions(model: Any, query: str) -> tuple[list[ColumnElement[bool]], ColumnElement[bool]]:
    """(rank conditions in RANKS order, the filter) for ``query``."""
    # ids are folded like texts (punctuation as spaces): one folded query serves both
    folded_id, folded_text = id_key(query), text_key(query)
    id_like, text_like = _like(folded_id), _like(folded_text)
    never: ColumnElement[bool] = literal(False)
    ranks = [
        model.id_key == folded_id if folded_id else never,
        model.id_key.like(f"{id_like}%", escape="\\") if folded_id else never,
        model.text_key.like(f"{text_like}%", escape="\\") if folded_text else never,
        model.text_key.like(f"% {text_like}%", escape="\\") if folded_text else never,
        or_(
            model.id_key.like(f"%{id_like}%", escape="\\") if folded_id else never,
            model.text_key.like(f"%{text_like}%", escape="\\") if folded_text else never,
        ),
    ]
    return ranks, ranks[-1]


def search(
    session: Session, venue_id: str, kind: str, query: str, limit: int, offset: int
) -> dict[str, Any]:
    """A page of the venue's papers (``kind="papers"``) or reviewers matching ``query``,
    best match first: ``{items: [{id, title|name(, affiliation), match}], total, limit,
    offset}``."""
    model: Any = SubmissionRow if kind == "papers" else ReviewerRow
    ranks, where = _conditions(model, query)
    rank = case(*((condition, index) for index, condition in enumerate(ranks)), else_=len(ranks))
    base = select(model.id, rank.label("rank")).where(model.venue_id == venue_id, where)
    total = int(session.scalar(select(func.count()).select_from(base.subquery())) or 0)
    page = session.execute(
        base.order_by(rank, model.text_key, model.id).limit(limit).offset(offset)
    ).all()
    ids = [str(r.id) for r in page]
    if kind == "papers":
        titles = dict(
            session.execute(
                select(SubmissionRow.id, SubmissionRow.title).where(
                    SubmissionRow.venue_id == venue_id, SubmissionRow.id.in_(ids)
                )
            ).all()
        )
        items = [
            {"id": r.id, "title": titles.get(r.id, ""), "match": RANKS[int(r.rank)]} for r in page
        ]
    else:
        people = {
            row.id: row
            for row in session.execute(
                select(ReviewerRow.id, ReviewerRow.name, ReviewerRow.affiliation).where(
                    ReviewerRow.venue_id == venue_id, ReviewerRow.id.in_(ids)
                )
            )
        }
        items = [
            {
                "id": r.id,
                "name": display_name(r.id, people[r.id].name if r.id in people else ""),
                "affiliation": people[r.id].affiliation if r.id in people else "",
                "match": RANKS[int(r.rank)],
            }
            for r in page
        ]
    return {"items": items, "total": total, "limit": limit, "offset": offset}
