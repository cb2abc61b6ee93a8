"""One encoding of the reviewer-assignment problem, shared by every solver.

Candidate pairs are parallel arrays ``(pair_paper, pair_reviewer, pair_score)``; a pair
that is not a candidate can never be assigned (conflicts are simply never candidates).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

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


class ProblemInputError(ValueError):
    """Entries of one input table that the problem cannot use.

    ``table`` names the input (``"pairs"``, ``"conflicts"``, ``"forced"``, ``"demand"``,
    ``"min_load"``, ``"max_load"``); ``positions`` holds the 0-based position of EVERY
    offending entry in that table, in the order given (a caller that read the table from a
    file maps them to line numbers); ``reason`` is a stable machine name (``unknown_id``,
    ``duplicate``, ``not_finite``, ``not_candidate``, ``forced_conflict``, ``bad_value``);
    ``ids`` the offending ids or pairs, as text, aligned with ``positions``. The message
    names the first few entries in words.
    """

    def __init__(
        self, table: str, reason: str, positions: npt.ArrayLike, ids: Sequence[str], what: str
    ):
        self.table = table
        self.reason = reason
        self.positions = np.asarray(positions, dtype=np.int64)
        self.ids = tuple(ids)
        shown = "; ".join(
            f"entry {int(i)} ({name})"
            for i, name in zip(self.positions[:5], self.ids[:5], strict=False)
        )
        count = len(self.positions)
        more = f"; and {count - 5} more" if count > 5 else ""
        super().__init__(f"{table}: {what} ({count}): {shown}{more}")


class UnknownIds(ProblemInputError):
    """Entries naming a paper or reviewer id that the problem does not know (``reason``
    ``"unknown_id"``). Raised by :meth:`AssignmentProblem.from_pairs` unless
    ``unknown_ids="ignore"``; :func:`unknown_entries` finds them without raising."""


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
            keys = self.pair_paper * self.n_reviewers + self.pair_reviewer
            in_order = _strictly_increasing(keys)
            if not in_order:
                keys = np.sort(keys)
                if np.any(keys[1:] == keys[:-1]):
                    raise ValueError("a (paper, reviewer) pair appears more than once")
        else:
            in_order = True
        # Pairs in strictly increasing (paper, reviewer) order (what from_pairs and
        # from_dense produce) let solvers use matrix views; not a dataclass field.
        object.__setattr__(self, "pairs_in_order", in_order)
        for name, ids in (("demand", self.paper_ids), ("min_load", self.reviewer_ids)):
            negative = np.flatnonzero(getattr(self, name) < 0)
            if len(negative):
                i = int(negative[0])
                raise ValueError(
                    f"{name} of {ids[i]} is {getattr(self, name)[i]}; it must be 0 or more"
                )
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
        if score_matrix.size == 0:
            score_matrix = score_matrix.reshape(len(paper_ids), len(reviewer_ids))
        if score_matrix.ndim != 2:
            raise ValueError(f"scores must be a 2-D matrix, got shape {score_matrix.shape}")
        if not np.all(np.isfinite(score_matrix)):
            p, r = np.argwhere(~np.isfinite(score_matrix))[0]
            raise ValueError(
                f"score of ({paper_ids[p]}, {reviewer_ids[r]}) is "
                f"{score_matrix[p, r]}, not a finite number"
            )
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
        unknown_ids: Literal["raise", "ignore"] = "raise",
    ) -> AssignmentProblem:
        """Build from a table of candidate pairs (one row per pair, e.g. a scores CSV).

        ``paper_id``/``reviewer_id``/``score`` are parallel arrays (n_rows,). Ids are
        encoded with ``pandas.factorize`` in order of first appearance unless ``paper_ids`` /
        ``reviewer_ids`` give the full id lists (which may hold papers or reviewers without
        any pair). ``demand``/``min_load``/``max_load`` are a scalar, an array aligned with
        the id order, or a ``pandas.Series`` indexed by id (every id must be present).
        ``conflicts`` and ``forced`` are a DataFrame with ``paper_id`` and ``reviewer_id``
        columns or a pair of arrays; either may be empty (no rows; a DataFrame without
        rows needs no columns). Conflicted rows are dropped; forced pairs must be rows of the
        table. Any table may be empty (no pairs, no papers, no reviewers).

        Entries naming an id the problem does not know (a pair row when the id lists are
        given, a conflict, a forced pair, a ``pandas.Series`` entry of ``demand`` /
        ``min_load`` / ``max_load``) raise :class:`UnknownIds`, which lists all of them by
        position; with ``unknown_ids="ignore"`` they are dropped instead (find them first
        with :func:`unknown_entries` to warn). Other unusable entries raise
        :class:`ProblemInputError` (a ``ValueError``) listing every offending position.
        The pairs are stored in (paper, reviewer) order.
        """
        if unknown_ids not in ("raise", "ignore"):
            raise ValueError(f"unknown_ids must be 'raise' or 'ignore', not {unknown_ids!r}")
        ignore = unknown_ids == "ignore"
        papers_raw = _as_labels(paper_id)
        reviewers_raw = _as_labels(reviewer_id)
        scores = np.asarray(score, dtype=np.float64).reshape(-1)
        if not (len(papers_raw) == len(reviewers_raw) == len(scores)):
            raise ValueError(
                f"paper_id, reviewer_id and score have {len(papers_raw)}, "
                f"{len(reviewers_raw)} and {len(scores)} entries; they must be equal"
            )
        bad_score = np.flatnonzero(~np.isfinite(scores))
        if len(bad_score):
            raise ProblemInputError(
                "pairs",
                "not_finite",
                bad_score,
                [f"{papers_raw[i]}, {reviewers_raw[i]}: score {scores[i]}" for i in bad_score[:20]],
                "score is not a finite number",
            )
        pair_paper, paper_index = _encode(papers_raw, paper_ids, "paper")
        pair_reviewer, reviewer_index = _encode(reviewers_raw, reviewer_ids, "reviewer")
        unknown = np.flatnonzero((pair_paper < 0) | (pair_reviewer < 0))
        if len(unknown):
            if not ignore:
                raise _unknown(
                    "pairs", unknown, papers_raw, reviewers_raw, pair_paper, pair_reviewer
                )
            known = (pair_paper >= 0) & (pair_reviewer >= 0)
            return cls.from_pairs(
                papers_raw[known],
                reviewers_raw[known],
                scores[known],
                demand=demand,
                min_load=min_load,
                max_load=max_load,
                conflicts=conflicts,
                forced=forced,
                paper_ids=paper_ids,
                reviewer_ids=reviewer_ids,
                side_constraints=side_constraints,
                unknown_ids=unknown_ids,
            )
        n_reviewers = len(reviewer_index)
        keys = pair_paper * n_reviewers + pair_reviewer
        if not _strictly_increasing(keys):
            order = np.argsort(keys, kind="stable")
            sorted_keys = keys[order]
            repeat = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1]) + 1
            if len(repeat):
                rows = np.sort(order[repeat])
                raise ProblemInputError(
                    "pairs",
                    "duplicate",
                    rows,
                    [f"{papers_raw[i]}, {reviewers_raw[i]}" for i in rows],
                    "pair appears more than once (positions of the repeats)",
                )
            papers_raw, reviewers_raw = papers_raw[order], reviewers_raw[order]
            pair_paper, pair_reviewer, scores = (
                pair_paper[order],
                pair_reviewer[order],
                scores[order],
            )
            keys = sorted_keys
        keep = np.ones(len(keys), dtype=bool)
        if conflicts is not None:
            conflict_keys = _pair_keys(conflicts, paper_index, reviewer_index, "conflicts", ignore)
            keep &= ~sorted_member(np.sort(conflict_keys), keys)
        forced_mask = np.zeros(len(keys), dtype=bool)
        if forced is not None:
            forced_keys = _pair_keys(forced, paper_index, reviewer_index, "forced", ignore)
            position = np.minimum(np.searchsorted(keys, forced_keys), max(len(keys) - 1, 0))
            found = (
                keys[position] == forced_keys
                if len(keys)
                else np.zeros(len(forced_keys), dtype=bool)
            )
            entries = _known_positions(forced, paper_index, reviewer_index)
            if not np.all(found):
                missing = np.flatnonzero(~found)
                raise ProblemInputError(
                    "forced",
                    "not_candidate",
                    entries[missing],
                    _key_names(forced_keys[missing], paper_index, reviewer_index),
                    "forced pair is not a scored candidate pair",
                )
            clash = np.flatnonzero(~keep[position])
            if len(clash):
                raise ProblemInputError(
                    "forced",
                    "forced_conflict",
                    entries[clash],
                    _key_names(forced_keys[clash], paper_index, reviewer_index),
                    "pair is both forced and a conflict",
                )
            forced_mask[position] = True
        paper_list = tuple(str(x) for x in paper_index)
        reviewer_list = tuple(str(x) for x in reviewer_index)
        if not keep.all():
            pair_paper, pair_reviewer = pair_paper[keep], pair_reviewer[keep]
            scores, forced_mask = scores[keep], forced_mask[keep]
        return cls(
            paper_ids=paper_list,
            reviewer_ids=reviewer_list,
            pair_paper=pair_paper,
            pair_reviewer=pair_reviewer,
            pair_score=scores,
            demand=_per_id(demand, paper_index, "demand", ignore),
            min_load=_per_id(min_load, reviewer_index, "min_load", ignore),
            max_load=_per_id(max_load, reviewer_index, "max_load", ignore),
            forced=forced_mask,
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
    """``value`` as n integers: a scalar is repeated; floats must be whole numbers."""
    array = np.asarray(value)
    if array.ndim == 0:
        array = np.full(n, array)
    if array.shape != (n,):
        raise ValueError(f"{name} has shape {array.shape}, expected ({n},)")
    if array.dtype.kind in "iub":
        return array.astype(np.int64)
    try:
        numbers = array.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} holds a value that is not a number") from None
    bad = np.flatnonzero(
        ~np.isfinite(numbers) | (numbers != np.round(numbers)) | (np.abs(numbers) > 2.0**53)
    )
    if len(bad):
        raise ProblemInputError(
            name, "bad_value", bad, [repr(array[i]) for i in bad], "value is not a whole number"
        )
    return numbers.astype(np.int64)


def _encode(
    raw: npt.NDArray[np.str_], known: Sequence[str] | None, what: str
) -> tuple[IntArray, pd.Index]:
    """Codes of ``raw`` in ``known`` (-1 where absent), or in order of first appearance."""
    if known is None:
        codes, uniques = pd.factorize(raw, sort=False)
        return codes.astype(np.int64), pd.Index(uniques, dtype=object)
    index = pd.Index([str(x) for x in known], dtype=object)
    if not index.is_unique:
        duplicated = index[index.duplicated()]
        raise ValueError(f"{what}_ids are not unique: {str(duplicated[0])!r} appears twice")
    return lookup(index, raw), index


def _unknown(
    table: str,
    rows: IntArray,
    papers: np.ndarray,
    reviewers: np.ndarray,
    paper_codes: IntArray,
    reviewer_codes: IntArray,
) -> UnknownIds:
    names = []
    for i in rows.tolist():
        parts = []
        if paper_codes[i] < 0:
            parts.append(f"unknown paper id {str(papers[i])!r}")
        if reviewer_codes[i] < 0:
            parts.append(f"unknown reviewer id {str(reviewers[i])!r}")
        names.append(" and ".join(parts))
    return UnknownIds(table, "unknown_id", rows, names, "unknown id")


def _key_names(keys: IntArray, paper_index: pd.Index, reviewer_index: pd.Index) -> list[str]:
    n = len(reviewer_index)
    return [f"{paper_index[k // n]}, {reviewer_index[k % n]}" for k in keys.tolist()]


def _strictly_increasing(keys: IntArray) -> bool:
    return len(keys) < 2 or bool(np.all(keys[1:] > keys[:-1]))


def _as_labels(values: npt.ArrayLike) -> np.ndarray:
    """Ids as an array of str (object arrays of str are kept as they are: no copy)."""
    array = np.asarray(values).reshape(-1)
    if array.dtype == object and pd.api.types.infer_dtype(array, skipna=False) in (
        "string",
        "empty",
    ):
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


def _pair_columns(
    pairs: pd.DataFrame | tuple[npt.ArrayLike, npt.ArrayLike], name: str
) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(pairs, pd.DataFrame):
        if len(pairs) == 0 and not {"paper_id", "reviewer_id"} <= set(pairs.columns):
            empty = np.zeros(0, dtype=object)
            return empty, empty
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
    return papers, reviewers


def unknown_entries(
    pairs: pd.DataFrame | tuple[npt.ArrayLike, npt.ArrayLike],
    paper_ids: Sequence[str],
    reviewer_ids: Sequence[str],
) -> IntArray:
    """0-based positions of the entries of ``pairs`` (a DataFrame with ``paper_id`` and
    ``reviewer_id`` columns, or a pair of arrays) whose paper or reviewer id is not in
    ``paper_ids`` / ``reviewer_ids``: what :meth:`AssignmentProblem.from_pairs` would
    refuse (or drop, with ``unknown_ids="ignore"``)."""
    papers, reviewers = _pair_columns(pairs, "pairs")
    paper_codes = lookup(pd.Index([str(x) for x in paper_ids], dtype=object), papers)
    reviewer_codes = lookup(pd.Index([str(x) for x in reviewer_ids], dtype=object), reviewers)
    return np.flatnonzero((paper_codes < 0) | (reviewer_codes < 0)).astype(np.int64)


def _known_positions(
    pairs: pd.DataFrame | tuple[npt.ArrayLike, npt.ArrayLike],
    paper_index: pd.Index,
    reviewer_index: pd.Index,
) -> IntArray:
    """Positions of the entries whose ids are both known (all, unless some were ignored)."""
    papers, reviewers = _pair_columns(pairs, "pairs")
    known = (lookup(paper_index, papers) >= 0) & (lookup(reviewer_index, reviewers) >= 0)
    return np.flatnonzero(known).astype(np.int64)


def _pair_keys(
    pairs: pd.DataFrame | tuple[npt.ArrayLike, npt.ArrayLike],
    paper_index: pd.Index,
    reviewer_index: pd.Index,
    name: str,
    ignore_unknown: bool,
) -> IntArray:
    """``paper * n_reviewers + reviewer`` per entry (entries with unknown ids dropped when
    ``ignore_unknown``, else :class:`UnknownIds` listing them all)."""
    papers, reviewers = _pair_columns(pairs, name)
    paper_codes = lookup(paper_index, papers)
    reviewer_codes = lookup(reviewer_index, reviewers)
    unknown = np.flatnonzero((paper_codes < 0) | (reviewer_codes < 0))
    if len(unknown):
        if not ignore_unknown:
            raise _unknown(name, unknown, papers, reviewers, paper_codes, reviewer_codes)
        known = (paper_codes >= 0) & (reviewer_codes >= 0)
        paper_codes, reviewer_codes = paper_codes[known], reviewer_codes[known]
    return paper_codes.astype(np.int64) * len(reviewer_index) + reviewer_codes


def _per_id(
    value: int | npt.ArrayLike | pd.Series, index: pd.Index, name: str, ignore_unknown: bool
) -> IntArray:
    if isinstance(value, pd.Series):
        labels = value.index.astype(str)
        if not labels.is_unique:
            repeat = np.flatnonzero(labels.duplicated())
            raise ProblemInputError(
                name,
                "duplicate",
                repeat,
                [str(labels[i]) for i in repeat],
                "id given more than once",
            )
        codes = index.get_indexer(labels)
        unknown = np.flatnonzero(codes < 0)
        if len(unknown) and not ignore_unknown:
            raise UnknownIds(
                name,
                "unknown_id",
                unknown,
                [f"unknown id {str(labels[i])!r}" for i in unknown],
                "unknown id",
            )
        missing = np.setdiff1d(np.arange(len(index)), codes[codes >= 0])
        if len(missing):
            raise ValueError(
                f"{name} has no value for id {str(index[missing[0]])!r}"
                + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
            )
        aligned = np.zeros(len(index), dtype=np.float64)
        aligned[codes[codes >= 0]] = pd.to_numeric(value, errors="coerce").to_numpy(
            dtype=np.float64
        )[codes >= 0]
        value = aligned
    return _per_item(value, len(index), name)
