"""Check any set of (paper, reviewer) pairs against a problem's hard constraints.

An independent checker of solver results (and of any pair set, e.g. an edited one), in the
one violation vocabulary of :mod:`matching.violations` (whose :func:`check_assignment`
checks a stored assignment against a venue's constraints with the same records and
words). Nothing here solves anything.
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
from matching.problem import AssignmentProblem, IntArray, lookup
from matching.violations import (
    Violation,
    exclusion_violations,
    limit_violations_of_codes,
    pin_violation,
    violations_frame,
)

__all__ = ["Evaluation", "Violation", "evaluate", "violations", "violations_frame"]


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
    in ``conflicts`` — a DataFrame with ``paper_id``/``reviewer_id`` columns, optionally
    ``kind`` (:data:`matching.violations.EXCLUSION_KINDS`, default ``conflict``) and
    ``reason``, e.g. the venue's conflicts table, or two arrays — is reported as that
    exclusion, another non-candidate as ``not_candidate``); ``MinScore`` pair filters
    (forced pairs exempt); every forced pair present (``pin``); each paper's count equal to
    its demand; each reviewer's load within [min_load, max_load]; ``MaxPerGroup`` and
    ``RequireAttribute`` side constraints (forced pairs count like any other). ``Fairness``
    is an objective, not a hard constraint, and is not checked. Pairs without known ids are
    reported and otherwise ignored. Violations come in :data:`matching.violations.KINDS`
    order."""
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
        p, r = str(papers_raw[position]), str(reviewers_raw[position])
        found.append(Violation("unknown_paper", p, r, f"paper {p} is not in the problem", position))
    for position in np.flatnonzero(reviewer_codes < 0).tolist():
        p, r = str(papers_raw[position]), str(reviewers_raw[position])
        found.append(
            Violation("unknown_reviewer", p, r, f"reviewer {r} is not in the problem", position)
        )
    known = np.flatnonzero((paper_codes >= 0) & (reviewer_codes >= 0))
    n_reviewers = max(problem.n_reviewers, 1)
    keys = paper_codes[known] * n_reviewers + reviewer_codes[known]
    first = _first_occurrence(keys)
    for position in known[~first].tolist():
        p, r = str(papers_raw[position]), str(reviewers_raw[position])
        found.append(Violation("duplicate_pair", p, r, "the pair is listed twice", position))
    known, keys = known[first], keys[first]

    pair_keys = problem.pair_paper * n_reviewers + problem.pair_reviewer
    order = np.argsort(pair_keys, kind="stable")
    sorted_keys = pair_keys[order]
    spot = np.minimum(np.searchsorted(sorted_keys, keys), max(len(sorted_keys) - 1, 0))
    is_candidate = sorted_keys[spot] == keys if len(sorted_keys) else np.zeros(len(keys), bool)
    outside = known[~is_candidate]
    exclusions = _exclusions(conflicts)
    outside_pairs = pd.DataFrame(
        {
            "paper_id": papers_raw[outside],
            "reviewer_id": reviewers_raw[outside],
            "position": outside,
        }
    )
    excluded = exclusion_violations(outside_pairs, exclusions)
    found += excluded
    explained = {v.position for v in excluded}
    for position in outside.tolist():
        if position not in explained:
            p, r = str(papers_raw[position]), str(reviewers_raw[position])
            found.append(
                Violation(
                    "not_candidate",
                    p,
                    r,
                    "not a candidate pair (no score, or excluded, e.g. a conflict or a "
                    "Not Willing bid)",
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
                        "min_score",
                        p,
                        r,
                        f"scores {scores[i]:.6g}, below the minimum score {constraint.threshold:g}",
                        positions.get(i),
                    )
                )
    for i in np.flatnonzero(problem.forced & ~chosen).tolist():
        found.append(pin_violation(*_pair_names(problem, i)))
    found += limit_violations_of_codes(
        problem.pair_paper[selected],
        problem.pair_reviewer[selected],
        paper_ids=problem.paper_ids,
        demand=problem.demand,
        reviewer_ids=problem.reviewer_ids,
        min_load=problem.min_load,
        max_load=problem.max_load,
    )
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
                        f"has {n} reviewers from group {label}, limit {constraint.limit}",
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
                        f"has {holders[p]} reviewers with {constraint.name}, needs {needed[p]}",
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


def _exclusions(conflicts: Any) -> pd.DataFrame | None:
    """``conflicts`` as exclusions (``paper_id, reviewer_id, kind, reason``)."""
    if conflicts is None:
        return None
    if isinstance(conflicts, pd.DataFrame):
        if len(conflicts) == 0:
            return None
        frame = conflicts
        papers, reviewers = frame["paper_id"].to_numpy(), frame["reviewer_id"].to_numpy()
    else:
        frame = None
        papers, reviewers = conflicts
    table = pd.DataFrame({"paper_id": _labels(papers), "reviewer_id": _labels(reviewers)})
    for column, default in (("kind", "conflict"), ("reason", "")):
        has = frame is not None and column in frame.columns
        table[column] = frame[column].to_numpy() if has else default
    return table


def _pair_names(problem: AssignmentProblem, pair: int) -> tuple[str, str]:
    return (
        problem.paper_ids[problem.pair_paper[pair]],
        problem.reviewer_ids[problem.pair_reviewer[pair]],
    )
