"""Side constraints: small declarative records that the ILP model understands.

Pair filters (``MinScore``, and ``exclude_pairs`` for "not willing" bids) only remove
candidate pairs, so every solver can honour them by filtering first
(:func:`apply_pair_filters`); the others (``Fairness``, ``MaxPerGroup``,
``RequireAttribute``) add rows to the integer program and need :class:`IlpSolver`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from matching.problem import AssignmentProblem, BoolArray, sorted_member


@dataclass(frozen=True)
class MinScore:
    """Exclude every non-forced candidate pair whose score is below ``threshold``.

    Forced pairs are hard and stay, whatever their score."""

    threshold: float


@dataclass(frozen=True, eq=False)
class MaxPerGroup:
    """At most ``limit`` reviewers of one group per paper.

    ``groups``: one label per reviewer (n_reviewers,), e.g. institution or email domain;
    ``None``/empty-string labels mean "no group" and are never limited."""

    groups: npt.ArrayLike
    limit: int

    def __post_init__(self) -> None:
        if self.limit < 1:
            raise ValueError(f"MaxPerGroup limit must be at least 1, got {self.limit}")


@dataclass(frozen=True, eq=False)
class RequireAttribute:
    """Each paper (with positive demand) gets at least ``min_count`` reviewers whose
    ``mask`` (n_reviewers,) entry is true, e.g. "senior" or "has reviewed before"."""

    mask: npt.ArrayLike
    min_count: int = 1
    name: str = "attribute"

    def __post_init__(self) -> None:
        if self.min_count < 0:
            raise ValueError(f"RequireAttribute min_count must be >= 0, got {self.min_count}")


@dataclass(frozen=True)
class Fairness:
    """Max-min fairness over papers, then total affinity.

    A paper's score is the SUM of the scores of its assigned reviewers (demand is fixed per
    paper, so for equal demands this orders papers like the mean). Stage 1 maximizes the
    minimum paper score ``m*`` over papers with positive demand; stage 2 maximizes total
    affinity subject to every paper score >= ``m* - (1 - keep) * |m*|``. ``keep=1`` keeps
    the optimal minimum exactly; ``keep=0.9`` gives up 10% of it (of its magnitude) in
    exchange for more total affinity; ``keep=0`` bounds papers below by ``m* - |m*|``
    only (0 for non-negative scores).
    """

    keep: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.keep <= 1.0:
            raise ValueError(f"Fairness keep must lie in [0, 1], got {self.keep}")


PAIR_FILTERS = (MinScore,)
MODEL_CONSTRAINTS = (Fairness, MaxPerGroup, RequireAttribute)


def group_codes(constraint: MaxPerGroup, n_reviewers: int) -> npt.NDArray[np.int64]:
    """Integer code per reviewer for ``constraint.groups``; -1 for "no group"."""
    labels = pd.Series(np.asarray(constraint.groups, dtype=object))
    if len(labels) != n_reviewers:
        raise ValueError(f"MaxPerGroup groups has {len(labels)} labels for {n_reviewers} reviewers")
    labels = labels.where(labels.notna() & (labels.astype(str) != ""), None)
    codes, _ = pd.factorize(labels, use_na_sentinel=True)
    return codes.astype(np.int64)


def group_labels(constraint: MaxPerGroup) -> npt.NDArray[np.object_]:
    return np.asarray(constraint.groups, dtype=object)


def attribute_mask(constraint: RequireAttribute, n_reviewers: int) -> BoolArray:
    mask = np.asarray(constraint.mask, dtype=bool)
    if mask.shape != (n_reviewers,):
        raise ValueError(f"RequireAttribute mask has shape {mask.shape}, expected ({n_reviewers},)")
    return mask


def apply_pair_filters(problem: AssignmentProblem) -> AssignmentProblem:
    """Remove the pairs excluded by ``MinScore`` constraints; keep the other side
    constraints. Returns ``problem`` itself when there is nothing to filter."""
    filters = [c for c in problem.side_constraints if isinstance(c, PAIR_FILTERS)]
    if not filters:
        return problem
    keep = np.ones(problem.n_pairs, dtype=bool)
    for constraint in filters:
        keep &= (problem.pair_score >= constraint.threshold) | problem.forced
    rest = [c for c in problem.side_constraints if not isinstance(c, PAIR_FILTERS)]
    return problem.keep_pairs(keep).with_side_constraints(*rest)


def model_constraints(problem: AssignmentProblem) -> list[Any]:
    """Side constraints that need the integer program (everything but pair filters)."""
    known = PAIR_FILTERS + MODEL_CONSTRAINTS
    unknown = [c for c in problem.side_constraints if not isinstance(c, known)]
    if unknown:
        raise TypeError(f"unknown side constraint {unknown[0]!r}")
    return [c for c in problem.side_constraints if isinstance(c, MODEL_CONSTRAINTS)]


def exclude_pairs(
    problem: AssignmentProblem,
    paper_id: Sequence[str] | npt.ArrayLike,
    reviewer_id: Sequence[str] | npt.ArrayLike,
) -> AssignmentProblem:
    """Remove the given (paper_id, reviewer_id) pairs, e.g. "not willing" bids.

    Pairs that are not candidates are ignored; removing a forced pair is an error."""
    papers = pd.Index(problem.paper_ids).get_indexer(np.asarray(paper_id).astype(str))
    reviewers = pd.Index(problem.reviewer_ids).get_indexer(np.asarray(reviewer_id).astype(str))
    for codes, raw, what in ((papers, paper_id, "paper"), (reviewers, reviewer_id, "reviewer")):
        unknown = np.flatnonzero(codes < 0)
        if len(unknown):
            raise ValueError(
                f"excluded pair {int(unknown[0])}: unknown {what} id "
                f"{str(np.asarray(raw)[unknown[0]])!r}"
            )
    drop = papers.astype(np.int64) * problem.n_reviewers + reviewers
    keys = problem.pair_paper * problem.n_reviewers + problem.pair_reviewer
    return problem.keep_pairs(~sorted_member(np.sort(drop), keys))
