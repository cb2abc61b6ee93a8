"""Bulk changes of a draft from a CSV file, HotCRP style: ``paper_id,reviewer_id,action``
(header optional) with actions ``add`` and ``remove`` (also ``pin``, ``unpin``, ``forbid``,
``unforbid``: the edits of :mod:`api.edits`, one per row, applied in file order).

Every bad row is named with its line and **skipped**; the valid rows apply (HotCRP's
"apply the valid lines, list the others"). Bad rows: malformed rows, unknown ids or
actions, a conflict of interest or Not Willing bid on ``add``/``pin`` (the one rule of
:func:`reviewer_recommender.services.pair_rules.addition_obstacles`), ``remove`` of a
pair the draft does not hold or of a pinned pair, the same pair twice with contradicting
actions (the later row), a row the edit itself refuses. Warnings: rows without effect,
papers left below demand; additions that end over a reviewer's max load or a paper's
demand need ``force`` (like a single pin).

The preview runs the rows through the same code as applying, in a transaction that is
rolled back, so both count the same: ``lines`` (every data line of the file), the rows
that apply, the lines skipped. Applying the valid rows is one version bump, one history
entry (undo reverts them together) and one audit entry, whose ``added``/``removed`` are
the pairs the run gained and lost (the history's counts).
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from matching.additions import Obstacle
from reviewer_recommender.errors import DomainError
from reviewer_recommender.services.draft_rules import lifted_pins, limits_held, own_pairs
from reviewer_recommender.services.explain import ExplainerCache
from reviewer_recommender.services.ids import id_problem, reviewer_id_form
from reviewer_recommender.services.pair_rules import (
    Pair,
    addition_obstacles,
    first_additions_held,
)
from reviewer_recommender.services.pairs import score_batch
from reviewer_recommender.services.run_edits import Applied, EditRequest, Outcome, change, mutate
from reviewer_recommender.services.skipped import skipped_lines
from reviewer_recommender.storage.models import (
    AssignmentPair,
    AssignmentRow,
    Conflict,
    Pin,
    ReviewerRow,
    SubmissionRow,
)

ACTIONS = {
    "add": "assign",
    "assign": "assign",
    "remove": "remove",
    "unassign": "remove",
    "pin": "pin",
    "unpin": "unpin",
    "forbid": "forbid",
    "unforbid": "unforbid",
}
ADDING = ("assign", "pin")
MAX_ROWS = 100_000


@dataclass(frozen=True)
class BulkRow:
    line: int
    paper_id: str
    reviewer_id: str
    action: str  # an edit action (``add`` is ``assign``)
    written: str  # the action as written


@dataclass
class Problem:
    line: int | None
    field: str | None
    code: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "field": self.field, "code": self.code, "message": self.message}


@dataclass
class BulkWarning:
    line: int | None
    code: str
    message: str
    force_required: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "code": self.code,
            "message": self.message,
            "force_required": self.force_required,
        }


def parse(content: bytes, source: str) -> tuple[list[BulkRow], list[Problem]]:
    """Rows of a bulk change file and the problems of its malformed rows."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        return [], [Problem(None, None, "invalid_file", f"{source}: not UTF-8 text ({error})")]
    rows: list[BulkRow] = []
    problems: list[Problem] = []
    reader = csv.reader(io.StringIO(text, newline=""))
    first = True
    try:
        for cells in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in cells):
                continue
            stripped = [cell.strip() for cell in cells]
            if first:
                first = False
                if stripped[0].casefold() in ("paper_id", "paper", "paper id"):
                    continue
            if len(rows) + len(problems) >= MAX_ROWS:
                problems.append(Problem(line, None, "too_many_rows", f"more than {MAX_ROWS} rows"))
                break
            if len(stripped) < 3 or not stripped[2]:
                problems.append(
                    Problem(line, None, "malformed_row", "expected paper_id,reviewer_id,action")
                )
                continue
            paper_id, reviewer_id = stripped[0], str(reviewer_id_form(stripped[1]))
            for field, value in (("paper_id", paper_id), ("reviewer_id", reviewer_id)):
                why = id_problem(value)
                if why is not None:
                    problems.append(Problem(line, field, "invalid_id", f"{field} {why}"))
            written = stripped[2]
            action = ACTIONS.get(written.casefold())
            if action is None:
                problems.append(
                    Problem(
                        line,
                        "action",
                        "unknown_action",
                        f"unknown action {written!r}: use add, remove, pin, unpin, forbid or "
                        "unforbid",
                    )
                )
                continue
            if id_problem(paper_id) is None and id_problem(reviewer_id) is None:
                rows.append(BulkRow(line, paper_id, reviewer_id, action, written.casefold()))
    except csv.Error as error:
        problems.append(Problem(reader.line_num, None, "malformed_row", f"not CSV: {error}"))
    if not rows and not problems:
        problems.append(Problem(None, None, "empty_file", f"{source} holds no change rows"))
    return rows, problems


