"""Scoring as a use case, one for every face: ``recommender score`` and ``recommender demo``
(files) and the service's affinity job (a stored venue) all call :func:`score`.

In: reviewers and submissions, scoring parameters (``bid_weight`` among them), run options,
bids, pins to keep, conflict-detection parameters, the top-K to keep, a progress callback
and a cancel check. Out (:class:`ScoreResult`): the affinity with bids folded in, the pairs
bids exclude, the detected conflicts, the kept pairs (pins flagged ``requested``) and
statistics. The faces only record the result: a scores CSV (and a constraints CSV) beside
its configuration, or a venue's stored run.

One behaviour on every face:

- **Bids** are folded in here, at scoring time, with the scoring parameters' ``bid_weight``
  (recorded with the scores; the command line's ``--bid-weight`` and an affinity job's
  ``config.bid_weight`` set it): score + W x bid, with Very High 1, High 0.5, Neutral 0, Low
  -0.5, Very Low -1. A bid naming a paper or reviewer that is not scored is a warning (with
  its line) and is ignored.
- **Not Willing** and **Conflict** bids exclude their pair, whatever W is: the pair takes no
  place in any top-K list and is never among the written scores. The scores CSV is the
  candidate table of ``recommender assign``, so such a pair can never be assigned
  downstream; a venue's store keeps the pair outside its top-K (``requested``), marked by its
  bid, so that a chair browsing candidates still sees why the reviewer is not assigned.
- **Conflicts** are detected with :class:`ConflictParams` (co-authorship within 3 years of
  the reference year, same institution, same email domain); the reference year, by default
  the current UTC year, is resolved once here and recorded, so the run can be reproduced.
  Detected conflicts are a list of their own, as uploaded ones are: they leave scores and
  top-K lists alone (the assignment never uses them).
- **Top-K**: each paper's K best reviewers and each reviewer's K best papers, union, ties by
  index (:mod:`matching.topk`), among the pairs bids allow; pins are kept beyond it
  (``requested``). K=None keeps every pair (the command line's default; the service stores
  its configured ``affinity_top_n``).
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TextIO

import numpy as np
import numpy.typing as npt
import pandas as pd

from recommender.affinity import Affinity, AffinityModel, RunOptions, ScoringParams
from recommender.bids import apply_bids, excludes, excluding_mask
from recommender.corpus import Corpus, InputError, Problem
from reviewer_recommender.services.assignment import json_safe
from reviewer_recommender.services.conflicts import conflict_constraints, detect_conflicts
from reviewer_recommender.services.exports import beside, csv_text, json_text, write_files
from reviewer_recommender.services.params import ConflictParams, ScoreParams
from reviewer_recommender.services.problem import LISTED, Rows

Progress = Callable[[float, str], None]
CancelCheck = Callable[[], None]

# How scores are written: six significant digits (float32 scores carry about seven).
SCORE_FORMAT = "%.6g"
HISTOGRAM_BINS = 20
# Shares of the use case's progress: the model's fit and scoring fill [0, SCORED].
SCORED = 0.9


class ScoresTooLarge(InputError):
    """The full score matrix exceeds the memory bound, and ``needed_by`` needs it (bids,
    pins, statistics). ``limit_bytes`` is the bound, ``shape`` (papers, reviewers)."""

    def __init__(
        self, source: str, needed_by: str, limit_bytes: int, shape: tuple[int, int]
    ) -> None:
        super().__init__(
            [
                Problem(
                    source,
                    None,
                    None,
                    f"{needed_by} need the full score matrix, which exceeds the memory bound "
                    f"({limit_bytes} bytes) for this venue",
                )
            ]
        )
        self.needed_by = needed_by
        self.limit_bytes = limit_bytes
        self.shape = shape


@dataclass
class ScoreResult:
    """What :func:`score` returns. ``affinity``: scores with bids folded in (every pair, or
    each side's top pairs past the memory bound); ``excluded`` and ``pinned``: bool
    (n_papers, n_reviewers) masks of the pairs a Not Willing or Conflict bid removes and of
    the pins to keep (None when there is none); ``conflicts``: the detected conflicts
    (``paper_id, reviewer_id, reason, detail``, one row per pair and reason) found with
    ``conflict_params`` (None when none were asked for); ``top_k``: the K of the kept pairs
    (None: every pair); ``statistics``: of every score, when asked for."""

    affinity: Affinity
    model: AffinityModel
    top_k: int | None = None
    excluded: npt.NDArray[np.bool_] | None = None
    pinned: npt.NDArray[np.bool_] | None = None
    conflicts: pd.DataFrame | None = None
    conflict_params: ConflictParams | None = None
    bids_folded: int = 0
    statistics: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def excluded_pairs(self) -> int:
        return 0 if self.excluded is None else int(self.excluded.sum())

    def written(self) -> Affinity:
        """The scores that compete for the kept pairs: excluded pairs at -inf (never
        written, never in a top-K)."""
        affinity = self.affinity
        if self.excluded is not None and self.excluded.any():
            assert affinity.scores is not None
            scores = affinity.scores.copy()
            scores[self.excluded] = -np.inf
            affinity = replace(affinity, scores=scores)
        return affinity

    def csv_chunks(self) -> Iterator[str]:
        """The rows of the scores CSV (no header): the kept pairs, by paper then reviewer,
        formatted directly (:meth:`recommender.affinity.Affinity.iter_csv`: non-finite
        scores are never written)."""
        return self.written().iter_csv(top_k=self.top_k)

    def frames(self) -> Iterator[pd.DataFrame]:
        """The kept pairs (``paper_id, reviewer_id, score``), excluded pairs left out, by
        paper then reviewer, in frames of a bounded size."""
        for frame in self.written().iter_frames(top_k=self.top_k):
            finite = np.isfinite(frame["score"].to_numpy())
            yield frame if finite.all() else frame[finite]

    def kept_pairs(self, *, with_excluded: bool = False) -> pd.DataFrame:
        """The kept pairs as ``paper_id, reviewer_id, score, requested``, by paper then
        reviewer: the top-K pairs (``requested`` false), then the pins outside them and,
        ``with_excluded``, the pairs bids exclude (``requested`` true, their own score)."""
        kept = self.written().kept_pairs(self.top_k).tocoo()
        finite = np.isfinite(kept.data)
        rows = kept.row[finite].astype(np.int64)
        columns = kept.col[finite].astype(np.int64)
        values = kept.data[finite].astype(np.float64)
        requested = np.zeros(len(rows), dtype=bool)
        extra = self.pinned
        if with_excluded and self.excluded is not None:
            extra = self.excluded if extra is None else extra | self.excluded
        if extra is not None and extra.any():
            assert self.affinity.scores is not None
            extra = extra.copy()
            extra[rows, columns] = False
            extra_rows, extra_columns = np.nonzero(extra)
            rows = np.concatenate([rows, extra_rows])
            columns = np.concatenate([columns, extra_columns])
            values = np.concatenate(
                [values, self.affinity.scores[extra_rows, extra_columns].astype(np.float64)]
            )
            requested = np.concatenate([requested, np.ones(len(extra_rows), dtype=bool)])
            order = np.lexsort((columns, rows))
            rows, columns, values, requested = (
                rows[order],
                columns[order],
                values[order],
                requested[order],
            )
        papers = np.asarray(self.affinity.paper_ids, dtype=object)
        reviewers = np.asarray(
            [r.removeprefix("~") for r in self.affinity.reviewer_ids], dtype=object
        )
        return pd.DataFrame(
            {
                "paper_id": papers[rows],
                "reviewer_id": reviewers[columns],
                "score": values,
                "requested": requested,
            }
        )

    def conflict_constraints(self) -> pd.DataFrame:
        """The detected conflicts, one row per pair (``paper_id, reviewer_id, value, reason``,
        every reason of the pair joined), as ``recommender conflicts`` writes them."""
        if self.conflicts is None:
            raise ValueError("no conflicts were detected in this scoring")
        return conflict_constraints(self.conflicts)


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
    *,
    options: RunOptions | None = None,
    bids: Rows | None = None,
    pins: Rows | None = None,
    conflicts: ConflictParams | None = None,
    top_k: int | None = None,
    statistics: bool = False,
    engine: Literal["local", "dask"] = "local",
    scheduler: str | None = None,
    progress: Progress | None = None,
    check_cancelled: CancelCheck | None = None,
) -> ScoreResult:
    """The scoring use case (the behaviour is the module docstring's).

    Fits the affinity model on ``corpus`` with ``scoring`` and the run ``options`` (default:
    the environment's) and scores every pair, or only each side's top ``top_k`` pairs past
    the memory bound when nothing needs the full matrix; ``engine="dask"`` fits and scores
    on a Dask cluster (``scheduler``: an existing one). Then folds ``bids`` in with
    ``scoring.bid_weight``, marks ``pins`` (``paper_id, reviewer_id`` rows; unknown ones
    are ignored), detects conflicts with ``conflicts`` (None: none detected) and, with
    ``statistics``, summarises every score.

    ``progress(fraction, stage)`` covers the whole use case and may raise to cancel;
    ``check_cancelled()`` is called between its stages and raises to cancel. Raises
    :class:`ScoresTooLarge` when bids, pins or statistics need a full matrix beyond the
    memory bound, :class:`InputError` for a bad engine or scheduler."""
    started = time.perf_counter()
    options = options or RunOptions.from_env()
    report = progress or _no_progress
    check = check_cancelled or _not_cancelled
    needs_full_matrix = bids is not None or pins is not None or statistics
    if top_k is not None and not needs_full_matrix:
        # Only each side's top pairs are kept: a blockwise run need not hold the rest.
        options = options.replace(
            keep_full_matrix=False,
            keep_per_paper=max(options.keep_per_paper, top_k),
            keep_per_reviewer=max(options.keep_per_reviewer, top_k),
        )
    model, affinity = _fit_and_score(corpus, scoring, options, engine, scheduler, report)
    check()
    result = ScoreResult(affinity=affinity, model=model, top_k=top_k)
    if needs_full_matrix and not affinity.is_dense:
        needed_by, source = (
            ("bids", bids.source)
            if bids is not None
            else ("pins", pins.source)
            if pins is not None
            else ("statistics", "scores")
        )
        raise ScoresTooLarge(
            source,
            needed_by,
            options.dense_limit_bytes,
            (len(affinity.paper_ids), len(affinity.reviewer_ids)),
        )
    if bids is not None:
        report(SCORED, "folding bids in")
        _fold_bids(result, bids, scoring.bid_weight)
    if pins is not None:
        result.pinned = _pin_mask(result.affinity, pins)
    if conflicts is not None:
        report(SCORED + 0.02, "detecting conflicts")
        check()
        result.conflict_params = resolved_conflict_params(conflicts)
        result.conflicts = detect_conflicts(
            corpus.reviewers, corpus.submissions, result.conflict_params
        )
    if statistics:
        report(SCORED + 0.06, "summarising the scores")
        check()
        result.statistics = _statistics(result)
    result.seconds = time.perf_counter() - started
    return result


def resolved_conflict_params(params: ConflictParams) -> ConflictParams:
    """``params`` with the reference year fixed (the current UTC year when not given), so
    that the record of a run says which year its co-author window counted back from."""
    if params.reference_year is not None:
        return params
    year = datetime.datetime.now(datetime.UTC).year
    return params.model_copy(update={"reference_year": year})


def _no_progress(fraction: float, stage: str) -> None:
    return None


def _not_cancelled() -> None:
    return None


def _fit_and_score(
    corpus: Corpus,
    scoring: ScoringParams,
    options: RunOptions,
    engine: Literal["local", "dask"],
    scheduler: str | None,
    report: Progress,
) -> tuple[AffinityModel, Affinity]:
    """The fitted model and its scores; progress over [0, SCORED]."""

    def scaled(start: float, end: float) -> Progress:
        return lambda fraction, stage: report(start + (end - start) * fraction, stage)

    if engine == "dask":
        from recommender.distributed import dask_score

        try:
            return dask_score(
                corpus.reviewers,
                corpus.submissions,
                scoring,
                options,
                scheduler_address=scheduler,
                progress=scaled(0.0, SCORED),
            )
        except ValueError as error:
            raise InputError([Problem("--engine dask", None, None, str(error))]) from None
        except OSError as error:
            raise InputError(
                [Problem("--scheduler", None, None, f"{scheduler}: {error}")]
            ) from None
    model = AffinityModel(scoring, options)
    fitted = SCORED * (0.85 if scoring.uses_embedding else 0.4)
    model.fit(corpus.reviewers, corpus.submissions, progress=scaled(0.0, fitted))
    return model, model.affinity(progress=scaled(fitted, SCORED))


def _fold_bids(result: ScoreResult, bids: Rows, weight: float) -> None:
    affinity = result.affinity
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


def fold_pair_bid(score: float, weight: float, label: str, value: float) -> float:
    """One pair's score with its bid (``label`` and number ``value``, as a venue stores it)
    folded in as :func:`score` folds bids: score + weight x value in float32; a Not Willing
    or Conflict bid leaves the score as it is. For a pair a run did not keep, scored later."""
    if excludes(label):
        return score
    return float(np.float32(score) + np.float32(weight * float(value)))


def _pin_mask(affinity: Affinity, pins: Rows) -> npt.NDArray[np.bool_] | None:
    """Pinned pairs among the scored ones (None when there is none)."""
    if not len(pins):
        return None
    paper_index = pd.Index(affinity.paper_ids).get_indexer(
        pins.frame["paper_id"].astype(str).str.strip()
    )
    reviewer_index = pd.Index([r.lstrip("~") for r in affinity.reviewer_ids]).get_indexer(
        pins.frame["reviewer_id"].astype(str).str.strip().str.lstrip("~")
    )
    known = (paper_index >= 0) & (reviewer_index >= 0)
    if not known.any():
        return None
    mask = np.zeros((len(affinity.paper_ids), len(affinity.reviewer_ids)), dtype=bool)
    mask[paper_index[known], reviewer_index[known]] = True
    return mask


def _statistics(result: ScoreResult) -> dict[str, Any]:
    assert result.affinity.scores is not None
    figures = score_statistics(result.affinity.scores)
    figures["bids_folded"] = result.bids_folded
    figures["not_willing_pairs"] = result.excluded_pairs
    if result.conflicts is not None and result.conflict_params is not None:
        figures["detected_conflicts"] = len(result.conflicts)
        figures["conflict_detection"] = result.conflict_params.model_dump(mode="json")
    return figures


def score_statistics(scores: npt.NDArray[np.floating[Any]]) -> dict[str, Any]:
    """Histogram (HISTOGRAM_BINS equal bins from min to max) and summary of all scores."""
    flat = np.asarray(scores, dtype=np.float64).ravel()
    if flat.size == 0:
        return {"count": 0, "histogram": {"edges": [], "counts": []}}
    low, high = float(flat.min()), float(flat.max())
    counts, edges = np.histogram(
        flat, bins=HISTOGRAM_BINS, range=(low, high if high > low else low + 1)
    )
    best_per_paper = scores.max(axis=1) if scores.shape[1] else np.array([])
    return json_safe(
        {
            "count": int(flat.size),
            "min": low,
            "max": high,
            "mean": float(flat.mean()),
            "std": float(flat.std()),
            "quantiles": {
                q: float(np.quantile(flat, float(q)))
                for q in ("0.1", "0.25", "0.5", "0.75", "0.9", "0.99")
            },
            "best_reviewer_score_per_paper": {
                "min": float(best_per_paper.min()) if best_per_paper.size else None,
                "mean": float(best_per_paper.mean()) if best_per_paper.size else None,
            },
            "histogram": {"edges": edges.tolist(), "counts": counts.tolist()},
        }
    )


# ---- the command line's files ---------------------------------------------------------------


def write_scores(
    result: ScoreResult,
    path: Path,
    params: ScoreParams,
    provenance: dict[str, Any],
    *,
    conflicts_path: Path | None = None,
) -> list[Path]:
    """The scores CSV (``paper_id,reviewer_id,score``), ``<stem>.config.json`` beside it
    with everything that produced it (scoring configuration, inputs, bids, conflict
    detection, run options) and, given ``conflicts_path``, the detected conflicts as a
    constraints CSV (as ``recommender conflicts`` writes it); all written or none."""
    written = {"pairs": 0}

    def write_csv(stream: TextIO) -> None:
        stream.write("paper_id,reviewer_id,score\n")
        for text in result.csv_chunks():
            stream.write(text)
            written["pairs"] += text.count("\n")

    def write_json(stream: TextIO) -> None:
        stream.write(json_text(score_record(result, params, provenance, written["pairs"])))

    outputs: dict[Path, Any] = {path: write_csv}
    if conflicts_path is not None:
        outputs[conflicts_path] = csv_text(result.conflict_constraints())
    outputs[beside(path, "config.json")] = write_json
    return write_files(outputs)


def score_record(
    result: ScoreResult, params: ScoreParams, provenance: dict[str, Any], pairs: int
) -> dict[str, Any]:
    """What the config JSON beside a scores file holds."""
    record: dict[str, Any] = {
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
    if result.conflicts is not None and result.conflict_params is not None:
        record["conflicts"] = {
            "detection": result.conflict_params.model_dump(mode="json"),
            "pairs": len(result.conflict_constraints()),
        }
    return json_safe(record)
