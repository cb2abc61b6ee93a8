"""Reviewer readers: OpenReview expertise archives (directory or zip), CSV and JSON.

Decisions worth knowing:

- Reviewer ids never keep OpenReview's leading ``~`` (``~Jane_Doe1.jsonl`` -> ``Jane_Doe1``);
  otherwise every id is taken as given or refused (:mod:`recommender.ids`), and a reviewer id
  that displays like another one of the same file is refused too.
- An empty archive is a reviewer with no publications: allowed, so a chair still sees them
  (their affinities are simply zero).
- A publication with neither title nor abstract is a problem: it has no text to profile.
- A publication id repeated within one reviewer is dropped when the repeats are identical
  (crawls often list a paper twice) and is a problem when they differ.
- A publication without an id gets a content hash id (same text -> same id).
- A reviewer given no name (archives never give one) is named after the author on at least
  60% of their publications (:func:`recommender.names.profile_owner_name`), unless the id is
  an OpenReview profile id (``Jane_Doe1``), which spells the name; otherwise the name stays
  empty and the service shows the id.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Any

from recommender.corpus import InputError, Problem, Publication, Reviewer
from recommender.io._common import (
    CsvTable,
    Lookalikes,
    ProblemLog,
    add_publication,
    clean_text,
    decode_utf8,
    is_missing,
    iter_json_lines,
    load_json,
    parse_publication,
    parse_year,
    read_source,
    stable_publication_id,
    take_id,
    text_field,
)
from recommender.io.archives import (
    MAX_ZIP_COMPRESSION_RATIO,
    MAX_ZIP_MEMBERS,
    MAX_ZIP_UNCOMPRESSED_BYTES,
    ArchiveLimits,
    read_zip_members,
)
from recommender.io.kinds import refuse_other_kind
from recommender.names import name_from_profile_id, profile_owner_name

_REVIEWER_CSV_FIELDS = ("id", "name", "email", "affiliation")


def read_openreview_archives(directory: str | Path) -> tuple[Reviewer, ...]:
    """Reviewers from a directory of ``~<id>.jsonl`` (or ``<id>.jsonl``) expertise archives.

    One reviewer per file, one publication per line (``{"id", "content": {"title",
    "abstract", "year", "authors"}}``, values optionally wrapped as ``{"value": ...}``).
    Reviewers are returned sorted by id.
    """
    root = Path(directory)
    if not root.is_dir():
        raise InputError([Problem(str(root), None, None, "not a directory")])
    files = sorted(p for p in root.iterdir() if p.suffix == ".jsonl" and not p.name.startswith("."))
    if not files:
        raise InputError([Problem(str(root), None, None, "no .jsonl archive files in directory")])
    return _parse_archives(((*read_source(p, None), p.name) for p in files), str(root))


def read_openreview_archives_zip(
    name: str,
    content: bytes,
    *,
    max_members: int = MAX_ZIP_MEMBERS,
    max_uncompressed_bytes: int = MAX_ZIP_UNCOMPRESSED_BYTES,
    max_compression_ratio: float = MAX_ZIP_COMPRESSION_RATIO,
    limits: ArchiveLimits | None = None,
) -> tuple[Reviewer, ...]:
    """Reviewers from a zip of expertise archives (members may sit in sub-folders).

    Members with absolute paths or ``..`` are rejected, and so are archives with more than
    ``max_members`` members, that would expand past ``max_uncompressed_bytes`` or whose
    members compress more than ``max_compression_ratio`` times, in all or each (zip bombs);
    ``limits`` gives all three at once. See :mod:`recommender.io.archives`; nothing is
    written to disk.
    """
    limits = limits or ArchiveLimits(max_members, max_uncompressed_bytes, max_compression_ratio)
    members = read_zip_members(
        name, content, wanted=lambda base: base.endswith(".jsonl"), limits=limits
    )
    if not members:
        raise InputError([Problem(name, None, None, "zip holds no .jsonl archive files")])
    return _parse_archives(((m.where, m.content, m.base_name) for m in members), name)


def _parse_archives(
    files: Iterable[tuple[str, bytes, str]], container: str
) -> tuple[Reviewer, ...]:
    """Parse archives given as (name shown in errors, content, archive file's base name)."""
    log = ProblemLog()
    reviewers: dict[str, Reviewer] = {}
    source_of: dict[str, str] = {}
    lookalikes = Lookalikes("reviewer")
    for file_name, content, base_name in files:
        stem = base_name.removesuffix(".jsonl")
        reviewer_id = take_id(stem, (file_name, None), None, log, kind="reviewer", person=True)
        if reviewer_id == "":
            log.add(file_name, None, None, "file name gives no reviewer id")
        if not reviewer_id:
            continue
        if not lookalikes.check(reviewer_id, (file_name, None), None, log):
            continue
        if reviewer_id in source_of:
            log.add(
                file_name,
                None,
                None,
                f"reviewer {reviewer_id!r} also has archive {source_of[reviewer_id]}",
            )
            continue
        source_of[reviewer_id] = file_name
        reviewer = _parse_archive(file_name, reviewer_id, content, log)
        if reviewer is not None:
            reviewers[reviewer_id] = reviewer
    if not source_of and not log:
        log.add(container, None, None, "no archive files")
    log.raise_if_any()
    return tuple(reviewers[key] for key in sorted(reviewers))


def _parse_archive(name: str, reviewer_id: str, content: bytes, log: ProblemLog) -> Reviewer | None:
    text = decode_utf8(name, content, log)
    if text is None:
        return None
    publications: dict[str, Publication] = {}
    count_before = len(log.problems)
    for number, record in iter_json_lines(name, text, log):
        publication = parse_publication(record, (name, number), log)
        if publication is not None:
            add_publication(publications, publication, (name, number), reviewer_id, log)
    if len(log.problems) != count_before:
        return None
    return Reviewer(
        id=reviewer_id,
        name=reviewer_name(reviewer_id, "", publications.values()),
        publications=tuple(publications.values()),
    )


def reviewer_name(reviewer_id: str, given: str, publications: Iterable[Publication]) -> str:
    """A reviewer's name: the one given, else (an OpenReview archive holds none) the owner
    its publications' author lists show (:func:`recommender.names.profile_owner_name`),
    unless the id is an OpenReview profile id, which spells the name itself."""
    if given or name_from_profile_id(reviewer_id):
        return given
    return profile_owner_name([publication.authors for publication in publications])


def read_reviewers_csv(
    reviewers_csv: str | Path | bytes,
    publications_csv: str | Path | bytes | None = None,
    *,
    reviewers_name: str | None = None,
    publications_name: str | None = None,
) -> tuple[Reviewer, ...]:
    """Reviewers from ``reviewers.csv`` and optionally their ``publications.csv``.

    ``reviewers.csv`` needs an ``id`` column; ``name``, ``email``, ``affiliation`` are
    optional and every other column becomes ``Reviewer.attributes`` (empty cells omitted).
    ``publications.csv`` needs ``reviewer_id`` and ``title`` and/or ``abstract``; ``year``,
    ``authors`` (``;``-separated) and ``id`` are optional. Paths or raw bytes are accepted;
    ``*_name`` names raw bytes in error messages. Order of ``reviewers.csv`` is kept.
    """
    log = ProblemLog()
    name, content = read_source(reviewers_csv, reviewers_name)
    text = decode_utf8(name, content, log)
    reviewer_rows: dict[str, dict[str, Any]] = {}
    reviewers_readable = False
    if text is not None:
        table = CsvTable(name, text, log)
        if table.columns and table.require("id", log=log):
            reviewers_readable = True
            extra_columns = [c for c in table.columns if c not in _REVIEWER_CSV_FIELDS]
            first_line: dict[str, int] = {}
            lookalikes = Lookalikes("reviewer")
            for line, row in table.rows:
                reviewer_id = take_id(
                    row["id"], (name, line), "id", log, kind="reviewer", person=True
                )
                if reviewer_id == "":
                    log.add(name, line, "id", "empty reviewer id")
                if not reviewer_id or not lookalikes.check(reviewer_id, (name, line), "id", log):
                    continue
                if reviewer_id in first_line:
                    log.add(
                        name,
                        line,
                        "id",
                        f"duplicate reviewer id {reviewer_id!r} (first on line "
                        f"{first_line[reviewer_id]})",
                    )
                    continue
                first_line[reviewer_id] = line
                email = clean_text(row.get("email", ""))
                if email and "@" not in email:
                    log.add(name, line, "email", f"not an email address: {email!r}")
                attributes = {c: clean_text(row[c]) for c in extra_columns if row[c].strip()}
                reviewer_rows[reviewer_id] = {
                    "name": clean_text(row.get("name", "")),
                    "email": email,
                    "affiliation": clean_text(row.get("affiliation", "")),
                    "attributes": MappingProxyType(attributes),
                    "publications": {},
                }
    if publications_csv is not None:
        _read_publications_csv(
            publications_csv, publications_name, reviewer_rows, reviewers_readable, log
        )
    log.raise_if_any()
    return tuple(
        Reviewer(
            id=reviewer_id,
            name=reviewer_name(reviewer_id, fields["name"], fields["publications"].values()),
            email=fields["email"],
            affiliation=fields["affiliation"],
            attributes=fields["attributes"],
            publications=tuple(fields["publications"].values()),
        )
        for reviewer_id, fields in reviewer_rows.items()
    )


def _read_publications_csv(
    source: str | Path | bytes,
    display_name: str | None,
    reviewer_rows: dict[str, dict[str, Any]],
    check_reviewer_ids: bool,
    log: ProblemLog,
) -> None:
    """Publications into ``reviewer_rows``; ids are only checked when the reviewers were read
    (otherwise every row would repeat the reviewers file's own problem)."""
    name, content = read_source(source, display_name)
    text = decode_utf8(name, content, log)
    if text is None:
        return
    table = CsvTable(name, text, log)
    if not table.columns or not table.require("reviewer_id", log=log):
        return
    if "title" not in table.columns and "abstract" not in table.columns:
        log.add(name, 1, "title", "needs a 'title' or an 'abstract' column (or both)")
        return
    for line, row in table.rows:
        where = (name, line)
        count_before = len(log.problems)
        reviewer_id = take_id(
            row["reviewer_id"], where, "reviewer_id", log, kind="reviewer", person=True
        )
        publication_id = take_id(row.get("id", ""), where, "id", log, kind="publication")
        if reviewer_id == "":
            log.add(name, line, "reviewer_id", "empty reviewer id")
        elif reviewer_id is not None and check_reviewer_ids and reviewer_id not in reviewer_rows:
            log.add(
                name, line, "reviewer_id", f"unknown reviewer {reviewer_id!r} (not in reviewers)"
            )
        title = clean_text(row.get("title", ""))
        abstract = clean_text(row.get("abstract", ""))
        if not title and not abstract:
            log.add(name, line, "title", "publication has neither title nor abstract")
        year = parse_year(row.get("year"), where, "year", log)
        authors = tuple(
            a for a in (clean_text(part) for part in row.get("authors", "").split(";")) if a
        )
        if len(log.problems) != count_before or reviewer_id not in reviewer_rows:
            continue
        publication = Publication(
            id=publication_id or stable_publication_id(title, abstract, year),
            title=title,
            abstract=abstract,
            year=year,
            authors=authors,
        )
        add_publication(
            reviewer_rows[reviewer_id]["publications"], publication, where, reviewer_id, log
        )


def read_reviewers_json(
    source: str | Path | bytes, name: str | None = None
) -> tuple[Reviewer, ...]:
    """Reviewers from a JSON list (or ``.jsonl``, one per line) of reviewer objects.

    Each object: ``id`` (required), ``name``, ``email``, ``affiliation``, ``attributes``
    (object of scalars, kept as strings) and ``publications`` (list of ``{id, title,
    abstract, year, authors}`` or OpenReview notes). A JSON object mapping id -> reviewer
    is accepted too. ``name`` names raw bytes in error messages; a name ending in
    ``.jsonl`` selects the one-per-line form.
    """
    display, content = read_source(source, name)
    log = ProblemLog()
    text = decode_utf8(display, content, log)
    if text is None:
        log.raise_if_any()
    assert text is not None
    records: list[tuple[int | None, str, Any]] = []
    if display.lower().endswith(".jsonl"):
        records = [(line, "", value) for line, value in iter_json_lines(display, text, log)]
    else:
        value = load_json(display, text, log)
        if isinstance(value, list):
            records = [(None, f"[{index}].", item) for index, item in enumerate(value)]
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, dict) and "id" not in item:
                    item = {**item, "id": key}
                records.append((None, f"[{key!r}].", item))
        elif not is_missing(value):
            log.add(display, None, None, "expected a JSON list of reviewer objects")
    reviewers: dict[str, Reviewer] = {}
    lookalikes = Lookalikes("reviewer")
    for position, (line, prefix, record) in enumerate(records, start=1):
        label = None if line is not None else f"record {position}"
        reviewer = _parse_reviewer_object(display, line, prefix, record, log, label)
        if reviewer is None:
            continue
        if reviewer.id in reviewers:
            log.add(display, line, f"{prefix}id", f"duplicate reviewer id {reviewer.id!r}")
            continue
        here = f"line {line}" if line is not None else f"record {prefix.rstrip('.')}"
        if not lookalikes.check(reviewer.id, (display, line), f"{prefix}id", log, here):
            continue
        reviewers[reviewer.id] = reviewer
    if not records and not log:
        log.add(display, None, None, "no reviewers in file")
    log.raise_if_any()
    return tuple(reviewers.values())


