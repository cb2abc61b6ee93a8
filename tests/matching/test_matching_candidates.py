import numpy as np
import pytest
import scipy.sparse as sp

from matching import FlowSolver, Infeasible, solve
from matching.candidates import sparse_problem, top_k_pairs


def brute_top_k(scores, conflicts, k):
    masked = np.where(conflicts, -np.inf, scores)
    keep = np.zeros_like(conflicts)
    for p in range(scores.shape[0]):
        keep[p, np.argsort(-masked[p])[:k]] = True
    for r in range(scores.shape[1]):
        keep[np.argsort(-masked[:, r])[:k], r] = True
    return keep & ~conflicts


@pytest.mark.parametrize("conflict_form", ["index", "mask", "sparse"])
def test_top_k_union_from_blocks_equals_dense(conflict_form: str) -> None:
    rng = np.random.default_rng(0)
    scores = rng.random((37, 23))
    conflicts = rng.random(scores.shape) < 0.1
    given = {"index": np.nonzero(conflicts), "mask": conflicts, "sparse": sp.csr_array(conflicts)}[
        conflict_form
    ]
    expected = brute_top_k(scores, conflicts, 4)
    dense = top_k_pairs(scores, 4, conflicts=given, shape=scores.shape)
    blocks = top_k_pairs(
        [scores[i : i + 5] for i in range(0, 37, 5)], 4, conflicts=given, shape=scores.shape
    )
    for paper, reviewer, score in (dense, blocks):
        got = np.zeros_like(conflicts)
        got[paper, reviewer] = True
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(score, scores[paper, reviewer])


def test_sparse_problem_grows_k_until_feasible() -> None:
    rng = np.random.default_rng(1)
    n = 30
    scores = rng.random((n, n))
    # Reviewers 0..2 dominate every paper, but only 3 slots each: K=1 cannot be feasible.
    scores[:, :3] += 10
    problem = sparse_problem(
        scores,
        paper_ids=[f"p{i}" for i in range(n)],
        reviewer_ids=[f"r{j}" for j in range(n)],
        demand=2,
        max_load=3,
        min_load=1,
        k=1,
    )
    result = FlowSolver().solve(problem)
    assert len(result.selected) == 2 * n
    full = solve(
        sparse_problem(
            scores,
            paper_ids=[f"p{i}" for i in range(n)],
            reviewer_ids=[f"r{j}" for j in range(n)],
            demand=2,
            max_load=3,
            min_load=1,
            k=n,
        )
    )
    assert result.objective <= full.objective + 1e-9


def test_sparse_problem_infeasible_in_full_raises() -> None:
    scores = np.ones((10, 3))
    with pytest.raises(Infeasible, match="total demand 20 exceeds total capacity 9"):
        sparse_problem(
            scores,
            paper_ids=[f"p{i}" for i in range(10)],
            reviewer_ids=["a", "b", "c"],
            demand=2,
            max_load=3,
            k=1,
        )


def test_forced_pairs_kept_and_conflicts_never() -> None:
    rng = np.random.default_rng(2)
    scores = rng.random((8, 8))
    forced = (np.array([0]), np.array([int(np.argmin(scores[0]))]))
    conflicts = (np.array([1]), np.array([int(np.argmax(scores[1]))]))
    problem = sparse_problem(
        scores,
        paper_ids=list("abcdefgh"),
        reviewer_ids=list("ABCDEFGH"),
        demand=1,
        max_load=2,
        k=1,
        forced=forced,
        conflicts=conflicts,
    )
    assert problem.forced.sum() == 1
    pairs = set(zip(problem.pair_paper.tolist(), problem.pair_reviewer.tolist(), strict=True))
    assert (1, int(conflicts[1][0])) not in pairs
    assert (0, int(forced[1][0])) in pairs
