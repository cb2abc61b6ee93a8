// The Statistics tab: what chairs ask about a run — the score histogram of its pairs, the
// papers below demand (listed), reviewers by load against quota with inline quota editing,
// bids and the assignments by bid value, and the conflicts of interest (dismissed, declared,
// and the detection policy: views/conflicts.js).
import { $, h, fill } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { niceNumber, plural, runName } from "../core/format.js";
import { learnNames, searchPapers, searchReviewers } from "../core/names.js";
import { canWrite, currentRun, emit, on, state } from "../core/state.js";
import { barChart } from "../components/charts.js";
import { paperCell, reviewerCell } from "../components/cells.js";
import { busy, errorBox, say, UserError } from "../components/feedback.js";
import { Picker } from "../components/picker.js";
import { meter } from "../components/progress.js";
import { PagedTable, simpleTable } from "../components/table.js";
import { conflictPolicyCard, dismissButton, DISMISSIBLE, managedConflictsCard } from "./conflicts.js";
import { registerView } from "./tabs.js";

/** "-load" → {sort: "load", descending: true}. */
function sortQuery(sort) {
  if (!sort) return {};
  return { sort: sort.replace(/^-/, ""), descending: sort.startsWith("-") };
}

function card(id, title, ...children) {
  return h("section", { class: "card", "aria-labelledby": id, "data-testid": id }, h("h3", { id }, title), children);
}

// ---- score histogram ----------------------------------------------------------------------

async function histogramCard(run) {
  const host = h("div", { class: "chart", "data-testid": "pair-score-histogram" });
  const facts = h("div", { class: "summary-row" });
  const section = card("hist-title", "Scores of the assigned pairs", facts, host);
  const hist = await state.api.get(EP.runHistogram(state.venue, run.id), { bins: 20 });
  const stat = (label, value) => h("div", { class: "stat" }, h("b", {}, value), h("span", {}, label));
  fill(facts, stat("pairs", hist.count), stat("lowest", niceNumber(hist.min)), stat("mean", niceNumber(hist.mean)), stat("highest", niceNumber(hist.max)));
  const labels = (hist.edges ?? []).slice(0, -1).map((e) => niceNumber(e));
  barChart(host, labels, [{ name: "assigned pairs", values: hist.counts ?? [] }],
    { title: `Histogram of the scores of the ${hist.count} assigned pairs of ${runName(run)}`, xLabel: "score of the pair", yLabel: "pairs" });
  return section;
}

// ---- papers below demand ------------------------------------------------------------------

function papersCard(run) {
  let belowOnly = true;
  const table = new PagedTable({
    label: "Papers below demand", noun: "papers", testid: "papers-below-demand", pageSize: 25, sort: "-missing",
    empty: "Every paper has the reviewers it needs.",
    columns: [
      { label: "Paper", rowHeader: true, sort: "title", render: (p) => paperCell(p.paper_id, { title: p.paper_title }) },
      { label: "Assigned", num: true, sort: "assigned", render: (p) => `${p.assigned} of ${p.demand}` },
      { label: "Missing", num: true, sort: "missing", render: (p) => h("span", { class: p.missing > 0 ? "over" : "" }, String(p.missing)) },
      { label: "Lowest score", num: true, sort: "min_score", render: (p) => niceNumber(p.min_score) },
      { label: "Mean score", num: true, sort: "mean_score", render: (p) => niceNumber(p.mean_score) },
    ],
    load: async ({ offset, limit, sort, signal }) => learnPage(await state.api.get(EP.runPapers(state.venue, run.id),
      { below_demand: belowOnly, offset, limit, ...sortQuery(sort) }, { signal })),
  });
  const toggle = h("input", { type: "checkbox", id: "below-only", checked: true, onchange: () => {
    belowOnly = toggle.checked;
    table.label = belowOnly ? "Papers below demand" : "Papers";
    table.restart();
  } });
  const section = card("below-title", "Papers below demand",
    h("label", { class: "check", for: "below-only" }, toggle, "Only papers below their demand"), table.element);
  table.reload();
  return section;
}

// ---- reviewers by load and quota ----------------------------------------------------------

function quotaEditor(run, r, table) {
  const id = `quota-${r.reviewer_id.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const name = r.reviewer_name || r.reviewer_id;
  const input = h("input", {
    id, type: "text", inputmode: "numeric", class: "quota-input", value: r.stored_max_load ?? "",
    placeholder: String(r.max_load ?? ""), "aria-label": `Quota of ${name}`, size: 4,
  });
  const save = async (button) => busy(button, null, async () => {
    const text = input.value.trim();
    if (text === "") {
      if (r.stored_max_load == null) return;
      await state.api.delete(EP.maxLoad(state.venue, r.reviewer_id));
      say(`${name}: stored quota removed; solves use the solve form's max papers.`);
    } else {
      const value = Number(text);
      if (!Number.isInteger(value) || value < 0) throw new UserError(`The quota of ${name} must be a whole number ≥ 0, not “${text}”.`);
      await state.api.put(EP.maxLoad(state.venue, r.reviewer_id), { max_load: value });
      say(`${name}: quota ${value} stored; the next solve or re-solve uses it.`);
    }
    emit("limits");
    await table.reload();
  }, `Saving the quota of ${name}`);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") { event.preventDefault(); save(input.nextElementSibling); }
  });
  return h("span", { class: "quota-edit" }, input,
    h("button", { type: "button", class: "small-btn secondary", "aria-label": `Save the quota of ${name}`, onclick: (event) => save(event.currentTarget) }, "Save"));
}

