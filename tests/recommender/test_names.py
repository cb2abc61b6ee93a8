"""Reviewer names: the owner of a profile read off its author lists, in every reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recommender.io import read_reviewers
from recommender.names import name_from_profile_id, profile_owner_name, text_key


@pytest.mark.parametrize(
    ("author_lists", "owner"),
    [
        ([["Ada Lovelace", "C. Babbage"], ["ada  lovelace"], ["Alan Turing"]], "Ada Lovelace"),
        # accents and case fold; the most frequent spelling wins
        ([["José Pérez", "X"], ["Jose Perez"], ["José Pérez", "Y"]], "José Pérez"),
        # below 60%: 2 of 4 publications
        ([["A"], ["A"], ["B"], ["C"]], ""),
        # a tie for the most publications tells nothing
        ([["A", "B"], ["A", "B"], ["A", "B"]], ""),
        # one publication names all its authors equally
        ([["A", "B"]], ""),
        # publications without authors are not counted
        ([["A"], [], ["A", "B"], []], "A"),
        ([], ""),
    ],
)
def test_profile_owner_name(author_lists: list[list[str]], owner: str) -> None:
    assert profile_owner_name(author_lists) == owner


def test_profile_id_names_and_keys() -> None:
    assert name_from_profile_id("~Ada_Lovelace1") == "Ada Lovelace"
    assert name_from_profile_id("Ada_Lovelace1") == "Ada Lovelace"
    assert name_from_profile_id("1409707585") is None
    assert text_key("Graph-Neural  Nets") == "graph neural nets"


def _archive(folder: Path, stem: str, authors: list[list[str]]) -> None:
    lines = [
        json.dumps({"id": f"p{i}", "content": {"title": f"T{i}", "abstract": "a", "authors": a}})
        for i, a in enumerate(authors)
    ]
    (folder / f"{stem}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_archive_reviewers_are_named_after_their_profile_owner(tmp_path: Path) -> None:
    _archive(tmp_path, "~1409707585", [["Qian Liu", "Bei Chen"], ["Qian Liu"], ["Qian Liu"]])
    _archive(tmp_path, "~42", [["A", "B"], ["A", "B"]])
    # an OpenReview profile id spells the name itself: no guess from co-authors
    _archive(tmp_path, "~Ada_Lovelace1", [["Bob Smith"], ["Bob Smith"]])
    names = {r.id: r.name for r in read_reviewers(tmp_path)}
    assert names == {"1409707585": "Qian Liu", "42": "", "Ada_Lovelace1": ""}


def test_a_given_name_is_kept_and_a_missing_one_inferred(tmp_path: Path) -> None:
    reviewers = tmp_path / "reviewers.json"
    publication = {"title": "T", "abstract": "a", "authors": ["Grace Hopper", "Z"]}
    reviewers.write_text(
        json.dumps(
            [
                {"id": "r1", "name": "Dr. G. Hopper", "publications": [publication] * 1},
                {
                    "id": "r2",
                    "publications": [
                        {**publication, "title": "T1"},
                        {**publication, "title": "T2", "authors": ["Grace Hopper"]},
                    ],
                },
            ]
        ),
        encoding="utf-8",
    )
    names = {r.id: r.name for r in read_reviewers(reviewers)}
    assert names == {"r1": "Dr. G. Hopper", "r2": "Grace Hopper"}
