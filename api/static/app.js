// The chair console: one page over the service's venue API. Plain ES modules, no build step.
import { Api, ApiError } from "./api.js";
import {
  argmaxOrder, barChart, edgeLabels, heatmap, histogram, niceNumber, spectralOrder,
} from "./charts.js";

// ---- endpoints (all relative to the venue) -------------------------------------------------
const V = (venue) => `/venues/${encodeURIComponent(venue)}`;
const q = encodeURIComponent;
const EP = {
  me: () => "/me",
  venues: () => "/venues",
  venue: (v) => V(v),
  upload: (v, kind) => `${V(v)}/${kind}/upload`,
  reviewers: (v) => `${V(v)}/reviewers`,
  submissions: (v) => `${V(v)}/submissions`,
  jobs: (v) => `${V(v)}/jobs`,
  job: (v, id) => `${V(v)}/jobs/${id}`,
  cancelJob: (v, id) => `${V(v)}/jobs/${id}/cancel`,
  startAffinity: (v) => `${V(v)}/affinity/jobs`,
  latestAffinity: (v) => `${V(v)}/affinity`,
  pair: (v, p, r) => `${V(v)}/affinity/pairs/${q(p)}/${q(r)}`,
  paperReviewers: (v, p) => `${V(v)}/papers/${q(p)}/reviewers`,
  reviewerPapers: (v, r) => `${V(v)}/reviewers/${q(r)}/papers`,
  startAssignment: (v) => `${V(v)}/assignments`,
  assignments: (v) => `${V(v)}/assignments`,
  assignment: (v, a) => `${V(v)}/assignments/${a}`,
  assignmentPairs: (v, a) => `${V(v)}/assignments/${a}/pairs`,
  assignmentStats: (v, a) => `${V(v)}/assignments/${a}/stats`,
  assignmentPaper: (v, a, p) => `${V(v)}/assignments/${a}/papers/${q(p)}`,
  startAssignmentWithMaxPapers: (v) => `${V(v)}/assignments/with-max-papers`,
  pin: (v, a) => `${V(v)}/assignments/${a}/pin`,
  unpin: (v, a) => `${V(v)}/assignments/${a}/unpin`,
  forbid: (v, a) => `${V(v)}/assignments/${a}/forbid`,
  swap: (v, a) => `${V(v)}/assignments/${a}/swap`,
  deploy: (v, a) => `${V(v)}/assignments/${a}/deploy`,
  exportAssignment: (v, a) => `${V(v)}/assignments/${a}/export`,
  conflicts: (v) => `${V(v)}/conflicts`,
  audit: (v) => `${V(v)}/audit`,
};

// ---- state and tiny DOM helpers ------------------------------------------------------------
const state = {
  api: new Api(sessionStorage.getItem("recommender.token") ?? ""),
  me: null, // {name, role, venue_id} of the token (GET /me)
  venue: null,
  venues: [],
  papers: [],
  reviewers: [],
  affinityRun: null,
  assignments: [],
  polling: new Map(),
  paperTitles: new Map(),
};

const $ = (sel, root = document) => root.querySelector(sel);
function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function say(message) {
  const box = $("#global-status");
  box.textContent = "";
  // re-set on the next frame so screen readers announce repeated messages
  requestAnimationFrame(() => { box.textContent = message; });
}

/** Render an error (ApiError or any Error) into `box` in words; row-level problems as a table. */
function showError(box, error, context = "") {
  box.hidden = false;
  box.replaceChildren();
  const text = error instanceof Error ? error.message : String(error);
  box.append(h("p", { class: "error-message" }, context ? `${context}: ${text}` : text));
  if (error instanceof ApiError && error.problems.length) {
    box.append(problemTable(error.problems));
  }
  if (error instanceof ApiError && error.status === 401) {
    box.append(h("p", {}, "Sign in again with a valid token."));
  }
}
function clearError(box) { if (box) { box.hidden = true; box.replaceChildren(); } }

/** A problem the user can fix (bad input, nothing selected): shown, not logged as a bug. */
class UserError extends Error {}

function globalError(error, context) {
  showError($("#global-error"), error, context);
  logUnexpected(error, context);
}

/** Anything but an API answer or a UserError is a bug of this page: log it for developers. */
function logUnexpected(error, context) {
  if (!(error instanceof ApiError) && !(error instanceof UserError)) console.error(context, error);
}

function problemTable(problems) {
  const shown = problems.slice(0, 200);
  const table = h("table", { class: "error-table", "data-testid": "problem-table" },
    h("caption", { class: "muted" },
      `${problems.length} problem${problems.length === 1 ? "" : "s"}; nothing was loaded` +
      (problems.length > shown.length ? ` (first ${shown.length} shown)` : "")),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "File"), h("th", { scope: "col" }, "Line"),
      h("th", { scope: "col" }, "Field"), h("th", { scope: "col" }, "Reason"))),
    h("tbody", {}, shown.map((p) => h("tr", {},
      h("td", {}, p.file), h("td", { class: "num" }, p.line ?? "–"), h("td", {}, p.field ?? "–"),
      h("td", {}, p.message)))));
  return h("div", { class: "table-wrap" }, table);
}

function table(columns, rows, attrs = {}) {
  return h("div", { class: "table-wrap" }, h("table", attrs,
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col", class: c.num ? "num" : "" }, c.label)))),
    h("tbody", {}, rows.map((row) => h("tr", {}, columns.map((c) => {
      const value = c.render ? c.render(row) : row[c.key];
      return h("td", { class: c.num ? "num" : "" }, value instanceof Node ? value : (value ?? "–"));
    }))))));
}

/** A paper's full id and the start of its title (the whole title on hover). */
function paperCell(paperId, titleChars) {
  const title = state.paperTitles.get(paperId) ?? "";
  return h("span", { title }, paperId, " ",
    h("span", { class: "muted" }, title.length > titleChars ? `${title.slice(0, titleChars)}…` : title));
}

function stat(label, value) {
  return h("div", { class: "stat" }, h("b", {}, value), h("span", {}, label));
}

