// Conflicts of interest managed by the chairs: the venue's detection policy (co-author
// window, institution, e-mail domain) with the count it yields, previewed before it is saved;
// dismissing a conflict with a reason (restored from the dismissed list) and declaring one.
import { h } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { dateTime, plural } from "../core/format.js";
import { learnNames, paperTitle, reviewerName, searchPapers, searchReviewers } from "../core/names.js";
import { state } from "../core/state.js";
import { paperCell, reviewerCell } from "../components/cells.js";
import { confirmDialog } from "../components/dialog.js";
import { busy, errorBox, say, UserError } from "../components/feedback.js";
import { Picker } from "../components/picker.js";
import { PagedTable } from "../components/table.js";

export const DISMISSIBLE = new Set(["detected", "uploaded", "declared"]);
const rName = (id, name) => name || reviewerName(id) || id;
const pTitle = (id, title) => title || paperTitle(id) || id;

function card(id, title, ...children) {
  return h("section", { class: "card", "aria-labelledby": id, "data-testid": id }, h("h3", { id }, title), children);
}

function reasonField(id, label) {
  const input = h("textarea", { id, rows: 2, required: true, maxlength: 2000 });
  return { input, element: h("div", { class: "field" }, h("label", { for: id }, label), input) };
}

/** The Dismiss… button of a conflict row; ``done()`` reloads what shows conflicts. */
export function dismissButton(conflict, done) {
  const who = `${rName(conflict.reviewer_id, conflict.reviewer_name)} on “${pTitle(conflict.paper_id, conflict.paper_title)}”`;
  return h("button", { type: "button", class: "small-btn secondary", "aria-label": `Dismiss the conflict of ${who}`,
    onclick: async () => {
      const reason = reasonField("dismiss-reason", "Why is it not a conflict? (kept in the audit log)");
      const result = await confirmDialog({
        title: `Dismiss the conflict of ${who}?`,
        testid: "dismiss-dialog",
        body: [h("p", {}, `${conflict.source}: ${conflict.reason || "no reason given"}. A dismissed conflict no longer blocks the pair; later detection leaves it out until it is restored.`), reason.element],
        confirm: "Dismiss the conflict",
        onConfirm: () => {
          if (!reason.input.value.trim()) throw new UserError("Give the reason for dismissing it.");
          return state.api.post(EP.dismissConflict(state.venue, conflict.paper_id, conflict.reviewer_id), { reason: reason.input.value });
        },
      });
      if (!result) return;
      say(`Dismissed the conflict of ${who}.`);
      done();
    } }, "Dismiss…");
}

/** The policy card: current settings, a preview of what they detect, save (re-detects). */
export function conflictPolicyCard(onChange) {
  const status = errorBox({ "data-testid": "policy-status" });
  const windowInput = h("input", { id: "policy-window", type: "number", min: 0, max: 100, step: 1, inputmode: "numeric" });
  const coauthors = h("input", { id: "policy-coauthors", type: "checkbox" });
  const institution = h("input", { id: "policy-institution", type: "checkbox" });
  const domain = h("input", { id: "policy-domain", type: "checkbox" });
  const result = h("div", { "data-testid": "policy-preview", "aria-live": "polite" });
  const now = h("p", { class: "muted", "data-testid": "policy-now" });
  const body = () => {
    const years = windowInput.value.trim();
    if (years !== "" && !/^\d+$/.test(years)) throw new UserError("The co-author window is a whole number of years, or empty for any year.");
    return { coauthor_window_years: years === "" ? null : Number(years), coauthors: coauthors.checked,
      same_institution: institution.checked, same_email_domain: domain.checked };
  };
  const describe = (p) => {
    const c = p.counts;
    return h("div", {},
      h("p", { "data-testid": "policy-count" }, `${plural(c.pairs, "conflicting pair")} (${plural(c.reviewers, "reviewer")}, ${plural(c.papers, "paper")}): `
        + `${c.by_reason.author} author, ${c.by_reason.coauthor} co-author, ${c.by_reason.institution} institution, ${c.by_reason.email_domain} e-mail domain.`),
      h("p", { class: "muted" }, `Against the ${plural(p.stored_pairs, "detected pair")} stored now: ${p.added} added, ${p.removed} removed`
        + `${p.dismissed ? `; ${plural(p.dismissed, "dismissed conflict")} stay dismissed` : ""}.`));
  };
  const load = async () => {
    const current = await state.api.get(EP.conflictPolicy(state.venue));
    const p = current.policy;
    windowInput.value = p.coauthor_window_years ?? "";
    coauthors.checked = p.coauthors;
    institution.checked = p.same_institution;
    domain.checked = p.same_email_domain;
    now.textContent = `Stored now: ${current.stored.detected} detected, ${current.stored.uploaded} uploaded, ${current.stored.declared} declared; ${current.dismissed} dismissed.`;
  };
  const preview = async () => { result.replaceChildren(describe(await state.api.post(EP.conflictPolicyPreview(state.venue), body()))); };
  const save = async () => {
    const saved = await state.api.put(EP.conflictPolicy(state.venue), body());
    result.replaceChildren(describe(saved));
    say(`Conflict policy saved: ${plural(saved.counts.pairs, "detected conflict")} now.`);
    await load();
    onChange();
  };
  const check = (input, label) => h("label", { class: "check" }, input, ` ${label}`);
  const section = card("policy-title", "Conflict detection policy",
    h("p", { class: "hint" }, "How conflicts are found from profiles: preview the count a setting yields, then save (the venue's conflicts are detected again now, and in every later affinity run)."),
    h("div", { class: "inline-form" },
      h("div", { class: "field" }, h("label", { for: "policy-window" }, "Co-author window (years; empty: any year)"), windowInput),
      check(coauthors, "co-authors"), check(institution, "same institution"), check(domain, "same e-mail domain")),
    h("div", { class: "toolbar" },
      h("button", { type: "button", class: "secondary", onclick: (e) => busy(e.currentTarget, status, preview, "Previewing") }, "Preview count"),
      h("button", { type: "button", onclick: (e) => busy(e.currentTarget, status, save, "Saving") }, "Save and detect again")),
    status, result, now);
  busy(null, status, load, "Loading the policy");
  return section;
}

