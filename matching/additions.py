"""Whether a pair can be added to an assignment, and why not: the one rule behind the edge
browser's "can add", a paper's alternates and a chair's edits.

:func:`addition_obstacles` lists every reason, in :data:`OBSTACLE_KINDS` order:

- ``assigned``: the reviewer already reviews the paper;
- ``conflict``, ``bid``, ``forbid``: the pair is excluded (words of
  :func:`matching.violations.exclusion_detail`);
- ``unscored``: the pair has no stored score;
- ``max_load``: the reviewer is at their max load;
- ``demand``: the paper has all the reviewers it needs (not when the new reviewer replaces
  one of them).

An obstacle is ``hard`` when nothing adds the pair (already there, a conflict of interest,
an excluding bid); the others can be forced: a chair's own forbid is lifted by adding the
pair, an unscored pair is scored on request, and going over a limit is a chair's explicit
choice (``force``). Each caller decides which it accepts; the rule is the same for all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from matching.violations import EXCLUSION_KINDS, exclusion_detail

OBSTACLE_KINDS = ("assigned", *EXCLUSION_KINDS, "unscored", "max_load", "demand")
HARD_OBSTACLES = frozenset({"assigned", "conflict", "bid"})
#: The obstacles a chair's ``force`` overrides: the load and demand limits.
LIMIT_OBSTACLES = frozenset({"max_load", "demand"})


@dataclass(frozen=True)
class Obstacle:
    """One reason why (paper, reviewer) cannot simply be added; ``detail`` in words."""

    kind: str
    paper_id: str
    reviewer_id: str
    detail: str

    @property
    def hard(self) -> bool:
        """Nothing adds the pair (see the module docstring); otherwise it can be forced."""
        return self.kind in HARD_OBSTACLES

    def describe(self) -> str:
        return f"({self.paper_id}, {self.reviewer_id}): {self.detail}"


def addition_obstacles(
    paper_id: str,
    reviewer_id: str,
    *,
    assigned: bool,
    load: int,
    max_load: int,
    count: int,
    demand: int,
    exclusions: Sequence[tuple[str, str]] = (),
    scored: bool = True,
    replacing: bool = False,
) -> list[Obstacle]:
    """Why (``paper_id``, ``reviewer_id``) cannot simply be added to an assignment (empty:
    it can): ``assigned`` whether the pair is in it already; ``load``/``max_load`` the
    reviewer's papers now and their limit; ``count``/``demand`` the paper's reviewers now
    and its demand; ``exclusions`` the pair's ``(kind, reason)`` exclusions
    (:data:`matching.violations.EXCLUSION_KINDS`); ``scored`` whether the pair has a stored
    score; ``replacing``: another reviewer of the paper leaves (a swap, an alternate), so
    the paper's demand is no obstacle. A pair already there changes no count: it gets no
    score or limit obstacle."""

    def obstacle(kind: str, detail: str) -> Obstacle:
        return Obstacle(kind, paper_id, reviewer_id, detail)

    unknown = [kind for kind, _ in exclusions if kind not in EXCLUSION_KINDS]
    if unknown:
        raise ValueError(f"unknown exclusion {unknown[0]!r}; use one of {EXCLUSION_KINDS}")
    found = []
    if assigned:
        found.append(obstacle("assigned", f"{reviewer_id!r} already reviews {paper_id!r}"))
    for kind in EXCLUSION_KINDS:
        found += [obstacle(k, exclusion_detail(k, why)) for k, why in exclusions if k == kind]
    if assigned:
        return found
    if not scored:
        found.append(obstacle("unscored", "the pair has no stored score"))
    if load + 1 > max_load:
        found.append(
            obstacle(
                "max_load",
                f"reviewer {reviewer_id!r} would review {load + 1} papers, over their max "
                f"load of {max_load}",
            )
        )
    if not replacing and count + 1 > demand:
        found.append(
            obstacle(
                "demand",
                f"paper {paper_id!r} would get {count + 1} reviewers, over its demand of {demand}",
            )
        )
    return found
