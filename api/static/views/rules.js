// A run's own rules: the pins and forbids its edits made, the quotas a re-assignment set and
// the venue pins it lifted (those of its withdrawn reviewers and removed pairs).
// They hold in this run (and a re-solve of it) only, never in another draft or a new solve,
// until the chair promotes them to venue rules, which hold in every later solve.
import { h } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { dateTime, plural, runName } from "../core/format.js";
import { learnNames, paperTitle, reviewerName } from "../core/names.js";
import { emit, state } from "../core/state.js";
import { paperCell, reviewerCell } from "../components/cells.js";
import { confirmDialog } from "../components/dialog.js";
import { busy, errorBox, say } from "../components/feedback.js";
import { PagedTable } from "../components/table.js";

const KIND_WORDS = { pin: "Pinned", forbid: "Forbidden", max_load: "Quota", unpin: "Venue pin lifted" };
const rName = (id, name) => name || reviewerName(id) || id;
const pTitle = (id, title) => title || paperTitle(id) || id;

/** A rule in words: "Quota of Ada: 0 in this run (venue: 2)". */
export function ruleWords(rule) {
  const who = rName(rule.reviewer_id, rule.reviewer_name);
  if (rule.kind === "max_load") return `quota of ${who}: ${rule.value} in this run (venue: ${rule.venue_value})`;
  if (rule.kind === "unpin") return `lifting of the venue pin of ${who} on “${pTitle(rule.paper_id, rule.paper_title)}”`;
  return `${rule.kind === "pin" ? "pin" : "forbid"} of ${who} on “${pTitle(rule.paper_id, rule.paper_title)}”`;
}

/**
 * The section listing ``run``'s own rules with Promote buttons (one rule, or all).
 * ``editButton(run, edit, label, attrs)`` is the Changes card's previewed edit button (a
 * draft's pin or forbid is lifted by an unpin or unforbid edit, which can be undone).
 */
export function ownRulesSection(run, editButton) {
  const status = errorBox({ "data-testid": "own-rules-status" });
  const draft = run.state === "draft";
  let rules = null;
  const promoteAll = h("button", { type: "button", "data-testid": "promote-all", disabled: true,
    onclick: (event) => busy(event.currentTarget, status, () => promote(run, null), "Promoting") }, "Promote all to venue rules");
  const columns = [
    { label: "Rule", render: (r) => h("span", { class: `tag ${r.kind === "forbid" ? "conflict" : ""}` }, KIND_WORDS[r.kind]) },
    { label: "Paper", render: (r) => (r.paper_id ? paperCell(r.paper_id, { title: r.paper_title, max: 50 }) : "–") },
    { label: "Reviewer", render: (r) => reviewerCell(r.reviewer_id, { name: r.reviewer_name }) },
    { label: "Quota here / venue", num: true, render: (r) => (r.kind === "max_load" ? `${r.value} / ${r.venue_value}` : "–") },
    { label: "Reason", render: (r) => r.reason || "–" },
    { label: "By", render: (r) => `${r.created_by || "–"} · ${dateTime(r.created_at)}` },
    { label: "", render: (r) => h("span", { class: "actions" },
      h("button", { type: "button", class: "small-btn", "aria-label": `Promote the ${ruleWords(r)} to a venue rule`,
        onclick: (event) => busy(event.currentTarget, status, () => promote(run, r), "Promoting") }, "Promote"),
      draft && (r.kind === "pin" || r.kind === "forbid")
        ? editButton(run, { paper_id: r.paper_id, reviewer_id: r.reviewer_id, paper_title: r.paper_title, reviewer_name: r.reviewer_name,
          action: r.kind === "pin" ? "unpin" : "unforbid" }, r.kind === "pin" ? "Unpin" : "Allow again",
        { ariaLabel: `${r.kind === "pin" ? "Unpin" : "Allow again"} ${rName(r.reviewer_id, r.reviewer_name)} on “${pTitle(r.paper_id, r.paper_title)}” in this draft` })
        : null) },
  ];
  const table = new PagedTable({
    label: "This run's own rules", noun: "rules", testid: "own-rules", pageSize: 10, columns,
    empty: "No rules of its own: this run holds only the venue's rules.",
    load: async ({ offset, limit, signal }) => {
      if (offset === 0 || rules === null) {
        const body = await state.api.get(EP.runRules(state.venue, run.id), {}, { signal });
        learnNames(body.items);
        rules = body.items;
        promoteAll.disabled = !rules.length;
      }
      return { items: rules.slice(offset, offset + limit), total: rules.length, offset, limit };
    },
  });
  const section = h("section", { "aria-labelledby": "own-rules-title", "data-testid": "own-rules-section" },
    h("h4", { id: "own-rules-title" }, "This run's own rules (not the venue's)"),
    h("p", { class: "hint" }, "Pins and forbids made by this run's edits, and quotas set and venue pins lifted by a re-assignment, hold in this run and in a re-solve of it, never in another draft or a new solve. Promote them to make them venue rules for every later solve (a lifted pin is then removed from the venue)."),
    h("div", { class: "toolbar" }, promoteAll), status, table.element);
  section.reload = () => { rules = null; return table.reload(); };
  return section;
}

async function promote(run, rule) {
  const what = rule ? `the ${ruleWords(rule)}` : `every rule of ${runName(run)}`;
  const done = await confirmDialog({
    title: `Promote ${what} to a venue rule?`,
    body: h("p", {}, "Venue rules hold in every later solve and in every run's checks: another draft that breaks one will list it before publishing."),
    confirm: "Promote",
    testid: "promote-dialog",
    onConfirm: () => state.api.post(EP.promoteRules(state.venue, run.id), rule
      ? { rules: [{ kind: rule.kind, paper_id: rule.paper_id, reviewer_id: rule.reviewer_id }] }
      : {}),
  });
  if (!done) return;
  say(`Promoted ${plural(done.total, "rule")} of ${runName(run)} to venue rules.`);
  emit("run-changed", null);
}
