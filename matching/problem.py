"""One encoding of the reviewer-assignment problem, shared by every solver.

Candidate pairs are parallel arrays ``(pair_paper, pair_reviewer, pair_score)``; a pair
that is not a candidate can never be assigned (conflicts are simply never candidates).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


class Infeasible(Exception):
    """No assignment satisfies the hard constraints; ``diagnosis`` says why in a chair's terms."""

    def __init__(self, diagnosis: Any):
        self.diagnosis = diagnosis
        super().__init__(str(diagnosis))


@dataclass(frozen=True, eq=False)
class AssignmentProblem:
    """Papers, reviewers, candidate pairs and the hard constraints over them.

    Shapes: ``demand`` (n_papers,), ``min_load``/``max_load`` (n_reviewers,), every
    ``pair_*`` and ``forced`` array (n_pairs,). ``pair_score`` is the affinity a solver
    maximizes (any real units; higher is better). Each (paper, reviewer) pair appears at
    most once. ``side_constraints`` holds optional extra constraints understood by the
    solvers that support them.
    """

    paper_ids: tuple[str, ...]
    reviewer_ids: tuple[str, ...]
    pair_paper: IntArray
    pair_reviewer: IntArray
    pair_score: FloatArray
    demand: IntArray
    min_load: IntArray
    max_load: IntArray
    forced: BoolArray
    side_constraints: tuple[Any, ...] = field(default=())

    def __post_init__(self) -> None:
        n_pairs = len(self.pair_paper)
        for name in ("pair_reviewer", "pair_score", "forced"):
            if len(getattr(self, name)) != n_pairs:
                raise ValueError(
                    f"{name} has {len(getattr(self, name))} entries, expected {n_pairs}"
                )
        if len(self.demand) != self.n_papers:
            raise ValueError(f"demand has {len(self.demand)} entries for {self.n_papers} papers")
        for name in ("min_load", "max_load"):
            if len(getattr(self, name)) != self.n_reviewers:
                raise ValueError(
                    f"{name} has {len(getattr(self, name))} entries for "
                    f"{self.n_reviewers} reviewers"
                )
        if n_pairs:
            if self.pair_paper.min() < 0 or self.pair_paper.max() >= self.n_papers:
                raise ValueError("pair_paper holds an index outside 0..n_papers-1")
            if self.pair_reviewer.min() < 0 or self.pair_reviewer.max() >= self.n_reviewers:
                raise ValueError("pair_reviewer holds an index outside 0..n_reviewers-1")
            if not np.all(np.isfinite(self.pair_score)):
                raise ValueError("pair_score holds NaN or infinite values")
            keys = np.sort(self.pair_paper * self.n_reviewers + self.pair_reviewer)
            if np.any(keys[1:] == keys[:-1]):
                raise ValueError("a (paper, reviewer) pair appears more than once")
        if np.any(self.demand < 0) or np.any(self.min_load < 0):
            raise ValueError("demand and min_load must be non-negative")
        bad = np.flatnonzero(self.max_load < self.min_load)
        if len(bad):
            r = self.reviewer_ids[bad[0]]
            raise ValueError(
                f"reviewer {r}: max load {self.max_load[bad[0]]} below min load "
                f"{self.min_load[bad[0]]}"
            )
        if len(set(self.paper_ids)) != self.n_papers:
            raise ValueError("paper ids are not unique")
        if len(set(self.reviewer_ids)) != self.n_reviewers:
            raise ValueError("reviewer ids are not unique")

    @property
    def n_papers(self) -> int:
        return len(self.paper_ids)

    @property
    def n_reviewers(self) -> int:
        return len(self.reviewer_ids)

    @property
    def n_pairs(self) -> int:
        return len(self.pair_paper)

    @classmethod
    def from_dense(
        cls,
        scores: npt.ArrayLike,
        *,
        paper_ids: Sequence[str],
        reviewer_ids: Sequence[str],
        demand: int | npt.ArrayLike,
        min_load: int | npt.ArrayLike = 0,
        max_load: int | npt.ArrayLike,
        conflicts: npt.ArrayLike | None = None,
        forced: npt.ArrayLike | None = None,
        side_constraints: Sequence[Any] = (),
    ) -> AssignmentProblem:
        """Build from a dense (n_papers, n_reviewers) score matrix; every non-conflicted pair
        is a candidate. ``conflicts`` and ``forced`` are boolean masks of the same shape.
        A pair both forced and conflicted is an error."""
        score_matrix = np.asarray(scores, dtype=np.float64)
        n_papers, n_reviewers = score_matrix.shape
        if (n_papers, n_reviewers) != (len(paper_ids), len(reviewer_ids)):
            raise ValueError(
                f"scores have shape {score_matrix.shape}, ids give "
                f"({len(paper_ids)}, {len(reviewer_ids)})"
            )
        conflict_mask = _mask(conflicts, score_matrix.shape, "conflicts")
        forced_mask = _mask(forced, score_matrix.shape, "forced")
        both = np.argwhere(conflict_mask & forced_mask)
        if len(both):
            p, r = both[0]
            raise ValueError(
                f"pair ({paper_ids[p]}, {reviewer_ids[r]}) is both forced and a conflict"
            )
        pair_paper, pair_reviewer = np.nonzero(~conflict_mask)
        return cls(
            paper_ids=tuple(paper_ids),
            reviewer_ids=tuple(reviewer_ids),
            pair_paper=pair_paper.astype(np.int64),
            pair_reviewer=pair_reviewer.astype(np.int64),
            pair_score=score_matrix[pair_paper, pair_reviewer],
            demand=_per_item(demand, n_papers, "demand"),
            min_load=_per_item(min_load, n_reviewers, "min_load"),
            max_load=_per_item(max_load, n_reviewers, "max_load"),
            forced=forced_mask[pair_paper, pair_reviewer],
            side_constraints=tuple(side_constraints),
        )

    @classmethod
    def from_pairs(
        cls,
        paper_id: npt.ArrayLike,
        reviewer_id: npt.ArrayLike,
        score: npt.ArrayLike,
        *,
        demand: int | npt.ArrayLike | pd.Series,
        min_load: int | npt.ArrayLike | pd.Series = 0,
        max_load: int | npt.ArrayLike | pd.Series,
        conflicts: pd.DataFrame | tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
        forced: pd.DataFrame | tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
        paper_ids: Sequence[str] | None = None,
        reviewer_ids: Sequence[str] | None = None,
        side_constraints: Sequence[Any] = (),
    ) -> AssignmentProblem:
        """Build from a table of candidate pairs (one row per pair, e.g. a scores CSV).

        ``paper_id``/``reviewer_id``/``score`` are parallel arrays (n_rows,). Ids are
        encoded with ``pandas.factorize`` in order of first appearance unless ``paper_ids`` /
        ``reviewer_ids`` give the full id lists (which may hold papers or reviewers without
        any pair). ``demand``/``min_load``/``max_load`` are a scalar, an array aligned with
        the id order, or a ``pandas.Series`` indexed by id (every id must be present).
        ``conflicts`` and ``forced`` are a DataFrame with ``paper_id`` and ``reviewer_id``
        columns or a pair of arrays; conflicted rows are dropped, forced pairs must be rows
        of the table. Raises ``ValueError`` naming the first offending row or id.
        """
        papers_raw = _as_labels(paper_id)
        reviewers_raw = _as_labels(reviewer_id)
        scores = np.asarray(score, dtype=np.float64)
        if not (len(papers_raw) == len(reviewers_raw) == len(scores)):
            raise ValueError(
                f"paper_id, reviewer_id and score have {len(papers_raw)}, "
                f"{len(reviewers_raw)} and {len(scores)} entries; they must be equal"
            )
        bad_score = np.flatnonzero(~np.isfinite(scores))
        if len(bad_score):
            row = int(bad_score[0])
            raise ValueError(
                f"row {row} ({papers_raw[row]}, {reviewers_raw[row]}): score "
                f"{scores[row]} is not a finite number"
            )
        pair_paper, paper_index = _encode(papers_raw, paper_ids, "paper")
        pair_reviewer, reviewer_index = _encode(reviewers_raw, reviewer_ids, "reviewer")
        n_reviewers = len(reviewer_index)
        keys = pair_paper * n_reviewers + pair_reviewer
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        duplicate = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
        if len(duplicate):
            row = int(order[duplicate[0] + 1])
            raise ValueError(
                f"row {row}: pair ({papers_raw[row]}, {reviewers_raw[row]}) appears more than once"
            )
        keep = np.ones(len(keys), dtype=bool)
        if conflicts is not None:
            conflict_keys = _pair_keys(conflicts, paper_index, reviewer_index, "conflicts")
            keep &= ~sorted_member(np.sort(conflict_keys), keys)
        forced_mask = np.zeros(len(keys), dtype=bool)
        if forced is not None:
            forced_keys = np.sort(_pair_keys(forced, paper_index, reviewer_index, "forced"))
            forced_keys = forced_keys[np.r_[True, forced_keys[1:] != forced_keys[:-1]]]
            position = np.searchsorted(sorted_keys, forced_keys)
            position = np.minimum(position, max(len(sorted_keys) - 1, 0))
            found = (
                sorted_keys[position] == forced_keys
                if len(sorted_keys)
                else np.zeros(len(forced_keys), dtype=bool)
            )
            if not np.all(found):
                missing = int(forced_keys[~found][0])
                raise ValueError(
                    f"forced pair ({paper_index[missing // n_reviewers]}, "
                    f"{reviewer_index[missing % n_reviewers]}) is not a row of the pair table"
                )
            forced_rows = order[position]
            clash = forced_rows[~keep[forced_rows]]
            if len(clash):
                row = int(clash[0])
                raise ValueError(
                    f"pair ({papers_raw[row]}, {reviewers_raw[row]}) is both forced and a conflict"
                )
            forced_mask[forced_rows] = True
        paper_list = tuple(str(x) for x in paper_index)
        reviewer_list = tuple(str(x) for x in reviewer_index)
        return cls(
            paper_ids=paper_list,
            reviewer_ids=reviewer_list,
            pair_paper=pair_paper[keep],
            pair_reviewer=pair_reviewer[keep],
            pair_score=scores[keep],
            demand=_per_id(demand, paper_index, "demand"),
            min_load=_per_id(min_load, reviewer_index, "min_load"),
            max_load=_per_id(max_load, reviewer_index, "max_load"),
            forced=forced_mask[keep],
            side_constraints=tuple(side_constraints),
        )

    def keep_pairs(self, keep: npt.ArrayLike) -> AssignmentProblem:
        """A copy holding only the candidate pairs where ``keep`` (n_pairs,) is true.

        Dropping a forced pair is an error (forced pairs are hard)."""
        mask = np.asarray(keep, dtype=bool)
        if mask.shape != (self.n_pairs,):
            raise ValueError(f"keep mask has shape {mask.shape}, expected ({self.n_pairs},)")
        dropped_forced = np.flatnonzero(self.forced & ~mask)
        if len(dropped_forced):
            i = int(dropped_forced[0])
            raise ValueError(
                f"pair ({self.paper_ids[self.pair_paper[i]]}, "
                f"{self.reviewer_ids[self.pair_reviewer[i]]}) is forced and cannot be removed"
            )
        return replace(
            self,
            pair_paper=self.pair_paper[mask],
            pair_reviewer=self.pair_reviewer[mask],
            pair_score=self.pair_score[mask],
            forced=self.forced[mask],
        )

    def with_side_constraints(self, *constraints: Any) -> AssignmentProblem:
        """A copy whose side constraints are ``constraints`` (replacing the current ones)."""
        return replace(self, side_constraints=tuple(constraints))

    def score_matrix(self, fill: float = np.nan) -> FloatArray:
        """Dense (n_papers, n_reviewers) view of the candidate scores; ``fill`` elsewhere."""
        dense = np.full((self.n_papers, self.n_reviewers), fill, dtype=np.float64)
        dense[self.pair_paper, self.pair_reviewer] = self.pair_score
        return dense


