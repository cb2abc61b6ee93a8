"""Run a linear or mixed-integer program held as sparse matrices with HiGHS (highspy).

One place for what every HiGHS solve of ours needs: the model passed as arrays (no
per-row Python objects), a time limit, a warm start, progress (incumbent and bound) to a
:class:`~matching.monitor.SolveMonitor`, and a stop within a fraction of a second of
``monitor.should_stop()`` through HiGHS' interrupt callbacks.
"""

from __future__ import annotations

import os
import pickle
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import highspy
import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from matching.monitor import SolveCancelled, SolveMonitor

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_POLL_SECONDS = 0.2
_REPORT_SECONDS = 1.0
_banner_lock = threading.Lock()
_banner_shown = False


@dataclass
class MatrixModel:
    """``max or min  cost @ x  s.t.  row_lower <= matrix @ x <= row_upper,
    lower <= x <= upper, x[integer] integral``; ``matrix`` (rows, cols) sparse."""

    cost: FloatArray
    lower: FloatArray
    upper: FloatArray
    integer: BoolArray
    matrix: sp.csc_matrix
    row_lower: FloatArray
    row_upper: FloatArray
    maximize: bool = True

    @property
    def n_cols(self) -> int:
        return len(self.cost)

    def relaxed(self) -> MatrixModel:
        """The LP relaxation (no integrality)."""
        return replace(self, integer=np.zeros(self.n_cols, dtype=bool))


@dataclass
class Outcome:
    """What a HiGHS run gave.

    ``status``: ``optimal``, ``infeasible``, ``time limit``, ``unbounded`` or
    ``failed``; ``values`` the best solution found (None when there is none);
    ``objective`` its value; ``bound`` a proven bound on the optimum in the model's sense
    (for a maximization an upper bound; +inf / -inf when none is known); ``gap`` HiGHS'
    relative MIP gap."""

    status: str
    values: FloatArray | None
    objective: float
    bound: float
    gap: float
    seconds: float
    nodes: int = 0
    notes: list[str] = field(default_factory=list)


def new_highs() -> highspy.Highs:
    """A silent HiGHS instance (its one-time banner on stdout is swallowed)."""
    global _banner_shown
    with _banner_lock:
        if _banner_shown:
            highs = highspy.Highs()
        else:
            highs = _quietly(highspy.Highs)
            _banner_shown = True
    highs.setOptionValue("output_flag", False)
    return highs


def _quietly(make: type[highspy.Highs]) -> highspy.Highs:
    """Construct with file descriptor 1 pointed at /dev/null (HiGHS prints its banner from
    C++ at the first construction in a process)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):
        return make()
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            return make()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def solve(
    model: MatrixModel,
    *,
    time_limit: float | None,
    gap: float = 1e-9,
    threads: int | None = None,
    msg: bool = False,
    start: FloatArray | None = None,
    monitor: SolveMonitor | None = None,
    stage: str = "solving",
    to_units: tuple[float, float] = (1.0, 0.0),
) -> Outcome:
    """Solve ``model``. ``time_limit`` in seconds (None: no limit); ``gap`` the relative
    MIP gap at which to stop; ``start`` a feasible solution to start from. ``monitor``
    gets ``report(stage, incumbent=, bound=)`` on each improving solution and about every
    second, in the problem's units (``value * scale + offset`` with ``to_units = (scale,
    offset)``), and is polled about five times a second; a stop request ends the solve and
    raises :class:`SolveCancelled`.

    HiGHS checks its interrupt callbacks between branch-and-bound steps but not while it
    solves an LP (the root LP of a large model can take many seconds), so with a monitor a
    model above ``IN_PROCESS_NONZEROS`` runs in a child process (forkserver) that is
    killed on a stop request; smaller ones, and every solve without a monitor, run here.
    ``threads`` is ignored: HiGHS fixes its thread pool once per process."""
    options: dict[str, Any] = {
        "time_limit": time_limit,
        "gap": gap,
        "msg": msg,
        "stage": stage,
        "to_units": to_units,
    }
    if monitor is None or model.matrix.nnz <= IN_PROCESS_NONZEROS or not _can_spawn():
        return _solve_here(model, start=start, monitor=monitor, **options)
    return _solve_in_child(model, start=start, monitor=monitor, **options)


def _solve_here(
    model: MatrixModel,
    *,
    time_limit: float | None,
    gap: float,
    msg: bool,
    start: FloatArray | None,
    monitor: SolveMonitor | None,
    stage: str,
    to_units: tuple[float, float],
) -> Outcome:
    began = time.perf_counter()
    if model.n_cols == 0:
        return _empty(model, began)
    highs = new_highs()
    if msg:
        highs.setOptionValue("output_flag", True)
    if time_limit is not None:
        highs.setOptionValue("time_limit", max(float(time_limit), 0.0))
    highs.setOptionValue("mip_rel_gap", float(gap))
    # Presolve finds next to nothing in assignment models and costs seconds at scale.
    highs.setOptionValue("presolve", "off")
    highs.passModel(_highs_lp(model))
    if start is not None and model.integer.any():
        solution = highspy.HighsSolution()
        solution.col_value = np.asarray(start, dtype=np.float64).tolist()
        solution.value_valid = True
        highs.setSolution(solution)
    watcher = _Watcher(monitor, stage, to_units, model.maximize)
    if monitor is not None:
        highs.cbMipImprovingSolution.subscribe(watcher.improved)
        for callback in (highs.cbMipInterrupt, highs.cbSimplexInterrupt, highs.cbIpmInterrupt):
            callback.subscribe(watcher.poll)
    highs.run()
    if watcher.stopped:
        raise SolveCancelled("the solve was cancelled")
    return _outcome(highs, model, began)


IN_PROCESS_NONZEROS = 40_000


def _can_spawn() -> bool:
    return bool(sys.executable)


class ChannelMonitor:
    """The child's monitor: forwards reports to the parent over ``channel`` (a binary
    file); never stops by itself (the parent kills the child)."""

    def __init__(self, channel: Any) -> None:
        self.channel = channel

    def send(self, message: tuple[Any, ...]) -> None:
        pickle.dump(message, self.channel, protocol=pickle.HIGHEST_PROTOCOL)
        self.channel.flush()

    def report(
        self,
        stage: str,
        *,
        fraction: float | None = None,
        incumbent: float | None = None,
        bound: float | None = None,
    ) -> None:
        self.send(("report", stage, fraction, incumbent, bound))

    def should_stop(self) -> bool:
        return False


def child_main() -> None:
    """Entry point of ``python -m matching.solvers._highs``: read (model, start, options)
    from stdin, solve, send reports and the outcome (pickles) on the original stdout.
    HiGHS' own output goes to stderr so it cannot corrupt the channel."""
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()
    monitor = ChannelMonitor(channel)
    try:
        model, start, options = pickle.load(sys.stdin.buffer)
        monitor.send(("ready",))
        monitor.send(("done", _solve_here(model, start=start, monitor=monitor, **options)))
    except BaseException as error:  # the parent raises it
        monitor.send(("error", f"{type(error).__name__}: {error}"))
    finally:
        channel.close()


