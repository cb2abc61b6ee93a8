// Emergency re-assignment of the live run (POST .../assignments/live/reassign, a job the page
// follows like a solve): the chair names the reviewers who withdrew; the service makes a draft from the live run that keeps
// every other pair and fills only the vacated slots (or moves the fewest pairs), stores the
// withdrawals as max load 0, and records the difference in the draft's summary. The page
// then selects the draft and shows what changed; it is published through the usual deploy.
import { h, fill } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { jobTitle, niceNumber, plural, runName } from "../core/format.js";
import { learnNames, reviewerName, searchReviewers } from "../core/names.js";
import { state } from "../core/state.js";
import { changeReasons, reasonText } from "../lib/modes.js";
import { paperCell, reviewerCell } from "../components/cells.js";
import { busy, errorBox, say, UserError } from "../components/feedback.js";
import { Picker } from "../components/picker.js";
import { PagedTable } from "../components/table.js";
import { jobResult } from "./jobs.js";
import { refreshRuns } from "./runs.js";

/** The chair's form on the live run: reviewers who withdrew → a re-assignment draft. */
export function reassignCard(run) {
  const chosen = new Map(); // reviewer id -> label
  const error = errorBox();
  const list = h("ul", { class: "withdrawn-list", "aria-label": "Reviewers who withdrew", "data-testid": "withdrawn" });
  const none = h("p", { class: "muted" }, "No reviewer chosen yet.");
  const render = () => {
    none.hidden = chosen.size > 0;
    fill(list, [...chosen].map(([id, label]) => h("li", {}, h("span", {}, label),
      h("button", { type: "button", class: "small-btn secondary", "aria-label": `Take ${label} off the list`,
        onclick: () => { chosen.delete(id); render(); } }, "×"))));
  };
  const picker = new Picker({
    label: "Add a reviewer who withdrew", placeholder: "type a name, affiliation or id",
    search: searchReviewers,
    onSelect: (item) => { chosen.set(item.id, item.label); picker.clear(); render(); },
  });
  const reason = h("input", { id: "reassign-reason", maxlength: 1000, placeholder: "e.g. family emergency (kept in the audit log)" });
  render();
  const form = h("form", { class: "stack", "data-requires": "write", onsubmit: (event) => {
    event.preventDefault();
    busy(event.submitter, error, async () => {
      if (!chosen.size) throw new UserError("Choose at least one reviewer who withdrew (type a name, then pick it).");
      const job = await state.api.post(EP.reassignLive(state.venue), { withdraw: [...chosen.keys()], reason: reason.value.trim() });
      say(`${jobTitle(job)} started: re-assigning ${runName(run)}.`);
      const answer = await jobResult(job);
      const draft = { id: answer.assignment_id, number: answer.assignment_number };
      say(`${runName(draft)} drafted from ${runName(run)}: ${plural(answer.removed.length, "pair")} removed, ${plural(answer.added.length, "pair")} added. Review it, then deploy it.`);
      await refreshRuns({ select: draft.id });
    }, "Could not re-assign");
  } },
  h("fieldset", {}, h("legend", {}, "Reviewers who withdrew"), picker.element, list, none,
    h("div", { class: "field" }, h("label", { for: "reassign-reason" }, "Reason for the re-assignment"), reason)),
  h("button", { type: "submit" }, "Create re-assignment draft"), error);
  return h("section", { class: "card", "aria-labelledby": "reassign-title", "data-testid": "reassign" },
    h("h3", { id: "reassign-title" }, "Emergency re-assignment"),
    h("p", { class: "hint" }, `Reviewers withdrew after ${runName(run)} was published? A new draft keeps every other pair `,
      "of it and fills only their slots, at the best scores within the venue's loads, demands, conflicts and bids ",
      "(or moves the fewest pairs when that is impossible). They get a max load of 0 for later solves. ",
      "Nothing changes for viewers until the draft is deployed."),
    form);
}

/** What a re-assignment draft changed against the run it came from, with the reasons. */
export function reassignmentCard(run) {
  const info = run.summary?.reassignment;
  const s = run.summary ?? {};
  const base = state.runs.find((r) => r.id === info.derived_from);
  const baseName = base ? runName(base) : `run ${info.derived_from}`;
  const reasons = changeReasons(info);
  const withdrawn = h("span", { class: "chips" });
  const showWithdrawn = () => fill(withdrawn, (info.withdrawn ?? []).map((id) => reviewerCell(id, { name: reviewerName(id) })));
  showWithdrawn();
  const byReason = Object.entries(s.removed_by_reason ?? {}).filter(([, n]) => n > 0)
    .map(([reason, n]) => `${n} ${reason}`).join(", ");
  const table = new PagedTable({
    label: `Changes against ${baseName}`, noun: "changed pairs", testid: "reassign-changes", pageSize: 50,
    empty: `The same pairs as ${baseName}.`,
    columns: [
      { label: "Change", render: (p) => h("span", { class: `change-${p.change}` }, p.change) },
      { label: "Paper", render: (p) => paperCell(p.paper_id, { title: p.paper_title }) },
      { label: "Reviewer", render: (p) => reviewerCell(p.reviewer_id, { name: p.reviewer_name }) },
      { label: "Score", num: true, render: (p) => niceNumber(p.score) },
      { label: "Why", render: (p) => reasonText(reasons, p.change, p.paper_id, p.reviewer_id) },
    ],
    load: async ({ offset, limit, signal }) => {
      const page = await state.api.page(EP.comparePairs(state.venue, info.derived_from, run.id), { offset, limit }, { signal });
      learnNames(page.items);
      return page;
    },
  });
  const card = h("section", { class: "card", "aria-labelledby": "reassignment-title", "data-testid": "reassignment" },
    h("h3", { id: "reassignment-title" }, `Re-assignment of ${baseName}`),
    h("dl", { class: "facts" },
      h("dt", {}, "Reviewers who withdrew"), h("dd", {}, (info.withdrawn ?? []).length ? withdrawn : "none"),
      (info.removed_pairs ?? []).length ? [h("dt", {}, "Pairs removed by the chair"), h("dd", {}, String(info.removed_pairs.length))] : null,
      info.reason ? [h("dt", {}, "Reason"), h("dd", {}, info.reason)] : null,
      h("dt", {}, "Changes"), h("dd", { "data-testid": "reassign-counts" },
        `${plural(s.kept ?? 0, "live pair")} kept, ${plural(s.removed ?? 0, "pair")} removed${byReason ? ` (${byReason})` : ""}, ${plural(s.added ?? 0, "pair")} added`),
      s.minimality ? [h("dt", {}, "Fewest changes"), h("dd", {}, s.minimality)] : null),
    table.element);
  return {
    element: card,
    async load() {
      // names of withdrawn reviewers this page has not seen yet (a handful)
      const unknown = (info.withdrawn ?? []).filter((id) => !reviewerName(id)).slice(0, 20);
      const people = await Promise.all(unknown.map((id) => state.api.get(EP.reviewer(state.venue, id)).catch(() => null)));
      learnNames(people.filter(Boolean).map((p) => ({ reviewer_id: p.id, reviewer_name: p.name || p.display_name })));
      showWithdrawn();
      await table.reload();
    },
  };
}
