// The venue's assignment runs and the run bar: which run the Assignment, Papers and
// reviewers, and Statistics views show. By default that is the LIVE run (what viewers see),
// for chairs too; a chair picks drafts from the bar; a new solve or re-solve selects its run.
import { $, h, fill } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { runLabel, runName } from "../core/format.js";
import { currentRun, emit, on, setRunId, setRuns, state } from "../core/state.js";
import { globalError } from "../components/feedback.js";

/** Load the venue's runs (every page) and keep or make the selection. */
export async function refreshRuns({ select = null } = {}) {
  const venue = state.venue;
  const pool = state.pool;
  const runs = await state.api.all(EP.assignments(venue), { pool }, 200, 5000);
  if (venue !== state.venue || pool !== state.pool) return;
  setRuns(runs);
  const live = state.runs.find((run) => run.state === "live");
  const previous = state.runId;
  let next = select ?? previous;
  if (next == null || !state.runs.some((run) => run.id === next)) next = live?.id ?? state.runs[0]?.id ?? null;
  setRunId(next);
  renderRunBar();
  emit("runs", state.runs);
  if (next !== previous || select != null) emit("run", currentRun());
}

/** Show another run everywhere. */
export function selectRun(runId) {
  setRunId(runId);
  renderRunBar();
  emit("run", currentRun());
}

export function renderRunBar() {
  const select = $("#run-select");
  const runs = state.runs;
  if (!runs.length) {
    fill(select, h("option", { value: "" }, "no run yet"));
    select.disabled = true;
  } else {
    select.disabled = false;
    fill(select, runs.map((run) => h("option", { value: run.id }, runLabel(run))));
    select.value = String(state.runId ?? "");
  }
  const run = currentRun();
  const badge = $("#run-state");
  badge.textContent = run ? run.state : "";
  badge.className = `badge ${run?.state ?? ""}`;
  badge.hidden = !run;
  const live = runs.find((r) => r.state === "live");
  const hint = $("#run-hint");
  if (!runs.length) hint.textContent = state.me?.role === "viewer" ? "Nothing published yet." : "Solve an assignment under Compute.";
  else if (!live) hint.textContent = "No run is live yet.";
  else if (run && run.id !== live.id) hint.textContent = `${runName(live)} is live.`;
  else hint.textContent = state.me?.role === "viewer" ? "The published assignment." : "This is the live run: what viewers see.";
}

export function setupRuns() {
  // a run renamed, edited or published elsewhere on the page: the bar says so
  on("runs", () => renderRunBar());
  $("#run-select").addEventListener("change", (event) => {
    const id = Number(event.target.value);
    if (id) selectRun(id);
  });
  // a finished solve adds a run: select it
  on("job-finished", (job) => {
    if (job.kind !== "assignment" || job.state !== "succeeded") return;
    const created = job.result?.assignment_id ?? null;
    refreshRuns({ select: created }).catch((error) => globalError(error, "Loading assignment runs"));
  });
}
