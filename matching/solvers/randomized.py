"""Randomized assignment with a per-pair probability cap (Jecmen et al., 2020).

"Mitigating manipulation in peer review via randomized reviewer assignments": solve the
fractional LP ``max sum s_e x_e`` subject to the demands, the [min, max] loads and
``0 <= x_e <= Q``; then sample an integral assignment whose marginals are exactly ``x``
with bipartite dependent rounding (Gandhi, Khuller, Parthasarathy, Srinivasan, 2006): while
some pair is fractional, take a cycle or a maximal path of fractional pairs, and shift
``+a``/``-a`` alternately along it with probability ``b / (a + b)`` or ``-b``/``+b`` with
probability ``a / (a + b)``, where ``a`` and ``b`` are the largest shifts keeping every
pair in [0, 1]. Each step keeps every expectation, makes at least one pair integral and
keeps every paper's count (papers are always interior to a cycle or path, because their
fractional pairs sum to an integer) and every reviewer's load at the floor or ceiling of
its fractional load, so demands and [min, max] loads hold exactly.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from matching import _flowgraph
from matching.assignment import Assignment, total_score
from matching.constraints import apply_pair_filters, model_constraints
from matching.diagnose import Cause, Diagnosis, diagnose
from matching.monitor import SolveMonitor, check_stop
from matching.problem import AssignmentProblem, FloatArray, Infeasible
from matching.randomness import randomness_report
from matching.solvers import _highs
from matching.solvers._model import AssignmentModel
from matching.solvers.flow import FlowSolver, _original_index
from matching.solvers.ilp import SolverTimeout
from matching.validate import OptionError, needs_ilp_message, option_name

_EPS = 1e-9


@dataclass(frozen=True)
class Fractional:
    """The fractional LP optimum: ``x`` (n_pairs,) per pair of the (pair-filtered) problem,
    forced pairs at 1; ``value`` its total score."""

    problem: AssignmentProblem
    x: FloatArray
    value: float


def checked_for_sampling(problem: AssignmentProblem, solver: str) -> AssignmentProblem:
    """``problem`` with its pair filters applied, for a randomized ``solver`` (its fractional
    program has no side constraints): a constraint coupling pairs raises OptionError (it
    needs the ILP), an infeasibility the quick checks find raises Infeasible."""
    filtered = apply_pair_filters(problem)
    coupling = model_constraints(filtered)
    if coupling:
        raise OptionError(option_name(coupling[0]), needs_ilp_message(coupling[0], solver))
    quick = diagnose(filtered, flow_check=False)
    if quick:
        raise Infeasible(quick)
    return filtered


class RandomizedSolver:
    """Sample an assignment in which every non-forced pair has probability at most ``q``
    (scalar, or an (n_pairs,) array aligned with the problem's pairs).

    The numbers of a result: ``objective`` is the total score of THIS sample;
    ``upper_bound`` is a proven bound on the best DETERMINISTIC assignment of the problem
    (the exact min-cost-flow optimum, up to its stated rounding), so ``objective <=
    upper_bound`` always and ``gap`` says how much this sample gives up against the best
    assignment. ``parameters["expected_objective"]`` is the fractional LP optimum under the
    cap, which is the EXPECTED objective of a sample (a single sample may score above or
    below it); ``parameters["deterministic_optimum"]`` the optimum itself and
    ``parameters["quality_ratio"]`` expected / optimum (the price of randomization, 1 at
    ``q = 1``).

    The LP is solved by HiGHS (interruptible: ``monitor``); ``time_limit`` bounds it
    (default: none; an LP of this kind takes seconds).
    """

    name = "randomized"

    def __init__(self, *, q: float | npt.ArrayLike = 0.5) -> None:
        cap = np.asarray(q, dtype=np.float64)
        if np.any(cap < 0) or np.any(cap > 1) or np.any(np.isnan(cap)):
            raise ValueError("probability cap q must lie in [0, 1]")
        self.q = cap

    def fractional(
        self,
        problem: AssignmentProblem,
        *,
        time_limit: float | None = None,
        monitor: SolveMonitor | None = None,
    ) -> Fractional:
        """The fractional LP optimum under the cap (forced pairs at 1)."""
        filtered = checked_for_sampling(problem, self.name)
        cap = self.q if self.q.ndim == 0 else self.q[_kept(problem, filtered)]
        rest = _flowgraph.residual(filtered)
        free = rest.free
        upper = np.broadcast_to(cap, (filtered.n_pairs,))[free].astype(np.float64)
        model = AssignmentModel.build(filtered, rest, [])
        lp = _highs.MatrixModel(
            cost=model.unit,
            lower=np.zeros(len(free)),
            upper=upper,
            integer=np.zeros(len(free), dtype=bool),
            matrix=model.matrix,
            row_lower=model.row_lower,
            row_upper=model.row_upper,
        )
        outcome = _highs.solve(
            lp,
            time_limit=time_limit,
            monitor=monitor,
            stage="randomized: capped LP",
            to_units=model.total_units,
        )
        if outcome.status == "infeasible":
            raise Infeasible(_cap_diagnosis(filtered, rest, upper))
        if outcome.status != "optimal" or outcome.values is None:
            raise SolverTimeout(time_limit)
        x = np.ones(filtered.n_pairs)
        x[free] = np.clip(outcome.values, 0.0, 1.0)
        x[np.abs(x) < _EPS] = 0.0
        x[np.abs(x - 1.0) < _EPS] = 1.0
        return Fractional(problem=filtered, x=x, value=float(filtered.pair_score @ x))

    def sample(
        self,
        problem: AssignmentProblem,
        fractional: Fractional,
        *,
        seed: int | None = None,
        optimum: Assignment | None = None,
        monitor: SolveMonitor | None = None,
    ) -> Assignment:
        """One dependent-rounding sample of ``fractional`` (from :meth:`fractional` on
        ``problem``). The same seed gives the same assignment. ``optimum`` is the exact
        deterministic optimum (computed when not given) whose bound becomes the sample's
        ``upper_bound``."""
        q = float(self.q) if self.q.ndim == 0 else f"per pair, max {float(self.q.max()):g}"
        return sample_assignment(
            problem,
            fractional,
            solver=self.name,
            parameters={"q": q},
            seed=seed,
            optimum=optimum,
            monitor=monitor,
        )

    def solve(
        self,
        problem: AssignmentProblem,
        *,
        time_limit: float | None = None,
        seed: int | None = None,
        monitor: SolveMonitor | None = None,
    ) -> Assignment:
        start = time.perf_counter()
        check_stop(monitor)
        fractional = self.fractional(problem, time_limit=time_limit, monitor=monitor)
        check_stop(monitor)
        optimum = FlowSolver().solve(problem, monitor=monitor)
        if monitor is not None:
            monitor.report(
                "randomized: sampling", fraction=None, incumbent=None, bound=optimum.upper_bound
            )
        result = self.sample(problem, fractional, seed=seed, optimum=optimum, monitor=monitor)
        object.__setattr__(result, "solve_seconds", time.perf_counter() - start)
        return result


def sample_assignment(
    problem: AssignmentProblem,
    fractional: Fractional,
    *,
    solver: str,
    parameters: dict[str, Any],
    seed: int | None = None,
    optimum: Assignment | None = None,
    monitor: SolveMonitor | None = None,
) -> Assignment:
    """One sample of ``fractional`` (marginals over ``fractional.problem``, the pair-filtered
    ``problem``) by :func:`dependent_rounding`: the one sampling step of every randomized
    solver. The same seed gives the same assignment; ``seed=None`` draws one (recorded in
    the result). ``optimum`` is the exact deterministic optimum (computed when not given):
    its bound becomes the sample's ``upper_bound``, its objective the denominator of the
    quality ratio. ``parameters`` (the solver's own, e.g. its cap) are extended with
    ``expected_objective``, ``deterministic_optimum``, ``quality_ratio`` and ``randomness``
    (:func:`matching.randomness.randomness_report` of the marginals, with the deterministic
    optimum's figures beside them)."""
    start = time.perf_counter()
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))
    if optimum is None:
        optimum = FlowSolver().solve(problem, monitor=monitor)
    check_stop(monitor)
    filtered = fractional.problem
    rounded = dependent_rounding(
        filtered.pair_paper,
        filtered.pair_reviewer,
        filtered.n_papers,
        fractional.x,
        np.random.default_rng(seed),
        monitor=monitor,
    )
    chosen = np.flatnonzero(rounded)
    counts = np.bincount(filtered.pair_paper[chosen], minlength=filtered.n_papers)
    if not np.array_equal(counts, filtered.demand):
        raise RuntimeError("dependent rounding broke a paper demand (numerical trouble)")
    selected = _original_index(problem, filtered, chosen)
    objective = total_score(problem.pair_score[selected])
    best = optimum.objective
    marginals = np.zeros(problem.n_pairs)
    marginals[_kept(problem, filtered)] = fractional.x
    randomness = randomness_report(
        problem, marginals, optimum=best, optimum_selected=optimum.selected
    )
    return Assignment(
        problem=problem,
        selected=selected,
        objective=objective,
        upper_bound=max(optimum.upper_bound, objective),
        solver=solver,
        parameters={
            **parameters,
            "expected_objective": fractional.value,
            "deterministic_optimum": best,
            "quality_ratio": fractional.value / best if best > 0 else None,
            "bound_refers_to": "the best deterministic assignment (min-cost flow optimum)",
            "randomness": randomness,
        },
        seed=seed,
        solve_seconds=time.perf_counter() - start,
    )


def dependent_rounding(
    pair_paper: npt.NDArray[np.int64],
    pair_reviewer: npt.NDArray[np.int64],
    n_papers: int,
    x: FloatArray,
    rng: np.random.Generator,
    *,
    monitor: SolveMonitor | None = None,
) -> npt.NDArray[np.bool_]:
    """Round ``x`` (n_pairs,) in [0, 1] to 0/1 keeping every marginal and, at every paper
    and reviewer, the sum at its floor or ceiling (exact where it is an integer)."""
    value = x.astype(np.float64).copy()
    fractional = np.flatnonzero((value > _EPS) & (value < 1.0 - _EPS))
    ends = np.stack([pair_paper, pair_reviewer + n_papers], axis=1)
    adjacency: dict[int, set[int]] = {}
    for edge in fractional.tolist():
        for node in ends[edge].tolist():
            adjacency.setdefault(node, set()).add(edge)
    pending = sorted(adjacency)
    steps = 0
    while pending:
        steps += 1
        if steps % 2000 == 0:
            check_stop(monitor)
        node = pending[-1]
        if not adjacency.get(node):
            pending.pop()
            adjacency.pop(node, None)
            continue
        walk = _cycle_or_path(node, adjacency, ends)
        if walk[1]:
            walk = _cycle_or_path(walk[2], adjacency, ends)
        edges = walk[0]
        plus = np.array(edges[0::2])
        minus = np.array(edges[1::2], dtype=np.int64)
        up = min(
            float((1.0 - value[plus]).min()), float(value[minus].min()) if len(minus) else np.inf
        )
        down = min(
            float(value[plus].min()), float((1.0 - value[minus]).min()) if len(minus) else np.inf
        )
        if rng.random() < down / (up + down):
            value[plus] += up
            value[minus] -= up
        else:
            value[plus] -= down
            value[minus] += down
        for edge in edges:
            if value[edge] <= _EPS or value[edge] >= 1.0 - _EPS:
                value[edge] = 0.0 if value[edge] <= _EPS else 1.0
                for end in ends[edge].tolist():
                    adjacency[end].discard(edge)
    return value > 0.5


def _cycle_or_path(
    start: int, adjacency: dict[int, set[int]], ends: npt.NDArray[np.int64]
) -> tuple[list[int], bool, int]:
    """Walk fractional edges from ``start``: returns (edges of a cycle or path, whether it
    ended at a dead end (so the walk should restart from there to get a maximal path),
    the last node)."""
    position = {start: 0}
    edges: list[int] = []
    node, previous = start, -1
    while True:
        options = adjacency[node]
        edge = next((e for e in options if e != previous), -1)
        if edge < 0:
            return edges, bool(edges) and _start_open(start, adjacency, edges), node
        a, b = ends[edge].tolist()
        nxt = b if a == node else a
        edges.append(edge)
        if nxt in position:
            return edges[position[nxt] :], False, nxt
        position[nxt] = len(edges)
        node, previous = nxt, edge


def _start_open(start: int, adjacency: dict[int, set[int]], edges: list[int]) -> bool:
    """True when the walk's start still has another fractional edge, i.e. the path found
    is not maximal at its start."""
    return any(e != edges[0] for e in adjacency[start])


def _kept(original: AssignmentProblem, filtered: AssignmentProblem) -> npt.NDArray[np.int64]:
    if filtered is original:
        return np.arange(original.n_pairs)
    return _original_index(original, filtered, np.arange(filtered.n_pairs))


def _cap_diagnosis(
    problem: AssignmentProblem, rest: _flowgraph.Residual, upper: FloatArray
) -> Diagnosis:
    result = diagnose(problem)
    if result.causes:
        return result
    reach = np.bincount(problem.pair_paper[rest.free], weights=upper, minlength=problem.n_papers)
    short = np.flatnonzero(reach + 1e-9 < rest.demand_left)
    ids = np.asarray(problem.paper_ids, dtype=object)
    if len(short):
        details = "; ".join(
            f"paper {ids[p]} can reach {reach[p]:.2f} expected reviewers under the probability "
            f"cap, needs {rest.demand_left[p]}"
            for p in short[:10]
        )
        result.causes.append(
            Cause(
                "probability_cap",
                details,
                tuple(ids[short]),
                "raise q or add candidate reviewers to those papers",
            )
        )
    else:
        result.causes.append(
            Cause(
                "probability_cap",
                "no fractional assignment meets the demands and loads under the probability cap",
                (),
                "raise q",
            )
        )
    return result
