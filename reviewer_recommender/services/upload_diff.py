"""What a reviewers or submissions upload would change, shown before it applies.

A preview parses and checks the file like the upload itself, then compares it with the
venue's records: **added** ids (new), **changed** ids (a stored field differs),
**unchanged** ids, and **removed** ids (active records of the venue, of the pool for
persons, that the file does not name: what a replacing upload takes away when asked to).
Of the removed persons, a replace withdraws those whose only pool this is (``withdrawing``)
and takes those who are in another pool too out of this pool only (``leaving_pool``,
:mod:`reviewer_recommender.services.memberships`): ``removed == withdrawing + leaving_pool``,
the numbers the upload's answer and audit entry give as ``withdrawn`` and ``left_pool``.
``leaving_assigned`` names those leaving whom the pool's live run assigns: the replace is
refused (409) until they are re-assigned. Persons without publications are flagged (no
profile to score them with).

The preview answers a **token**: a hash of the file's bytes, its kind and pool and the
state of the venue's records of that kind (:func:`records_version`). An upload that names
a token applies only if it is the previewed file on the venue as it was previewed (409
``preview_stale`` otherwise: another upload, edit or withdrawal came in between, or another
file was sent), so what the chair confirmed is what applies.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import StateConflict
from reviewer_recommender.services.memberships import Absent, split_absent
from reviewer_recommender.storage.models import ReviewerRow, SubmissionRow
from reviewer_recommender.storage.repository import corpus_version, pool_members

#: Ids of each group listed in a preview (all are counted).
LISTED = 100

#: The stored fields an upload compares (the rest are derived or bookkeeping).
COMPARED = {
    "reviewers": ("name", "email", "affiliation", "attributes", "publications"),
    "submissions": (
        "title",
        "abstract",
        "authors",
        "source",
        "author_emails",
        "author_ids",
        "author_affiliations",
    ),
}


def content_digest(*parts: bytes | None) -> str:
    """The sha256 of an upload's files (a missing one counts as empty)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part or b""
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


def preview_token(kind: str, pool: str, digest: str, version: str) -> str:
    return hashlib.sha256(f"{kind}\0{pool}\0{digest}\0{version}".encode()).hexdigest()[:32]


def records_version(session: Session, venue_id: str, kind: str) -> str:
    """What changes whenever the venue's records of ``kind`` do: the corpus version (texts)
    and the latest change of a record (an edit, a withdrawal, a restore)."""
    model: Any = ReviewerRow if kind == "reviewers" else SubmissionRow
    latest = session.scalar(select(func.max(model.updated_at)).where(model.venue_id == venue_id))
    return f"{corpus_version(session, venue_id)}:{latest}"


@dataclass
class UploadDiff:
    """An upload's effect before it applies (``UploadPreviewOut``)."""

    kind: str
    pool: str | None
    rows: int
    added: int
    changed: int
    unchanged: int
    removed: int
    added_ids: list[str] = field(default_factory=list)
    changed_ids: list[str] = field(default_factory=list)
    removed_ids: list[str] = field(default_factory=list)
    changed_fields: dict[str, int] = field(default_factory=dict)
    no_publications: list[str] = field(default_factory=list)
    # records the file names that are withdrawn: they stay withdrawn (restore them apart)
    withdrawn_named: list[str] = field(default_factory=list)
    token: str = ""
    # of the removed: withdrawn by a replace (their only pool), leaving this pool only (in
    # another too), and those leaving whom the pool's live run assigns (replace refused)
    withdrawing: int = 0
    leaving_pool: int = 0
    leaving_pool_ids: list[str] = field(default_factory=list)
    leaving_assigned: list[str] = field(default_factory=list)


def _stored(
    session: Session, venue_id: str, model: Any, ids: Sequence[str], columns: Sequence[str]
) -> dict[str, tuple[Any, ...]]:
    found: dict[str, tuple[Any, ...]] = {}
    wanted = sorted(set(ids))
    selected = [model.id, *(getattr(model, c) for c in columns)]
    for start in range(0, len(wanted), 1000):
        for row in session.execute(
            select(*selected).where(
                model.venue_id == venue_id, model.id.in_(wanted[start : start + 1000])
            )
        ):
            found[str(row[0])] = tuple(row[1:])
    return found


def diff_rows(
    session: Session,
    venue_id: str,
    kind: str,
    rows: Sequence[dict[str, Any]],
    digest: str,
    pool: str | None = None,
) -> UploadDiff:
    """Compare checked upload rows (``reviewer_to_row``/``submission_to_row`` dicts) with
    the venue's records; ``pool``: the persons' pool whose absent members count as
    removed."""
    model: Any = ReviewerRow if kind == "reviewers" else SubmissionRow
    columns = COMPARED[kind]
    ids = [str(r["id"]) for r in rows]
    stored = _stored(session, venue_id, model, ids, (*columns, "status"))
    withdrawn = sorted(i for i, values in stored.items() if values[-1] == "withdrawn")
    added = [i for i in ids if i not in stored]
    changed: list[str] = []
    fields: dict[str, int] = {}
    for row in rows:
        before = stored.get(str(row["id"]))
        if before is None:
            continue
        differing = [c for c, old in zip(columns, before[:-1], strict=True) if old != row[c]]
        if differing:
            changed.append(str(row["id"]))
            for name in differing:
                fields[name] = fields.get(name, 0) + 1
    removed = absent_ids(session, venue_id, kind, ids, pool)
    split = (
        split_absent(session, venue_id, pool, removed)
        if kind == "reviewers" and pool is not None
        else Absent(withdraw=removed)
    )
    no_publications = (
        sorted(str(r["id"]) for r in rows if not r["publications"]) if kind == "reviewers" else []
    )
    version = records_version(session, venue_id, kind)
    return UploadDiff(
        kind=kind,
        pool=pool,
        rows=len(rows),
        added=len(added),
        changed=len(changed),
        unchanged=len(rows) - len(added) - len(changed),
        removed=len(removed),
        added_ids=sorted(added)[:LISTED],
        changed_ids=sorted(changed)[:LISTED],
        removed_ids=removed[:LISTED],
        changed_fields=dict(sorted(fields.items())),
        no_publications=no_publications,
        withdrawn_named=withdrawn[:LISTED],
        token=preview_token(kind, pool or "", digest, version),
        withdrawing=len(split.withdraw),
        leaving_pool=len(split.leave),
        leaving_pool_ids=split.leave[:LISTED],
        leaving_assigned=split.held[:LISTED],
    )


def check_confirmed(
    session: Session, venue_id: str, kind: str, pool: str | None, digest: str, token: str
) -> None:
    """409 ``preview_stale`` unless ``token`` is the preview of this file on the venue as
    it is now."""
    expected = preview_token(kind, pool or "", digest, records_version(session, venue_id, kind))
    if token != expected:
        raise StateConflict(
            "preview_stale",
            f"this {kind} upload is not the one previewed, or the venue's records changed "
            "since the preview: preview it again and confirm that",
        )


def absent_ids(
    session: Session, venue_id: str, kind: str, ids: Sequence[str], pool: str | None
) -> list[str]:
    """Active records (of ``pool`` for persons) an upload naming ``ids`` leaves out."""
    model: Any = ReviewerRow if kind == "reviewers" else SubmissionRow
    present = select(model.id).where(model.venue_id == venue_id, model.status == "active")
    if kind == "reviewers" and pool is not None:
        present = present.where(model.id.in_(pool_members(venue_id, pool)))
    named = set(ids)
    return sorted(str(i) for i in session.scalars(present) if str(i) not in named)
