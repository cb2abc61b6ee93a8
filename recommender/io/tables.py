"""Per-pair and per-reviewer tables: bids, pair constraints, custom reviewer loads.

Each file is a CSV with a header or without one (then the columns are positional).
Reviewer ids lose their leading ``~``. A (paper, reviewer) pair listed twice with the same
value is kept once; with different values it is a problem.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

import pandas as pd

from recommender.io._common import (
    ProblemLog,
    clean_reviewer_id,
    clean_text,
    decode_utf8,
    read_source,
)
from recommender.io.safe_csv import unescape_cell

# OpenReview's bid labels and the numbers they become (higher = more willing).
BID_LABEL_VALUES: dict[str, float] = {
    "very high": 1.0,
    "high": 0.5,
    "neutral": 0.0,
    "low": -0.5,
    "very low": -1.0,
    "not willing": -1.0,
    "conflict": -1.0,
}
# Labels by which a reviewer declares a conflict of interest: the pair must never be assigned.
CONFLICT_BID_LABELS = frozenset({"conflict"})

_Value = TypeVar("_Value")

_PAPER_ALIASES = ("paper_id", "paper", "head", "note_id", "submission_id", "forum")
_REVIEWER_ALIASES = ("reviewer_id", "reviewer", "tail", "signature", "profile_id")


def read_bids(source: str | Path | bytes, name: str | None = None) -> pd.DataFrame:
    """Bids as ``DataFrame[paper_id, reviewer_id, label, bid, conflict]``.

    The bid cell is an OpenReview label (``Very High``, ``High``, ``Neutral``, ``Low``,
    ``Very Low``, ``Not Willing``, ``Conflict``; case-insensitive) or a finite number.
    ``label`` keeps the cell as written, ``bid`` is its number (float64, see
    :data:`BID_LABEL_VALUES`) and ``conflict`` is true for a declared conflict.
    """
    display, rows, log = _rows(
        source, name, [_PAPER_ALIASES, _REVIEWER_ALIASES, ("bid", "label", "value")]
    )
    records: dict[tuple[str, str], tuple[str, float, bool]] = {}
    for line, (paper_cell, reviewer_cell, bid_cell) in rows:
        pair = _pair(display, line, paper_cell, reviewer_cell, log)
        label = clean_text(bid_cell)
        value = _number(label)
        if value is None:
            value = BID_LABEL_VALUES.get(label.casefold())
        if value is None:
            known = ", ".join(sorted({k.title() for k in BID_LABEL_VALUES}))
            log.add(
                display, line, "bid", f"unknown bid {bid_cell!r}: use a number or one of {known}"
            )
            continue
        if pair is not None:
            _put(
                records,
                pair,
                (label, value, label.casefold() in CONFLICT_BID_LABELS),
                display,
                line,
                "bid",
                log,
            )
    log.raise_if_any()
    frame = pd.DataFrame(
        [(p, r, label, value, conflict) for (p, r), (label, value, conflict) in records.items()],
        columns=["paper_id", "reviewer_id", "label", "bid", "conflict"],
    )
    return frame.astype({"bid": "float64", "conflict": "bool"})


def read_pair_constraints(source: str | Path | bytes, name: str | None = None) -> pd.DataFrame:
    """Pair constraints as ``DataFrame[paper_id, reviewer_id, value]`` (int8).

    ``value`` is ``-1`` (conflict: never assign) or ``1`` (forced: always assign).
    """
    display, rows, log = _rows(
        source, name, [_PAPER_ALIASES, _REVIEWER_ALIASES, ("value", "constraint", "label")]
    )
    records: dict[tuple[str, str], int] = {}
    for line, (paper_cell, reviewer_cell, value_cell) in rows:
        pair = _pair(display, line, paper_cell, reviewer_cell, log)
        number = _number(value_cell)
        if number not in (-1.0, 1.0):
            log.add(
                display,
                line,
                "value",
                f"constraint must be -1 (conflict) or 1 (forced), got {value_cell.strip()!r}",
            )
            continue
        if pair is not None:
            _put(records, pair, int(number), display, line, "value", log)
    log.raise_if_any()
    frame = pd.DataFrame(
        [(p, r, v) for (p, r), v in records.items()], columns=["paper_id", "reviewer_id", "value"]
    )
    return frame.astype({"value": "int8"})


def read_custom_max_papers(source: str | Path | bytes, name: str | None = None) -> pd.DataFrame:
    """Per-reviewer load caps as ``DataFrame[reviewer_id, max]`` (int64, >= 0)."""
    display, rows, log = _rows(
        source, name, [_REVIEWER_ALIASES, ("max", "max_papers", "max_load", "quota")]
    )
    caps: dict[str, int] = {}
    first_line: dict[str, int] = {}
    for line, (reviewer_cell, max_cell) in rows:
        reviewer_id = clean_reviewer_id(reviewer_cell)
        cell = max_cell.strip()
        if not reviewer_id:
            log.add(display, line, "reviewer_id", "empty reviewer id")
        if not cell.isdigit() or len(cell) > 9:
            log.add(
                display,
                line,
                "max",
                f"expected a whole number from 0 to 999999999, got {cell[:20]!r}",
            )
            continue
        if not reviewer_id:
            continue
        if reviewer_id in caps and caps[reviewer_id] != int(cell):
            log.add(
                display,
                line,
                "max",
                f"reviewer {reviewer_id!r} already has max {caps[reviewer_id]} "
                f"(line {first_line[reviewer_id]})",
            )
            continue
        caps[reviewer_id] = int(cell)
        first_line.setdefault(reviewer_id, line)
    log.raise_if_any()
    frame = pd.DataFrame(list(caps.items()), columns=["reviewer_id", "max"])
    return frame.astype({"max": "int64"})


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
    try:
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if not header_checked:
                header_checked = True
                header = [cell.strip().lower() for cell in row]
                if any(cell in aliases for aliases in columns for cell in header):
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
            if len(row) != width:
                log.add(display, line, None, f"row has {len(row)} fields, expected {width}")
                continue
            # tuples of strings leave the garbage collector's care: millions of tiny rows
            # then cost no long collection pauses (which would stall the server's other
            # threads, /health included)
            rows.append((line, tuple(unescape_cell(row[i]) for i in order)))
    except csv.Error as error:
        log.add(display, reader.line_num, None, f"malformed CSV: {error}")
    return display, rows, log


def _pair(
    name: str, line: int, paper_cell: str, reviewer_cell: str, log: ProblemLog
) -> tuple[str, str] | None:
    paper_id = clean_text(paper_cell)
    reviewer_id = clean_reviewer_id(reviewer_cell)
    if not paper_id:
        log.add(name, line, "paper_id", "empty paper id")
    if not reviewer_id:
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