/** Run an async UI action with its button disabled and errors shown in `errorBox`. */
async function busy(button, errorBox, action, context) {
  if (button) button.disabled = true;
  clearError(errorBox ?? $("#global-error"));
  try {
    return await action();
  } catch (error) {
    if (errorBox) {
      showError(errorBox, error, context);
      logUnexpected(error, context);
    } else {
      globalError(error, context);
    }
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}

// ---- sign in and venues --------------------------------------------------------------------
function showView(id) {
  for (const view of ["signin-view", "venue-view", "console-view"]) {
    $(`#${view}`).hidden = view !== id;
  }
  $("#session-bar").hidden = id === "signin-view";
  $("#venue-select").hidden = id !== "console-view";
  $("#venue-select-label").hidden = id !== "console-view";
}

/** May the signed-in token change the open venue (upload, run jobs, edit, deploy)? */
function canWrite() {
  const me = state.me;
  return !!me && (me.role === "admin" || (me.role === "chair" && me.venue_id === state.venue));
}

async function signIn(token) {
  state.api = new Api(token);
  const [me, venues] = await Promise.all([state.api.get(EP.me()), state.api.all(EP.venues())]);
  sessionStorage.setItem("recommender.token", token);
  state.me = me;
  state.venues = venues;
  // CSS hides the controls marked data-requires="write"/"admin" that this role may not use
  document.body.dataset.role = me.role;
  $("#whoami").textContent = `Signed in as ${me.name} (${me.role}${me.venue_id ? " of " + me.venue_id : ""})`;
  renderVenueChoices();
  const remembered = sessionStorage.getItem("recommender.venue");
  if (remembered && venues.some((v) => v.id === remembered)) {
    await openVenue(remembered);
  } else if (venues.length === 1) {
    await openVenue(venues[0].id);
  } else {
    showView("venue-view");
    $("#venue-title").focus?.();
  }
}

function renderVenueChoices() {
  const list = $("#venue-list");
  list.replaceChildren(...(state.venues.length ? state.venues.map((venue) => h("li", {},
    h("button", { type: "button", "data-venue": venue.id, onclick: () => openVenue(venue.id).catch((e) => globalError(e, "Opening venue")) },
      `${venue.name || venue.id} (${venue.id})`))) : [h("li", { class: "muted" }, "No venues yet — create one below.")]));
  const select = $("#venue-select");
  select.replaceChildren(...state.venues.map((v) => h("option", { value: v.id }, v.name || v.id)));
  if (state.venue) select.value = state.venue;
}

async function openVenue(venueId) {
  clearError($("#global-error"));
  state.venue = venueId;
  sessionStorage.setItem("recommender.venue", venueId);
  $("#venue-select").value = venueId;
  const venue = state.venues.find((v) => v.id === venueId);
  $("#venue-heading").textContent = `${venue?.name || venueId}`;
  showView("console-view");
  selectTab("tab-data");
  $("#venue-heading").focus();
  await refreshAll();
}

async function refreshAll() {
  await Promise.all([
    refreshData().catch((e) => globalError(e, "Loading reviewers and submissions")),
    refreshJobs().catch((e) => globalError(e, "Loading jobs")),
    refreshAffinityRuns().catch((e) => globalError(e, "Loading affinity runs")),
    refreshAssignments().catch((e) => globalError(e, "Loading assignments")),
  ]);
}

// ---- tabs ----------------------------------------------------------------------------------
const TAB_LOADERS = {
  "tab-inspect": () => loadInspect(),
  "tab-assignment": () => loadAssignment(),
  "tab-compare": () => fillCompareSelects(),
  "tab-audit": () => loadAudit(),
};

function selectTab(tabId, focus = false) {
  for (const tab of document.querySelectorAll('[role="tab"]')) {
    const selected = tab.id === tabId;
    tab.setAttribute("aria-selected", String(selected));
    tab.tabIndex = selected ? 0 : -1;
    $(`#${tab.getAttribute("aria-controls")}`).hidden = !selected;
    if (selected && focus) tab.focus();
  }
  const loader = TAB_LOADERS[tabId];
  if (loader && state.venue) loader().catch((e) => globalError(e, "Loading view"));
}

function setupTabs() {
  const tabs = [...document.querySelectorAll('[role="tab"]')];
  tabs.forEach((tab, index) => {
    tab.addEventListener("click", () => selectTab(tab.id));
    tab.addEventListener("keydown", (event) => {
      let next = null;
      if (event.key === "ArrowRight") next = tabs[(index + 1) % tabs.length];
      if (event.key === "ArrowLeft") next = tabs[(index - 1 + tabs.length) % tabs.length];
      if (event.key === "Home") next = tabs[0];
      if (event.key === "End") next = tabs[tabs.length - 1];
      if (next) { event.preventDefault(); selectTab(next.id, true); }
    });
  });
}

// ---- data ----------------------------------------------------------------------------------
async function refreshData() {
  const v = state.venue;
  const [reviewers, submissions] = await Promise.all([
    state.api.all(EP.reviewers(v)), state.api.all(EP.submissions(v)),
  ]);
  state.reviewers = reviewers;
  state.papers = submissions;
  state.paperTitles = new Map(submissions.map((s) => [s.id, s.title]));
  $("#data-summary").replaceChildren(
    stat("reviewers", reviewers.length), stat("submissions", submissions.length),
    stat("publications in profiles", reviewers.reduce((s, r) => s + (r.n_publications ?? 0), 0)));
  const paperOptions = submissions.map((s) => h("option", { value: s.id }, `${s.id} — ${s.title.slice(0, 70)}`));
  $("#paper-select").replaceChildren(...paperOptions);
  $("#reviewer-select").replaceChildren(...reviewers.map((r) => h("option", { value: r.id }, r.name ? `${r.name} (${r.id})` : r.id)));
  $("#paper-ids").replaceChildren(...submissions.map((s) => h("option", { value: s.id }, s.title.slice(0, 60))));
  $("#reviewer-ids").replaceChildren(...reviewers.map((r) => h("option", { value: r.id }, r.name)));
}

function setupUploads() {
  for (const form of document.querySelectorAll(".upload-form")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const kind = form.dataset.kind;
      const input = form.querySelector('input[type="file"]');
      const result = form.querySelector(".upload-result");
      const button = form.querySelector("button");
      const file = input.files?.[0];
      result.replaceChildren();
      if (!file) {
        result.append(h("div", { class: "error-box", role: "alert" }, "Choose a file first."));
        return;
      }
      button.disabled = true;
      result.append(h("p", { class: "muted" }, `Uploading ${file.name}…`));
      try {
        const answer = await state.api.upload(EP.upload(state.venue, kind), file);
        const parts = [];
        if (answer && typeof answer === "object") {
          if ("created" in answer) parts.push(`${answer.created} new`);
          if ("updated" in answer) parts.push(`${answer.updated} updated`);
          if ("total" in answer) parts.push(`${answer.total} ${kind} in the venue`);
        }
        result.replaceChildren(h("div", { class: "ok-box", "data-testid": `upload-ok-${kind}` },
          `${file.name}: loaded ${kind}${parts.length ? " — " + parts.join(", ") : ""}.`));
        say(`Uploaded ${kind}.`);
        await refreshData();
      } catch (error) {
        const box = h("div", { class: "error-box", role: "alert", "data-testid": `upload-error-${kind}` });
        result.replaceChildren(box);
        showError(box, error, `${file.name} was not loaded`);
      } finally {
        button.disabled = false;
      }
    });
  }
}

// ---- jobs ----------------------------------------------------------------------------------
function formValues(form) {
  const data = {};
  for (const element of form.elements) {
    if (!element.name || element.type === "submit" || element.type === "file") continue;
    if (element.type === "checkbox") data[element.name] = element.checked;
    else if (element.type === "number") data[element.name] = element.value === "" ? null : Number(element.value);
    else data[element.name] = element.value;
  }
  return data;
}

