// The edge browser (tab "Papers and reviewers"): for a paper, its assigned reviewers and its
// candidates with score, bid, conflicts, load against quota and the explanation, with
// one-click assign, remove and swap (each previewed) from the candidate and alternate lists;
// the same from a reviewer's side. Every pair of a run is one search and one page turn away.
import { $, h, fill } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { loadText, niceNumber, plural, runName, signed } from "../core/format.js";
import { learnNames, paperTitle, reviewerName, searchPapers, searchReviewers } from "../core/names.js";
import { canWrite, currentRun, emit, on, state } from "../core/state.js";
import { chips, paperCell, reviewerCell } from "../components/cells.js";
import { busy, errorBox, globalError } from "../components/feedback.js";
import { Picker } from "../components/picker.js";
import { meter } from "../components/progress.js";
import { PagedTable } from "../components/table.js";
import { editButton, pairActions } from "./edits.js";
import { explainButton } from "./explain.js";
import { loadRepairs } from "./repairs.js";
import { registerView, selectTab } from "./tabs.js";

const ALTERNATES = 5;

const view = {
  built: false,
  paperPicker: null,
  reviewerPicker: null,
  body: null, // where the chosen paper or reviewer shows
  side: null, // {paper} or {reviewer}
  swapOut: null, // reviewer id to replace when swapping on the shown paper
  table: null,
  filter: "all",
};

const runBusy = (button, action) => busy(button, null, action, "Loading");

function build() {
  const host = $("#browse-view");
  view.paperPicker = new Picker({
    label: "Paper", placeholder: "type a title, a word of it or an id",
    search: searchPapers, onSelect: (item) => openPaper(item.id),
  });
  view.reviewerPicker = new Picker({
    label: "Reviewer", placeholder: "type a name, an affiliation or an id",
    search: searchReviewers, onSelect: (item) => openReviewer(item.id),
  });
  view.body = h("div", { id: "browse-body" });
  fill(host,
    h("section", { class: "card", "aria-labelledby": "browse-title" },
      h("h3", { id: "browse-title" }, "Find a paper or a reviewer"),
      h("p", { class: "hint" }, "Type a few letters; pick from the suggestions with the arrow keys and Enter, or click. The tables list the assigned pairs first, then every scored candidate, best first."),
      h("div", { class: "grid2 pickers" }, view.paperPicker.element, view.reviewerPicker.element)),
    view.body);
  view.built = true;
}

function runNote(run) {
  if (!run) return h("p", { class: "muted" }, "No assignment run yet: only scores are shown.");
  const editable = run.state === "draft" && canWrite();
  return h("p", { class: "muted run-note" }, `Showing ${runName(run)} (${run.state}).`,
    editable ? " Changes are previewed before they apply." : canWrite() ? " It is not a draft: re-solve it (Assignment tab) to edit." : "");
}

function filterControl(onChange) {
  const select = h("select", { id: "edge-filter", onchange: () => { view.filter = select.value; onChange(); } },
    [["all", "assigned and candidates"], ["assigned", "assigned only"], ["candidates", "candidates only"]]
      .map(([value, label]) => h("option", { value, selected: view.filter === value }, label)));
  return h("div", { class: "field" }, h("label", { for: "edge-filter" }, "Show"), select);
}

// ---- paper side ---------------------------------------------------------------------------

