"""The job runner's workers: fair across venues.

Jobs wait in one queue per venue. A free worker takes the oldest queued job of the venue
that started a job least recently (a venue that never started one first; ties: the venue
whose oldest job has waited longest), skipping venues that already run ``venue_cap`` jobs.
So a venue that queues hundreds of jobs, or a few long ones, occupies at most ``venue_cap``
workers, and another venue's job starts as soon as one of the other workers is free: with
the default cap of one less than the workers, at once.
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any


@dataclass
class _Item:
    sequence: int
    future: Future[Any]
    call: Callable[[], Any]


class FairExecutor:
    """``workers`` threads running submitted calls round-robin across venues, at most
    ``venue_cap`` of one venue at once (see the module docstring)."""

    def __init__(self, workers: int, venue_cap: int, name: str = "recommender-job"):
        if workers < 1 or venue_cap < 1:
            raise ValueError("workers and venue_cap must be at least 1")
        self.venue_cap = venue_cap
        self._cond = threading.Condition()
        self._queues: dict[str, deque[_Item]] = {}
        self._running: Counter[str] = Counter()
        self._last_start: dict[str, int] = {}
        self._sequence = itertools.count()
        self._shutdown = False
        self._threads = [
            threading.Thread(target=self._work, name=f"{name}-{index}", daemon=True)
            for index in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, venue_id: str, call: Callable[[], Any]) -> Future[Any]:
        """Queue ``call`` for ``venue_id``; its future ends with its result."""
        future: Future[Any] = Future()
        with self._cond:
            if self._shutdown:
                raise RuntimeError("the job workers were shut down")
            item = _Item(next(self._sequence), future, call)
            self._queues.setdefault(venue_id, deque()).append(item)
            self._cond.notify()
        return future

    def running(self) -> dict[str, int]:
        """Calls running now, by venue."""
        with self._cond:
            return dict(self._running)

    def _take(self) -> tuple[str, _Item] | None:
        """The next call to run (the lock held), or None when no venue may start one."""
        ready = [
            venue
            for venue, queue in self._queues.items()
            if queue and self._running[venue] < self.venue_cap
        ]
        if not ready:
            return None
        venue = min(ready, key=lambda v: (self._last_start.get(v, -1), self._queues[v][0].sequence))
        queue = self._queues[venue]
        item = queue.popleft()
        if not queue:
            del self._queues[venue]
        self._running[venue] += 1
        self._last_start[venue] = next(self._sequence)
        return venue, item

    def _work(self) -> None:
        while True:
            with self._cond:
                taken = self._take()
                while taken is None:
                    if self._shutdown:
                        return
                    self._cond.wait()
                    taken = self._take()
            venue, item = taken
            try:
                if item.future.set_running_or_notify_cancel():
                    try:
                        item.future.set_result(item.call())
                    except BaseException as error:  # recorded in the future, as an executor does
                        item.future.set_exception(error)
            finally:
                with self._cond:
                    self._running[venue] -= 1
                    if not self._running[venue]:
                        del self._running[venue]
                    self._cond.notify_all()

    def shutdown(self, cancel_futures: bool = True) -> None:
        """No new calls; queued ones cancelled (``cancel_futures``); running ones finish on
        their threads (daemons: they do not keep the process alive)."""
        with self._cond:
            self._shutdown = True
            if cancel_futures:
                for queue in self._queues.values():
                    for item in queue:
                        item.future.cancel()
                self._queues.clear()
            self._cond.notify_all()
