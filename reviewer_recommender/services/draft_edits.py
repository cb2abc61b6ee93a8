"""The edits of a draft as the faces ask for them: each looks the draft up for the caller
(404 for a run they may not see, 409 ``not_a_draft``), runs one edit
(:mod:`reviewer_recommender.services.run_edits`) or an undo
(:mod:`reviewer_recommender.services.history`), commits, and describes the result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from reviewer_recommender.errors import not_found
from reviewer_recommender.services import draft_rule_promotion, repairs, run_edits
from reviewer_recommender.services.explain import ExplainerCache
from reviewer_recommender.services.history import edits_out, history_page, undo_last
from reviewer_recommender.services.principals import Principal
from reviewer_recommender.services.run_edits import EditRequest
from reviewer_recommender.services.runs import require_assignment, require_draft
from reviewer_recommender.storage.models import AssignmentEdit, AssignmentPair, AssignmentRow
from reviewer_recommender.storage.names import name_rows


@dataclass(frozen=True)
class EditResult:
    """A change applied and committed: its history entry (``EditOut``), its effect
    (``EditEffectOut``) and the draft as it is now."""

    edit: dict[str, Any]
    effect: dict[str, Any]
    assignment: AssignmentRow
    # a bulk file's lines that did not apply, each with its line and why
    skipped: list[dict[str, Any]] = field(default_factory=list)


def edit_result(
    session: Session, row: AssignmentRow, entry: AssignmentEdit, effect: dict[str, Any]
) -> EditResult:
    """The result of a committed change of ``row`` recorded as ``entry``."""
    return EditResult(edit=edits_out(session, row, [entry])[0], effect=effect, assignment=row)


def _apply(
    explainers: ExplainerCache,
    session: Session,
    row: AssignmentRow,
    edit: EditRequest,
    actor: str,
    expected_version: int | None = None,
) -> run_edits.Applied:
    applied = run_edits.apply_edit(
        explainers, session, row, edit, actor, expected_version=expected_version
    )
    session.commit()
    return applied


def preview_draft_edit(
    explainers: ExplainerCache,
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    edit: EditRequest,
    expected_version: int | None,
) -> dict[str, Any]:
    """What ``edit`` would do to the draft, nothing changed
    (:func:`reviewer_recommender.services.run_edits.preview_edit`)."""
    row = require_draft(session, venue_id, assignment_id, principal)
    return run_edits.preview_edit(
        explainers, session, row, edit, principal.name, expected_version=expected_version
    )


def apply_draft_edit(
    explainers: ExplainerCache,
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    edit: EditRequest,
    expected_version: int | None,
) -> EditResult:
    """Apply ``edit`` to the draft: version bumped, recorded in its history, audited."""
    row = require_draft(session, venue_id, assignment_id, principal)
    applied = _apply(explainers, session, row, edit, principal.name, expected_version)
    return edit_result(session, row, applied.edit, applied.effect)


def edit_history(
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    limit: int,
    offset: int,
) -> dict[str, Any]:
    """The run's changes, newest first (:func:`history_page`)."""
    row = require_assignment(session, venue_id, assignment_id, principal)
    return history_page(session, row, limit, offset)


def undo_draft_edit(
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    *,
    version: int,
    reason: str,
) -> EditResult:
    """Undo the draft's newest change not yet undone (:func:`undo_last`) and commit."""
    row = require_draft(session, venue_id, assignment_id, principal)
    entry, effect = undo_last(session, row, version=version, actor=principal.name, reason=reason)
    session.commit()
    return edit_result(session, row, entry, effect)


def _assigned_pair(
    session: Session, row: AssignmentRow, paper_id: str, reviewer_id: str
) -> dict[str, Any]:
    """A pair of the run with its score, pin flag and names (``AssignedPairOut``)."""
    pair = session.get(AssignmentPair, (row.id, paper_id, reviewer_id))
    if pair is None:
        raise not_found("assigned pair", f"{paper_id}/{reviewer_id}")
    named = name_rows(
        session,
        row.venue_id,
        [
            {
                "paper_id": paper_id,
                "reviewer_id": reviewer_id,
                "score": pair.score,
                "pinned": pair.pinned,
            }
        ],
    )
    return named[0]


def pin_pair(
    explainers: ExplainerCache,
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    *,
    paper_id: str,
    reviewer_id: str,
    reason: str,
    force: bool,
) -> dict[str, Any]:
    """The ``pin`` edit; returns the pinned pair."""
    row = require_draft(session, venue_id, assignment_id, principal)
    edit = EditRequest("pin", paper_id, reviewer_id, None, reason, force)
    _apply(explainers, session, row, edit, principal.name)
    return _assigned_pair(session, row, paper_id, reviewer_id)


def unpin_pair(
    explainers: ExplainerCache,
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    *,
    paper_id: str,
    reviewer_id: str,
    reason: str,
) -> dict[str, Any]:
    """The ``unpin`` edit of a pair of the draft (404 for a pair it does not hold);
    returns the pair, no longer forced."""
    row = require_draft(session, venue_id, assignment_id, principal)
    if session.get(AssignmentPair, (row.id, paper_id, reviewer_id)) is None:
        raise not_found("pin", f"{paper_id}/{reviewer_id}")
    edit = EditRequest("unpin", paper_id, reviewer_id, None, reason)
    _apply(explainers, session, row, edit, principal.name)
    return _assigned_pair(session, row, paper_id, reviewer_id)