async function openPaper(paperId, { swapOut = null, focus = true } = {}) {
  if (!view.built) build();
  view.side = { paper: paperId };
  view.swapOut = swapOut;
  emit("subject", view.side);
  const run = currentRun();
  const header = h("div", { class: "edge-head" });
  const alternates = h("div", { class: "alternates", "data-testid": "alternates" });
  const repairs = h("div", { class: "alternates", "data-testid": "repairs-panel" });
  const swapHost = h("div", { class: "swap-choice" });
  const status = errorBox();
  const altRank = new Map();
  const columns = [
    { label: "Reviewer", rowHeader: true, render: (e) => reviewerCell(e.reviewer_id, { name: e.reviewer_name }) },
    { label: "Score", num: true, render: (e) => niceNumber(e.score) },
    { label: "Load / quota", render: (e) => e.reviewer_load == null ? "–" : h("span", { class: "load" },
      meter(e.reviewer_load, e.reviewer_max_load ?? e.reviewer_load, `load ${loadText(e.reviewer_load, e.reviewer_max_load)}`), ` ${loadText(e.reviewer_load, e.reviewer_max_load)}`) },
    { label: "Marks", render: (e) => chips({ assigned: e.assigned, pinned: e.pinned, forbidden: e.forbidden, bid: e.bid, conflict: e.conflict, rank: altRank.get(e.reviewer_id) }) },
    { label: "Actions", render: (e) => edgeActions(run, e, "paper") },
    { label: "Explanation", render: (e) => explainButton(e.paper_id, e.reviewer_id, runBusy) },
  ];
  view.table = new PagedTable({
    label: `Reviewers of the paper`, noun: "reviewers", testid: "paper-edges", pageSize: 25, columns,
    rowAttrs: (e) => ({ class: e.assigned ? "assigned-row" : "" }),
    load: async ({ offset, limit, signal }) => {
      if (!run) {
        const page = await state.api.page(EP.paperReviewers(state.venue, paperId), { offset, limit }, { signal });
        return learnPage(page);
      }
      const page = await state.api.get(EP.paperEdges(state.venue, run.id, paperId), { filter: view.filter, offset, limit }, { signal });
      learnNames(page.items);
      renderPaperHead(header, page.paper, run);
      renderSwapChoice(swapHost, run, page);
      return page;
    },
  });
  fill(view.body, h("section", { class: "card", "aria-labelledby": "edge-title", "data-testid": "paper-view" },
    header, runNote(run), status, alternates, repairs, swapHost,
    h("div", { class: "inline-form" }, filterControl(() => view.table.restart())),
    view.table.element));
  header.append(h("h3", { id: "edge-title", tabindex: "-1" }, paperTitle(paperId) || paperId));
  view.paperPicker.set({ id: paperId, label: paperTitle(paperId) ? `${paperTitle(paperId)} (${paperId})` : paperId });
  if (run) {
    const paper = await loadAlternates(run, paperId, alternates, altRank);
    if (run.state === "draft" && canWrite()) {
      const full = paper.demand != null && paper.assigned.length >= paper.demand;
      await loadRepairs(run, paperId, repairs, { full, swapOut: swapTarget(paper.assigned) });
    }
  }
  await view.table.reload();
  if (focus) $("#edge-title")?.focus();
}

function learnPage(page) {
  learnNames(page.items);
  return page;
}

function renderPaperHead(host, paper, run) {
  if (!paper) return;
  const full = paper.demand != null && paper.assigned >= paper.demand;
  fill(host,
    h("h3", { id: "edge-title", tabindex: "-1" }, paper.title || paper.id),
    h("p", { class: "muted" }, `${paper.id} · `,
      h("span", { class: paper.demand != null && paper.assigned < paper.demand ? "over" : "", "data-testid": "paper-coverage" },
        `${paper.assigned} of ${paper.demand ?? "?"} reviewers assigned in ${runName(run)}`),
      full ? " (full: add a reviewer by swapping one out)" : ""));
}

/** The paper's alternates (unassigned, conflict-free, below their quota, best first), each
 * with its one-click action: Assign while the paper is below demand, else Swap in. */
async function loadAlternates(run, paperId, host, altRank) {
  const paper = await state.api.get(EP.assignmentPaper(state.venue, run.id, paperId), { alternates: ALTERNATES });
  learnNames([...paper.assigned, ...paper.alternates].map((p) => ({ ...p, paper_id: paperId })));
  altRank.clear();
  paper.alternates.forEach((a) => altRank.set(a.reviewer_id, a.rank));
  const editable = run.state === "draft" && canWrite();
  const full = paper.demand != null && paper.assigned.length >= paper.demand;
  const out = swapTarget(paper.assigned);
  if (!paper.alternates.length) {
    fill(host, h("p", { class: "muted" }, editable
      ? "No alternates within the quotas: every other scored reviewer is assigned, in conflict or at their quota (the repairs below reach those at their quota)."
      : "No alternates: every other scored reviewer is assigned, in conflict or at their quota."));
    return paper;
  }
  fill(host, h("h4", {}, `Alternates (next-best reviewers who can still take it)`),
    h("ol", { class: "alt-list" }, paper.alternates.map((a) => h("li", {},
      reviewerCell(a.reviewer_id, { name: a.reviewer_name }),
      h("span", { class: "muted" }, ` score ${niceNumber(a.score)}, load ${loadText(a.load, a.max_load)} `),
      editable && !full ? editButton(run, { action: "assign", paper_id: paperId, reviewer_id: a.reviewer_id, reviewer_name: a.reviewer_name }, "Assign",
        { class: "primary", ariaLabel: `Assign alternate ${a.reviewer_name || a.reviewer_id}` }) : null,
      editable && full && out ? editButton(run, { action: "swap", paper_id: paperId, reviewer_id: a.reviewer_id, reviewer_name: a.reviewer_name, remove_reviewer_id: out.reviewer_id, remove_reviewer_name: out.reviewer_name },
        `Swap in for ${out.reviewer_name || out.reviewer_id} (${signed(a.score - out.score)})`, { class: a.score < out.score ? "secondary" : "primary", ariaLabel: `Swap alternate ${a.reviewer_name || a.reviewer_id} in for ${out.reviewer_name || out.reviewer_id}` }) : null))));
  return paper;
}

