"""Slots for heavy work done inside a request (an emergency re-assignment solves a venue):
at most ``per_venue`` at once per venue and ``total`` in all, in this server process.

A request that finds no free slot is refused at once with :class:`Busy` (HTTP 429 with
``Retry-After``), never queued: a waiting request would hold its worker thread and its
database session, and many of them would starve every other venue's requests. The work
itself runs on the request's worker thread, never on the event loop.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from reviewer_recommender.errors import Busy


class HeavyWork:
    """Counters of heavy work in progress, per venue and in all (thread-safe)."""

    def __init__(self, per_venue: int = 1, total: int = 2, retry_after: int = 5):
        self.per_venue = per_venue
        self.total = total
        self.retry_after = retry_after
        self._venues: Counter[str] = Counter()
        self._lock = threading.Lock()

    @contextmanager
    def slot(self, venue_id: str, what: str) -> Iterator[None]:
        """Hold a slot for ``what`` in ``venue_id`` while the block runs; :class:`Busy`
        (``code`` ``busy``) when the venue or the server has none free."""
        with self._lock:
            if self._venues[venue_id] >= self.per_venue:
                raise Busy(
                    "busy",
                    f"{what}: venue {venue_id!r} already runs {self.per_venue} at once; "
                    f"retry after {self.retry_after} s",
                    retry_after=self.retry_after,
                )
            if sum(self._venues.values()) >= self.total:
                raise Busy(
                    "busy",
                    f"{what}: the server already runs {self.total} at once; retry after "
                    f"{self.retry_after} s",
                    retry_after=self.retry_after,
                )
            self._venues[venue_id] += 1
        try:
            yield
        finally:
            with self._lock:
                self._venues[venue_id] -= 1
                if not self._venues[venue_id]:
                    del self._venues[venue_id]
