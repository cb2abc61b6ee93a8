// The Compute tab: the affinity and solve forms (with the live capacity check) and the job
// list: every job with its parameters, a real progress bar, its log in words, failures in
// the error style with the structured diagnosis, Cancel and Re-run.
import { $, h, fill, formValues } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import {
  affinityParamsText, dateTime, elapsed, jobParamsText, jobTitle, niceNumber, parseLogLine, plural,
  textProgressText,
} from "../core/format.js";
import {
  canWrite, emit, isPolling, on, setAffinityRun, startPolling, state, stopPolling,
} from "../core/state.js";
import { defaultCap, modeFields, solverFields } from "../lib/modes.js";
import { rangeText } from "../lib/paging.js";
import {
  busy, globalError, say, UserError,
} from "../components/feedback.js";
import { ProgressBar } from "../components/progress.js";
import {
  affinityBody, clearEstimate, confirmLongJob, loadModels, refreshEstimate, scheduleEstimate, setupEstimate,
  setupScoresUpload,
} from "./affinity_tools.js";
import { registerView } from "./tabs.js";
import { selectRun } from "./runs.js";

const ACTIVE = new Set(["queued", "running"]);
const PAGE = 10;
const list = { offset: 0, total: 0 };
const bars = new Map(); // job id -> ProgressBar

// ---- the affinity run ---------------------------------------------------------------------

/** The venue's latest affinity run, or null when none was computed yet. */
export async function refreshAffinity() {
  const venue = state.venue;
  // 200 in every state: {"state": "none" | "current" | "stale", ...the run's fields}
  const answer = await state.api.get(EP.latestAffinity(venue), { pool: state.pool });
  if (venue !== state.venue) return null;
  const run = answer && answer.state !== "none" && answer.id != null
    ? { ...answer, stale: answer.stale ?? answer.state === "stale" } : null;
  setAffinityRun(run);
  renderAffinityState();
  emit("affinity", run);
  return run;
}

function renderAffinityState() {
  const run = state.affinityRun;
  const text = run
    ? `Latest scores: run #${run.id}, ${affinityParamsText({ config: run.config, top_n: run.top_n })}, ${run.n_papers} papers × ${run.n_reviewers} reviewers, ${dateTime(run.created_at)}.` +
      (run.stale ? " Stale: reviewers or submissions changed since; compute again before solving." : "")
    : "No scores yet: compute them before solving.";
  const line = $("#affinity-state");
  line.textContent = text;
  line.classList.toggle("warn", !run || !!run.stale);
  renderCapacity();
}

// ---- the capacity check -------------------------------------------------------------------

const capacity = { timer: null, controller: null, answer: null, touched: false };

/** The service's count for the form's numbers (stored demands and quotas counted): the
 * same count it refuses a solve on. */
async function checkCapacity({ forSolve = false } = {}) {
  if (!canWrite() || !state.venue) return null;
  const values = formValues($("#assignment-form"));
  clearTimeout(capacity.timer);
  capacity.controller?.abort();
  const controller = new AbortController();
  // a solve's own check is never aborted by a later live check (typing in the form while
  // the solve starts): only the live checks share the abortable slot
  if (!forSolve) capacity.controller = controller;
  const answer = await state.api.get(EP.capacity(state.venue), {
    reviewers_per_paper: values.reviewers_per_paper ?? 0, min_load: values.min_papers ?? 0, max_load: values.max_papers ?? 0,
    pool: state.pool,
  }, { signal: controller.signal });
  capacity.answer = answer;
  renderCapacity();
  return answer;
}

function scheduleCapacity() {
  clearTimeout(capacity.timer);
  capacity.timer = setTimeout(() => checkCapacity().catch((error) => {
    if (error?.name !== "AbortError") showCapacityError(error);
  }), 150);
}

function showCapacityError(error) {
  const host = $("#capacity-check");
  host.className = "capacity warn";
  fill(host, h("p", {}, `Capacity check unavailable: ${error.message}`));
}

