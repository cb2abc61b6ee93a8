// The solve form's randomized modes and the re-assignment's changes, as pure functions
// (unit-tested under `node --test`). The rules mirror validate_options of
// reviewer_recommender/services/assignment.py, so the page never sends a combination the
// service refuses: a perturbation goes only with the perturbed solver, a probability cap only
// with the randomized or perturbed solver, and neither randomized solver takes a side
// constraint (fairness, institution limit, required attribute).

/** The solvers whose runs are sampled from a distribution. */
export const RANDOMIZED_SOLVERS = ["randomized", "perturbed"];

/** Which of the form's mode fields a solver uses: the perturbation β (perturbed only) and
 * the probability cap (randomized; optional with perturbed). */
export function modeFields(solver) {
  return {
    beta: solver === "perturbed",
    cap: RANDOMIZED_SOLVERS.includes(solver),
  };
}

/** The cap field's value when the chair switches to `solver` without having typed one:
 * the randomized solver's usual cap, no cap for perturbed maximization. */
export function defaultCap(solver) {
  return solver === "randomized" ? "0.5" : "";
}

const inUnitRange = (x) => typeof x === "number" && Number.isFinite(x) && x > 0 && x <= 1;

/**
 * The solver fields of a solve request for the form's values.
 * @param {{solver:string, q?:(number|null), beta?:(number|null), sideConstraints?:string[]}} values
 *   `sideConstraints`: what the form asks besides (e.g. "fairness"), in words
 * @returns {{fields: object, problem: (string|null)}} `problem`: why the service would refuse
 *   it (nothing is sent then)
 */
export function solverFields({ solver, q = null, beta = null, sideConstraints = [] }) {
  const fields = { solver };
  const use = modeFields(solver);
  if (use.beta) {
    if (!inUnitRange(beta)) {
      return { fields, problem: "The perturbed solver needs a perturbation β above 0 and at most 1 (e.g. 0.2: at least 80% of the optimal quality with non-negative scores)." };
    }
    fields.perturbation = beta;
  }
  if (use.cap && q != null) {
    if (!inUnitRange(q)) return { fields, problem: "The max probability of a pair must be above 0 and at most 1." };
    fields.probability_cap = q;
  }
  if (use.cap && sideConstraints.length) {
    return {
      fields,
      problem: `The ${solver} solver cannot enforce ${sideConstraints.join(" and ")}: choose the solver auto or ILP for these options, or drop them.`,
    };
  }
  return { fields, problem: null };
}

/** Why each changed pair of a re-assignment draft changed, by "change|paper|reviewer", from
 * the draft's `summary.reassignment` (added: fills a vacated slot; removed: withdrawn,
 * removed, conflict or moved). */
export function changeReasons(reassignment) {
  const reasons = new Map();
  for (const change of ["added", "removed"]) {
    for (const pair of reassignment?.[change] ?? []) {
      const reason = pair.reason ?? (change === "added" ? "fills a vacated slot" : "");
      reasons.set(`${change}|${pair.paper_id}|${pair.reviewer_id}`, reason);
    }
  }
  return reasons;
}

const REASON_WORDS = {
  withdrawn: "the reviewer withdrew",
  removed: "removed by the chair",
  conflict: "a conflict or Not Willing bid now",
  moved: "moved to fill a paper short of reviewers",
};

/** A change's reason in words; a change the re-assignment did not make came from a later
 * edit of the draft. */
export function reasonText(reasons, change, paperId, reviewerId) {
  const reason = reasons.get(`${change}|${paperId}|${reviewerId}`);
  if (reason == null) return "a later edit of the draft";
  return REASON_WORDS[reason] ?? reason;
}
