"""Folding reviewer bids into affinity scores.

Mapping of OpenReview bid labels to numbers (case-insensitive; numbers are used as given):

    Very High = +1, High = +0.5, Neutral = 0, Low = -0.5, Very Low = -1

The final score of a bid pair is ``score + weight * bid``, in the affinity's own units
(combined scores are in [0, 1], so ``weight = 0.1`` lets a Very High bid lift a pair by a
tenth of the score range). "Not Willing" and "Conflict" are not preferences but exclusions:
they are returned as a boolean mask for the matching side to forbid, and their scores are
left untouched. Pairs naming unknown papers or reviewers are an error (listed together).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
import pandas as pd

from recommender.affinity import Affinity
from recommender.corpus import InputError, Problem

BID_VALUES: dict[str, float] = {
    "very high": 1.0,
    "high": 0.5,
    "neutral": 0.0,
    "low": -0.5,
    "very low": -1.0,
}
EXCLUDING_BIDS = frozenset({"not willing", "conflict"})


@dataclass(frozen=True, eq=False)
class BidResult:
    """Scores with bids folded in, plus the pairs bids exclude.

    ``excluded``: bool (n_papers, n_reviewers), true where the reviewer bid Not Willing or
    Conflict; the assignment must never use those pairs.
    """

    affinity: Affinity
    excluded: npt.NDArray[np.bool_]


def bid_value(cell: object) -> float | None:
    """Number of a bid cell, ``None`` for an excluding label; ValueError if unknown."""
    if isinstance(cell, bool):
        raise ValueError(f"unknown bid {cell!r}")
    if isinstance(cell, int | float | np.integer | np.floating):
        value = float(cell)
        if not math.isfinite(value):
            raise ValueError(f"bid {cell!r} is not a finite number")
        return value
    text = " ".join(str(cell).split()).casefold()
    if text in EXCLUDING_BIDS:
        return None
    if text in BID_VALUES:
        return BID_VALUES[text]
    try:
        value = float(text)
    except ValueError:
        known = ", ".join(k.title() for k in [*BID_VALUES, *sorted(EXCLUDING_BIDS)])
        raise ValueError(f"unknown bid {cell!r}: use a number or one of {known}") from None
    if not math.isfinite(value):
        raise ValueError(f"bid {cell!r} is not a finite number")
    return value


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
            value = bid_value(cell)
            if value is not None and "label" in bids.columns and "bid" in bids.columns:
                value = float(bids["bid"].iloc[row - 1])
        except ValueError as error:
            problems.append(Problem(source, row, "bid", str(error)))
            continue
        if p is None or r is None:
            continue
        if value is None:
            excluded[p, r] = True
        else:
            delta[p, r] = weight * value
    if problems:
        raise InputError(problems)
    scores = (affinity.scores + delta).astype(np.float32)
    return BidResult(replace(affinity, scores=scores), excluded)
