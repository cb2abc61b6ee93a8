"""Scores tables (``paper_id,reviewer_id,score``): the candidate pairs of an assignment.

:func:`read_scores` reads a CSV of millions of rows with pandas' C parser and validates it
with array operations; only when something is wrong does it re-read the file row by row to
name the line. The result, :class:`ScoreTable`, is canonical: ids sorted, pairs sorted by
(paper, reviewer), so the same pairs give the same table whatever the row order of the file
(or of a database query), and every face builds the same problem from it.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from recommender.corpus import InputError, Problem
from recommender.ids import id_refusal, lookalike_groups, lookalike_message
from recommender.io._common import ProblemLog, clean_id, clean_reviewer_id, decode_utf8
from recommender.io.safe_csv import unescape_cell

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

# Scores beyond this magnitude are refused: sums over millions of pairs must stay exact
# enough for optimality certificates (only the order and differences of scores matter, so
# any scale can be divided down).
MAX_ABS_SCORE = 1e12

PAPER_COLUMNS = ("paper_id", "paper", "head", "note_id", "submission_id", "forum")
REVIEWER_COLUMNS = ("reviewer_id", "reviewer", "tail", "signature", "profile_id", "user")
SCORE_COLUMNS = ("score", "affinity", "weight", "value")

_PANDAS_LINE = re.compile(r"line (\d+), saw (\d+)")
# Ids never hold control characters (NUL, escape...): such a cell is damage.
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True, eq=False)
class ScoreTable:
    """Candidate (paper, reviewer) pairs with their scores.

    ``paper_ids``/``reviewer_ids`` are sorted and unique; ``pair_paper``/``pair_reviewer``
    index into them and ``score`` (float64, finite) is parallel to both, all of shape
    (n_pairs,), sorted by (paper, reviewer) with each pair at most once. ``source`` names the
    origin in messages (a file path, "affinity run 3").
    """

    paper_ids: tuple[str, ...]
    reviewer_ids: tuple[str, ...]
    pair_paper: IntArray
    pair_reviewer: IntArray
    score: FloatArray
    source: str = "scores"

    @property
    def n_pairs(self) -> int:
        return len(self.score)

    @property
    def keys(self) -> IntArray:
        """``paper * n_reviewers + reviewer`` per pair: ascending, unique."""
        return self.pair_paper * len(self.reviewer_ids) + self.pair_reviewer

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "paper_id": np.asarray(self.paper_ids, dtype=object)[self.pair_paper],
                "reviewer_id": np.asarray(self.reviewer_ids, dtype=object)[self.pair_reviewer],
                "score": self.score,
            }
        )

    @classmethod
    def from_columns(
        cls,
        paper_id: npt.ArrayLike,
        reviewer_id: npt.ArrayLike,
        score: npt.ArrayLike,
        *,
        source: str = "scores",
        line_of: Callable[[int], int | None] | None = None,
        allow_empty: bool = False,
        unescape: bool = False,
        id_policy: bool = False,
    ) -> ScoreTable:
        """Validate parallel columns (n_rows,) and build the canonical table.

        Ids lose the spaces and tabs around them (reviewer ids also OpenReview's ``~``),
        nothing else. ``id_policy`` (ids read from a file): every id must pass
        :func:`recommender.ids.id_problem`, and two ids of one column must not display alike;
        otherwise (ids already stored) only control characters are refused.
        Raises :class:`InputError` for an empty table (unless ``allow_empty``), an empty id,
        a score that is not a finite number within ``MAX_ABS_SCORE``, or a pair listed twice;
        ``line_of(row)`` turns a row number into the file line named in the message.
        ``unescape`` undoes the spreadsheet escaping of our CSV exports
        (:func:`recommender.io.safe_csv.unescape_cell`) on ids read from a file, once per
        distinct id."""
        papers = np.asarray(paper_id, dtype=object)
        reviewers = np.asarray(reviewer_id, dtype=object)
        values = np.asarray(score)
        if not len(papers) == len(reviewers) == len(values):
            raise ValueError("paper_id, reviewer_id and score must have equal lengths")

        def where(row: int) -> int | None:
            return line_of(row) if line_of is not None else row + 1

        if len(papers) == 0 and not allow_empty:
            raise InputError(
                [Problem(source, None, None, "no score rows: there is no pair to assign")]
            )
        clean_paper = _after_unescape(clean_id) if unescape else clean_id
        clean_reviewer = _after_unescape(clean_reviewer_id) if unescape else clean_reviewer_id
        paper_codes, paper_list = _encode(papers, clean_paper, source, "paper_id", where, id_policy)
        reviewer_codes, reviewer_list = _encode(
            reviewers, clean_reviewer, source, "reviewer_id", where, id_policy
        )
        if values.dtype.kind not in "fiu":
            numeric = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(np.float64)
            bad = np.flatnonzero(np.isnan(numeric) & ~_is_nan_text(values))
            if len(bad):
                row = int(bad[0])
                raise InputError(
                    [
                        Problem(
                            source,
                            where(row),
                            "score",
                            f"not a number: {_shown(values[row])}",
                        )
                    ]
                )
            values = numeric
        values = values.astype(np.float64, copy=False)
        bad = np.flatnonzero(~(np.abs(values) <= MAX_ABS_SCORE))
        if len(bad):
            row = int(bad[0])
            reason = (
                "empty or not a finite number"
                if not np.isfinite(values[row])
                else f"outside ±{MAX_ABS_SCORE:g}; divide the scores down (only their order "
                "and differences matter)"
            )
            raise InputError(
                [Problem(source, where(row), "score", f"{float(values[row])!r}: {reason}")]
            )
        keys = paper_codes * max(len(reviewer_list), 1) + reviewer_codes
        if len(keys) > 1 and not bool(np.all(keys[1:] > keys[:-1])):
            order = np.argsort(keys, kind="stable")
            sorted_keys = keys[order]
            twice = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
            if len(twice):
                first, again = int(order[twice[0]]), int(order[twice[0] + 1])
                raise InputError(
                    [
                        Problem(
                            source,
                            where(again),
                            None,
                            f"pair ({paper_list[paper_codes[again]]}, "
                            f"{reviewer_list[reviewer_codes[again]]}) is listed again "
                            f"(first at line {where(first)})",
                        )
                    ]
                )
            paper_codes, reviewer_codes, values = (
                paper_codes[order],
                reviewer_codes[order],
                values[order],
            )
        return cls(
            paper_ids=paper_list,
            reviewer_ids=reviewer_list,
            pair_paper=paper_codes,
            pair_reviewer=reviewer_codes,
            score=np.ascontiguousarray(values),
            source=source,
        )

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, source: str = "scores") -> ScoreTable:
        """From a ``DataFrame[paper_id, reviewer_id, score]`` (e.g. stored scores)."""
        return cls.from_columns(
            frame["paper_id"].to_numpy(),
            frame["reviewer_id"].to_numpy(),
            frame["score"].to_numpy(),
            source=source,
            allow_empty=True,
        )


def read_scores(path: str | Path, name: str | None = None) -> ScoreTable:
    """A scores CSV as a :class:`ScoreTable`.

    The file has a header naming the columns (``paper_id``/``reviewer_id``/``score`` or
    OpenReview's aliases such as ``head``, ``tail``, ``weight``; extra columns are ignored)
    or none (then the first three columns are paper, reviewer, score, as OpenReview's
    matcher reads them). UTF-8 with or without a byte-order mark. Ids written
    spreadsheet-safe by our exports (``'=x``) read back as they were (``=x``). Raises
    :class:`InputError` naming the file, line and field of the first problem."""
    path = Path(path)
    display = name or str(path)
    try:
        with path.open("rb") as stream:
            head = stream.read(65536)
    except OSError as error:
        raise InputError(
            [Problem(display, None, None, f"cannot read file: {error.strerror}")]
        ) from error
    first = _first_record(head)
    if first is None:
        raise InputError([Problem(display, None, None, "file is empty: no score rows")])
    header = [cell.strip().lstrip("\ufeff").strip().casefold() for cell in first]
    has_header = any(cell in aliases for aliases in _COLUMNS for cell in header)
    if has_header:
        positions = []
        for aliases, field in zip(_COLUMNS, _FIELDS, strict=True):
            position = next((header.index(a) for a in aliases if a in header), None)
            if position is None:
                raise InputError(
                    [
                        Problem(
                            display,
                            1,
                            field,
                            f"required column {field!r} is missing (header: {', '.join(first)})",
                        )
                    ]
                )
            positions.append(position)
        width = len(header)
    else:
        if len(first) < 3:
            raise InputError(
                [
                    Problem(
                        display,
                        1,
                        None,
                        f"row has {len(first)} field(s); expected paper_id,reviewer_id,score "
                        "(with or without that header)",
                    )
                ]
            )
        positions, width = [0, 1, 2], len(first)
    frame = _fast_read(path, display, has_header, positions, width)

    def line_of(row: int) -> int | None:
        return _record_line(path, row + (1 if has_header else 0))

    return ScoreTable.from_columns(
        frame["paper_id"].to_numpy(),
        frame["reviewer_id"].to_numpy(),
        frame["score"].to_numpy(),
        source=display,
        line_of=line_of,
        unescape=True,
        id_policy=True,
    )


_COLUMNS = (PAPER_COLUMNS, REVIEWER_COLUMNS, SCORE_COLUMNS)
_FIELDS = ("paper_id", "reviewer_id", "score")


def _fast_read(
    path: Path, display: str, has_header: bool, positions: list[int], width: int
) -> pd.DataFrame:
    """The three columns with the C parser: ids as str objects (no NA conversion: "NA" is a
    valid id), scores as float64 when every cell parses, else as text."""
    names = [f"c{i}" for i in range(width)]
    renames = {names[p]: f for p, f in zip(positions, _FIELDS, strict=True)}
    common = dict(
        header=None,
        names=names,
        skiprows=1 if has_header else 0,
        encoding="utf-8-sig",
        keep_default_na=False,
        na_values={names[positions[2]]: [""]},
        skip_blank_lines=True,
        engine="c",
        on_bad_lines="error",
    )
    # every column but the score as text (extra columns are read and dropped)
    id_types: dict[str, object] = {n: object for n in names if n != names[positions[2]]}
    try:
        try:
            frame = pd.read_csv(path, dtype={**id_types, names[positions[2]]: np.float64}, **common)
        except ValueError as error:
            if isinstance(error, UnicodeDecodeError | pd.errors.ParserError):
                raise
            # a score cell that is not a number: read it as text to name its line
            frame = pd.read_csv(path, dtype={**id_types, names[positions[2]]: object}, **common)
    except UnicodeDecodeError:
        log = ProblemLog()
        decode_utf8(display, path.read_bytes(), log)
        log.raise_if_any()
        raise
    except pd.errors.ParserError as error:
        match = _PANDAS_LINE.search(str(error))
        if match:
            line = _physical_line(path, int(match.group(1)))
            raise InputError(
                [
                    Problem(
                        display,
                        line,
                        None,
                        f"row has {match.group(2)} fields, expected {width}",
                    )
                ]
            ) from None
        raise InputError([Problem(display, None, None, f"malformed CSV: {error}")]) from None
    if not isinstance(frame.index, pd.RangeIndex):
        # pandas takes the leading fields of rows wider than the names as an index, which
        # would shift every column: such rows are refused like any other wrong width
        raise InputError(
            [
                Problem(
                    display,
                    2 if has_header else 1,
                    None,
                    f"row has more fields than the {width} the "
                    f"{'header names' if has_header else 'first row has'}; remove the extra "
                    "columns or name them in the header",
                )
            ]
        )
    frame = frame[list(renames)].rename(columns=renames)
    return frame


def _first_record(head: bytes) -> list[str] | None:
    text = head.decode("utf-8-sig", errors="replace")
    for row in csv.reader(io.StringIO(text, newline="")):
        if any(cell.strip() for cell in row):
            return row
    return None


def _record_line(path: Path, record: int) -> int | None:
    """File line where the ``record``-th non-blank CSV record (0-based, header included)
    starts; used only to name lines in error messages."""
    text = path.read_bytes().decode("utf-8-sig", errors="replace")
    reader = csv.reader(io.StringIO(text, newline=""))
    seen = -1
    start = 1
    try:
        for row in reader:
            if row:
                seen += 1
                if seen == record:
                    return start
            start = reader.line_num + 1
    except csv.Error:
        return None
    return None


def _physical_line(path: Path, pandas_line: int) -> int:
    """pandas counts lines without the blank ones it skipped; map to the file's line."""
    text = path.read_bytes().decode("utf-8-sig", errors="replace")
    count = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip("\r\n"):
            count += 1
            if count == pandas_line:
                return number
    return pandas_line


def _after_unescape(clean: Callable[[str], str]) -> Callable[[str], str]:
    def cleaned(cell: str) -> str:
        return clean(unescape_cell(cell))

    return cleaned


def _encode(
    raw: npt.NDArray[np.object_],
    clean: Callable[[str], str],
    source: str,
    field: str,
    where: Callable[[int], int | None],
    id_policy: bool = False,
) -> tuple[IntArray, tuple[str, ...]]:
    """Sorted unique cleaned ids and each row's code; InputError for an empty id, one with
    a control character, and (``id_policy``) one the id policy refuses or two that display
    alike (checked once per distinct id)."""
    codes, uniques = pd.factorize(raw, use_na_sentinel=True)
    cleaned = [clean(str(u)) for u in uniques]
    empty = [i for i, c in enumerate(cleaned) if not c]
    if (codes < 0).any() or empty:
        bad = codes < 0
        if empty:
            bad |= np.isin(codes, empty)
        row = int(np.flatnonzero(bad)[0])
        raise InputError(
            [Problem(source, where(row), field, f"empty {field.removesuffix('_id')} id")]
        )
    control = [i for i, c in enumerate(cleaned) if CONTROL_CHARACTERS.search(c)]
    if control and not id_policy:
        row = int(np.flatnonzero(np.isin(codes, control))[0])
        shown = cleaned[control[0]]
        raise InputError([Problem(source, where(row), field, f"control character in id {shown!r}")])
    if id_policy:
        _check_id_policy(cleaned, codes, source, field, where)
    ordered = sorted(set(cleaned))
    position = {value: i for i, value in enumerate(ordered)}
    remap = np.fromiter((position[c] for c in cleaned), dtype=np.int64, count=len(cleaned))
    return remap[codes], tuple(ordered)


def _check_id_policy(
    cleaned: list[str],
    codes: IntArray,
    source: str,
    field: str,
    where: Callable[[int], int | None],
) -> None:
    """Every distinct id of a column read from a file against :mod:`recommender.ids`: the
    first few refusals, each at the first row holding the id."""
    kind = field.removesuffix("_id")
    log = ProblemLog()

    def first_row(index: int) -> int | None:
        return where(int(np.flatnonzero(codes == index)[0]))

    for index, identifier in enumerate(cleaned):
        problem = id_refusal(kind, identifier)
        if problem is not None:
            log.add(source, first_row(index), field, problem)
            if len(log.problems) >= 10:
                break
    if not log:
        index_of = {identifier: index for index, identifier in enumerate(cleaned)}
        for group in lookalike_groups(cleaned)[:10]:
            first_line = first_row(index_of[group[0]])
            for other in group[1:]:
                log.add(
                    source,
                    first_row(index_of[other]),
                    field,
                    lookalike_message(kind, group[0], other, f"line {first_line}"),
                )
    log.raise_if_any()


def _is_nan_text(values: npt.NDArray[np.object_]) -> npt.NDArray[np.bool_]:
    """Cells that literally spell NaN: they are numbers (and refused as not finite)."""
    series = pd.Series(values, dtype=object)
    return series.astype(str).str.strip().str.casefold().isin(["nan", "-nan", "+nan"]).to_numpy()


def _shown(value: object) -> str:
    text = str(value)
    return repr(text if len(text) <= 40 else text[:40] + "...")
