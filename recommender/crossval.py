"""Rater-level cross-validation of a choice among scoring configurations.

The gold metric orders the papers of one rater, so what must generalise is the choice of a
configuration to *new raters*. Protocol (repeated 2-fold CV over raters):

1. Split the raters at random into two halves (sizes ``n // 2`` and ``n - n // 2``).
2. On one half (*selection half*) choose a configuration among the candidates; score that
   choice on the other half (*held-out half*). Do the same with the halves swapped.
3. Repeat for ``n_splits`` random splits (seeded): ``2 * n_splits`` folds.

Reported: the held-out loss of the *selection procedure* (mean, std and quantiles over
folds: the spread is what a new set of raters of that size may see), and per configuration
its mean and std of the held-out-half loss (the noise of one configuration's loss on half
the raters), how often each rule chose it, and its paired difference to the first
candidate (on all raters ± its SE, and on each fold's held-out half: the share of halves
where it beats the first).

Two selection rules:

- ``argmin``: the candidate with the lowest loss on the selection half.
- ``one-se``: candidates are listed simplest first; choose the first one whose loss on the
  selection half is within one standard error of the best candidate's (the SE of the
  paired per-rater difference to that best). This is the "one standard error rule" of
  Breiman et al. (1984): it prefers the simpler option when differences are inside the
  noise.

All losses are computed from per-rater costs (mean over draws) and per-rater weights
(:func:`recommender.evaluate.rater_costs`): the loss of a set of raters ``R`` is
``costs[R].sum() / weights[R].sum()``, which equals the mean over draws of the pooled loss.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

RULES = ("argmin", "one-se")

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class CrossValidation:
    """Result of :func:`cross_validate`.

    ``held_out``: (n_configs, n_folds) loss of each configuration on each fold's held-out
    half. ``chosen``: rule -> (n_folds,) index of the configuration the rule chose on the
    fold's selection half; ``selection_masks``: (n_folds, n_raters) True for the raters of
    each fold's selection half (raters with pairs, in input order). ``full``: (n_configs,)
    loss on every rater. ``paired_se``: (n_configs,) standard error of
    ``full[k] - full[0]`` from the per-rater paired differences of cost
    (``sqrt(n) * std(d) / sum(weights)``).
    """

    labels: tuple[str, ...]
    n_raters: int
    n_splits: int
    seed: int
    full: FloatArray
    held_out: FloatArray
    chosen: dict[str, IntArray]
    paired_se: FloatArray
    selection_masks: npt.NDArray[np.bool_]

    @property
    def n_folds(self) -> int:
        return int(self.held_out.shape[1])

    def selection_losses(self, rule: str = "argmin") -> FloatArray:
        """(n_folds,) held-out loss of the configuration ``rule`` chose on each fold."""
        if rule not in self.chosen:
            raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
        return self.held_out[self.chosen[rule], np.arange(self.n_folds)]

    def held_out_difference(self, k: int, reference: int = 0) -> FloatArray:
        """(n_folds,) held-out-half loss of configuration ``k`` minus that of ``reference``
        on the same raters, fold by fold: a paired comparison. Its mean is the expected
        gain on a new half, its std the spread of that gain, and the share of folds below
        zero how often ``k`` wins on a new half."""
        return self.held_out[k] - self.held_out[reference]

    def choice_counts(self, rule: str = "argmin") -> IntArray:
        """(n_configs,) folds in which ``rule`` chose each configuration."""
        return np.bincount(self.chosen[rule], minlength=len(self.labels)).astype(np.int64)


def cross_validate(
    costs: npt.ArrayLike,
    weights: npt.ArrayLike,
    labels: Sequence[str],
    *,
    n_splits: int = 100,
    seed: int = 0,
) -> CrossValidation:
    """Repeated rater-level 2-fold cross-validation of choosing among ``labels``.

    ``costs``: (n_configs, n_raters) per-rater cost (mean over draws), candidates in order
    of preference (simplest first: the ``one-se`` rule relies on it). ``weights``:
    (n_raters,) per-rater sum of ``|Δexpertise|``. Raises ValueError for fewer than 2
    raters with pairs, no configuration, or mismatched shapes.
    """
    cost = np.asarray(costs, dtype=np.float64)
    weight = np.asarray(weights, dtype=np.float64)
    if cost.ndim != 2 or cost.shape[0] == 0:
        raise ValueError("costs must be (n_configs >= 1, n_raters)")
    if weight.shape != (cost.shape[1],):
        raise ValueError(f"weights shape {weight.shape} != (n_raters={cost.shape[1]},)")
    if len(labels) != cost.shape[0]:
        raise ValueError(f"{len(labels)} labels for {cost.shape[0]} configurations")
    if n_splits < 1:
        raise ValueError(f"n_splits must be >= 1, got {n_splits}")
    # Raters without a pair of different ratings carry no information: leave them out, so
    # that every half holds raters that count.
    informative = weight > 0
    cost, weight = cost[:, informative], weight[informative]
    n = weight.size
    if n < 2:
        raise ValueError(f"cross-validation needs at least 2 raters with pairs, got {n}")
    rng = np.random.default_rng(seed)
    half = n // 2
    masks = np.zeros((2 * n_splits, n), dtype=bool)  # True = selection half
    for s in range(n_splits):
        order = rng.permutation(n)
        masks[2 * s, order[:half]] = True
        masks[2 * s + 1, order[half:]] = True
    selection = masks.astype(np.float64)  # (n_folds, n)
    held = (~masks).astype(np.float64)
    loss_selection = (cost @ selection.T) / (selection @ weight)  # (n_configs, n_folds)
    loss_held = (cost @ held.T) / (held @ weight)
    chosen = {
        "argmin": np.argmin(loss_selection, axis=0).astype(np.int64),
        "one-se": _one_se_choice(cost, weight, masks, loss_selection),
    }
    full = cost.sum(axis=1) / weight.sum()
    difference = cost - cost[0]
    paired_se = math.sqrt(n) * difference.std(axis=1, ddof=1) / weight.sum()
    return CrossValidation(
        tuple(labels),
        n,
        n_splits,
        seed,
        full,
        loss_held,
        chosen,
        paired_se.astype(np.float64),
        masks,
    )


def _one_se_choice(
    cost: FloatArray, weight: FloatArray, masks: npt.NDArray[np.bool_], loss: FloatArray
) -> IntArray:
    """First candidate within one paired SE of the best on each fold's selection half."""
    best = np.argmin(loss, axis=0)
    out = np.empty(masks.shape[0], dtype=np.int64)
    for f, mask in enumerate(masks):
        members = cost[:, mask]
        difference = members - members[best[f]]  # (n_configs, raters in half)
        m = int(mask.sum())
        se = math.sqrt(m) * difference.std(axis=1, ddof=1) / weight[mask].sum() if m > 1 else 0
        within = loss[:, f] <= loss[best[f], f] + se
        out[f] = int(np.argmax(within))  # first True; the best itself always qualifies
    return out