/** Whom a swap replaces: the chosen reviewer, else the lowest-scoring unpinned one. */
function swapTarget(assigned) {
  const chosen = assigned.find((a) => a.reviewer_id === view.swapOut && !a.pinned);
  if (chosen) return chosen;
  return [...assigned].filter((a) => !a.pinned).sort((a, b) => a.score - b.score)[0] ?? null;
}

function renderSwapChoice(host, run, page) {
  const editable = run.state === "draft" && canWrite();
  const assigned = page.items.filter((e) => e.assigned);
  if (!editable || !assigned.length || host.dataset.paper === page.paper?.id) return;
  host.dataset.paper = page.paper?.id ?? "";
  const unpinned = assigned.filter((e) => !e.pinned);
  if (!unpinned.length) return;
  const target = swapTarget(unpinned);
  view.swapOut = target?.reviewer_id ?? null;
  const select = h("select", { id: "swap-out", onchange: () => { view.swapOut = select.value; view.table.reload(); } },
    unpinned.map((e) => h("option", { value: e.reviewer_id, selected: e.reviewer_id === view.swapOut },
      `${e.reviewer_name || e.reviewer_id} (score ${niceNumber(e.score)})`)));
  fill(host, h("div", { class: "field inline-field" }, h("label", { for: "swap-out" }, "“Swap in” replaces"), select));
}

// ---- reviewer side ------------------------------------------------------------------------

async function openReviewer(reviewerId, { focus = true } = {}) {
  if (!view.built) build();
  view.side = { reviewer: reviewerId };
  emit("subject", view.side);
  const run = currentRun();
  const header = h("div", { class: "edge-head" }, h("h3", { id: "edge-title", tabindex: "-1" }, reviewerName(reviewerId) || reviewerId));
  const columns = [
    { label: "Paper", rowHeader: true, render: (e) => paperCell(e.paper_id, { title: e.paper_title, max: 60 }) },
    { label: "Score", num: true, render: (e) => niceNumber(e.score) },
    { label: "Paper's reviewers", render: (e) => e.paper_assigned == null ? "–" : h("span", { class: e.paper_demand != null && e.paper_assigned < e.paper_demand ? "over" : "" },
      `${e.paper_assigned} of ${e.paper_demand ?? "?"}`) },
    { label: "Marks", render: (e) => chips({ assigned: e.assigned, pinned: e.pinned, forbidden: e.forbidden, bid: e.bid, conflict: e.conflict }) },
    { label: "Actions", render: (e) => edgeActions(run, e, "reviewer") },
    { label: "Explanation", render: (e) => explainButton(e.paper_id, e.reviewer_id, runBusy) },
  ];
  view.table = new PagedTable({
    label: "Papers of the reviewer", noun: "papers", testid: "reviewer-edges", pageSize: 25, columns,
    rowAttrs: (e) => ({ class: e.assigned ? "assigned-row" : "" }),
    load: async ({ offset, limit, signal }) => {
      if (!run) return learnPage(await state.api.page(EP.reviewerPapers(state.venue, reviewerId), { offset, limit }, { signal }));
      const page = await state.api.get(EP.reviewerEdges(state.venue, run.id, reviewerId), { filter: view.filter, offset, limit }, { signal });
      learnNames(page.items);
      renderReviewerHead(header, page.reviewer, run);
      return page;
    },
  });
  fill(view.body, h("section", { class: "card", "aria-labelledby": "edge-title", "data-testid": "reviewer-view" },
    header, runNote(run), h("div", { class: "inline-form" }, filterControl(() => view.table.restart())), view.table.element));
  view.reviewerPicker.set({ id: reviewerId, label: reviewerName(reviewerId) ? `${reviewerName(reviewerId)} (${reviewerId})` : reviewerId });
  await view.table.reload();
  if (focus) $("#edge-title")?.focus();
}

