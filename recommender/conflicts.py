"""Conflicts of interest detected from reviewer profiles and submission author data.

Reasons (the ``reason`` column):

- ``author``: the reviewer is an author of the submission — their profile id is among
  the submission's ``author_ids``, their email among ``author_emails``, or their name
  among ``authors``. Profile ids decide where they exist: when the submission gives an
  id for every author and the reviewer's id is a profile id (``Name_Name1``), a name
  alone does not make the reviewer an author (two "L. Ratliff"s are told apart).
- ``coauthor``: a submission author appears on one of the reviewer's publications from
  the last ``coauthor_window_years`` years (``year >= reference_year - window``).
  Publications without a year count: a possible conflict shown to a chair is cheaper
  than a missed one.
- ``institution``: the reviewer's affiliation equals one of ``author_affiliations``.
- ``email_domain``: the reviewer's email domain equals an author's email domain,
  public mail providers (``ignore_email_domains``) excepted. Domains must be equal:
  ``cs.cmu.edu`` and ``cmu.edu`` do not match.

Names are compared after :func:`normalize_name` (accents stripped, case folded,
punctuation and extra whitespace removed). Name matching can over-match homonyms (two
different "Wei Zhang"s) and under-match variants ("A. McCallum" vs "Andrew McCallum");
profile ids and emails, when given, are exact. A reviewer's own name is their name (the
readers give one to archive reviewers too: the author on at least 60% of their publications,
:func:`recommender.names.profile_owner_name`); when they have none, it is taken to be any
author listed on every one of their publications (two or more), so that it neither counts
as a co-author nor is missed as an author.

Work is proportional to the number of author mentions: submissions are indexed by
name, email, id, affiliation and domain, and each reviewer's profile is looked up in
those indexes; papers x reviewers pairs are never enumerated.
"""

from __future__ import annotations

import datetime
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

import pandas as pd

from recommender.corpus import Reviewer, Submission
from recommender.names import normalize_name

AUTHOR = "author"
COAUTHOR = "coauthor"
INSTITUTION = "institution"
EMAIL_DOMAIN = "email_domain"

DEFAULT_PUBLIC_EMAIL_DOMAINS: frozenset[str] = frozenset(
    {
        "gmail.com",
        "googlemail.com",
        "outlook.com",
        "hotmail.com",
        "live.com",
        "msn.com",
        "yahoo.com",
        "yahoo.co.uk",
        "yahoo.co.jp",
        "ymail.com",
        "icloud.com",
        "me.com",
        "mac.com",
        "aol.com",
        "protonmail.com",
        "proton.me",
        "pm.me",
        "gmx.com",
        "gmx.de",
        "gmx.net",
        "web.de",
        "mail.com",
        "mail.ru",
        "yandex.ru",
        "yandex.com",
        "qq.com",
        "163.com",
        "126.com",
        "foxmail.com",
        "sina.com",
        "naver.com",
        "zoho.com",
        "fastmail.com",
        "hey.com",
        "tutanota.com",
        "users.noreply.github.com",
    }
)

CONFLICT_COLUMNS = ["paper_id", "reviewer_id", "reason", "detail"]


PROFILE_ID = re.compile(r"^~?[^\W\d_][^\s@/]*_[^\s@/]*\d+$")


def is_profile_id(identifier: str) -> bool:
    """Whether ``identifier`` has the shape of an OpenReview profile id (``~Ann_Lee1``)."""
    return bool(PROFILE_ID.match(identifier.strip()))


def email_domain(email: str) -> str:
    """The case-folded part after the last ``@``; ``""`` for anything that is not an email."""
    local, at, domain = email.strip().casefold().rpartition("@")
    return domain.strip(".") if at and local and "." in domain else ""


