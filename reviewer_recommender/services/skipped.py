"""Uploads read HotCRP style: the valid lines apply, each bad line is skipped and listed by
its line, and the file is refused whole (nothing changes) only when no line is valid.

The one place that counts and lists skipped lines, for every upload that skips them (bids,
pair constraints, demands, max loads, bulk changes): the answer, the edit history and the
audit entry all count with :func:`skipped_lines`, so they agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import pandas as pd

from recommender.corpus import InputError, Problem


class Lined(Protocol):
    """A problem of one line (``None``: of the whole file)."""

    @property
    def line(self) -> int | None: ...


def skipped_lines(problems: Iterable[Lined]) -> int:
    """How many lines ``problems`` skip (a line with two problems counts once)."""
    return len({p.line for p in problems if p.line is not None})


def skipped_rows(problems: Iterable[Problem]) -> tuple[dict[str, Any], ...]:
    """``problems`` as an answer lists them: ``{line, field, message}`` by line."""
    return tuple(
        {"line": p.line, "field": p.field, "message": p.message}
        for p in sorted(problems, key=lambda p: p.line or 0)
    )


def skipped_detail(problems: Sequence[Lined]) -> dict[str, int]:
    """What an upload's audit entry adds: ``skipped_lines`` when a line was skipped."""
    count = skipped_lines(problems)
    return {"skipped_lines": count} if count else {}


def refuse_when_nothing_valid(valid: int, problems: Sequence[Problem]) -> None:
    """InputError naming every problem when lines were skipped and none is left to apply
    (``valid`` rows): the file changes nothing then."""
    if problems and not valid:
        raise InputError(sorted(problems, key=lambda p: p.line or 0))


def lines_without(
    frame: pd.DataFrame,
    key: str,
    refused: set[str],
    message: str,
    problems: list[Problem],
    source: str,
) -> pd.Series:
    """Which rows of ``frame`` (with ``line``) have a ``key`` not in ``refused`` (e.g. ids
    the venue does not have); a problem per other row, naming its line and ``message``
    formatted with its id, appended to ``problems``."""
    bad = frame[key].isin(refused)
    for line, item in frame.loc[bad, ["line", key]].itertuples(index=False):
        problems.append(Problem(source, int(line), key, message.format(item)))
    return ~bad
