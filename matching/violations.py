"""Broken hard constraints, in one vocabulary for every checker and every face.

A :class:`Violation` names what is broken (``kind``, one of :data:`KINDS`), the paper, the
reviewer or the pair concerned, and says it in a chair's words (``detail``; ``describe()``
puts the paper or reviewer in front). The same records serve a solver's result checked
against its problem (:func:`matching.check.evaluate`), a stored assignment checked against
a venue's constraints as they are now (:func:`check_assignment`: publishing, edits), and
every page and report that lists them.

Pair exclusions are of three kinds (:data:`EXCLUSION_KINDS`): a ``conflict`` of interest, a
reviewer's excluding ``bid`` (Not Willing, Conflict) and a chair's ``forbid``. Everything
here takes ids and arrays; the services map their stored rows to them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from matching.problem import IntArray, lookup

#: Every kind of violation, in the order checkers report them.
KINDS = (
    "unknown_paper",
    "unknown_reviewer",
    "duplicate_pair",
    "conflict",
    "bid",
    "forbid",
    "not_candidate",
    "min_score",
    "pin",
    "max_load",
    "min_load",
    "demand",
    "group_limit",
    "attribute_missing",
)
#: What excludes a pair: a conflict of interest, an excluding bid, a chair's forbid.
EXCLUSION_KINDS = ("conflict", "bid", "forbid")
#: The kinds :func:`check_assignment` reports (a venue's constraints on a stored assignment).
ASSIGNMENT_KINDS = (*EXCLUSION_KINDS, "pin", "max_load", "min_load", "demand")


@dataclass(frozen=True)
class Violation:
    """One broken hard constraint.

    ``kind`` is one of :data:`KINDS`. Pair kinds name a paper and a reviewer; ``max_load``
    and ``min_load`` a reviewer; ``demand``, ``group_limit`` and ``attribute_missing`` a
    paper. ``detail`` says what is broken, with the limit, in a chair's words;
    ``position`` is the 0-based position of the offending entry in the pairs checked
    (``None`` for count violations and stored assignments)."""

    kind: str
    paper_id: str | None
    reviewer_id: str | None
    detail: str
    position: int | None = None

    @property
    def target(self) -> tuple[str | None, str | None]:
        """``(paper_id, reviewer_id)``: what a chair's override names."""
        return (self.paper_id, self.reviewer_id)

    def to_dict(self) -> dict[str, Any]:
        """``kind, paper_id, reviewer_id, detail`` (and ``position`` when there is one)."""
        record: dict[str, Any] = {
            "kind": self.kind,
            "paper_id": self.paper_id,
            "reviewer_id": self.reviewer_id,
            "detail": self.detail,
        }
        if self.position is not None:
            record["position"] = self.position
        return record

    def describe(self) -> str:
        """The violation in one line, naming the paper, the reviewer or the pair first."""
        if self.paper_id is not None and self.reviewer_id is not None:
            where = f"({self.paper_id}, {self.reviewer_id})"
        elif self.reviewer_id is not None:
            where = f"reviewer {self.reviewer_id}"
        else:
            where = f"paper {self.paper_id}"
        return f"{where}: {self.detail}"


def exclusion_detail(kind: str, reason: str = "") -> str:
    """A pair exclusion in words: ``conflict`` (``reason``: its source and why), ``bid``
    (``reason``: the label) or ``forbid`` (``reason``: the chair's)."""
    if kind == "conflict":
        return f"conflict of interest ({reason})" if reason else "conflict of interest"
    if kind == "bid":
        return f"the reviewer bid {reason or 'Not Willing'}"
    if kind == "forbid":
        return f"forbidden by a chair: {reason}" if reason else "forbidden by a chair"
    raise ValueError(f"unknown exclusion {kind!r}; use one of {', '.join(EXCLUSION_KINDS)}")


def check_assignment(
    paper_id: Sequence[str] | npt.ArrayLike,
    reviewer_id: Sequence[str] | npt.ArrayLike,
    *,
    paper_ids: Sequence[str],
    demand: npt.ArrayLike,
    reviewer_ids: Sequence[str],
    min_load: npt.ArrayLike,
    max_load: npt.ArrayLike,
    exclusions: pd.DataFrame | None = None,
    pins: pd.DataFrame | None = None,
) -> list[Violation]:
    """Every hard constraint the pairs ``(paper_id[i], reviewer_id[i])`` break, in
    :data:`KINDS` order: pairs that ``exclusions`` names (columns ``paper_id, reviewer_id,
    kind`` from :data:`EXCLUSION_KINDS`, optional ``reason``; by kind, then in the
    exclusions' order), ``pins`` (``paper_id, reviewer_id``) missing from the pairs, then
    :func:`limit_violations` against each paper's ``demand`` and each reviewer's
    ``[min_load, max_load]`` (``paper_ids``/``reviewer_ids`` order them; pairs naming
    other ids count for nothing)."""
    papers = _labels(paper_id)
    reviewers = _labels(reviewer_id)
    if len(papers) != len(reviewers):
        raise ValueError(f"{len(papers)} paper ids but {len(reviewers)} reviewer ids")
    pairs = pd.DataFrame({"paper_id": papers, "reviewer_id": reviewers})
    found = exclusion_violations(pairs, exclusions)
    found += missing_pins(pairs, pins)
    found += limit_violations(
        papers,
        reviewers,
        paper_ids=paper_ids,
        demand=demand,
        reviewer_ids=reviewer_ids,
        min_load=min_load,
        max_load=max_load,
    )
    return found


