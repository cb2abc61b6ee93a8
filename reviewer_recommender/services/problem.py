"""Build the assignment problem from scores and the chair's constraints: one implementation
for the CLI (files) and the API (stored tables).

Unknown ids (a row naming a paper or reviewer that is not among the candidates) are handled
by one rule, the same for every face:

- in **pins** they are errors: a forced pair that cannot be assigned is a mistake to fix;
  so is a pin whose pair has no score (it is not a candidate), or a pin on a pair that is
  also a conflict or a Not Willing / Conflict bid;
- everywhere else (conflicts, bids, per-paper demand, custom max loads) they cannot change
  the assignment and are **warnings** naming the line; ``strict=True`` turns them into
  errors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from matching import AssignmentProblem, Fairness, MaxPerGroup, MinScore, RequireAttribute
from matching.problem import lookup
from recommender.bids import excluding_mask
from recommender.conflicts import email_domain
from recommender.corpus import InputError, Problem, Reviewer
from recommender.io import ScoreTable
from reviewer_recommender.services.errors import OptionError
from reviewer_recommender.services.params import AssignParams

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# Problems of one kind listed in a message before "... and N more".
LISTED = 20


@dataclass(frozen=True)
class Rows:
    """Input rows and where they came from. ``frame`` holds the columns a step needs plus,
    optionally, ``line`` (the file line of each row) for messages."""

    frame: pd.DataFrame
    source: str

    def where(self, row: int) -> int | None:
        if "line" in self.frame.columns:
            return int(self.frame["line"].iloc[row])
        return None

    def __len__(self) -> int:
        return len(self.frame)


@dataclass
class AssignInputs:
    """Everything a solve reads besides its parameters.

    ``scores``: the candidate pairs (a pair without a score is never assigned).
    ``conflicts``/``pins``: ``paper_id, reviewer_id`` rows (pins are forced pairs); several
    conflict sets may be given (e.g. a constraints file and detected conflicts).
    ``bids``: rows as :func:`recommender.io.read_bids` returns them; Not Willing and
    Conflict bids are never assigned and, when ``fold_bids``, the other bids add
    ``params.bid_weight x bid`` to their pair's score (off when scores already include
    them, as the service's stored affinities do). ``demand``: ``paper_id, demand`` rows;
    ``max_loads``: ``reviewer_id, max`` rows (they override the parameters' maps).
    ``reviewers``: profiles (affiliation, email, attributes) for side constraints.
    ``paper_ids``/``reviewer_ids``: the full universe when it is wider than the scores
    (papers without a candidate then make the problem infeasible, as they should).
    ``forbidden``: ``paper_id, reviewer_id`` pairs another level of assignment forbids
    (:mod:`reviewer_recommender.services.hierarchy`): never assigned, like conflicts, and
    counted apart (``cross_level_excluded``).
    """

    scores: ScoreTable
    conflicts: Rows | Sequence[Rows] | None = None
    pins: Rows | None = None
    bids: Rows | None = None
    demand: Rows | None = None
    max_loads: Rows | None = None
    reviewers: Sequence[Reviewer] | None = None
    reviewers_source: str = "reviewer profiles"
    paper_ids: Sequence[str] | None = None
    reviewer_ids: Sequence[str] | None = None
    fold_bids: bool = True
    strict: bool = False
    forbidden: Rows | None = None


@dataclass
class BuiltProblem:
    """The problem, what the inputs did to it (``counts``) and what was ignored
    (``warnings``, one line each)."""

    problem: AssignmentProblem
    warnings: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


class _Report:
    """Errors and warnings collected while building; errors raise together at the end."""

    def __init__(self, strict: bool):
        self.strict = strict
        self.errors: list[Problem] = []
        self.warnings: list[Problem] = []

    def error(self, source: str, line: int | None, column: str | None, message: str) -> None:
        self.errors.append(Problem(source, line, column, message))

    def warn(self, source: str, line: int | None, column: str | None, message: str) -> None:
        (self.errors if self.strict else self.warnings).append(
            Problem(source, line, column, message)
        )

    def raise_if_errors(self) -> None:
        if self.errors:
            raise InputError(self.errors)

    def warning_lines(self) -> list[str]:
        shown = [str(p) for p in self.warnings[:LISTED]]
        if len(self.warnings) > LISTED:
            shown.append(f"... and {len(self.warnings) - LISTED} more warnings")
        return shown


def build_problem(inputs: AssignInputs, params: AssignParams) -> BuiltProblem:
    """The :class:`matching.AssignmentProblem` for ``inputs`` under ``params``.

    Raises :class:`InputError` (every bad row at once), :class:`OptionError` (an option that
    cannot act, e.g. an institution limit when no reviewer has an affiliation)."""
    report = _Report(inputs.strict)
    scores = _within_universe(inputs, report)
    paper_index = pd.Index(scores.paper_ids)
    reviewer_index = pd.Index(scores.reviewer_ids)
    keys = scores.keys
    pair_score = scores.score
    counts: dict[str, int] = {"candidate_pairs": scores.n_pairs}
    what = f"not in {scores.source}"

    conflicted = np.zeros(scores.n_pairs, dtype=bool)
    # (rows, pair keys, rows that forbid) of every forbidding input, to name a clash's line
    forbidding: list[tuple[Rows, IntArray, BoolArray]] = []
    conflict_sets = (
        [inputs.conflicts] if isinstance(inputs.conflicts, Rows) else list(inputs.conflicts or [])
    )
    for rows in conflict_sets:
        if not len(rows):
            continue
        pairs, known = _pair_codes(rows, paper_index, reviewer_index, report, "conflict", what)
        conflicted |= _marked(keys, pairs[known])
        forbidding.append((rows, pairs, known))
    counts["conflicts_applied"] = int(conflicted.sum())
    if inputs.forbidden is not None and len(inputs.forbidden):
        rows = inputs.forbidden
        pairs, known = _pair_codes(
            rows, paper_index, reviewer_index, report, "forbidden pair", what
        )
        hit = _marked(keys, pairs[known])
        counts["cross_level_excluded"] = int((hit & ~conflicted).sum())
        conflicted |= hit
        forbidding.append((rows, pairs, known))

    excluded = np.zeros(scores.n_pairs, dtype=bool)
    if inputs.bids is not None and len(inputs.bids):
        rows = inputs.bids
        pairs, known = _pair_codes(rows, paper_index, reviewer_index, report, "bid", what)
        unwilling = excluding_mask(rows.frame["label"])
        hit = _marked(keys, pairs[known & unwilling])
        excluded |= hit
        counts["not_willing_excluded"] = int(hit.sum())
        forbidding.append((rows, pairs, known & unwilling))
        if inputs.fold_bids and params.bid_weight:
            preference = known & ~unwilling
            position, found = _find(keys, pairs[preference])
            values = rows.frame["bid"].to_numpy(np.float64)[preference]
            pair_score = pair_score.copy()
            pair_score[position[found]] += params.bid_weight * values[found]
            counts["bids_folded"] = int(found.sum())

    forced = np.zeros(scores.n_pairs, dtype=bool)
    if inputs.pins is not None and len(inputs.pins):
        rows = inputs.pins
        pairs, known = _pair_codes(
            rows, paper_index, reviewer_index, report, "pin", what, unknown_is_error=True
        )
        position, found = _find(keys, pairs)
        found &= known
        for row in np.flatnonzero(known & ~found)[:LISTED]:
            report.error(
                rows.source,
                rows.where(int(row)),
                None,
                f"pinned pair ({rows.frame['paper_id'].iloc[row]}, "
                f"{rows.frame['reviewer_id'].iloc[row]}) has no score in {scores.source}, so "
                "it is not a candidate pair (pairs with a Not Willing bid are left out of "
                "scores); add its score or drop the pin",
            )
        clash = found & (conflicted | excluded)[position]
        for row in np.flatnonzero(clash)[:LISTED]:
            other_source, other_line = _first_row(forbidding, int(pairs[row]))
            at = f" ({other_source}{'' if other_line is None else f':{other_line}'})"
            report.error(
                rows.source,
                rows.where(int(row)),
                None,
                f"pinned pair ({rows.frame['paper_id'].iloc[row]}, "
                f"{rows.frame['reviewer_id'].iloc[row]}) is also a conflict or a Not Willing "
                f"bid{at if other_source else ''}; a pair cannot be both required and "
                "forbidden",
            )
        forced[position[found & ~clash]] = True
        counts["pins_applied"] = int(forced.sum())

    demand = _per_item(
        params.reviewers_per_paper,
        params.demand,
        inputs.demand,
        "demand",
        paper_index,
        report,
        "paper",
        what,
    )
    max_load = _per_item(
        params.max_load,
        params.custom_max_load,
        inputs.max_loads,
        "max",
        reviewer_index,
        report,
        "reviewer",
        what,
    )
    report.raise_if_errors()
    min_load = np.minimum(params.min_load, max_load)

    keep = ~(conflicted | excluded)
    everything = bool(keep.all())
    side, side_warnings = side_constraints(
        params,
        scores.reviewer_ids,
        inputs.reviewers,
        inputs.reviewers_source,
        kept_scores=pair_score[keep],
    )
    problem = AssignmentProblem(
        paper_ids=scores.paper_ids,
        reviewer_ids=scores.reviewer_ids,
        pair_paper=scores.pair_paper if everything else scores.pair_paper[keep],
        pair_reviewer=scores.pair_reviewer if everything else scores.pair_reviewer[keep],
        pair_score=pair_score if everything else pair_score[keep],
        demand=demand,
        min_load=min_load.astype(np.int64),
        max_load=max_load,
        forced=forced if everything else forced[keep],
        side_constraints=tuple(side),
    )
    counts["pairs_excluded"] = int((~keep).sum())
    return BuiltProblem(problem, report.warning_lines() + side_warnings, counts)


def _first_row(sources: list[tuple[Rows, IntArray, BoolArray]], key: int) -> tuple[str, int | None]:
    """Source and line of the first forbidding row with pair ``key``."""
    for rows, pairs, active in sources:
        hits = np.flatnonzero(active & (pairs == key))
        if len(hits):
            return rows.source, rows.where(int(hits[0]))
    return "", None


def _marked(sorted_keys: IntArray, query: IntArray) -> BoolArray:
    """Mask over ``sorted_keys`` of the keys in ``query`` (binary search of the few query
    keys in the many pair keys, not the other way round)."""
    mask = np.zeros(len(sorted_keys), dtype=bool)
    position, found = _find(sorted_keys, query)
    mask[position[found]] = True
    return mask


def _find(sorted_keys: IntArray, query: IntArray) -> tuple[IntArray, BoolArray]:
    """Position of each ``query`` key in ``sorted_keys`` and whether it is there."""
    if len(sorted_keys) == 0:
        return np.zeros(len(query), dtype=np.int64), np.zeros(len(query), dtype=bool)
    position = np.minimum(np.searchsorted(sorted_keys, query), len(sorted_keys) - 1)
    return position.astype(np.int64), sorted_keys[position] == query


def _within_universe(inputs: AssignInputs, report: _Report) -> ScoreTable:
    """The score table re-indexed onto ``inputs.paper_ids``/``reviewer_ids`` when given
    (pairs outside them are dropped), else as it is."""
    scores = inputs.scores
    if inputs.paper_ids is None and inputs.reviewer_ids is None:
        return scores
    papers = tuple(
        sorted(set(inputs.paper_ids if inputs.paper_ids is not None else scores.paper_ids))
    )
    reviewers = tuple(
        sorted(set(inputs.reviewer_ids if inputs.reviewer_ids is not None else scores.reviewer_ids))
    )
    if papers == scores.paper_ids and reviewers == scores.reviewer_ids:
        return scores
    paper_map = pd.Index(papers).get_indexer(pd.Index(scores.paper_ids)).astype(np.int64)
    reviewer_map = pd.Index(reviewers).get_indexer(pd.Index(scores.reviewer_ids)).astype(np.int64)
    paper_code = paper_map[scores.pair_paper] if scores.n_pairs else scores.pair_paper
    reviewer_code = reviewer_map[scores.pair_reviewer] if scores.n_pairs else scores.pair_reviewer
    inside = (paper_code >= 0) & (reviewer_code >= 0)
    paper_code, reviewer_code = paper_code[inside], reviewer_code[inside]
    order = np.argsort(paper_code * max(len(reviewers), 1) + reviewer_code, kind="stable")
    return ScoreTable(
        paper_ids=papers,
        reviewer_ids=reviewers,
        pair_paper=paper_code[order],
        pair_reviewer=reviewer_code[order],
        score=scores.score[inside][order],
        source=scores.source,
    )


def _pair_codes(
    rows: Rows,
    paper_index: pd.Index,
    reviewer_index: pd.Index,
    report: _Report,
    kind: str,
    what: str,
    *,
    unknown_is_error: bool = False,
) -> tuple[IntArray, BoolArray]:
    """Pair keys of ``rows`` and which rows name known ids; unknown ids are reported."""
    frame = rows.frame
    papers = frame["paper_id"].astype(str).str.strip().to_numpy(dtype=object)
    reviewers = frame["reviewer_id"].astype(str).str.strip().str.lstrip("~").to_numpy(dtype=object)
    paper_codes = lookup(paper_index, papers)
    reviewer_codes = lookup(reviewer_index, reviewers)
    known = (paper_codes >= 0) & (reviewer_codes >= 0)
    add = report.error if unknown_is_error else report.warn
    consequence = "" if unknown_is_error else f": this {kind} is ignored"
    for row in np.flatnonzero(~known)[: LISTED * 5]:
        if paper_codes[row] < 0:
            add(
                rows.source,
                rows.where(int(row)),
                "paper_id",
                f"unknown paper {papers[row]!r} ({what}){consequence}",
            )
        if reviewer_codes[row] < 0:
            add(
                rows.source,
                rows.where(int(row)),
                "reviewer_id",
                f"unknown reviewer {reviewers[row]!r} ({what}){consequence}",
            )
    keys = np.where(known, paper_codes * len(reviewer_index) + reviewer_codes, -1)
    return keys.astype(np.int64), known


def _per_item(
    default: int,
    overrides: Mapping[str, int],
    rows: Rows | None,
    column: str,
    index: pd.Index,
    report: _Report,
    kind: str,
    what: str,
) -> IntArray:
    """``default`` per id, then the parameter map, then the file rows (last wins)."""
    values = np.full(len(index), default, dtype=np.int64)
    id_column = f"{kind}_id"
    if overrides:
        ids = np.asarray(list(overrides), dtype=object)
        codes = lookup(index, ids)
        for i in np.flatnonzero(codes < 0)[: LISTED * 5]:
            report.warn(
                f"{'demand' if kind == 'paper' else 'custom_max_load'}",
                None,
                str(ids[i]),
                f"unknown {kind} {ids[i]!r} ({what}): ignored",
            )
        known = codes >= 0
        values[codes[known]] = np.fromiter(overrides.values(), dtype=np.int64)[known]
    if rows is not None and len(rows):
        ids = rows.frame[id_column].astype(str).str.strip()
        if kind == "reviewer":
            ids = ids.str.lstrip("~")
        id_array = ids.to_numpy(dtype=object)
        codes = lookup(index, id_array)
        for i in np.flatnonzero(codes < 0)[: LISTED * 5]:
            report.warn(
                rows.source,
                rows.where(int(i)),
                id_column,
                f"unknown {kind} {id_array[i]!r} ({what}): this {column} is ignored",
            )
        known = codes >= 0
        values[codes[known]] = rows.frame[column].to_numpy(np.int64)[known]
    return values


def institution_groups(reviewers: Sequence[Reviewer | None], key: str) -> npt.NDArray[np.object_]:
    """One institution label per reviewer ("" when unknown): the affiliation with case and
    spacing normalised, or the email domain."""
    labels: list[str] = []
    for reviewer in reviewers:
        if reviewer is None:
            labels.append("")
        elif key == "email_domain":
            labels.append(email_domain(reviewer.email))
        else:
            labels.append(" ".join(reviewer.affiliation.casefold().split()))
    return np.asarray(labels, dtype=object)


def normalise_value(value: object) -> str:
    return " ".join(str(value).split()).casefold()


def side_constraints(
    params: AssignParams,
    reviewer_ids: Sequence[str],
    profiles: Sequence[Reviewer] | None,
    profiles_source: str,
    *,
    kept_scores: npt.NDArray[np.float64] | None = None,
) -> tuple[list[Any], list[str]]:
    """The matching side constraints for ``params`` (reviewer order ``reviewer_ids``) and
    warnings about constraints that cannot bind. Raises :class:`OptionError` for an option
    that cannot act: no profiles given, or no reviewer with the information it needs."""
    constraints: list[Any] = []
    warnings: list[str] = []
    if params.min_score is not None:
        constraints.append(MinScore(params.min_score))
        if kept_scores is not None and len(kept_scores) and kept_scores.min() >= params.min_score:
            warnings.append(
                f"min_score {params.min_score:g} excludes no pair: every candidate scores at "
                f"least {float(kept_scores.min()):g}"
            )
    if params.fairness_keep is not None:
        constraints.append(Fairness(keep=params.fairness_keep))
    if not params.needs_profiles():
        return constraints, warnings
    if profiles is None:
        names = [
            n
            for n in ("max_per_affiliation", "require_attribute")
            if getattr(params, n) is not None
        ]
        raise OptionError(
            names[0],
            "needs the reviewers' profiles (affiliation, email, attributes); none were given",
        )
    by_id = {r.id.lstrip("~"): r for r in profiles}
    known = [by_id.get(r) for r in reviewer_ids]
    missing = sum(r is None for r in known)
    if missing:
        warnings.append(
            f"{missing} of {len(reviewer_ids)} reviewers have no profile in {profiles_source}; "
            "they count as having no institution and no attributes"
        )
    if params.max_per_affiliation is not None:
        key = params.institution_key
        groups = institution_groups(known, key)
        labelled = groups != ""
        what = "an affiliation" if key == "affiliation" else "an email address with a domain"
        if not labelled.any():
            raise OptionError(
                "max_per_affiliation",
                f"no reviewer in {profiles_source} has {what}, so an institution limit cannot "
                "act; add that column to the profiles or drop the limit",
            )
        sizes = pd.Series(groups[labelled]).value_counts()
        if int(sizes.max()) <= params.max_per_affiliation:
            warnings.append(
                f"max_per_affiliation {params.max_per_affiliation} cannot bind: no institution "
                f"has more than {int(sizes.max())} reviewer(s); the limit is left out"
            )
        else:
            constraints.append(MaxPerGroup(groups, params.max_per_affiliation))
    required = params.require_attribute
    if required is not None:
        wanted = normalise_value(required.value)
        values = [None if r is None else _attribute(r, required.name) for r in known]
        mask = np.array([v is not None and normalise_value(v) == wanted for v in values])
        if not mask.any():
            present = pd.Series([normalise_value(v) for v in values if v is not None])
            if present.empty:
                detail = f"no reviewer in {profiles_source} has an attribute {required.name!r}"
            else:
                listing = ", ".join(f"{k} ({n})" for k, n in present.value_counts().items())
                detail = (
                    f"no reviewer has {required.name}={required.value}; values present: "
                    f"{listing[:300]}"
                )
            raise OptionError("require_attribute", f"{detail}, so the requirement cannot act")
        if required.min_count == 0:
            warnings.append("require_attribute with min_count 0 cannot bind; it is left out")
        elif mask.all():
            warnings.append(
                f"require_attribute {required.describe()} cannot bind: every reviewer has it; "
                "it is left out"
            )
        else:
            constraints.append(RequireAttribute(mask, required.min_count, name=required.describe()))
    return constraints, warnings


def _attribute(reviewer: Reviewer, name: str) -> str | None:
    """Attribute ``name`` of ``reviewer``, matched case-insensitively; profile columns such
    as affiliation count as attributes too."""
    wanted = name.strip().casefold()
    for key, value in reviewer.attributes.items():
        if key.strip().casefold() == wanted:
            return str(value)
    if wanted in ("affiliation", "email", "name"):
        return str(getattr(reviewer, wanted)) or None
    return None