def forbid_pair(
    explainers: ExplainerCache,
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    *,
    paper_id: str,
    reviewer_id: str,
    reason: str,
) -> AssignmentRow:
    """The ``forbid`` edit; returns the draft."""
    row = require_draft(session, venue_id, assignment_id, principal)
    edit = EditRequest("forbid", paper_id, reviewer_id, None, reason)
    _apply(explainers, session, row, edit, principal.name)
    return row


def swap_reviewer(
    explainers: ExplainerCache,
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    *,
    paper_id: str,
    add_reviewer_id: str,
    remove_reviewer_id: str,
    reason: str,
    force: bool,
) -> dict[str, Any]:
    """The ``swap`` edit; returns the incoming pair."""
    row = require_draft(session, venue_id, assignment_id, principal)
    edit = EditRequest("swap", paper_id, add_reviewer_id, remove_reviewer_id, reason, force)
    _apply(explainers, session, row, edit, principal.name)
    return _assigned_pair(session, row, paper_id, add_reviewer_id)


def draft_rules_of(
    session: Session, venue_id: str, assignment_id: int, principal: Principal
) -> dict[str, Any]:
    """The run's own pins, forbids and max loads (``DraftRulesOut``)."""
    row = require_assignment(session, venue_id, assignment_id, principal)
    return draft_rule_promotion.list_rules(session, row)


def promote_draft_rules(
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    chosen: list[draft_rule_promotion.RuleKey] | None,
    reason: str = "",
) -> dict[str, Any]:
    """Make the run's own rules (``chosen``, or all) venue rules, audited, and commit
    (:func:`reviewer_recommender.services.draft_rule_promotion.promote`)."""
    row = require_assignment(session, venue_id, assignment_id, principal)
    promoted = draft_rule_promotion.promote(session, row, principal.name, chosen, reason=reason)
    session.commit()
    return promoted


def paper_repairs(
    session: Session, venue_id: str, assignment_id: int, principal: Principal, paper_id: str
) -> dict[str, Any]:
    """The repairs that raise ``paper_id``'s score in the draft
    (:func:`reviewer_recommender.services.repairs.find_repairs`)."""
    row = require_draft(session, venue_id, assignment_id, principal)
    return repairs.find_repairs(session, row, paper_id)


def _repair(
    session: Session,
    row: AssignmentRow,
    paper_id: str,
    reviewer_id: str,
    actor: str,
    version: int | None,
    reason: str,
) -> run_edits.Applied:
    item = repairs.repair_changes(session, row, paper_id, reviewer_id)
    touched = [(m["paper_id"], m["reviewer_id"]) for m in (*item["added"], *item["removed"])]

    def run() -> run_edits.Outcome:
        repairs.apply_pairs(session, row, item)
        # a rearrangement within the quotas: the solved problem is unchanged
        return run_edits.Outcome(
            tightening=True,
            audit={
                "moves": len(touched),
                "paper_change": item["paper_change"],
                "elsewhere_change": item["elsewhere_change"],
            },
        )

    return run_edits.change(
        session,
        row,
        touched,
        run,
        action="repair",
        actor=actor,
        expected_version=version,
        record={
            "paper_id": paper_id,
            "reviewer_id": reviewer_id,
            "reason": reason,
            "rows": len(touched),
            "detail": {"repair": item},
        },
        audit_action="assignment.repair",
    )


def preview_repair(
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    paper_id: str,
    reviewer_id: str,
    version: int | None,
) -> dict[str, Any]:
    """What applying the repair would do (``EditEffectOut``), rolled back."""
    row = require_draft(session, venue_id, assignment_id, principal)
    try:
        return _repair(session, row, paper_id, reviewer_id, principal.name, version, "").effect
    finally:
        session.rollback()


def apply_repair(
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    paper_id: str,
    reviewer_id: str,
    version: int | None,
    reason: str,
) -> EditResult:
    """Apply the repair as one change of the draft (undoable, audited) and commit."""
    row = require_draft(session, venue_id, assignment_id, principal)
    applied = _repair(session, row, paper_id, reviewer_id, principal.name, version, reason)
    session.commit()
    return edit_result(session, row, applied.edit, applied.effect)


def reoptimise_papers(
    session: Session,
    venue_id: str,
    assignment_id: int,
    principal: Principal,
    paper_ids: list[str],
    name: str = "",
) -> dict[str, Any]:
    """Re-optimise ``paper_ids`` of the run and keep the rest, as a new draft, committed
    (:func:`reviewer_recommender.services.reoptimise.reoptimise`)."""
    from reviewer_recommender.services.reoptimise import reoptimise

    row = require_assignment(session, venue_id, assignment_id, principal)
    created, outcome = reoptimise(session, row, paper_ids, principal.name, name)
    session.commit()
    session.refresh(created)
    return {"assignment": created, **outcome}