def _exit_with_parent(parent: int) -> None:
    """End the child when its parent is gone (killed without a chance to kill us)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


def _solve_in_child(
    model: MatrixModel,
    *,
    start: FloatArray | None,
    monitor: SolveMonitor,
    **options: Any,
) -> Outcome:
    """Run :func:`_solve_here` in a fresh interpreter that is killed on a stop request."""
    package_root = str(Path(__file__).resolve().parents[2])
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(
        part for part in (package_root, environment.get("PYTHONPATH", "")) if part
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "matching.solvers._highs"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL if not options.get("msg") else None,
        env=environment,
    )
    messages: queue.Queue[tuple[Any, ...]] = queue.Queue()
    reader = threading.Thread(target=_read_messages, args=(process, messages), daemon=True)
    reader.start()
    try:
        assert process.stdin is not None
        try:
            pickle.dump((model, start, options), process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            process.stdin.close()
        except BrokenPipeError:
            pass  # the child died; the reader reports it
        ready = False
        while True:
            if monitor.should_stop():
                raise SolveCancelled("the solve was cancelled")
            try:
                message = messages.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                continue
            if message[0] == "ready":
                ready = True
            elif message[0] == "error" and not ready:
                # The child could not start (an unusual interpreter or environment): solve
                # here; stopping then waits for HiGHS' next interrupt check.
                return _solve_here(model, start=start, monitor=monitor, **options)
            elif message[0] == "report":
                _, stage, fraction, incumbent, bound = message
                monitor.report(stage, fraction=fraction, incumbent=incumbent, bound=bound)
            elif message[0] == "done":
                outcome: Outcome = message[1]
                return outcome
            else:
                raise RuntimeError(f"HiGHS failed in its process: {message[1]}")
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def _read_messages(process: subprocess.Popen[bytes], messages: queue.Queue[Any]) -> None:
    assert process.stdout is not None
    try:
        while True:
            messages.put(pickle.load(process.stdout))
    except Exception as error:  # EOF when the child ends; anything else is reported
        code = process.wait()
        detail = "" if isinstance(error, EOFError) else f": {type(error).__name__}: {error}"
        messages.put(("error", f"the process ended (exit code {code}){detail}"))


class _Watcher:
    def __init__(
        self,
        monitor: SolveMonitor | None,
        stage: str,
        to_units: tuple[float, float],
        maximize: bool,
    ) -> None:
        self.monitor = monitor
        self.stage = stage
        self.scale, self.offset = to_units
        self.sign = 1.0 if maximize else -1.0
        self.stopped = False
        self.last_poll = 0.0
        self.last_report = 0.0

    def _units(self, value: float) -> float | None:
        if not np.isfinite(value) or abs(value) >= 1e30:
            return None
        return value * self.scale + self.offset

    def improved(self, event: Any) -> None:
        self._report(event.data_out, force=True)

    def poll(self, event: Any) -> None:
        now = time.monotonic()
        if now - self.last_poll < _POLL_SECONDS:
            return
        self.last_poll = now
        assert self.monitor is not None
        if self.monitor.should_stop():
            self.stopped = True
            event.interrupt()
            return
        if event.callback_type == highspy.cb.HighsCallbackType.kCallbackMipInterrupt:
            self._report(event.data_out, force=False)
        elif now - self.last_report >= _REPORT_SECONDS:
            self.last_report = now
            self.monitor.report(f"{self.stage} (solving the LP relaxation)")

    def _report(self, data: highspy.cb.HighsCallbackOutput, *, force: bool) -> None:
        now = time.monotonic()
        if not force and now - self.last_report < _REPORT_SECONDS:
            return
        self.last_report = now
        assert self.monitor is not None
        self.monitor.report(
            self.stage,
            incumbent=self._units(data.mip_primal_bound),
            bound=self._units(data.mip_dual_bound),
        )


def _highs_lp(model: MatrixModel) -> highspy.HighsLp:
    lp = highspy.HighsLp()
    matrix = sp.csc_matrix(model.matrix)
    lp.num_col_ = model.n_cols
    lp.num_row_ = matrix.shape[0]
    lp.sense_ = highspy.ObjSense.kMaximize if model.maximize else highspy.ObjSense.kMinimize
    lp.col_cost_ = np.asarray(model.cost, dtype=np.float64)
    lp.col_lower_ = _finite(model.lower)
    lp.col_upper_ = _finite(model.upper)
    lp.row_lower_ = _finite(model.row_lower)
    lp.row_upper_ = _finite(model.row_upper)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = matrix.indptr.astype(np.int32)
    lp.a_matrix_.index_ = matrix.indices.astype(np.int32)
    lp.a_matrix_.value_ = matrix.data.astype(np.float64)
    if model.integer.any():
        lp.integrality_ = [
            highspy.HighsVarType.kInteger if flag else highspy.HighsVarType.kContinuous
            for flag in model.integer.tolist()
        ]
    return lp


def _finite(values: FloatArray) -> FloatArray:
    """HiGHS' infinity for infinite bounds."""
    array = np.asarray(values, dtype=np.float64).copy()
    array[array == np.inf] = highspy.kHighsInf
    array[array == -np.inf] = -highspy.kHighsInf
    return array


