"""Exact min-cost-flow solver (OR-Tools) for problems without coupling side constraints."""

from __future__ import annotations

import time

import numpy as np

from matching import _flowgraph
from matching.assignment import Assignment
from matching.constraints import apply_pair_filters, model_constraints
from matching.diagnose import diagnose
from matching.monitor import SolveMonitor, check_stop
from matching.problem import AssignmentProblem, FloatArray, Infeasible, IntArray
from matching.validate import OptionError, needs_ilp_message, option_name

# |integer cost| * (nodes + 1)^2 stays below this, which keeps OR-Tools' cost scaling
# (it multiplies costs by the node count) and its potentials clear of int64 overflow.
_COST_HEADROOM = 2.0**61
_MAX_SCALE = 1e12


class FlowSolver:
    """Maximum-affinity assignment by min-cost flow; exact for demands, [min, max] loads,
    forced pairs and pair filters (``MinScore``).

    Encoding: see :mod:`matching._flowgraph` (papers supply demand, pair arcs of capacity 1,
    reviewer lower bounds by the lower-bound transformation, forced pairs pre-assigned).

    Integer costs: each free pair costs ``-round(score * scale)`` with
    ``scale = min(1e12, 2**61 / (max|score| * (nodes + 1)**2))`` (divided by 16 and retried
    if OR-Tools still reports a bad cost range). The flow is optimal for the rounded
    scores; with ``delta = max |round(s * scale) - s * scale| / scale`` (<= 0.5 / scale) and
    ``n`` free assigned pairs, its true objective is within ``2 * n * delta`` of the true
    optimum. ``objective`` is the sum of the original float scores; ``upper_bound`` is
    ``objective + 2 * n * delta`` (equal to the objective when scores scale exactly, e.g.
    integers), i.e. the optimum is exact up to that rounding bound (relative gap 8e-10
    on the 20k x 20k benchmark), reported in ``parameters["rounding_bound"]``.
    """

    name = "flow"

    def __init__(self, *, max_scale: float = _MAX_SCALE) -> None:
        self.max_scale = max_scale

    def solve(
        self,
        problem: AssignmentProblem,
        *,
        time_limit: float | None = None,
        seed: int | None = None,
        monitor: SolveMonitor | None = None,
    ) -> Assignment:
        """``time_limit`` and ``seed`` are accepted for the common interface; min-cost flow
        is deterministic and not interruptible."""
        start = time.perf_counter()
        check_stop(monitor)
        filtered = apply_pair_filters(problem)
        coupling = model_constraints(filtered)
        if coupling:
            raise OptionError(option_name(coupling[0]), needs_ilp_message(coupling[0], "flow"))
        rest = _flowgraph.residual(filtered)
        scores = filtered.pair_score[rest.free]
        max_abs = float(np.abs(scores).max()) if len(scores) else 1.0
        nodes = filtered.n_papers + filtered.n_reviewers + 1
        scale = min(self.max_scale, _COST_HEADROOM / (max(max_abs, 1e-300) * (nodes + 1) ** 2))
        while True:
            costs, delta = _integer_costs(scores, scale)
            status, flows = _flowgraph.solve_flow(filtered, rest, costs)
            if status != _flowgraph.BAD_COST_RANGE or scale < 1.0:
                break
            scale /= 16.0
        check_stop(monitor)
        if status != _flowgraph.OPTIMAL:
            raise Infeasible(diagnose(filtered))
        chosen = np.concatenate([np.flatnonzero(filtered.forced), rest.free[flows > 0]])
        selected = _original_index(problem, filtered, np.sort(chosen))
        objective = float(problem.pair_score[selected].sum())
        rounding_bound = 2.0 * int(flows.sum()) * delta
        return Assignment(
            problem=problem,
            selected=selected,
            objective=objective,
            upper_bound=objective + rounding_bound,
            solver=self.name,
            parameters={"scale": scale, "rounding_bound": rounding_bound, "exact": True},
            seed=seed,
            solve_seconds=time.perf_counter() - start,
        )


def _integer_costs(scores: FloatArray, scale: float) -> tuple[IntArray, float]:
    scaled = scores * scale
    rounded = np.rint(scaled)
    delta = float(np.abs(rounded - scaled).max()) / scale if len(scores) else 0.0
    return (-rounded).astype(np.int64), delta


def _original_index(
    original: AssignmentProblem, filtered: AssignmentProblem, selected: IntArray
) -> IntArray:
    """Map pair indices of ``filtered`` (a pair-filtered copy) back to ``original``."""
    if filtered is original:
        return selected.astype(np.int64)
    keys = original.pair_paper * original.n_reviewers + original.pair_reviewer
    wanted = filtered.pair_paper[selected] * original.n_reviewers + filtered.pair_reviewer[selected]
    order = np.argsort(keys, kind="stable")
    return np.sort(order[np.searchsorted(keys[order], wanted)]).astype(np.int64)
