// The Scores tab: the affinity run (what computed it, whether it is stale), the histogram of
// every stored score and a reviewer × paper heatmap with labelled axes and a keyboard path.
import { $, h, fill, formValues } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { affinityParamsText, clip, dateTime, niceNumber } from "../core/format.js";
import { learnNames, paperTitle, reviewerName } from "../core/names.js";
import { currentRun, on, state } from "../core/state.js";
import { argmaxOrder, edgeLabels, spectralOrder } from "../lib/chartmath.js";
import { barChart, heatmap } from "../components/charts.js";
import { busy, errorBox, UserError } from "../components/feedback.js";
import { explainDialog } from "./explain.js";
import { registerView } from "./tabs.js";
import { refreshAffinity } from "./jobs.js";

const view = { built: false };

function build() {
  const host = $("#scores-view");
  view.info = h("p", { id: "affinity-run-info", "data-testid": "affinity-run-info", "aria-live": "polite" });
  view.summary = h("div", { class: "summary-row" });
  view.histogram = h("div", { class: "chart", "data-testid": "score-histogram" });
  view.heatmap = h("div", { class: "chart", "data-testid": "heatmap" });
  view.heatError = errorBox();
  const form = h("form", { id: "heatmap-form", class: "inline-form", onsubmit: (event) => {
    event.preventDefault();
    const values = formValues(event.currentTarget);
    const ids = [...new Set((values.paper_ids ?? "").split(",").map((x) => x.trim()).filter(Boolean))];
    busy(event.submitter, view.heatError, () => drawHeatmap(values.papers ?? 30, values.order, ids), "Drawing the heatmap");
  } },
  h("div", { class: "field" }, h("label", { for: "heat-papers" }, "First N papers"),
    h("input", { id: "heat-papers", name: "papers", type: "number", min: 2, max: 80, value: 30 })),
  h("div", { class: "field" }, h("label", { for: "heat-ids" }, "or these paper ids"),
    h("input", { id: "heat-ids", name: "paper_ids", placeholder: "id1, id2, …", "aria-describedby": "heat-ids-hint" })),
  h("div", { class: "field" }, h("label", { for: "heat-order" }, "Order"),
    h("select", { id: "heat-order", name: "order" },
      h("option", { value: "spectral" }, "spectral (co-clustering)"), h("option", { value: "argmax" }, "argmax"), h("option", { value: "none" }, "as stored"))),
  h("button", { type: "submit" }, "Draw heatmap"),
  h("span", { id: "heat-ids-hint", class: "hint" }, "ids comma-separated; they override N. Focus the heatmap and use the arrow keys; Enter explains a pair."));
  fill(host,
    h("div", { class: "toolbar" }, view.info,
      h("button", { type: "button", class: "secondary", onclick: (event) => busy(event.currentTarget, null, show, "Loading scores") }, "Refresh")),
    h("section", { class: "card", "aria-labelledby": "hist-title" }, h("h3", { id: "hist-title" }, "Score distribution (every stored pair)"), view.summary, view.histogram),
    h("section", { class: "card", "aria-labelledby": "heat-title" }, h("h3", { id: "heat-title" }, "Reviewer × paper heatmap"), form, view.heatError, view.heatmap));
  view.built = true;
}

function stat(label, value) {
  return h("div", { class: "stat" }, h("b", {}, value), h("span", {}, label));
}