def _known(session: Session, model: Any, venue_id: str, ids: set[str]) -> set[str]:
    found: set[str] = set()
    ordered = sorted(ids)
    for start in range(0, len(ordered), 500):
        chunk = ordered[start : start + 500]
        found.update(
            session.scalars(select(model.id).where(model.venue_id == venue_id, model.id.in_(chunk)))
        )
    return found


def _pairs_in(
    session: Session, statement: Any, columns: tuple[Any, Any], papers: list[str]
) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for start in range(0, len(papers), 500):
        chunk = papers[start : start + 500]
        found.update(
            (str(p), str(r)) for p, r in session.execute(statement.where(columns[0].in_(chunk)))
        )
    return found


def check(
    session: Session, row: AssignmentRow, rows: list[BulkRow]
) -> tuple[list[BulkRow], list[Problem], list[BulkWarning], dict[Pair, list[Obstacle]]]:
    """The rows that take effect, the errors that block applying, the warnings, and the
    obstacles of the additions (before any row applies)."""
    venue_id = row.venue_id
    errors: list[Problem] = []
    warnings: list[BulkWarning] = []
    papers = _known(session, SubmissionRow, venue_id, {r.paper_id for r in rows})
    reviewers = _known(session, ReviewerRow, venue_id, {r.reviewer_id for r in rows})
    paper_list = sorted({r.paper_id for r in rows})
    assigned = {
        (p, r): pinned
        for start in range(0, len(paper_list), 500)
        for p, r, pinned in session.execute(
            select(
                AssignmentPair.paper_id, AssignmentPair.reviewer_id, AssignmentPair.pinned
            ).where(
                AssignmentPair.assignment_id == row.id,
                AssignmentPair.paper_id.in_(paper_list[start : start + 500]),
            )
        )
    }
    pins = _pairs_in(
        session,
        select(Pin.paper_id, Pin.reviewer_id).where(Pin.venue_id == venue_id),
        (Pin.paper_id, Pin.reviewer_id),
        paper_list,
    )
    forbids = _pairs_in(
        session,
        select(Conflict.paper_id, Conflict.reviewer_id).where(
            Conflict.venue_id == venue_id, Conflict.source == "forbid"
        ),
        (Conflict.paper_id, Conflict.reviewer_id),
        paper_list,
    )
    # the draft's own pins and forbids count as the venue's do; the venue pins it lifted
    # do not
    wanted = [(r.paper_id, r.reviewer_id) for r in rows]
    pins = (pins - lifted_pins(session, row.id)) | own_pairs(session, row, "pin", wanted)
    forbids |= own_pairs(session, row, "forbid", wanted)
    # the one rule of what may be added; the limits are checked on the final state instead
    obstacles = addition_obstacles(
        session,
        row,
        [
            (r.paper_id, r.reviewer_id)
            for r in rows
            if r.action in ADDING and r.paper_id in papers and r.reviewer_id in reviewers
        ],
    )
    blocking = {
        pair: [o.detail for o in found if o.kind in ("conflict", "bid")]
        for pair, found in obstacles.items()
    }

    seen: dict[tuple[str, str], BulkRow] = {}
    effective: list[BulkRow] = []
    for item in rows:
        pair = (item.paper_id, item.reviewer_id)
        bad = False
        if item.paper_id not in papers:
            errors.append(
                Problem(item.line, "paper_id", "not_found", f"unknown paper {item.paper_id!r}")
            )
            bad = True
        if item.reviewer_id not in reviewers:
            errors.append(
                Problem(
                    item.line, "reviewer_id", "not_found", f"unknown reviewer {item.reviewer_id!r}"
                )
            )
            bad = True
        if bad:
            continue
        earlier = seen.get(pair)
        if earlier is not None:
            if earlier.action == item.action:
                warnings.append(
                    BulkWarning(
                        item.line, "no_effect", f"repeats line {earlier.line} ({item.written})"
                    )
                )
            else:
                errors.append(
                    Problem(
                        item.line,
                        "action",
                        "contradicting_rows",
                        f"{item.written} contradicts line {earlier.line} ({earlier.written}) "
                        f"for ({item.paper_id}, {item.reviewer_id})",
                    )
                )
            continue
        seen[pair] = item
        where = f"({item.paper_id}, {item.reviewer_id})"
        if item.action in ADDING and blocking.get(pair):
            errors.append(
                Problem(
                    item.line,
                    None,
                    "conflict_of_interest",
                    f"{where} cannot be added: {'; '.join(blocking[pair])}",
                )
            )
            continue
        if item.action == "remove":
            if pair not in assigned:
                errors.append(
                    Problem(item.line, None, "not_assigned", f"{where} is not in this run")
                )
                continue
            if assigned[pair] or pair in pins:
                errors.append(
                    Problem(
                        item.line,
                        None,
                        "pinned_pair",
                        f"{where} is pinned: unpin it first (an unpin row before this one "
                        "does not count: rows are checked against the run as it is)",
                    )
                )
                continue
        no_effect = {
            "assign": pair in assigned,
            "pin": pair in assigned and pair in pins and bool(assigned[pair]),
            "unpin": pair not in pins and not assigned.get(pair, False),
            "forbid": pair in forbids and pair not in assigned,
            "unforbid": pair not in forbids,
        }.get(item.action, False)
        if no_effect:
            state = {
                "assign": "already in this run",
                "pin": "already pinned",
                "unpin": "not pinned",
                "forbid": "already forbidden",
                "unforbid": "not forbidden",
            }[item.action]
            warnings.append(BulkWarning(item.line, "no_effect", f"{where} is {state}"))
            continue
        effective.append(item)
    return effective, errors, warnings, obstacles


