"""Element-by-element JSON decoding equals ``json.loads``: same values, same errors."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recommender.io._common import decode_by_element

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def outcome(decode: object, text: str) -> object:
    try:
        return ("value", decode(text))  # type: ignore[operator]
    except json.JSONDecodeError as error:
        return ("error", error.msg, error.pos)
    except (ValueError, RecursionError) as error:
        return ("error", type(error).__name__)


@settings(max_examples=300, deadline=None)
@given(values, st.sampled_from([None, 0, 1, 2]))
def test_same_value_as_json_loads(value: object, indent: int | None) -> None:
    text = json.dumps(value, indent=indent)
    assert outcome(decode_by_element, text) == outcome(json.loads, text)


@settings(max_examples=500, deadline=None)
@given(values, st.data())
def test_same_error_as_json_loads_on_broken_text(value: object, data: st.DataObject) -> None:
    text = json.dumps(value)
    position = data.draw(st.integers(0, len(text)))
    junk = data.draw(st.sampled_from(["", ",", "]", "}", ":", " ", '"', "x", "[", "{", "1"]))
    cut = data.draw(st.integers(0, 2))
    broken = text[:position] + junk + text[position + cut :]
    assert outcome(decode_by_element, broken) == outcome(json.loads, broken)


@pytest.mark.parametrize(
    "text",
    ["", " ", "[", "{", "[1,]", '{"a":1,}', '{"a" 1}', "[1 2]", "[1] x", "{1: 2}", " [ ] ", "{ }"],
)
def test_edge_cases(text: str) -> None:
    assert outcome(decode_by_element, text) == outcome(json.loads, text)
