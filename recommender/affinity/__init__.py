"""Affinity: a paper x reviewer score matrix from the reviewers' publications.

Where each step lives (each module imports only those above it in this list):

- :mod:`~recommender.affinity.params`: :class:`ScoringParams`, what determines a score
  (the only thing a client chooses; stored with every set of scores).
- :mod:`~recommender.affinity.options`: :class:`RunOptions`, how a run is carried out
  (model directories, cache, device, batch size, memory bounds; server/CLI only), and
  every limit's constant.
- :mod:`~recommender.affinity.similarity`: submission x publication similarity per channel
  (TF-IDF, embeddings), global standardisation, the ``combined`` mix.
- :mod:`~recommender.affinity.aggregation`: publication similarities -> reviewer scores,
  and the finishing step (paper centering, min-max scaling, empty profiles at 0).
- :mod:`~recommender.affinity.result`: :class:`Affinity`, the scores with their
  parameters; rankings and the scores CSV.
- :mod:`~recommender.affinity.explain`: :class:`Explanation`, the evidence for one pair.
- :mod:`~recommender.affinity.block_plan`: a blockwise run's plan (reviewer blocks,
  prepared publication vectors).
- :mod:`~recommender.affinity.block_scoring`: one paper block's scores and top-K, merged
  across blocks (top-K kept through :mod:`matching.topk`).
- :mod:`~recommender.affinity.blockwise`: venue-scale scoring in bounded memory (drives
  the two above), the dense reference and incremental updates.
- :mod:`~recommender.affinity.fitting`: a venue's texts as vectors (TF-IDF and embedding
  profiles via :mod:`recommender.profiles`, near-duplicates, recency weights).
- :mod:`~recommender.affinity.model`: :class:`AffinityModel`, fitted on one venue with
  those profiles, scores and explains.
- :mod:`~recommender.affinity.store`: saving and loading a fitted model (fast
  explanations of a scored venue).

Scale-out on Dask is :mod:`recommender.distributed`; bids are :mod:`recommender.bids`.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from recommender.affinity.aggregation import aggregate, aggregation_weights
    from recommender.affinity.explain import Explanation, PublicationEvidence
    from recommender.affinity.model import AffinityModel, compute_affinity
    from recommender.affinity.options import (
        BLOCKWISE_MIN_PAIRS,
        DENSE_LIMIT_BYTES,
        KEEP_PER_PAPER,
        KEEP_PER_REVIEWER,
        RunOptions,
    )
    from recommender.affinity.params import (
        AGGREGATIONS,
        DEFAULT_BID_WEIGHT,
        METHODS,
        NORMALISATIONS,
        ScoringParams,
    )
    from recommender.affinity.result import Affinity

# Names are loaded on first use (PEP 562), so that importing the light modules (the
# parameters, e.g. for ``recommender assign``) does not pay for scikit-learn and the
# embedding stack, which only the model needs.
_HOMES = {
    "aggregate": "aggregation",
    "aggregation_weights": "aggregation",
    "Explanation": "explain",
    "PublicationEvidence": "explain",
    "AffinityModel": "model",
    "compute_affinity": "model",
    "BLOCKWISE_MIN_PAIRS": "options",
    "DENSE_LIMIT_BYTES": "options",
    "KEEP_PER_PAPER": "options",
    "KEEP_PER_REVIEWER": "options",
    "RunOptions": "options",
    "AGGREGATIONS": "params",
    "DEFAULT_BID_WEIGHT": "params",
    "METHODS": "params",
    "NORMALISATIONS": "params",
    "ScoringParams": "params",
    "Affinity": "result",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "AGGREGATIONS",
    "BLOCKWISE_MIN_PAIRS",
    "DEFAULT_BID_WEIGHT",
    "DENSE_LIMIT_BYTES",
    "KEEP_PER_PAPER",
    "KEEP_PER_REVIEWER",
    "METHODS",
    "NORMALISATIONS",
    "Affinity",
    "AffinityModel",
    "Explanation",
    "PublicationEvidence",
    "RunOptions",
    "ScoringParams",
    "aggregate",
    "aggregation_weights",
    "compute_affinity",
]
