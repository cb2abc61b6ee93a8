"""What the service accepts as an id, a text and a number, in one place.

Every id an upload accepts must be reachable by every route, on SQLite and PostgreSQL alike,
and must name one thing only. So the rules are those of :mod:`recommender.ids` (the policy
every reader applies: ids are refused, never rewritten; no control characters or line
breaks, no invisible characters, no space but a plain one) plus those of a URL path segment:

- **ids** (papers, reviewers): :func:`recommender.ids.id_problem`, and no ``/`` (a path
  separator even when percent-encoded, since servers decode ``%2F`` before routing); not
  ``.`` or ``..`` (clients resolve them as path steps).
- **look-alikes**: a new paper or reviewer id that displays like one the venue already has
  (:func:`recommender.ids.lookalike_key`) is refused with both ids named, as two ids of one
  upload are: an upload updates the ids it names, so a look-alike would not update the
  reviewer a chair meant but add a second one that conflicts of interest, bids and quotas of
  the first do not reach (:func:`refuse_stored_lookalikes`).
- **venue ids**: 1 to 100 characters from ``A-Z a-z 0-9 . _ -``, starting with a letter or a
  digit (they name export files and appear in headers); not one that displays like an
  existing venue's (``venue-1`` and ``venue-l``).
- **text** (names, titles, abstracts, reasons): no NUL or other control character except tab,
  line feed and carriage return; no unpaired surrogates (PostgreSQL cannot store either).
- **integers** in paths and queries: database integer range (ids 1 to 2^31 - 1, offsets up
  to 10^9); anything larger is 422, never a 500.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from recommender.corpus import InputError, Problem, Reviewer, Submission
from recommender.ids import ID_MAX_LENGTH, how_they_differ, lookalike_key, trim_person_id
from recommender.ids import id_problem as character_policy_problem
from reviewer_recommender.errors import StateConflict
from reviewer_recommender.storage.models import ReviewerRow, SubmissionRow, Venue

VENUE_ID_MAX_LENGTH = 100
VENUE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
VENUE_ID_RULE = (
    f"1 to {VENUE_ID_MAX_LENGTH} characters from A-Z a-z 0-9 . _ -, starting with a letter "
    "or a digit"
)
ID_RULE = (
    f"1 to {ID_MAX_LENGTH} characters, no control characters or line breaks, no invisible "
    "characters, no space other than a plain one, no '/', not '.' or '..'"
)
# database INTEGER (PostgreSQL int4) range for row ids; offsets far beyond any table
MAX_ROW_ID = 2**31 - 1
MAX_OFFSET = 10**9

_VENUE_ID = re.compile(VENUE_ID_PATTERN)
_ALLOWED_TEXT_CONTROLS = frozenset("\t\n\r")
_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})


def _describe(character: str) -> str:
    if unicodedata.category(character) == "Cs":
        return f"U+{ord(character):04X} (an unpaired surrogate, not a character)"
    name = "NUL" if character == "\x00" else unicodedata.name(character, "")
    return f"U+{ord(character):04X}" + (f" ({name})" if name else "")


_ASCII_CONTROL = re.compile("[\x00-\x1f\x7f]")


def _first_forbidden(value: str, allowed: frozenset[str]) -> str | None:
    if value.isascii():  # ASCII's forbidden characters are its control characters
        for found in _ASCII_CONTROL.finditer(value):
            if found.group() not in allowed:
                return found.group()
        return None
    for character in value:
        if character in allowed:
            continue
        if unicodedata.category(character) in _FORBIDDEN_CATEGORIES:
            return character
    return None


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be stored as text, or None if it can."""
    bad = _first_forbidden(value, _ALLOWED_TEXT_CONTROLS)
    if bad is not None:
        return f"contains {_describe(bad)}, a control character; remove it"
    return None


def id_problem(value: str) -> str | None:
    """Why ``value`` cannot be a paper or reviewer id, or None if it can."""
    problem = character_policy_problem(value)
    if problem is not None:
        return problem
    if "/" in value:
        return f"contains '/', which no URL can carry as part of an id ({ID_RULE})"
    if value in (".", ".."):
        return f"is {value!r}, which URLs treat as a path step ({ID_RULE})"
    return None


def venue_id_problem(value: str) -> str | None:
    """Why ``value`` cannot be a venue id, or None if it can."""
    if not value:
        return f"is empty; a venue id has {VENUE_ID_RULE}"
    if len(value) > VENUE_ID_MAX_LENGTH or not _VENUE_ID.fullmatch(value):
        return f"{value!r} is not a valid venue id: use {VENUE_ID_RULE}"
    return None


def _checked(problem: Any) -> Any:
    def check(value: str) -> str:
        message = problem(value)
        if message is not None:
            raise ValueError(message)
        return value

    return check


check_text = _checked(text_problem)
check_id = _checked(id_problem)
check_venue_id = _checked(venue_id_problem)


def reviewer_id_form(value: Any) -> Any:
    """Reviewer ids are stored without OpenReview's leading ``~`` (as every reader does), so
    ``~Ada_Lovelace1`` in a path or body names ``Ada_Lovelace1``; nothing else is changed."""
    return trim_person_id(value) if isinstance(value, str) else value


