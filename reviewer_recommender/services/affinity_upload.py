"""Bring your own scores: a scores file computed elsewhere (OpenReview affinity edges
``head,tail,weight``, or ``paper_id,reviewer_id,score``; e.g. SPECTER2 run on a GPU) stored
as an affinity run of a venue's pool, which solves, browsing and exports then use like a
computed run.

The file is read by the reader the command line's ``assign`` uses
(:func:`recommender.io.read_scores`: duplicates, empty ids and non-finite scores named by
line) and checked against the venue (every paper and person it names must be among the
venue's submissions and the pool's persons, each unknown id named at its first line) before
anything is written. The venue's bids are folded in with ``bid_weight`` as an affinity job
folds them (a solve never folds bids: stored scores hold them); Not Willing and Conflict
bids are conflicts already. Conflicts are not detected (the detected ones of the last
computed run stay). The run's ``config`` says where the scores came from
(``method: "uploaded"``); nothing explains them (:func:`explanation_unavailable`).
"""

from __future__ import annotations

import csv
import io
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from recommender.affinity.params import DEFAULT_BID_WEIGHT
from recommender.bids import excluding_mask
from recommender.corpus import InputError, Problem
from recommender.io import ScoreTable, read_scores
from recommender.io._common import clean_id, clean_reviewer_id
from recommender.io.safe_csv import unescape_cell
from recommender.io.scores import PAPER_COLUMNS, REVIEWER_COLUMNS, SCORE_COLUMNS
from reviewer_recommender.errors import InvalidRequest
from reviewer_recommender.services.assignment import json_safe
from reviewer_recommender.services.pools import DEFAULT_POOL, check_pool
from reviewer_recommender.services.scoring import score_statistics
from reviewer_recommender.storage.models import (
    AffinityRun,
    AffinityScore,
    ReviewerRow,
    SubmissionRow,
)
from reviewer_recommender.storage.repository import (
    audit,
    bids_frame,
    corpus_version,
    pool_members,
)

UPLOADED = "uploaded"  # the ``config.method`` of an uploaded run
BID_WEIGHT_BOUND = 1000.0  # as the scoring parameters' bid_weight
INSERT_ROWS = 5000
UNKNOWN_LISTED = 20  # unknown ids named per column


def is_uploaded(config: Mapping[str, Any] | None) -> bool:
    """Whether an affinity run's ``config`` is an uploaded file's."""
    return config is not None and config.get("method") == UPLOADED


def explanation_unavailable(config: Mapping[str, Any]) -> dict[str, Any]:
    """The explanation of a pair of an uploaded run: none, and why (a field, not an
    error)."""
    source = config.get("source") or "a file"
    return {
        "available": False,
        "reason": f"these scores were uploaded from {source}, computed outside this "
        "service: no explanation is available for them",
        "source": source,
    }


@dataclass(frozen=True)
class UploadedScores:
    """What an upload stored: the new run, its pairs, the papers and persons it scores
    (of those the venue and pool have), the bids folded in, and warnings in words."""

    run_id: int
    pairs: int
    papers: int
    papers_total: int
    reviewers: int
    reviewers_total: int
    bids_folded: int
    pool: str
    warnings: list[str] = field(default_factory=list)


def store_uploaded_scores(
    session: Session,
    venue_id: str,
    content: bytes,
    name: str,
    actor: str,
    *,
    pool: str = DEFAULT_POOL,
    bid_weight: float = DEFAULT_BID_WEIGHT,
) -> UploadedScores:
    """Store the scores file ``content`` (named ``name`` in messages) as the pool's latest
    affinity run; :class:`InputError` naming file, line and field for a bad file (nothing
    stored), :class:`InvalidRequest` for a bad pool or bid weight. Commits."""
    pool = check_pool(pool)
    if not np.isfinite(bid_weight) or abs(bid_weight) > BID_WEIGHT_BOUND:
        raise InvalidRequest(
            "invalid_option",
            f"bid_weight: {bid_weight!r} is not a finite number within ±{BID_WEIGHT_BOUND:g}",
            field="bid_weight",
        )
    table = _read(content, name)
    papers = set(
        session.scalars(select(SubmissionRow.id).where(SubmissionRow.venue_id == venue_id))
    )
    persons = set(
        session.scalars(
            select(ReviewerRow.id).where(
                ReviewerRow.venue_id == venue_id, ReviewerRow.id.in_(pool_members(venue_id, pool))
            )
        )
    )
    _check_known(table, papers, persons, content, name, pool)
    frame = table.to_frame()
    frame["score"], folded = _fold_bids(frame, bids_frame(session, venue_id, pool), bid_weight)
    statistics = _statistics(table, frame["score"].to_numpy())
    statistics["bids_folded"] = folded
    statistics["stored_pairs"] = len(frame)
    version = corpus_version(session, venue_id)
    run = AffinityRun(
        venue_id=venue_id,
        pool=pool,
        job_id=None,
        config={"method": UPLOADED, "source": name, "bid_weight": float(bid_weight)},
        n_papers=len(table.paper_ids),
        n_reviewers=len(table.reviewer_ids),
        top_n=int(np.bincount(table.pair_paper).max()),
        statistics=statistics,
        corpus_version=version,
    )
    session.add(run)
    session.flush()
    rows = frame.assign(run_id=run.id, requested=False).to_dict("records")
    for start in range(0, len(rows), INSERT_ROWS):
        session.execute(insert(AffinityScore), rows[start : start + INSERT_ROWS])
    warnings = _coverage_warnings(table, len(papers), len(persons), pool)
    audit(
        session,
        venue_id,
        actor,
        "affinity.upload",
        source=name,
        pool=pool,
        run_id=run.id,
        pairs=len(frame),
        bid_weight=float(bid_weight),
    )
    session.commit()
    return UploadedScores(
        run_id=run.id,
        pairs=len(frame),
        papers=len(table.paper_ids),
        papers_total=len(papers),
        reviewers=len(table.reviewer_ids),
        reviewers_total=len(persons),
        bids_folded=folded,
        pool=pool,
        warnings=warnings,
    )


