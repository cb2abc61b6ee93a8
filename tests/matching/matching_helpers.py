"""Random instances and a checker of every hard constraint.

An instance's numbers come from a :class:`Randomness`: :class:`Seeded` (a fixed instance, for
the example tests) or :class:`Drawn` (drawn by Hypothesis, for the property tests, so that a
failing instance shrinks to a small one and replays)."""

from __future__ import annotations

from typing import Protocol

import numpy as np
from hypothesis import strategies as st

from matching import Assignment, AssignmentProblem
from matching.constraints import MinScore


class Randomness(Protocol):
    def uniform(self, shape: tuple[int, ...]) -> np.ndarray:
        """Numbers in [0, 1)."""
        ...

    def below(self, shape: tuple[int, ...], rate: float) -> np.ndarray:
        """True with probability ``rate``."""
        ...

    def integers(self, high: int, size: int) -> np.ndarray:
        """Integers in [0, high)."""
        ...

    def sample(self, population: int, size: int) -> np.ndarray:
        """``size`` distinct integers of [0, population)."""
        ...


class Seeded:
    """numpy's generator from a seed (the calls the example tests' instances were made with)."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def uniform(self, shape: tuple[int, ...]) -> np.ndarray:
        return self.rng.random(shape)

    def below(self, shape: tuple[int, ...], rate: float) -> np.ndarray:
        return self.rng.random(shape) < rate

    def integers(self, high: int, size: int) -> np.ndarray:
        return self.rng.integers(0, high, size)

    def sample(self, population: int, size: int) -> np.ndarray:
        return self.rng.choice(population, size=size, replace=False)


# Hypothesis draws an integer of up to 8 bits about uniformly, wider ones mostly small: a
# number in [0, 1) is two such bytes, a coin of probability p one byte.
BYTE = st.integers(0, 255)


class Drawn:
    """Numbers drawn by Hypothesis through ``st.data()``: they shrink towards 0 (scores 0, no
    conflicts, the first indices) and Hypothesis prints them with a failure."""

    def __init__(self, data: st.DataObject):
        self.data = data

    def _bytes(self, shape: tuple[int, ...]) -> np.ndarray:
        size = int(np.prod(shape))
        drawn = self.data.draw(st.lists(BYTE, min_size=size, max_size=size))
        return np.array(drawn, dtype=np.int64).reshape(shape)

    def uniform(self, shape: tuple[int, ...]) -> np.ndarray:
        return (self._bytes(shape) * 256 + self._bytes(shape)) / 65536.0

    def below(self, shape: tuple[int, ...], rate: float) -> np.ndarray:
        # a byte at or above 256 (1 - rate) is True, so shrinking turns them False
        return self._bytes(shape) >= round(256 * (1 - rate))

    def integers(self, high: int, size: int) -> np.ndarray:
        drawn = self.data.draw(st.lists(st.integers(0, high - 1), min_size=size, max_size=size))
        return np.array(drawn, dtype=np.int64)

    def sample(self, population: int, size: int) -> np.ndarray:
        picks = self.data.draw(
            st.lists(st.integers(0, population - 1), min_size=size, max_size=size, unique=True)
        )
        return np.array(picks, dtype=np.int64)


def randomness(source: int | Randomness) -> Randomness:
    return Seeded(int(source)) if isinstance(source, int | np.integer) else source


def random_problem(
    source: int | Randomness,
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
    rng = randomness(source)
    scores = rng.uniform((n_papers, n_reviewers))
    if integer_scores:
        scores = np.floor(scores * 10)
    conflicts = rng.below((n_papers, n_reviewers), conflict_rate)
    forced = np.zeros_like(conflicts)
    forced_count = min(forced_count, int((~conflicts).sum()))
    if forced_count:
        open_cells = np.argwhere(~conflicts)
        picks = open_cells[rng.sample(len(open_cells), forced_count)]
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