function renderCapacity() {
  const host = $("#capacity-check");
  const answer = capacity.answer;
  if (!host || !answer) return;
  const run = state.affinityRun;
  const ready = answer.fits && run && !run.stale;
  host.className = `capacity ${ready ? "ok" : "warn"}`;
  const notes = [];
  if (!run) notes.push(h("li", {}, "No affinity scores yet: compute them first."));
  else if (run.stale) notes.push(h("li", {}, "The scores are stale (reviewers or submissions changed): compute affinity again before solving."));
  const stored = [
    answer.stored_demands ? plural(answer.stored_demands, "stored paper demand") : "",
    answer.stored_max_loads ? plural(answer.stored_max_loads, "stored reviewer quota") : "",
  ].filter(Boolean).join(" and ");
  const use = answer.smallest_max_load != null && !answer.fits
    ? h("button", { type: "button", class: "small-btn secondary", onclick: () => {
      $("#as-max").value = String(answer.smallest_max_load);
      capacity.touched = true;
      scheduleCapacity();
    } }, `Use max papers ${answer.smallest_max_load}`) : null;
  fill(host,
    h("p", { class: "capacity-summary" },
      h("strong", {}, answer.fits ? "Capacity check: fits. " : "Capacity check: this solve cannot succeed. "),
      answer.fits
        ? `${answer.papers} papers need ${answer.demand_total} reviews; ${answer.reviewers} reviewers can take ${answer.capacity_total}` +
          ` (${Math.round((100 * answer.demand_total) / Math.max(1, answer.capacity_total))}% of their capacity).`
        : answer.message || answer.shortfall || ""),
    !answer.fits && answer.smallest_max_load != null
      ? h("p", {}, `The smallest max papers per reviewer that fits is ${answer.smallest_max_load}. `, use) : null,
    notes.length ? h("ul", {}, notes) : null,
    stored ? h("p", { class: "muted" }, `Counted: ${stored}.`) : null);
}

/** Take the service's solve defaults (raised to a max load that fits) while the chair has
 * not typed in the form. */
async function applySolveDefaults() {
  if (!canWrite()) return;
  const venue = await state.api.get(EP.venue(state.venue));
  const defaults = venue.solve_defaults;
  if (defaults && !capacity.touched) {
    $("#as-demand").value = String(defaults.reviewers_per_paper);
    $("#as-min").value = String(defaults.min_load);
    $("#as-max").value = String(defaults.max_load);
  }
  await checkCapacity();
}

// ---- forms --------------------------------------------------------------------------------

/** The solve request of the form; `problem` says why the service would refuse it. */
function solveBody() {
  const values = formValues($("#assignment-form"));
  const body = {
    reviewers_per_paper: values.reviewers_per_paper,
    min_load: values.min_papers ?? 0,
    max_load: values.max_papers,
    seed: values.seed,
    time_limit: values.time_limit,
  };
  const name = (values.name ?? "").trim(), note = (values.note ?? "").trim();
  if (name) body.name = name;
  if (note) body.note = note;
  const side = [];
  if (values.objective === "fairness") {
    body.fairness_keep = values.fairness_keep ?? 1;
    side.push("fairness");
  }
  if (values.min_score != null) body.min_score = values.min_score;
  if (values.max_per_affiliation != null) {
    body.max_per_affiliation = values.max_per_affiliation;
    side.push("an institution limit");
  }
  const attribute = (values.require_attribute_name ?? "").trim();
  if (attribute) {
    body.require_attribute = {
      name: attribute, value: (values.require_attribute_value ?? "").trim(),
      min_count: values.require_attribute_min_count ?? 1,
    };
    side.push("a required attribute");
  }
  // the solver, its perturbation β and probability cap, only where the solver takes them
  const { fields, problem } = solverFields({ solver: values.solver, q: values.q, beta: values.beta, sideConstraints: side });
  Object.assign(body, fields);
  return { body, problem };
}

const modeState = { capTouched: false };

/** Enable the β and cap fields the chosen solver uses (a disabled field is not sent); an
 * untouched cap takes the solver's default (0.5 randomized, none perturbed). */
function syncModeFields() {
  const solver = $("#as-solver").value;
  const use = modeFields(solver);
  $("#as-beta").disabled = !use.beta;
  $("#as-beta").required = use.beta;
  const cap = $("#as-q");
  cap.disabled = !use.cap;
  if (!modeState.capTouched) cap.value = defaultCap(solver);
}