function renderReviewerHead(host, reviewer, run) {
  if (!reviewer) return;
  const over = reviewer.max_load != null && reviewer.load > reviewer.max_load;
  fill(host,
    h("h3", { id: "edge-title", tabindex: "-1" }, reviewer.name || reviewer.id),
    h("p", { class: "muted" }, `${reviewer.id} · `,
      h("span", { class: over ? "over" : "", "data-testid": "reviewer-load" },
        `load ${loadText(reviewer.load, reviewer.max_load)} in ${runName(run)}${reviewer.min_load ? ` (minimum ${reviewer.min_load})` : ""}`)));
}

// ---- actions of an edge -------------------------------------------------------------------

/** One-click actions of a pair in the edge browser (chairs, drafts): the assigned pair's
 * remove/pin/forbid, a candidate's Assign (when it fits) and Swap in, Allow again for a
 * forbidden pair. Each opens the preview of its effect. */
function edgeActions(run, edge, side) {
  if (!run || run.state !== "draft" || !canWrite()) return "";
  if (edge.assigned) return pairActions(run, { ...edge, assigned: true });
  const base = { paper_id: edge.paper_id, paper_title: edge.paper_title, reviewer_id: edge.reviewer_id, reviewer_name: edge.reviewer_name };
  const buttons = [];
  if (edge.forbidden) buttons.push(editButton(run, { ...base, action: "unforbid" }, "Allow again"));
  if ((edge.conflict ?? []).length) return h("span", { class: "muted" }, "conflict");
  if (edge.can_add) buttons.push(editButton(run, { ...base, action: "assign" }, "Assign", { class: "primary" }));
  // a reviewer at their quota: the repairs above the table move reviewers to make room;
  // here, going over the quota (the edit dialog warns and asks)
  const room = edge.reviewer_max_load == null || edge.reviewer_load < edge.reviewer_max_load;
  if (!edge.forbidden && !room && side === "paper") {
    const full = edge.paper_demand != null && edge.paper_assigned >= edge.paper_demand;
    const over = full && view.swapOut
      ? { ...base, action: "swap", remove_reviewer_id: view.swapOut, remove_reviewer_name: reviewerName(view.swapOut) }
      : full ? null : { ...base, action: "assign" };
    if (over) buttons.push(editButton(run, over, "Over quota…", { ariaLabel: `Assign ${edge.reviewer_name || edge.reviewer_id} over their quota` }));
  }
  if (!edge.forbidden && edge.paper_assigned > 0 && room) {
    if (side === "paper" && view.swapOut) {
      const outName = reviewerName(view.swapOut) || view.swapOut;
      buttons.push(editButton(run, { ...base, action: "swap", remove_reviewer_id: view.swapOut, remove_reviewer_name: reviewerName(view.swapOut) },
        "Swap in", { ariaLabel: `Swap ${edge.reviewer_name || edge.reviewer_id} in for ${outName}` }));
    } else if (side === "reviewer") {
      buttons.push(h("button", { type: "button", class: "small-btn secondary",
        "aria-label": `Swap ${edge.reviewer_name || edge.reviewer_id} into “${edge.paper_title || edge.paper_id}”: choose whom to replace`,
        onclick: () => openPaper(edge.paper_id).catch((e) => globalError(e, "Opening the paper")) }, "Swap in…"));
    }
  }
  return h("span", { class: "actions" }, buttons);
}

async function show() {
  if (!view.built) build();
  const focus = view.focusNext;
  view.focusNext = false;
  if (view.side?.paper) await openPaper(view.side.paper, { swapOut: view.swapOut, focus });
  else if (view.side?.reviewer) await openReviewer(view.side.reviewer, { focus });
  else fill(view.body, h("p", { class: "muted card" }, `Pick a paper or a reviewer above (${plural(state.counts.submissions, "paper")}, ${plural(state.counts.reviewers, "reviewer")}).`));
}

export function setupBrowse() {
  registerView("tab-browse", show);
  on("browse", async ({ paper, reviewer, swapOut }) => {
    view.side = paper ? { paper } : { reviewer };
    view.swapOut = swapOut ?? null;
    view.focusNext = true;
    if (state.tab !== "tab-browse") await selectTab("tab-browse");
    else await show();
  });
  on("venue", () => { view.side = null; view.built = false; view.filter = "all"; });
  on("run-changed", () => { if (state.tab === "tab-browse" && view.side) refreshInPlace(); });
}

/** After an edit: the table and the alternates again, the chair's place kept. */
function refreshInPlace() {
  if (view.side?.paper) {
    openPaper(view.side.paper, { swapOut: view.swapOut, focus: !document.activeElement || document.activeElement === document.body }).catch((e) => globalError(e, "Reloading the paper"));
  } else {
    view.table?.reload();
  }
}
