"""What kind of file an upload looks like, from its first bytes: a submissions file put into
the reviewers upload (or the other way round) is refused before anything is parsed, naming
what it looks like and the fields that tell.

Only field names are read: a CSV's header, the keys of the first JSON records (within the
first :data:`HEAD_BYTES`). Archives (``.zip``, ``~id.jsonl``) are always reviewers' and
are not sniffed.
"""

from __future__ import annotations

import csv
import io
import re

from recommender.corpus import InputError, Problem

HEAD_BYTES = 64 * 1024

#: Fields only a person has (a publication inside a person has ``title``/``abstract`` too).
PERSON_FIELDS = frozenset({"publications", "email", "affiliation", "name"})
#: Fields a submission has at its top level (or in an OpenReview note's ``content``).
SUBMISSION_FIELDS = frozenset({"title", "abstract"})
#: Fields of a pair file (bids, conflicts, limits): neither kind.
PAIR_FIELDS = frozenset({"paper_id", "reviewer_id"})

_JSON_KEY = re.compile(r'"([A-Za-z_][A-Za-z0-9_]{0,40})"\s*:')


def _fields(filename: str, content: bytes) -> set[str]:
    head = content[:HEAD_BYTES].decode("utf-8", errors="replace").lstrip("\ufeff")
    if filename.lower().endswith(".csv"):
        first = head.split("\n", 1)[0]
        try:
            row = next(csv.reader(io.StringIO(first)), [])
        except csv.Error:
            return set()
        return {cell.strip().lower() for cell in row}
    return {key.lower() for key in _JSON_KEY.findall(head)}


def looks_like(filename: str, content: bytes) -> tuple[str, list[str]] | None:
    """``(kind, telling fields)``: ``submissions``, ``reviewers`` or ``pairs`` when the
    field names say so, else None."""
    lower = filename.lower()
    if lower.endswith(".zip") or not lower.endswith((".csv", ".json", ".jsonl")):
        return None
    fields = _fields(filename, content)
    person = sorted(fields & PERSON_FIELDS)
    paper = sorted(fields & SUBMISSION_FIELDS)
    if fields >= PAIR_FIELDS:
        return "pairs", sorted(fields & PAIR_FIELDS)
    if "publications" in fields:
        return "reviewers", person
    if paper and not person:
        return "submissions", paper
    if person and not paper:
        return "reviewers", person
    return None


def refuse_other_kind(expected: str, filename: str, content: bytes) -> None:
    """Raise an :class:`InputError` when the file looks like another kind than
    ``expected`` (``reviewers`` or ``submissions``)."""
    seen = looks_like(filename, content)
    if seen is None or seen[0] == expected:
        return
    kind, fields = seen
    words = {
        "submissions": "a submissions file",
        "reviewers": "a reviewers file",
        "pairs": "a pair file (bids, conflicts or limits)",
    }
    message = (
        f"this looks like {words[kind]} (fields {', '.join(fields)}), not {expected}: "
        f"upload it as {kind}"
        if kind != "pairs"
        else f"this looks like {words[kind]} (fields {', '.join(fields)}), not {expected}"
    )
    raise InputError([Problem(filename, None, None, message)])
