// How random a randomized run is: the service's randomness table (GET .../randomness), each
// metric of the distribution the run was sampled from beside the same figure for the best
// deterministic assignment. A deterministic run gets one quiet line.
import { h, fill } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { niceNumber, runName } from "../core/format.js";
import { currentRun, state } from "../core/state.js";

const SOLVER_WORDS = {
  perturbed: "perturbed maximization", randomized: "randomized (probability cap)", flow: "min-cost flow",
  ilp: "ILP", reassign: "re-assignment of the live run",
};

/** The randomness panel of `run`: an element to place now, filled by `load()`. */
export function randomnessPanel(run) {
  const element = h("div", { class: "randomness", "data-testid": "randomness", "aria-live": "polite" });
  return {
    element,
    async load() {
      const answer = await state.api.get(EP.randomness(state.venue, run.id));
      if (currentRun()?.id !== run.id) return;
      fill(element, answer.randomized ? table(run, answer) : quiet(answer));
    },
  };
}

function quiet(answer) {
  const how = answer.solver ? ` (${SOLVER_WORDS[answer.solver] ?? answer.solver})` : "";
  return h("p", { class: "muted", "data-testid": "randomness-note" }, `Solved deterministically${how}: every pair is certain, no randomness to show.`);
}

function table(run, answer) {
  const how = [SOLVER_WORDS[answer.solver] ?? answer.solver];
  if (answer.perturbation != null) how.push(`β ${answer.perturbation}`);
  if (answer.probability_cap != null && answer.probability_cap < 1) how.push(`max pair probability ${answer.probability_cap}`);
  if (answer.seed != null) how.push(`seed ${answer.seed}`);
  const totals = [
    answer.expected_objective != null ? `expected total score ${niceNumber(answer.expected_objective)}` : null,
    answer.deterministic_optimum != null ? `deterministic optimum ${niceNumber(answer.deterministic_optimum)}` : null,
    answer.sample_objective != null ? `this sample ${niceNumber(answer.sample_objective)}` : null,
  ].filter(Boolean);
  const caption = `Randomness of ${runName(run)}: the distribution it was sampled from, beside the best deterministic assignment`;
  return h("section", { class: "card", "aria-labelledby": "randomness-title" },
    h("h3", { id: "randomness-title" }, "Randomness"),
    h("p", {}, `Sampled by ${how.filter(Boolean).join(", ")}${totals.length ? `; ${totals.join(", ")}` : ""}.`),
    answer.after_edits ? h("p", { class: "warn" }, `Edited since it was sampled: ${answer.after_edits}`) : null,
    h("div", { class: "table-wrap" }, h("table", { class: "randomness-table", "data-testid": "randomness-table" },
      h("caption", {}, caption),
      h("thead", {}, h("tr", {},
        h("th", { scope: "col" }, "Metric"),
        h("th", { scope: "col", class: "num" }, "this run"),
        h("th", { scope: "col", class: "num" }, "deterministic optimum"))),
      h("tbody", {}, answer.metrics.map((metric) => h("tr", { dataset: { metric: metric.name } },
        h("th", { scope: "row" }, h("span", { class: "metric-label" }, metric.label),
          h("span", { class: "muted metric-description" }, metric.description)),
        h("td", { class: "num" }, niceNumber(metric.randomized)),
        h("td", { class: "num" }, niceNumber(metric.deterministic))))))));
}