def _run_rows(
    explainers: ExplainerCache,
    session: Session,
    row: AssignmentRow,
    rows: list[BulkRow],
    actor: str,
    reason: str,
    source: str,
    refused: list[Problem],
    skipped: int,
    obstacles: Mapping[Pair, list[Obstacle]],
) -> Outcome:
    """Apply ``rows`` in order, each in a savepoint: a row the edit refuses is rolled back
    alone and listed in ``refused``. ``skipped``: the file's lines the checks left out;
    ``obstacles``: those :func:`check` read for the additions (nothing changed since)."""
    tightening = True
    added = [(r.paper_id, r.reviewer_id) for r in rows if r.action in ADDING]
    # the rows' limits and their additions' obstacles read once, and their new pairs scored
    # in one call (not one each)
    changes = [((r.paper_id, r.reviewer_id), r.action in ADDING) for r in rows]
    with (
        limits_held(session, row),
        first_additions_held(session, row, changes, known=obstacles),
        score_batch(explainers, session, row.venue_id, added, pool=row.pool),
    ):
        for item in rows:
            edit = EditRequest(item.action, item.paper_id, item.reviewer_id, None, reason, True)
            savepoint = session.begin_nested()
            try:
                outcome = mutate(explainers, session, row, edit, actor, check_limits=False)
            except DomainError as error:
                savepoint.rollback()
                refused.append(Problem(item.line, None, error.code, str(error.detail)))
                continue
            savepoint.commit()
            tightening = tightening and outcome.tightening
    applied = len(rows) - len(refused)
    return Outcome(
        tightening, [], {"source": source, "rows": applied, "skipped": skipped + len(refused)}
    )