# request bodies
SafeText = Annotated[str, AfterValidator(check_text)]
IdText = Annotated[str, Field(min_length=1, max_length=ID_MAX_LENGTH), AfterValidator(check_id)]
ReviewerIdText = Annotated[
    str,
    BeforeValidator(reviewer_id_form),
    Field(min_length=1, max_length=ID_MAX_LENGTH),
    AfterValidator(check_id),
]
VenueIdText = Annotated[
    str,
    Field(min_length=1, max_length=VENUE_ID_MAX_LENGTH, pattern=VENUE_ID_PATTERN),
]

# ---- stored records ------------------------------------------------------------------------


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """(location, string) of every string inside nested dicts/lists/tuples (keys included)."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str):
                yield f"{where} key", key
            yield from _strings(item, f"{where}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _strings(item, f"{where}[{index}]")


def _record_problems(
    source: str, kind: str, position: int, identifier: str, fields: Mapping[str, Any]
) -> list[Problem]:
    label = f"{kind} {identifier!r} (record {position})"
    problems = []
    message = id_problem(identifier)
    if message is not None:
        problems.append(Problem(source, None, "id", f"{label}: the id {message}"))
    for name, value in fields.items():
        for where, text in _strings(value, name):
            message = text_problem(text)
            if message is not None:
                problems.append(Problem(source, None, where, f"{label}: {where} {message}"))
                break
    return problems


def check_reviewers(reviewers: Iterable[Reviewer], source: str) -> None:
    """Raise one InputError naming every reviewer whose id or text the service cannot
    store or reach (see the module rules); records are numbered from 1 in upload order."""
    problems: list[Problem] = []
    for position, reviewer in enumerate(reviewers, start=1):
        problems += _record_problems(
            source,
            "reviewer",
            position,
            reviewer.id,
            {
                "name": reviewer.name,
                "email": reviewer.email,
                "affiliation": reviewer.affiliation,
                "attributes": dict(reviewer.attributes),
                "publications": [
                    {
                        "id": p.id,
                        "title": p.title,
                        "abstract": p.abstract,
                        "authors": list(p.authors),
                    }
                    for p in reviewer.publications
                ],
            },
        )
    if problems:
        raise InputError(problems)


def check_submissions(submissions: Iterable[Submission], source: str) -> None:
    """Like :func:`check_reviewers` for submissions."""
    problems: list[Problem] = []
    for position, submission in enumerate(submissions, start=1):
        problems += _record_problems(
            source,
            "submission",
            position,
            submission.id,
            {
                "title": submission.title,
                "abstract": submission.abstract,
                "authors": list(submission.authors),
                "source": submission.source,
                "author_emails": list(submission.author_emails),
                "author_ids": list(submission.author_ids),
                "author_affiliations": list(submission.author_affiliations),
            },
        )
    if problems:
        raise InputError(problems)


def safe_name(value: str | None, default: str, limit: int = 200) -> str:
    """A client-given file name fit for messages, audit entries and text columns: control
    characters dropped, at most ``limit`` characters."""
    cleaned = "".join(
        c for c in (value or "") if unicodedata.category(c) not in _FORBIDDEN_CATEGORIES
    ).strip()
    return cleaned[:limit] or default


# ---- look-alikes of what the venue has -------------------------------------------------------


def refuse_stored_lookalikes(
    session: Session,
    venue_id: str,
    kind: str,
    ids: Iterable[str],
    source: str,
) -> None:
    """Raise one InputError naming every id of ``ids`` (``kind`` ``"reviewer"`` or
    ``"submission"``, in upload order) that the venue does not have but that displays like
    one it has: both ids, and what tells them apart."""
    model = ReviewerRow if kind == "reviewer" else SubmissionRow
    stored = list(session.scalars(select(model.id).where(model.venue_id == venue_id)))
    if not stored:
        return
    known = set(stored)
    by_key: dict[str, str] = {}
    for identifier in stored:
        by_key.setdefault(lookalike_key(identifier), identifier)
    problems = []
    for position, identifier in enumerate(ids, start=1):
        if identifier in known:
            continue
        twin = by_key.get(lookalike_key(identifier))
        if twin is not None:
            problems.append(
                Problem(
                    source,
                    None,
                    "id",
                    f"{kind} {identifier!r} (record {position}) looks like the venue's {kind} "
                    f"{twin!r} but is a different id ({how_they_differ(twin, identifier)}): "
                    f"to update that {kind}, use its id; for another one, an id that reads "
                    "differently",
                )
            )
    if problems:
        raise InputError(problems)


def refuse_venue_lookalike(session: Session, venue_id: str) -> None:
    """409 when another venue's id displays like ``venue_id`` (``venue-1``, ``venue-l``)."""
    key = lookalike_key(venue_id)
    for other in session.scalars(select(Venue.id)):
        if other != venue_id and lookalike_key(other) == key:
            raise StateConflict(
                "venue_lookalike",
                f"venue id {venue_id!r} looks like the existing venue {other!r} "
                f"({how_they_differ(other, venue_id)}); choose an id that reads differently",
            )
