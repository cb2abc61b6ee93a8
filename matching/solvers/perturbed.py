"""Perturbed maximization (Xu, Jecmen, Song, Liang, Shah, Fang, NeurIPS 2023).

"A One-Size-Fits-All Approach to Improving Randomness in Paper Assignment": maximize
``sum_e s_e f(x_e)`` with the concave perturbation ``f(x) = x - beta x^2`` over the
fractional assignment polytope (demands, [min, max] loads, ``0 <= x_e <= Q``), then sample
an integral assignment whose marginals are ``x`` (the dependent rounding of
:mod:`matching.solvers.randomized`, one implementation for both solvers). ``beta = 0``
would be the deterministic optimum; larger ``beta`` trades expected quality for spread.
NeurIPS 2024 assigned its reviewers this way.

**The sign of the scores.** ``s (x - beta x^2)`` is concave in ``x`` only for ``s >= 0``;
for a negative score it is convex, and maximizing it would push ``x`` to 0 or 1 instead of
spreading it (and make the program non-concave). The perturbation is therefore weighted by
``max(s, 0)``: the objective is ``sum_e s_e x_e - beta sum_e max(s_e, 0) x_e^2``, exactly the
paper's program when every score is non-negative, linear (no perturbation) on pairs with a
negative score. Guarantee: the expected quality ``sum_e s_e x_e`` is at least ``OPT - beta
* OPT+``, where ``OPT`` is the deterministic optimum and ``OPT+`` the sum of the positive
scores in it (with non-negative scores and no cap: a quality ratio of at least ``1 -
beta``), because the integral optimum is feasible for the program and is valued
``OPT - beta OPT+`` by it.

**How it is solved.** The perturbation is separable and concave, so it is replaced by its
piecewise-linear interpolation with breakpoints every ``1 / pieces`` (and at ``Q``): on
each piece ``[a, b]`` a unit of probability gains ``s - beta max(s, 0) (a + b)``, which
decreases from piece to piece. That linear program is a min-cost flow with one arc per
(pair, piece) whose capacity is the piece's width, in integer units of ``1 / M``
probability (``M`` a multiple of ``pieces`` with ``Q M`` whole), so OR-Tools' network
solver (the one behind :class:`~matching.solvers.FlowSolver`) gives its exact optimum
within seconds at 5,000 x 5,000 with top candidates. (HiGHS' QP solver, tried on the exact
quadratic program, did not finish 300 x 300 in two minutes.) The interpolation equals
``f`` at every breakpoint, in particular at 0 and 1, so the guarantee above holds for it
as stated; between breakpoints it lies below ``f`` by at most ``beta / (4 pieces^2)``
per unit of score.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from matching import _flowgraph
from matching.assignment import Assignment
from matching.monitor import SolveMonitor, check_stop
from matching.problem import AssignmentProblem, Infeasible, IntArray
from matching.solvers.flow import FlowSolver
from matching.solvers.randomized import (
    Fractional,
    _cap_diagnosis,
    checked_for_sampling,
    sample_assignment,
)

# |integer cost| * (nodes + 1)^2 stays below this (see matching.solvers.flow)
_COST_HEADROOM = 2.0**61
_MAX_SCALE = 1e12
# most units per piece tried to make Q a breakpoint
_MAX_REFINE = 1000


@dataclass(frozen=True)
class Grid:
    """Integer units of probability: ``units`` per 1.0; pieces ``[bounds[j], bounds[j+1]]``
    (in units); ``cap`` = ``bounds[-1]`` units, the largest probability allowed."""

    units: int
    bounds: IntArray

    @classmethod
    def of(cls, q: float, pieces: int) -> Grid:
        """Breakpoints every ``1 / pieces`` up to ``q``, and at ``q`` itself when ``q``
        times some ``pieces * m`` (m <= 1000) is whole; otherwise the cap is ``q`` rounded
        down to a multiple of ``1 / (1000 pieces)``."""
        for step in range(1, _MAX_REFINE + 1):
            units = pieces * step
            cap = q * units
            if abs(cap - round(cap)) <= 1e-9 * units:
                break
        else:
            step = _MAX_REFINE
            units = pieces * step
            cap = math.floor(q * units + 1e-9)
        cap_units = round(cap)
        bounds = np.arange(0, cap_units, step, dtype=np.int64)
        return cls(units=units, bounds=np.append(bounds, cap_units))

    @property
    def cap(self) -> float:
        return float(self.bounds[-1]) / self.units

    @property
    def widths(self) -> IntArray:
        return np.diff(self.bounds)


@dataclass(frozen=True)
class PerturbedFractional(Fractional):
    """The piecewise-linear program's optimum: ``x`` (n_pairs,) per pair of the
    pair-filtered problem (forced pairs at 1), ``value`` its expected total score,
    ``perturbed_value`` its objective ``sum s x - beta sum max(s, 0) x^2`` (forced pairs
    count their score), ``rounding_bound`` how far the integer costs may leave it from the
    program's optimum (score units)."""

    perturbed_value: float = 0.0
    rounding_bound: float = 0.0
    cap: float = 1.0


