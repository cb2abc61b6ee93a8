"""Shared helpers of the readers: problem collection, decoding, field coercion."""

from __future__ import annotations

import csv
import datetime
import hashlib
import io
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from recommender.corpus import InputError, Problem, Publication
from recommender.ids import (
    id_problem,
    id_refusal,
    lookalike_key,
    lookalike_message,
    shown,
    trim_id,
    trim_person_id,
)
from recommender.io.safe_csv import unescape_cell

# Reports stop growing past this many problems per input: a chair fixes the first few
# hundred and reruns; millions of identical messages help nobody.
MAX_PROBLEMS = 1000

# A problem's message (which may quote the value) is cut to this many characters.
MAX_MESSAGE_CHARS = 300

# Undecodable lines listed per file; an input in another encoding fails on most lines.
MAX_ENCODING_PROBLEMS = 10

_MISSING = object()


class ProblemLog:
    """Collects :class:`Problem` s; ``raise_if_any`` turns them into one :class:`InputError`."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, file: str, line: int | None, field: str | None, message: str) -> None:
        # messages quote the offending value: keep a hostile megabyte out of the report
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[: MAX_MESSAGE_CHARS - 1] + "…"
        if len(file) > MAX_MESSAGE_CHARS:
            file = file[: MAX_MESSAGE_CHARS - 1] + "…"
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(Problem(file, line, field, message))
        elif len(self.problems) == MAX_PROBLEMS:
            self.problems.append(
                Problem(file, None, None, f"more than {MAX_PROBLEMS} problems; stopped listing")
            )

    def __bool__(self) -> bool:
        return bool(self.problems)

    def raise_if_any(self) -> None:
        if self.problems:
            raise InputError(self.problems)


def read_source(source: str | Path | bytes, name: str | None) -> tuple[str, bytes]:
    """Bytes of a path (named after it) or of raw bytes (named ``name``)."""
    if isinstance(source, bytes | bytearray):
        return (name or "<upload>"), bytes(source)
    path = Path(source)
    display = name or str(path)
    try:
        return display, path.read_bytes()
    except OSError as error:
        raise InputError(
            [Problem(display, None, None, f"cannot read file: {error.strerror}")]
        ) from error


def decode_utf8(name: str, content: bytes, log: ProblemLog) -> str | None:
    """UTF-8 text without a BOM, or ``None`` after logging the undecodable lines."""
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    if content.startswith((b"\xff\xfe", b"\xfe\xff")):
        log.add(name, None, None, "file is UTF-16 encoded; save it as UTF-8")
        return None
    offset = 0
    bad_lines = 0
    for number, raw_line in enumerate(content.split(b"\n"), start=1):
        try:
            raw_line.decode("utf-8")
        except UnicodeDecodeError as error:
            bad_lines += 1
            if bad_lines <= MAX_ENCODING_PROBLEMS:
                log.add(
                    name,
                    number,
                    None,
                    f"not valid UTF-8 (byte 0x{raw_line[error.start]:02x} at byte offset "
                    f"{error.start + offset}); save the file as UTF-8",
                )
        offset += len(raw_line) + 1
    if bad_lines > MAX_ENCODING_PROBLEMS:
        log.add(name, None, None, f"{bad_lines} lines in all are not valid UTF-8")
    return None


def clean_text(value: str) -> str:
    """Whitespace collapsed to single spaces, ends stripped."""
    return " ".join(value.split())


def clean_reviewer_id(value: str) -> str:
    """Reviewer ids are compared without OpenReview's leading ``~`` (and without the spaces
    and tabs around them; nothing else is changed: see :mod:`recommender.ids`)."""
    return trim_person_id(value)


def clean_id(value: str) -> str:
    """An id without the spaces and tabs around it; nothing else is changed."""
    return trim_id(value)


def take_id(
    value: str,
    where: tuple[str, int | None],
    field: str | None,
    log: ProblemLog,
    *,
    kind: str,
    person: bool = False,
    label: str | None = None,
) -> str | None:
    """``value`` as an id of ``kind`` (``person``: a reviewer's or author's, without
    OpenReview's ``~``): ``""`` when empty (for the caller to word), ``None`` after logging
    why the id policy (:func:`recommender.ids.id_refusal`) refuses it; ``label`` names a
    record that has no line (``"record 2"`` of a JSON list)."""
    identifier = trim_person_id(value) if person else trim_id(value)
    if not identifier:
        return ""
    if label is not None:  # a record of a JSON list: named by its position
        fragment = id_problem(identifier)
        problem = fragment and f"{kind} {shown(identifier)} ({label}): the id {fragment}"
    else:
        problem = id_refusal(kind, identifier)
    if problem is not None:
        log.add(where[0], where[1], field, problem)
        return None
    return identifier


class Lookalikes:
    """Refuses, in one file, a second id that displays like an earlier one of the same kind
    (:func:`recommender.ids.lookalike_key`), naming both and where the first was."""

    def __init__(self, kind: str):
        self.kind = kind
        self._first: dict[str, tuple[str, str]] = {}

    def check(
        self,
        identifier: str,
        where: tuple[str, int | None],
        field: str | None,
        log: ProblemLog,
        here: str | None = None,
    ) -> bool:
        """False (and a logged problem) when ``identifier`` looks like another id seen
        before; ``here``: how to name this place later (default: its line)."""
        key = lookalike_key(identifier)
        seen = self._first.get(key)
        if seen is None:
            self._first[key] = (identifier, here or _place(where))
            return True
        first, first_where = seen
        if first == identifier:
            return True
        log.add(
            where[0], where[1], field, lookalike_message(self.kind, first, identifier, first_where)
        )
        return False


def _place(where: tuple[str, int | None]) -> str:
    return f"line {where[1]}" if where[1] is not None else where[0]


def unwrap(value: Any) -> Any:
    """OpenReview API v2 wraps content values as ``{"value": ...}``; accept both shapes."""
    if isinstance(value, dict) and "value" in value:
        return value["value"]
    return value


def text_field(
    record: Mapping[str, Any],
    key: str,
    where: tuple[str, int | None],
    log: ProblemLog,
    field: str | None = None,
) -> str:
    """A string field (absent or null -> ``""``); any other type is a problem."""
    value = unwrap(record.get(key))
    if value is None:
        return ""
    if isinstance(value, str):
        return clean_text(value)
    log.add(where[0], where[1], field or key, f"expected text, got {type(value).__name__}")
    return ""


def parse_year(
    value: Any, where: tuple[str, int | None], field: str, log: ProblemLog
) -> int | None:
    """An int year from an int, integral float or digit string; empty -> ``None``."""
    value = unwrap(value)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    year: int | None = None
    if isinstance(value, bool):
        year = None
    elif isinstance(value, int):
        year = value
    elif isinstance(value, float) and value.is_integer():
        year = int(value)
    elif isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 9:
        year = int(value.strip())
    if year is None or not 1000 <= year <= 9999:
        log.add(where[0], where[1], field, f"not a year: {value!r}")
        return None
    return year


def parse_name_list(
    value: Any,
    where: tuple[str, int | None],
    field: str,
    log: ProblemLog,
    *,
    ids: bool = False,
) -> tuple[str, ...]:
    """Names from a list (of strings or ``{"name": ...}``) or a ``;``-separated string;
    ``ids``: the items are ids, kept as given (only their padding dropped) for the id policy
    to judge, where names get their whitespace collapsed."""
    value = unwrap(value)
    if value is None:
        return ()
    if isinstance(value, str):
        items: list[Any] = value.split(";")
    elif isinstance(value, list):
        items = value
    else:
        log.add(where[0], where[1], field, f"expected a list of names, got {type(value).__name__}")
        return ()
    names: list[str] = []
    for item in items:
        if isinstance(item, dict):
            item = item.get("name")
        if isinstance(item, str):
            cleaned = trim_id(item) if ids else clean_text(item)
            if cleaned:
                names.append(cleaned)
        elif item is not None:
            log.add(where[0], where[1], field, f"expected a name, got {type(item).__name__}")
    return tuple(names)


# OpenReview notes carry dates as milliseconds since the epoch; used when there is no year.
_TIMESTAMP_FIELDS = ("pdate", "cdate", "tcdate")


def _year_from_timestamp(
    record: Mapping[str, Any], where: tuple[str, int | None], field_prefix: str, log: ProblemLog
) -> int | None:
    key = next(k for k in _TIMESTAMP_FIELDS if record.get(k) is not None)
    value = record[key]
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.datetime.fromtimestamp(value / 1000, datetime.UTC).year
        except (OverflowError, OSError, ValueError):
            pass
    log.add(where[0], where[1], f"{field_prefix}{key}", f"not a timestamp in ms: {value!r}")
    return None


def stable_publication_id(title: str, abstract: str, year: int | None) -> str:
    """Content hash used when an input gives a publication no id (same text -> same id)."""
    digest = hashlib.sha1(f"{title}\x1f{abstract}\x1f{year}".encode()).hexdigest()
    return f"pub-{digest[:16]}"


def parse_publication(
    record: Any, where: tuple[str, int | None], log: ProblemLog, field_prefix: str = ""
) -> Publication | None:
    """A publication from an OpenReview note (``{"id", "content": {...}}``) or a flat object."""
    if not isinstance(record, dict):
        log.add(where[0], where[1], field_prefix or None, "expected a JSON object")
        return None
    content = record.get("content", _MISSING)
    if content is _MISSING:
        content = record
    elif not isinstance(content, dict):
        log.add(where[0], where[1], f"{field_prefix}content", "expected a JSON object")
        return None
    count_before = len(log.problems)
    title = text_field(content, "title", where, log, f"{field_prefix}title")
    abstract = text_field(content, "abstract", where, log, f"{field_prefix}abstract")
    if content.get("year") is None and any(record.get(k) is not None for k in _TIMESTAMP_FIELDS):
        year = _year_from_timestamp(record, where, field_prefix, log)
    else:
        year = parse_year(content.get("year"), where, f"{field_prefix}year", log)
    authors = parse_name_list(content.get("authors"), where, f"{field_prefix}authors", log)
    raw_id = record.get("id")
    pub_id: str | None = ""
    if raw_id is not None and not isinstance(raw_id, str | int):
        log.add(where[0], where[1], f"{field_prefix}id", "expected a string id")
    elif raw_id is not None:
        pub_id = take_id(str(raw_id), where, f"{field_prefix}id", log, kind="publication")
    if not title and not abstract:
        log.add(
            where[0], where[1], f"{field_prefix}title", "publication has neither title nor abstract"
        )
    if len(log.problems) != count_before or pub_id is None:
        return None
    return Publication(
        id=pub_id or stable_publication_id(title, abstract, year),
        title=title,
        abstract=abstract,
        year=year,
        authors=authors,
    )


def add_publication(
    publications: dict[str, Publication],
    publication: Publication,
    where: tuple[str, int | None],
    reviewer_id: str,
    log: ProblemLog,
    field: str = "id",
) -> None:
    """Identical duplicates are dropped (crawls repeat papers); differing ones are a problem."""
    existing = publications.get(publication.id)
    if existing is None:
        publications[publication.id] = publication
    elif existing != publication:
        log.add(
            where[0],
            where[1],
            field,
            f"publication id {publication.id!r} appears twice for reviewer {reviewer_id!r} "
            "with different content",
        )


def iter_json_lines(name: str, text: str, log: ProblemLog) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line; bad lines are logged and skipped."""
    # Split on newlines only: JSON strings may hold U+2028 and other line separators.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            log.add(name, number, None, f"invalid JSON: {error.msg} (column {error.colno})")
            continue
        except (ValueError, RecursionError) as error:
            log.add(name, number, None, _unloadable(error))
            continue
        yield number, value


def load_json(name: str, text: str, log: ProblemLog) -> Any:
    """A whole-file JSON value, or ``_MISSING`` after logging where it breaks."""
    try:
        return decode_by_element(text)
    except json.JSONDecodeError as error:
        log.add(name, error.lineno, None, f"invalid JSON: {error.msg} (column {error.colno})")
        return _MISSING
    except (ValueError, RecursionError) as error:
        log.add(name, None, None, _unloadable(error))
        return _MISSING


_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def decode_by_element(text: str) -> Any:
    """``json.loads(text)``, decoding a top-level array or object one element at a time.

    Same value and same errors (with their positions), but no single call into the C decoder
    spans the whole document: a 20 MB file of a million records would otherwise hold the
    interpreter lock for the whole parse (a third of a second and more), stalling every other
    thread of a server, its health check included.
    """
    start = _SPACE.match(text).end()  # type: ignore[union-attr]
    if start >= len(text) or text[start] not in "[{":
        return json.loads(text)
    is_object = text[start] == "{"
    closing = "}" if is_object else "]"
    items: list[Any] = []
    members: dict[str, Any] = {}
    index = _SPACE.match(text, start + 1).end()  # type: ignore[union-attr]
    if index < len(text) and text[index] == closing:
        index += 1
    else:
        while True:
            if is_object:
                if index >= len(text) or text[index] != '"':
                    raise json.JSONDecodeError(
                        "Expecting property name enclosed in double quotes", text, index
                    )
                key, index = _DECODER.raw_decode(text, index)
                index = _SPACE.match(text, index).end()  # type: ignore[union-attr]
                if index >= len(text) or text[index] != ":":
                    raise json.JSONDecodeError("Expecting ':' delimiter", text, index)
                index = _SPACE.match(text, index + 1).end()  # type: ignore[union-attr]
                members[key], index = _DECODER.raw_decode(text, index)
            else:
                item, index = _DECODER.raw_decode(text, index)
                items.append(item)
            index = _SPACE.match(text, index).end()  # type: ignore[union-attr]
            if index < len(text) and text[index] == ",":
                index = _SPACE.match(text, index + 1).end()  # type: ignore[union-attr]
                continue
            if index < len(text) and text[index] == closing:
                index += 1
                break
            raise json.JSONDecodeError("Expecting ',' delimiter", text, index)
    end = _SPACE.match(text, index).end()  # type: ignore[union-attr]
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return members if is_object else items


def _unloadable(error: ValueError | RecursionError) -> str:
    """Valid JSON that Python refuses to load: nesting too deep, or an integer too long."""
    if isinstance(error, RecursionError):
        return "invalid JSON: nested too deeply"
    return f"invalid JSON: {str(error).split(';')[0]}"


def is_missing(value: Any) -> bool:
    return value is _MISSING


class CsvTable:
    """A CSV file with a header: lower-cased column names and rows with their line numbers."""

    def __init__(self, name: str, text: str, log: ProblemLog):
        self.name = name
        self.columns: list[str] = []
        self.rows: list[tuple[int, dict[str, str]]] = []
        reader = csv.reader(io.StringIO(text, newline=""))
        try:
            header = next(reader, None)
            if header is None:
                log.add(name, 1, None, "file is empty; expected a header row")
                return
            self.columns = [unescape_cell(column).strip().lower() for column in header]
            seen: set[str] = set()
            for column in self.columns:
                if column in seen:
                    log.add(name, 1, column, "column appears twice in the header")
                seen.add(column)
            for row in reader:
                line = reader.line_num
                if not any(cell.strip() for cell in row):
                    continue
                if len(row) != len(self.columns):
                    log.add(
                        name,
                        line,
                        None,
                        f"row has {len(row)} fields, the header has {len(self.columns)}",
                    )
                    continue
                cells = (unescape_cell(cell) for cell in row)
                self.rows.append((line, dict(zip(self.columns, cells, strict=True))))
        except csv.Error as error:
            log.add(name, reader.line_num, None, f"malformed CSV: {error}")

    def require(self, *columns: str, log: ProblemLog) -> bool:
        missing = [column for column in columns if column not in self.columns]
        for column in missing:
            found = ", ".join(self.columns) or "none"
            log.add(self.name, 1, column, f"required column {column!r} is missing (found: {found})")
        return not missing
