"""A pair's score, conflicts and bid, with the evidence behind the score (shared by the
affinity and assignment routers)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from recommender.bids import excludes
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
) -> PairScoreOut:
    """Score of a pair from the latest run; a pair not stored is computed (its bid folded
    in with the run's weight, as the run folds bids) and, with ``store``, added to the
    session as a requested pair (the caller commits: reads never store). ``marks=False``
    leaves out bids and conflict reasons (null). ``pool``: whose latest run."""
    run = require_run(session, venue_id, pool)
    require_paper(session, venue_id, paper_id)
    require_reviewer(session, venue_id, reviewer_id)
    stored = session.get(AffinityScore, (run.id, paper_id, reviewer_id))
    explanation = None
    if stored is None or explain:
        model, _stale = explainers.model(session, run)
        plain = evidence = model.explain(paper_id, reviewer_id)
        bid = session.get(Bid, (venue_id, paper_id, reviewer_id))
        if bid is not None and not excludes(bid.label):
            # the score's bid part, as the run folded it in
            evidence = plain.with_bid(float(bid.bid), model.params.bid_weight)
        explanation = evidence.to_dict() if explain else None
        if stored is not None:
            score = float(stored.score)
        else:
            # scored as the run would have stored it: the pair's bid folded in
            score = float(plain.score)
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
    )