function setupForms() {
  $("#affinity-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    await busy(event.submitter, form.querySelector(".error-box"), async () => {
      if (!(await confirmLongJob())) return;
      const job = await state.api.post(EP.startAffinity(state.venue), affinityBody());
      say(`${jobTitle(job)} started.`);
      follow(job);
    }, "Could not start the affinity computation");
  });
  setupEstimate();
  setupScoresUpload({ stored: refreshAffinity });
  const form = $("#assignment-form");
  form.addEventListener("input", (event) => {
    if (["reviewers_per_paper", "min_papers", "max_papers"].includes(event.target.name)) {
      capacity.touched = true;
      scheduleCapacity();
    }
  });
  $("#as-solver").addEventListener("change", syncModeFields);
  $("#as-q").addEventListener("input", () => { modeState.capTouched = true; });
  syncModeFields();
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const solve = solveBody();
    const problem = solve.problem;
    const body = { ...solve.body, pool: state.pool };
    const maxPapers = form.querySelector('input[name="max_papers_file"]').files?.[0];
    await busy(event.submitter, form.querySelector(".error-box"), async () => {
      if (problem) throw new UserError(problem);
      if (!state.affinityRun) throw new UserError("No affinity scores yet: compute them first, then solve.");
      const check = maxPapers ? null : await checkCapacity({ forSolve: true });
      if (check && !check.fits) {
        throw new UserError(`${check.message || check.shortfall}${check.smallest_max_load != null ? ` The smallest max papers per reviewer that fits is ${check.smallest_max_load}.` : ""}`);
      }
      let job;
      if (maxPapers) {
        // per-reviewer max papers: the solve request as a JSON field next to the CSV
        const data = new FormData();
        data.append("parameters", JSON.stringify(body));
        data.append("max_papers", maxPapers, maxPapers.name);
        job = await state.api.request("POST", EP.startAssignmentWithMaxPapers(state.venue), { form: data });
      } else {
        try {
          job = await state.api.post(EP.assignments(state.venue), body);
        } catch (error) {
          if (error?.code === "stale_affinities") {
            throw new UserError("Some papers have no scores yet (uploaded after the last affinity run): compute affinity again (left), then solve.");
          }
          throw error;
        }
      }
      say(`${jobTitle(job)} started${maxPapers ? ` with the quotas of ${maxPapers.name}` : ""}.`);
      follow(job);
      if (maxPapers) scheduleCapacity();
    }, "Could not start the assignment");
  });
}

// ---- job cards ----------------------------------------------------------------------------

function stateClass(job) {
  return `badge job-${job.state}`;
}

/** Create or update the card of a job. Elements persist across polls, so the live region is
 * announced on change only and a focused button keeps its focus. */
function jobCard(job) {
  const id = `job-${job.id}`;
  let card = document.getElementById(id);
  if (!card) {
    const title = jobTitle(job);
    const bar = new ProgressBar(`${title} progress`);
    bars.set(job.id, bar);
    card = h("article", { class: "job", id, "data-testid": "job", "data-kind": job.kind, "aria-labelledby": `${id}-title` },
      h("div", { class: "job-head" },
        h("h4", { id: `${id}-title` }, title),
        h("span", { "data-testid": "job-state" }),
        h("span", { class: "muted job-when" }),
        h("span", { class: "job-actions" },
          h("button", { type: "button", class: "small-btn danger-btn", "data-testid": "cancel-job", "aria-label": `Cancel ${title}`,
            onclick: (event) => busy(event.currentTarget, null, async () => {
              const updated = await state.api.post(EP.cancelJob(state.venue, job.id));
              say(`Cancel requested for ${title}.`);
              if (updated?.id) jobCard(updated);
            }, `Cancelling ${title}`) }, "Cancel"),
          h("button", { type: "button", class: "small-btn secondary", "data-testid": "rerun-job", "aria-label": `Re-run ${title}`,
            onclick: (event) => busy(event.currentTarget, null, async () => {
              const started = await state.api.post(EP.rerunJob(state.venue, job.id));
              say(`${jobTitle(started)} started with the parameters of ${title}.`);
              follow(started, { prepend: true });
            }, `Re-running ${title}`) }, "Re-run"))),
      h("p", { class: "job-params" }),
      bar.element,
      h("p", { class: "job-texts muted", "data-testid": "job-texts", hidden: true }),
      h("div", { class: "job-outcome" }),
      h("div", { class: "job-log" }));
  }
  updateCard(card, job);
  return card;
}