def exclusion_violations(pairs: pd.DataFrame, exclusions: pd.DataFrame | None) -> list[Violation]:
    """A violation for each exclusion (see :func:`check_assignment`) of a pair among
    ``pairs`` (``paper_id, reviewer_id``, optional ``position``), by kind, then in the
    exclusions' order."""
    if exclusions is None or len(exclusions) == 0 or len(pairs) == 0:
        return []
    unknown = sorted(set(exclusions["kind"]) - set(EXCLUSION_KINDS))
    if unknown:
        raise ValueError(f"unknown exclusion {unknown[0]!r}; use one of {EXCLUSION_KINDS}")
    table = exclusions.assign(
        reason=exclusions["reason"].fillna("") if "reason" in exclusions else "",
        order=np.arange(len(exclusions)),
        rank=exclusions["kind"].map(EXCLUSION_KINDS.index),
    )
    hits = pairs.merge(table, on=["paper_id", "reviewer_id"]).sort_values(
        ["rank", "order"], kind="stable"
    )
    positions = hits["position"] if "position" in hits else [None] * len(hits)
    return [
        Violation(
            kind,
            str(p),
            str(r),
            exclusion_detail(kind, str(reason)),
            None if position is None or pd.isna(position) else int(position),
        )
        for p, r, kind, reason, position in zip(
            hits["paper_id"],
            hits["reviewer_id"],
            hits["kind"],
            hits["reason"],
            positions,
            strict=True,
        )
    ]


def missing_pins(pairs: pd.DataFrame, pins: pd.DataFrame | None) -> list[Violation]:
    """A violation for each pin (``paper_id, reviewer_id``) not among ``pairs``."""
    if pins is None or len(pins) == 0:
        return []
    present = pins.merge(
        pairs[["paper_id", "reviewer_id"]].drop_duplicates(),
        how="left",
        on=["paper_id", "reviewer_id"],
        indicator=True,
    )
    missing = present[present["_merge"] == "left_only"]
    return [
        pin_violation(str(p), str(r))
        for p, r in zip(missing["paper_id"], missing["reviewer_id"], strict=True)
    ]


def pin_violation(paper_id: str, reviewer_id: str) -> Violation:
    return Violation("pin", paper_id, reviewer_id, "pinned, but missing from this assignment")


def limit_violations(
    paper_id: Sequence[str] | npt.ArrayLike,
    reviewer_id: Sequence[str] | npt.ArrayLike,
    *,
    paper_ids: Sequence[str],
    demand: npt.ArrayLike,
    reviewer_ids: Sequence[str],
    min_load: npt.ArrayLike,
    max_load: npt.ArrayLike,
) -> list[Violation]:
    """The load and demand limits the pairs break: reviewers over their max load, then
    under their min load (in ``reviewer_ids`` order), then papers with another number of
    reviewers than their demand (in ``paper_ids`` order). Pairs naming other ids count for
    nothing."""
    paper_codes = lookup(pd.Index(list(paper_ids), dtype=object), _labels(paper_id))
    reviewer_codes = lookup(pd.Index(list(reviewer_ids), dtype=object), _labels(reviewer_id))
    return limit_violations_of_codes(
        paper_codes[paper_codes >= 0],
        reviewer_codes[reviewer_codes >= 0],
        paper_ids=paper_ids,
        demand=demand,
        reviewer_ids=reviewer_ids,
        min_load=min_load,
        max_load=max_load,
    )


def limit_violations_of_codes(
    paper_codes: IntArray,
    reviewer_codes: IntArray,
    *,
    paper_ids: Sequence[str],
    demand: npt.ArrayLike,
    reviewer_ids: Sequence[str],
    min_load: npt.ArrayLike,
    max_load: npt.ArrayLike,
) -> list[Violation]:
    """:func:`limit_violations` of pairs given as positions in ``paper_ids`` and
    ``reviewer_ids`` (each array on its own: a paper's count, a reviewer's load)."""
    found: list[Violation] = []
    loads = np.bincount(reviewer_codes, minlength=len(reviewer_ids))
    tops = np.asarray(max_load, dtype=np.int64)
    lows = np.asarray(min_load, dtype=np.int64)
    for r in np.flatnonzero(loads > tops).tolist():
        found.append(
            Violation(
                "max_load",
                None,
                str(reviewer_ids[r]),
                f"reviews {loads[r]} papers, over their max load of {tops[r]}",
            )
        )
    for r in np.flatnonzero(loads < lows).tolist():
        found.append(
            Violation(
                "min_load",
                None,
                str(reviewer_ids[r]),
                f"reviews {loads[r]} papers, under their min load of {lows[r]}",
            )
        )
    got = np.bincount(paper_codes, minlength=len(paper_ids))
    need = np.asarray(demand, dtype=np.int64)
    for p in np.flatnonzero(got != need).tolist():
        found.append(
            Violation(
                "demand",
                str(paper_ids[p]),
                None,
                f"has {got[p]} reviewer{'s' if got[p] != 1 else ''}, needs {need[p]}",
            )
        )
    return found


def violations_frame(found: Sequence[Violation]) -> pd.DataFrame:
    """Violations as a table: kind, paper_id, reviewer_id, detail, position."""
    return pd.DataFrame(
        [(v.kind, v.paper_id, v.reviewer_id, v.detail, v.position) for v in found],
        columns=["kind", "paper_id", "reviewer_id", "detail", "position"],
    )


def _labels(values: Sequence[str] | npt.ArrayLike) -> np.ndarray:
    array = np.asarray(values, dtype=object).reshape(-1)
    return np.array([str(x) for x in array], dtype=object) if len(array) else array