function setupJobForms() {
  $("#affinity-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const values = formValues(form);
    // Only what the chair chose: everything else takes the server's defaults, which are
    // the command line's (one ScoringParams default).
    const config = {};
    if (values.method) config.method = values.method;
    if (values.aggregation) config.aggregation = values.aggregation;
    const body = { config };
    if (values.top_n) body.top_n = values.top_n;
    await busy(form.querySelector("button"), form.querySelector(".error-box"), async () => {
      const job = await state.api.post(EP.startAffinity(state.venue), body);
      say(`Affinity job ${job.id} started.`);
      trackJob(job);
    }, "Could not start the affinity computation");
  });
  $("#assignment-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const values = formValues(form);
    const body = {
      reviewers_per_paper: values.reviewers_per_paper,
      min_load: values.min_papers ?? 0,
      max_load: values.max_papers,
      solver: values.solver,
      seed: values.seed,
      time_limit: values.time_limit,
      options: {},
    };
    if (values.solver === "randomized" && values.q != null) body.options.q = values.q;
    if (values.objective === "fairness") body.fairness_keep = values.fairness_keep ?? 1;
    if (values.min_score != null) body.min_score = values.min_score;
    if (values.max_per_affiliation != null) body.max_per_affiliation = values.max_per_affiliation;
    const attribute = (values.require_attribute_name ?? "").trim();
    if (attribute) {
      body.require_attribute = {
        name: attribute, value: (values.require_attribute_value ?? "").trim(),
        min_count: values.require_attribute_min_count ?? 1,
      };
    }
    const maxPapers = form.querySelector('input[name="max_papers_file"]').files?.[0];
    await busy(form.querySelector('button[type="submit"]'), form.querySelector(".error-box"), async () => {
      let job;
      if (maxPapers) {
        // per-reviewer max papers: the solve request as a JSON field next to the CSV
        const data = new FormData();
        data.append("parameters", JSON.stringify(body));
        data.append("max_papers", maxPapers, maxPapers.name);
        job = await state.api.request("POST", EP.startAssignmentWithMaxPapers(state.venue), { form: data });
      } else {
        job = await state.api.post(EP.startAssignment(state.venue), body);
      }
      say(`Assignment job ${job.id} started${maxPapers ? ` with the max papers of ${maxPapers.name}` : ""}.`);
      trackJob(job);
    }, "Could not start the assignment");
  });
}

const ACTIVE = new Set(["queued", "running"]);

/** Create or update the card of a job. Elements persist across polls, so the live region is
 * announced on change only and a focused Cancel button keeps its focus. */
function jobCard(job) {
  const id = `job-${job.id}`;
  let card = document.getElementById(id);
  if (!card) {
    card = h("article", { class: "job", id, "data-testid": "job", "data-kind": job.kind, "aria-labelledby": `${id}-title` });
    const cancel = h("button", {
      type: "button", class: "danger-btn", "data-testid": "cancel-job",
      onclick: (event) => busy(event.currentTarget, null, async () => {
        const updated = await state.api.post(EP.cancelJob(state.venue, job.id));
        say(`Cancel requested for job ${job.id}.`);
        if (updated && updated.id) jobCard(updated);
      }, `Cancelling job ${job.id}`),
    }, "Cancel");
    card.append(
      h("div", { class: "job-head" },
        h("strong", { id: `${id}-title` }, `#${job.id} ${job.kind}`),
        h("span", { "data-testid": "job-state" }), h("span", { class: "muted job-stage" }), cancel),
      h("progress", { max: 100, value: 0, "aria-label": `Job ${job.id} progress` }),
      h("p", { class: "muted", "aria-live": "polite", "data-testid": "job-progress" }),
      h("div", { class: "job-extra" }));
    $("#job-list").prepend(card);
  }
  const fraction = Math.round((job.progress ?? 0) * 100);
  const stateLabel = card.querySelector('[data-testid="job-state"]');
  stateLabel.textContent = job.state;
  stateLabel.className = `state-${job.state}`;
  card.querySelector(".job-stage").textContent = job.stage ?? "";
  const cancel = card.querySelector('[data-testid="cancel-job"]');
  cancel.hidden = !ACTIVE.has(job.state) || !canWrite();
  if (job.cancel_requested) { cancel.disabled = true; cancel.textContent = "Cancelling…"; }
  const bar = card.querySelector("progress");
  bar.value = fraction;
  bar.setAttribute("aria-valuetext", `${fraction}% — ${job.stage ?? ""}`);
  const live = card.querySelector('[data-testid="job-progress"]');
  const text = `${fraction}% ${job.stage ?? ""}`;
  if (live.textContent !== text) live.textContent = text;
  const extra = card.querySelector(".job-extra");
  const logOpen = extra.querySelector("details")?.open ?? false;
  const children = [];
  if (job.error) children.push(h("div", { class: "error-box", role: "alert" }, `Failed: ${job.error}`));
  if (job.state === "succeeded" && job.result && Object.keys(job.result).length) {
    children.push(h("p", { class: "muted" }, "Result: " + Object.entries(job.result)
      .filter(([, v]) => typeof v !== "object").map(([k, v]) => `${k}=${typeof v === "number" ? niceNumber(v) : v}`).join(", ")));
  }
  if (job.log?.length) {
    children.push(h("details", { open: logOpen || undefined }, h("summary", {}, `Log (${job.log.length} lines)`),
      h("div", { class: "log" }, job.log.join("\n"))));
  }
  extra.replaceChildren(...children);
  return card;
}

async function refreshJobs() {
  const jobs = await state.api.all(EP.jobs(state.venue), {}, 100, 100);
  $("#job-list").replaceChildren();
  jobs.sort((a, b) => a.id - b.id).forEach((job) => {
    jobCard(job);
    if (ACTIVE.has(job.state)) trackJob(job);
  });
  if (!jobs.length) $("#job-list").append(h("p", { class: "muted", id: "no-jobs" }, "No jobs yet."));
}

function trackJob(job) {
  $("#no-jobs")?.remove();
  jobCard(job);
  if (!ACTIVE.has(job.state) || state.polling.has(job.id)) {
    if (!ACTIVE.has(job.state)) onJobFinished(job);
    return;
  }
  const venue = state.venue;
  const timer = setInterval(async () => {
    if (state.venue !== venue) { clearInterval(timer); state.polling.delete(job.id); return; }
    try {
      const latest = await state.api.get(EP.job(venue, job.id));
      jobCard(latest);
      if (!ACTIVE.has(latest.state)) {
        clearInterval(timer);
        state.polling.delete(job.id);
        onJobFinished(latest);
      }
    } catch (error) {
      clearInterval(timer);
      state.polling.delete(job.id);
      globalError(error, `Following job ${job.id}`);
    }
  }, 400);
  state.polling.set(job.id, timer);
}

async function onJobFinished(job) {
  say(`Job ${job.id} (${job.kind}) ${job.state}${job.error ? ": " + job.error : ""}.`);
  if (job.state !== "succeeded") return;
  if (job.kind.includes("affinity")) await refreshAffinityRuns().catch((e) => globalError(e, "Loading affinity runs"));
  else await refreshAssignments().catch((e) => globalError(e, "Loading assignments"));
}

