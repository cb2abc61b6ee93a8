"""The result of a solve: pairs, objective, certificate and statistics."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from matching.problem import AssignmentProblem, BoolArray, IntArray


def total_score(scores: npt.ArrayLike) -> float:
    """Sum of ``scores`` as a float; a ``ValueError`` in words when finite scores add up
    past the largest float (e.g. several scores of 1e308)."""
    values = np.asarray(scores, dtype=np.float64)
    with np.errstate(over="ignore"):
        total = float(values.sum()) if len(values) else 0.0
    if not math.isfinite(total):
        raise ValueError(
            f"the total score of {len(values)} assigned pairs exceeds the largest number a "
            f"float can hold (largest score {float(np.abs(values).max()):.3g}); divide the "
            "scores by a constant"
        )
    return total


@dataclass(frozen=True, eq=False)
class Assignment:
    """Chosen candidate pairs of ``problem`` and how good they are.

    ``selected`` indexes into the problem's pair arrays. ``objective`` is the total score of
    the selected pairs, in the problem's units; ``upper_bound`` a proven upper bound on the
    best objective of ANY assignment meeting the problem's hard constraints (for the flow
    solver the optimum itself, up to a stated rounding; for the ILP the solver's dual
    bound; for the randomized solver the deterministic optimum), so ``objective <=
    upper_bound`` always and ``gap = (upper_bound - objective) / max(1, |upper_bound|)``.
    ``parameters`` holds what else a solver measured (status, certificate, expectations);
    ``warnings`` the sentences :func:`matching.validate.validate_options` returned (inert
    options).
    """

    problem: AssignmentProblem
    selected: IntArray
    objective: float
    upper_bound: float
    solver: str
    parameters: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    solve_seconds: float = 0.0
    warnings: tuple[str, ...] = ()

    @property
    def gap(self) -> float:
        return max(0.0, (self.upper_bound - self.objective) / max(1.0, abs(self.upper_bound)))

    @property
    def mask(self) -> BoolArray:
        chosen = np.zeros(self.problem.n_pairs, dtype=bool)
        chosen[self.selected] = True
        return chosen

    def pairs(self) -> pd.DataFrame:
        """One row per assigned pair: paper_id, reviewer_id, score (sorted by paper, score)."""
        p = self.problem
        frame = pd.DataFrame(
            {
                "paper_id": np.asarray(p.paper_ids, dtype=object)[p.pair_paper[self.selected]],
                "reviewer_id": np.asarray(p.reviewer_ids, dtype=object)[
                    p.pair_reviewer[self.selected]
                ],
                "score": p.pair_score[self.selected],
            }
        )
        return frame.sort_values(["paper_id", "score"], ascending=[True, False], ignore_index=True)

    def paper_stats(self) -> pd.DataFrame:
        """Per paper: demand, assigned count, min/mean/max assigned score."""
        p = self.problem
        papers = p.pair_paper[self.selected]
        scores = p.pair_score[self.selected]
        count = np.bincount(papers, minlength=p.n_papers)
        total = np.bincount(papers, weights=scores, minlength=p.n_papers)
        low = np.full(p.n_papers, np.nan)
        high = np.full(p.n_papers, np.nan)
        if len(papers):
            np.fmin.at(low, papers, scores)
            np.fmax.at(high, papers, scores)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        return pd.DataFrame(
            {
                "paper_id": list(p.paper_ids),
                "demand": p.demand,
                "assigned": count,
                "min_score": low,
                "mean_score": mean,
                "max_score": high,
            }
        )

    def reviewer_stats(self) -> pd.DataFrame:
        """Per reviewer: min/max load, assigned count, mean assigned score."""
        p = self.problem
        reviewers = p.pair_reviewer[self.selected]
        scores = p.pair_score[self.selected]
        count = np.bincount(reviewers, minlength=p.n_reviewers)
        total = np.bincount(reviewers, weights=scores, minlength=p.n_reviewers)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        return pd.DataFrame(
            {
                "reviewer_id": list(p.reviewer_ids),
                "min_load": p.min_load,
                "max_load": p.max_load,
                "assigned": count,
                "mean_score": mean,
            }
        )

    def summary(self) -> dict[str, Any]:
        """Figures a chair reads first."""
        papers = self.paper_stats()
        reviewers = self.reviewer_stats()
        scores = self.problem.pair_score[self.selected]
        return {
            "solver": self.solver,
            "papers": self.problem.n_papers,
            "reviewers": self.problem.n_reviewers,
            "pairs_assigned": len(self.selected),
            "objective": self.objective,
            "upper_bound": self.upper_bound,
            "gap": self.gap,
            "mean_score": float(scores.mean()) if len(scores) else float("nan"),
            "min_score": float(scores.min()) if len(scores) else float("nan"),
            "min_paper_mean_score": float(papers["mean_score"].min()),
            "load_min": int(reviewers["assigned"].min()) if len(reviewers) else 0,
            "load_max": int(reviewers["assigned"].max()) if len(reviewers) else 0,
            "seed": self.seed,
            "parameters": self.parameters,
            "warnings": list(self.warnings),
            "solve_seconds": self.solve_seconds,
        }
