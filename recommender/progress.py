"""Progress of a long step in numbers: texts embedded or papers scored, done/total, measured
rate, time left.

Progress callbacks throughout the library are ``progress(fraction, stage)`` with ``stage`` a
string a person reads. While texts are embedded, ``stage`` is a :class:`ProgressStage`: a
``str`` (``"embedding 1,200 / 3,400 texts, 15 texts/s, about 2 min left"``) that also
carries the numbers as :attr:`ProgressStage.detail` (a :class:`TextProgress`; while papers
are scored a :class:`ScoringProgress`, ``"scoring 1,200 / 20,000 papers, 150 papers/s, about
2 min left"``), so that a
caller that wants them (the affinity job, which stores them beside its progress bar) reads
them and every other caller keeps printing the string.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

REPORT_SECONDS = 2.0
"""Target seconds between two embedding progress reports (each chunk of texts is sized
from the measured rate to take about this long, so reports come well within 5 s)."""


@dataclass(frozen=True)
class TextProgress:
    """Where an embedding step stands.

    ``texts_done`` / ``texts_total``: texts embedded so far / to embed in this step (texts
    already in the embedding cache are not counted: they cost nothing);
    ``texts_per_second``: measured over this step so far (None before the first chunk);
    ``eta_seconds``: time left at that rate (None while unknown); ``elapsed_seconds``:
    since the step began.
    """

    texts_done: int
    texts_total: int
    texts_per_second: float | None
    eta_seconds: float | None
    elapsed_seconds: float

    @property
    def fraction(self) -> float:
        return self.texts_done / self.texts_total if self.texts_total else 1.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``texts_done, texts_total, texts_per_second, eta_seconds,
        elapsed_seconds`` (rates and times rounded to 0.1)."""
        data = asdict(self)
        for key in ("texts_per_second", "eta_seconds", "elapsed_seconds"):
            if data[key] is not None:
                data[key] = round(float(data[key]), 1)
        return data

    def describe(self) -> str:
        """``embedding 1,200 / 3,400 texts, 15 texts/s, about 2 min left``."""
        text = f"embedding {self.texts_done:,} / {self.texts_total:,} texts"
        if self.texts_per_second is not None:
            text += f", {format_rate(self.texts_per_second)} texts/s"
        if self.eta_seconds is not None and self.texts_done < self.texts_total:
            text += f", about {format_duration(self.eta_seconds)} left"
        return text


@dataclass(frozen=True)
class ScoringProgress:
    """Where a scoring step stands.

    ``fraction``: of the (paper, publication) similarities computed so far (a paper block's
    publication blocks count as they finish); ``papers_done``: whole papers that fraction
    amounts to, of ``papers_total``; ``papers_per_second``: measured over this step so far
    (None before any work); ``eta_seconds``: time left at that rate; ``elapsed_seconds``:
    since the step began; ``blocks_done`` / ``blocks_total``: paper blocks finished.
    """

    fraction: float
    papers_done: int
    papers_total: int
    papers_per_second: float | None
    eta_seconds: float | None
    elapsed_seconds: float
    blocks_done: int
    blocks_total: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, as :meth:`TextProgress.to_dict` (rates and times rounded to 0.1)."""
        data = asdict(self)
        data["fraction"] = round(float(self.fraction), 4)
        for key in ("papers_per_second", "eta_seconds", "elapsed_seconds"):
            if data[key] is not None:
                data[key] = round(float(data[key]), 1)
        return data

    def describe(self) -> str:
        """``scoring 1,200 / 20,000 papers, 150 papers/s, about 2 min left``."""
        text = f"scoring {self.papers_done:,} / {self.papers_total:,} papers"
        if self.papers_per_second is not None:
            text += f", {format_rate(self.papers_per_second)} papers/s"
        if self.eta_seconds is not None and self.fraction < 1.0:
            text += f", about {format_duration(self.eta_seconds)} left"
        return text


class ProgressStage(str):
    """A stage text that carries its numbers (see the module docstring)."""

    detail: TextProgress | ScoringProgress

    def __new__(cls, detail: TextProgress | ScoringProgress) -> ProgressStage:
        stage = super().__new__(cls, detail.describe())
        stage.detail = detail
        return stage


class TextProgressMeter:
    """Measures an embedding step: call :meth:`update` with the texts done so far; it
    returns the :class:`TextProgress` (rate and ETA from the time since construction)."""

    def __init__(self, texts_total: int, clock: Any = time.monotonic):
        self.texts_total = texts_total
        self._clock = clock
        self._started = clock()

    def update(self, texts_done: int) -> TextProgress:
        elapsed = max(self._clock() - self._started, 0.0)
        rate = texts_done / elapsed if texts_done and elapsed > 0 else None
        eta = (self.texts_total - texts_done) / rate if rate else None
        return TextProgress(texts_done, self.texts_total, rate, eta, elapsed)

    def stage(self, texts_done: int) -> ProgressStage:
        return ProgressStage(self.update(texts_done))


class ScoringMeter:
    """Measures a scoring step of ``papers_total`` papers in ``blocks_total`` blocks and
    reports it through ``progress(fraction, stage)`` (stage a :class:`ProgressStage` with a
    :class:`ScoringProgress`): :meth:`update` after every piece of work (a publication
    block of a paper block: a few seconds at most at venue scale) reports when ``every``
    (None: :data:`REPORT_SECONDS`) seconds have passed since the last report, or when
    ``force`` (the start and the end),
    so that a long step's numbers move every few seconds without flooding a printed log.
    ``progress`` may raise to cancel (the step's cancel points are its reports).
    """

    def __init__(
        self,
        papers_total: int,
        blocks_total: int,
        progress: Callable[[float, str], None],
        *,
        every: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.papers_total = papers_total
        self.blocks_total = blocks_total
        self._progress = progress
        self._every = REPORT_SECONDS if every is None else every
        self._clock = clock
        self._started = clock()
        self._last_report: float | None = None
        self.reports = 0

    def measure(self, fraction: float, blocks_done: int) -> ScoringProgress:
        fraction = min(max(float(fraction), 0.0), 1.0)
        elapsed = max(self._clock() - self._started, 0.0)
        done = fraction * self.papers_total
        rate = done / elapsed if done and elapsed > 0 else None
        eta = (self.papers_total - done) / rate if rate else None
        papers_done = self.papers_total if fraction >= 1.0 else int(done)
        return ScoringProgress(
            fraction,
            papers_done,
            self.papers_total,
            rate,
            eta,
            elapsed,
            blocks_done,
            self.blocks_total,
        )

    def update(self, fraction: float, blocks_done: int, *, force: bool = False) -> None:
        now = self._clock()
        if not force and self._last_report is not None and now - self._last_report < self._every:
            return
        self._last_report = now
        self.reports += 1
        detail = self.measure(fraction, blocks_done)
        self._progress(detail.fraction, ProgressStage(detail))


def format_rate(rate: float) -> str:
    """``15``, ``2.1``, ``0.35`` texts/s: two significant figures below 10."""
    if rate >= 10:
        return f"{rate:,.0f}"
    return f"{rate:.2g}" if rate >= 0.1 else f"{rate:.1g}"


def format_duration(seconds: float) -> str:
    """A duration a person reads: ``40 s``, ``2 min``, ``1 h 05 min``, ``2 days 3 h``."""
    if not math.isfinite(seconds):
        return "an unknown time"
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes:02d} min"
    days, hours = divmod(hours, 24)
    return f"{days} days {hours} h"
