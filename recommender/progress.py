"""Progress of a long embedding step in numbers: texts done/total, measured rate, time left.

Progress callbacks throughout the library are ``progress(fraction, stage)`` with ``stage`` a
string a person reads. While texts are embedded, ``stage`` is a :class:`ProgressStage`: a
``str`` (``"embedding 1,200 / 3,400 texts, 15 texts/s, about 2 min left"``) that also
carries the numbers as :attr:`ProgressStage.detail` (a :class:`TextProgress`), so that a
caller that wants them (the affinity job, which stores them beside its progress bar) reads
them and every other caller keeps printing the string.
"""

from __future__ import annotations

import math
import time
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


class ProgressStage(str):
    """A stage text that carries its numbers (see the module docstring)."""

    detail: TextProgress

    def __new__(cls, detail: TextProgress) -> ProgressStage:
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