/** Declaring a conflict (paper, reviewer, reason) and the dismissed conflicts with Restore. */
export function managedConflictsCard(onChange) {
  const status = errorBox({ "data-testid": "declare-status" });
  const chosen = { paper: null, reviewer: null };
  const paper = new Picker({ label: "Conflicting paper", placeholder: "search papers", search: searchPapers, onSelect: (item) => { chosen.paper = item.id; } });
  const reviewer = new Picker({ label: "Conflicting reviewer", placeholder: "search reviewers", search: searchReviewers, onSelect: (item) => { chosen.reviewer = item.id; } });
  const reason = reasonField("declare-reason", "Reason");
  const dismissed = new PagedTable({
    label: "Dismissed conflicts", noun: "dismissed conflicts", testid: "dismissed-conflicts", pageSize: 10,
    empty: "No dismissed conflicts.",
    columns: [
      { label: "Paper", render: (c) => paperCell(c.paper_id, { title: c.paper_title, max: 50 }) },
      { label: "Reviewer", render: (c) => reviewerCell(c.reviewer_id, { name: c.reviewer_name }) },
      { label: "Conflict", render: (c) => `${c.source}: ${c.conflict_reason || "–"}` },
      { label: "Dismissed because", render: (c) => `${c.reason} (${c.dismissed_by}, ${dateTime(c.dismissed_at)})` },
      { label: "", render: (c) => h("button", { type: "button", class: "small-btn secondary",
        "aria-label": `Restore the conflict of ${rName(c.reviewer_id, c.reviewer_name)} on “${pTitle(c.paper_id, c.paper_title)}”`,
        onclick: (e) => busy(e.currentTarget, status, async () => {
          await state.api.post(EP.restoreConflict(state.venue, c.paper_id, c.reviewer_id), { reason: "restored in the page" });
          say(`Restored the conflict of ${rName(c.reviewer_id, c.reviewer_name)}.`);
          onChange();
        }, "Restoring") }, "Restore") },
    ],
    load: async ({ offset, limit, signal }) => {
      const page = await state.api.get(EP.dismissedConflicts(state.venue), { offset, limit }, { signal });
      learnNames(page.items);
      return page;
    },
  });
  const declare = async () => {
    if (!chosen.paper || !chosen.reviewer) throw new UserError("Choose a paper and a reviewer.");
    if (!reason.input.value.trim()) throw new UserError("Give the reason for the conflict.");
    await state.api.post(EP.conflicts(state.venue), { paper_id: chosen.paper, reviewer_id: chosen.reviewer, reason: reason.input.value });
    say("Conflict declared: the pair is never assigned.");
    reason.input.value = "";
    onChange();
  };
  const section = card("declare-title", "Declared and dismissed conflicts",
    h("div", { class: "inline-form" }, paper.element, reviewer.element, reason.element,
      h("button", { type: "button", onclick: (e) => busy(e.currentTarget, status, declare, "Declaring") }, "Declare a conflict")),
    status, dismissed.element);
  section.reload = () => dismissed.reload();
  dismissed.reload();
  return section;
}