// ---- inspect -------------------------------------------------------------------------------
/** The venue's latest affinity run, or null when none was computed yet. */
async function refreshAffinityRuns() {
  try {
    state.affinityRun = await state.api.get(EP.latestAffinity(state.venue));
  } catch (error) {
    // 404/409: the venue has no affinity run yet, which is a state, not a failure
    if (!(error instanceof ApiError) || ![404, 409].includes(error.status)) throw error;
    state.affinityRun = null;
  }
  const run = state.affinityRun;
  $("#affinity-run-info").textContent = run
    ? `Affinity run #${run.id}: ${run.config?.method ?? "?"} scores, ${run.n_papers} papers × ${run.n_reviewers} reviewers, top ${run.top_n} kept` +
      (run.stale ? " — STALE: reviewers or submissions changed since; recompute." : "")
    : "No affinity scores yet: start an affinity computation under Compute.";
  if (!$("#panel-inspect").hidden) renderScoreHistogram(run);
}

async function loadInspect() {
  await refreshAffinityRuns();
}

function renderScoreHistogram(run) {
  const host = $("#score-histogram");
  if (!run) {
    host.replaceChildren(h("p", { class: "muted" }, "No scores to show."));
    $("#score-summary").replaceChildren();
    return;
  }
  const statistics = run.statistics ?? {};
  const counts = statistics.histogram?.counts ?? [];
  const edges = statistics.histogram?.edges ?? [];
  const quantiles = statistics.quantiles ?? {};
  const best = statistics.best_reviewer_score_per_paper ?? {};
  $("#score-summary").replaceChildren(
    ...["count", "min", "mean", "std", "max"].filter((k) => typeof statistics[k] === "number")
      .map((k) => stat(k === "count" ? "pairs scored" : k, niceNumber(statistics[k]))),
    ...(quantiles["0.5"] != null ? [stat("median", niceNumber(quantiles["0.5"]))] : []),
    ...(best.min != null ? [stat("worst paper's best reviewer", niceNumber(best.min))] : []),
    ...(statistics.detected_conflicts != null ? [stat("conflicts detected", statistics.detected_conflicts)] : []));
  barChart(host, edgeLabels(edges), [{ name: "pairs", values: counts }],
    { title: `Histogram of the affinity scores of run ${run.id}`, xLabel: "score", yLabel: "pairs" });
}

function bidTag(bid) { return bid ? h("span", { class: "tag bid" }, `bid: ${bid}`) : null; }
function conflictTag(conflict) {
  const reasons = Array.isArray(conflict) ? conflict : conflict ? [String(conflict)] : [];
  return reasons.length ? h("span", { class: "tag conflict" }, `conflict: ${reasons.join("; ")}`) : null;
}

/** The paper in the shown assignment: assigned reviewers and the service's alternates
 * (unassigned, conflict-free, below their max load, best first). */
async function assignedPairsOfPaper(paperId) {
  const assignment = currentAssignment() ?? state.assignments[0];
  if (!assignment) return { assignment: null, pairs: [], alternates: [] };
  const paper = await state.api.get(EP.assignmentPaper(state.venue, assignment.id, paperId), { alternates: ALTERNATES });
  return { assignment, pairs: paper.assigned, alternates: paper.alternates };
}

const ALTERNATES = 3;

async function showPaper(paperId) {
  const host = $("#paper-detail");
  host.replaceChildren(h("p", { class: "muted" }, "Loading…"));
  const [top, assigned] = await Promise.all([
    state.api.get(EP.paperReviewers(state.venue, paperId), { limit: 20 }),
    assignedPairsOfPaper(paperId),
  ]);
  const topItems = Array.isArray(top) ? top : top.items;
  const assignedIds = new Set(assigned.pairs.map((p) => p.reviewer_id));
  const alternates = new Map(assigned.alternates.map((a) => [a.reviewer_id, a]));
  const explainButton = (reviewerId) => h("button", {
    type: "button", class: "small-btn", "data-testid": "explain",
    onclick: (event) => busy(event.currentTarget, null, () => explainPair(paperId, reviewerId), "Explaining the score"),
  }, "Why?");
  const rows = [...topItems];
  for (const pair of [...assigned.pairs, ...assigned.alternates]) {
    if (!rows.some((r) => r.reviewer_id === pair.reviewer_id)) rows.push(pair);
  }
  const loadText = (a) => (a.max_load != null ? `load ${a.load}/${a.max_load}` : `load ${a.load}`);
  const title = state.paperTitles.get(paperId) ?? "";
  host.replaceChildren(
    h("p", {}, h("strong", {}, title), " ", h("span", { class: "muted" }, paperId)),
    assigned.assignment ? h("p", { class: "muted" }, `Assignment #${assigned.assignment.id} (${assigned.assignment.state}): ${assigned.pairs.length} assigned`) : h("p", { class: "muted" }, "No assignment yet."),
    table([
      { label: "Reviewer", render: (r) => r.reviewer_id },
      { label: "Score", num: true, render: (r) => niceNumber(r.score) },
      { label: "Status", render: (r) => h("span", {},
        assignedIds.has(r.reviewer_id) ? h("span", { class: "tag assigned" }, "assigned") : null,
        alternates.has(r.reviewer_id) ? h("span", { class: "tag alternate", title: loadText(alternates.get(r.reviewer_id)) },
          `alternate #${alternates.get(r.reviewer_id).rank} (${loadText(alternates.get(r.reviewer_id))})`) : null,
        assigned.pairs.find((p) => p.reviewer_id === r.reviewer_id)?.pinned ? h("span", { class: "tag pinned" }, "pinned") : null,
        bidTag(r.bid), conflictTag(r.conflict)) },
      { label: "Explanation", render: (r) => explainButton(r.reviewer_id) },
    ], rows, { "data-testid": "paper-reviewers" }),
  );
}

async function explainPair(paperId, reviewerId) {
  const card = $("#explain-card");
  const host = $("#explanation");
  card.hidden = false;
  host.replaceChildren(h("p", { class: "muted" }, "Loading explanation…"));
  const pair = await state.api.get(EP.pair(state.venue, paperId, reviewerId), { explain: true });
  const ex = pair.explanation ?? {};
  const pubs = ex.publications ?? [];
  const terms = ex.shared_terms ?? [];
  host.replaceChildren(
    h("p", {}, `Paper `, h("strong", {}, paperId), ` × reviewer `, h("strong", {}, reviewerId),
      `: score ${niceNumber(pair.score)} `, bidTag(pair.bid), conflictTag(pair.conflict)),
    h("h4", {}, "Top matching publications of the reviewer"),
    pubs.length ? h("ol", { class: "explain-pubs", "data-testid": "explain-publications" }, pubs.slice(0, 8).map((p) => h("li", {},
      h("strong", {}, p.title || p.id), p.year ? ` (${p.year})` : "",
      h("span", { class: "muted" }, ` — similarity ${niceNumber(p.similarity)}, weight ${niceNumber(p.weight)}`)))) :
      h("p", { class: "muted" }, "No publication evidence (reviewer has no publications)."),
    h("h4", {}, "Top shared terms"),
    terms.length ? h("ul", { class: "terms", "data-testid": "explain-terms" }, terms.map((t) =>
      h("li", {}, `${t.term ?? t[0]} `, h("span", { class: "muted" }, niceNumber(t.contribution ?? t[1]))))) :
      h("p", { class: "muted" }, "No shared terms."),
  );
  $("#explain-title").focus();
}

