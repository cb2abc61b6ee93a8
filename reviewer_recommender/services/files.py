"""Loading the assignment use case's inputs from files (what the command line passes).

Every reader reports problems with file, line and field (:class:`InputError`); nothing is
solved when any input is wrong.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recommender.corpus import Corpus, InputError, Problem, Reviewer
from recommender.io import (
    read_bids,
    read_custom_max_papers,
    read_demand,
    read_pair_constraints,
    read_pairs,
    read_reviewer_ids,
    read_reviewers,
    read_scores,
    read_submissions,
)
from reviewer_recommender.services.conflicts import detect_conflicts
from reviewer_recommender.services.params import AssignParams, ConflictParams, ReassignParams
from reviewer_recommender.services.problem import AssignInputs, Rows
from reviewer_recommender.services.reassign import ReassignInputs


@dataclass(frozen=True)
class AssignFiles:
    """Input files of an assignment. ``constraints``: OpenReview constraints CSV (-1
    conflict, 1 pin, 0 no effect). ``reviewers``: profiles (reviewers.csv, .json, archives)
    for side constraints and conflict detection; ``submissions`` with them when
    ``detect_conflicts``."""

    scores: Path
    constraints: Path | None = None
    bids: Path | None = None
    demand: Path | None = None
    custom_max_load: Path | None = None
    reviewers: Path | None = None
    publications: Path | None = None
    submissions: Path | None = None
    detect_conflicts: bool = False

    def paths(self) -> dict[str, str]:
        return {name: str(value) for name, value in vars(self).items() if isinstance(value, Path)}


def load_assign_inputs(
    files: AssignFiles,
    params: AssignParams,
    conflict_params: ConflictParams | None = None,
    *,
    strict: bool = False,
) -> AssignInputs:
    """Read every file of ``files`` into :class:`AssignInputs` (all problems of all files
    are collected before raising one :class:`InputError`)."""
    problems: list[Problem] = []

    def attempt(read: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return read(*args, **kwargs)
        except InputError as error:
            problems.extend(error.problems)
            return None

    for path in files.paths().values():
        if not Path(path).exists():
            problems.append(Problem(path, None, None, "no such file or directory"))
    if problems:
        raise InputError(problems)
    if files.detect_conflicts and (files.reviewers is None or files.submissions is None):
        missing = [n for n in ("reviewers", "submissions") if getattr(files, n) is None]
        raise InputError(
            [
                Problem(
                    "command line",
                    None,
                    "detect_conflicts",
                    "conflict detection needs the reviewers' profiles and the submissions "
                    f"(with authors); missing: {', '.join(missing)}",
                )
            ]
        )
    scores = attempt(read_scores, files.scores)
    constraints = (
        attempt(read_pair_constraints, files.constraints, with_lines=True)
        if files.constraints
        else None
    )
    bids = attempt(read_bids, files.bids, with_lines=True) if files.bids else None
    demand = attempt(read_demand, files.demand, with_lines=True) if files.demand else None
    max_loads = (
        attempt(read_custom_max_papers, files.custom_max_load, with_lines=True)
        if files.custom_max_load
        else None
    )
    reviewers: tuple[Reviewer, ...] | None = None
    if files.reviewers is not None and (params.needs_profiles() or files.detect_conflicts):
        reviewers = attempt(read_reviewers, files.reviewers, publications=files.publications)
    submissions = None
    if files.detect_conflicts and files.submissions is not None:
        submissions = attempt(read_submissions, files.submissions)
    if problems:
        raise InputError(problems)

    conflicts: list[Rows] = []
    pins = None
    if constraints is not None:
        source = str(files.constraints)
        conflicts.append(Rows(constraints[constraints["value"] == -1], source))
        pins = Rows(constraints[constraints["value"] == 1], source)
    if files.detect_conflicts and reviewers is not None and submissions is not None:
        detected = detect_conflicts(reviewers, submissions, conflict_params or ConflictParams())
        conflicts.append(Rows(detected[["paper_id", "reviewer_id"]], "detected conflicts"))
    return AssignInputs(
        scores=scores,
        conflicts=conflicts,
        pins=pins,
        bids=Rows(bids, str(files.bids)) if bids is not None else None,
        demand=Rows(demand, str(files.demand)) if demand is not None else None,
        max_loads=Rows(max_loads, str(files.custom_max_load)) if max_loads is not None else None,
        reviewers=reviewers,
        reviewers_source=str(files.reviewers) if files.reviewers else "reviewer profiles",
        strict=strict,
    )


def read_corpus(reviewers: Path, submissions: Path, publications: Path | None = None) -> Corpus:
    """Reviewers and submissions read together (problems of both reported at once)."""
    problems: list[Problem] = []
    for path in (reviewers, submissions, publications):
        if path is not None and not path.exists():
            problems.append(Problem(str(path), None, None, "no such file or directory"))
    if problems:
        raise InputError(problems)
    read: dict[str, Any] = {}
    try:
        read["reviewers"] = read_reviewers(reviewers, publications=publications)
    except InputError as error:
        problems.extend(error.problems)
    try:
        read["submissions"] = read_submissions(submissions)
    except InputError as error:
        problems.extend(error.problems)
    if problems:
        raise InputError(problems)
    return Corpus(reviewers=tuple(read["reviewers"]), submissions=tuple(read["submissions"]))


def file_digest(path: Path) -> str:
    """SHA-256 of a file (or of a folder's files, by relative path), for provenance."""
    digest = hashlib.sha256()
    paths = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for item in paths:
        if path.is_dir():
            digest.update(str(item.relative_to(path)).encode("utf-8") + b"\0")
        with item.open("rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class ReassignFiles:
    """Input files of an emergency re-assignment: the live assignment (``paper_id,
    reviewer_id[,score,...]``), withdrawn reviewers (one id per line), pairs to remove
    (``paper_id,reviewer_id``), and the assignment's own inputs (scores, OpenReview
    constraints, bids, per-paper demand, custom max loads)."""

    live: Path
    scores: Path
    withdraw: Path | None = None
    remove: Path | None = None
    constraints: Path | None = None
    bids: Path | None = None
    demand: Path | None = None
    custom_max_load: Path | None = None

    def paths(self) -> dict[str, str]:
        return {name: str(value) for name, value in vars(self).items() if isinstance(value, Path)}


def load_reassign_inputs(
    files: ReassignFiles, params: ReassignParams, *, strict: bool = False
) -> ReassignInputs:
    """Read every file of ``files`` (all problems of all files in one :class:`InputError`)."""
    problems: list[Problem] = []

    def attempt(read: Any, path: Path | None, **kwargs: Any) -> Any:
        if path is None:
            return None
        try:
            return read(path, with_lines=True, **kwargs)
        except InputError as error:
            problems.extend(error.problems)
            return None

    missing = [p for p in files.paths().values() if not Path(p).exists()]
    if missing:
        raise InputError([Problem(p, None, None, "no such file or directory") for p in missing])
    live = attempt(read_pairs, files.live, with_scores=True)
    withdraw = attempt(read_reviewer_ids, files.withdraw)
    remove = attempt(read_pairs, files.remove)
    try:
        base = load_assign_inputs(
            AssignFiles(
                scores=files.scores,
                constraints=files.constraints,
                bids=files.bids,
                demand=files.demand,
                custom_max_load=files.custom_max_load,
            ),
            params.assign_params(),
            strict=strict,
        )
    except InputError as error:
        problems.extend(error.problems)
        base = None
    if problems or base is None:
        raise InputError(problems)
    return ReassignInputs(
        live=Rows(live, str(files.live)),
        scores=base.scores,
        withdraw=Rows(withdraw, str(files.withdraw)) if withdraw is not None else None,
        remove=Rows(remove, str(files.remove)) if remove is not None else None,
        conflicts=base.conflicts,
        pins=base.pins,
        bids=base.bids,
        demand=base.demand,
        max_loads=base.max_loads,
        strict=strict,
    )
