"""Every solver against an independent exact model, on random and extreme inputs.

The reference is a plain PuLP model written here (one binary per candidate pair, rows by
comprehension, HiGHS through PuLP), sharing no code with :mod:`matching.solvers`. Inputs
are built the way a chair's files arrive (a pair table, conflicts and pins tables that
may be empty or header-only, per-paper demand and per-reviewer loads as id-indexed
tables), with scores that include 0, negatives, tiny and huge magnitudes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pulp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from matching_helpers import Drawn, assert_hard_constraints

from matching import (
    AssignmentProblem,
    FlowSolver,
    IlpSolver,
    Infeasible,
    MaxPerGroup,
    MinScore,
    OptionError,
    RandomizedSolver,
    RequireAttribute,
    evaluate,
    solve,
)

SCORES = st.one_of(
    st.sampled_from([0.0, 1.0, -1.0, 0.5, 1e-300, -1e-300, 5e-324, 1e300, -1e300, 1e308 / 64]),
    st.floats(-10, 10, allow_nan=False, allow_infinity=False),
)


@dataclass
class Venue:
    table: pd.DataFrame
    conflicts: pd.DataFrame
    forced: pd.DataFrame
    paper_ids: list[str]
    reviewer_ids: list[str]
    demand: pd.Series
    min_load: pd.Series
    max_load: pd.Series


@st.composite
def venues(draw: st.DrawFn) -> Venue:
    n_papers = draw(st.integers(0, 5))
    n_reviewers = draw(st.integers(0, 5))
    papers = [f"p{i}" for i in range(n_papers)]
    reviewers = [f"r{j}" for j in range(n_reviewers)]
    cells = [(p, r) for p in papers for r in reviewers]
    chosen = draw(st.lists(st.booleans(), min_size=len(cells), max_size=len(cells)))
    pairs = [cell for cell, keep in zip(cells, chosen, strict=True) if keep]
    scores = draw(st.lists(SCORES, min_size=len(pairs), max_size=len(pairs)))
    table = pd.DataFrame(
        {
            "paper_id": [p for p, _ in pairs],
            "reviewer_id": [r for _, r in pairs],
            "score": scores,
        },
        columns=["paper_id", "reviewer_id", "score"],
    )
    flags = draw(
        st.lists(
            st.sampled_from(["free", "conflict", "forced"]),
            min_size=len(pairs),
            max_size=len(pairs),
        )
    )
    conflict_cells = [pair for pair, f in zip(pairs, flags, strict=True) if f == "conflict"]
    # a conflict may also name a pair without a score (it is simply not a candidate)
    conflict_cells += draw(st.lists(st.sampled_from(cells), max_size=2)) if cells else []
    forced_cells = [pair for pair, f in zip(pairs, flags, strict=True) if f == "forced"]
    forced_cells = [c for c in forced_cells if c not in conflict_cells]
    empty_style = draw(st.sampled_from(["header", "bare"]))

    def frame(cells_: list[tuple[str, str]]) -> pd.DataFrame:
        if not cells_ and empty_style == "bare":
            return pd.DataFrame()
        return pd.DataFrame(cells_, columns=["paper_id", "reviewer_id"])

    demand = pd.Series({p: draw(st.integers(0, 3)) for p in papers}, dtype=np.int64)
    max_load = pd.Series({r: draw(st.integers(0, 4)) for r in reviewers}, dtype=np.int64)
    min_load = pd.Series(
        {r: draw(st.integers(0, int(max_load[r]))) for r in reviewers}, dtype=np.int64
    )
    return Venue(
        table,
        frame(conflict_cells),
        frame(forced_cells),
        papers,
        reviewers,
        demand,
        min_load,
        max_load,
    )


def build(venue: Venue, side_constraints=()) -> AssignmentProblem:
    return AssignmentProblem.from_pairs(
        venue.table["paper_id"],
        venue.table["reviewer_id"],
        venue.table["score"],
        paper_ids=venue.paper_ids,
        reviewer_ids=venue.reviewer_ids,
        demand=venue.demand,
        min_load=venue.min_load,
        max_load=venue.max_load,
        conflicts=venue.conflicts,
        forced=venue.forced,
        side_constraints=side_constraints,
    )


def reference(
    venue: Venue,
    *,
    min_score: float | None = None,
    groups=None,
    limit=None,
    holders=None,
    min_count=None,
) -> float | None:
    """The optimum of the independent model in score units, or None when infeasible."""
    conflicts = set()
    if len(venue.conflicts):
        conflicts = set(
            zip(venue.conflicts["paper_id"], venue.conflicts["reviewer_id"], strict=True)
        )
    forced = set()
    if len(venue.forced):
        forced = set(zip(venue.forced["paper_id"], venue.forced["reviewer_id"], strict=True))
    candidates = {
        (p, r): s
        for p, r, s in zip(
            venue.table["paper_id"], venue.table["reviewer_id"], venue.table["score"], strict=True
        )
        if (p, r) not in conflicts and (min_score is None or s >= min_score or (p, r) in forced)
    }
    largest = max((abs(s) for s in candidates.values()), default=0.0) or 1.0
    model = pulp.LpProblem("reference", pulp.LpMaximize)
    x = {pair: pulp.LpVariable(f"x_{pair[0]}_{pair[1]}", cat="Binary") for pair in candidates}
    model += pulp.lpSum((s / largest) * x[pair] for pair, s in candidates.items())
    for p in venue.paper_ids:
        model += pulp.lpSum(x[q] for q in x if q[0] == p) == int(venue.demand[p])
    for r in venue.reviewer_ids:
        load = pulp.lpSum(x[q] for q in x if q[1] == r)
        model += load <= int(venue.max_load[r])
        model += load >= int(venue.min_load[r])
    for pair in forced:
        model += x[pair] == 1
    if groups is not None:
        for p in venue.paper_ids:
            for g in set(groups.values()):
                members = [x[q] for q in x if q[0] == p and groups[q[1]] == g]
                if members:
                    model += pulp.lpSum(members) <= limit
    if holders is not None:
        for p in venue.paper_ids:
            if venue.demand[p] > 0:
                model += pulp.lpSum(x[q] for q in x if q[0] == p and q[1] in holders) >= min_count
    status = model.solve(pulp.HiGHS(msg=False))
    if pulp.LpStatus[status] != "Optimal":
        return None
    chosen = [pair for pair in x if (x[pair].value() or 0) > 0.5]
    return math.fsum(candidates[pair] for pair in chosen)


def close(value: float, expected: float, venue: Venue) -> bool:
    """Equal up to float resolution of the largest score (sums of mixed magnitudes)."""
    largest = float(np.abs(venue.table["score"]).max()) if len(venue.table) else 1.0
    return abs(value - expected) <= 1e-9 * max(largest, abs(expected), 1e-300) * 8


def check(problem: AssignmentProblem, result, venue: Venue, expected: float) -> None:
    assert_hard_constraints(problem, result)
    pairs = result.pairs()
    report = evaluate(problem, pairs["paper_id"], pairs["reviewer_id"])
    assert report.feasible, report.violations
    assert result.objective <= result.upper_bound
    assert result.upper_bound >= expected or close(result.upper_bound, expected, venue)


SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@SETTINGS
@given(venue=venues(), restrict=st.booleans())
def test_flow_is_exact_or_infeasible_like_the_reference(venue: Venue, restrict: bool) -> None:
    problem = build(venue)
    expected = reference(venue)
    solver = FlowSolver(restrict=restrict, k=0)
    if expected is None:
        with pytest.raises(Infeasible) as error:
            solver.solve(problem)
        assert error.value.diagnosis.causes
        return
    try:
        result = solver.solve(problem)
    except ValueError as error:  # only a total beyond the largest float
        assert "largest number a float can hold" in str(error)
        return
    check(problem, result, venue, expected)
    assert close(result.objective, expected, venue)


@SETTINGS
@given(venue=venues(), threshold=st.sampled_from([None, -1.0, 0.0, 0.5]))
def test_ilp_is_exact_or_infeasible_like_the_reference(
    venue: Venue, threshold: float | None
) -> None:
    side = (MinScore(threshold),) if threshold is not None else ()
    problem = build(venue, side)
    expected = reference(venue, min_score=threshold)
    if expected is None:
        with pytest.raises(Infeasible):
            IlpSolver().solve(problem)
        return
    try:
        result = IlpSolver().solve(problem)
    except ValueError as error:
        assert "largest number a float can hold" in str(error)
        return
    check(problem, result, venue, expected)
    assert close(result.objective, expected, venue)


@SETTINGS
@given(venue=venues(), limit=st.integers(1, 2), min_count=st.integers(1, 2), data=st.data())
def test_ilp_side_constraints_match_the_reference(
    venue: Venue, limit: int, min_count: int, data: st.DataObject
) -> None:
    reviewers, drawn = venue.reviewer_ids, Drawn(data)
    groups_drawn = drawn.integers(2, len(reviewers))
    labels = {r: str(g) for r, g in zip(reviewers, groups_drawn, strict=True)}
    holding = drawn.below((len(reviewers),), 0.6)
    holders = {r for r, holds in zip(reviewers, holding, strict=True) if holds}
    groups = np.array([labels[r] for r in venue.reviewer_ids], dtype=object)
    mask = np.array([r in holders for r in venue.reviewer_ids], dtype=bool)
    problem = build(
        venue,
        (MaxPerGroup(groups, limit), RequireAttribute(mask, min_count=min_count, name="senior")),
    )
    expected = reference(venue, groups=labels, limit=limit, holders=holders, min_count=min_count)
    if expected is None:
        with pytest.raises(Infeasible) as error:
            IlpSolver().solve(problem)
        assert error.value.diagnosis.causes
        return
    try:
        result = IlpSolver().solve(problem)
    except ValueError as error:
        assert "largest number a float can hold" in str(error)
        return
    check(problem, result, venue, expected)
    assert close(result.objective, expected, venue)
    try:  # the service path: refuses inert options in words, else the same optimum
        routed = solve(problem)
    except OptionError:
        return
    assert close(routed.objective, expected, venue)


@SETTINGS
@given(venue=venues(), q=st.sampled_from([0.5, 0.8, 1.0]), seed=st.integers(0, 2**32 - 1))
def test_randomized_samples_are_feasible_and_bounded(venue: Venue, q: float, seed: int) -> None:
    problem = build(venue)
    expected = reference(venue)
    if expected is None:
        with pytest.raises(Infeasible):
            RandomizedSolver(q=q).solve(problem, seed=seed)
        return
    try:
        result = RandomizedSolver(q=q).solve(problem, seed=seed)
    except Infeasible as error:  # the probability cap can leave no fractional solution
        assert q < 1.0 and error.diagnosis.causes
        return
    except ValueError as error:
        assert "largest number a float can hold" in str(error)
        return
    check(problem, result, venue, expected)
    assert result.objective <= expected or close(result.objective, expected, venue)


def reference_fair(venue: Venue) -> tuple[float, float] | None:
    """(best lowest paper score, best total at that floor) by two plain PuLP models."""
    problem = build(venue)
    pairs = list(range(problem.n_pairs))
    fair = [p for p in range(problem.n_papers) if problem.demand[p] > 0]

    def base(name: str) -> tuple[pulp.LpProblem, dict[int, pulp.LpVariable]]:
        model = pulp.LpProblem(name, pulp.LpMaximize)
        x = {i: pulp.LpVariable(f"x{i}", cat="Binary") for i in pairs}
        for p in range(problem.n_papers):
            model += pulp.lpSum(x[i] for i in pairs if problem.pair_paper[i] == p) == int(
                problem.demand[p]
            )
        for r in range(problem.n_reviewers):
            load = pulp.lpSum(x[i] for i in pairs if problem.pair_reviewer[i] == r)
            model += load <= int(problem.max_load[r])
            model += load >= int(problem.min_load[r])
        for i in np.flatnonzero(problem.forced):
            model += x[int(i)] == 1
        return model, x

    def paper(x, p):
        return pulp.lpSum(
            float(problem.pair_score[i]) * x[i] for i in pairs if problem.pair_paper[i] == p
        )

    first, x = base("lowest")
    t = pulp.LpVariable("t", lowBound=None if fair else 0, upBound=None if fair else 0)
    first += t
    for p in fair:
        first += paper(x, p) >= t
    if pulp.LpStatus[first.solve(pulp.HiGHS(msg=False, gapRel=0))] != "Optimal":
        return None
    lowest = float(t.value()) if fair else 0.0
    second, y = base("total")
    second += pulp.lpSum(float(problem.pair_score[i]) * y[i] for i in pairs)
    for p in fair:
        second += paper(y, p) >= lowest - 1e-7
    second.solve(pulp.HiGHS(msg=False, gapRel=0))
    return lowest, float(pulp.value(second.objective) or 0.0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(venue=venues().filter(lambda v: np.all(np.abs(v.table["score"]) <= 10)))
def test_fairness_matches_the_two_stage_reference(venue: Venue) -> None:
    from matching import Fairness

    expected = reference_fair(venue)
    problem = build(venue, (Fairness(),))
    if expected is None:
        with pytest.raises(Infeasible):
            IlpSolver().solve(problem)
        return
    result = IlpSolver().solve(problem)
    assert_hard_constraints(build(venue), result)
    totals = np.bincount(
        problem.pair_paper[result.selected],
        weights=problem.pair_score[result.selected],
        minlength=problem.n_papers,
    )
    fair = problem.demand > 0
    lowest = float(totals[fair].min()) if fair.any() else 0.0
    assert lowest == pytest.approx(expected[0], abs=1e-6)
    assert result.objective == pytest.approx(expected[1], abs=1e-5)
    assert result.parameters["min_paper_score_bound"] >= lowest - 1e-9
