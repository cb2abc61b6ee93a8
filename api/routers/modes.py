"""Assignment modes: the randomness of a randomized run, and emergency re-assignment of the
live run (logic in :mod:`api.modes`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, status

from api.auth import Reader, Writer
from api.dependencies import SessionDep
from api.ids import RowIdPath, VenueIdPath
from api.schemas import AssignmentOut, RandomnessOut, ReassignIn, ReassignOut
from reviewer_recommender.services import modes
from reviewer_recommender.services.runs import require_assignment

router = APIRouter(tags=["assignments"])


@router.get(
    "/venues/{venue_id}/assignments/{assignment_id}/randomness", response_model=RandomnessOut
)
def get_randomness(
    venue_id: VenueIdPath, assignment_id: RowIdPath, principal: Reader, session: SessionDep
) -> dict[str, Any]:
    """How random a run is, as a table: quality ratio, maximum and average-maximum pair
    probability, L2 norm, entropy and support size of the distribution a randomized run
    (``perturbation`` and/or ``probability_cap``) was sampled from, each beside the same
    figure for the best deterministic assignment. Deterministic runs: ``randomized`` false
    and no rows. Visible to whoever may see the run."""
    row = require_assignment(session, venue_id, assignment_id, principal)
    return modes.randomness(row)


@router.post(
    "/venues/{venue_id}/assignments/live/reassign",
    status_code=status.HTTP_201_CREATED,
    response_model=ReassignOut,
)
def reassign_live(
    venue_id: VenueIdPath, body: ReassignIn, principal: Writer, session: SessionDep
) -> dict[str, Any]:
    """Emergency re-assignment: a new draft from the live run in which the ``withdraw``
    reviewers' pairs and the ``remove`` pairs are gone (and any live pair that is a conflict
    or a Not Willing bid now), every other live pair is kept, and only the vacated slots are
    filled, at maximum affinity within the stored loads, demands, conflicts, bids and pins.
    If some paper cannot be filled that way, the fewest live pairs are moved (then affinity
    is maximized); ``stage`` says which. The withdrawals are stored as max load 0 and the
    removals as forbids (their pins dropped), so later solves and publishing checks respect
    them; the draft records its difference from the live run (``summary.reassignment``) and
    is published through the usual deploy (confirmation and constraint checks). Audited.

    409: no live run, no affinities, or no assignment exists even moving pairs (with the
    diagnosis); 422: nothing named, an unknown reviewer, a pair that is not live."""
    row, result = modes.reassign_live(
        session,
        venue_id,
        withdraw=list(body.withdraw),
        remove=[(pair.paper_id, pair.reviewer_id) for pair in body.remove],
        reason=body.reason,
        actor=principal.name,
    )
    session.commit()
    session.refresh(row)
    summary = result.summary
    return {
        "assignment": AssignmentOut.model_validate(row, from_attributes=True),
        "derived_from": summary_derived_from(row),
        "stage": result.reassignment.stage,
        "kept": result.kept,
        "added": modes.changed_pairs(result.added, "fills a vacated slot"),
        "removed": modes.changed_pairs(result.removed),
        "objective": summary["objective"],
        "minimality": summary["minimality"],
        "warnings": result.warnings,
    }


def summary_derived_from(row: Any) -> int:
    return int((row.summary or {}).get("reassignment", {}).get("derived_from"))