async function showReviewer(reviewerId) {
  const host = $("#reviewer-detail");
  host.replaceChildren(h("p", { class: "muted" }, "Loading…"));
  const assignment = currentAssignment() ?? state.assignments[0];
  const [papers, assigned] = await Promise.all([
    state.api.get(EP.reviewerPapers(state.venue, reviewerId), { limit: 20 }),
    assignment ? state.api.all(EP.assignmentPairs(state.venue, assignment.id), { reviewer_id: reviewerId }) : Promise.resolve([]),
  ]);
  const items = Array.isArray(papers) ? papers : papers.items;
  const assignedIds = new Set(assigned.map((p) => p.paper_id));
  const reviewer = state.reviewers.find((r) => r.id === reviewerId);
  const rows = [...items];
  for (const pair of assigned) if (!rows.some((r) => r.paper_id === pair.paper_id)) rows.push(pair);
  host.replaceChildren(
    h("p", {}, h("strong", {}, reviewer?.name || reviewerId), " ",
      h("span", { class: "muted" }, `${reviewer?.affiliation ?? ""} · ${reviewer?.n_publications ?? "?"} publications`)),
    h("p", { "data-testid": "reviewer-load" }, assignment ? `Load in assignment #${assignment.id}: ${assigned.length} paper${assigned.length === 1 ? "" : "s"}` : "No assignment yet."),
    table([
      { label: "Paper", render: (r) => paperCell(r.paper_id, 40) },
      { label: "Score", num: true, render: (r) => niceNumber(r.score) },
      { label: "Marks", render: (r) => h("span", {}, assignedIds.has(r.paper_id) ? h("span", { class: "tag assigned" }, "assigned") : null, bidTag(r.bid), conflictTag(r.conflict)) },
      { label: "", render: (r) => h("button", { type: "button", class: "small-btn", onclick: (event) => busy(event.currentTarget, null, () => explainPair(r.paper_id, reviewerId), "Explaining the score") }, "Why?") },
    ], rows),
  );
}

async function drawHeatmap(nPapers, order, paperIds = []) {
  const host = $("#heatmap");
  const known = new Map(state.papers.map((p) => [p.id, p]));
  const unknown = paperIds.filter((id) => !known.has(id));
  if (unknown.length) throw new UserError(`Unknown paper id${unknown.length === 1 ? "" : "s"}: ${unknown.join(", ")}`);
  const papers = paperIds.length ? paperIds.map((id) => known.get(id)) : state.papers.slice(0, nPapers);
  if (!papers.length) { host.replaceChildren(h("p", { class: "muted" }, "No submissions loaded.")); return; }
  host.replaceChildren(h("p", { class: "muted" }, "Loading scores…"));
  const lists = await Promise.all(papers.map((p) =>
    state.api.get(EP.paperReviewers(state.venue, p.id), { limit: 100 })));
  // reviewers: those appearing in the papers' top lists, most frequent first, at most 60
  const frequency = new Map();
  lists.forEach((list) => (Array.isArray(list) ? list : list.items).forEach((r) => frequency.set(r.reviewer_id, (frequency.get(r.reviewer_id) ?? 0) + 1)));
  const reviewerIds = [...frequency.entries()].sort((a, b) => b[1] - a[1]).slice(0, 60).map(([id]) => id);
  const column = new Map(reviewerIds.map((id, j) => [id, j]));
  const matrix = papers.map(() => new Array(reviewerIds.length).fill(NaN));
  lists.forEach((list, i) => (Array.isArray(list) ? list : list.items).forEach((r) => {
    if (column.has(r.reviewer_id)) matrix[i][column.get(r.reviewer_id)] = r.score;
  }));
  const finite = matrix.flat().filter(Number.isFinite);
  const floor = finite.length ? Math.min(...finite) : 0;
  const filled = matrix.map((row) => row.map((v) => (Number.isFinite(v) ? v : floor)));
  const ordering = order === "spectral" ? spectralOrder(filled) : order === "argmax" ? argmaxOrder(filled) : {
    rowOrder: papers.map((_, i) => i), colOrder: reviewerIds.map((_, j) => j),
  };
  const sorted = ordering.rowOrder.map((i) => ordering.colOrder.map((j) => matrix[i][j]));
  let marks;
  const assignment = currentAssignment() ?? state.assignments[0];
  if (assignment) {
    const pairs = await state.api.all(EP.assignmentPairs(state.venue, assignment.id));
    const rowPos = new Map(ordering.rowOrder.map((i, k) => [papers[i].id, k]));
    const colPos = new Map(ordering.colOrder.map((j, k) => [reviewerIds[j], k]));
    marks = new Set(pairs.filter((p) => rowPos.has(p.paper_id) && colPos.has(p.reviewer_id))
      .map((p) => `${rowPos.get(p.paper_id)},${colPos.get(p.reviewer_id)}`));
  }
  heatmap(host, sorted, ordering.rowOrder.map((i) => papers[i].id), ordering.colOrder.map((j) => reviewerIds[j]),
    { title: `Scores, ${order} order`, marks });
}

function setupInspect() {
  $("#inspect-refresh").addEventListener("click", (event) => busy(event.currentTarget, null, loadInspect, "Loading scores"));
  $("#paper-form").addEventListener("submit", (event) => {
    event.preventDefault();
    busy(event.submitter, null, () => showPaper($("#paper-select").value), "Loading the paper");
  });
  $("#reviewer-form").addEventListener("submit", (event) => {
    event.preventDefault();
    busy(event.submitter, null, () => showReviewer($("#reviewer-select").value), "Loading the reviewer");
  });
  $("#heatmap-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const values = formValues(event.currentTarget);
    const ids = [...new Set((values.paper_ids ?? "").split(",").map((x) => x.trim()).filter(Boolean))];
    busy(event.submitter, null, () => drawHeatmap(values.papers ?? 30, values.order, ids), "Drawing the heatmap");
  });
}

// ---- assignment ----------------------------------------------------------------------------
async function refreshAssignments() {
  const list = await state.api.all(EP.assignments(state.venue), {}, 100, 200);
  state.assignments = list.sort((a, b) => b.id - a.id);
  const select = $("#assignment-select");
  const previous = select.value;
  select.replaceChildren(...state.assignments.map((a) => h("option", { value: a.id }, runLabel(a))));
  if (previous && state.assignments.some((a) => String(a.id) === previous)) select.value = previous;
  fillCompareSelects();
  if (!$("#panel-assignment").hidden) await loadAssignment();
}