function loadsCard(run) {
  let filter = "all";
  const writable = canWrite();
  const columns = [
    { label: "Reviewer", rowHeader: true, sort: "name", render: (r) => reviewerCell(r.reviewer_id, { name: r.reviewer_name }) },
    { label: "Load", num: true, sort: "load", render: (r) => h("span", { class: r.max_load != null && r.load > r.max_load ? "over" : "" },
      meter(r.load, r.max_load ?? r.load, `load ${r.load} of ${r.max_load ?? "?"}`), ` ${r.load}`) },
    { label: "Quota in this run", num: true, sort: "max_load", render: (r) => h("span", { "data-testid": "run-quota" },
      `${r.min_load ? `${r.min_load}–` : ""}${r.max_load ?? "–"}`,
      r.draft_max_load != null ? h("span", { class: "tag", title: "set for this run only (a re-assignment's withdrawal); other runs keep the venue's quota" }, " this run only") : null) },
    { label: "Free", num: true, sort: "slack", render: (r) => niceNumber(r.slack) },
    { label: "Mean score", num: true, sort: "mean_score", render: (r) => niceNumber(r.mean_score) },
  ];
  if (writable) columns.push({ label: "Venue quota (every solve)", render: (r) => quotaEditor(run, r, table) });
  const table = new PagedTable({
    label: "Reviewers by load", noun: "reviewers", testid: "reviewer-loads", pageSize: 25, sort: "-load", columns,
    load: async ({ offset, limit, sort, signal }) => learnPage(await state.api.get(EP.runReviewers(state.venue, run.id),
      { filter, offset, limit, ...sortQuery(sort) }, { signal })),
  });
  const select = h("select", { id: "load-filter", onchange: () => { filter = select.value; table.restart(); } },
    [["all", "every reviewer"], ["over", "over their quota"], ["full", "at their quota"], ["under", "under their minimum"], ["unassigned", "without a paper"]]
      .map(([value, label]) => h("option", { value }, label)));
  const section = card("loads-title", "Reviewers by load and quota",
    writable ? h("p", { class: "hint" }, "A venue quota is a reviewer's max papers in every later solve and re-solve (OpenReview's custom max papers); empty means the solve form's max papers. A quota marked “this run only” was set by a re-assignment for this run (promote it under Changes to make it the venue's). Type a number and press Enter or Save.") : null,
    h("div", { class: "inline-form" }, h("div", { class: "field" }, h("label", { for: "load-filter" }, "Show"), select)),
    table.element);
  table.reload();
  return section;
}

// ---- bids ---------------------------------------------------------------------------------

async function bidsCard(run) {
  const [overview, assigned] = await Promise.all([
    state.api.get(EP.bidsOverview(state.venue)),
    state.api.get(EP.runBids(state.venue, run.id)),
  ]);
  const byLabel = new Map((assigned.by_label ?? []).map((b) => [b.label, b]));
  const labels = [...new Set([...(overview.by_label ?? []).map((b) => b.label), ...byLabel.keys()])];
  const rows = labels.map((label) => ({
    label,
    bids: (overview.by_label ?? []).find((b) => b.label === label)?.count ?? 0,
    assigned: byLabel.get(label)?.assigned ?? 0,
  }));
  rows.push({ label: "no bid", bids: null, assigned: assigned.no_bid ?? 0 });
  const chart = h("div", { class: "chart", "data-testid": "bids-chart" });
  const section = card("bids-title", "Bids and assignments by bid value",
    h("p", { class: "muted" }, overview.total
      ? `${plural(overview.total, "bid")} from ${plural(overview.reviewers ?? 0, "reviewer")} on ${plural(overview.papers ?? 0, "paper")}; ${plural(assigned.pairs ?? 0, "assigned pair")} in ${runName(run)}.`
      : "No bids uploaded (Data tab)."),
    simpleTable([
      { label: "Bid", key: "label" },
      { label: "Bids", num: true, render: (r) => r.bids ?? "–" },
      { label: `Assigned in ${runName(run)}`, num: true, key: "assigned" },
      { label: "Share of the run's pairs", num: true, render: (r) => assigned.pairs ? `${Math.round((100 * r.assigned) / assigned.pairs)}%` : "–" },
    ], rows, { "aria-label": "Assignments by bid value", "data-testid": "bids-by-value" }),
    chart);
  const bidRows = rows.filter((r) => r.bids != null);
  if (bidRows.length) {
    barChart(chart, bidRows.map((r) => r.label), [
      { name: "bids", values: bidRows.map((r) => r.bids) },
      { name: `assigned in ${runName(run)}`, values: bidRows.map((r) => r.assigned), cls: "b" },
    ],
      { title: `Bids and assigned pairs of ${runName(run)} by bid value`, xLabel: "bid", yLabel: "pairs" });
  }
  return section;
}

