"""Scoring as a use case: affinity of every (paper, reviewer) pair, bids folded in, Not
Willing pairs removed, and the configuration recorded beside the scores.

A Not Willing (or Conflict) bid removes its pair from the written scores: the scores CSV is
the candidate table of ``recommender assign``, so such a pair can never be assigned
downstream, whatever options the assignment uses.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pandas as pd

from recommender.affinity import Affinity, AffinityModel, RunOptions, ScoringParams
from recommender.bids import apply_bids, excluding_mask
from recommender.corpus import Corpus, InputError, Problem
from reviewer_recommender.services.exports import beside, json_text, write_files
from reviewer_recommender.services.params import ScoreParams
from reviewer_recommender.services.problem import LISTED, Rows

Progress = Callable[[float, str], None]

# How scores are written: six significant digits (float32 scores carry about seven).
SCORE_FORMAT = "%.6g"


@dataclass
class ScoreResult:
    """Scores with bids folded in; ``excluded`` (n_papers, n_reviewers) marks pairs a Not
    Willing or Conflict bid removes (None when there is none)."""

    affinity: Affinity
    model: AffinityModel
    excluded: np.ndarray | None = None
    bids_folded: int = 0
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def excluded_pairs(self) -> int:
        return 0 if self.excluded is None else int(self.excluded.sum())

    def written(self) -> Affinity:
        """The scores to write: excluded pairs at -inf (never written, never in a top-K)."""
        affinity = self.affinity
        if self.excluded is not None and self.excluded.any():
            assert affinity.scores is not None
            scores = affinity.scores.copy()
            scores[self.excluded] = -np.inf
            affinity = replace(affinity, scores=scores)
        return affinity

    def csv_chunks(self, top_k: int | None = None) -> Iterator[str]:
        """The rows of the scores CSV (no header), as :meth:`frames` holds them, formatted
        directly (:meth:`recommender.affinity.Affinity.iter_csv`: non-finite scores are
        never written)."""
        return self.written().iter_csv(top_k=top_k)

    def frames(self, top_k: int | None = None) -> Iterator[pd.DataFrame]:
        """The pairs to write (``paper_id, reviewer_id, score``), excluded pairs left out;
        with ``top_k`` each paper's and each reviewer's best ``top_k`` (excluded pairs take
        no place in those lists)."""
        for frame in self.written().iter_frames(top_k=top_k):
            finite = np.isfinite(frame["score"].to_numpy())
            yield frame if finite.all() else frame[finite]


def check_explain(corpus: Corpus, paper_id: str, reviewer_id: str) -> None:
    """InputError unless both ids are in ``corpus`` (checked before any scoring)."""
    problems = []
    if paper_id not in set(corpus.submission_ids):
        problems.append(Problem("--explain", None, "paper_id", f"unknown paper {paper_id!r}"))
    if reviewer_id.lstrip("~") not in {r.lstrip("~") for r in corpus.reviewer_ids}:
        problems.append(
            Problem("--explain", None, "reviewer_id", f"unknown reviewer {reviewer_id!r}")
        )
    if problems:
        raise InputError(problems)


def score(
    corpus: Corpus,
    scoring: ScoringParams,
    params: ScoreParams,
    *,
    options: RunOptions | None = None,
    bids: Rows | None = None,
    progress: Progress | None = None,
) -> ScoreResult:
    """Fit the affinity model on ``corpus`` with ``scoring`` parameters and the run
    ``options`` (default: the environment's) and score every pair (or each side's top pairs
    past the memory bound); fold ``bids`` in with ``params.bid_weight`` (recorded in the
    model's parameters) and mark Not Willing pairs. Bids naming unknown papers or reviewers
    are warnings (with their line). ``engine="dask"`` embeds and scores on a Dask cluster.
    ``progress(fraction, stage)`` may raise to cancel."""
    started = time.perf_counter()
    options = options or RunOptions.from_env()
    scoring = scoring.replace(bid_weight=params.bid_weight)
    if params.top_k is not None and bids is None:
        # Only each side's top pairs are written: a blockwise run need not keep the rest.
        options = options.replace(
            keep_full_matrix=False,
            keep_per_paper=max(options.keep_per_paper, params.top_k),
            keep_per_reviewer=max(options.keep_per_reviewer, params.top_k),
        )
    if params.engine == "dask":
        from recommender.distributed import dask_score

        try:
            model, affinity = dask_score(
                corpus.reviewers,
                corpus.submissions,
                scoring,
                options,
                scheduler_address=params.scheduler,
                progress=progress,
            )
        except ValueError as error:
            raise InputError([Problem("--engine dask", None, None, str(error))]) from None
        except OSError as error:
            raise InputError(
                [Problem("--scheduler", None, None, f"{params.scheduler}: {error}")]
            ) from None
    else:
        model = AffinityModel(scoring, options)
        fitted = 0.85 if scoring.uses_embedding else 0.4
        report = progress or (lambda fraction, stage: None)
        model.fit(
            corpus.reviewers,
            corpus.submissions,
            progress=lambda fraction, stage: report(fitted * fraction, stage),
        )
        affinity = model.affinity(
            progress=lambda fraction, stage: report(fitted + (1 - fitted) * fraction, stage)
        )
    result = ScoreResult(affinity=affinity, model=model)
    if bids is not None:
        _fold_bids(result, bids, params.bid_weight, options)
    result.seconds = time.perf_counter() - started
    return result


def _fold_bids(result: ScoreResult, bids: Rows, weight: float, options: RunOptions) -> None:
    affinity = result.affinity
    if not affinity.is_dense:
        raise InputError(
            [
                Problem(
                    bids.source,
                    None,
                    None,
                    "bids need the full score matrix, which exceeds the memory bound "
                    f"({options.dense_limit_bytes} bytes) for this venue",
                )
            ]
        )
    frame = bids.frame
    papers = frame["paper_id"].astype(str).str.strip()
    reviewers = frame["reviewer_id"].astype(str).str.strip().str.lstrip("~")
    known_papers = papers.isin(set(affinity.paper_ids)).to_numpy()
    known_reviewers = reviewers.isin({r.lstrip("~") for r in affinity.reviewer_ids}).to_numpy()
    for row in np.flatnonzero(~(known_papers & known_reviewers))[: LISTED * 5]:
        field_name, value = (
            ("paper_id", papers.iloc[row])
            if not known_papers[row]
            else ("reviewer_id", reviewers.iloc[row])
        )
        result.warnings.append(
            str(
                Problem(
                    bids.source,
                    bids.where(int(row)),
                    field_name,
                    f"unknown {field_name.removesuffix('_id')} {value!r} (not among the "
                    "scored ones): this bid is ignored",
                )
            )
        )
    usable = frame[known_papers & known_reviewers]
    folded = apply_bids(affinity, usable, weight, source=bids.source)
    result.affinity = folded.affinity
    result.excluded = folded.excluded if folded.excluded.any() else None
    result.bids_folded = int((~excluding_mask(usable["label"])).sum())


def write_scores(
    result: ScoreResult, path: Path, params: ScoreParams, provenance: dict[str, Any]
) -> list[Path]:
    """The scores CSV (``paper_id,reviewer_id,score``) and, beside it, ``<stem>.config.json``
    with everything that produced it: scoring configuration, inputs, bids, run options."""
    written = {"pairs": 0}

    def write_csv(stream: TextIO) -> None:
        stream.write("paper_id,reviewer_id,score\n")
        for text in result.csv_chunks(params.top_k):
            stream.write(text)
            written["pairs"] += text.count("\n")

    def write_json(stream: TextIO) -> None:
        stream.write(json_text(score_record(result, params, provenance, written["pairs"])))

    return write_files({path: write_csv, beside(path, "config.json"): write_json})


def score_record(
    result: ScoreResult, params: ScoreParams, provenance: dict[str, Any], pairs: int
) -> dict[str, Any]:
    """What the config JSON beside a scores file holds."""
    from reviewer_recommender.services.assignment import json_safe

    return json_safe(
        {
            "affinity": result.model.params.to_dict(),
            "run": params.model_dump(mode="json"),
            "inputs": provenance,
            "papers": len(result.affinity.paper_ids),
            "reviewers": len(result.affinity.reviewer_ids),
            "pairs_written": pairs,
            "bids_folded": result.bids_folded,
            "not_willing_pairs_removed": result.excluded_pairs,
            "score_format": SCORE_FORMAT,
            "warnings": result.warnings,
            "seconds": round(result.seconds, 3),
        }
    )