def _mask(value: npt.ArrayLike | None, shape: tuple[int, int], name: str) -> BoolArray:
    if value is None:
        return np.zeros(shape, dtype=bool)
    mask = np.asarray(value, dtype=bool)
    if mask.shape != shape:
        raise ValueError(f"{name} mask has shape {mask.shape}, expected {shape}")
    return mask


def _per_item(value: int | npt.ArrayLike, n: int, name: str) -> IntArray:
    array = np.asarray(value)
    if array.ndim == 0:
        return np.full(n, int(array), dtype=np.int64)
    if array.shape != (n,):
        raise ValueError(f"{name} has shape {array.shape}, expected ({n},)")
    return array.astype(np.int64)


def _encode(
    raw: npt.NDArray[np.str_], known: Sequence[str] | None, what: str
) -> tuple[IntArray, pd.Index]:
    if known is None:
        codes, uniques = pd.factorize(raw, sort=False)
        return codes.astype(np.int64), pd.Index(uniques)
    index = pd.Index([str(x) for x in known])
    if not index.is_unique:
        raise ValueError(f"{what}_ids are not unique")
    codes = lookup(index, raw)
    unknown = np.flatnonzero(codes < 0)
    if len(unknown):
        row = int(unknown[0])
        raise ValueError(f"row {row}: {what} id {str(raw[row])!r} is not in {what}_ids")
    return codes.astype(np.int64), index