function updateCard(card, job) {
  const badge = card.querySelector('[data-testid="job-state"]');
  badge.textContent = job.state;
  badge.className = stateClass(job);
  const when = job.finished_at
    ? `ran ${elapsed(job.started_at ?? job.created_at, job.finished_at)}, ended ${dateTime(job.finished_at)}`
    : job.started_at ? `running for ${elapsed(job.started_at)}` : `queued ${dateTime(job.created_at)}`;
  card.querySelector(".job-when").textContent = `${when} · by ${job.created_by}`;
  const params = [jobParamsText(job)];
  if (job.rerun_of != null) params.push(`re-run of job #${job.rerun_of}`);
  const runName = job.params?.name;
  const paramsLine = card.querySelector(".job-params");
  paramsLine.textContent = (runName ? `“${runName}” — ` : "") + params.filter(Boolean).join(" · ");
  if (job.parameters_summary) paramsLine.title = job.parameters_summary; // every parameter, on hover
  const active = ACTIVE.has(job.state);
  const cancel = card.querySelector('[data-testid="cancel-job"]');
  cancel.hidden = !active || !canWrite();
  if (job.cancel_requested && active) { cancel.disabled = true; cancel.textContent = "Cancelling…"; }
  card.querySelector('[data-testid="rerun-job"]').hidden = active || !canWrite();
  const bar = bars.get(job.id);
  bar.set(job.progress ?? 0, job.stage ?? (active ? "" : job.state), active && job.started_at ? elapsed(job.started_at) : "");
  bar.finish(active ? "" : job.state);
  // an embedding or scoring step's numbers while it runs: done/total, measured rate, time left
  const texts = card.querySelector('[data-testid="job-texts"]');
  const words = active ? textProgressText(job.result?.progress) : "";
  if (texts.textContent !== words) texts.textContent = words;
  texts.hidden = !words;
  renderOutcome(card.querySelector(".job-outcome"), job);
  renderLog(card.querySelector(".job-log"), job);
}

function renderOutcome(host, job) {
  const runState = state.runs.find((run) => run.id === job.result?.assignment_id)?.state ?? "";
  const key = `${job.state}:${job.error ?? ""}:${JSON.stringify(job.result ?? {})}:${runState}`;
  if (host.dataset.key === key) return;
  host.dataset.key = key;
  const children = [];
  if (job.state === "failed" || job.state === "interrupted") {
    children.push(failureView(job));
  } else if (job.state === "cancelled") {
    children.push(h("p", { class: "muted" }, "Cancelled: nothing was written."));
  } else if (job.state === "succeeded") {
    const r = job.result ?? {};
    if ((job.kind === "assignment" || job.kind === "reassignment") && r.assignment_id != null) {
      const words = [];
      if (typeof r.objective === "number") words.push(`total score ${niceNumber(r.objective)}`);
      if (typeof r.n_pairs === "number") words.push(plural(r.n_pairs, "pair"));
      if (typeof r.gap === "number") words.push(`gap ${niceNumber(r.gap)}`);
      const made = state.runs.find((run) => run.id === r.assignment_id);
      const number = r.assignment_number ?? made?.number ?? r.assignment_id;
      const name = job.params?.name ? ` “${job.params.name}”` : "";
      children.push(h("p", { class: "ok-line" }, `Created run #${number}${name}${words.length ? ": " + words.join(", ") : ""} `,
        made ? h("span", { class: `badge ${made.state}`, title: "the run's state now" }, made.state) : null, " ",
        h("button", { type: "button", class: "small-btn secondary", onclick: () => {
          selectRun(r.assignment_id);
          emit("open-tab", "tab-assignment");
        } }, `Show run #${number}`)));
    } else {
      const facts = Object.entries(r).filter(([, v]) => typeof v !== "object")
        .map(([k, v]) => `${k.replaceAll("_", " ")} ${typeof v === "number" ? niceNumber(v) : v}`);
      if (facts.length) children.push(h("p", { class: "ok-line" }, `Done: ${facts.join(", ")}.`));
    }
  }
  fill(host, children);
}

