"""Assignment modes: the randomness of a randomized run, and emergency re-assignment of the
live run (logic in :mod:`reviewer_recommender.services.modes`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, status

from api.auth import Reader, Writer
from api.dependencies import Runner, SessionDep
from api.ids import RowIdPath, VenueIdPath
from api.schemas import JobOut, RandomnessOut, ReassignIn
from reviewer_recommender.services import modes
from reviewer_recommender.storage.models import Job

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
    return modes.run_randomness(session, venue_id, assignment_id, principal)


@router.post(
    "/venues/{venue_id}/assignments/live/reassign",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=JobOut,
)
def reassign_live(
    venue_id: VenueIdPath, body: ReassignIn, principal: Writer, session: SessionDep, runner: Runner
) -> Job:
    """Emergency re-assignment, as a job (``kind`` ``reassignment``, scheduled fairly among
    the venues' jobs): a new draft from the live run in which the ``withdraw`` reviewers'
    pairs and the ``remove`` pairs are gone (and any live pair that is a conflict or a Not
    Willing bid now), every other live pair is kept, and only the vacated slots are filled,
    at maximum affinity within the stored loads, demands, conflicts, bids and pins. If some
    paper cannot be filled that way, the fewest live pairs are moved (then affinity is
    maximized); ``stage`` says which. The withdrawals are stored as max load 0 and the
    removals as forbids (their pins dropped), so later solves and publishing checks respect
    them; the draft records its difference from the live run (``summary.reassignment``) and
    is published through the usual deploy (confirmation and constraint checks). Audited.

    The job's result: ``assignment_id`` and ``assignment_number`` (the new draft),
    ``derived_from`` (the live run),
    ``stage`` (``fill`` or ``moves``), ``kept``, ``added`` and ``removed`` (pairs
    ``paper_id, reviewer_id, score, reason``; reasons: fills a vacated slot; withdrawn,
    removed, conflict (a conflict or Not Willing bid now) or moved),
    ``objective``, ``minimality``, ``warnings``. It fails in words when no assignment
    exists even moving pairs (with the diagnosis) or another run went live meanwhile.
    Refused at once, nothing queued: 409 no live run or no affinities; 422 nothing named,
    an unknown reviewer (``withdraw``), a pair that is not live (``remove``)."""
    return modes.start_reassignment(
        runner,
        session,
        venue_id,
        withdraw=list(body.withdraw),
        remove=[(pair.paper_id, pair.reviewer_id) for pair in body.remove],
        reason=body.reason,
        actor=principal.name,
        pool=body.pool,
    )