/** "#3 draft — randomized q=0.5, 3/paper, load 0–6, total 12.3" from what the service stored. */
function runLabel(a) {
  const p = a.parameters ?? {};
  const options = [
    ...Object.entries(p.options ?? {}).map(([k, v]) => `${k}=${v}`),
    p.fairness_keep != null ? `fairness keep=${p.fairness_keep}` : "max total",
    p.min_score != null ? `min score ${p.min_score}` : "",
    p.max_per_affiliation != null ? `≤${p.max_per_affiliation}/affiliation` : "",
  ].filter(Boolean).join(" ");
  const objective = a.summary?.objective;
  return `#${a.id} ${a.state}${a.summary?.edited ? " (edited)" : ""} — ${p.solver ?? "?"}${options ? " " + options : ""}, ` +
    `${p.reviewers_per_paper ?? "?"}/paper, load ${p.min_load ?? 0}–${p.max_load ?? "?"}` +
    (objective != null ? `, objective ${niceNumber(objective)}` : "");
}

function currentAssignment() {
  const id = Number($("#assignment-select").value);
  return state.assignments.find((a) => a.id === id) ?? null;
}

async function loadAssignment() {
  const assignment = currentAssignment();
  const summaryHost = $("#assignment-summary");
  if (!assignment) {
    summaryHost.replaceChildren(h("p", { class: "muted" }, "No assignment yet: solve one under Compute."));
    $("#assignment-state").textContent = "";
    for (const id of ["#load-histogram", "#paper-score-chart", "#pairs-table"]) $(id).replaceChildren();
    return;
  }
  const badge = $("#assignment-state");
  badge.textContent = assignment.state;
  badge.className = `badge ${assignment.state}`;
  const isDraft = assignment.state === "draft";
  // drafts are published, superseded runs published again (a rollback); the live one is live
  $("#deploy-button").disabled = assignment.state === "live";
  for (const button of document.querySelectorAll("#edit-form button, #swap-form button")) button.disabled = !isDraft;
  $("#edit-title").textContent = isDraft ? "Edit this draft" : `Edit (assignment #${assignment.id} is ${assignment.state}: re-solve for an editable draft)`;
  const [stats, pairs] = await Promise.all([
    fetchStats(assignment.id),
    state.api.all(EP.assignmentPairs(state.venue, assignment.id)),
  ]);
  state.currentPairs = pairs;
  renderAssignmentStats(stats, assignment, summaryHost, $("#load-histogram"), $("#paper-score-chart"));
  const unassigned = stats.unassigned_reviewers ?? [];
  $("#unassigned-reviewers").textContent = unassigned.length
    ? `${unassigned.length} reviewer${unassigned.length === 1 ? " has" : "s have"} no paper: ${unassigned.slice(0, 20).join(", ")}${unassigned.length > 20 ? "…" : ""}`
    : "Every reviewer has at least one paper.";
  renderPairs();
  renderPins();
  renderLoads(assignment);
}

/** Statistics of an assignment with every page of its per-paper rows. */
async function fetchStats(assignmentId) {
  const pageSize = 1000;
  const first = await state.api.get(EP.assignmentStats(state.venue, assignmentId), { limit: pageSize, offset: 0 });
  const rows = [...first.papers.items];
  for (let offset = pageSize; offset < first.papers.total; offset += pageSize) {
    const page = await state.api.get(EP.assignmentStats(state.venue, assignmentId), { limit: pageSize, offset });
    rows.push(...page.papers.items);
  }
  return { ...first, paperRows: rows };
}

function paperRows(stats) {
  return stats.paperRows ?? stats.papers?.items ?? [];
}

/** Common axes for several assignments' charts: max load and per-paper score range. */
function chartRanges(statsList) {
  const loads = statsList.flatMap((stats) => Object.keys(stats.load_histogram ?? {}).map(Number));
  const scores = statsList.flatMap((stats) => paperRows(stats).flatMap((r) => [r.min_score, r.mean_score]))
    .filter(Number.isFinite);
  return {
    loadMax: loads.length ? Math.max(...loads) : 0,
    scoreLo: scores.length ? Math.min(...scores) : 0,
    scoreHi: scores.length ? Math.max(...scores) : 1,
  };
}

function renderAssignmentStats(stats, assignment, summaryHost, loadHost, scoreHost, cls, ranges = chartRanges([stats])) {
  const summary = { ...(assignment.summary ?? {}), ...(stats.summary ?? {}) };
  const shown = Object.entries(summary).filter(([, v]) => typeof v === "number").slice(0, 10);
  summaryHost.replaceChildren(...shown.map(([k, v]) => stat(k.replaceAll("_", " "), niceNumber(v))),
    stat("papers below demand", stats.papers_below_demand ?? 0));
  // every load from 0 to the maximum, so gaps in the distribution show as empty bars
  const loads = Array.from({ length: ranges.loadMax + 1 }, (_, load) => [load, stats.load_histogram?.[String(load)] ?? 0]);
  barChart(loadHost, loads.map(([k]) => String(k)), [{ name: "reviewers", values: loads.map(([, v]) => v), cls }],
    { title: `Reviewer load histogram of assignment ${assignment.id}`, xLabel: "papers assigned", yLabel: "reviewers" });
  const rows = paperRows(stats);
  const mins = rows.map((r) => r.min_score).filter(Number.isFinite);
  const means = rows.map((r) => r.mean_score).filter(Number.isFinite);
  const minH = histogram(mins, 15, ranges.scoreLo, ranges.scoreHi);
  const meanH = histogram(means, 15, ranges.scoreLo, ranges.scoreHi);
  barChart(scoreHost, edgeLabels(minH.edges), [
    { name: "min score of paper", values: minH.counts },
    { name: "mean score of paper", values: meanH.counts, cls: "b" },
  ], { title: `Distribution of per-paper minimum and mean assigned score, assignment ${assignment.id}`, xLabel: "score", yLabel: "papers" });
}

/** Every reviewer with their load and mean assigned score in this assignment, busiest first. */
function renderLoads(assignment) {
  const byReviewer = new Map(state.reviewers.map((r) => [r.id, { reviewer: r, scores: [] }]));
  for (const pair of state.currentPairs ?? []) {
    if (!byReviewer.has(pair.reviewer_id)) byReviewer.set(pair.reviewer_id, { reviewer: { id: pair.reviewer_id }, scores: [] });
    byReviewer.get(pair.reviewer_id).scores.push(pair.score);
  }
  const maxLoad = assignment.parameters?.custom_max_load ?? {};
  const rows = [...byReviewer.values()].map(({ reviewer, scores }) => ({
    id: reviewer.id, name: reviewer.name ?? "", load: scores.length,
    max: maxLoad[reviewer.id] ?? assignment.parameters?.max_load,
    mean: scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : NaN,
  })).sort((a, b) => b.load - a.load || a.id.localeCompare(b.id));
  $("#loads-table").replaceChildren(table([
    { label: "Reviewer", key: "id" }, { label: "Name", key: "name" },
    { label: "Load", num: true, render: (r) => (r.max != null && r.load > r.max
      ? h("span", { class: "over" }, `${r.load} / ${r.max} (over the limit)`)
      : `${r.load}${r.max != null ? " / " + r.max : ""}`) },
    { label: "Mean score", num: true, render: (r) => niceNumber(r.mean) },
    { label: "", render: (r) => h("button", { type: "button", class: "small-btn", "aria-label": `Inspect reviewer ${r.id}`, onclick: (e) => {
      $("#reviewer-select").value = r.id;
      selectTab("tab-inspect");
      busy(e.currentTarget, null, () => showReviewer(r.id), "Loading the reviewer");
    } }, "Inspect") },
  ], rows, { "data-testid": "loads" }));
}

