// Repairs that raise a paper's score in a draft: each better candidate with the exact
// rearrangement that brings them in (a swap chain across papers, found by the solver) and its
// score change on the paper, elsewhere and in total; applied as one undoable change after a
// preview. A candidate who fits only over their quota is offered as an edit over the limit.
import { h, fill } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { loadText, niceNumber, plural, runName, signed } from "../core/format.js";
import { learnNames, paperTitle, reviewerName } from "../core/names.js";
import { state, updateRun } from "../core/state.js";
import { confirmDialog } from "../components/dialog.js";
import { busy, errorBox, say } from "../components/feedback.js";
import { editButton, effectView } from "./edits.js";
import { refreshRuns } from "./runs.js";

const rName = (id, name) => name || reviewerName(id) || id;
const pTitle = (id, title) => title || paperTitle(id) || id;
const latest = (run) => state.runs.find((r) => r.id === run.id) ?? run;

function moveWords(repair, paperId) {
  const moves = [];
  for (const added of repair.added) {
    const out = repair.removed.find((r) => r.paper_id === added.paper_id && !repair.added.some((a) => a.reviewer_id === r.reviewer_id && a.paper_id === r.paper_id));
    const where = added.paper_id === paperId ? "this paper" : `“${pTitle(added.paper_id, added.paper_title)}”`;
    moves.push(`${rName(added.reviewer_id, added.reviewer_name)} to ${where} (${niceNumber(added.score)})`
      + (out ? ` for ${rName(out.reviewer_id, out.reviewer_name)} (${niceNumber(out.score)})` : ""));
  }
  return moves;
}

/**
 * Fill ``host`` with the paper's repairs in draft ``run`` (chairs), or nothing for another
 * run. Resolves to the number of repairs shown.
 */
export async function loadRepairs(run, paperId, host, { full, swapOut }) {
  const answer = await state.api.get(EP.paperRepairs(state.venue, run.id, paperId));
  learnNames(answer.items);
  learnNames(answer.items.flatMap((i) => [...i.added, ...i.removed]));
  if (!answer.items.length) {
    fill(host, h("p", { class: "muted", "data-testid": "no-repairs" }, `${answer.message}.`));
    return 0;
  }
  const status = errorBox();
  const papers = [...new Set([paperId, ...answer.items.flatMap((i) => [...i.added, ...i.removed].map((m) => m.paper_id))])];
  const reoptimise = h("button", { type: "button", class: "small-btn secondary", "data-testid": "reoptimise",
    onclick: (event) => busy(event.currentTarget, status, () => reoptimiseDialog(run, papers), "Re-optimising") },
  `Re-optimise these ${plural(papers.length, "paper")}, keep the rest (new draft)…`);
  fill(host, h("h4", {}, "Better reviewers for this paper (repairs)"),
    h("p", { class: "hint" }, "Each brings a better-scoring reviewer in; when they are at their quota the solver moves reviewers across papers to make room. The change on this paper, the exact change elsewhere and the net change are shown before anything applies."),
    status,
    h("ol", { class: "alt-list", "data-testid": "repairs" }, answer.items.map((item) => h("li", {},
      h("strong", {}, rName(item.reviewer_id, item.reviewer_name)),
      h("span", { class: "muted" }, ` score ${niceNumber(item.score)}, load ${loadText(item.load, item.max_load)} `),
      item.feasible
        ? h("span", { "data-testid": "repair-change" }, `this paper ${signed(item.paper_change)}, elsewhere ${signed(item.elsewhere_change)}, net ${signed(item.net_change)}`,
          h("span", { class: "muted" }, ` · ${moveWords(item, paperId).join("; ")}`))
        : h("span", { class: "over" }, "fits only over their quota"),
      " ",
      item.feasible
        ? h("button", { type: "button", class: "small-btn primary", "aria-label": `Repair: bring ${rName(item.reviewer_id, item.reviewer_name)} in`,
          onclick: (event) => busy(event.currentTarget, status, () => repairDialog(run, paperId, item), "Previewing the repair") }, "Bring in…")
        : overQuotaButton(run, paperId, item, full, swapOut)))),
    papers.length > 1 ? h("div", { class: "toolbar" }, reoptimise) : null);
  return answer.items.length;
}

async function reoptimiseDialog(run, papers) {
  const done = await confirmDialog({
    title: `Re-optimise ${plural(papers.length, "paper")} of ${runName(run)}?`,
    testid: "reoptimise-dialog",
    body: [h("p", {}, "A new draft: these papers' reviewers are solved again for the best total score on them, every other pair stays as it is in this run (and this run is not changed)."),
      h("ul", {}, papers.map((p) => h("li", {}, `“${pTitle(p)}”`)))],
    confirm: "Create the draft",
    onConfirm: () => state.api.post(EP.reoptimise(state.venue, run.id), { paper_ids: papers }),
  });
  if (!done) return;
  say(`${runName(done.assignment)} created: ${plural(done.papers, "paper")} re-optimised, total score ${signed(done.objective_change)} on them.`);
  await refreshRuns({ select: done.assignment.id });
}

function overQuotaButton(run, paperId, item, full, swapOut) {
  const name = rName(item.reviewer_id, item.reviewer_name);
  if (full && !swapOut) return null;
  const edit = full
    ? { action: "swap", paper_id: paperId, reviewer_id: item.reviewer_id, reviewer_name: item.reviewer_name, remove_reviewer_id: swapOut.reviewer_id, remove_reviewer_name: swapOut.reviewer_name }
    : { action: "assign", paper_id: paperId, reviewer_id: item.reviewer_id, reviewer_name: item.reviewer_name };
  return editButton(run, edit, "Over quota…", { ariaLabel: `Assign ${name} over their quota` });
}

async function repairDialog(shownRun, paperId, item) {
  const run = latest(shownRun);
  const body = { reviewer_id: item.reviewer_id, version: run.version };
  const effect = await state.api.post(EP.paperRepairPreview(state.venue, run.id, paperId), body);
  const reason = h("input", { type: "text", id: "repair-reason", maxlength: 1000, placeholder: "optional, kept in the history and the audit log" });
  const name = rName(item.reviewer_id, item.reviewer_name);
  return confirmDialog({
    title: `Bring ${name} to “${pTitle(paperId)}”`,
    testid: "repair-dialog",
    wide: true,
    body: [
      h("p", { "data-testid": "repair-summary" }, `This paper ${signed(item.paper_change)}, the other papers ${signed(item.elsewhere_change)}: net ${signed(item.net_change)}.`),
      effectView(effect),
      h("div", { class: "field" }, h("label", { for: "repair-reason" }, "Reason"), reason),
    ],
    confirm: "Apply the repair",
    onConfirm: async () => {
      const result = await state.api.post(EP.paperRepair(state.venue, run.id, paperId), { ...body, reason: reason.value.trim() });
      say(`Repair applied: ${name} reviews “${pTitle(paperId)}” (total score ${signed(result.effect.objective_change)}). Undo is under Changes.`);
      updateRun(result.assignment);
      return result;
    },
  });
}