def _parse_reviewer_object(
    name: str,
    line: int | None,
    prefix: str,
    record: Any,
    log: ProblemLog,
    label: str | None = None,
) -> Reviewer | None:
    where = (name, line)
    if not isinstance(record, dict):
        log.add(name, line, prefix.rstrip(".") or None, "expected a JSON object")
        return None
    count_before = len(log.problems)
    raw_id = record.get("id")
    reviewer_id = (
        take_id(str(raw_id), where, f"{prefix}id", log, kind="reviewer", person=True, label=label)
        if isinstance(raw_id, str | int)
        else ""
    )
    if reviewer_id == "":
        log.add(name, line, f"{prefix}id", "missing or empty reviewer id")
    fields = {
        key: text_field(record, key, where, log, f"{prefix}{key}")
        for key in ("name", "email", "affiliation")
    }
    if fields["email"] and "@" not in fields["email"]:
        log.add(name, line, f"{prefix}email", f"not an email address: {fields['email']!r}")
    raw_attributes = record.get("attributes") or {}
    attributes: dict[str, str] = {}
    if not isinstance(raw_attributes, dict):
        log.add(name, line, f"{prefix}attributes", "expected a JSON object")
    else:
        for key, value in raw_attributes.items():
            if isinstance(value, str | int | float | bool):
                attributes[str(key)] = clean_text(str(value))
            elif value is not None:
                log.add(name, line, f"{prefix}attributes.{key}", "expected a text or number value")
    raw_publications = record.get("publications") or []
    publications: dict[str, Publication] = {}
    if not isinstance(raw_publications, list):
        log.add(name, line, f"{prefix}publications", "expected a JSON list")
    else:
        for index, item in enumerate(raw_publications):
            field_prefix = f"{prefix}publications[{index}]."
            publication = parse_publication(item, where, log, field_prefix)
            if publication is not None and reviewer_id is not None:
                add_publication(
                    publications, publication, where, reviewer_id, log, f"{field_prefix}id"
                )
    if len(log.problems) != count_before or reviewer_id is None:
        return None
    return Reviewer(
        id=reviewer_id,
        name=reviewer_name(reviewer_id, fields["name"], publications.values()),
        email=fields["email"],
        affiliation=fields["affiliation"],
        attributes=MappingProxyType(attributes),
        publications=tuple(publications.values()),
    )