function renderPairs() {
  const query = ($("#pairs-query").value ?? "").trim().toLowerCase();
  const pairs = (state.currentPairs ?? []).filter((p) => !query || p.paper_id.toLowerCase().includes(query) || p.reviewer_id.toLowerCase().includes(query));
  // only drafts can be edited (the service answers 409 otherwise); deployed ones are re-solved
  const canEdit = currentAssignment()?.state === "draft" && canWrite();
  $("#pairs-table").replaceChildren(
    h("p", { class: "muted" }, `${pairs.length} pairs${query ? " matching " + query : ""} (first 300 shown)`),
    table([
      { label: "Paper", render: (p) => paperCell(p.paper_id, 45) },
      { label: "Reviewer", key: "reviewer_id" },
      { label: "Score", num: true, render: (p) => niceNumber(p.score) },
      { label: "Pinned", render: (p) => (p.pinned ? h("span", { class: "tag pinned" }, "pinned") : "") },
      { label: "Actions", render: (p) => h("span", {},
        !p.pinned && canEdit ? h("button", { type: "button", class: "small-btn", "aria-label": `Pin ${p.reviewer_id} to ${p.paper_id}`, onclick: (e) => editPair("pin", p.paper_id, p.reviewer_id, e.currentTarget) }, "Pin") : null, " ",
        canEdit ? h("button", { type: "button", class: "small-btn danger-btn", "aria-label": `Forbid ${p.reviewer_id} for ${p.paper_id}`, onclick: (e) => editPair("forbid", p.paper_id, p.reviewer_id, e.currentTarget) }, "Forbid") : null) },
    ], pairs.slice(0, 300), { "data-testid": "pairs" }));
}

function renderPins() {
  const assignment = currentAssignment();
  const pins = (state.currentPairs ?? []).filter((p) => p.pinned);
  const editable = assignment?.state === "draft" && canWrite();
  $("#pins-list").replaceChildren(pins.length ? h("div", {}, h("h4", {}, `Pinned pairs (${pins.length}) — kept by every re-solve`),
    table([
      { label: "Paper", key: "paper_id" }, { label: "Reviewer", key: "reviewer_id" },
      { label: "", render: (p) => (editable ? h("button", { type: "button", class: "small-btn", "aria-label": `Unpin ${p.reviewer_id} from ${p.paper_id}`, onclick: (e) => busy(e.currentTarget, $("#assignment-status"), async () => {
        await state.api.post(EP.unpin(state.venue, assignment.id), { paper_id: p.paper_id, reviewer_id: p.reviewer_id });
        say(`Unpinned ${p.reviewer_id} from ${p.paper_id}.`);
        await loadAssignment();
      }, "Unpinning") }, "Unpin") : "") },
    ], pins, { "data-testid": "pins" })) : h("p", { class: "muted" }, "No pinned pairs in this assignment."));
}

/** A pin the service refused because it would overfill the draft (409 naming the limits,
 * which mentions force=true): offer to pin anyway next to the message. */
function offerForcedPin(error, paperId, reviewerId) {
  if (!(error instanceof ApiError) || error.status !== 409 || !error.message.includes("force=true")) return;
  const box = $("#assignment-status");
  box.append(h("p", { class: "force-offer" },
    h("button", { type: "button", "data-testid": "force-pin",
      onclick: (event) => editPair("pin", paperId, reviewerId, event.currentTarget, true) }, "Pin anyway"),
    " ", h("span", { class: "muted" }, "The pair is added above the limit; later re-solves keep it as a forced pair.")));
}

async function editPair(action, paperId, reviewerId, button, force = false) {
  const assignment = currentAssignment();
  let refused = null;
  await busy(button, $("#assignment-status"), async () => {
    if (!assignment) throw new UserError("No assignment selected: solve one under Compute first.");
    if (action === "pin") {
      try {
        await state.api.post(EP.pin(state.venue, assignment.id), { paper_id: paperId, reviewer_id: reviewerId, force });
      } catch (error) {
        refused = error;
        throw error;
      }
      say(`Pinned ${reviewerId} to ${paperId}${force ? " above the limit" : ""}: kept in this draft and in every re-solve.`);
    } else {
      await state.api.post(EP.forbid(state.venue, assignment.id), { paper_id: paperId, reviewer_id: reviewerId });
      say(`Forbade ${reviewerId} for ${paperId}: removed here and never assigned by a re-solve.`);
    }
    await refreshAssignments();
  }, action === "pin" ? "Pinning the pair" : "Forbidding the pair");
  if (refused) offerForcedPin(refused, paperId, reviewerId);
}

function setupAssignment() {
  $("#assignment-select").addEventListener("change", () => loadAssignment().catch((e) => globalError(e, "Loading the assignment")));
  $("#pairs-filter").addEventListener("submit", (event) => { event.preventDefault(); renderPairs(); });
  $("#edit-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const values = formValues(event.currentTarget);
    editPair(event.submitter?.value ?? "pin", values.paper_id.trim(), values.reviewer_id.trim(), event.submitter);
  });
  $("#swap-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const values = formValues(event.currentTarget);
    const assignment = currentAssignment();
    busy(event.submitter, $("#assignment-status"), async () => {
      if (!assignment) throw new UserError("No assignment selected.");
      await state.api.post(EP.swap(state.venue, assignment.id), {
        paper_id: values.paper_id.trim(), remove_reviewer_id: values.remove_reviewer_id.trim(),
        add_reviewer_id: values.add_reviewer_id.trim(),
      });
      say(`Replaced ${values.remove_reviewer_id} by ${values.add_reviewer_id} on ${values.paper_id}.`);
      await loadAssignment();
    }, "Swapping reviewers");
  });
  $("#resolve-button").addEventListener("click", (event) => {
    const assignment = currentAssignment();
    busy(event.currentTarget, $("#assignment-status"), async () => {
      if (!assignment) throw new UserError("No assignment selected.");
      // a new solve with the same parameters on the latest scores; pins are forced and
      // forbidden pairs excluded by the service in every solve
      const job = await state.api.post(EP.startAssignment(state.venue), assignment.parameters);
      say(`Re-solve job ${job.id} started with the parameters of assignment ${assignment.id} (pins kept).`);
      trackJob(job);
    }, "Re-solving");
  });
  $("#deploy-button").addEventListener("click", (event) => {
    const assignment = currentAssignment();
    busy(event.currentTarget, $("#assignment-status"), async () => {
      if (!assignment) throw new UserError("No assignment selected.");
      // the confirmation names the run and the version on screen; the service refuses (409)
      // if it changed since, or if it breaks a hard constraint the venue has now
      await state.api.post(EP.deploy(state.venue, assignment.id), { assignment_id: assignment.id, version: assignment.version });
      say(`Assignment ${assignment.id} (version ${assignment.version}) is live: viewers now see it.`);
      await refreshAssignments();
      await loadAssignment();
    }, "Deploying");
  });
  for (const format of ["csv", "json"]) {
    $(`#export-${format}`).addEventListener("click", (event) => {
      const assignment = currentAssignment();
      busy(event.currentTarget, $("#assignment-status"), async () => {
        if (!assignment) throw new UserError("No assignment selected.");
        const response = await state.api.download(EP.exportAssignment(state.venue, assignment.id), { format });
        const blob = await response.blob();
        const url = URL.createObjectURL(blob);
        const link = h("a", { href: url, download: `${state.venue}-assignment-${assignment.id}.${format}` });
        document.body.append(link);
        link.click();
        link.remove();
        setTimeout(() => URL.revokeObjectURL(url), 10000);
        say(`Exported assignment ${assignment.id} as ${format.toUpperCase()} (${blob.size} bytes).`);
      }, `Exporting ${format.toUpperCase()}`);
    });
  }
}