def format_cross_validation(cv: CrossValidation) -> str:
    """Plain-text table: per configuration its loss on all raters, paired difference to the
    first candidate (± its SE) and the share of held-out halves where it beats the first
    (``wins``), held-out-half loss (mean ± std, 10-90% quantiles) and how often each rule
    chose it; then the held-out loss of each selection procedure."""
    header = (
        f"{'configuration':<40} {'all':>6} {'Δ first':>15} {'wins':>4} {'half mean':>9} "
        f"{'± std':>6} {'10-90%':>13} {'argmin':>6} {'1-SE':>5}"
    )
    lines = [
        f"rater-level 2-fold CV: {cv.n_raters} raters, halves of {cv.n_raters // 2} and "
        f"{cv.n_raters - cv.n_raters // 2}, {cv.n_splits} random splits x 2 directions = "
        f"{cv.n_folds} folds, seed {cv.seed}",
        header,
        "-" * len(header),
    ]
    argmin, one_se = cv.choice_counts("argmin"), cv.choice_counts("one-se")
    for k, label in enumerate(cv.labels):
        row = cv.held_out[k]
        low, high = np.quantile(row, [0.1, 0.9])
        delta = "(reference)" if k == 0 else f"{cv.full[k] - cv.full[0]:+.4f}±{cv.paired_se[k]:.4f}"
        wins = "" if k == 0 else f"{100 * (cv.held_out_difference(k) < 0).mean():3.0f}%"
        lines.append(
            f"{label[:40]:<40} {cv.full[k]:6.4f} {delta:>15} {wins:>4} {row.mean():9.4f} "
            f"{row.std():6.4f} {f'{low:.3f}-{high:.3f}':>13} {argmin[k]:6d} {one_se[k]:5d}"
        )
    lines.append("")
    for rule, words in (
        ("argmin", "choose the lowest loss on the selection half"),
        ("one-se", "choose the first candidate within 1 SE of the lowest"),
    ):
        losses = cv.selection_losses(rule)
        q = np.quantile(losses, [0.05, 0.5, 0.95])
        lines.append(
            f"selection '{rule}' ({words}): held-out loss {losses.mean():.4f} "
            f"± {losses.std():.4f} (per-fold std); 5/50/95% {q[0]:.3f}/{q[1]:.3f}/{q[2]:.3f}"
        )
    return "\n".join(lines)
