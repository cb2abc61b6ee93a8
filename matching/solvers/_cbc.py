"""Run a :class:`~matching.solvers._highs.MatrixModel` with CBC (the binary bundled with PuLP).

PuLP writes the MPS file and reads CBC's solution file; we start the CBC process
ourselves so that it can be ended when the monitor asks to stop, and read its log to
report each new incumbent. CBC's own bound is not read: callers bound the optimum with
the LP relaxation (solved by HiGHS), which is never below the true optimum.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pulp

from matching.monitor import SolveCancelled, SolveMonitor
from matching.solvers._highs import MatrixModel, Outcome

_POLL_SECONDS = 0.2
_INCUMBENT = re.compile(r"Integer solution of (-?[0-9.eE+-]+) found")


def cbc_path() -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return str(pulp.PULP_CBC_CMD().path)


def solve(
    model: MatrixModel,
    *,
    time_limit: float | None,
    gap: float = 1e-9,
    threads: int | None = None,
    msg: bool = False,
    monitor: SolveMonitor | None = None,
    stage: str = "solving",
    to_units: tuple[float, float] = (1.0, 0.0),
) -> Outcome:
    """Solve ``model`` with CBC; same contract as :func:`matching.solvers._highs.solve`
    except that ``bound`` is +/-inf (unknown) and there is no warm start."""
    began = time.perf_counter()
    if model.n_cols == 0:
        from matching.solvers._highs import _empty

        return _empty(model, began)
    prob, variables = _pulp_model(model)
    with tempfile.TemporaryDirectory(prefix="matching_cbc_") as folder:
        mps, solution, log = (Path(folder) / name for name in ("m.mps", "m.sol", "m.log"))
        _, names, constraint_names, _ = prob.writeMPS(str(mps), rename=1)
        command = [cbc_path(), str(mps)]
        if model.maximize:
            command.append("-max")
        if time_limit is not None:
            command += ["-sec", f"{max(time_limit, 0.01):g}"]
        command += ["-ratio", f"{gap:g}", "-timeMode", "elapsed"]
        if threads is not None:
            command += ["-threads", str(threads)]
        command += ["-solve", "-printingOptions", "all", "-solution", str(solution)]
        with open(log, "w") as log_file:
            process = subprocess.Popen(
                command, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
            _wait(process, log, monitor, stage, to_units, -1.0 if model.maximize else 1.0)
        if msg:
            print(log.read_text(errors="replace"))
        if process.returncode != 0 or not solution.exists():
            return Outcome("failed", None, np.nan, np.nan, np.inf, time.perf_counter() - began)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            reader = pulp.PULP_CBC_CMD()
        status, values, _, _, _, sol_status = reader.readsol_MPS(
            str(solution), prob, prob.variables(), names, constraint_names
        )
    seconds = time.perf_counter() - began
    worst = -np.inf if model.maximize else np.inf
    if status == pulp.LpStatusInfeasible:
        return Outcome("infeasible", None, worst, worst, np.inf, seconds)
    if sol_status not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
        return Outcome("time limit", None, worst, -worst, np.inf, seconds)
    x = np.array([values.get(v.name, 0.0) or 0.0 for v in variables], dtype=np.float64)
    objective = float(model.cost @ x)
    label = "optimal" if status == pulp.LpStatusOptimal and sol_status == 1 else "time limit"
    return Outcome(label, x, objective, -worst, np.inf, seconds)


def _wait(
    process: subprocess.Popen[bytes],
    log: Path,
    monitor: SolveMonitor | None,
    stage: str,
    to_units: tuple[float, float],
    sign: float,
) -> None:
    """Wait for CBC, killing it on a stop request; report each incumbent from its log
    (CBC logs the objective it minimizes: ``sign`` turns it back)."""
    best: float | None = None
    while process.poll() is None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=_POLL_SECONDS)
        if monitor is None:
            continue
        if monitor.should_stop():
            process.kill()
            process.wait()
            raise SolveCancelled("the solve was cancelled")
        found = _INCUMBENT.findall(log.read_text(errors="replace"))
        if found:
            value = sign * float(found[-1]) * to_units[0] + to_units[1]
            if best is None or value != best:
                best = value
                monitor.report(stage, incumbent=value)


def _pulp_model(model: MatrixModel) -> tuple[pulp.LpProblem, list[pulp.LpVariable]]:
    sense = pulp.LpMaximize if model.maximize else pulp.LpMinimize
    prob = pulp.LpProblem("assignment", sense)
    variables = [
        prob.add_variable(
            f"x{i}",
            None if not np.isfinite(low) else float(low),
            None if not np.isfinite(high) else float(high),
            cat=pulp.LpInteger if integer else pulp.LpContinuous,
        )
        for i, (low, high, integer) in enumerate(
            zip(model.lower, model.upper, model.integer, strict=True)
        )
    ]
    prob.setObjective(
        pulp.LpAffineExpression(
            [(v, float(c)) for v, c in zip(variables, model.cost, strict=True) if c != 0]
        )
    )
    rows = model.matrix.tocsr()
    for r in range(rows.shape[0]):
        start, end = rows.indptr[r], rows.indptr[r + 1]
        terms = pulp.LpAffineExpression(
            [
                (variables[j], float(a))
                for j, a in zip(rows.indices[start:end], rows.data[start:end], strict=True)
            ]
        )
        low, high = float(model.row_lower[r]), float(model.row_upper[r])
        if low == high:
            prob.addConstraint(pulp.LpConstraint(terms, pulp.LpConstraintEQ, rhs=low), f"r{r}")
            continue
        if np.isfinite(low):
            prob.addConstraint(pulp.LpConstraint(terms, pulp.LpConstraintGE, rhs=low), f"g{r}")
        if np.isfinite(high):
            prob.addConstraint(pulp.LpConstraint(terms, pulp.LpConstraintLE, rhs=high), f"l{r}")
    return prob, variables
