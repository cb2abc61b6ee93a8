"""Fitted affinity models kept in memory to explain pairs (and score pairs not stored).

The corpus and each run's configuration are in the database, so a model is re-fitted on
demand; the few most recent ones are cached.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from sqlalchemy.orm import Session

from api.models import AffinityRun
from api.store import corpus_version, load_corpus


class ExplainerCache:
    def __init__(self, size: int = 4):
        self.size = size
        self._models: OrderedDict[tuple[int, int], Any] = OrderedDict()
        self._lock = threading.Lock()

    def model(self, session: Session, run: AffinityRun) -> tuple[Any, bool]:
        """The fitted ``AffinityModel`` of ``run`` on the venue's current corpus and whether
        that corpus differs from the one the run scored (``stale``)."""
        from recommender.affinity import AffinityConfig, AffinityModel

        version = corpus_version(session, run.venue_id)
        key = (run.id, version)
        with self._lock:
            if key in self._models:
                self._models.move_to_end(key)
                return self._models[key], version != run.corpus_version
        reviewers, submissions = load_corpus(session, run.venue_id)
        model = AffinityModel(AffinityConfig.from_dict(run.config)).fit(reviewers, submissions)
        with self._lock:
            self._models[key] = model
            while len(self._models) > self.size:
                self._models.popitem(last=False)
        return model, version != run.corpus_version
