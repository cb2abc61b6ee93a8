"""The bundled sample data loads through the readers and is what its READMEs say."""

from __future__ import annotations

import json
from pathlib import Path

from recommender.io import read_reviewers, read_submissions

DATA = Path(__file__).resolve().parents[2] / "data"


def test_iclr2026_submissions() -> None:
    submissions = read_submissions(DATA / "iclr2026" / "submissions.json")
    assert len(submissions) == 76
    assert len({s.id for s in submissions}) == 76
    assert all(s.title and s.abstract for s in submissions)
    assert all(len(s.title) <= 100 for s in submissions)
    # Titles are derived from the abstract's opening words.
    assert all(s.abstract.startswith(s.title.removesuffix("…")) for s in submissions)
    sources = {s.source for s in submissions}
    assert len(sources) == 76 and all("#" in source for source in sources)


def test_demo_reviewers() -> None:
    reviewers = read_reviewers(DATA / "demo-reviewers" / "archives")
    assert len(reviewers) == 27
    assert len({r.id for r in reviewers}) == 27
    assert all(not r.id.startswith("~") for r in reviewers)
    assert all(r.publications for r in reviewers)
    for reviewer in reviewers:
        assert len({p.id for p in reviewer.publications}) == len(reviewer.publications)
        assert all(p.text for p in reviewer.publications)
    assert sum(len(r.publications) for r in reviewers) == 384
    # the archives hold no names: each reviewer is named after the author on most of
    # their publications (the page and exports show names, not Semantic Scholar ids)
    named = [r for r in reviewers if r.name]
    assert len(named) >= 24
    assert all(r.name != r.id and not r.name.isdigit() for r in named)


def test_submissions_file_is_openreview_shaped() -> None:
    raw = json.loads((DATA / "iclr2026" / "submissions.json").read_text(encoding="utf-8"))
    assert all(key == value["id"] for key, value in raw.items())
    assert all(set(value["content"]) == {"title", "abstract", "source"} for value in raw.values())
