"""The one rule of whether a pair can be added to an assignment, and why not."""

from __future__ import annotations

from typing import Any

import pytest

from matching.additions import OBSTACLE_KINDS, addition_obstacles

FREE: dict[str, Any] = {"assigned": False, "load": 1, "max_load": 2, "count": 0, "demand": 1}


def kinds(**state: Any) -> list[str]:
    return [o.kind for o in addition_obstacles("p", "r", **{**FREE, **state})]


def test_a_free_pair_can_be_added() -> None:
    assert addition_obstacles("p", "r", **FREE) == []


def test_every_reason_is_named_in_order_with_what_can_be_forced() -> None:
    found = addition_obstacles(
        "p",
        "r",
        assigned=False,
        load=2,
        max_load=2,
        count=1,
        demand=1,
        exclusions=[("forbid", "advisor"), ("bid", "Not Willing"), ("conflict", "detected: x")],
        scored=False,
    )
    assert [o.kind for o in found] == [k for k in OBSTACLE_KINDS if k != "assigned"]
    assert [o.hard for o in found] == [True, True, False, False, False, False]
    assert [o.describe() for o in found] == [
        "(p, r): conflict of interest (detected: x)",
        "(p, r): the reviewer bid Not Willing",
        "(p, r): forbidden by a chair: advisor",
        "(p, r): the pair has no stored score",
        "(p, r): reviewer 'r' would review 3 papers, over their max load of 2",
        "(p, r): paper 'p' would get 2 reviewers, over its demand of 1",
    ]


def test_an_assigned_pair_changes_no_count() -> None:
    assert kinds(assigned=True, load=9, count=9, scored=False) == ["assigned"]
    assert kinds(assigned=True, exclusions=[("conflict", "")]) == ["assigned", "conflict"]


def test_a_replacement_ignores_the_papers_demand_but_not_the_reviewers_load() -> None:
    assert kinds(count=1) == ["demand"]
    assert kinds(count=1, replacing=True) == []
    assert kinds(count=1, load=2, replacing=True) == ["max_load"]


def test_unknown_exclusions_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown exclusion 'veto'"):
        kinds(exclusions=[("veto", "")])
