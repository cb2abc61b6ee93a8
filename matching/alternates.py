"""Next-best reviewers per paper, for chairs replacing a declined assignment."""

from __future__ import annotations

import numpy as np
import pandas as pd

from matching.assignment import Assignment
from matching.problem import AssignmentProblem


def alternates(problem: AssignmentProblem, assignment: Assignment, n: int) -> pd.DataFrame:
    """Top-``n`` unassigned eligible reviewers per paper, best score first.

    Eligible: a candidate pair (so never a conflict) whose reviewer has a positive max
    load. Returns columns paper_id, reviewer_id, score, rank (1 = best), sorted by paper
    (problem order) then rank."""
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    if assignment.problem is not problem and assignment.problem.n_pairs != problem.n_pairs:
        raise ValueError("assignment was made for a different problem")
    open_pairs = ~assignment.mask & (problem.max_load[problem.pair_reviewer] > 0)
    index = np.flatnonzero(open_pairs)
    papers = problem.pair_paper[index]
    scores = problem.pair_score[index]
    order = np.lexsort((problem.pair_reviewer[index], -scores, papers))
    index, papers = index[order], papers[order]
    starts = np.searchsorted(papers, papers, side="left")
    rank = np.arange(len(papers)) - starts + 1
    keep = rank <= n
    index, rank = index[keep], rank[keep]
    return pd.DataFrame(
        {
            "paper_id": np.asarray(problem.paper_ids, dtype=object)[problem.pair_paper[index]],
            "reviewer_id": np.asarray(problem.reviewer_ids, dtype=object)[
                problem.pair_reviewer[index]
            ],
            "score": problem.pair_score[index],
            "rank": rank.astype(np.int64),
        }
    )
