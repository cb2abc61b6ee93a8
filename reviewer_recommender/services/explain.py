"""Fitted affinity models kept in memory to explain pairs (and score pairs not stored).

An affinity job saves its fitted model (:mod:`recommender.affinity.store`) under the
server's data directory, named by job; explaining a pair of that run loads it (memory
mapped: milliseconds) instead of re-fitting TF-IDF and embeddings on the whole venue. When
the corpus changed since the run (``stale``), or the run has no saved model (made by an
older version, or its files were removed), the model is re-fitted on the venue's current
corpus with the run's scoring parameters and the server's run options (embeddings come from
the cache). The few most recently used models are kept.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from pathlib import Path

from sqlalchemy.orm import Session

from recommender.affinity import AffinityModel, RunOptions, ScoringParams
from reviewer_recommender.errors import StateConflict
from reviewer_recommender.storage.models import DEFAULT_POOL, AffinityRun
from reviewer_recommender.storage.repository import corpus_version, load_corpus


def saved_model_dir(models_dir: Path, venue_id: str, job_id: int, pool: str = DEFAULT_POOL) -> Path:
    """Where the fitted model of an affinity job is kept: one folder per venue (named by a
    digest, whatever characters the venue id holds), one per pool other than the
    reviewers', one per job."""
    venue_key = hashlib.sha256(venue_id.encode("utf-8")).hexdigest()[:24]
    folder = models_dir / venue_key
    if pool != DEFAULT_POOL:
        folder = folder / pool
    return folder / f"job-{job_id}"


class ExplainerCache:
    """The fitted model of an affinity run, saved or re-fitted (see the module docstring).

    ``models_dir``: where affinity jobs save models (None: always re-fit); ``options``: the
    server's run options for re-fits; ``size``: models kept in memory.
    """

    def __init__(
        self,
        models_dir: Path | None = None,
        options: RunOptions | None = None,
        size: int = 4,
    ):
        self.models_dir = models_dir
        self.options = options or RunOptions()
        self.size = size
        self._models: OrderedDict[tuple[int, int], AffinityModel] = OrderedDict()
        self._lock = threading.Lock()

    def model(self, session: Session, run: AffinityRun) -> tuple[AffinityModel, bool]:
        """The fitted ``AffinityModel`` of ``run`` and whether the venue's corpus differs
        from the one the run scored (``stale``: then the model is fitted on the current
        corpus). 409 if the run's parameters cannot be reproduced (a version 0.1 run made
        with its own model directory)."""
        version = corpus_version(session, run.venue_id)
        stale = version != run.corpus_version
        key = (run.id, version)
        with self._lock:
            if key in self._models:
                self._models.move_to_end(key)
                return self._models[key], stale
        model = None if stale else self._saved(run)
        if model is None:
            try:
                params = ScoringParams.from_stored(run.config)
            except ValueError as error:
                raise StateConflict(
                    None,
                    f"affinity run {run.id} cannot be explained: {error}",
                ) from None
            reviewers, submissions = load_corpus(session, run.venue_id, run.pool)
            model = AffinityModel(params, self.options).fit(reviewers, submissions)
        with self._lock:
            self._models[key] = model
            while len(self._models) > self.size:
                self._models.popitem(last=False)
        return model, stale

    def _saved(self, run: AffinityRun) -> AffinityModel | None:
        if self.models_dir is None or run.job_id is None:
            return None
        from recommender.affinity.store import load_model

        directory = saved_model_dir(self.models_dir, run.venue_id, run.job_id, run.pool)
        if not (directory / "model.json").is_file():
            return None
        try:
            return load_model(directory, self.options)
        except (OSError, ValueError):
            return None