// ---- compare -------------------------------------------------------------------------------
function fillCompareSelects() {
  const options = () => state.assignments.map((a) => h("option", { value: a.id }, runLabel(a)));
  const a = $("#compare-a"), b = $("#compare-b");
  const [va, vb] = [a.value, b.value];
  a.replaceChildren(...options());
  b.replaceChildren(...options());
  if (va) a.value = va;
  if (vb) b.value = vb; else if (state.assignments.length > 1) b.value = String(state.assignments[1].id);
  return Promise.resolve();
}

async function compareRuns(idA, idB) {
  const host = $("#compare-result");
  const runs = [idA, idB].map((id) => state.assignments.find((a) => a.id === id));
  const [statsA, statsB, pairsA, pairsB] = await Promise.all([
    fetchStats(idA),
    fetchStats(idB),
    state.api.all(EP.assignmentPairs(state.venue, idA)),
    state.api.all(EP.assignmentPairs(state.venue, idB)),
  ]);
  const keysA = new Set(pairsA.map((p) => `${p.paper_id}\u0000${p.reviewer_id}`));
  const shared = pairsB.filter((p) => keysA.has(`${p.paper_id}\u0000${p.reviewer_id}`)).length;
  const ranges = chartRanges([statsA, statsB]);
  host.replaceChildren();
  host.append(h("section", { class: "card wide", "data-testid": "compare-table" },
    h("h3", {}, "Side by side"),
    h("p", { "data-testid": "compare-overlap" },
      `${shared} of ${pairsA.length} pairs of run #${idA} are also in run #${idB} (${pairsB.length} pairs).`),
    compareTable(runs, [statsA, statsB])));
  const columns = [[runs[0], statsA, ""], [runs[1], statsB, "b"]].map(([run, stats, cls]) => {
    const summary = h("div", { class: "summary-row" });
    const load = h("div", { class: "chart" });
    const score = h("div", { class: "chart" });
    const card = h("section", { class: "card", "data-testid": "compare-column" },
      h("h3", {}, runLabel(run)),
      summary, h("h4", {}, "Reviewer load"), load, h("h4", {}, "Per-paper min and mean score"), score);
    host.append(card);
    renderAssignmentStats(stats, run, summary, load, score, cls, ranges);
    return card;
  });
  return columns;
}

const COMPARED = [
  ["total_score", "total score"], ["mean_score", "mean assigned score"],
  ["min_score", "lowest assigned score"], ["min_paper_mean_score", "worst paper's mean score"],
  ["load_min", "smallest load"], ["load_max", "largest load"],
];

function compareTable(runs, statsList) {
  const value = (stats, key) => stats.summary?.[key];
  const rows = COMPARED.map(([key, label]) => ({ key, label }));
  rows.push({ key: "papers_below_demand", label: "papers below demand" });
  rows.push({ key: "unassigned", label: "reviewers without a paper" });
  const get = (stats, key) => (key === "papers_below_demand" ? stats.papers_below_demand
    : key === "unassigned" ? (stats.unassigned_reviewers ?? []).length : value(stats, key));
  return table([
    { label: "Measure", key: "label" },
    { label: `Run #${runs[0].id}`, num: true, render: (r) => niceNumber(get(statsList[0], r.key)) },
    { label: `Run #${runs[1].id}`, num: true, render: (r) => niceNumber(get(statsList[1], r.key)) },
    { label: "B − A", num: true, render: (r) => {
      const a = get(statsList[0], r.key), b = get(statsList[1], r.key);
      return Number.isFinite(a) && Number.isFinite(b) ? niceNumber(b - a) : "–";
    } },
  ], rows, { "data-testid": "compare-metrics" });
}

function setupCompare() {
  $("#compare-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const a = Number($("#compare-a").value), b = Number($("#compare-b").value);
    $("#compare-result").replaceChildren();
    busy(event.submitter, null, async () => {
      if (!a || !b) throw new UserError("Choose two assignment runs.");
      await compareRuns(a, b);
    }, "Comparing runs");
  });
}

// ---- audit ---------------------------------------------------------------------------------
async function loadAudit() {
  const page = await state.api.get(EP.audit(state.venue), { limit: 200 });
  const entries = Array.isArray(page) ? page : page.items;
  $("#audit-table").replaceChildren(table([
    { label: "When", render: (e) => new Date(e.at).toLocaleString() },
    { label: "Who", key: "actor" }, { label: "Action", key: "action" },
    { label: "Detail", render: (e) => JSON.stringify(e.detail) },
  ], entries, { "data-testid": "audit" }));
}

// ---- boot ----------------------------------------------------------------------------------
function setupSession() {
  $("#signin-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const token = $("#token-input").value.trim();
    const box = $("#signin-error");
    await busy(event.submitter, box, () => signIn(token), "Sign-in failed");
  });
  $("#sign-out").addEventListener("click", () => {
    sessionStorage.removeItem("recommender.token");
    sessionStorage.removeItem("recommender.venue");
    state.polling.forEach((timer) => clearInterval(timer));
    state.polling.clear();
    state.venue = null;
    state.me = null;
    delete document.body.dataset.role;
    state.api = new Api("");
    $("#token-input").value = "";
    showView("signin-view");
    $("#token-input").focus();
  });
  $("#venue-select").addEventListener("change", (event) => openVenue(event.target.value).catch((e) => globalError(e, "Opening venue")));
  $("#venue-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const values = formValues(form);
    await busy(event.submitter, form.querySelector(".error-box"), async () => {
      const venue = await state.api.post(EP.venues(), { id: values.id.trim(), name: values.name.trim() });
      state.venues.push(venue);
      renderVenueChoices();
      say(`Venue ${venue.id} created.`);
      await openVenue(venue.id);
    }, "Could not create the venue");
  });
}

function boot() {
  setupTabs();
  setupSession();
  setupUploads();
  setupJobForms();
  setupInspect();
  setupAssignment();
  setupCompare();
  const token = sessionStorage.getItem("recommender.token");
  if (token) {
    signIn(token).catch((error) => {
      showView("signin-view");
      showError($("#signin-error"), error, "Stored token no longer works");
    });
  } else {
    showView("signin-view");
  }
}

boot();