def _overfill(effect: dict[str, Any], rows: list[BulkRow]) -> list[BulkWarning]:
    """Limits the additions break (force needed) and papers left below demand."""
    lines_by_reviewer: dict[str, list[int]] = defaultdict(list)
    lines_by_paper: dict[str, list[int]] = defaultdict(list)
    for item in rows:
        if item.action in ADDING:
            lines_by_reviewer[item.reviewer_id].append(item.line)
            lines_by_paper[item.paper_id].append(item.line)
    found: list[BulkWarning] = []
    for load in effect["loads"]:
        if load["after"] > load["max_load"] and load["after"] > load["before"]:
            lines = lines_by_reviewer.get(load["reviewer_id"], [])
            found.append(
                BulkWarning(
                    lines[0] if lines else None,
                    "would_overfill",
                    f"reviewer {load['reviewer_id']!r} would review {load['after']} papers, over "
                    f"their max load of {load['max_load']} (lines {', '.join(map(str, lines))})",
                    force_required=True,
                )
            )
    for paper in effect["papers"]:
        if paper["after"] > paper["demand"] and paper["after"] > paper["before"]:
            lines = lines_by_paper.get(paper["paper_id"], [])
            found.append(
                BulkWarning(
                    lines[0] if lines else None,
                    "would_overfill",
                    f"paper {paper['paper_id']!r} would get {paper['after']} reviewers, over its "
                    f"demand of {paper['demand']} (lines {', '.join(map(str, lines))})",
                    force_required=True,
                )
            )
        elif paper["after"] < paper["demand"] <= paper["before"]:
            found.append(
                BulkWarning(
                    None,
                    "below_demand",
                    f"paper {paper['paper_id']!r} keeps {paper['after']} of the {paper['demand']} "
                    "reviewers it needs",
                )
            )
    return found


@dataclass
class BulkResult:
    """``lines``: the file's change lines; ``rows``: those that parsed; ``effective``: the
    rows that applied; ``errors``: the lines skipped, each with why."""

    lines: int
    rows: list[BulkRow]
    effective: list[BulkRow]
    errors: list[Problem]
    warnings: list[BulkWarning]
    applied: Applied | None

    @property
    def skipped_lines(self) -> int:
        return skipped_lines(self.errors)


def run(
    explainers: ExplainerCache,
    session: Session,
    row: AssignmentRow,
    content: bytes,
    source: str,
    actor: str,
    *,
    reason: str = "",
    force: bool = False,
    expected_version: int | None = None,
    listed: int | None = None,
) -> BulkResult:
    """Parse, check and apply the valid rows of the file in the session (not committed);
    the bad rows are skipped and listed. ``applied`` is None when no row changes the run."""
    rows, errors = parse(content, source)
    lines = len(rows) + skipped_lines(errors)
    effective, problems, warnings, obstacles = (
        check(session, row, rows) if rows else ([], [], [], {})
    )
    errors += problems
    if not effective:
        return BulkResult(lines, rows, effective, errors, warnings, None)
    refused: list[Problem] = []
    skipped = skipped_lines(errors)
    applied = change(
        session,
        row,
        [(r.paper_id, r.reviewer_id) for r in effective],
        lambda: _run_rows(
            explainers,
            session,
            row,
            effective,
            actor,
            reason,
            source,
            refused,
            skipped,
            obstacles,
        ),
        action="bulk",
        actor=actor,
        expected_version=expected_version,
        record={
            "paper_id": None,
            "reviewer_id": None,
            "other_reviewer_id": None,
            "reason": reason,
            "rows": len(effective),
            "detail": {"source": source, "force": force},
        },
        audit_action="assignment.bulk",
        listed=listed,
        audit_counts=True,
    )
    if refused:
        failed = {p.line for p in refused}
        effective = [r for r in effective if r.line not in failed]
        errors += refused
        applied.edit.rows = len(effective)
    errors.sort(key=lambda e: (e.line is None, e.line or 0))
    applied.edit.detail = {
        **applied.edit.detail,
        "added": applied.effect["added_total"],
        "removed": applied.effect["removed_total"],
        "lines": lines,
        "skipped": skipped_lines(errors),
    }
    warnings += _overfill(applied.effect, effective)
    return BulkResult(lines, rows, effective, errors, warnings, applied)
