"""The id policy (recommender.ids): refuse, never rewrite; UTS #39 look-alikes."""

from __future__ import annotations

import unicodedata

import pytest

from recommender.ids import (
    CONFUSABLES,
    id_problem,
    id_refusal,
    lookalike_groups,
    lookalike_key,
    skeleton,
    trim_id,
    trim_person_id,
)

# eight reviewer ids that all display as "Ada"
ADAS = [
    "Ada",
    "\u0410da",  # Cyrillic capital A
    "Ad\u0430",  # Cyrillic small a
    "A\u200bda",  # zero-width space
    "\u202eadA",  # right-to-left override: shows "Ada"
    "\uff21\uff44\uff41",  # fullwidth
    "Ada\u034f",  # combining grapheme joiner (an invisible combining mark)
    "A\u200dda",  # zero-width joiner
]
INVISIBLE = {"A\u200bda", "\u202eadA", "Ada\u034f", "A\u200dda"}


def test_line_breaks_controls_invisible_characters_and_odd_spaces_are_refused() -> None:
    for value, named in [
        ("P\n1", "U+000A (LINE FEED)"),
        ("P\u20281", "U+2028 (LINE SEPARATOR)"),
        ("P\x851", "U+0085 (NEXT LINE)"),
        ("P\r1", "U+000D"),
        ("P\t1", "U+0009"),
        ("P\x001", "U+0000"),
        ("P\u00a01", "U+00A0 (NO-BREAK SPACE)"),
        ("P\u30001", "U+3000"),
        ("P\ufeff1", "U+FEFF"),
        ("P\u00ad1", "U+00AD (SOFT HYPHEN)"),
        ("P\ufe0f1", "U+FE0F"),
        ("P\u31641", "U+3164 (HANGUL FILLER)"),
        ("P\U000e00411", "U+E0041"),
    ]:
        problem = id_problem(value)
        assert problem is not None and named in problem, (value, problem)
        refusal = id_refusal("paper", value)
        assert refusal is not None and repr(value) in refusal and named in refusal
    for ok in ("P 1", "P  1", "~Ada_Lovelace1", "ada@example.org", "日本", "é", "e\u0301", "a.b"):
        assert id_problem(ok) is None, ok
    assert id_problem("") == "is empty" and "at most 300" in (id_problem("x" * 301) or "")


def test_only_padding_and_a_persons_tilde_are_dropped() -> None:
    assert trim_id(" \tP  1 \t") == "P  1"
    assert trim_id("P1\n") == "P1\n"  # a line break is not padding: the policy refuses it
    assert trim_person_id(" ~Ada_Lovelace1 ") == "Ada_Lovelace1"
    assert trim_person_id("~Ada\u2028") == "Ada\u2028"


def test_the_eight_adas_are_refused_or_found_alike() -> None:
    refused = {value for value in ADAS if id_problem(value) is not None}
    assert refused == INVISIBLE
    visible = [value for value in ADAS if value not in INVISIBLE]
    assert lookalike_groups(visible) == [visible]
    assert {lookalike_key(value) for value in visible} == {"Ada"}
    # composed and decomposed accents display alike too
    assert lookalike_groups(["Ad\u00e1", "Ada\u0301", "Ada"]) == [["Ad\u00e1", "Ada\u0301"]]
    # look-alikes across kinds of characters, and distinct ids that stay distinct
    assert lookalike_key("venue-1") == lookalike_key("venue-l")
    assert lookalike_key("paper") == lookalike_key("\u0440\u0430\u0440er")
    assert lookalike_groups(["P1", "P2", "Ada", "ada", "Adam"]) == []


def test_the_skeleton_follows_uts39() -> None:
    assert skeleton("\u0410") == "A" and skeleton("m") == "rn" and skeleton("1") == "l"
    assert skeleton("\u00e1") == unicodedata.normalize("NFD", "\u00e1")
    assert skeleton("A\u200bda") == "Ada"  # default-ignorable characters are dropped


def test_the_vendored_data_is_unicode_16() -> None:
    header = CONFUSABLES.read_text(encoding="utf-8").splitlines()[:12]
    assert "# Version: 16.0.0" in header
    assert (CONFUSABLES.parent / "LICENSE-UNICODE.txt").read_text().startswith("UNICODE LICENSE V3")


@pytest.mark.parametrize("kind", ["paper", "reviewer", "publication", "author"])
def test_refusals_name_the_kind_and_the_character(kind: str) -> None:
    refusal = id_refusal(kind, "A\u200bda")
    assert refusal is not None and refusal.startswith(f"invisible character in {kind} id")
    assert "U+200B (ZERO WIDTH SPACE)" in refusal and "remove it" in refusal
