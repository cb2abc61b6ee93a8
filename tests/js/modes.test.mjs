// Unit tests of the solve form's randomized modes and the re-assignment's reasons
// (api/static/lib/modes.js): run with `node --test tests/js`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { changeReasons, defaultCap, modeFields, reasonText, solverFields } from "../../api/static/lib/modes.js";
import { lineageText, solveParamsText } from "../../api/static/core/format.js";

test("each solver uses only the mode fields the service accepts with it", () => {
  assert.deepEqual(modeFields("perturbed"), { beta: true, cap: true });
  assert.deepEqual(modeFields("randomized"), { beta: false, cap: true });
  for (const solver of ["auto", "flow", "ilp"]) assert.deepEqual(modeFields(solver), { beta: false, cap: false });
  assert.equal(defaultCap("randomized"), "0.5");
  assert.equal(defaultCap("perturbed"), "");
});

test("a perturbation is sent only with the perturbed solver, a cap only with a randomized one", () => {
  assert.deepEqual(solverFields({ solver: "perturbed", beta: 0.2, q: null }),
    { fields: { solver: "perturbed", perturbation: 0.2 }, problem: null });
  assert.deepEqual(solverFields({ solver: "perturbed", beta: 0.2, q: 0.6 }).fields,
    { solver: "perturbed", perturbation: 0.2, probability_cap: 0.6 });
  assert.deepEqual(solverFields({ solver: "randomized", beta: 0.2, q: 0.5 }).fields,
    { solver: "randomized", probability_cap: 0.5 });
  assert.deepEqual(solverFields({ solver: "randomized", q: null }).fields, { solver: "randomized" });
  for (const solver of ["auto", "flow", "ilp"]) {
    assert.deepEqual(solverFields({ solver, beta: 0.2, q: 0.5 }), { fields: { solver }, problem: null });
  }
});

test("values the service refuses are caught before sending, with the reason", () => {
  for (const beta of [null, 0, -0.1, 1.5, NaN]) {
    assert.match(solverFields({ solver: "perturbed", beta }).problem, /perturbation β above 0 and at most 1/);
  }
  assert.equal(solverFields({ solver: "perturbed", beta: 1 }).problem, null);
  assert.match(solverFields({ solver: "randomized", q: 0 }).problem, /above 0 and at most 1/);
  assert.match(solverFields({ solver: "perturbed", beta: 0.2, sideConstraints: ["fairness", "an institution limit"] }).problem,
    /^The perturbed solver cannot enforce fairness and an institution limit/);
  assert.match(solverFields({ solver: "randomized", q: 0.5, sideConstraints: ["a required attribute"] }).problem,
    /randomized solver cannot enforce a required attribute/);
  assert.equal(solverFields({ solver: "auto", sideConstraints: ["fairness"] }).problem, null);
});

test("a re-assignment's changes say why, a later edit's say so", () => {
  const reasons = changeReasons({
    added: [{ paper_id: "p1", reviewer_id: "~B1", score: 0.4 }],
    removed: [
      { paper_id: "p1", reviewer_id: "~A1", score: 0.5, reason: "withdrawn" },
      { paper_id: "p2", reviewer_id: "~C1", score: 0.3, reason: "moved" },
    ],
  });
  assert.equal(reasonText(reasons, "added", "p1", "~B1"), "fills a vacated slot");
  assert.equal(reasonText(reasons, "removed", "p1", "~A1"), "the reviewer withdrew");
  assert.equal(reasonText(reasons, "removed", "p2", "~C1"), "moved to fill a paper short of reviewers");
  assert.equal(reasonText(reasons, "added", "p9", "~A1"), "a later edit of the draft");
  assert.equal(changeReasons(undefined).size, 0);
});

test("runs name their perturbation and where a re-assignment came from", () => {
  assert.equal(solveParamsText({ solver: "perturbed", perturbation: 0.2, reviewers_per_paper: 3 }),
    "perturbed maximization, perturbation β 0.2, 3 per paper");
  const live = { id: 41, number: 2, state: "superseded" };
  const draft = { id: 45, summary: { reassignment: { derived_from: 41, derived_from_version: 1 } } };
  assert.equal(lineageText(draft, [live, draft]), "re-assignment of run #2 (version 1)");
  assert.equal(lineageText(draft), "re-assignment of run #41 (version 1)");
  assert.equal(lineageText({ id: 3, summary: {} }), "");
});