// what a failure means, decided on the job's error code (never on its words)
const FAILURE_TITLES = {
  infeasible: "No assignment exists under these constraints",
  stale_affinities: "The scores are stale: compute affinity again",
  no_assignment: "No assignment found within the time limit",
  invalid_input: "The input was refused",
  internal_error: "The service failed (a fault of the service, not of your input)",
  interrupted: "Interrupted: the service stopped while this job ran; re-run it",
};

/** A failed job in the error style: what it means, the diagnosis as a list, what to do. */
function failureView(job) {
  const code = job.error_code ?? (job.state === "interrupted" ? "interrupted" : null);
  const text = String(job.error ?? "").trim();
  // the diagnosis reads as a list: "cause; cause; … (fix: what to do)"
  const body = code && text.toLowerCase().startsWith(`${code.replaceAll("_", " ")}: `) ? text.slice(code.length + 2) : text;
  const fix = /\s*\((?:fix|what to do):\s*([^()]*)\)\s*$/.exec(body);
  const causes = (fix ? body.slice(0, fix.index) : body).split(/;\s+|\n+/).map((c) => c.trim()).filter(Boolean);
  const title = FAILURE_TITLES[code] ?? "Failed";
  return h("div", { class: "error-box", "data-testid": "job-error", "data-code": code ?? "" },
    h("p", { class: "error-message" }, title + (causes.length === 1 && !FAILURE_TITLES[code] ? `: ${causes[0]}` : "")),
    causes.length > 1 || (causes.length === 1 && FAILURE_TITLES[code])
      ? h("ul", { class: "diagnosis-list", "aria-label": "Why" }, causes.map((c) => h("li", {}, c))) : null,
    fix ? h("p", { class: "diagnosis-fix" }, h("strong", {}, "What to do: "), fix[1]) : null,
    code === "stale_affinities" && canWrite()
      ? h("button", { type: "button", class: "small-btn secondary", onclick: () => { $("#affinity-method").focus(); } }, "Go to the affinity form") : null);
}

function renderLog(host, job) {
  // the service's structured entries ({time, level, message}) when it sends them
  const lines = job.entries?.length ? job.entries : job.log ?? [];
  const key = String(lines.length) + JSON.stringify(lines.at(-1) ?? "");
  if (host.dataset.key === key) return;
  host.dataset.key = key;
  const open = host.querySelector("details")?.open ?? false;
  if (!lines.length) { host.replaceChildren(); return; }
  const parsed = lines.map(parseLogLine);
  fill(host, h("details", { open: open || undefined },
    h("summary", {}, `Log (${plural(lines.length, "line")})`),
    h("ol", { class: "log", "aria-label": `Log of ${jobTitle(job)}` }, parsed.map((line) => h("li", { class: `log-${line.level}` },
      line.time ? h("time", { datetime: line.time }, dateTime(line.time).slice(11)) : null, " ", line.message)))));
}

// ---- the job list -------------------------------------------------------------------------

async function refreshJobs() {
  const venue = state.venue;
  const page = await state.api.page(EP.jobs(venue), { limit: PAGE, offset: list.offset });
  if (venue !== state.venue) return;
  list.total = page.total;
  const host = $("#job-list");
  const cards = page.items.map((job) => jobCard(job));
  fill(host, cards.length ? cards : h("p", { class: "muted", id: "no-jobs" },
    state.me?.role === "viewer" ? "Jobs are the chairs' work in progress." : "No jobs yet."), jobPager());
  for (const job of page.items) if (ACTIVE.has(job.state)) follow(job, { render: false });
}