// ---- conflicts ----------------------------------------------------------------------------

/** The conflicts table (dismiss a detected, uploaded or declared one), the detection policy
 * and the declared and dismissed conflicts, reloading one another on change. */
function conflictCards() {
  let list = null;
  let managed = null;
  const changed = () => { list?.table.reload(); managed?.reload(); };
  list = conflictsCard(changed);
  managed = managedConflictsCard(changed);
  return [conflictPolicyCard(changed), list, managed];
}

function conflictsCard(changed) {
  const filter = { source: "", paper: null, reviewer: null };
  const table = new PagedTable({
    label: "Conflicts of interest", noun: "conflicts", testid: "conflicts", pageSize: 25,
    empty: "No conflicts recorded.",
    columns: [
      { label: "Paper", render: (c) => paperCell(c.paper_id, { title: c.paper_title, max: 55 }) },
      { label: "Reviewer", render: (c) => reviewerCell(c.reviewer_id, { name: c.reviewer_name }) },
      { label: "Source", render: (c) => h("span", { class: "tag conflict" }, c.source) },
      { label: "Reason", render: (c) => c.reason || "–" },
      { label: "", render: (c) => (DISMISSIBLE.has(c.source) ? dismissButton(c, changed) : null) },
    ],
    load: async ({ offset, limit, signal }) => learnPage(await state.api.get(EP.conflicts(state.venue),
      { source: filter.source, paper_id: filter.paper, reviewer_id: filter.reviewer, offset, limit }, { signal })),
  });
  const source = h("select", { id: "conflict-source", onchange: () => { filter.source = source.value; table.restart(); } },
    [["", "every source"], ["detected", "detected (co-authors, e-mail, affiliation)"], ["uploaded", "uploaded"], ["declared", "declared by a chair"], ["bid", "bids (Not Willing, Conflict)"], ["forbid", "chairs' forbids"]]
      .map(([value, label]) => h("option", { value }, label)));
  const paper = new Picker({ label: "Paper", placeholder: "any paper", search: searchPapers,
    onSelect: (item) => { filter.paper = item.id; table.restart(); } });
  const reviewer = new Picker({ label: "Reviewer", placeholder: "any reviewer", search: searchReviewers,
    onSelect: (item) => { filter.reviewer = item.id; table.restart(); } });
  const section = card("conflicts-title", "Conflicts of interest",
    h("div", { class: "inline-form filter-form" }, h("div", { class: "field" }, h("label", { for: "conflict-source" }, "Source"), source),
      paper.element, reviewer.element,
      h("button", { type: "button", class: "secondary", onclick: () => {
        Object.assign(filter, { source: "", paper: null, reviewer: null });
        source.value = "";
        paper.clear();
        reviewer.clear();
        table.restart();
      } }, "Show all conflicts")),
    table.element);
  table.reload();
  section.table = table;
  return section;
}

function learnPage(page) {
  learnNames(page.items);
  return page;
}

// ---- the view -----------------------------------------------------------------------------

async function show() {
  const host = $("#stats-view");
  const run = currentRun();
  const chair = canWrite();
  const status = errorBox();
  if (!run) {
    fill(host, chair ? conflictCards() : h("p", { class: "muted card" }, "No assignment is published yet."));
    return;
  }
  fill(host, h("p", { class: "muted" }, `Statistics of ${runName(run)} (${run.state}).`), status,
    h("div", { class: "grid2" }, h("div", { id: "stats-hist" }), h("div", { id: "stats-bids" })),
    papersCard(run), loadsCard(run), chair ? conflictCards() : null);
  const [hist, bids] = await Promise.allSettled([histogramCard(run), chair ? bidsCard(run) : Promise.resolve(null)]);
  if (currentRun()?.id !== run.id) return;
  for (const [slot, result, what] of [["#stats-hist", hist, "the score histogram"], ["#stats-bids", bids, "the bids"]]) {
    if (result.status === "fulfilled") { if (result.value) $(slot)?.replaceChildren(result.value); }
    else $(slot)?.replaceChildren(h("div", { class: "error-box", role: "alert" }, `Loading ${what}: ${result.reason?.message ?? result.reason}`));
  }
}

export function setupStats() {
  registerView("tab-stats", show);
  on("run-changed", () => { if (state.tab === "tab-stats") show(); });
}
