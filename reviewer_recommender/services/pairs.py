"""A pair's score, conflicts and bid, with the evidence behind the score (shared by the
affinity and assignment routers)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from recommender.affinity.explain import Explanation
from recommender.bids import excludes
from reviewer_recommender.errors import DomainError, StateConflict
from reviewer_recommender.services.affinity_upload import explanation_unavailable, is_uploaded
from reviewer_recommender.services.explain import ExplainerCache
from reviewer_recommender.services.results import PairScoreOut
from reviewer_recommender.services.scoring import fold_pair_bid
from reviewer_recommender.storage.models import DEFAULT_POOL, AffinityScore, Bid
from reviewer_recommender.storage.names import lookup
from reviewer_recommender.storage.repository import (
    pair_marks,
    require_paper,
    require_reviewer,
    require_run,
)


def pair_score(
    explainers: ExplainerCache,
    session: Session,
    venue_id: str,
    paper_id: str,
    reviewer_id: str,
    *,
    explain: bool,
    store: bool,
    marks: bool = True,
    pool: str = DEFAULT_POOL,
    show_bid: bool | None = None,
) -> PairScoreOut:
    """Score of a pair from the latest run; a pair not stored is computed (its bid folded
    in with the run's weight, as the run folds bids) and, with ``store``, added to the
    session as a requested pair (the caller commits: reads never store). ``marks=False``
    leaves out bids and conflict reasons (null). ``pool``: whose latest run. The run's saved
    model scores and explains (never a re-fit, see :mod:`reviewer_recommender.services.explain`):
    ``stale`` when the corpus changed since the run; 409 ``stale_affinities`` for a paper
    or reviewer that came after it.

    The explanation (``explain``) is the readable evidence (:meth:`recommender.affinity.
    explain.Explanation.to_dict`: the plain sentence, the score's parts in its units, the
    publications with their share, the shared terms), the pair's bid folded in as the run
    folds it, so that the parts add up to the score; ``show_bid`` (default ``marks``)
    False leaves the bid's part null and out of the sentence. Uploaded scores have none
    (``available`` false, and why)."""
    run = require_run(session, venue_id, pool)
    require_paper(session, venue_id, paper_id)
    require_reviewer(session, venue_id, reviewer_id)
    stored = session.get(AffinityScore, (run.id, paper_id, reviewer_id))
    explanation = None
    stale = False
    if is_uploaded(run.config):
        # scores computed elsewhere: nothing here explains them or scores a pair they lack
        if stored is None:
            raise StateConflict(
                "pair_not_scored",
                f"pair ({paper_id}, {reviewer_id}) has no score in affinity run {run.id}, "
                f"uploaded from {run.config.get('source') or 'a file'}: upload scores that "
                "include it, or compute affinity",
            )
        score = float(stored.score)
        explanation = explanation_unavailable(run.config) if explain else None
    elif stored is None or explain:
        model, stale = explainers.model(session, run)
        try:
            evidence = model.explain(paper_id, reviewer_id)
        except KeyError:
            raise StateConflict(
                "stale_affinities",
                f"paper {paper_id!r} or reviewer {reviewer_id!r} came after affinity run "
                f"{run.id}, which cannot score or explain it; compute affinities again "
                f"(POST /venues/{venue_id}/affinity/jobs)",
            ) from None
        bid = session.get(Bid, (venue_id, paper_id, reviewer_id))
        if explain:
            shown = marks if show_bid is None else show_bid
            explanation = _readable(evidence, bid, model.params.bid_weight, shown)
        if stored is not None:
            score = float(stored.score)
        else:
            # scored as the run would have stored it: the pair's bid folded in
            score = float(evidence.score)
            if bid is not None:
                score = fold_pair_bid(score, model.params.bid_weight, bid.label, bid.bid)
        if stored is None and store:
            session.add(
                AffinityScore(
                    run_id=run.id,
                    paper_id=paper_id,
                    reviewer_id=reviewer_id,
                    score=score,
                    requested=True,
                )
            )
            session.flush()
    else:
        score = float(stored.score)
    names = lookup(session, venue_id, [paper_id], [reviewer_id])
    if not marks:
        return PairScoreOut(
            paper_id=paper_id,
            paper_title=names.title(paper_id),
            reviewer_id=reviewer_id,
            reviewer_name=names.name(reviewer_id),
            score=score,
            conflict=None,
            bid=None,
            explanation=explanation,
            stale=stale,
        )
    conflicts, bids = pair_marks(session, venue_id, [(paper_id, reviewer_id)])
    return PairScoreOut(
        paper_id=paper_id,
        paper_title=names.title(paper_id),
        reviewer_id=reviewer_id,
        reviewer_name=names.name(reviewer_id),
        score=score,
        conflict=conflicts.get((paper_id, reviewer_id), []),
        bid=bids.get((paper_id, reviewer_id)),
        explanation=explanation,
        stale=stale,
    )


def _readable(
    evidence: Explanation, bid: Bid | None, weight: float, show_bid: bool
) -> dict[str, Any]:
    """The explanation as the API returns it (see :func:`pair_score`)."""
    if bid is None or excludes(bid.label) or not weight:
        return {"available": True, **evidence.to_dict()}
    folded = evidence.with_bid(float(bid.bid), weight).to_dict()
    if not show_bid:
        # the score holds the bid, whose size this role may not see: its part is hidden
        if folded.get("parts") is not None:
            folded["parts"]["bid"] = None
        folded["sentence"] = evidence.sentence
    return {"available": True, **folded}


Pair = tuple[str, str]
CHUNK = 500  # papers per IN (...) query


def _batch(session: Session, venue_id: str, pool: str) -> dict[Pair, tuple[int, float]]:
    found: dict[Pair, tuple[int, float]] = session.info.get(("pair-batch", venue_id, pool), {})
    return found


def batched_score(
    session: Session, venue_id: str, pool: str, paper_id: str, reviewer_id: str
) -> float | None:
    """The pair's score from the running :func:`score_batch` (stored as a requested pair,
    as :func:`pair_score` with ``store`` does); None if the batch did not score it."""
    # taken once: the pair is stored from here on (a later row, if any, finds it stored)
    found = _batch(session, venue_id, pool).pop((paper_id, reviewer_id), None)
    if found is None:
        return None
    run_id, score = found
    session.add(
        AffinityScore(
            run_id=run_id, paper_id=paper_id, reviewer_id=reviewer_id, score=score, requested=True
        )
    )
    session.flush()
    return score


@contextmanager
def score_batch(
    explainers: ExplainerCache,
    session: Session,
    venue_id: str,
    pairs: Sequence[Pair],
    *,
    pool: str = DEFAULT_POOL,
) -> Iterator[None]:
    """Within: :func:`batched_score` gives the scores of ``pairs`` the latest run (of
    ``pool``) has not stored, from one vectorized call of the run's saved model
    (:meth:`recommender.affinity.model.AffinityModel.pair_scores`), their bids folded in as
    :func:`pair_score` folds them, instead of an explanation each. Pairs the model cannot
    score (uploaded scores, no saved model, a paper or reviewer after the run) are left to
    :func:`pair_score`, which refuses them as before."""
    key = ("pair-batch", venue_id, pool)
    try:
        run = require_run(session, venue_id, pool)
        if not is_uploaded(run.config):
            session.info[key] = _scored(explainers, session, run, pairs)
    except DomainError:
        pass
    try:
        yield
    finally:
        session.info.pop(key, None)


def _scored(
    explainers: ExplainerCache, session: Session, run: Any, pairs: Sequence[Pair]
) -> dict[Pair, tuple[int, float]]:
    wanted = set(pairs)
    papers = sorted({p for p, _ in wanted})
    stored: set[Pair] = set()
    bids: dict[Pair, Bid] = {}
    for start in range(0, len(papers), CHUNK):
        chunk = papers[start : start + CHUNK]
        stored.update(
            (str(p), str(r))
            for p, r in session.execute(
                select(AffinityScore.paper_id, AffinityScore.reviewer_id).where(
                    AffinityScore.run_id == run.id, AffinityScore.paper_id.in_(chunk)
                )
            )
        )
        bids.update(
            {
                (bid.paper_id, bid.reviewer_id): bid
                for bid in session.scalars(
                    select(Bid).where(Bid.venue_id == run.venue_id, Bid.paper_id.in_(chunk))
                )
            }
        )
    missing = sorted(wanted - stored)
    if not missing:
        return {}
    model, _stale = explainers.model(session, run)
    indexed = {pair: _indices(model, pair) for pair in missing}
    known = [pair for pair, at in indexed.items() if at is not None]
    at = np.array([indexed[pair] for pair in known], dtype=np.int64).reshape(-1, 2)
    scores = model.pair_scores(at[:, 0], at[:, 1])
    found: dict[Pair, tuple[int, float]] = {}
    for pair, value in zip(known, scores.tolist(), strict=True):
        bid = bids.get(pair)
        score = float(value)
        if bid is not None:
            score = fold_pair_bid(score, model.params.bid_weight, bid.label, bid.bid)
        found[pair] = (int(run.id), score)
    return found


def _indices(model: Any, pair: Pair) -> tuple[int, int] | None:
    """The model's indices of the pair; None when it came after the run."""
    try:
        return model.paper_index(pair[0]), model.reviewer_index(pair[1])
    except KeyError:
        return None
