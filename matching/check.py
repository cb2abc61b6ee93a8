"""Check any set of (paper, reviewer) pairs against a problem's hard constraints.

Used to refuse publishing an assignment that breaks the venue's current constraints (the
pairs may come from an older run or from a chair's edits) and by tests as an independent
checker of solver results. Nothing here solves anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from matching.constraints import (
    MaxPerGroup,
    MinScore,
    RequireAttribute,
    attribute_mask,
    group_codes,
)
from matching.problem import AssignmentProblem, IntArray, lookup, sorted_member

#: Stable names of the violation kinds, in the order :func:`violations` reports them.
KINDS = (
    "unknown_paper",
    "unknown_reviewer",
    "duplicate_pair",
    "conflict",
    "not_candidate",
    "below_min_score",
    "missing_forced",
    "paper_over_demand",
    "paper_under_demand",
    "reviewer_over_max",
    "reviewer_under_min",
    "group_limit",
    "attribute_missing",
)


@dataclass(frozen=True)
class Violation:
    """One broken hard constraint.

    ``kind`` is one of :data:`KINDS`; ``paper_id`` / ``reviewer_id`` name the paper, the
    reviewer or the pair concerned (``None`` where the constraint is about only one side);
    ``message`` says it in a chair's words; ``position`` is the 0-based position of the
    offending entry in the pairs given (``None`` for count violations)."""

    kind: str
    paper_id: str | None
    reviewer_id: str | None
    message: str
    position: int | None = None


@dataclass(frozen=True)
class Evaluation:
    """The pairs measured against a problem.

    ``selected`` indexes the candidate pairs of the problem that the given pairs use
    (duplicates and non-candidates left out), ``objective`` is the total score of those
    candidate pairs in the problem's units (pairs that are not candidates have no score
    and add nothing), ``violations`` lists every broken hard constraint; ``feasible`` is
    true when there is none."""

    selected: IntArray
    objective: float
    violations: list[Violation]

    @property
    def feasible(self) -> bool:
        return not self.violations


def evaluate(
    problem: AssignmentProblem,
    paper_id: Sequence[str] | npt.ArrayLike,
    reviewer_id: Sequence[str] | npt.ArrayLike,
    *,
    conflicts: pd.DataFrame | tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
) -> Evaluation:
    """Objective and every violation of the pairs ``(paper_id[i], reviewer_id[i])``.

    Checked: ids known to the problem; no pair twice; every pair a candidate (a pair listed
    in ``conflicts`` — a DataFrame with ``paper_id``/``reviewer_id`` columns or two arrays,
    e.g. the venue's conflicts table — is reported as ``conflict``, another non-candidate
    as ``not_candidate``); ``MinScore`` pair filters (forced pairs exempt); every forced
    pair present; each paper's count equal to its demand; each reviewer's load within
    [min_load, max_load]; ``MaxPerGroup`` and ``RequireAttribute`` side constraints
    (forced pairs count like any other). ``Fairness`` is an objective, not a hard
    constraint, and is not checked. Pairs without known ids are reported and otherwise
    ignored."""
    papers_raw = _labels(paper_id)
    reviewers_raw = _labels(reviewer_id)
    if len(papers_raw) != len(reviewers_raw):
        raise ValueError(
            f"{len(papers_raw)} paper ids but {len(reviewers_raw)} reviewer ids; they must pair up"
        )
    found: list[Violation] = []
    paper_index = pd.Index(problem.paper_ids, dtype=object)
    reviewer_index = pd.Index(problem.reviewer_ids, dtype=object)
    paper_codes = lookup(paper_index, papers_raw)
    reviewer_codes = lookup(reviewer_index, reviewers_raw)
    for position in np.flatnonzero(paper_codes < 0).tolist():
        found.append(
            Violation(
                "unknown_paper",
                str(papers_raw[position]),
                str(reviewers_raw[position]),
                f"paper {papers_raw[position]} is not a paper of this venue",
                position,
            )
        )
    for position in np.flatnonzero(reviewer_codes < 0).tolist():
        found.append(
            Violation(
                "unknown_reviewer",
                str(papers_raw[position]),
                str(reviewers_raw[position]),
                f"reviewer {reviewers_raw[position]} is not a reviewer of this venue",
                position,
            )
        )
    known = np.flatnonzero((paper_codes >= 0) & (reviewer_codes >= 0))
    n_reviewers = max(problem.n_reviewers, 1)
    keys = paper_codes[known] * n_reviewers + reviewer_codes[known]
    first = _first_occurrence(keys)
    for position in known[~first].tolist():
        found.append(
            Violation(
                "duplicate_pair",
                str(papers_raw[position]),
                str(reviewers_raw[position]),
                f"pair ({papers_raw[position]}, {reviewers_raw[position]}) is listed twice",
                position,
            )
        )
    known, keys = known[first], keys[first]

    pair_keys = problem.pair_paper * n_reviewers + problem.pair_reviewer
    order = np.argsort(pair_keys, kind="stable")
    sorted_keys = pair_keys[order]
    spot = np.minimum(np.searchsorted(sorted_keys, keys), max(len(sorted_keys) - 1, 0))
    is_candidate = sorted_keys[spot] == keys if len(sorted_keys) else np.zeros(len(keys), bool)
    conflict_keys = _conflict_keys(conflicts, paper_index, reviewer_index, n_reviewers)
    is_conflict = sorted_member(conflict_keys, keys)
    for position, conflict in zip(
        known[~is_candidate].tolist(), is_conflict[~is_candidate], strict=True
    ):
        p, r = str(papers_raw[position]), str(reviewers_raw[position])
        if conflict:
            found.append(
                Violation(
                    "conflict",
                    p,
                    r,
                    f"reviewer {r} has a conflict of interest with paper {p}",
                    position,
                )
            )
        else:
            found.append(
                Violation(
                    "not_candidate",
                    p,
                    r,
                    f"pair ({p}, {r}) is not a candidate pair (no score, or "
                    "excluded, e.g. a conflict or a not-willing bid)",
                    position,
                )
            )
    selected = np.sort(order[spot[is_candidate]]).astype(np.int64)
    positions = dict(
        zip(order[spot[is_candidate]].tolist(), known[is_candidate].tolist(), strict=True)
    )

    chosen = np.zeros(problem.n_pairs, dtype=bool)
    chosen[selected] = True
    scores = problem.pair_score
    for constraint in problem.side_constraints:
        if isinstance(constraint, MinScore):
            low = np.flatnonzero(chosen & ~problem.forced & (scores < constraint.threshold))
            for i in low.tolist():
                p, r = _pair_names(problem, i)
                found.append(
                    Violation(
                        "below_min_score",
                        p,
                        r,
                        f"pair ({p}, {r}) scores {scores[i]:.6g}, below the minimum score "
                        f"{constraint.threshold:g}",
                        positions.get(i),
                    )
                )
    for i in np.flatnonzero(problem.forced & ~chosen).tolist():
        p, r = _pair_names(problem, i)
        found.append(Violation("missing_forced", p, r, f"pinned pair ({p}, {r}) is missing"))
    found.extend(_count_violations(problem, selected))
    found.extend(_side_violations(problem, selected))
    objective = float(np.sum(scores[selected])) if len(selected) else 0.0
    return Evaluation(selected=selected, objective=objective, violations=found)


def violations(
    problem: AssignmentProblem,
    paper_id: Sequence[str] | npt.ArrayLike,
    reviewer_id: Sequence[str] | npt.ArrayLike,
    *,
    conflicts: pd.DataFrame | tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
) -> list[Violation]:
    """Every hard constraint the pairs break (empty when none); see :func:`evaluate`."""
    return evaluate(problem, paper_id, reviewer_id, conflicts=conflicts).violations


def violations_frame(found: Sequence[Violation]) -> pd.DataFrame:
    """Violations as a table: kind, paper_id, reviewer_id, message, position."""
    return pd.DataFrame(
        [(v.kind, v.paper_id, v.reviewer_id, v.message, v.position) for v in found],
        columns=["kind", "paper_id", "reviewer_id", "message", "position"],
    )


def _count_violations(problem: AssignmentProblem, selected: IntArray) -> list[Violation]:
    found = []
    counts = np.bincount(problem.pair_paper[selected], minlength=problem.n_papers)
    for p in np.flatnonzero(counts > problem.demand).tolist():
        found.append(
            Violation(
                "paper_over_demand",
                problem.paper_ids[p],
                None,
                f"paper {problem.paper_ids[p]} has {counts[p]} reviewers, "
                f"demand {problem.demand[p]}",
            )
        )
    for p in np.flatnonzero(counts < problem.demand).tolist():
        found.append(
            Violation(
                "paper_under_demand",
                problem.paper_ids[p],
                None,
                f"paper {problem.paper_ids[p]} has {counts[p]} reviewers, "
                f"demand {problem.demand[p]}",
            )
        )
    loads = np.bincount(problem.pair_reviewer[selected], minlength=problem.n_reviewers)
    for r in np.flatnonzero(loads > problem.max_load).tolist():
        found.append(
            Violation(
                "reviewer_over_max",
                None,
                problem.reviewer_ids[r],
                f"reviewer {problem.reviewer_ids[r]} has {loads[r]} papers, max load "
                f"{problem.max_load[r]}",
            )
        )
    for r in np.flatnonzero(loads < problem.min_load).tolist():
        found.append(
            Violation(
                "reviewer_under_min",
                None,
                problem.reviewer_ids[r],
                f"reviewer {problem.reviewer_ids[r]} has {loads[r]} papers, min load "
                f"{problem.min_load[r]}",
            )
        )
    return found


def _side_violations(problem: AssignmentProblem, selected: IntArray) -> list[Violation]:
    found = []
    papers = problem.pair_paper[selected]
    reviewers = problem.pair_reviewer[selected]
    for constraint in problem.side_constraints:
        if isinstance(constraint, MaxPerGroup):
            codes = group_codes(constraint, problem.n_reviewers)
            labels = np.asarray(constraint.groups, dtype=object)
            n_groups = int(codes.max()) + 1 if len(codes) else 0
            if n_groups == 0:
                continue
            grouped = codes[reviewers] >= 0
            key = papers[grouped] * n_groups + codes[reviewers][grouped]
            unique, count = np.unique(key, return_counts=True)
            over = count > constraint.limit
            for k, n in zip(unique[over].tolist(), count[over].tolist(), strict=True):
                p, g = divmod(k, n_groups)
                label = labels[np.flatnonzero(codes == g)[0]]
                found.append(
                    Violation(
                        "group_limit",
                        problem.paper_ids[p],
                        None,
                        f"paper {problem.paper_ids[p]} has {n} reviewers from group {label}, "
                        f"limit {constraint.limit}",
                    )
                )
        elif isinstance(constraint, RequireAttribute):
            mask = attribute_mask(constraint, problem.n_reviewers)
            holders = np.bincount(papers[mask[reviewers]], minlength=problem.n_papers)
            needed = np.where(problem.demand > 0, constraint.min_count, 0)
            for p in np.flatnonzero(holders < needed).tolist():
                found.append(
                    Violation(
                        "attribute_missing",
                        problem.paper_ids[p],
                        None,
                        f"paper {problem.paper_ids[p]} has {holders[p]} reviewers with "
                        f"{constraint.name}, needs {needed[p]}",
                    )
                )
    return found


def _labels(values: Sequence[str] | npt.ArrayLike) -> np.ndarray:
    array = np.asarray(values, dtype=object).reshape(-1)
    return np.array([str(x) for x in array], dtype=object) if len(array) else array


def _first_occurrence(keys: IntArray) -> npt.NDArray[np.bool_]:
    first = np.zeros(len(keys), dtype=bool)
    if len(keys):
        _, index = np.unique(keys, return_index=True)
        first[index] = True
    return first


def _conflict_keys(
    conflicts: Any, paper_index: pd.Index, reviewer_index: pd.Index, n_reviewers: int
) -> IntArray:
    if conflicts is None:
        return np.zeros(0, dtype=np.int64)
    if isinstance(conflicts, pd.DataFrame):
        if len(conflicts) == 0:
            return np.zeros(0, dtype=np.int64)
        papers, reviewers = conflicts["paper_id"].to_numpy(), conflicts["reviewer_id"].to_numpy()
    else:
        papers, reviewers = conflicts
    paper_codes = lookup(paper_index, _labels(papers))
    reviewer_codes = lookup(reviewer_index, _labels(reviewers))
    known = (paper_codes >= 0) & (reviewer_codes >= 0)
    return np.sort(paper_codes[known] * n_reviewers + reviewer_codes[known])


def _pair_names(problem: AssignmentProblem, pair: int) -> tuple[str, str]:
    return (
        problem.paper_ids[problem.pair_paper[pair]],
        problem.reviewer_ids[problem.pair_reviewer[pair]],
    )
