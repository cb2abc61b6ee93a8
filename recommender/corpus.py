"""Validated domain objects shared by every reader, profiler and face of the product.

Readers return these objects or raise :class:`InputError` listing every problem found;
nothing downstream re-validates them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True, slots=True)
class Problem:
    """One defect in an input: where it is (file, line or record, field) and why."""

    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
        if self.field:
            where += f" [{self.field}]"
        return f"{where}: {self.message}"


class InputError(ValueError):
    """Raised by readers: every problem found in the input, none of it loaded."""

    def __init__(self, problems: Iterable[Problem]):
        self.problems: tuple[Problem, ...] = tuple(problems)
        if not self.problems:
            raise ValueError("InputError needs at least one problem")
        shown = "\n".join(f"  {p}" for p in self.problems[:50])
        more = len(self.problems) - 50
        suffix = f"\n  ... and {more} more" if more > 0 else ""
        count = len(self.problems)
        super().__init__(f"{count} problem{'s' if count != 1 else ''} in input:\n{shown}{suffix}")

    def to_dicts(self) -> list[dict[str, Any]]:
        return [
            {"file": p.file, "line": p.line, "field": p.field, "message": p.message}
            for p in self.problems
        ]


@dataclass(frozen=True, slots=True)
class Publication:
    """One paper of a reviewer's profile."""

    id: str
    title: str
    abstract: str
    year: int | None = None
    authors: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """Title and abstract joined: what profilers read."""
        return join_title_abstract(self.title, self.abstract)


@dataclass(frozen=True, slots=True)
class Reviewer:
    """A reviewer with the publications that make up their expertise profile."""

    id: str
    name: str = ""
    email: str = ""
    affiliation: str = ""
    attributes: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    publications: tuple[Publication, ...] = ()


@dataclass(frozen=True, slots=True)
class Submission:
    """A paper to be reviewed.

    ``author_emails``, ``author_ids`` (OpenReview profile ids without ``~``) and
    ``author_affiliations`` are optional and only feed conflict-of-interest detection;
    they are not parallel to ``authors`` (any of them may be empty).
    """

    id: str
    title: str
    abstract: str
    authors: tuple[str, ...] = ()
    source: str = ""
    author_emails: tuple[str, ...] = ()
    author_ids: tuple[str, ...] = ()
    author_affiliations: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return join_title_abstract(self.title, self.abstract)


@dataclass(frozen=True, slots=True)
class Corpus:
    """Reviewers and submissions of one venue; ids are unique within each tuple."""

    reviewers: tuple[Reviewer, ...]
    submissions: tuple[Submission, ...]

    @property
    def reviewer_ids(self) -> list[str]:
        return [r.id for r in self.reviewers]

    @property
    def submission_ids(self) -> list[str]:
        return [s.id for s in self.submissions]


def join_title_abstract(title: str, abstract: str) -> str:
    title = title.strip()
    abstract = abstract.strip()
    if title and abstract:
        sep = " " if title.endswith((".", "?", "!", ":")) else ". "
        return f"{title}{sep}{abstract}"
    return title or abstract