function jobPager() {
  if (list.total <= PAGE) return null;
  const go = (offset) => { list.offset = Math.max(0, offset); refreshJobs().catch((e) => globalError(e, "Loading jobs")); };
  const last = Math.max(0, Math.floor((list.total - 1) / PAGE) * PAGE);
  return h("nav", { class: "pager", "aria-label": "Pages of jobs" },
    h("span", { class: "range" }, rangeText(list.offset, Math.min(PAGE, list.total - list.offset), list.total, "jobs")),
    h("span", { class: "pager-buttons" },
      h("button", { type: "button", class: "small-btn secondary", disabled: list.offset === 0, onclick: () => go(0) }, "Newest"),
      h("button", { type: "button", class: "small-btn secondary", disabled: list.offset === 0, onclick: () => go(list.offset - PAGE) }, "‹ Newer"),
      h("button", { type: "button", class: "small-btn secondary", disabled: list.offset >= last, onclick: () => go(list.offset + PAGE) }, "Older ›"),
      h("button", { type: "button", class: "small-btn secondary", disabled: list.offset >= last, onclick: () => go(last) }, "Oldest")));
}

/** Show a job's card (at the top of the list) and poll it until it ends. */
export function follow(job, { prepend = true, render = true } = {}) {
  const host = $("#job-list");
  if (render) {
    $("#no-jobs")?.remove();
    const card = jobCard(job);
    if (prepend && !card.isConnected) host.prepend(card);
    // a job the chair just started: its progress comes into view (the forms are above it)
    if (prepend && card.getClientRects().length) card.scrollIntoView({ block: "nearest" });
  }
  if (!ACTIVE.has(job.state)) return;
  if (isPolling(job.id)) return;
  const venue = state.venue;
  const timer = setInterval(async () => {
    if (state.venue !== venue) { stopPolling(job.id); return; }
    try {
      const latest = await state.api.get(EP.job(venue, job.id));
      if (document.getElementById(`job-${job.id}`)) jobCard(latest);
      if (!ACTIVE.has(latest.state)) {
        stopPolling(job.id);
        finished(latest);
      }
    } catch (error) {
      stopPolling(job.id);
      globalError(error, `Following ${jobTitle(job)}`);
    }
  }, 300);
  startPolling(job.id, timer);
}

/** Follow a job that a view started (a re-assignment: its card in the job list, polled like a
 * solve's) until it ends; resolves with its result when it succeeded, and throws its error in
 * words when it failed or was cancelled, for the view's error box. */
export function jobResult(job) {
  const ended = ACTIVE.has(job.state) ? new Promise((resolve) => {
    const off = on("job-finished", (latest) => {
      if (latest.id === job.id) { off(); resolve(latest); }
    });
  }) : Promise.resolve(job);
  follow(job);
  return ended.then((latest) => {
    if (latest.state === "succeeded") return latest.result ?? {};
    const why = String(latest.error ?? "").trim() || latest.state;
    throw new UserError(`${jobTitle(latest)} ${latest.state}: ${why}`);
  });
}

async function finished(job) {
  const outcome = job.state === "succeeded" ? "finished" : job.state;
  say(`${jobTitle(job)} ${outcome}.`);
  if (job.state === "succeeded" && job.kind === "affinity") await refreshAffinity().catch((e) => globalError(e, "Loading scores"));
  emit("job-finished", job);
}

export function setupJobs() {
  setupForms();
  registerView("tab-jobs", async () => {
    await Promise.all([refreshJobs(), refreshAffinity(), applySolveDefaults(), loadModels().then(refreshEstimate)]);
  });
  on("venue", () => {
    list.offset = 0;
    bars.clear();
    capacity.answer = null;
    capacity.touched = false;
    $("#capacity-check").replaceChildren();
    clearEstimate();
    $("#job-list").replaceChildren();
    refreshAffinity().catch((e) => globalError(e, "Loading scores"));
  });
  on("data", () => { if (state.tab === "tab-jobs") applySolveDefaults().catch((e) => globalError(e, "Checking capacity")); });
  // the estimate follows the persons and the pool; a finished affinity job filled the cache
  on("data", () => { if (state.tab === "tab-jobs") scheduleEstimate(); });
  on("counts", () => { if (state.tab === "tab-jobs") scheduleEstimate(); });
  on("pool", () => { if (state.tab === "tab-jobs") scheduleEstimate(); });
  on("job-finished", (job) => { if (job.kind === "affinity" && state.tab === "tab-jobs") scheduleEstimate(); });
  on("limits", () => { if (state.tab === "tab-jobs") scheduleCapacity(); });
}