def detect_conflicts(
    reviewers: Sequence[Reviewer],
    submissions: Sequence[Submission],
    *,
    coauthor_window_years: int | None = 3,
    reference_year: int | None = None,
    coauthors: bool = True,
    same_institution: bool = True,
    same_email_domain: bool = True,
    ignore_email_domains: frozenset[str] = DEFAULT_PUBLIC_EMAIL_DOMAINS,
) -> pd.DataFrame:
    """Conflicting (paper, reviewer) pairs as ``DataFrame[paper_id, reviewer_id, reason, detail]``.

    One row per pair and reason (see the module docstring), ordered as ``submissions``
    then ``reviewers``; ``detail`` says what matched. ``coauthor_window_years=None``
    counts co-authorship of any year; ``coauthors=False`` skips it. ``reference_year``
    defaults to the current UTC year.
    """
    if coauthor_window_years is not None and coauthor_window_years < 0:
        raise ValueError("coauthor_window_years must be >= 0 or None")
    if reference_year is None:
        reference_year = datetime.datetime.now(datetime.UTC).year
    earliest_year = (
        None if coauthor_window_years is None else reference_year - coauthor_window_years
    )
    ignored_domains = frozenset(d.casefold() for d in ignore_email_domains)

    by_name: dict[str, list[tuple[int, str]]] = defaultdict(list)
    # papers that give a profile id for every author: there, ids decide who is an author
    ids_complete = {
        index
        for index, s in enumerate(submissions)
        if s.author_ids and len(set(s.author_ids)) >= len(set(s.authors))
    }
    by_email: dict[str, list[int]] = defaultdict(list)
    by_profile_id: dict[str, list[int]] = defaultdict(list)
    by_affiliation: dict[str, list[tuple[int, str]]] = defaultdict(list)
    by_domain: dict[str, list[int]] = defaultdict(list)
    for paper_index, submission in enumerate(submissions):
        for author in dict.fromkeys(submission.authors):
            if key := normalize_name(author):
                by_name[key].append((paper_index, author))
        for email in dict.fromkeys(e.strip().casefold() for e in submission.author_emails):
            by_email[email].append(paper_index)
        for domain in dict.fromkeys(email_domain(e) for e in submission.author_emails):
            if domain and domain not in ignored_domains:
                by_domain[domain].append(paper_index)
        for profile_id in dict.fromkeys(p.strip().lstrip("~") for p in submission.author_ids):
            by_profile_id[profile_id].append(paper_index)
        for affiliation in dict.fromkeys(submission.author_affiliations):
            if key := normalize_name(affiliation):
                by_affiliation[key].append((paper_index, affiliation))

    # (paper index, reviewer index, reason) -> detail; first evidence found is kept.
    found: dict[tuple[int, int, str], str] = {}

    def record(paper_index: int, reviewer_index: int, reason: str, detail: str) -> None:
        found.setdefault((paper_index, reviewer_index, reason), detail)

    for reviewer_index, reviewer in enumerate(reviewers):
        own_names = _own_names(reviewer)
        by_id = is_profile_id(reviewer.id)
        for paper_index in by_profile_id.get(reviewer.id, ()):
            record(paper_index, reviewer_index, AUTHOR, f"profile id {reviewer.id} is an author")
        email = reviewer.email.strip().casefold()
        if email:
            for paper_index in by_email.get(email, ()):
                record(paper_index, reviewer_index, AUTHOR, f"email {email} is an author's")
        for own in own_names:
            for paper_index, author in by_name.get(own, ()):
                if by_id and paper_index in ids_complete:
                    continue
                record(paper_index, reviewer_index, AUTHOR, f"author {author!r} matches by name")
        if coauthors:
            # Newest publications first so each detail cites the most recent collaboration.
            publications = sorted(
                reviewer.publications, key=lambda p: -1 if p.year is None else p.year, reverse=True
            )
            for publication in publications:
                if (
                    earliest_year is not None
                    and publication.year is not None
                    and publication.year < earliest_year
                ):
                    continue
                for coauthor in publication.authors:
                    key = normalize_name(coauthor)
                    if not key or key in own_names:
                        continue
                    for paper_index, author in by_name.get(key, ()):
                        when = publication.year if publication.year is not None else "year unknown"
                        record(
                            paper_index,
                            reviewer_index,
                            COAUTHOR,
                            f"co-authored {publication.title[:80]!r} ({when}) with {author!r}",
                        )
        if same_institution and (affiliation := normalize_name(reviewer.affiliation)):
            for paper_index, author_affiliation in by_affiliation.get(affiliation, ()):
                record(paper_index, reviewer_index, INSTITUTION, f"both at {author_affiliation!r}")
        domain = email_domain(reviewer.email)
        if same_email_domain and domain and domain not in ignored_domains:
            for paper_index in by_domain.get(domain, ()):
                record(paper_index, reviewer_index, EMAIL_DOMAIN, f"both use @{domain}")

    reason_order = {AUTHOR: 0, COAUTHOR: 1, INSTITUTION: 2, EMAIL_DOMAIN: 3}
    keys = sorted(found, key=lambda k: (k[0], k[1], reason_order[k[2]]))
    return pd.DataFrame(
        [
            (submissions[p].id, reviewers[r].id, reason, found[(p, r, reason)])
            for p, r, reason in keys
        ],
        columns=CONFLICT_COLUMNS,
    ).astype({c: "object" for c in CONFLICT_COLUMNS})


def _own_names(reviewer: Reviewer) -> frozenset[str]:
    """The reviewer's normalized name, or the names on all of their (2+) publications."""
    if name := normalize_name(reviewer.name):
        return frozenset({name})
    author_lists = [p.authors for p in reviewer.publications if p.authors]
    if len(author_lists) < 2:
        return frozenset()
    counts = Counter(key for authors in author_lists for key in _normalized_set(authors))
    return frozenset(key for key, count in counts.items() if count == len(author_lists))


def _normalized_set(names: Iterable[str]) -> set[str]:
    return {key for key in (normalize_name(n) for n in names) if key}
