// The Assignment tab: the selected run (what it is, where it comes from, its parameters and
// state, its name and note), its statistics, its changes (pins, forbids, undo, bulk upload)
// and every assigned pair, paginated and filterable by paper and reviewer.
import { $, h, fill, saveBlob } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { dateTime, lineageText, niceNumber, runName, runParamsText } from "../core/format.js";
import { learnNames, searchPapers, searchReviewers } from "../core/names.js";
import { canWrite, currentRun, on, state, updateRun } from "../core/state.js";
import { edgeLabels, histogram } from "../lib/chartmath.js";
import { barChart } from "../components/charts.js";
import { chips, paperCell, reviewerCell, stateBadge } from "../components/cells.js";
import { busy, errorBox, say } from "../components/feedback.js";
import { Picker } from "../components/picker.js";
import { PagedTable } from "../components/table.js";
import { registerView } from "./tabs.js";
import { deployDialog } from "./deploy.js";
import { changesCard, pairActions } from "./edits.js";
import { follow } from "./jobs.js";
import { randomnessPanel } from "./randomness.js";
import { reassignCard, reassignmentCard } from "./reassign.js";

const view = {
  pairs: null, // PagedTable of the run's pairs
  filter: { paper: null, reviewer: null },
  status: null, // error panel of the view
};

function stat(label, value, attrs = {}) {
  return h("div", { class: "stat", ...attrs }, h("b", {}, value), h("span", {}, label));
}

/** Statistics of a run with every paper's lowest and mean score (one request). */
export async function fetchStats(runId) {
  const stats = await state.api.get(EP.assignmentStats(state.venue, runId), { limit: 1, offset: 0 });
  const { min = [], mean = [] } = stats.paper_scores ?? {};
  return { ...stats, paperRows: min.map((low, i) => ({ min_score: low, mean_score: mean[i] })) };
}

/** Common axes for several runs' charts: max load and per-paper score range. */
export function chartRanges(statsList) {
  const loads = statsList.flatMap((stats) => Object.keys(stats.load_histogram ?? {}).map(Number));
  const scores = statsList.flatMap((stats) => (stats.paperRows ?? []).flatMap((r) => [r.min_score, r.mean_score]))
    .filter(Number.isFinite);
  return {
    loadMax: loads.length ? Math.max(...loads) : 0,
    scoreLo: scores.length ? Math.min(...scores) : 0,
    scoreHi: scores.length ? Math.max(...scores) : 1,
  };
}

/** The load histogram and per-paper score histogram of a run into two hosts. */
export function runCharts(stats, run, loadHost, scoreHost, cls = "", ranges = chartRanges([stats])) {
  const loads = Array.from({ length: ranges.loadMax + 1 }, (_, load) => [load, stats.load_histogram?.[String(load)] ?? 0]);
  barChart(loadHost, loads.map(([k]) => String(k)), [{ name: "reviewers", values: loads.map(([, v]) => v), cls }],
    { title: `Reviewer load histogram of ${runName(run)}`, xLabel: "papers assigned", yLabel: "reviewers" });
  const rows = stats.paperRows ?? [];
  const minH = histogram(rows.map((r) => r.min_score), 15, ranges.scoreLo, ranges.scoreHi);
  const meanH = histogram(rows.map((r) => r.mean_score), 15, ranges.scoreLo, ranges.scoreHi);
  barChart(scoreHost, edgeLabels(minH.edges), [
    { name: "lowest score of the paper", values: minH.counts, cls },
    { name: "mean score of the paper", values: meanH.counts, cls: cls ? "d" : "b" },
  ], { title: `Per-paper lowest and mean assigned score, ${runName(run)}`, xLabel: "score", yLabel: "papers" });
}

/** The numbers of a run's summary as stat boxes. */
export function summaryStats(run, stats) {
  const s = { ...(run.summary ?? {}), ...(stats?.summary ?? {}) };
  const boxes = [
    stat("pairs", s.pairs ?? "–"),
    stat("total score", niceNumber(s.total_score ?? s.objective)),
    stat("mean score", niceNumber(s.mean_score)),
    stat("lowest pair score", niceNumber(s.min_score)),
    stat("worst paper's mean", niceNumber(s.min_paper_mean_score)),
    stat("loads", `${s.load_min ?? "–"}–${s.load_max ?? "–"}`),
    stat("papers below demand", stats?.papers_below_demand ?? "–", { "data-testid": "below-demand-count" }),
  ];
  if (typeof s.upper_bound === "number") boxes.push(stat("upper bound", niceNumber(s.upper_bound)));
  if (typeof s.gap === "number") boxes.push(stat("optimality gap", niceNumber(s.gap)));
  return boxes;
}

// ---- the run card -------------------------------------------------------------------------

