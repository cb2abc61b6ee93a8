"""Emergency re-assignment: keeps every untouched live pair when it can, moves the fewest
otherwise, and is optimal among the assignments that keep as many; checked against an
independent PuLP model (lexicographic: most kept pairs, then the best total score)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pulp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matching_helpers import Drawn, Randomness, assert_hard_constraints, randomness

from matching import AssignmentProblem, FlowSolver, Infeasible, OptionError
from matching.constraints import MinScore
from matching.reassign import reassign


def _lexicographic_pulp(problem: AssignmentProblem, keep: np.ndarray) -> tuple[int, float] | None:
    """(most keep pairs any feasible assignment has, best total score among those), by two
    integer programs written pair by pair; None when infeasible."""
    pairs = range(problem.n_pairs)

    def model(sense_objective: str, kept_at_least: int | None) -> tuple[int, float] | None:
        lp = pulp.LpProblem("reassign", pulp.LpMaximize)
        x = [pulp.LpVariable(f"x{e}", cat="Binary") for e in pairs]
        if sense_objective == "kept":
            lp += pulp.lpSum(x[e] for e in pairs if keep[e])
        else:
            lp += pulp.lpSum(float(problem.pair_score[e]) * x[e] for e in pairs)
        for p in range(problem.n_papers):
            lp += pulp.lpSum(x[e] for e in pairs if problem.pair_paper[e] == p) == int(
                problem.demand[p]
            )
        for r in range(problem.n_reviewers):
            load = pulp.lpSum(x[e] for e in pairs if problem.pair_reviewer[e] == r)
            lp += load <= int(problem.max_load[r])
            lp += load >= int(problem.min_load[r])
        for e in pairs:
            if problem.forced[e]:
                lp += x[e] == 1
        if kept_at_least is not None:
            lp += pulp.lpSum(x[e] for e in pairs if keep[e]) >= kept_at_least
        status = lp.solve(pulp.PULP_CBC_CMD(msg=False))
        if pulp.LpStatus[status] != "Optimal":
            return None
        values = np.array([round(v.value() or 0) for v in x])
        return int(values[keep].sum()), float(problem.pair_score @ values)

    first = model("kept", None)
    if first is None:
        return None
    second = model("score", first[0])
    assert second is not None
    return first[0], second[1]


def _scenario(
    source: int | Randomness,
    papers: int,
    reviewers: int,
    withdraw: int,
    slack: int,
    density: float,
    cut: int = 0,
):
    """A live optimum, then ``withdraw`` reviewers gone (their pairs no longer
    candidates, max load 0), loads capped at the live loads plus ``slack``, and ``cut``
    reviewers asking for one paper fewer than they have (so some live pairs must move)."""
    rng = randomness(source)
    scores = np.round(rng.uniform((papers, reviewers)), 3)
    candidates = rng.below((papers, reviewers), density)
    demand = 2
    max_load = -(-demand * papers // reviewers) + 1
    base = AssignmentProblem.from_dense(
        scores,
        paper_ids=[f"p{i}" for i in range(papers)],
        reviewer_ids=[f"r{j}" for j in range(reviewers)],
        demand=demand,
        max_load=max_load,
        conflicts=~candidates,
    )
    try:
        live = FlowSolver().solve(base)
    except Infeasible:
        return None
    loads = np.bincount(base.pair_reviewer[live.selected], minlength=reviewers)
    gone = rng.sample(reviewers, withdraw)
    max_loads = np.minimum(loads + slack, max_load)
    busy = np.setdiff1d(np.flatnonzero(loads > 0), gone)
    lowered = busy[rng.sample(len(busy), min(cut, len(busy)))]
    max_loads[lowered] = loads[lowered] - 1
    max_loads[gone] = 0
    survivors = ~np.isin(base.pair_reviewer, gone)
    now = replace(base, max_load=max_loads, min_load=np.zeros(reviewers, np.int64)).keep_pairs(
        survivors
    )
    keep = live.mask[survivors]
    return now, keep


@settings(max_examples=40, deadline=None)
@given(
    data=st.data(),
    shape=st.tuples(st.integers(3, 7), st.integers(4, 8)),
    withdraw=st.integers(1, 2),
    slack=st.integers(0, 2),
    density=st.sampled_from([0.5, 0.8, 1.0]),
    cut=st.integers(0, 2),
)
def test_matches_an_independent_lexicographic_model(
    data: st.DataObject,
    shape: tuple[int, int],
    withdraw: int,
    slack: int,
    density: float,
    cut: int,
) -> None:
    built = _scenario(Drawn(data), *shape, withdraw, slack, density, cut)
    if built is None:
        return
    problem, keep = built
    expected = _lexicographic_pulp(problem, keep)
    if expected is None:
        with pytest.raises(Infeasible):
            reassign(problem, keep)
        return
    result = reassign(problem, keep)
    assignment = result.assignment
    assert_hard_constraints(problem, assignment)
    best_kept, best_score = expected
    assert len(result.kept) == best_kept
    assert assignment.objective == pytest.approx(best_score, abs=1e-6)
    assert result.stage == ("fill" if best_kept == int(keep.sum()) else "moves")
    # fewest changes: the added pairs are exactly the demand the kept pairs leave open
    assert len(result.added) == int(problem.demand.sum()) - best_kept
    assert len(result.moved) == int(keep.sum()) - best_kept
    assert assignment.objective <= assignment.upper_bound + 1e-9


def test_every_untouched_pair_is_kept_and_only_vacated_slots_are_filled() -> None:
    built = _scenario(7, 8, 10, 2, 2, 1.0)
    assert built is not None
    problem, keep = built
    result = reassign(problem, keep)
    assert result.stage == "fill"
    assert np.all(result.assignment.mask[keep])
    assert len(result.moved) == 0
    vacated = problem.demand - np.bincount(problem.pair_paper[keep], minlength=problem.n_papers)
    added_per_paper = np.bincount(problem.pair_paper[result.added], minlength=problem.n_papers)
    np.testing.assert_array_equal(added_per_paper, vacated)


def test_moves_when_no_free_reviewer_can_take_a_short_paper() -> None:
    """p0 lost r2; its only other candidate r0 is full with p1, which r1 can take: the
    fewest moves are one: (p1, r0) -> (p1, r1), then (p0, r0)."""
    problem = AssignmentProblem.from_pairs(
        ["p0", "p1", "p1"],
        ["r0", "r0", "r1"],
        [0.5, 0.9, 0.2],
        demand=1,
        max_load=1,
        paper_ids=["p0", "p1"],
        reviewer_ids=["r0", "r1"],
    )
    keep = np.array([False, True, False])  # (p1, r0) is live
    result = reassign(problem, keep)
    assert result.stage == "moves"
    pairs = {(problem.pair_paper[e], problem.pair_reviewer[e]) for e in result.assignment.selected}
    assert pairs == {(0, 0), (1, 1)}
    assert len(result.moved) == 1 and len(result.added) == 2
    assert result.parameters["moved"] == 1


def test_pins_are_hard_and_side_constraints_are_refused() -> None:
    built = _scenario(7, 8, 8, 1, 2, 1.0)
    assert built is not None
    problem, keep = built
    open_pairs = np.flatnonzero(~keep & (problem.max_load[problem.pair_reviewer] > 0))
    pinned = problem.forced.copy()
    pinned[open_pairs[0]] = True
    result = reassign(replace(problem, forced=pinned), keep)
    assert open_pairs[0] in result.assignment.selected
    with pytest.raises(OptionError):
        reassign(problem.with_side_constraints(MinScore(0.1)), keep)
    with pytest.raises(ValueError):
        reassign(problem, keep[:-1])


def test_infeasible_even_with_moves_is_diagnosed() -> None:
    problem = AssignmentProblem.from_pairs(
        ["p0", "p1"], ["r0", "r0"], [1.0, 1.0], demand=1, max_load=1
    )
    with pytest.raises(Infeasible) as caught:
        reassign(problem, np.array([True, False]))
    assert caught.value.diagnosis.causes