def _outcome(highs: highspy.Highs, model: MatrixModel, began: float) -> Outcome:
    status = highs.getModelStatus()
    info = highs.getInfo()
    seconds = time.perf_counter() - began
    worst = -np.inf if model.maximize else np.inf
    statuses = highspy.HighsModelStatus
    if status in (statuses.kInfeasible, statuses.kUnboundedOrInfeasible):
        return Outcome("infeasible", None, worst, worst, np.inf, seconds)
    if status == statuses.kUnbounded:
        return Outcome("unbounded", None, -worst, -worst, np.inf, seconds)
    has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
    values = np.asarray(highs.getSolution().col_value, dtype=np.float64) if has_solution else None
    objective = float(info.objective_function_value) if has_solution else worst
    if model.integer.any():
        bound = float(info.mip_dual_bound)
        if not np.isfinite(bound) or abs(bound) >= highspy.kHighsInf:
            bound = -worst
        gap = float(info.mip_gap) if has_solution else np.inf
        nodes = int(info.mip_node_count)
    else:
        bound = objective if status == statuses.kOptimal else -worst
        gap = 0.0 if status == statuses.kOptimal else np.inf
        nodes = 0
    if status == statuses.kOptimal:
        label = "optimal"
    elif status in (statuses.kTimeLimit, statuses.kInterrupt):
        label = "time limit"
    else:
        label = "failed" if values is None else "time limit"
    return Outcome(label, values, objective, bound, gap, seconds, nodes)


def _empty(model: MatrixModel, began: float) -> Outcome:
    """A model without columns: feasible iff every row admits 0."""
    rows_ok = bool(np.all(model.row_lower <= 1e-9) and np.all(model.row_upper >= -1e-9))
    seconds = time.perf_counter() - began
    if not rows_ok:
        worst = -np.inf if model.maximize else np.inf
        return Outcome("infeasible", None, worst, worst, np.inf, seconds)
    return Outcome("optimal", np.zeros(0), 0.0, 0.0, 0.0, seconds)


if __name__ == "__main__":
    # Import ourselves under our real name so that pickled results name
    # matching.solvers._highs.Outcome, not __main__.Outcome.
    from matching.solvers._highs import child_main as _main

    _main()