def _as_labels(values: npt.ArrayLike) -> np.ndarray:
    """Ids as an array of str (object arrays of str are kept as they are: no copy)."""
    array = np.asarray(values)
    if array.dtype == object and all(isinstance(x, str) for x in array[:100]):
        return array
    return array.astype(str).astype(object)


def lookup(index: pd.Index, values: np.ndarray) -> IntArray:
    """Position of each value in ``index`` (-1 when absent); hashes each distinct value
    once, which is much faster than ``get_indexer`` on millions of repeated ids."""
    codes, uniques = pd.factorize(values)
    if len(uniques) == 0:
        return np.full(len(values), -1, dtype=np.int64)
    positions = index.get_indexer(uniques).astype(np.int64)
    result = positions[np.maximum(codes, 0)]
    result[codes < 0] = -1
    return result


def sorted_member(sorted_keys: IntArray, query: IntArray) -> BoolArray:
    """``np.isin(query, sorted_keys)`` by binary search (``sorted_keys`` ascending)."""
    if len(sorted_keys) == 0:
        return np.zeros(len(query), dtype=bool)
    position = np.minimum(np.searchsorted(sorted_keys, query), len(sorted_keys) - 1)
    return sorted_keys[position] == query


def _pair_keys(
    pairs: pd.DataFrame | tuple[npt.ArrayLike, npt.ArrayLike],
    paper_index: pd.Index,
    reviewer_index: pd.Index,
    name: str,
) -> IntArray:
    if isinstance(pairs, pd.DataFrame):
        missing = {"paper_id", "reviewer_id"} - set(pairs.columns)
        if missing:
            raise ValueError(f"{name} table lacks column(s) {sorted(missing)}")
        papers, reviewers = pairs["paper_id"].to_numpy(), pairs["reviewer_id"].to_numpy()
    else:
        papers, reviewers = pairs
    papers = _as_labels(papers)
    reviewers = _as_labels(reviewers)
    if len(papers) != len(reviewers):
        raise ValueError(f"{name}: {len(papers)} paper ids but {len(reviewers)} reviewer ids")
    paper_codes = lookup(paper_index, papers)
    reviewer_codes = lookup(reviewer_index, reviewers)
    checks = ((paper_codes, papers, "paper"), (reviewer_codes, reviewers, "reviewer"))
    for codes, raw, what in checks:
        unknown = np.flatnonzero(codes < 0)
        if len(unknown):
            raise ValueError(
                f"{name} entry {int(unknown[0])}: unknown {what} id {str(raw[unknown[0]])!r}"
            )
    return paper_codes.astype(np.int64) * len(reviewer_index) + reviewer_codes


def _per_id(value: int | npt.ArrayLike | pd.Series, index: pd.Index, name: str) -> IntArray:
    if isinstance(value, pd.Series):
        series = value.copy()
        series.index = series.index.astype(str)
        aligned = series.reindex(index)
        missing = aligned.index[aligned.isna()]
        if len(missing):
            raise ValueError(f"{name} has no value for id {str(missing[0])!r}")
        value = aligned.to_numpy()
    array = np.asarray(value)
    if array.ndim and array.dtype.kind == "f" and not np.all(array == np.round(array)):
        raise ValueError(f"{name} holds non-integer values")
    return _per_item(array, len(index), name)
