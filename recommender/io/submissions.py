"""Submission readers: OpenReview ``submissions.json``, JSON list, JSONL and CSV.

A submission needs an id and a title and/or abstract. OpenReview's ``authorids`` (emails
or ``~`` profile ids) fill ``author_emails`` and ``author_ids``; ``author_affiliations``
(or ``affiliations``) fills ``author_affiliations``. CSV columns: ``id``, ``title``,
``abstract``, optional ``authors``, ``author_emails``, ``author_ids``,
``author_affiliations`` (all ``;``-separated) and ``source``; other columns are ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recommender.corpus import Submission
from recommender.io._common import (
    _MISSING,
    CsvTable,
    ProblemLog,
    clean_reviewer_id,
    clean_text,
    decode_utf8,
    is_missing,
    iter_json_lines,
    load_json,
    parse_name_list,
    read_source,
    text_field,
    unwrap,
)


def read_submissions(path: str | Path) -> tuple[Submission, ...]:
    """Submissions from a ``.json`` (OpenReview dict or list), ``.jsonl`` or ``.csv`` file."""
    name, content = read_source(path, None)
    return parse_submissions_upload(name, content)


def parse_submissions_upload(filename: str, content: bytes) -> tuple[Submission, ...]:
    """Submissions from uploaded bytes; ``filename`` picks the format and names every error."""
    lower = filename.lower()
    log = ProblemLog()
    if not lower.endswith((".json", ".jsonl", ".csv")):
        log.add(
            filename, None, None, "unsupported submissions format: expected .json, .jsonl or .csv"
        )
        log.raise_if_any()
    text = decode_utf8(filename, content, log)
    log.raise_if_any()
    assert text is not None
    if lower.endswith(".csv"):
        submissions = _from_csv(filename, text, log)
    else:
        submissions = _from_json(filename, text, lower.endswith(".jsonl"), log)
    if not submissions and not log:
        log.add(filename, None, None, "no submissions in file")
    log.raise_if_any()
    return submissions


def _from_json(name: str, text: str, one_per_line: bool, log: ProblemLog) -> tuple[Submission, ...]:
    # (line, field prefix, key from a dict-shaped file or None, record)
    records: list[tuple[int | None, str, str | None, Any]] = []
    if one_per_line:
        records = [(line, "", None, value) for line, value in iter_json_lines(name, text, log)]
    else:
        value = load_json(name, text, log)
        if isinstance(value, dict):
            records = [(None, f"[{key!r}].", key, item) for key, item in value.items()]
        elif isinstance(value, list):
            records = [(None, f"[{index}].", None, item) for index, item in enumerate(value)]
        elif not is_missing(value):
            log.add(name, None, None, "expected a JSON object (id -> submission) or a list")
    submissions: list[Submission] = []
    first_seen: dict[str, str] = {}
    for line, prefix, key, record in records:
        submission = _parse_record(name, line, prefix, key, record, log)
        if submission is None:
            continue
        here = f"line {line}" if line is not None else f"record {prefix.rstrip('.')}"
        if submission.id in first_seen:
            log.add(
                name,
                line,
                f"{prefix}id",
                f"duplicate submission id {submission.id!r} (first at {first_seen[submission.id]})",
            )
            continue
        first_seen[submission.id] = here
        submissions.append(submission)
    return tuple(submissions)


def _parse_record(
    name: str, line: int | None, prefix: str, key: str | None, record: Any, log: ProblemLog
) -> Submission | None:
    where = (name, line)
    if not isinstance(record, dict):
        log.add(name, line, prefix.rstrip(".") or None, "expected a JSON object")
        return None
    content = record.get("content", _MISSING)
    if is_missing(content):
        content = record
    elif not isinstance(content, dict):
        log.add(name, line, f"{prefix}content", "expected a JSON object")
        return None
    count_before = len(log.problems)
    raw_id = unwrap(record.get("id"))
    record_id = clean_text(str(raw_id)) if isinstance(raw_id, str | int) else ""
    if key is not None:
        if record_id and record_id != clean_text(key):
            log.add(name, line, f"{prefix}id", f"id {record_id!r} differs from its key {key!r}")
        record_id = clean_text(key)
    if not record_id:
        log.add(name, line, f"{prefix}id", "missing or empty submission id")
    title = text_field(content, "title", where, log, f"{prefix}title")
    abstract = text_field(content, "abstract", where, log, f"{prefix}abstract")
    if not title and not abstract:
        log.add(name, line, f"{prefix}title", "submission has neither title nor abstract")
    authors = parse_name_list(content.get("authors"), where, f"{prefix}authors", log)
    author_ids = parse_name_list(content.get("authorids"), where, f"{prefix}authorids", log)
    explicit_emails = parse_name_list(
        content.get("author_emails"), where, f"{prefix}author_emails", log
    )
    affiliation_key = "author_affiliations" if "author_affiliations" in content else "affiliations"
    affiliations = parse_name_list(
        content.get(affiliation_key), where, f"{prefix}{affiliation_key}", log
    )
    source = text_field(content, "source", where, log, f"{prefix}source")
    if len(log.problems) != count_before:
        return None
    emails, profile_ids = _split_author_ids((*author_ids, *explicit_emails))
    return Submission(
        id=record_id,
        title=title,
        abstract=abstract,
        authors=authors,
        source=source,
        author_emails=emails,
        author_ids=profile_ids,
        author_affiliations=affiliations,
    )


def _split_author_ids(values: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """OpenReview ``authorids`` mix emails and ``~Profile_Id1`` s; separate them."""
    emails: dict[str, None] = {}
    profile_ids: dict[str, None] = {}
    for value in values:
        if "@" in value:
            emails[value.strip().casefold()] = None
        elif clean_reviewer_id(value):
            profile_ids[clean_reviewer_id(value)] = None
    return tuple(emails), tuple(profile_ids)


def _from_csv(name: str, text: str, log: ProblemLog) -> tuple[Submission, ...]:
    table = CsvTable(name, text, log)
    if not table.columns or not table.require("id", log=log):
        return ()
    if "title" not in table.columns and "abstract" not in table.columns:
        log.add(name, 1, "title", "needs a 'title' or an 'abstract' column (or both)")
        return ()
    submissions: list[Submission] = []
    first_line: dict[str, int] = {}
    for line, row in table.rows:
        submission_id = clean_text(row["id"])
        title = clean_text(row.get("title", ""))
        abstract = clean_text(row.get("abstract", ""))
        bad = False
        if not submission_id:
            log.add(name, line, "id", "empty submission id")
            bad = True
        elif submission_id in first_line:
            log.add(
                name,
                line,
                "id",
                f"duplicate submission id {submission_id!r} (first on line "
                f"{first_line[submission_id]})",
            )
            bad = True
        if not title and not abstract:
            log.add(name, line, "title", "submission has neither title nor abstract")
            bad = True
        if bad:
            continue
        first_line[submission_id] = line
        emails, profile_ids = _split_author_ids(
            (*_split_cell(row, "author_emails"), *_split_cell(row, "author_ids"))
        )
        submissions.append(
            Submission(
                id=submission_id,
                title=title,
                abstract=abstract,
                authors=_split_cell(row, "authors"),
                source=clean_text(row.get("source", "")),
                author_emails=emails,
                author_ids=profile_ids,
                author_affiliations=_split_cell(row, "author_affiliations"),
            )
        )
    return tuple(submissions)


def _split_cell(row: dict[str, str], column: str) -> tuple[str, ...]:
    """A ``;``-separated CSV cell as cleaned, non-empty items (absent column -> ``()``)."""
    return tuple(item for item in (clean_text(x) for x in row.get(column, "").split(";")) if item)
