// The Compare runs tab: two runs pair by pair — the summary, every added and removed pair
// with its score, the papers and reviewers whose pairs changed, and both runs' charts.
import { $, h, fill } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { clip, niceNumber, plural, runLabel, runName, signed } from "../core/format.js";
import { learnNames } from "../core/names.js";
import { on, state } from "../core/state.js";
import { paperCell, reviewerCell } from "../components/cells.js";
import { busy, errorBox, UserError } from "../components/feedback.js";
import { PagedTable } from "../components/table.js";
import { chartRanges, fetchStats, runCharts } from "./assignment.js";
import { registerView } from "./tabs.js";

const view = { built: false, a: null, b: null, result: null, error: null };

function build() {
  const host = $("#compare-view");
  view.a = h("select", { id: "compare-a", name: "a" });
  view.b = h("select", { id: "compare-b", name: "b" });
  view.result = h("div", { id: "compare-result", "data-testid": "compare-result" });
  view.error = errorBox();
  const form = h("form", { class: "card inline-form", onsubmit: (event) => {
    event.preventDefault();
    busy(event.submitter, view.error, () => compare(Number(view.a.value), Number(view.b.value)), "Comparing runs");
  } },
  h("div", { class: "field" }, h("label", { for: "compare-a" }, "Run A (base)"), view.a),
  h("div", { class: "field" }, h("label", { for: "compare-b" }, "Run B"), view.b),
  h("button", { type: "submit" }, "Compare"),
  h("p", { class: "hint" }, "“Added” pairs are in B only, “removed” pairs in A only."));
  fill(host, form, view.error, view.result);
  view.built = true;
}

function fillSelects() {
  const runs = state.runs;
  const keep = [view.a.value, view.b.value];
  fill(view.a, runs.map((run) => h("option", { value: run.id }, runLabel(run))));
  fill(view.b, runs.map((run) => h("option", { value: run.id }, runLabel(run))));
  // by default: the selected run against the one before it (its parent when it has one)
  const selected = state.runs.find((r) => r.id === state.runId) ?? runs[0];
  const base = selected?.derived_from?.assignment_id ?? runs[runs.indexOf(selected) + 1]?.id ?? selected?.id;
  view.a.value = keep[0] && runs.some((r) => String(r.id) === keep[0]) ? keep[0] : String(base ?? "");
  view.b.value = keep[1] && runs.some((r) => String(r.id) === keep[1]) ? keep[1] : String(selected?.id ?? "");
}

function stat(label, value, attrs = {}) {
  return h("div", { class: "stat", ...attrs }, h("b", {}, value), h("span", {}, label));
}

function pairsTable(a, b) {
  let change = "all";
  const table = new PagedTable({
    label: "Changed pairs", noun: "pairs", testid: "compare-pairs", pageSize: 25,
    empty: "No pair differs.",
    columns: [
      { label: "Change", render: (p) => h("span", { class: `tag ${p.change}` }, p.change === "added" ? `added in #${b.number ?? b.id}` : `removed (was in #${a.number ?? a.id})`) },
      { label: "Paper", render: (p) => paperCell(p.paper_id, { title: p.paper_title, max: 55 }) },
      { label: "Reviewer", render: (p) => reviewerCell(p.reviewer_id, { name: p.reviewer_name }) },
      { label: "Score", num: true, render: (p) => niceNumber(p.score) },
    ],
    load: async ({ offset, limit, signal }) => learnPage(await state.api.get(EP.comparePairs(state.venue, a.id, b.id), { change, offset, limit }, { signal })),
  });
  const select = h("select", { id: "compare-change", onchange: () => { change = select.value; table.restart(); } },
    [["all", "added and removed"], ["added", "added (in B only)"], ["removed", "removed (in A only)"]].map(([value, label]) => h("option", { value }, label)));
  return { table, control: h("div", { class: "field" }, h("label", { for: "compare-change" }, "Show"), select) };
}

const reviewerList = (list, cls) => h("span", { class: "chips" }, (list ?? []).map((r) => h("span", { class: `tag ${cls}` },
  `${cls === "added" ? "+" : "−"} ${r.reviewer_name || r.reviewer_id} (${niceNumber(r.score)})`)));
const paperList = (list, cls) => h("span", { class: "chips" }, (list ?? []).map((p) => h("span", { class: `tag ${cls}` },
  `${cls === "added" ? "+" : "−"} ${clip(p.paper_title || p.paper_id, 48)} (${niceNumber(p.score)})`)));

function papersTable(a, b) {
  return new PagedTable({
    label: "Papers whose reviewers changed", noun: "papers", testid: "compare-papers", pageSize: 25,
    empty: "Every paper has the same reviewers.",
    columns: [
      { label: "Paper", rowHeader: true, render: (p) => paperCell(p.paper_id, { title: p.paper_title, max: 55 }) },
      { label: "Reviewers added", render: (p) => reviewerList(p.added, "added") },
      { label: "Reviewers removed", render: (p) => reviewerList(p.removed, "removed") },
      { label: "Kept", num: true, key: "kept" },
      { label: "Mean score A → B", num: true, render: (p) => `${niceNumber(p.mean_score_a)} → ${niceNumber(p.mean_score_b)}` },
    ],
    load: async ({ offset, limit, signal }) => learnPage(await state.api.get(EP.comparePapers(state.venue, a.id, b.id), { offset, limit }, { signal })),
  });
}