def _read(content: bytes, name: str) -> ScoreTable:
    """The file through the command line's reader (it reads a path: a private temporary
    file, removed at once)."""
    with tempfile.TemporaryDirectory(prefix="scores-upload-") as folder:
        path = Path(folder) / "scores.csv"
        path.write_bytes(content)
        return read_scores(path, name=name)


def _check_known(
    table: ScoreTable,
    papers: set[str],
    persons: set[str],
    content: bytes,
    name: str,
    pool: str,
) -> None:
    """InputError naming every paper the venue lacks and every person the pool lacks
    (the first few of each), each at the first line that holds it."""
    unknown_papers = [p for p in table.paper_ids if p not in papers][:UNKNOWN_LISTED]
    unknown_persons = [r for r in table.reviewer_ids if r not in persons][:UNKNOWN_LISTED]
    if not unknown_papers and not unknown_persons:
        return
    lines = _first_lines(content, set(unknown_papers), set(unknown_persons))
    whose = "the venue's reviewers" if pool == DEFAULT_POOL else f"pool {pool}"
    problems = [
        Problem(name, lines.get(("paper_id", p)), "paper_id", f"unknown paper id {p!r}")
        for p in unknown_papers
    ] + [
        Problem(
            name,
            lines.get(("reviewer_id", r)),
            "reviewer_id",
            f"unknown reviewer id {r!r} (not among {whose})",
        )
        for r in unknown_persons
    ]
    raise InputError(problems)


def _first_lines(
    content: bytes, papers: set[str], reviewers: set[str]
) -> dict[tuple[str, str], int]:
    """The file line of the first record naming each of ``papers`` (paper column) and
    ``reviewers`` (reviewer column), with the columns found as the reader finds them (a
    header naming them, else the first three). Only on the error path."""
    text = content.decode("utf-8-sig", errors="replace")
    reader = csv.reader(io.StringIO(text, newline=""))
    found: dict[tuple[str, str], int] = {}
    columns: tuple[int, int] | None = None
    start = 1
    try:
        for row in reader:
            line, start = start, reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            if columns is None:
                header = [cell.strip().lstrip("\ufeff").strip().casefold() for cell in row]
                aliases = (*PAPER_COLUMNS, *REVIEWER_COLUMNS, *SCORE_COLUMNS)
                if any(cell in aliases for cell in header):
                    columns = (
                        next((header.index(a) for a in PAPER_COLUMNS if a in header), 0),
                        next((header.index(a) for a in REVIEWER_COLUMNS if a in header), 1),
                    )
                    continue
                columns = (0, 1)
            paper_at, reviewer_at = columns
            if paper_at < len(row):
                paper = clean_id(unescape_cell(row[paper_at]))
                if paper in papers:
                    found.setdefault(("paper_id", paper), line)
            if reviewer_at < len(row):
                reviewer = clean_reviewer_id(unescape_cell(row[reviewer_at]))
                if reviewer in reviewers:
                    found.setdefault(("reviewer_id", reviewer), line)
    except csv.Error:
        pass
    return found


def _fold_bids(frame: pd.DataFrame, bids: pd.DataFrame, weight: float) -> tuple[np.ndarray, int]:
    """The scores with ``weight x bid`` added to each scored pair the venue has a bid on
    (Not Willing and Conflict bids excluded: they are conflicts), and how many were
    folded. Bids on pairs the file does not score are ignored, as an affinity job ignores
    bids on pairs it did not keep."""
    scores = frame["score"].to_numpy(np.float64).copy()
    if not len(bids) or weight == 0:
        return scores, 0
    usable = bids[~excluding_mask(bids["label"])]
    keyed = pd.Series(
        usable["bid"].astype(np.float64).to_numpy(),
        index=pd.MultiIndex.from_arrays([usable["paper_id"], usable["reviewer_id"]]),
    )
    pairs = pd.MultiIndex.from_arrays([frame["paper_id"], frame["reviewer_id"]])
    values = keyed.reindex(pairs).to_numpy()
    has_bid = ~np.isnan(values)
    scores[has_bid] += weight * values[has_bid]
    return scores, int(has_bid.sum())


def _statistics(table: ScoreTable, scores: np.ndarray) -> dict[str, Any]:
    """The computed runs' statistics, over the uploaded pairs (best per paper among the
    pairs the file lists)."""
    figures = score_statistics(scores[None, :])
    best = np.full(len(table.paper_ids), -np.inf)
    np.maximum.at(best, table.pair_paper, scores)
    figures["best_reviewer_score_per_paper"] = {
        "min": float(best.min()) if len(best) else None,
        "mean": float(best.mean()) if len(best) else None,
    }
    return dict(json_safe(figures))


def _coverage_warnings(
    table: ScoreTable, papers_total: int, persons_total: int, pool: str
) -> list[str]:
    """Papers and persons the file gives no score: they cannot be assigned from it."""
    warnings = []
    missing_papers = papers_total - len(table.paper_ids)
    if missing_papers:
        warnings.append(
            f"{missing_papers} of the venue's {papers_total} papers have no score in the file "
            "and cannot be assigned from these scores"
        )
    missing_persons = persons_total - len(table.reviewer_ids)
    if missing_persons:
        whose = "reviewers" if pool == DEFAULT_POOL else f"persons of pool {pool}"
        warnings.append(
            f"{missing_persons} of the {persons_total} {whose} have no score in the file "
            "and cannot be assigned from these scores"
        )
    return warnings