def read_reviewers(
    path: str | Path, publications: str | Path | None = None
) -> tuple[Reviewer, ...]:
    """Reviewers from any supported input, chosen by what ``path`` is.

    A directory or ``.zip``: OpenReview expertise archives; ``.csv``: ``reviewers.csv``
    (with ``publications`` as ``publications.csv``); ``.json``/``.jsonl``: reviewer objects,
    except a ``.jsonl`` named ``~<id>.jsonl``, which is a single reviewer's archive.
    """
    path = Path(path)
    if path.is_dir():
        _reject_publications(str(path), publications, "an archive directory")
        return read_openreview_archives(path)
    name, content = read_source(path, None)
    pubs = None if publications is None else read_source(publications, None)
    return parse_reviewers_upload(name, content, pubs)


def parse_reviewers_upload(
    filename: str,
    content: bytes,
    publications: tuple[str, bytes] | None = None,
    *,
    archive_limits: ArchiveLimits | None = None,
) -> tuple[Reviewer, ...]:
    """Reviewers from uploaded bytes; ``filename`` (the user's) picks the format and names errors.

    Formats as in :func:`read_reviewers`; ``publications`` is ``(filename, bytes)`` of a
    ``publications.csv`` and only goes with a ``reviewers.csv``; ``archive_limits`` bound
    what a zip may expand to (default :class:`~recommender.io.archives.ArchiveLimits`).
    """
    lower = filename.lower()
    if lower.endswith(".csv"):
        refuse_other_kind("reviewers", filename, content)
        pub_name, pub_content = publications if publications is not None else (None, None)
        return read_reviewers_csv(
            content, pub_content, reviewers_name=filename, publications_name=pub_name
        )
    if lower.endswith(".zip"):
        _reject_publications(filename, publications, "a zip of archives")
        return read_openreview_archives_zip(filename, content, limits=archive_limits)
    if lower.endswith(".jsonl") and PurePosixPath(filename.replace("\\", "/")).name.startswith("~"):
        _reject_publications(filename, publications, "an archive")
        base_name = PurePosixPath(filename.replace("\\", "/")).name
        return _parse_archives([(filename, content, base_name)], filename)
    if lower.endswith((".json", ".jsonl")):
        _reject_publications(filename, publications, "reviewer JSON")
        refuse_other_kind("reviewers", filename, content)
        return read_reviewers_json(content, filename)
    raise InputError(
        [
            Problem(
                filename,
                None,
                None,
                "unsupported reviewers format: expected a folder or .zip of ~id.jsonl archives, "
                ".csv, .json or .jsonl",
            )
        ]
    )


def _reject_publications(name: str, publications: object, what: str) -> None:
    if publications is not None:
        raise InputError(
            [
                Problem(
                    name,
                    None,
                    None,
                    f"a publications file only goes with reviewers.csv, not {what}",
                )
            ]
        )