function reviewersTable(a, b) {
  return new PagedTable({
    label: "Reviewers whose papers changed", noun: "reviewers", testid: "compare-reviewers", pageSize: 25,
    empty: "Every reviewer has the same papers.",
    columns: [
      { label: "Reviewer", rowHeader: true, render: (r) => reviewerCell(r.reviewer_id, { name: r.reviewer_name }) },
      { label: "Load A → B", num: true, render: (r) => `${r.load_a} → ${r.load_b}` },
      { label: "Papers added", render: (r) => paperList(r.added, "added") },
      { label: "Papers removed", render: (r) => paperList(r.removed, "removed") },
    ],
    load: async ({ offset, limit, signal }) => learnPage(await state.api.get(EP.compareReviewers(state.venue, a.id, b.id), { offset, limit }, { signal })),
  });
}

function learnPage(page) {
  learnNames(page.items);
  for (const item of page.items) {
    learnNames((item.added ?? []).concat(item.removed ?? []).map((x) => ({ ...x, paper_id: x.paper_id ?? item.paper_id, reviewer_id: x.reviewer_id ?? item.reviewer_id })));
  }
  return page;
}

async function compare(idA, idB) {
  if (!idA || !idB) throw new UserError("Choose two runs.");
  if (idA === idB) throw new UserError("Choose two different runs.");
  const [a, b] = [idA, idB].map((id) => state.runs.find((run) => run.id === id));
  const summary = await state.api.get(EP.compare(state.venue, idA, idB));
  const pairs = pairsTable(a, b);
  const papers = papersTable(a, b);
  const reviewers = reviewersTable(a, b);
  const charts = [0, 1].map(() => ({ load: h("div", { class: "chart" }), score: h("div", { class: "chart" }) }));
  fill(view.result,
    h("section", { class: "card", "aria-labelledby": "compare-summary-title" },
      h("h3", { id: "compare-summary-title" }, `${runName(a)} → ${runName(b)}`),
      h("div", { class: "summary-row", "data-testid": "compare-summary" },
        stat("pairs in both", summary.shared),
        stat(`added in #${b.number ?? b.id}`, summary.added, { "data-testid": "compare-added" }),
        stat(`removed from #${a.number ?? a.id}`, summary.removed, { "data-testid": "compare-removed" }),
        stat("papers changed", summary.papers_changed),
        stat("reviewers changed", summary.reviewers_changed),
        stat("total score A → B", `${niceNumber(summary.objective_a)} → ${niceNumber(summary.objective_b)} (${signed(summary.objective_change)})`),
        stat("mean score A → B", `${niceNumber(summary.mean_score_a)} → ${niceNumber(summary.mean_score_b)}`)),
      h("p", { class: "muted", "data-testid": "compare-overlap" },
        `${plural(summary.shared, "pair")} shared; ${plural(summary.added, "pair")} only in ${runName(b)}, ${plural(summary.removed, "pair")} only in ${runName(a)}.`)),
    h("section", { class: "card", "aria-labelledby": "compare-pairs-title" },
      h("h3", { id: "compare-pairs-title" }, "Pairs that differ"), h("div", { class: "inline-form" }, pairs.control), pairs.table.element),
    h("section", { class: "card", "aria-labelledby": "compare-papers-title" },
      h("h3", { id: "compare-papers-title" }, "Per paper"), papers.element),
    h("section", { class: "card", "aria-labelledby": "compare-reviewers-title" },
      h("h3", { id: "compare-reviewers-title" }, "Per reviewer"), reviewers.element),
    h("div", { class: "grid2" }, [a, b].map((run, i) => h("section", { class: "card", "data-testid": "compare-column" },
      h("h3", {}, runName(run), " ", h("span", { class: `badge ${run.state}` }, run.state)),
      h("p", { class: "muted" }, runLabel(run)),
      h("h4", {}, "Reviewer load"), charts[i].load, h("h4", {}, "Per-paper lowest and mean score"), charts[i].score))));
  await Promise.all([pairs.table.reload(), papers.reload(), reviewers.reload()]);
  const stats = await Promise.all([fetchStats(a.id), fetchStats(b.id)]);
  const ranges = chartRanges(stats);
  runCharts(stats[0], a, charts[0].load, charts[0].score, "", ranges);
  runCharts(stats[1], b, charts[1].load, charts[1].score, "b", ranges);
  view.result.querySelector("h3")?.setAttribute("tabindex", "-1");
}

async function show() {
  if (!view.built) build();
  fillSelects();
  if (state.runs.length < 2) {
    fill(view.result, h("p", { class: "muted card" }, state.runs.length ? "Only one run so far: re-solve or solve again to compare." : "No runs yet."));
  }
}

export function setupCompare() {
  registerView("tab-compare", show);
  on("venue", () => { view.built = false; });
  on("runs", () => { if (view.built) fillSelects(); });
}
