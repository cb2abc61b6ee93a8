// The pool selector of the console head: reviewers, area chairs or senior area chairs. Runs
// (the run bar), uploads of persons and their quotas, affinity and solves are per pool; the
// selector says which pool the console shows and acts on.
import { $ } from "../core/dom.js";
import { emit, on, setPool, state } from "../core/state.js";
import { globalError } from "../components/feedback.js";
import { refreshAffinity } from "./jobs.js";
import { refreshRuns } from "./runs.js";
import { refreshOpenTab } from "./tabs.js";

/** Show another pool everywhere: its runs, its latest affinity run, the open view. */
export async function choosePool(pool) {
  setPool(pool);
  $("#pool-select").value = pool;
  emit("pool", pool);
  await Promise.all([refreshRuns(), refreshAffinity()]);
  await refreshOpenTab();
}

export function setupPools() {
  $("#pool-select").addEventListener("change", (event) =>
    choosePool(event.target.value).catch((error) => globalError(error, "Opening the pool")));
  on("venue", () => { $("#pool-select").value = state.pool; });
}
