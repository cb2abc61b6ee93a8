"""Emergency re-assignment, the use case behind ``recommender reassign`` and the API's
re-assignment drafts: after deployment, some reviewers withdraw or some pairs must go; keep
every other live pair and fill the papers left short at maximum affinity.

The live pairs fall into: pairs of a **withdrawn** reviewer, pairs the chair **removes**,
pairs that are now a **conflict** (a conflicts file or a Not Willing bid names them; they
cannot stay), and the pairs to **keep**. The problem is the ordinary assignment problem
(:func:`reviewer_recommender.services.problem.build_problem`: scores, conflicts, bids, pins,
demand, loads) with
the removed pairs forbidden and the withdrawn reviewers' max load 0; the kept live pairs
are added to the candidates when the scores lack them (with the live file's score, else 0).
:func:`matching.reassign` then keeps every kept pair and fills exactly the vacated slots
(or, when that is impossible, moves the fewest live pairs), exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

import matching
from matching import Assignment, AssignmentProblem, Reassignment
from matching.monitor import SolveMonitor
from matching.problem import lookup
from recommender.corpus import InputError, Problem
from recommender.io import ScoreTable
from reviewer_recommender.services.assignment import json_safe
from reviewer_recommender.services.params import ReassignParams
from reviewer_recommender.services.problem import AssignInputs, Rows, build_problem

#: Why a live pair is not in the new assignment.
REASONS = ("withdrawn", "removed", "conflict", "moved")


@dataclass
class ReassignInputs:
    """The live assignment and what changed.

    ``live``: rows ``paper_id, reviewer_id`` (optionally ``score`` and ``line``) of the
    assignment in force. ``withdraw``: rows ``reviewer_id`` of reviewers who dropped out;
    ``remove``: rows ``paper_id, reviewer_id`` of pairs that must go. The other fields are
    those of :class:`reviewer_recommender.services.problem.AssignInputs` (scores, conflicts, pins,
    bids, demand,
    custom max loads, the id universe)."""

    live: Rows
    scores: ScoreTable
    withdraw: Rows | None = None
    remove: Rows | None = None
    conflicts: Rows | Sequence[Rows] | None = None
    pins: Rows | None = None
    bids: Rows | None = None
    demand: Rows | None = None
    max_loads: Rows | None = None
    paper_ids: Sequence[str] | None = None
    reviewer_ids: Sequence[str] | None = None
    fold_bids: bool = True
    strict: bool = False


@dataclass
class ReassignResult:
    """The new assignment and its difference from the live one.

    ``added``: ``paper_id, reviewer_id, score`` of the pairs not in the live assignment;
    ``removed``: ``paper_id, reviewer_id, score, reason`` of the live pairs that are gone
    (``reason`` one of :data:`REASONS`); ``kept``: how many live pairs stay."""

    problem: AssignmentProblem
    reassignment: Reassignment
    params: ReassignParams
    added: pd.DataFrame
    removed: pd.DataFrame
    kept: int
    warnings: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def assignment(self) -> Assignment:
        return self.reassignment.assignment

    def pairs(self) -> pd.DataFrame:
        """The new assignment: ``paper_id, reviewer_id, score, pinned, added``, sorted as
        :meth:`reviewer_recommender.services.assignment.AssignResult.pairs` sorts."""
        p = self.problem
        selected = self.assignment.selected
        added = np.zeros(p.n_pairs, dtype=bool)
        added[self.reassignment.added] = True
        frame = pd.DataFrame(
            {
                "paper_id": np.asarray(p.paper_ids, dtype=object)[p.pair_paper[selected]],
                "reviewer_id": np.asarray(p.reviewer_ids, dtype=object)[p.pair_reviewer[selected]],
                "score": p.pair_score[selected],
                "pinned": p.forced[selected],
                "added": added[selected],
            }
        )
        return frame.sort_values(
            ["paper_id", "score", "reviewer_id"],
            ascending=[True, False, True],
            ignore_index=True,
            kind="stable",
        )

    def changes(self) -> pd.DataFrame:
        """Every change: ``paper_id, reviewer_id, score, change (added/removed), reason``
        (``vacated`` for an added pair that fills a slot, ``moved`` for one that replaces
        a moved pair, the removal reasons of :data:`REASONS`)."""
        added = self.added.assign(change="added", reason="fills a vacated slot")
        removed = self.removed.assign(change="removed")
        frame = pd.concat([removed, added], ignore_index=True)
        return frame[["paper_id", "reviewer_id", "score", "change", "reason"]]

    @property
    def summary(self) -> dict[str, Any]:
        """Counts, objective and bound, the stage that solved it, parameters, warnings."""
        assignment = self.assignment
        by_reason = self.removed["reason"].value_counts()
        parameters = self.reassignment.parameters
        return json_safe(
            {
                "solver": "reassign",
                "stage": self.reassignment.stage,
                "papers": self.problem.n_papers,
                "reviewers": self.problem.n_reviewers,
                "pairs_assigned": len(assignment.selected),
                "live_pairs": self.kept + len(self.removed),
                "kept": self.kept,
                "added": len(self.added),
                "removed": len(self.removed),
                "removed_by_reason": {r: int(by_reason.get(r, 0)) for r in REASONS},
                "changes": len(self.added) + len(self.removed),
                "objective": assignment.objective,
                "upper_bound": assignment.upper_bound,
                "gap": assignment.gap,
                "bound_refers_to": parameters.get("bound_refers_to"),
                "certificate": parameters.get("certificate"),
                "minimality": (
                    "every live pair that is not withdrawn, removed or in conflict is kept; "
                    "the added pairs are exactly the vacated slots"
                    if self.reassignment.stage == "fill"
                    else "no assignment keeps every live pair; this one moves the fewest "
                    f"({int(by_reason.get('moved', 0))}) and has the best total score among "
                    "those that move that few"
                ),
                "parameters": self.params.model_dump(mode="json"),
                "inputs": self.counts,
                "warnings": self.warnings,
            }
        )


def reassign(
    inputs: ReassignInputs, params: ReassignParams, *, monitor: SolveMonitor | None = None
) -> ReassignResult:
    """The re-assignment use case (see the module docstring). Raises :class:`InputError`
    (bad rows, every one named), :class:`matching.Infeasible` (no assignment exists even
    moving live pairs) and :class:`reviewer_recommender.services.errors.OptionError`."""
    warnings: list[str] = []
    live = _clean_pairs(inputs.live.frame)
    withdrawn = (
        set(inputs.withdraw.frame["reviewer_id"].astype(str).str.strip().str.lstrip("~"))
        if inputs.withdraw is not None
        else set()
    )
    removed_rows = _clean_pairs(inputs.remove.frame) if inputs.remove is not None else live.iloc[:0]
    remove_keys = set(zip(removed_rows["paper_id"], removed_rows["reviewer_id"], strict=True))
    live_keys = list(zip(live["paper_id"], live["reviewer_id"], strict=True))
    is_withdrawn = live["reviewer_id"].isin(withdrawn).to_numpy()
    is_removed = np.array([key in remove_keys for key in live_keys], dtype=bool) & ~is_withdrawn
    candidate_keep = ~(is_withdrawn | is_removed)

    scores = inputs.scores
    known_reviewers = set(scores.reviewer_ids) | set(live["reviewer_id"])
    if inputs.reviewer_ids is not None:
        known_reviewers |= set(inputs.reviewer_ids)
    for reviewer_id in sorted(withdrawn - known_reviewers):
        line = _line_of(inputs.withdraw, "reviewer_id", reviewer_id)
        warnings.append(
            _where(inputs.withdraw, line)
            + f"reviewer {reviewer_id!r} is neither in the live assignment nor in "
            f"{scores.source}: ignored"
        )
    live_set = set(live_keys)
    for paper_id, reviewer_id in sorted(remove_keys - live_set):
        line = _line_of(inputs.remove, ("paper_id", "reviewer_id"), (paper_id, reviewer_id))
        warnings.append(
            _where(inputs.remove, line)
            + f"({paper_id}, {reviewer_id}) is not a live pair; it is kept out of the new "
            "assignment"
        )
    if inputs.strict and warnings:
        raise InputError([Problem("re-assignment", None, None, w) for w in warnings])

    augmented, missing = _with_kept_pairs(scores, live[candidate_keep])
    if missing:
        shown = ", ".join(f"({p}, {r})" for p, r in missing[:5])
        warnings.append(
            f"{len(missing)} kept live pair(s) have no score in {scores.source} ({shown}"
            f"{', ...' if len(missing) > 5 else ''}); the live file's score is used, else 0"
        )
    withdrawn_known = sorted(withdrawn & set(augmented.reviewer_ids))
    max_rows = _max_loads_with_withdrawn(inputs.max_loads, withdrawn_known)
    conflicts = (
        [inputs.conflicts] if isinstance(inputs.conflicts, Rows) else list(inputs.conflicts or [])
    )
    if len(removed_rows):
        source = inputs.remove.source if inputs.remove is not None else "removed pairs"
        conflicts.append(Rows(removed_rows, source))
    pins = _pins_still_possible(inputs.pins, withdrawn, remove_keys, warnings)
    built = build_problem(
        AssignInputs(
            scores=augmented,
            conflicts=conflicts,
            pins=pins,
            bids=inputs.bids,
            demand=inputs.demand,
            max_loads=max_rows,
            paper_ids=_universe(inputs.paper_ids, augmented.paper_ids),
            reviewer_ids=_universe(inputs.reviewer_ids, augmented.reviewer_ids),
            fold_bids=inputs.fold_bids,
            strict=inputs.strict,
        ),
        params.assign_params(),
    )
    problem = built.problem
    warnings = warnings + built.warnings
    keep_rows = live[candidate_keep]
    position = _positions(problem, keep_rows)
    in_conflict = position < 0
    for paper_id, reviewer_id in keep_rows.loc[in_conflict, ["paper_id", "reviewer_id"]].to_numpy()[
        :20
    ]:
        warnings.append(
            f"live pair ({paper_id}, {reviewer_id}) is a conflict or a Not Willing bid now: "
            "it is removed too"
        )
    keep = np.zeros(problem.n_pairs, dtype=bool)
    keep[position[~in_conflict]] = True
    _warn_over_limits(problem, keep, warnings)
    unseen = sorted(set(problem.paper_ids) - set(live["paper_id"]))
    needing = [p for p in unseen if problem.demand[problem.paper_ids.index(p)] > 0]
    if needing:
        shown = ", ".join(needing[:10]) + (
            f" and {len(needing) - 10} more" if len(needing) > 10 else ""
        )
        warnings.append(
            f"{len(needing)} paper(s) have no pair in the live assignment ({shown}): they get "
            "all their reviewers now"
        )
    result = matching.reassign(problem, keep, monitor=monitor)

    live_score = _live_scores(live, augmented)
    removed = pd.DataFrame(
        {
            "paper_id": live["paper_id"].to_numpy(dtype=object),
            "reviewer_id": live["reviewer_id"].to_numpy(dtype=object),
            "score": live_score,
            "reason": np.where(is_withdrawn, "withdrawn", "removed").astype(object),
        }
    )
    reasons = removed["reason"].to_numpy(dtype=object)
    kept_index = np.flatnonzero(candidate_keep)
    reasons[kept_index[in_conflict]] = "conflict"
    moved_positions = set(result.moved.tolist())
    still = np.zeros(len(live), dtype=bool)
    for row, pair in zip(kept_index[~in_conflict], position[~in_conflict], strict=True):
        if int(pair) in moved_positions:
            reasons[row] = "moved"
        else:
            still[row] = True
    removed["reason"] = reasons
    removed = removed[~still].reset_index(drop=True)
    added = pd.DataFrame(
        {
            "paper_id": np.asarray(problem.paper_ids, dtype=object)[
                problem.pair_paper[result.added]
            ],
            "reviewer_id": np.asarray(problem.reviewer_ids, dtype=object)[
                problem.pair_reviewer[result.added]
            ],
            "score": problem.pair_score[result.added],
        }
    ).sort_values(["paper_id", "score", "reviewer_id"], ascending=[True, False, True])
    counts = {
        **built.counts,
        "live_pairs": len(live),
        "withdrawn_reviewers": len(withdrawn),
        "pairs_to_remove": len(remove_keys),
    }
    return ReassignResult(
        problem=problem,
        reassignment=result,
        params=params,
        added=added.reset_index(drop=True),
        removed=removed,
        kept=int(still.sum()),
        warnings=warnings,
        counts=counts,
    )


def _clean_pairs(frame: pd.DataFrame) -> pd.DataFrame:
    cleaned = frame.copy()
    cleaned["paper_id"] = cleaned["paper_id"].astype(str).str.strip()
    cleaned["reviewer_id"] = cleaned["reviewer_id"].astype(str).str.strip().str.lstrip("~")
    return cleaned.reset_index(drop=True)


def _line_of(rows: Rows | None, columns: Any, value: Any) -> int | None:
    if rows is None or "line" not in rows.frame.columns:
        return None
    frame = _clean_pairs(rows.frame) if isinstance(columns, tuple) else rows.frame
    if isinstance(columns, tuple):
        hit = (frame["paper_id"] == value[0]) & (frame["reviewer_id"] == value[1])
    else:
        hit = frame[columns].astype(str).str.strip().str.lstrip("~") == value
    lines = frame.loc[hit, "line"]
    return int(lines.iloc[0]) if len(lines) else None


def _where(rows: Rows | None, line: int | None) -> str:
    if rows is None:
        return ""
    return f"{rows.source}{'' if line is None else f':{line}'}: "


def _with_kept_pairs(
    scores: ScoreTable, kept: pd.DataFrame
) -> tuple[ScoreTable, list[tuple[str, str]]]:
    """``scores`` plus the kept live pairs it lacks (score from the live file, else 0)."""
    paper_codes = lookup(pd.Index(scores.paper_ids), kept["paper_id"].to_numpy(dtype=object))
    reviewer_codes = lookup(
        pd.Index(scores.reviewer_ids), kept["reviewer_id"].to_numpy(dtype=object)
    )
    known = (paper_codes >= 0) & (reviewer_codes >= 0)
    present = np.zeros(len(kept), dtype=bool)
    if known.any() and scores.n_pairs:
        keys = paper_codes[known] * len(scores.reviewer_ids) + reviewer_codes[known]
        position = np.minimum(np.searchsorted(scores.keys, keys), scores.n_pairs - 1)
        present[np.flatnonzero(known)] = scores.keys[position] == keys
    lacking = kept[~present]
    if not len(lacking):
        return scores, []
    extra_score = (
        lacking["score"].fillna(0.0).to_numpy(np.float64)
        if "score" in lacking.columns
        else np.zeros(len(lacking))
    )
    frame = pd.concat(
        [
            scores.to_frame(),
            pd.DataFrame(
                {
                    "paper_id": lacking["paper_id"].to_numpy(dtype=object),
                    "reviewer_id": lacking["reviewer_id"].to_numpy(dtype=object),
                    "score": extra_score,
                }
            ),
        ],
        ignore_index=True,
    )
    table = ScoreTable.from_frame(frame, source=scores.source)
    missing = list(zip(lacking["paper_id"], lacking["reviewer_id"], strict=True))
    return table, missing


def _max_loads_with_withdrawn(rows: Rows | None, withdrawn: list[str]) -> Rows | None:
    """The custom max-load rows with every withdrawn reviewer at 0 (their rows replaced)."""
    if not withdrawn:
        return rows
    zero = pd.DataFrame({"reviewer_id": withdrawn, "max": np.zeros(len(withdrawn), np.int64)})
    if rows is None:
        return Rows(zero, "withdrawn reviewers")
    frame = rows.frame
    ids = frame["reviewer_id"].astype(str).str.strip().str.lstrip("~")
    kept = frame[~ids.isin(withdrawn)]
    if "line" in kept.columns:
        zero["line"] = np.zeros(len(zero), np.int64)
    return Rows(pd.concat([kept, zero], ignore_index=True), rows.source)


def _pins_still_possible(
    pins: Rows | None, withdrawn: set[str], removed: set[tuple[str, str]], warnings: list[str]
) -> Rows | None:
    """Pins without those of withdrawn reviewers or removed pairs (each dropped one
    warned about)."""
    if pins is None or not len(pins):
        return pins
    frame = _clean_pairs(pins.frame)
    gone = frame["reviewer_id"].isin(withdrawn).to_numpy() | np.array(
        [key in removed for key in zip(frame["paper_id"], frame["reviewer_id"], strict=True)],
        dtype=bool,
    )
    for paper_id, reviewer_id in frame.loc[gone, ["paper_id", "reviewer_id"]].to_numpy()[:20]:
        warnings.append(
            f"pin ({paper_id}, {reviewer_id}) is dropped: its reviewer withdrew or the pair "
            "is removed"
        )
    return Rows(pins.frame[~gone].reset_index(drop=True), pins.source)


def _universe(given: Sequence[str] | None, table_ids: Sequence[str]) -> list[str] | None:
    """The id universe: the given ids plus any the scores gained (kept live pairs)."""
    if given is None:
        return None
    return sorted(set(given) | set(table_ids))


def _positions(problem: AssignmentProblem, rows: pd.DataFrame) -> np.ndarray:
    """Index of each row's pair among the problem's candidate pairs (-1 if not one)."""
    if not len(rows):
        return np.zeros(0, dtype=np.int64)
    papers = lookup(pd.Index(problem.paper_ids), rows["paper_id"].to_numpy(dtype=object))
    reviewers = lookup(pd.Index(problem.reviewer_ids), rows["reviewer_id"].to_numpy(dtype=object))
    keys = problem.pair_paper * problem.n_reviewers + problem.pair_reviewer
    wanted = papers * problem.n_reviewers + reviewers
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    if not len(sorted_keys):
        return np.full(len(rows), -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(sorted_keys, wanted), len(sorted_keys) - 1)
    found = (sorted_keys[at] == wanted) & (papers >= 0) & (reviewers >= 0)
    return np.where(found, order[at], -1).astype(np.int64)


def _live_scores(live: pd.DataFrame, table: ScoreTable) -> np.ndarray:
    """Each live pair's score: the scores table's, else the live file's, else NaN."""
    papers = lookup(pd.Index(table.paper_ids), live["paper_id"].to_numpy(dtype=object))
    reviewers = lookup(pd.Index(table.reviewer_ids), live["reviewer_id"].to_numpy(dtype=object))
    result = (
        live["score"].to_numpy(np.float64).copy()
        if "score" in live.columns
        else np.full(len(live), np.nan)
    )
    known = (papers >= 0) & (reviewers >= 0)
    if known.any() and table.n_pairs:
        keys = papers[known] * len(table.reviewer_ids) + reviewers[known]
        at = np.minimum(np.searchsorted(table.keys, keys), table.n_pairs - 1)
        hit = table.keys[at] == keys
        rows = np.flatnonzero(known)[hit]
        result[rows] = table.score[at[hit]]
    return result


def _warn_over_limits(problem: AssignmentProblem, keep: np.ndarray, warnings: list[str]) -> None:
    """Name the reviewers and papers whose kept live pairs already exceed their limits:
    some of their pairs must move."""
    loads = np.bincount(problem.pair_reviewer[keep], minlength=problem.n_reviewers)
    for r in np.flatnonzero(loads > problem.max_load)[:20]:
        warnings.append(
            f"reviewer {problem.reviewer_ids[r]} keeps {loads[r]} live papers, over their max "
            f"load of {problem.max_load[r]}: some of their pairs must move"
        )
    counts = np.bincount(problem.pair_paper[keep], minlength=problem.n_papers)
    for p in np.flatnonzero(counts > problem.demand)[:20]:
        warnings.append(
            f"paper {problem.paper_ids[p]} keeps {counts[p]} live reviewers, over its demand "
            f"of {problem.demand[p]}: some must go"
        )
