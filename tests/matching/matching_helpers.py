"""Random instances and a checker of every hard constraint."""

from __future__ import annotations

import numpy as np

from matching import Assignment, AssignmentProblem
from matching.constraints import MinScore


def random_problem(
    seed: int,
    n_papers: int,
    n_reviewers: int,
    *,
    demand: int = 2,
    min_load: int = 0,
    max_load: int = 4,
    conflict_rate: float = 0.15,
    forced_count: int = 0,
    integer_scores: bool = False,
) -> AssignmentProblem:
    rng = np.random.default_rng(seed)
    scores = rng.random((n_papers, n_reviewers))
    if integer_scores:
        scores = np.floor(scores * 10)
    conflicts = rng.random((n_papers, n_reviewers)) < conflict_rate
    forced = np.zeros_like(conflicts)
    forced_count = min(forced_count, int((~conflicts).sum()))
    if forced_count:
        open_cells = np.argwhere(~conflicts)
        picks = open_cells[rng.choice(len(open_cells), size=forced_count, replace=False)]
        for p, r in picks:
            if forced[p].sum() < demand and forced[:, r].sum() < max_load:
                forced[p, r] = True
    return AssignmentProblem.from_dense(
        scores,
        paper_ids=[f"p{i}" for i in range(n_papers)],
        reviewer_ids=[f"r{j}" for j in range(n_reviewers)],
        demand=demand,
        min_load=min_load,
        max_load=max_load,
        conflicts=conflicts,
        forced=forced,
    )


def assert_hard_constraints(problem: AssignmentProblem, assignment: Assignment) -> None:
    """Demand met exactly, loads within [min, max], only candidates (so never a
    conflict), every forced pair chosen, no pair twice, pair filters respected."""
    selected = assignment.selected
    assert len(np.unique(selected)) == len(selected)
    assert np.all((selected >= 0) & (selected < problem.n_pairs))
    papers = np.bincount(problem.pair_paper[selected], minlength=problem.n_papers)
    np.testing.assert_array_equal(papers, problem.demand)
    loads = np.bincount(problem.pair_reviewer[selected], minlength=problem.n_reviewers)
    assert np.all(loads >= problem.min_load) and np.all(loads <= problem.max_load)
    assert np.all(assignment.mask[problem.forced])
    for constraint in problem.side_constraints:
        if isinstance(constraint, MinScore):
            chosen = assignment.mask & ~problem.forced
            assert np.all(problem.pair_score[chosen] >= constraint.threshold)
    assert abs(assignment.objective - problem.pair_score[selected].sum()) < 1e-9
    if assignment.solver != "randomized":  # its bound is on the expected objective
        assert assignment.upper_bound >= assignment.objective - 1e-9


def pairs_set(problem: AssignmentProblem, assignment: Assignment) -> set[tuple[int, int]]:
    return set(
        zip(
            problem.pair_paper[assignment.selected].tolist(),
            problem.pair_reviewer[assignment.selected].tolist(),
            strict=True,
        )
    )
