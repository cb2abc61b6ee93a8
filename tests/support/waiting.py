"""Waiting for something to happen, without asserting how fast it happens (figures of speed
live in ``benchmarks/``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    probe: Callable[[], T],
    done: Callable[[T], bool] = bool,
    *,
    what: str,
    timeout: float = 120.0,
    interval: float = 0.05,
    describe: Callable[[T], object] = repr,
) -> T:
    """Call ``probe`` until ``done`` holds for what it returns, and return that. After
    ``timeout`` seconds (a bound on a hang, not a claim of speed) fail, naming ``what`` was
    awaited and the last value seen (as ``describe`` puts it)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if done(value):
            return value
        if time.monotonic() > deadline:
            seen = str(describe(value))[:2000]
            raise AssertionError(f"waited {timeout:g} s for {what}; last seen: {seen}")
        time.sleep(interval)
