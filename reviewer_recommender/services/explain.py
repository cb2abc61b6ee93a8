"""Fitted affinity models kept in memory to explain pairs (and score pairs not stored).

An affinity job saves its fitted model (:mod:`recommender.affinity.store`) under the
server's data directory, named by job; explaining a pair of that run loads it (memory
mapped: milliseconds). Nothing re-fits a model inside a request: a re-fit of a large venue
takes tens of seconds and a gigabyte, and a few parallel callers would starve the server.
So the saved model of the run is what explains and scores its pairs, also when the corpus
changed since the run (``stale``: the answer says so, and the explanation is the evidence
behind the run's score, from the texts it scored). A pair whose paper or reviewer came after
the run, or a run without a saved model (made by an older version, or its files were
removed), gets 409 ``stale_affinities`` / ``no_saved_model`` naming the way out: an
affinity job, the one re-fit that all callers then share. The few most recently used models
are kept.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from pathlib import Path

from sqlalchemy.orm import Session

from recommender.affinity import AffinityModel, RunOptions
from reviewer_recommender.errors import StateConflict
from reviewer_recommender.storage.models import DEFAULT_POOL, AffinityRun
from reviewer_recommender.storage.repository import corpus_version


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

    ``models_dir``: where affinity jobs save models (None: none is found); ``options``: the
    server's run options (embedding models by name, for loading); ``size``: models kept in
    memory.
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
        self._models: OrderedDict[int, AffinityModel] = OrderedDict()
        self._lock = threading.Lock()

    def model(self, session: Session, run: AffinityRun) -> tuple[AffinityModel, bool]:
        """The saved fitted ``AffinityModel`` of ``run`` and whether the venue's corpus
        differs from the one the run scored (``stale``). 409 ``no_saved_model`` when the run
        has none: never a re-fit here (see the module docstring)."""
        stale = corpus_version(session, run.venue_id) != run.corpus_version
        with self._lock:
            if run.id in self._models:
                self._models.move_to_end(run.id)
                return self._models[run.id], stale
        model = self._saved(run)
        if model is None:
            raise StateConflict(
                "no_saved_model",
                f"affinity run {run.id} has no saved model to explain or score pairs with "
                f"(made by an older version, or its files were removed); compute affinities "
                f"again (POST /venues/{run.venue_id}/affinity/jobs)",
            )
        with self._lock:
            self._models[run.id] = model
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
