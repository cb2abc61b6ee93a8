"""Options that cannot act are refused in a chair's words; inert ones give warnings."""

import numpy as np
import pytest
from matching_helpers import random_problem

from matching import (
    Fairness,
    MaxPerGroup,
    MinScore,
    OptionError,
    RequireAttribute,
    solve,
    validate_options,
)


def problem():
    return random_problem(1, 6, 5, demand=2, max_load=4)


@pytest.mark.parametrize(
    ("constraint", "words"),
    [
        (Fairness(), "fairness needs the ILP solver"),
        (
            MaxPerGroup(np.array(["u", "u", "v", "v", "w"], dtype=object), 1),
            "a per-group limit .* needs the ILP solver",
        ),
        (
            RequireAttribute(np.array([1, 0, 1, 0, 0], bool), name="senior"),
            "a required attribute .*senior.* needs the ILP solver",
        ),
    ],
)
@pytest.mark.parametrize("solver", ["flow", "randomized"])
def test_solvers_that_cannot_honour_a_constraint_are_refused(
    constraint, words: str, solver: str
) -> None:
    constrained = problem().with_side_constraints(constraint)
    with pytest.raises(OptionError, match=words) as error:
        validate_options(constrained, solver=solver)
    assert "Solver" not in str(error.value)  # no internal class names
    with pytest.raises(OptionError, match=words):
        solve(constrained, solver=solver)
    assert validate_options(constrained, solver="auto") == []


@pytest.mark.parametrize(
    ("constraint", "words"),
    [
        (MaxPerGroup(np.array(["", None, "", "", ""], dtype=object), 1), "no reviewer has a group"),
        (RequireAttribute(np.zeros(5, bool), name="senior"), "no reviewer has senior"),
    ],
)
def test_options_that_cannot_act_are_refused(constraint, words: str) -> None:
    constrained = problem().with_side_constraints(constraint)
    with pytest.raises(OptionError, match=words):
        validate_options(constrained)
    with pytest.raises(OptionError, match=words) as error:
        solve(constrained)
    assert isinstance(error.value, ValueError) and error.value.message == str(error.value)


@pytest.mark.parametrize(
    ("constraint", "words"),
    [
        (
            MaxPerGroup(np.array(["u", "u", "v", "v", "w"], dtype=object), 2),
            "no paper needs more than 2 reviewers",
        ),
        (
            MaxPerGroup(np.array(["u", "v", "w", "x", "y"], dtype=object), 1),
            "no paper has more than 1 candidate reviewer",
        ),
        (RequireAttribute(np.ones(5, bool), name="senior"), "every reviewer who can take papers"),
        (
            RequireAttribute(np.array([1, 0, 0, 0, 0], bool), min_count=0, name="senior"),
            "a minimum of 0 cannot act",
        ),
        (Fairness(keep=0.0), "keep 0 lets every paper's score fall to 0"),
    ],
)
def test_options_that_cannot_bind_are_refused_when_strict_else_warned(
    constraint, words: str
) -> None:
    constrained = problem().with_side_constraints(constraint)
    with pytest.raises(OptionError, match=words):
        validate_options(constrained)
    warnings = validate_options(constrained, strict=False)
    assert any(words in w for w in warnings)
    result = solve(constrained)  # matching.solve warns and solves
    assert any(words in w for w in result.warnings)
    assert result.objective == pytest.approx(solve(problem()).objective)


def test_a_required_attribute_that_everyone_has_still_acts_when_demand_is_lower() -> None:
    constrained = problem().with_side_constraints(
        RequireAttribute(np.ones(5, bool), min_count=3, name="senior")
    )
    assert validate_options(constrained) == []  # it makes the problem infeasible: it acts


def test_inert_options_give_warnings_on_the_result() -> None:
    base = problem()
    constrained = base.with_side_constraints(MinScore(-1.0))
    warnings = validate_options(constrained)
    assert len(warnings) == 1 and "removes no pair" in warnings[0]
    result = solve(constrained)
    assert result.warnings == tuple(warnings)
    assert result.summary()["warnings"] == warnings
    assert solve(base).warnings == ()
    assert "limits nothing" in validate_options(base, solver="randomized", q=1.0)[0]


def test_unknown_solvers_and_misplaced_options_are_refused() -> None:
    with pytest.raises(OptionError, match="unknown solver 'simplex'"):
        validate_options(problem(), solver="simplex")
    with pytest.raises(OptionError, match=r"'q' does not apply to the flow solver .*randomized"):
        solve(problem(), solver="flow", q=0.5)
    with pytest.raises(OptionError, match="between 0 and 1"):
        validate_options(problem(), solver="randomized", q=1.5)
