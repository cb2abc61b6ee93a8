"""Which standing pins and forbids each edit changes (reviewer_recommender.services.edits, the one
definition the
API's edits and bulk changes store)."""

from __future__ import annotations

import pandas as pd
import pytest

from reviewer_recommender.services.edits import ConstraintEdit, apply_edit, standing_edit


def test_each_edit_changes_the_standing_constraints_it_says() -> None:
    pair = ("p", "r")
    assert standing_edit("pin", *pair) == ConstraintEdit(pin=(pair,), unforbid=(pair,))
    assert standing_edit("forbid", *pair) == ConstraintEdit(forbid=(pair,), unpin=(pair,))
    assert standing_edit("unpin", *pair) == ConstraintEdit(unpin=(pair,))
    assert standing_edit("unforbid", *pair) == ConstraintEdit(unforbid=(pair,))
    assert standing_edit("assign", *pair) == ConstraintEdit(unforbid=(pair,))
    assert standing_edit("remove", *pair) == ConstraintEdit()
    swap = standing_edit("swap", "p", "new", "old")
    assert swap == ConstraintEdit(
        pin=(("p", "new"),), unforbid=(("p", "new"),), forbid=(("p", "old"),), unpin=(("p", "old"),)
    )
    with pytest.raises(ValueError, match="names the reviewer"):
        standing_edit("swap", "p", "new")
    with pytest.raises(ValueError, match="unknown edit"):
        standing_edit("shuffle", *pair)


def test_a_swap_on_tables_pins_the_new_pair_and_forbids_the_old() -> None:
    pins = pd.DataFrame({"paper_id": ["p"], "reviewer_id": ["old"]})
    forbids = pd.DataFrame({"paper_id": ["p"], "reviewer_id": ["new"]})
    pins, forbids = apply_edit(pins, forbids, standing_edit("swap", "p", "new", "old"))
    assert list(zip(pins["paper_id"], pins["reviewer_id"], strict=True)) == [("p", "new")]
    assert list(zip(forbids["paper_id"], forbids["reviewer_id"], strict=True)) == [("p", "old")]
