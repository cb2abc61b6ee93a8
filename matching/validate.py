"""Check a problem's options before solving: refuse what cannot work, warn about what is inert.

:func:`validate_options` is what the service layer calls once a problem is built (and what
:func:`matching.solve` calls itself): it raises :class:`OptionError` (a ``ValueError``) for
an option that cannot act or a solver that cannot honour it, in a chair's words, and returns
warnings for options that are harmless but do nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from matching.constraints import (
    Fairness,
    MaxPerGroup,
    MinScore,
    RequireAttribute,
    attribute_mask,
    group_codes,
)
from matching.problem import AssignmentProblem

SOLVER_NAMES = ("auto", "flow", "ilp", "pulp", "randomized", "perturbed")
SOLVER_OPTIONS = {
    "auto": set(),
    "flow": {"max_scale", "restrict", "k"},
    "ilp": {"backend", "gap", "fairness_gap", "msg", "threads", "default_time_limit"},
    "pulp": {"backend", "gap", "fairness_gap", "msg", "threads", "default_time_limit"},
    "randomized": {"q"},
    "perturbed": {"beta", "q", "pieces", "max_scale"},
}


class OptionError(ValueError):
    """An option that cannot act, or a combination that cannot work: the one option error
    of the project (the services raise it too, and every face maps it: CLI exit 1 naming
    the flag, API 422 naming the field). ``option`` names it (here ``solver``,
    ``fairness``, ``max_per_group``, ``require_attribute``, ``min_score``,
    ``probability_cap``, ``perturbation``; the services name their parameters' fields)
    and the message says why in a chair's words."""

    def __init__(self, option: str, message: str):
        self.option = option
        self.message = message
        super().__init__(message)


def check_solver(solver: str) -> None:
    """:class:`OptionError` (option ``solver``) unless ``solver`` is one of
    :data:`SOLVER_NAMES`."""
    if solver not in SOLVER_NAMES:
        raise OptionError(
            "solver", f"unknown solver {solver!r}; choose one of {', '.join(SOLVER_NAMES)}"
        )


def describe(constraint: Any) -> str:
    """A side constraint in a chair's words."""
    if isinstance(constraint, Fairness):
        return f"fairness (keep {constraint.keep:g} of the best lowest paper score)"
    if isinstance(constraint, MaxPerGroup):
        return f"at most {_reviewers(constraint.limit)} of one group per paper"
    if isinstance(constraint, RequireAttribute):
        return f"at least {_reviewers(constraint.min_count)} with {constraint.name} per paper"
    if isinstance(constraint, MinScore):
        return f"minimum score {constraint.threshold:g}"
    return type(constraint).__name__


def _reviewers(count: int) -> str:
    return f"{count} reviewer" if count == 1 else f"{count} reviewers"


def needs_ilp_message(constraint: Any, solver: str) -> str:
    what = {
        Fairness: "fairness",
        MaxPerGroup: f"a per-group limit ({describe(constraint)})",
        RequireAttribute: f"a required attribute ({describe(constraint)})",
    }.get(type(constraint), describe(constraint))
    return (
        f"{what} needs the ILP solver (solver 'ilp' or 'auto'); the {solver} solver "
        "cannot honour it"
    )


def option_name(constraint: Any) -> str:
    return {
        Fairness: "fairness",
        MaxPerGroup: "max_per_group",
        RequireAttribute: "require_attribute",
        MinScore: "min_score",
    }.get(type(constraint), "side_constraints")


def validate_options(
    problem: AssignmentProblem,
    *,
    solver: str = "auto",
    strict: bool = True,
    **solver_options: Any,
) -> list[str]:
    """Refuse (raise :class:`OptionError`) or warn about the problem's side constraints and
    the solver choice; returns the warnings (possibly empty), each a sentence.

    Always refused (the option cannot act or cannot work): an unknown solver or solver
    option; a side constraint the chosen solver cannot honour (fairness, per-group limits
    and required attributes need the ILP; ``auto`` picks it); a per-group limit when no
    reviewer has a group; a required attribute that no reviewer has; fairness given twice;
    a probability cap outside [0, 1].

    Cannot bind (refused when ``strict``, the default; warned otherwise, which is what
    :func:`matching.solve` does): a per-group limit at or above every paper's demand, or
    when no paper has more candidate reviewers from one group than the limit; a required
    attribute with a minimum of 0, or that every reviewer who can take papers has (when
    every paper needs at least that many reviewers anyway); fairness with ``keep=0`` on
    non-negative scores (its floor is 0, which every paper meets).

    Warned: a minimum score at or below every candidate score (it removes nothing), several
    minimum scores (the highest acts), a probability cap of 1 (nothing randomized),
    fairness when no paper needs a reviewer.
    """
    check_solver(solver)
    unknown = sorted(set(solver_options) - SOLVER_OPTIONS[solver])
    if unknown:
        owners = [name for name, options in SOLVER_OPTIONS.items() if unknown[0] in options]
        where = f" (it belongs to the {owners[0]} solver)" if owners else ""
        raise OptionError(
            "solver", f"option {unknown[0]!r} does not apply to the {solver} solver{where}"
        )
    warnings: list[str] = []

    def inert(option: str, message: str) -> None:
        if strict:
            raise OptionError(option, message)
        warnings.append(message)

    constraints = list(problem.side_constraints)
    if solver in ("flow", "randomized", "perturbed"):
        for constraint in constraints:
            if isinstance(constraint, Fairness | MaxPerGroup | RequireAttribute):
                raise OptionError(option_name(constraint), needs_ilp_message(constraint, solver))
    usable = problem.max_load > 0
    candidate_usable = usable[problem.pair_reviewer] & (problem.demand[problem.pair_paper] > 0)
    fairness = [c for c in constraints if isinstance(c, Fairness)]
    if len(fairness) > 1:
        raise OptionError("fairness", "fairness is given more than once; give it once")
    for constraint in fairness:
        if not np.any(problem.demand > 0):
            warnings.append("fairness has no effect: no paper needs a reviewer")
        elif constraint.keep == 0 and np.all(problem.pair_score >= 0):
            inert(
                "fairness",
                "fairness with keep 0 lets every paper's score fall to 0, which "
                "every paper already meets with non-negative scores, so it cannot act; use a "
                "keep above 0 (1 keeps the best lowest paper score)",
            )
    minimums = [c for c in constraints if isinstance(c, MinScore)]
    if len(minimums) > 1:
        warnings.append(
            f"{len(minimums)} minimum scores are given; only the highest "
            f"({max(c.threshold for c in minimums):g}) acts"
        )
    free = ~problem.forced
    for constraint in minimums:
        if not np.any(free):
            continue
        lowest = float(problem.pair_score[free].min())
        if constraint.threshold <= lowest:
            warnings.append(
                f"minimum score {constraint.threshold:g} is at or below every "
                f"candidate score (lowest {lowest:g}); it removes no pair"
            )
    for constraint in constraints:
        if isinstance(constraint, MaxPerGroup):
            _check_group(problem, constraint, candidate_usable, inert)
        elif isinstance(constraint, RequireAttribute):
            _check_attribute(problem, constraint, usable, inert)
    if solver == "perturbed":
        beta = float(solver_options.get("beta", 0.5))
        if not 0 < beta <= 1:
            raise OptionError("perturbation", "the perturbation must lie in (0, 1]")
        cap = float(solver_options.get("q", 1.0))
        if not 0 < cap <= 1:
            raise OptionError("probability_cap", "the probability cap must lie in (0, 1]")
    if solver == "randomized":
        q = np.asarray(solver_options.get("q", 0.5), dtype=np.float64)
        if np.any(q < 0) or np.any(q > 1):
            raise OptionError("probability_cap", "the probability cap must lie between 0 and 1")
        if np.all(q >= 1):
            warnings.append(
                "a probability cap of 1 limits nothing: the result is an optimal "
                "deterministic assignment, not a randomized one"
            )
    return warnings


def _check_group(
    problem: AssignmentProblem,
    constraint: MaxPerGroup,
    candidate_usable: np.ndarray,
    inert: Callable[[str, str], None],
) -> None:
    try:
        codes = group_codes(constraint, problem.n_reviewers)
    except ValueError as error:
        raise OptionError("max_per_group", str(error)) from None
    text = describe(constraint)
    if not np.any(codes >= 0):
        raise OptionError(
            "max_per_group",
            f"{text}: no reviewer has a group (e.g. an affiliation or an "
            "email domain), so the limit cannot act",
        )
    max_demand = int(problem.demand.max()) if problem.n_papers else 0
    if constraint.limit >= max_demand:
        inert(
            "max_per_group",
            f"{text}: no paper needs more than {_reviewers(max_demand)}, so the limit cannot act",
        )
        return
    pair_codes = codes[problem.pair_reviewer]
    grouped = candidate_usable & (pair_codes >= 0)
    n_groups = int(codes.max()) + 1
    counts = np.bincount(
        problem.pair_paper[grouped] * n_groups + pair_codes[grouped],
        minlength=problem.n_papers * n_groups,
    )
    if not np.any(counts > constraint.limit):
        largest = np.bincount(codes[codes >= 0]).max()
        inert(
            "max_per_group",
            f"{text}: no paper has more than {constraint.limit} candidate "
            f"{'reviewer' if constraint.limit == 1 else 'reviewers'} from one group (largest "
            f"group: {_reviewers(int(largest))}), so the limit cannot act",
        )


def _check_attribute(
    problem: AssignmentProblem,
    constraint: RequireAttribute,
    usable: np.ndarray,
    inert: Callable[[str, str], None],
) -> None:
    try:
        mask = attribute_mask(constraint, problem.n_reviewers)
    except ValueError as error:
        raise OptionError("require_attribute", str(error)) from None
    text = describe(constraint)
    if not np.any(mask):
        raise OptionError("require_attribute", f"{text}: no reviewer has {constraint.name}")
    if constraint.min_count == 0:
        inert("require_attribute", f"{text}: a minimum of 0 cannot act; give 1 or more")
        return
    needing = problem.demand[problem.demand > 0]
    if np.any(usable) and np.all(mask[usable]) and np.all(needing >= constraint.min_count):
        inert(
            "require_attribute",
            f"{text}: every reviewer who can take papers has "
            f"{constraint.name}, so requiring it cannot act",
        )
