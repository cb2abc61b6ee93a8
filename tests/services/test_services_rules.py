"""One rule, one home: each rule below the faces is written once, and every caller gets the
same answer from it."""

from __future__ import annotations

import pytest

import matching
from matching.validate import SOLVER_NAMES
from reviewer_recommender.services import errors
from reviewer_recommender.services.assignment import (
    MATCHING_OPTION_FIELDS,
    as_field_error,
    validate_options,
)
from reviewer_recommender.services.params import AssignParams


def test_one_option_error() -> None:
    assert errors.OptionError is matching.OptionError
    error = errors.OptionError("solver", "unknown")
    assert (error.option, error.message, str(error)) == ("solver", "unknown", "unknown")


def test_matching_option_names_become_parameter_fields() -> None:
    assert set(MATCHING_OPTION_FIELDS.values()) <= set(AssignParams.model_fields)
    translated = as_field_error(matching.OptionError("max_per_group", "cannot act"))
    assert (translated.option, translated.message) == ("max_per_affiliation", "cannot act")
    own = matching.OptionError("time_limit", "cannot act")
    assert as_field_error(own) is own


@pytest.mark.parametrize("solver", SOLVER_NAMES)
def test_every_solver_matching_knows_is_a_valid_option(solver: str) -> None:
    extra = {"perturbation": 0.5} if solver == "perturbed" else {}
    validate_options(AssignParams(solver=solver, **extra))
    with pytest.raises(errors.OptionError, match="unknown solver 'simplex'"):
        validate_options(AssignParams(solver="simplex"))
