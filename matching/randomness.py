"""How random a randomized assignment is, measured on its marginals.

A randomized solver (:class:`~matching.solvers.RandomizedSolver`,
:class:`~matching.solvers.PerturbedSolver`) computes a fractional assignment ``x``: ``x[e]``
is the probability that candidate pair ``e`` is in the sampled assignment (forced pairs
have probability 1), and then samples an assignment with exactly these marginals. The
figures below are functions of ``x`` alone, so they describe the DISTRIBUTION a run was
drawn from, not the one sample a chair sees. Definitions (``E`` the candidate pairs, ``P``
the papers that need at least one reviewer, ``s`` the scores):

- ``quality_ratio``: expected total score over the deterministic optimum,
  ``sum_e s_e x_e / OPT`` (the share of the best assignment's quality kept; 1 for the
  deterministic optimum). ``None`` when ``OPT <= 0`` (a ratio would not mean "share").
- ``max_probability``: ``max_e x_e``, the highest chance any reviewer has of getting any
  given paper (what a colluding reviewer can count on). Pinned pairs count (they are
  certain), so it is 1 when a pair is pinned; ``max_unpinned_probability`` leaves them out.
- ``avg_max_probability``: mean over ``P`` of ``max_{e in p} x_e``.
- ``l2_norm``: ``sqrt(sum_e x_e^2)``; the deterministic optimum has ``sqrt(total
  demand)``, and lower values mean the probability is spread over more pairs.
- ``entropy``: ``-sum_e x_e ln x_e`` in nats, over the pairs with ``0 < x_e < 1`` (pairs at
  0 or 1 contribute 0): 0 for any deterministic assignment, larger when probability is
  spread over more pairs more evenly.
- ``support_size``: the number of pairs with ``x_e > 0`` (pairs that can be drawn).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from matching.problem import AssignmentProblem

#: The metric names, in the order a table shows them.
METRICS = (
    "quality_ratio",
    "max_probability",
    "avg_max_probability",
    "l2_norm",
    "entropy",
    "support_size",
)

#: Each metric in a chair's words: (label, what it says).
DESCRIPTIONS = {
    "quality_ratio": (
        "Quality ratio",
        "expected total affinity over the best deterministic assignment's (1 = no loss)",
    ),
    "max_probability": (
        "Max pair probability",
        "the highest chance any reviewer has of getting any given paper (pins count as 1)",
    ),
    "avg_max_probability": (
        "Avg. max probability per paper",
        "mean over papers of the highest chance of one reviewer getting that paper",
    ),
    "l2_norm": (
        "L2 norm",
        "square root of the sum of squared pair probabilities; lower = more spread",
    ),
    "entropy": (
        "Entropy (nats)",
        "-sum of p ln p over the pairs' probabilities; 0 for a deterministic assignment",
    ),
    "support_size": (
        "Support size",
        "pairs that can be drawn (probability above 0)",
    ),
}

# marginals this close to 0 or 1 are 0 or 1 (solver round-off)
_EPS = 1e-9


def randomness_metrics(
    problem: AssignmentProblem, marginals: npt.ArrayLike, *, optimum: float
) -> dict[str, Any]:
    """The metrics of the module docstring for ``marginals`` ((n_pairs,) probabilities
    aligned with ``problem``'s pairs) against the deterministic optimum ``optimum`` (total
    score, problem units), plus ``expected_objective`` (``sum_e s_e x_e``) and
    ``max_unpinned_probability``. Every value is a plain float or int (or None)."""
    x = np.asarray(marginals, dtype=np.float64)
    if x.shape != (problem.n_pairs,):
        raise ValueError(f"marginals have shape {x.shape}, expected ({problem.n_pairs},)")
    if np.any(x < -_EPS) or np.any(x > 1 + _EPS) or not np.all(np.isfinite(x)):
        raise ValueError("marginals must be probabilities in [0, 1]")
    x = np.clip(x, 0.0, 1.0)
    x[x < _EPS] = 0.0
    x[x > 1.0 - _EPS] = 1.0
    expected = float(problem.pair_score @ x) if len(x) else 0.0
    needing = problem.demand > 0
    per_paper = np.zeros(problem.n_papers)
    if len(x):
        np.maximum.at(per_paper, problem.pair_paper, x)
    inside = x[(x > 0.0) & (x < 1.0)]
    unpinned = x[~problem.forced]
    return {
        "quality_ratio": expected / optimum if optimum > 0 else None,
        "max_probability": float(x.max()) if len(x) else 0.0,
        "avg_max_probability": float(per_paper[needing].mean()) if needing.any() else 0.0,
        "l2_norm": float(math.sqrt(float(x @ x))),
        "entropy": float(-(inside * np.log(inside)).sum()) + 0.0,  # no -0.0
        "support_size": int(np.count_nonzero(x)),
        "expected_objective": expected,
        "max_unpinned_probability": float(unpinned.max()) if len(unpinned) else 0.0,
    }


def randomness_report(
    problem: AssignmentProblem,
    marginals: npt.ArrayLike,
    *,
    optimum: float,
    optimum_selected: npt.ArrayLike,
) -> dict[str, Any]:
    """The metrics of ``marginals`` (top level) and, under ``deterministic``, the same
    metrics of the deterministic optimum (``optimum_selected``: indices of its pairs in
    ``problem``), side by side; ``deterministic_optimum`` is ``optimum``."""
    chosen = np.zeros(problem.n_pairs)
    chosen[np.asarray(optimum_selected, dtype=np.int64)] = 1.0
    return {
        **randomness_metrics(problem, marginals, optimum=optimum),
        "deterministic_optimum": optimum,
        "deterministic": randomness_metrics(problem, chosen, optimum=optimum),
    }
