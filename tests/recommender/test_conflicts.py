"""Conflict-of-interest detection: each reason, the co-authorship window, name matching."""

from __future__ import annotations

import pandas as pd
import pytest

from recommender.conflicts import (
    CONFLICT_COLUMNS,
    detect_conflicts,
    email_domain,
    normalize_name,
)
from recommender.corpus import Publication, Reviewer, Submission


def paper(paper_id: str, **fields: tuple[str, ...]) -> Submission:
    return Submission(id=paper_id, title=f"Title {paper_id}", abstract="Text.", **fields)


def pub(year: int | None, *authors: str, title: str = "Old work") -> Publication:
    return Publication(id=f"{title}-{year}", title=title, abstract="", year=year, authors=authors)


def reasons(frame: pd.DataFrame) -> set[tuple[str, str, str]]:
    rows = frame[["paper_id", "reviewer_id", "reason"]].itertuples(index=False)
    return {(p, r, why) for p, r, why in rows}


def test_normalize_name_and_email_domain() -> None:
    assert normalize_name("  José  O'Neil-Ávila ") == "jose o neil avila"
    assert normalize_name("ANDRÉ   Müller") == normalize_name("andre muller")
    assert email_domain("Ann@CS.Uni.EDU ") == "cs.uni.edu"
    assert email_domain("not an email") == ""
    assert email_domain("@nodomain") == ""


def test_reviewer_is_author_by_id_email_and_name() -> None:
    submissions = [
        paper("by-id", authors=("Someone",), author_ids=("Ann_Lee1",)),
        paper("by-email", authors=("Someone",), author_emails=("ann@uni.edu",)),
        paper("by-name", authors=("Ánn  LEE",)),
        paper("unrelated", authors=("Cy Do",), author_emails=("cy@gmail.com",)),
    ]
    reviewers = [Reviewer(id="Ann_Lee1", name="Ann Lee", email="Ann@Uni.edu")]
    frame = detect_conflicts(
        reviewers, submissions, same_email_domain=False, same_institution=False
    )
    assert list(frame.columns) == CONFLICT_COLUMNS
    assert reasons(frame) == {
        ("by-id", "Ann_Lee1", "author"),
        ("by-email", "Ann_Lee1", "author"),
        ("by-name", "Ann_Lee1", "author"),
    }


def test_coauthor_window_years() -> None:
    submissions = [paper("s", authors=("Bo Chen", "Dee Ray"))]
    reviewer = Reviewer(
        id="r",
        name="Ann Lee",
        publications=(
            pub(2023, "Ann Lee", "Bo Chen", title="Recent"),
            pub(2019, "Ann Lee", "Dee Ray", title="Old"),
        ),
    )
    recent_only = detect_conflicts([reviewer], submissions, reference_year=2026)
    assert reasons(recent_only) == {("s", "r", "coauthor")}
    assert "Recent" in recent_only["detail"].iloc[0] and "Bo Chen" in recent_only["detail"].iloc[0]

    # Boundary: 2023 is within 3 years of 2026, not of 2027.
    assert detect_conflicts([reviewer], submissions, reference_year=2027).empty
    assert (
        len(detect_conflicts([reviewer], submissions, coauthor_window_years=7, reference_year=2026))
        == 1
    )  # one row per pair and reason
    any_year = detect_conflicts([reviewer], submissions, coauthor_window_years=None)
    assert reasons(any_year) == {("s", "r", "coauthor")}
    assert detect_conflicts([reviewer], submissions, coauthors=False).empty

    undated = Reviewer(id="u", name="Ann Lee", publications=(pub(None, "Ann Lee", "Dee Ray"),))
    assert reasons(detect_conflicts([undated], submissions, reference_year=2026)) == {
        ("s", "u", "coauthor")
    }
    with pytest.raises(ValueError, match="coauthor_window_years"):
        detect_conflicts([reviewer], submissions, coauthor_window_years=-1)


def test_reviewer_own_name_is_not_a_coauthor_even_when_unnamed() -> None:
    # Archives carry no reviewer name: the name on every publication is taken as theirs.
    reviewer = Reviewer(
        id="r",
        publications=(pub(2025, "Ann Lee", "Bo Chen", title="A"), pub(2024, "A. Lee", "Ann Lee")),
    )
    own_paper = paper("own", authors=("Ann Lee",))
    with_coauthor = paper("co", authors=("Bo Chen",))
    stranger = paper("far", authors=("Zed Zed",))
    frame = detect_conflicts([reviewer], [own_paper, with_coauthor, stranger], reference_year=2026)
    assert reasons(frame) == {("own", "r", "author"), ("co", "r", "coauthor")}


def test_same_institution_and_email_domain() -> None:
    submissions = [
        paper("inst", authors=("X",), author_affiliations=("Carnegie  Mellon University",)),
        paper("dom", authors=("Y",), author_emails=("y@cmu.edu",)),
        paper("sub", authors=("Y",), author_emails=("y@cs.cmu.edu",)),
        paper("gmail", authors=("Z",), author_emails=("z@gmail.com",)),
    ]
    cmu = Reviewer(id="r", affiliation="carnegie mellon university", email="r@cmu.edu")
    gmail = Reviewer(id="g", email="g@GMAIL.com")
    frame = detect_conflicts([cmu, gmail], submissions)
    assert reasons(frame) == {("inst", "r", "institution"), ("dom", "r", "email_domain")}
    assert frame["paper_id"].tolist() == ["inst", "dom"]  # ordered as the submissions

    assert detect_conflicts(
        [cmu], submissions, same_institution=False, same_email_domain=False
    ).empty
    everything = detect_conflicts([gmail], submissions, ignore_email_domains=frozenset())
    assert reasons(everything) == {("gmail", "g", "email_domain")}


def test_many_reasons_for_one_pair_and_no_authors_no_conflicts() -> None:
    submission = paper(
        "s", authors=("Ann Lee",), author_emails=("ann@uni.edu",), author_affiliations=("Uni",)
    )
    reviewer = Reviewer(id="r", name="Ann Lee", email="ann@uni.edu", affiliation="Uni")
    frame = detect_conflicts([reviewer], [submission])
    assert frame["reason"].tolist() == ["author", "institution", "email_domain"]
    empty = detect_conflicts([reviewer], [paper("t")])
    assert empty.empty and list(empty.columns) == CONFLICT_COLUMNS


def test_profile_ids_decide_where_every_author_has_one() -> None:
    """The issue's false positive: a reviewer "L. Ratliff" is not the author "L. Ratliff"
    of a paper whose authors' profile ids are all given and differ from theirs."""
    submissions = [
        paper("ids", authors=("L. Ratliff", "Bo Chen"), author_ids=("Lil_Ratliff1", "Bo_Chen2")),
        paper("some-ids", authors=("L. Ratliff", "Bo Chen"), author_ids=("Bo_Chen2",)),
        paper("names", authors=("L. Ratliff",)),
    ]
    other = Reviewer(id="Lou_Ratliff3", name="L. Ratliff")
    same = Reviewer(id="Lil_Ratliff1", name="L. Ratliff")
    no_profile = Reviewer(id="r7", name="L. Ratliff")
    found = reasons(detect_conflicts([other, same, no_profile], submissions))
    assert ("ids", "Lou_Ratliff3", "author") not in found
    assert ("ids", "Lil_Ratliff1", "author") in found
    # where an author has no id, or the reviewer no profile id, names still match
    assert {("some-ids", "Lou_Ratliff3", "author"), ("names", "Lou_Ratliff3", "author")} <= found
    assert ("ids", "r7", "author") in found