function runCard(run) {
  const lineage = lineageText(run, state.runs);
  const writable = canWrite();
  const facts = [
    ["State", h("span", {}, stateBadge(run.state, { "data-testid": "assignment-state" }), ` version ${run.version}`)],
    // how a run was made is the chairs' business: a viewer sees what was published, and when
    writable ? ["Lineage", lineage || "a new solve"] : null,
    ["Parameters", runParamsText(run) || "–"],
    ["Created", `${dateTime(run.created_at)}${writable && run.job_id != null ? ` by job #${run.job_number ?? run.job_id}` : ""}`],
    run.deployed_at ? ["Published", `${dateTime(run.deployed_at)} by ${run.deployed_by || "?"}`] : null,
    run.superseded_at ? ["Superseded", dateTime(run.superseded_at)] : null,
    !writable && run.note ? ["Note", run.note] : null,
  ].filter(Boolean);
  const actions = h("div", { class: "toolbar run-actions" },
    writable && run.state !== "live" ? h("button", { type: "button", "data-testid": "deploy",
      onclick: (event) => busy(event.currentTarget, view.status, () => deployDialog(run), "Deploying") },
    run.state === "superseded" ? "Deploy again (roll back)" : "Deploy") : null,
    writable ? h("button", { type: "button", class: "secondary",
      onclick: (event) => busy(event.currentTarget, view.status, () => resolve(run), "Re-solving") }, "Re-solve (keeps pins)") : null,
    h("button", { type: "button", class: "secondary", onclick: (event) => busy(event.currentTarget, view.status, () => exportRun(run, "csv"), "Exporting CSV") }, "Export CSV"),
    h("button", { type: "button", class: "secondary", onclick: (event) => busy(event.currentTarget, view.status, () => exportRun(run, "json"), "Exporting JSON") }, "Export JSON"));
  return h("section", { class: "card run-card", "aria-labelledby": "run-title", "data-testid": "run-card" },
    h("h3", { id: "run-title" }, runName(run)),
    h("dl", { class: "facts" }, facts.map(([term, value]) => [h("dt", {}, term), h("dd", {}, value)])),
    writable ? nameForm(run) : null,
    actions);
}

/** Name and note of a run, editable by chairs in any state (no version bump). */
function nameForm(run) {
  const error = errorBox();
  const name = h("input", { id: "run-name", name: "name", maxlength: 200, value: run.name ?? "", placeholder: "e.g. fairness try" });
  const note = h("textarea", { id: "run-note", name: "note", rows: 2, maxlength: 5000, placeholder: "what this run is for" });
  note.value = run.note ?? "";
  return h("form", { class: "run-name-form", onsubmit: (event) => {
    event.preventDefault();
    busy(event.submitter, error, async () => {
      const updated = await state.api.patch(EP.assignment(state.venue, run.id), { name: name.value.trim(), note: note.value.trim() });
      updateRun(updated);
      say(`Saved the name and note of ${runName(updated)}.`);
    }, "Saving the name");
  } },
  h("div", { class: "field" }, h("label", { for: "run-name" }, "Run name"), name),
  h("div", { class: "field grow" }, h("label", { for: "run-note" }, "Note"), note),
  h("button", { type: "submit", class: "secondary" }, "Save name and note"), error);
}

/** A new solve with the run's parameters on the latest scores; pins are forced and forbidden
 * pairs excluded by the service in every solve. The new run is selected when it is done. */
async function resolve(run) {
  const job = await state.api.post(EP.resolve(state.venue, run.id), {});
  say(`Re-solve of ${runName(run)} started (job #${job.number ?? job.id}); pins kept. The new run opens when it is done.`);
  follow(job);
}

async function exportRun(run, format) {
  const response = await state.api.download(EP.exportAssignment(state.venue, run.id), { format });
  const blob = await response.blob();
  saveBlob(blob, `${state.venue}-assignment-${run.number ?? run.id}.${format}`);
  say(`Exported ${runName(run)} as ${format.toUpperCase()} (${blob.size} bytes).`);
}

// ---- the pairs table ----------------------------------------------------------------------

function pairsTable(run) {
  const editable = run.state === "draft" && canWrite();
  const columns = [
    { label: "Paper", render: (p) => paperCell(p.paper_id, { title: p.paper_title }) },
    { label: "Reviewer", render: (p) => reviewerCell(p.reviewer_id, { name: p.reviewer_name }) },
    { label: "Score", num: true, render: (p) => niceNumber(p.score) },
    { label: "Marks", render: (p) => chips({ pinned: p.pinned, withdrawn: p.withdrawn }) },
  ];
  if (editable) columns.push({ label: "Actions", render: (p) => pairActions(run, { ...p, assigned: true }) });
  return new PagedTable({
    label: "Assigned pairs", noun: "pairs", testid: "pairs", columns, pageSize: 50,
    load: async ({ offset, limit, signal }) => {
      const page = await state.api.page(EP.assignmentPairs(state.venue, run.id), {
        limit, offset, paper_id: view.filter.paper, reviewer_id: view.filter.reviewer,
      }, { signal });
      learnNames(page.items);
      return page;
    },
  });
}

function pairsCard(run) {
  view.pairs = pairsTable(run);
  const paperPicker = new Picker({
    label: "Only pairs of paper", placeholder: "any paper — type a title or id",
    search: searchPapers,
    onSelect: (item) => { view.filter.paper = item.id; view.pairs.restart(); },
  });
  const reviewerPicker = new Picker({
    label: "Only pairs of reviewer", placeholder: "any reviewer — type a name or id",
    search: searchReviewers,
    onSelect: (item) => { view.filter.reviewer = item.id; view.pairs.restart(); },
  });
  const clear = h("button", { type: "button", class: "secondary", onclick: () => {
    view.filter = { paper: null, reviewer: null };
    paperPicker.clear();
    reviewerPicker.clear();
    view.pairs.restart();
  } }, "Show all pairs");
  const form = h("form", { class: "inline-form filter-form", onsubmit: (event) => {
    event.preventDefault();
    view.filter = { paper: paperPicker.value || null, reviewer: reviewerPicker.value || null };
    view.pairs.restart();
  } }, paperPicker.element, reviewerPicker.element, h("button", { type: "submit" }, "Filter"), clear);
  return h("section", { class: "card", "aria-labelledby": "pairs-title" },
    h("h3", { id: "pairs-title" }, "Assigned pairs"), form, view.pairs.element);
}

// ---- the view -----------------------------------------------------------------------------

async function show() {
  const host = $("#assignment-view");
  const run = currentRun();
  view.status = errorBox({ id: "assignment-status", "data-testid": "assignment-status" });
  view.runId = run?.id ?? null;
  if (!run) {
    fill(host, h("section", { class: "card" }, h("p", { class: "muted", "data-testid": "assignment-summary" },
      state.me?.role === "viewer" ? "No assignment is published yet." : "No assignment yet: solve one under Compute.")));
    return;
  }
  view.card = runCard(run);
  view.summary = h("div", { class: "summary-row", "data-testid": "assignment-summary" }, summaryStats(run, null));
  view.loadHost = h("div", { class: "chart", "data-testid": "load-histogram" });
  view.scoreHost = h("div", { class: "chart", "data-testid": "paper-score-chart" });
  view.changes = canWrite() ? changesCard(run) : null;
  view.randomness = randomnessPanel(run);
  // a re-assignment draft shows what it changed; the live run offers re-assigning (chairs)
  view.reassignment = canWrite() && run.summary?.reassignment ? reassignmentCard(run) : null;
  const reassign = canWrite() && run.state === "live" ? reassignCard(run) : null;
  view.filter = { paper: null, reviewer: null };
  fill(host,
    view.card, view.status, view.summary, view.randomness.element, view.reassignment?.element, reassign,
    view.changes, pairsCard(run),
    h("div", { class: "grid2" },
      h("section", { class: "card", "aria-labelledby": "load-title" }, h("h3", { id: "load-title" }, "Reviewer load"), view.loadHost),
      h("section", { class: "card", "aria-labelledby": "ppscore-title" }, h("h3", { id: "ppscore-title" }, "Per-paper score (lowest and mean)"), view.scoreHost)));
  await Promise.all([refreshStats(run), view.pairs.reload(), view.randomness.load(), view.reassignment?.load()]);
}

async function refreshStats(run) {
  const stats = await fetchStats(run.id);
  if (currentRun()?.id !== run.id) return;
  fill(view.summary, summaryStats(run, stats));
  runCharts(stats, run, view.loadHost, view.scoreHost);
}

/** The shown run changed (an edit, an undo, a new name): update the view in place, so the
 * chair's place in the tables and the focus stay where they were. */
async function refresh() {
  const run = currentRun();
  if (!run || run.id !== view.runId || !view.card?.isConnected || (view.changes && view.changes.dataset.state !== run.state)) {
    await show();
    return;
  }
  const card = runCard(run);
  const hadFocus = view.card.contains(document.activeElement);
  view.card.replaceWith(card);
  view.card = card;
  if (hadFocus) card.querySelector("h3")?.setAttribute("tabindex", "-1");
  if (hadFocus) card.querySelector("h3")?.focus();
  await Promise.all([refreshStats(run), view.pairs.reload(), view.changes?.refresh(run), view.randomness.load(), view.reassignment?.load()]);
}

export function setupAssignment() {
  registerView("tab-assignment", show);
  on("run-changed", () => { if (state.tab === "tab-assignment") refresh(); });
}
