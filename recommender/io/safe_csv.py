"""Spreadsheet-safe CSV cells: what every CSV we write passes through, and what every CSV
reader of ours undoes.

A spreadsheet runs a cell that begins with ``=``, ``+``, ``-`` or ``@`` (and, in some
programs, tab or carriage return) as a formula: an id or a reason such as
``=HYPERLINK("http://evil", "click")`` in an exported file would run on the chair's machine
(CSV/formula injection). Following OWASP's rule, such a text cell is written with a leading
``'``, which spreadsheets show as text and never evaluate.

- Only text is escaped: numbers (``int``, ``float``, numpy numbers) are written as numbers,
  so a negative score stays ``-0.5``; a text cell that is a plain decimal number (``-1``,
  ``+2.5e-3``) cannot run anything either and is left as it is.
- The escaping is exactly invertible: a text cell that already begins with ``'`` followed by a
  trigger or another ``'`` gets one more ``'``, and :func:`unescape_cell` removes one ``'``
  exactly when the second character is a trigger or ``'``. So our own round trips (scores
  written by ``score`` and read by ``assign``, an export uploaded back) keep ids such as
  ``-abc``, ``=x`` or ``'=x`` unchanged. A third-party file whose own ids begin with ``'=``
  reads as if that ``'`` were our escape.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterable
from typing import IO, Any

import numpy as np
import pandas as pd

# OWASP "CSV Injection": cells beginning with these run as formulas in some spreadsheet.
FORMULA_TRIGGERS = frozenset({"=", "+", "-", "@", "\t", "\r"})
ESCAPE = "'"
_STRIPPABLE = FORMULA_TRIGGERS | {ESCAPE}
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _text_needs_escape(text: str) -> bool:
    if not text:
        return False
    first = text[0]
    if first in FORMULA_TRIGGERS:
        return _PLAIN_NUMBER.fullmatch(text) is None
    return first == ESCAPE and len(text) > 1 and text[1] in _STRIPPABLE


def escape_cell(value: Any) -> Any:
    """``value`` made safe for a spreadsheet: text that would run as a formula gets a leading
    ``'``; anything that is not text (numbers, None) is returned unchanged."""
    if isinstance(value, str) and _text_needs_escape(value):
        return ESCAPE + value
    return value


def unescape_cell(text: str) -> str:
    """Exactly undo :func:`escape_cell` on a cell read back from one of our CSVs."""
    if len(text) > 1 and text[0] == ESCAPE and text[1] in _STRIPPABLE:
        return text[1:]
    return text


def escape_row(row: Iterable[Any]) -> list[Any]:
    return [escape_cell(value) for value in row]


def escape_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text columns (and header) are escaped; numeric columns,
    and so their formatting, are untouched. Vectorized: fine for millions of rows."""
    result = frame
    for position in range(frame.shape[1]):
        series = frame.iloc[:, position]
        if series.dtype == object or isinstance(series.dtype, pd.StringDtype):
            escaped = escape_series(series)
            if escaped is not series:
                if result is frame:
                    result = frame.copy(deep=False)
                result.isetitem(position, escaped)
    if any(isinstance(c, str) and _text_needs_escape(c) for c in result.columns):
        result = result.set_axis([escape_cell(c) for c in result.columns], axis=1)
    return result


def escape_series(series: pd.Series) -> pd.Series:
    """``series`` with every text value escaped (non-text values unchanged). Each distinct
    value is looked at once: writing millions of pairs over a few thousand ids costs one
    hash pass, not a Python call per cell."""
    return _map_distinct_text(series, escape_cell)


def unescape_series(series: pd.Series) -> pd.Series:
    """Exactly undo :func:`escape_series` on text read back from one of our CSVs (missing
    values and non-text stay as they are)."""
    if series.dtype != object and not isinstance(series.dtype, pd.StringDtype):
        return series
    return _map_distinct_text(series, unescape_cell)


def _map_distinct_text(series: pd.Series, change: Callable[[str], Any]) -> pd.Series:
    """``series`` with ``change`` applied to its text values, computed once per distinct
    value; the same object when nothing changes."""
    if len(series) == 0:
        return series
    values = series.to_numpy(dtype=object, copy=False)
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    distinct = np.asarray(uniques, dtype=object)
    changed = np.fromiter(
        (isinstance(v, str) and change(v) != v for v in distinct), dtype=bool, count=len(distinct)
    )
    if not changed.any():
        return series
    replacement = distinct.copy()
    for position in np.flatnonzero(changed):
        replacement[position] = change(distinct[position])
    rows = np.flatnonzero((codes >= 0) & changed[np.maximum(codes, 0)])
    out = values.copy()
    out[rows] = replacement[codes[rows]]
    return pd.Series(out, index=series.index, name=series.name, dtype=object)


def unescape_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (read by pandas from one of our CSVs) with every text column unescaped."""
    result = frame
    for position in range(frame.shape[1]):
        series = frame.iloc[:, position]
        unescaped = unescape_series(series)
        if unescaped is not series:
            if result is frame:
                result = frame.copy(deep=False)
            result.isetitem(position, unescaped)
    return result


class SafeCsvWriter:
    """``csv.writer`` that escapes every row it writes (``writerow``/``writerows``)."""

    def __init__(self, stream: IO[str], **options: Any):
        self._writer = csv.writer(stream, **options)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow(escape_row(row))

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def safe_csv_writer(stream: IO[str], **options: Any) -> SafeCsvWriter:
    """A CSV writer for ``stream`` (options as :func:`csv.writer`) whose cells are escaped."""
    return SafeCsvWriter(stream, **options)


def write_frame_csv(frame: pd.DataFrame, target: Any, **options: Any) -> Any:
    """``frame.to_csv(target, **options)`` with spreadsheet-safe text cells and header."""
    return escape_frame(frame).to_csv(target, **options)