function render(run) {
  view.info.textContent = run
    ? `Affinity run #${run.id}: ${affinityParamsText({ config: run.config, top_n: run.top_n })}, ${run.n_papers} papers × ${run.n_reviewers} reviewers, ${dateTime(run.created_at)}` +
      (run.stale ? " — stale: reviewers or submissions changed since; compute again under Compute." : "")
    : "No affinity scores yet: compute them under Compute.";
  if (!run) {
    fill(view.histogram, h("p", { class: "muted" }, "No scores to show."));
    view.summary.replaceChildren();
    return;
  }
  const statistics = run.statistics ?? {};
  const quantiles = statistics.quantiles ?? {};
  const best = statistics.best_reviewer_score_per_paper ?? {};
  fill(view.summary,
    ["count", "min", "mean", "std", "max"].filter((k) => typeof statistics[k] === "number")
      .map((k) => stat(k === "count" ? "pairs scored" : k, niceNumber(statistics[k]))),
    quantiles["0.5"] != null ? stat("median", niceNumber(quantiles["0.5"])) : null,
    best.min != null ? stat("worst paper's best reviewer", niceNumber(best.min)) : null,
    statistics.detected_conflicts != null ? stat("conflicts detected", statistics.detected_conflicts) : null);
  barChart(view.histogram, edgeLabels(statistics.histogram?.edges ?? []), [{ name: "pairs", values: statistics.histogram?.counts ?? [] }],
    { title: `Histogram of the affinity scores of run ${run.id}`, xLabel: "score", yLabel: "pairs" });
}

async function drawHeatmap(nPapers, order, paperIds = []) {
  const host = view.heatmap;
  let papers;
  if (paperIds.length) {
    const found = await Promise.all(paperIds.map((id) => state.api.get(EP.searchPapers(state.venue), { q: id, limit: 1 })));
    const unknown = paperIds.filter((id, i) => found[i].items[0]?.id !== id);
    if (unknown.length) throw new UserError(`Unknown paper id${unknown.length === 1 ? "" : "s"}: ${unknown.join(", ")}`);
    papers = found.map((page) => page.items[0]);
  } else {
    papers = (await state.api.page(EP.submissions(state.venue), { limit: nPapers })).items;
  }
  learnNames(papers.map((p) => ({ paper_id: p.id, paper_title: p.title })));
  if (!papers.length) { fill(host, h("p", { class: "muted" }, "No submissions loaded.")); return; }
  fill(host, h("p", { class: "muted" }, "Loading scores…"));
  const lists = await Promise.all(papers.map((p) => state.api.page(EP.paperReviewers(state.venue, p.id), { limit: 100 })));
  lists.forEach((list) => learnNames(list.items));
  // reviewers: those in the papers' top lists, most frequent first, at most 60
  const frequency = new Map();
  lists.forEach((list) => list.items.forEach((r) => frequency.set(r.reviewer_id, (frequency.get(r.reviewer_id) ?? 0) + 1)));
  const reviewerIds = [...frequency.entries()].sort((a, b) => b[1] - a[1]).slice(0, 60).map(([id]) => id);
  const column = new Map(reviewerIds.map((id, j) => [id, j]));
  const matrix = papers.map(() => new Array(reviewerIds.length).fill(NaN));
  lists.forEach((list, i) => list.items.forEach((r) => {
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
  const run = currentRun();
  if (run) {
    const rowPos = new Map(ordering.rowOrder.map((i, k) => [papers[i].id, k]));
    const colPos = new Map(ordering.colOrder.map((j, k) => [reviewerIds[j], k]));
    const pairs = (await Promise.all(papers.map((p) => state.api.all(EP.assignmentPairs(state.venue, run.id), { paper_id: p.id })))).flat();
    marks = new Set(pairs.filter((p) => rowPos.has(p.paper_id) && colPos.has(p.reviewer_id))
      .map((p) => `${rowPos.get(p.paper_id)},${colPos.get(p.reviewer_id)}`));
  }
  const rowIds = ordering.rowOrder.map((i) => papers[i].id);
  const colIds = ordering.colOrder.map((j) => reviewerIds[j]);
  heatmap(host, sorted,
    rowIds.map((id) => clip(paperTitle(id) || id, 40)),
    colIds.map((id) => reviewerName(id) || id),
    { title: `Scores, ${order} order${run ? `, pairs of run #${run.number ?? run.id} outlined` : ""}`, marks,
      rowAxis: "papers ↓", colAxis: "reviewers →",
      onPick: (i, j) => busy(null, view.heatError, () => explainDialog(rowIds[i], colIds[j]), "Explaining the score") });
}

async function show() {
  if (!view.built) build();
  const run = await refreshAffinity();
  render(run);
}

export function setupScores() {
  registerView("tab-inspect", show);
  on("venue", () => { view.built = false; });
  on("affinity", (run) => { if (view.built) render(run); });
}
