"""What the service accepts as an id, a text and a number, in one place.

Every id an upload accepts must be reachable by every route, on SQLite and PostgreSQL alike.
So the rules are those of a URL path segment and of a PostgreSQL ``text`` column:

- **ids** (papers, reviewers): 1 to 300 characters; no control characters (Unicode Cc, line
  and paragraph separators, unpaired surrogates); no ``/`` (a path separator even when
  percent-encoded, since servers decode ``%2F`` before routing); not ``.`` or ``..`` (clients
  resolve them as path steps).
- **venue ids**: 1 to 100 characters from ``A-Z a-z 0-9 . _ -``, starting with a letter or a
  digit (they name export files and appear in headers).
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

from recommender.corpus import InputError, Problem, Reviewer, Submission

ID_MAX_LENGTH = 300
VENUE_ID_MAX_LENGTH = 100
VENUE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
VENUE_ID_RULE = (
    f"1 to {VENUE_ID_MAX_LENGTH} characters from A-Z a-z 0-9 . _ -, starting with a letter "
    "or a digit"
)
ID_RULE = f"1 to {ID_MAX_LENGTH} characters, no control characters, no '/', not '.' or '..'"
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


def _first_forbidden(value: str, allowed: frozenset[str]) -> str | None:
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
    if not value:
        return "is empty"
    if len(value) > ID_MAX_LENGTH:
        return f"is {len(value)} characters long; ids have at most {ID_MAX_LENGTH}"
    bad = _first_forbidden(value, frozenset())
    if bad is not None:
        return f"contains {_describe(bad)}, a control character; ids may not ({ID_RULE})"
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
    ``~Ada_Lovelace1`` in a path or body names ``Ada_Lovelace1``."""
    return value.strip().lstrip("~").strip() if isinstance(value, str) else value


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
