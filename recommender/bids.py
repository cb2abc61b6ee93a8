"""What a bid means, and folding bids into affinity scores.

The one bid vocabulary of the project (files, uploads, stored bids, the solve):

- a bid cell is a number in -1..1 (a preference as given) or an OpenReview label, compared
  with case and spacing ignored (``" very  HIGH "`` is ``Very High``);
- preference labels are numbers: Very High = +1, High = +0.5, Neutral = 0, Low = -0.5,
  Very Low = -1 (:data:`BID_VALUES`);
- "Not Willing" and "Conflict" are not preferences but **exclusions**: the pair is never
  assigned (:func:`excludes`, the one exclusion rule). Where a table needs a number for
  them (the bids table, a listing sorted by willingness) it is
  :data:`EXCLUDING_BID_VALUE`, which never decides anything. "Conflict" also declares a
  conflict of interest (:func:`declares_conflict`). A number never excludes.

The final score of a bid pair is ``score + weight * bid``, in the affinity's own units
(combined scores are in [0, 1], so ``weight = 0.1`` lets a Very High bid lift a pair by a
tenth of the score range); excluded pairs are returned as a boolean mask for the matching
side to forbid, and their scores are left untouched. Pairs naming unknown papers or
reviewers are an error (listed together).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pandas as pd

from recommender.corpus import InputError, Problem

if TYPE_CHECKING:  # the affinity stack is only needed by apply_bids' callers
    from recommender.affinity import Affinity

BID_VALUES: dict[str, float] = {
    "very high": 1.0,
    "high": 0.5,
    "neutral": 0.0,
    "low": -0.5,
    "very low": -1.0,
}
BID_MIN, BID_MAX = -1.0, 1.0
"""The range of a bid as a number: Very Low .. Very High."""
EXCLUDING_BIDS = frozenset({"not willing", "conflict"})
# the number an excluding label is recorded as where a table needs one: the least willing
EXCLUDING_BID_VALUE = -1.0
# the labels by which a reviewer declares a conflict of interest (they exclude too)
CONFLICT_BIDS = frozenset({"conflict"})
LABELS = (*BID_VALUES, "not willing", "conflict")


def normalise_label(cell: object) -> str:
    """A bid cell as the vocabulary compares it: spacing collapsed, case folded."""
    return " ".join(str(cell).split()).casefold()


def excludes(cell: object) -> bool:
    """Whether a bid (label or number) excludes its pair: Not Willing or Conflict."""
    return normalise_label(cell) in EXCLUDING_BIDS


def declares_conflict(cell: object) -> bool:
    """Whether a bid declares a conflict of interest (the label Conflict)."""
    return normalise_label(cell) in CONFLICT_BIDS


def excluding_mask(cells: Iterable[object] | pd.Series) -> npt.NDArray[np.bool_]:
    """:func:`excludes` for each cell, one test per distinct value."""
    series = cells if isinstance(cells, pd.Series) else pd.Series(list(cells), dtype=object)
    if series.empty:
        return np.zeros(0, dtype=bool)
    codes, uniques = pd.factorize(series, use_na_sentinel=False)
    return np.array([excludes(u) for u in uniques], dtype=bool)[codes]


def parse_bid(cell: object) -> tuple[float, bool]:
    """``(number, excludes)`` of a bid cell: a number in -1..1 is itself and never excludes;
    a label is its :data:`BID_VALUES` number, or :data:`EXCLUDING_BID_VALUE` and excludes.
    ValueError (in a user's words) for anything else, a number outside -1..1 included (the
    labels' own range: a bid of 1e308 would fold into an infinite score)."""
    if isinstance(cell, bool):
        raise ValueError(f"unknown bid {cell!r}")
    if isinstance(cell, int | float | np.integer | np.floating):
        return _bid_number(float(cell), cell), False
    text = normalise_label(cell)
    if text in EXCLUDING_BIDS:
        return EXCLUDING_BID_VALUE, True
    if text in BID_VALUES:
        return BID_VALUES[text], False
    try:
        value = float(text)
    except ValueError:
        known = ", ".join(label.title() for label in LABELS)
        raise ValueError(f"unknown bid {cell!r}: use a number or one of {known}") from None
    return _bid_number(value, cell), False


def _bid_number(value: float, cell: object) -> float:
    if not math.isfinite(value):
        raise ValueError(f"bid {cell!r} is not a finite number")
    if not BID_MIN <= value <= BID_MAX:
        raise ValueError(
            f"bid {cell!r} is outside {BID_MIN:g}..{BID_MAX:g} (Very Low = -1 ... Very High = 1)"
        )
    return value


def bid_value(cell: object) -> float | None:
    """The preference number of a bid cell, ``None`` for an excluding label; ValueError if
    unknown (see :func:`parse_bid`)."""
    value, excluding = parse_bid(cell)
    return None if excluding else value


@dataclass(frozen=True, eq=False)
class BidResult:
    """Scores with bids folded in, plus the pairs bids exclude.

    ``excluded``: bool (n_papers, n_reviewers), true where the reviewer bid Not Willing or
    Conflict; the assignment must never use those pairs.
    """

    affinity: Affinity
    excluded: npt.NDArray[np.bool_]


def apply_bids(
    affinity: Affinity, bids: pd.DataFrame, weight: float | None = None, *, source: str = "bids"
) -> BidResult:
    """Add ``weight * bid`` to the scores of bid pairs; collect excluded pairs.

    ``bids``: columns ``paper_id``, ``reviewer_id`` and ``label`` or ``bid`` (as returned by
    :func:`recommender.io.read_bids`: the label decides exclusion when present, else the
    ``bid`` cell is parsed). ``weight`` defaults to ``affinity.params.bid_weight``.
    """
    weight = affinity.params.bid_weight if weight is None else float(weight)
    if not math.isfinite(weight):
        raise ValueError(f"bid weight must be finite, got {weight}")
    missing = [c for c in ("paper_id", "reviewer_id") if c not in bids.columns]
    if missing or not ({"label", "bid"} & set(bids.columns)):
        raise InputError(
            [
                Problem(
                    source,
                    None,
                    ", ".join(missing) or "bid",
                    "bids need paper_id, reviewer_id and a label or bid column",
                )
            ]
        )
    if affinity.scores is None:
        raise ValueError("bids need every pair's score; this affinity holds only the top pairs")
    papers = {p: i for i, p in enumerate(affinity.paper_ids)}
    reviewers = {r.removeprefix("~"): i for i, r in enumerate(affinity.reviewer_ids)}
    delta = np.zeros_like(affinity.scores)
    excluded = np.zeros(affinity.scores.shape, dtype=bool)
    problems: list[Problem] = []
    cells = bids["label"] if "label" in bids.columns else bids["bid"]
    for row, (paper, reviewer, cell) in enumerate(
        zip(bids["paper_id"], bids["reviewer_id"], cells, strict=True), start=1
    ):
        p = papers.get(str(paper))
        r = reviewers.get(str(reviewer).removeprefix("~"))
        if p is None:
            problems.append(Problem(source, row, "paper_id", f"unknown paper {paper!r}"))
        if r is None:
            problems.append(Problem(source, row, "reviewer_id", f"unknown reviewer {reviewer!r}"))
        try:
            value, excluding = parse_bid(cell)
            if not excluding and "label" in bids.columns and "bid" in bids.columns:
                value = float(bids["bid"].iloc[row - 1])
        except ValueError as error:
            problems.append(Problem(source, row, "bid", str(error)))
            continue
        if p is None or r is None:
            continue
        if excluding:
            excluded[p, r] = True
        else:
            delta[p, r] = weight * value
    if problems:
        raise InputError(problems)
    scores = (affinity.scores + delta).astype(np.float32)
    return BidResult(replace(affinity, scores=scores), excluded)
