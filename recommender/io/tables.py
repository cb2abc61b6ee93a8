"""Per-pair, per-paper and per-reviewer tables: bids, pair constraints, custom reviewer
loads, per-paper demand.

Each file is a CSV with a header or without one (then the columns are positional).
Reviewer ids lose their leading ``~``. A (paper, reviewer) pair listed twice with the same
value is kept once; with different values it is a problem. ``with_lines=True`` adds a
``line`` column (the file line of each row's first occurrence) so that later checks, e.g.
ids unknown to the scores, can name the line.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np
import numpy.typing as npt
import pandas as pd

from recommender.bids import declares_conflict, parse_bid
from recommender.corpus import InputError, Problem
from recommender.ids import id_problem, id_refusal
from recommender.io._common import (
    ProblemLog,
    clean_id,
    clean_reviewer_id,
    clean_text,
    decode_utf8,
    read_source,
    take_id,
)
from recommender.io.safe_csv import unescape_cell

_Value = TypeVar("_Value")

_PAPER_ALIASES = ("paper_id", "paper", "head", "note_id", "submission_id", "forum")
_REVIEWER_ALIASES = ("reviewer_id", "reviewer", "tail", "signature", "profile_id")


def read_bids(
    source: str | Path | bytes,
    name: str | None = None,
    *,
    with_lines: bool = False,
    skipped: list[Problem] | None = None,
) -> pd.DataFrame:
    """Bids as ``DataFrame[paper_id, reviewer_id, label, bid, conflict]`` (+ ``line``).

    ``skipped``: read HotCRP style: a bad line (an unreadable bid, a bad id, a repeated
    pair) is left out and its problem appended there; only a problem of the whole file
    (not UTF-8, no usable header, too many bad lines to list) still raises.

    The bid cell is read by :func:`recommender.bids.parse_bid` (the one bid vocabulary: an
    OpenReview label, case and spacing ignored, or a finite number). ``label`` keeps the
    cell as written (spacing collapsed), ``bid`` is its number (float64) and ``conflict``
    is true for a declared conflict (:func:`recommender.bids.declares_conflict`). Whether a
    bid excludes its pair is :func:`recommender.bids.excludes` of its label.
    """
    columns = [_PAPER_ALIASES, _REVIEWER_ALIASES, ("bid", "label", "value")]
    fast = _fast_table(source, name, columns)
    if fast is not None:
        frame = _fast_bids(*fast)
        if frame is not None:
            return frame if with_lines else frame.drop(columns="line")
    display, rows, log = _rows(source, name, columns)
    records: dict[tuple[str, str], tuple[str, float, bool]] = {}
    lines: dict[tuple[str, str], int] = {}
    for line, (paper_cell, reviewer_cell, bid_cell) in rows:
        pair = _pair(display, line, paper_cell, reviewer_cell, log)
        label = clean_text(bid_cell)
        try:
            value, _excluding = parse_bid(bid_cell)
        except ValueError as error:
            log.add(display, line, "bid", str(error))
            continue
        if pair is not None:
            _put(
                records,
                pair,
                (label, value, declares_conflict(label)),
                display,
                line,
                "bid",
                log,
            )
            lines.setdefault(pair, line)
    _raise_or_skip(log, skipped)
    frame = pd.DataFrame(
        [(p, r, label, value, conflict) for (p, r), (label, value, conflict) in records.items()],
        columns=["paper_id", "reviewer_id", "label", "bid", "conflict"],
    )
    frame = frame.astype({"bid": "float64", "conflict": "bool"})
    return _with_lines(frame, lines.values(), with_lines)


def read_pair_constraints(
    source: str | Path | bytes,
    name: str | None = None,
    *,
    with_lines: bool = False,
    skipped: list[Problem] | None = None,
) -> pd.DataFrame:
    """Pair constraints as ``DataFrame[paper_id, reviewer_id, value]`` (int8, + ``line``).

    ``value`` is ``-1`` (conflict: never assign) or ``1`` (forced: always assign); ``0``
    means "no effect" in OpenReview's format, so such rows are read and dropped. With a
    header, the value column may be named ``value``, ``constraint``, ``weight`` (OpenReview's
    ``head,tail,weight,label`` edges) or ``label``; extra named columns (e.g. the ``reason``
    that ``recommender conflicts`` writes) are ignored. ``skipped``: as for
    :func:`read_bids`, bad lines are left out and their problems appended there.
    """
    columns = [_PAPER_ALIASES, _REVIEWER_ALIASES, ("value", "constraint", "weight", "label")]
    fast = _fast_table(source, name, columns)
    if fast is not None:
        frame = _fast_constraints(*fast)
        if frame is not None:
            return frame if with_lines else frame.drop(columns="line")
    display, rows, log = _rows(source, name, columns)
    records: dict[tuple[str, str], int] = {}
    lines: dict[tuple[str, str], int] = {}
    for line, (paper_cell, reviewer_cell, value_cell) in rows:
        pair = _pair(display, line, paper_cell, reviewer_cell, log)
        number = _number(value_cell)
        if number not in (-1.0, 0.0, 1.0):
            log.add(
                display,
                line,
                "value",
                "constraint must be -1 (conflict), 1 (forced) or 0 (no effect), got "
                f"{value_cell.strip()!r}",
            )
            continue
        if pair is not None:
            _put(records, pair, int(number), display, line, "value", log)
            lines.setdefault(pair, line)
    _raise_or_skip(log, skipped)
    effective = [(pair, v) for pair, v in records.items() if v != 0]
    frame = pd.DataFrame(
        [(p, r, v) for (p, r), v in effective], columns=["paper_id", "reviewer_id", "value"]
    )
    frame = frame.astype({"value": "int8"})
    return _with_lines(frame, (lines[pair] for pair, _ in effective), with_lines)


def read_custom_max_papers(
    source: str | Path | bytes,
    name: str | None = None,
    *,
    with_lines: bool = False,
    skipped: list[Problem] | None = None,
) -> pd.DataFrame:
    """Per-reviewer load caps as ``DataFrame[reviewer_id, max]`` (int64, >= 0; + ``line``);
    ``skipped`` as for :func:`read_bids`."""
    display, rows, log = _rows(
        source, name, [_REVIEWER_ALIASES, ("max", "max_papers", "max_load", "quota")]
    )
    caps, first_line = _counts_by_id(display, rows, log, "reviewer_id", "max", clean_reviewer_id)
    _raise_or_skip(log, skipped)
    frame = pd.DataFrame(list(caps.items()), columns=["reviewer_id", "max"])
    frame = frame.astype({"max": "int64"})
    return _with_lines(frame, first_line.values(), with_lines)


def read_demand(
    source: str | Path | bytes,
    name: str | None = None,
    *,
    with_lines: bool = False,
    skipped: list[Problem] | None = None,
) -> pd.DataFrame:
    """Per-paper demand (reviewers the paper needs) as ``DataFrame[paper_id, demand]``
    (int64, >= 0; + ``line``); ``skipped`` as for :func:`read_bids`."""
    display, rows, log = _rows(
        source,
        name,
        [_PAPER_ALIASES, ("demand", "reviewers", "reviewers_per_paper", "count", "quota")],
    )
    demand, first_line = _counts_by_id(display, rows, log, "paper_id", "demand", clean_id)
    _raise_or_skip(log, skipped)
    frame = pd.DataFrame(list(demand.items()), columns=["paper_id", "demand"])
    frame = frame.astype({"demand": "int64"})
    return _with_lines(frame, first_line.values(), with_lines)


def read_pairs(
    source: str | Path | bytes,
    name: str | None = None,
    *,
    with_lines: bool = False,
    with_scores: bool = False,
) -> pd.DataFrame:
    """(paper, reviewer) pairs, e.g. an assignment or pairs to remove, as
    ``DataFrame[paper_id, reviewer_id]`` (+ ``score``, + ``line``).

    Extra columns (an assignment's ``pinned``) are ignored. With ``with_scores`` a ``score``
    column (or OpenReview's ``weight``) is read when the header has one (every cell a
    finite number) and is NaN otherwise. A pair listed twice is kept once (twice with
    different scores is a problem). An empty file is a problem: there is nothing to read."""
    score_aliases = ("score", "weight", "affinity")
    columns: list[Sequence[str]] = [_PAPER_ALIASES, _REVIEWER_ALIASES]
    if with_scores and _header_has(source, name, score_aliases):
        columns.append(score_aliases)
    display, rows, log = _rows(source, name, columns)
    records: dict[tuple[str, str], float] = {}
    lines: dict[tuple[str, str], int] = {}
    for line, cells in rows:
        pair = _pair(display, line, cells[0], cells[1], log)
        score = math.nan
        if len(cells) > 2:
            number = _number(cells[2])
            if number is None:
                log.add(display, line, "score", f"not a finite number: {cells[2].strip()!r}")
                continue
            score = number
        if pair is not None:
            if pair in records and not (math.isnan(score) and math.isnan(records[pair])):
                _put(records, pair, score, display, line, "score", log)
            records.setdefault(pair, score)
            lines.setdefault(pair, line)
    if not records and not log:
        log.add(display, None, None, "no (paper, reviewer) pair in the file")
    log.raise_if_any()
    frame = pd.DataFrame(
        [(p, r) for p, r in records], columns=["paper_id", "reviewer_id"], dtype=object
    )
    if with_scores:
        frame["score"] = np.fromiter(records.values(), dtype=np.float64, count=len(records))
    return _with_lines(frame, lines.values(), with_lines)


def read_reviewer_ids(
    source: str | Path | bytes, name: str | None = None, *, with_lines: bool = False
) -> pd.DataFrame:
    """Reviewer ids, one per line (a header ``reviewer_id`` and further columns are
    allowed, as in a CSV), as ``DataFrame[reviewer_id]`` (+ ``line``); OpenReview's ``~``
    is dropped, repeats are kept once, an empty file is a problem."""
    display, rows, log = _rows(source, name, [_REVIEWER_ALIASES])
    first_line: dict[str, int] = {}
    for line, (cell,) in rows:
        reviewer_id = take_id(
            cell, (display, line), "reviewer_id", log, kind="reviewer", person=True
        )
        if reviewer_id == "":
            log.add(display, line, "reviewer_id", "empty reviewer id")
        elif reviewer_id is not None:
            first_line.setdefault(reviewer_id, line)
    if not first_line and not log:
        log.add(display, None, None, "no reviewer id in the file")
    log.raise_if_any()
    frame = pd.DataFrame({"reviewer_id": list(first_line)}, dtype=object)
    return _with_lines(frame, first_line.values(), with_lines)


def _header_has(source: str | Path | bytes, name: str | None, aliases: Sequence[str]) -> bool:
    """Whether the first non-empty CSV row names one of ``aliases`` (problems with the file
    itself are left to the full read)."""
    try:
        _, content = read_source(source, name)
        text = content[: 64 * 1024].decode("utf-8-sig", errors="replace")
        for row in csv.reader(io.StringIO(text, newline="")):
            if any(cell.strip() for cell in row):
                return any(cell.strip().lower() in aliases for cell in row)
    except (InputError, csv.Error):
        return False
    return False


# Counts above this are typing errors, not loads or demands (and would overflow int64 sums).
MAX_COUNT = 1_000_000


def _counts_by_id(
    display: str,
    rows: list[tuple[int, tuple[str, ...]]],
    log: ProblemLog,
    id_field: str,
    count_field: str,
    clean: Callable[[str], str],
) -> tuple[dict[str, int], dict[str, int]]:
    """``id -> count`` from rows of (id, count) cells, and ``id -> first line``."""
    counts: dict[str, int] = {}
    first_line: dict[str, int] = {}
    what = id_field.removesuffix("_id")
    for line, (id_cell, count_cell) in rows:
        item_id = clean(id_cell)
        cell = count_cell.strip()
        problem = id_refusal(what, item_id) if item_id else None
        if not item_id:
            log.add(display, line, id_field, f"empty {what} id")
        elif problem is not None:
            log.add(display, line, id_field, problem)
            continue
        if not (cell.isascii() and cell.isdigit()):
            log.add(
                display, line, count_field, f"expected a non-negative whole number, got {cell!r}"
            )
            continue
        # the length test first: int() of a hostile megabyte of digits is slow (or refused)
        if len(cell) > len(str(MAX_COUNT)) or int(cell) > MAX_COUNT:
            shown = cell if len(cell) <= 20 else cell[:20] + "…"
            log.add(
                display,
                line,
                count_field,
                f"expected a whole number from 0 to {MAX_COUNT}, got {shown!r}",
            )
            continue
        if not item_id:
            continue
        if item_id in counts and counts[item_id] != int(cell):
            log.add(
                display,
                line,
                count_field,
                f"{what} {item_id!r} already has {count_field} {counts[item_id]} "
                f"(line {first_line[item_id]})",
            )
            continue
        counts[item_id] = int(cell)
        first_line.setdefault(item_id, line)
    return counts, first_line


# Files from this size on are first read with pandas' C parser and checked with array
# operations; any doubt (quotes, blank lines, a bad cell...) sends them down the row-by-row
# path, which names every problem. Both give the same table.
FAST_MIN_BYTES = 64 * 1024


def _fast_table(
    source: str | Path | bytes, name: str | None, columns: Sequence[Sequence[str]]
) -> tuple[list[npt.NDArray[np.object_]], npt.NDArray[np.int64]] | None:
    """The columns (as text, reordered to ``columns``) and each row's file line, or None
    when the file is small or not plain enough for the fast path."""
    try:
        _, content = read_source(source, name)
    except InputError:
        return None
    if len(content) < FAST_MIN_BYTES:
        return None
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    if '"' in text or "\r" in text:
        return None
    try:
        frame = pd.read_csv(
            io.StringIO(text),
            header=None,
            dtype=object,
            keep_default_na=False,
            na_filter=False,
            skip_blank_lines=False,
            engine="c",
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError):
        return None
    if frame.empty or frame.isna().to_numpy().any():
        return None
    header = [str(cell).strip().lower() for cell in frame.iloc[0]]
    if any(cell in aliases for aliases in columns for cell in header):
        positions = [
            next((header.index(a) for a in aliases if a in header), -1) for aliases in columns
        ]
        if -1 in positions:
            return None
        body, first_line = frame.iloc[1:], 2
    else:
        if frame.shape[1] < len(columns):
            return None
        positions, body, first_line = list(range(len(columns))), frame, 1
    # empty cells and blank lines fail the checks of the callers (empty id, bad value)
    cells = [body.iloc[:, position].to_numpy(dtype=object) for position in positions]
    lines = np.arange(first_line, first_line + len(body), dtype=np.int64)
    return cells, lines


def _fast_text(
    raw: npt.NDArray[np.object_], clean: Callable[[str], str]
) -> npt.NDArray[np.object_] | None:
    """``clean`` applied to every cell (once per distinct cell, after undoing our exports'
    spreadsheet escaping as the row-by-row path does); None when a cleaned id is empty or
    refused by the id policy (the row-by-row path names the line)."""
    codes, uniques = pd.factorize(raw)
    cleaned = np.array([clean(unescape_cell(str(u))) for u in uniques], dtype=object)
    if any(not c or id_problem(c) is not None for c in cleaned):
        return None
    return cleaned[codes]


def _fast_constraints(
    cells: list[npt.NDArray[np.object_]], lines: npt.NDArray[np.int64]
) -> pd.DataFrame | None:
    papers = _fast_text(cells[0], clean_id)
    reviewers = _fast_text(cells[1], clean_reviewer_id)
    codes, uniques = pd.factorize(cells[2])
    numbers = [_number(unescape_cell(str(u))) for u in uniques]
    if papers is None or reviewers is None or any(n not in (-1.0, 0.0, 1.0) for n in numbers):
        return None
    values = np.array(numbers, dtype=np.float64)[codes].astype(np.int8)
    frame = pd.DataFrame(
        {"paper_id": papers, "reviewer_id": reviewers, "value": values, "line": lines}
    )
    frame = frame.drop_duplicates(["paper_id", "reviewer_id", "value"])
    if frame.duplicated(["paper_id", "reviewer_id"]).any():
        return None  # a pair listed with two values: the row-by-row path names the lines
    return frame[frame["value"] != 0].reset_index(drop=True)


def _fast_bids(
    cells: list[npt.NDArray[np.object_]], lines: npt.NDArray[np.int64]
) -> pd.DataFrame | None:
    papers = _fast_text(cells[0], clean_id)
    reviewers = _fast_text(cells[1], clean_reviewer_id)
    codes, uniques = pd.factorize(cells[2])
    labels = [clean_text(unescape_cell(str(u))) for u in uniques]
    try:
        values = [parse_bid(label)[0] for label in labels]
    except ValueError:
        return None  # the row-by-row path names the lines
    if papers is None or reviewers is None:
        return None
    frame = pd.DataFrame(
        {
            "paper_id": papers,
            "reviewer_id": reviewers,
            "label": np.array(labels, dtype=object)[codes],
            "bid": np.array(values, dtype=np.float64)[codes],
            "conflict": np.array([declares_conflict(label) for label in labels], dtype=bool)[codes],
            "line": lines,
        }
    )
    frame = frame.drop_duplicates(["paper_id", "reviewer_id", "label", "bid"])
    if frame.duplicated(["paper_id", "reviewer_id"]).any():
        return None
    return frame.reset_index(drop=True)


def _raise_or_skip(log: ProblemLog, skipped: list[Problem] | None) -> None:
    """Raise the problems of ``log`` (InputError), or, HotCRP style, append them to
    ``skipped`` when given and each names its line (a problem of the whole file, e.g. too
    many to list, still raises)."""
    if skipped is None or any(p.line is None for p in log.problems):
        log.raise_if_any()
    else:
        skipped.extend(log.problems)


def _with_lines(frame: pd.DataFrame, lines: Iterable[int], wanted: bool) -> pd.DataFrame:
    if wanted:
        frame["line"] = np.fromiter(lines, dtype=np.int64, count=len(frame))
    return frame


def _rows(
    source: str | Path | bytes, name: str | None, columns: Sequence[Sequence[str]]
) -> tuple[str, list[tuple[int, tuple[str, ...]]], ProblemLog]:
    """Rows reordered to ``columns`` (each a tuple of accepted header names)."""
    display, content = read_source(source, name)
    log = ProblemLog()
    text = decode_utf8(display, content, log)
    log.raise_if_any()
    assert text is not None
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[tuple[int, tuple[str, ...]]] = []
    order: list[int] = list(range(len(columns)))
    width = len(columns)
    header_checked = False
    has_header = False
    try:
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if not header_checked:
                header_checked = True
                header = [cell.strip().lower() for cell in row]
                if any(cell in aliases for aliases in columns for cell in header):
                    has_header = True
                    width = len(header)
                    order = []
                    for aliases in columns:
                        position = next((header.index(a) for a in aliases if a in header), None)
                        if position is None:
                            log.add(
                                display,
                                line,
                                aliases[0],
                                f"required column {aliases[0]!r} is missing",
                            )
                        else:
                            order.append(position)
                    if log:
                        break
                    continue
            if has_header and len(row) != width:
                log.add(display, line, None, f"row has {len(row)} fields, expected {width}")
                continue
            if not has_header and len(row) < width:
                # no header: extra columns (e.g. a reason) are ignored, as OpenReview's
                # matcher reads only the first ones
                log.add(
                    display, line, None, f"row has {len(row)} fields, expected at least {width}"
                )
                continue
            # tuples of strings leave the garbage collector's care: millions of tiny rows
            # then cost no long collection pauses (which would stall the server's other
            # threads, /health included)
            rows.append((line, tuple(unescape_cell(row[i]) for i in order)))
    except csv.Error as error:
        log.add(display, reader.line_num, None, f"malformed CSV: {error}")
    if not header_checked and not log:
        # a file with neither a header nor a row is a mistake (a failed export, the wrong
        # file), not "no constraints": a header-only file says that
        expected = ",".join(aliases[0] for aliases in columns)
        log.add(display, None, None, f"the file is empty: expected rows of {expected!r}")
    return display, rows, log


def _pair(
    name: str, line: int, paper_cell: str, reviewer_cell: str, log: ProblemLog
) -> tuple[str, str] | None:
    paper_id = take_id(paper_cell, (name, line), "paper_id", log, kind="paper")
    reviewer_id = take_id(
        reviewer_cell, (name, line), "reviewer_id", log, kind="reviewer", person=True
    )
    if paper_id == "":
        log.add(name, line, "paper_id", "empty paper id")
    if reviewer_id == "":
        log.add(name, line, "reviewer_id", "empty reviewer id")
    return (paper_id, reviewer_id) if paper_id and reviewer_id else None


def _number(cell: str) -> float | None:
    try:
        value = float(cell)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _put(
    records: dict[tuple[str, str], _Value],
    pair: tuple[str, str],
    value: _Value,
    name: str,
    line: int,
    field: str,
    log: ProblemLog,
) -> None:
    existing = records.get(pair)
    if existing is None:
        records[pair] = value
    elif existing != value:
        log.add(name, line, field, f"pair {pair} listed again with a different {field}")