class PerturbedSolver:
    """Sample an assignment by perturbed maximization (see the module docstring).

    ``beta`` in (0, 1]: the perturbation ``f(x) = x - beta x^2`` (NeurIPS 2024 reported 98 %
    of the optimal quality with a maximum pair probability of 0.90). ``q`` in (0, 1]: an
    optional cap on every non-forced pair's probability (1: none). ``pieces``: breakpoints
    of the piecewise-linear program per unit of probability (marginals are multiples of
    ``1 / pieces`` except where a cap or a load splits a piece).

    The numbers of a result are those of :class:`~matching.solvers.RandomizedSolver`:
    ``objective`` is the total score of THIS sample, ``upper_bound`` a proven bound on the
    best deterministic assignment (the exact min-cost-flow optimum),
    ``parameters["expected_objective"]`` the expected score of a sample,
    ``parameters["quality_ratio"]`` expected / optimum and ``parameters["randomness"]`` the
    metrics of :mod:`matching.randomness`. ``time_limit`` is accepted for the common
    interface (the network solver is not interruptible; ``monitor`` is polled between
    stages).
    """

    name = "perturbed"

    def __init__(
        self,
        *,
        beta: float = 0.5,
        q: float = 1.0,
        pieces: int = 10,
        max_scale: float = _MAX_SCALE,
    ) -> None:
        if not 0.0 < float(beta) <= 1.0:
            raise ValueError(f"perturbation beta must lie in (0, 1], got {beta}")
        if not 0.0 < float(q) <= 1.0:
            raise ValueError(f"probability cap q must lie in (0, 1], got {q}")
        if int(pieces) != pieces or not 1 <= int(pieces) <= 1000:
            raise ValueError(f"pieces must be a whole number in 1..1000, got {pieces}")
        if not max_scale >= 1.0:
            raise ValueError(f"max_scale must be at least 1, got {max_scale}")
        self.beta = float(beta)
        self.q = float(q)
        self.pieces = int(pieces)
        self.max_scale = max_scale

    def fractional(
        self,
        problem: AssignmentProblem,
        *,
        time_limit: float | None = None,
        monitor: SolveMonitor | None = None,
    ) -> PerturbedFractional:
        """The optimum of the piecewise-linear perturbed program (forced pairs at 1)."""
        filtered = checked_for_sampling(problem, self.name)
        check_stop(monitor)
        rest = _flowgraph.residual(filtered)
        free = rest.free
        grid = Grid.of(self.q, self.pieces)
        n_pieces = len(grid.widths)
        scores = filtered.pair_score[free]
        weight = np.maximum(scores, 0.0)
        # probability at the two ends of each piece, summed: a + b
        ends = (grid.bounds[:-1] + grid.bounds[1:]).astype(np.float64) / grid.units
        gain = scores[:, None] - self.beta * weight[:, None] * ends[None, :]
        nodes = filtered.n_papers + filtered.n_reviewers + 1
        total_units = max(int(rest.demand_left.clip(min=0).sum()) * grid.units, 1)
        cap = min(self.max_scale, _COST_HEADROOM / (nodes + 1) ** 2, 2.0**62 / total_units)
        largest = float(np.abs(gain).max()) if gain.size else 0.0
        exponent = math.floor(math.log2(cap) - math.log2(largest)) if largest > 0 else 0
        scaled = np.ldexp(gain, exponent)
        costs = -np.rint(scaled).astype(np.int64)
        delta = (
            float(np.ldexp(np.abs(np.rint(scaled) - scaled).max(), -exponent)) if gain.size else 0.0
        )
        units = _flowgraph.Residual(
            free=free,
            demand_left=rest.demand_left * grid.units,
            min_left=rest.min_left * grid.units,
            max_left=rest.max_left * grid.units,
        )
        if monitor is not None:
            monitor.report(
                f"perturbed: min-cost flow on {len(free)} pairs x {n_pieces} pieces",
                fraction=0.1,
            )
        status, flows = _flowgraph.solve_arcs(
            filtered.n_papers,
            filtered.n_reviewers,
            np.repeat(filtered.pair_paper[free], n_pieces),
            np.repeat(filtered.pair_reviewer[free], n_pieces),
            np.tile(grid.widths, len(free)),
            costs.reshape(-1),
            units,
        )
        check_stop(monitor)
        if status != _flowgraph.OPTIMAL:
            upper = np.full(len(free), grid.cap)
            raise Infeasible(_cap_diagnosis(filtered, rest, upper))
        taken = flows.reshape(len(free), n_pieces).sum(axis=1)
        x = np.ones(filtered.n_pairs)
        x[free] = taken / grid.units
        forced_total = float(filtered.pair_score[filtered.forced].sum())
        x_free = x[free]
        perturbed = float(scores @ x_free - self.beta * (weight @ (x_free * x_free)))
        return PerturbedFractional(
            problem=filtered,
            x=x,
            value=float(filtered.pair_score @ x),
            perturbed_value=perturbed + forced_total,
            rounding_bound=2.0 * float(taken.sum()) / grid.units * delta,
            cap=grid.cap,
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
        if monitor is not None:
            monitor.report("perturbed: the deterministic optimum", fraction=0.6)
        optimum = FlowSolver().solve(problem, monitor=monitor)
        if monitor is not None:
            monitor.report("perturbed: sampling", fraction=0.8, bound=optimum.upper_bound)
        result = sample_assignment(
            problem,
            fractional,
            solver=self.name,
            parameters={
                "beta": self.beta,
                "q": fractional.cap,
                "pieces": self.pieces,
                "perturbed_objective": fractional.perturbed_value,
                "perturbed_rounding_bound": fractional.rounding_bound,
                "program": (
                    "max sum s x - beta sum max(s, 0) x^2 over the fractional assignments "
                    f"with x <= {fractional.cap:g}, the square interpolated linearly "
                    f"between breakpoints every 1/{self.pieces}"
                ),
            },
            seed=seed,
            optimum=optimum,
            monitor=monitor,
        )
        object.__setattr__(result, "solve_seconds", time.perf_counter() - start)
        return result
