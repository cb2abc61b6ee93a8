"""How a running solve reports progress and learns that it must stop.

Every solver's ``solve(problem, *, time_limit=None, seed=None, monitor=None)`` accepts a
:class:`SolveMonitor`. A solver calls ``monitor.report(...)`` whenever it knows more (a new
incumbent, a tighter bound, a finished stage) and polls ``monitor.should_stop()`` at least
every second or so; when it returns true the solver stops as soon as it can and raises
:class:`SolveCancelled`. ``matching`` never imports a job system: the service layer adapts
its own progress and cancel machinery to this protocol.
"""

from __future__ import annotations

from typing import Protocol


class SolveCancelled(Exception):
    """The solve was stopped because ``monitor.should_stop()`` returned true."""


class SolveMonitor(Protocol):
    def report(
        self,
        stage: str,
        *,
        fraction: float | None = None,
        incumbent: float | None = None,
        bound: float | None = None,
    ) -> None:
        """``stage``: what the solver is doing, in words; ``fraction`` in [0, 1] when the
        solver can tell how far it is; ``incumbent`` the objective of the best assignment
        found so far and ``bound`` a proven upper bound on the optimum (same units as the
        problem's scores)."""
        ...

    def should_stop(self) -> bool:
        """True once the caller wants the solve abandoned (e.g. a cancelled job)."""
        ...


class NullMonitor:
    """Reports nowhere and never stops: the default."""

    def report(
        self,
        stage: str,
        *,
        fraction: float | None = None,
        incumbent: float | None = None,
        bound: float | None = None,
    ) -> None:
        return None

    def should_stop(self) -> bool:
        return False


def check_stop(monitor: SolveMonitor | None) -> None:
    """Raise :class:`SolveCancelled` if ``monitor`` asks to stop."""
    if monitor is not None and monitor.should_stop():
        raise SolveCancelled("the solve was cancelled")
