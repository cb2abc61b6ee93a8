"""Submission readers: OpenReview ``submissions.json``, JSON list, JSONL and CSV.

A submission needs an id and a title and/or abstract. OpenReview's ``authorids`` (emails
or ``~`` profile ids) fill ``author_emails`` and ``author_ids``; ``author_affiliations``
(or ``affiliations``) fills ``author_affiliations``. CSV columns: ``id``, ``title``,
``abstract``, optional ``authors``, ``author_emails``, ``author_ids``,
``author_affiliations`` (all ``;``-separated) and ``source``; other columns are ignored.
Submission ids and authors' profile ids are taken as given or refused
(:mod:`recommender.ids`); a submission id that displays like another one of the same file is
refused too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recommender.corpus import Submission
from recommender.io._common import (
    _MISSING,
    CsvTable,
    Lookalikes,
    ProblemLog,
    clean_id,
    clean_text,
    decode_utf8,
    is_missing,
    iter_json_lines,
    load_json,
    parse_name_list,
    read_source,
    take_id,
    text_field,
    unwrap,
)
from recommender.io.kinds import refuse_other_kind


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
    refuse_other_kind("submissions", filename, content)
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
    lookalikes = Lookalikes("submission")
    for position, (line, prefix, key, record) in enumerate(records, start=1):
        label = None if line is not None else f"record {position}"
        submission = _parse_record(name, line, prefix, key, record, log, label)
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
        if not lookalikes.check(submission.id, (name, line), f"{prefix}id", log, here):
            continue
        first_seen[submission.id] = here
        submissions.append(submission)
    return tuple(submissions)


def _parse_record(
    name: str,
    line: int | None,
    prefix: str,
    key: str | None,
    record: Any,
    log: ProblemLog,
    label: str | None = None,
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
    record_id = (
        take_id(str(raw_id), where, f"{prefix}id", log, kind="submission", label=label)
        if isinstance(raw_id, str | int)
        else ""
    )
    if key is not None:
        key_id = take_id(
            key, where, prefix.rstrip(".") or None, log, kind="submission", label=label
        )
        if record_id and key_id and record_id != key_id:
            log.add(name, line, f"{prefix}id", f"id {record_id!r} differs from its key {key!r}")
        record_id = key_id
    if record_id == "":
        log.add(name, line, f"{prefix}id", "missing or empty submission id")
    title = text_field(content, "title", where, log, f"{prefix}title")
    abstract = text_field(content, "abstract", where, log, f"{prefix}abstract")
    if not title and not abstract:
        log.add(name, line, f"{prefix}title", "submission has neither title nor abstract")
    authors = parse_name_list(content.get("authors"), where, f"{prefix}authors", log)
    author_ids = parse_name_list(
        content.get("authorids"), where, f"{prefix}authorids", log, ids=True
    )
    explicit_emails = parse_name_list(
        content.get("author_emails"), where, f"{prefix}author_emails", log, ids=True
    )
    affiliation_key = "author_affiliations" if "author_affiliations" in content else "affiliations"
    affiliations = parse_name_list(
        content.get(affiliation_key), where, f"{prefix}{affiliation_key}", log
    )
    source = text_field(content, "source", where, log, f"{prefix}source")
    emails, profile_ids = _split_author_ids(
        (*author_ids, *explicit_emails), where, f"{prefix}authorids", log
    )
    if len(log.problems) != count_before or not record_id:
        return None
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


def _split_author_ids(
    values: tuple[str, ...], where: tuple[str, int | None], field: str, log: ProblemLog
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """OpenReview ``authorids`` mix emails and ``~Profile_Id1`` s; separate them. Both are
    ids (conflicts match them against reviewers'): the id policy refuses what it refuses."""
    emails: dict[str, None] = {}
    profile_ids: dict[str, None] = {}
    for value in values:
        author_id = take_id(value, where, field, log, kind="author", person="@" not in value)
        if not author_id:
            continue
        if "@" in author_id:
            emails[author_id.casefold()] = None
        else:
            profile_ids[author_id] = None
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
    lookalikes = Lookalikes("submission")
    for line, row in table.rows:
        submission_id = take_id(row["id"], (name, line), "id", log, kind="submission")
        title = clean_text(row.get("title", ""))
        abstract = clean_text(row.get("abstract", ""))
        bad = submission_id is None
        if submission_id == "":
            log.add(name, line, "id", "empty submission id")
            bad = True
        elif submission_id is None:
            pass
        elif submission_id in first_line:
            log.add(
                name,
                line,
                "id",
                f"duplicate submission id {submission_id!r} (first on line "
                f"{first_line[submission_id]})",
            )
            bad = True
        elif not lookalikes.check(submission_id, (name, line), "id", log):
            bad = True
        if not title and not abstract:
            log.add(name, line, "title", "submission has neither title nor abstract")
            bad = True
        count_before = len(log.problems)
        emails, profile_ids = _split_author_ids(
            (
                *_split_cell(row, "author_emails", ids=True),
                *_split_cell(row, "author_ids", ids=True),
            ),
            (name, line),
            "author_ids",
            log,
        )
        if bad or submission_id is None or len(log.problems) != count_before:
            continue
        first_line[submission_id] = line
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


def _split_cell(row: dict[str, str], column: str, *, ids: bool = False) -> tuple[str, ...]:
    """A ``;``-separated CSV cell as cleaned, non-empty items (absent column -> ``()``);
    ``ids``: only their padding dropped (the id policy judges the rest)."""
    clean = clean_id if ids else clean_text
    return tuple(item for item in (clean(x) for x in row.get(column, "").split(";")) if item)
