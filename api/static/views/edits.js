// Changes of a draft, each previewed before it applies (score change, loads, constraint
// warnings: the service computes the edit in a transaction it rolls back), undo of the last
// edits, the draft's own pins and forbids (promoted to venue rules on request), the venue's
// pins and forbids with remove, and HotCRP-style bulk change upload with
// a preview of additions, removals and warnings before applying.
import { h, fill } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { dateTime, niceNumber, plural, runName, signed } from "../core/format.js";
import { learnNames, paperTitle, reviewerName } from "../core/names.js";
import { canWrite, emit, state, updateRun } from "../core/state.js";
import { paperCell, reviewerCell } from "../components/cells.js";
import { confirmDialog } from "../components/dialog.js";
import { busy, errorBox, problemTable, say, UserError } from "../components/feedback.js";
import { PagedTable, simpleTable } from "../components/table.js";
import { violationList } from "../components/violations.js";
import { ownRulesSection } from "./rules.js";
import { refreshRuns } from "./runs.js";

const ACTION_WORDS = {
  pin: "Pin", unpin: "Unpin", forbid: "Forbid", unforbid: "Allow again", swap: "Swap",
  assign: "Assign", remove: "Remove",
};

const ACTION_HELP = {
  pin: "adds the pair if needed and keeps it in re-solves of this draft (promote it to make it a venue rule)",
  unpin: "keeps the pair in this draft, but re-solves may drop it",
  forbid: "removes the pair and keeps it out of re-solves of this draft (promote it to make it a venue rule)",
  unforbid: "lets re-solves of this draft choose the pair again",
  swap: "replaces a reviewer of the paper (a forbid and a pin of this draft, so its re-solves keep it; other drafts are not changed)",
  assign: "adds the pair to this draft only",
  remove: "removes the pair from this draft only",
};

/** The run as the page knows it now (views may hold an older copy: the version moves). */
const latest = (run) => state.runs.find((r) => r.id === run.id) ?? run;

const rName = (id, name) => name || reviewerName(id) || id;
const pTitle = (id, title) => title || paperTitle(id) || id;

/** "Swap on “Paper”: Ada out, Bob in" — an edit in words. */
export function editHeadline(edit) {
  const paper = `“${pTitle(edit.paper_id, edit.paper_title)}”`;
  const reviewer = rName(edit.reviewer_id, edit.reviewer_name);
  switch (edit.action) {
    case "swap": return `Swap on ${paper}: ${rName(edit.remove_reviewer_id, edit.remove_reviewer_name)} out, ${reviewer} in`;
    case "assign": return `Assign ${reviewer} to ${paper}`;
    case "remove": return `Remove ${reviewer} from ${paper}`;
    case "pin": return `Pin ${reviewer} to ${paper}`;
    case "unpin": return `Unpin ${reviewer} from ${paper}`;
    case "forbid": return `Forbid ${reviewer} for ${paper}`;
    case "unforbid": return `Allow ${reviewer} for ${paper} again`;
    default: return `${edit.action} ${reviewer} / ${paper}`;
  }
}

function pairList(title, pairs, cls) {
  if (!pairs?.length) return null;
  return h("div", { class: `effect-pairs ${cls}` }, h("h4", {}, title), h("ul", {}, pairs.map((p) => h("li", {},
    `${rName(p.reviewer_id, p.reviewer_name)} → “${pTitle(p.paper_id, p.paper_title)}”`,
    h("span", { class: "muted" }, ` score ${niceNumber(p.score)}${p.pinned ? ", pinned" : ""}`)))));
}

/** The effect of an edit (EditEffectOut) as elements: score change, pairs, loads, papers,
 * constraints and warnings. */
export function effectView(effect) {
  learnNames([...(effect.added ?? []), ...(effect.removed ?? []), ...(effect.loads ?? []), ...(effect.papers ?? [])]);
  const parts = [];
  if (typeof effect.objective_change === "number") {
    const change = effect.objective_change;
    parts.push(h("p", { class: `score-change ${change < 0 ? "down" : change > 0 ? "up" : ""}`, "data-testid": "score-change" },
      h("strong", {}, "Total score: "),
      `${niceNumber(effect.objective_before)} → ${niceNumber(effect.objective_after)} (${signed(change)})`));
  }
  parts.push(pairList("Added", effect.added, "added"), pairList("Removed", effect.removed, "removed"));
  if (effect.loads?.length) {
    parts.push(h("h4", {}, "Reviewer loads"), simpleTable([
      { label: "Reviewer", render: (l) => rName(l.reviewer_id, l.reviewer_name) },
      { label: "Load", num: true, render: (l) => h("span", { class: l.max_load != null && l.after > l.max_load ? "over" : "" },
        `${l.before} → ${l.after}${l.max_load != null ? ` of ${l.max_load}` : ""}`) },
    ], effect.loads, { "aria-label": "Reviewer loads before and after" }));
  }
  if (effect.papers?.length) {
    parts.push(h("h4", {}, "Papers"), simpleTable([
      { label: "Paper", render: (p) => pTitle(p.paper_id, p.paper_title) },
      { label: "Reviewers", num: true, render: (p) => h("span", { class: p.demand != null && p.after !== p.demand ? "over" : "" },
        `${p.before} → ${p.after}${p.demand != null ? ` of ${p.demand}` : ""}`) },
    ], effect.papers, { "aria-label": "Paper reviewers before and after" }));
  }
  const c = effect.constraints ?? {};
  const constraintWords = [
    c.pins_added ? `${plural(c.pins_added, "pin")} added` : "", c.pins_removed ? `${plural(c.pins_removed, "pin")} removed` : "",
    c.forbids_added ? `${plural(c.forbids_added, "forbid")} added` : "", c.forbids_removed ? `${plural(c.forbids_removed, "forbid")} removed` : "",
  ].filter(Boolean);
  if (constraintWords.length) parts.push(h("p", {}, h("strong", {}, "For re-solves: "), constraintWords.join(", "), "."));
  if (typeof effect.violations_after === "number" && effect.violations_after !== effect.violations_before) {
    parts.push(h("p", { class: effect.violations_after > (effect.violations_before ?? 0) ? "over" : "" },
      `Hard constraints the run breaks: ${effect.violations_before ?? 0} now, ${effect.violations_after} after this change.`));
  }
  parts.push(
    violationList("Newly broken", effect.violations_new, effect.violations_new_total, { cls: "over", testid: "violations-new" }),
    violationList("Mended", effect.violations_fixed, effect.violations_fixed_total, { testid: "violations-fixed" }));
  if (effect.warnings?.length) {
    parts.push(h("div", { class: "warn-box", "data-testid": "edit-warnings" }, h("strong", {}, "Warnings"),
      h("ul", {}, effect.warnings.map((w) => h("li", {}, w)))));
  }
  return h("div", { class: "effect", "data-testid": "edit-effect" }, parts);
}

/**
 * Preview an edit, show its effect, apply it on confirmation (with `force` when the service
 * allows going over a limit and the chair agrees). Resolves to the edit result or null.
 * @param {object} run the draft
 * @param {{action:string, paper_id:string, reviewer_id:string, remove_reviewer_id?:string,
 *   paper_title?:string, reviewer_name?:string, remove_reviewer_name?:string}} edit
 */
export async function editDialog(shownRun, edit) {
  let run = latest(shownRun);
  const body = {
    action: edit.action, paper_id: edit.paper_id, reviewer_id: edit.reviewer_id,
    remove_reviewer_id: edit.remove_reviewer_id, version: run.version,
  };
  let effect = await state.api.post(EP.editPreview(state.venue, run.id), body);
  if (!effect.allowed && effect.code === "stale_version") {
    // someone changed the run since this page loaded it: preview on the current version
    await refreshRuns();
    run = latest(run);
    body.version = run.version;
    effect = await state.api.post(EP.editPreview(state.venue, run.id), body);
    emit("run-changed", run);
  }
  const headline = editHeadline(edit);
  const overLimit = !effect.allowed && effect.code === "would_overfill" && effect.force_allowed;
  const reason = h("input", { type: "text", id: "edit-reason", maxlength: 1000, placeholder: "optional, kept in the history and the audit log" });
  const content = [
    h("p", { class: "muted" }, `${ACTION_WORDS[edit.action] ?? edit.action} ${ACTION_HELP[edit.action] ?? ""}.`),
    effect.allowed || overLimit ? effectView(effect) : null,
    !effect.allowed ? h("div", { class: overLimit ? "warn-box" : "error-box", "data-testid": "edit-refusal" },
      h("p", {}, h("strong", {}, overLimit ? "Over a limit: " : "Not possible: "), effect.detail || effect.code)) : null,
    effect.allowed || overLimit ? h("div", { class: "field" }, h("label", { for: "edit-reason" }, "Reason"), reason) : null,
  ];
  if (!effect.allowed && !overLimit) {
    await confirmDialog({ title: headline, body: content, confirm: "Close", cancel: "Cancel", testid: "edit-dialog" });
    return null;
  }
  return confirmDialog({
    title: headline, body: content, testid: "edit-dialog",
    confirm: overLimit ? `${ACTION_WORDS[edit.action] ?? "Apply"} over the limit` : `Apply: ${ACTION_WORDS[edit.action] ?? edit.action}`,
    onConfirm: async () => {
      const result = await state.api.post(EP.edits(state.venue, run.id), {
        ...body, reason: reason.value.trim(), force: overLimit,
      });
      say(`${headline}: done${typeof result.effect?.objective_change === "number" ? ` (total score ${signed(result.effect.objective_change)})` : ""}. Undo is under Changes.`);
      updateRun(result.assignment);
      return result;
    },
  });
}

/** Run an edit dialog from a button, with errors in the page-wide panel. */
export function editButton(run, edit, label, attrs = {}) {
  return h("button", {
    type: "button", class: `small-btn ${attrs.class ?? "secondary"}`, "aria-label": attrs.ariaLabel ?? `${label}: ${editHeadline(edit)}`,
    "data-action": edit.action, "data-focus-key": `${edit.paper_id}\u0000${edit.reviewer_id}`,
    onclick: (event) => busy(event.currentTarget, null, () => editDialog(run, edit), label),
  }, label);
}

/** The actions of an assigned pair in a draft: remove, forbid, pin/unpin, swap. */
export function pairActions(run, pair) {
  if (run.state !== "draft" || !canWrite()) return "";
  const base = { paper_id: pair.paper_id, paper_title: pair.paper_title, reviewer_id: pair.reviewer_id, reviewer_name: pair.reviewer_name };
  return h("span", { class: "actions" },
    pair.pinned
      ? editButton(run, { ...base, action: "unpin" }, "Unpin")
      : [editButton(run, { ...base, action: "remove" }, "Remove"), editButton(run, { ...base, action: "pin" }, "Pin")],
    editButton(run, { ...base, action: "forbid" }, "Forbid", { class: "danger-btn" }),
    pair.pinned ? null : h("button", { type: "button", class: "small-btn secondary", "aria-label": `Swap ${rName(pair.reviewer_id, pair.reviewer_name)} on “${pTitle(pair.paper_id, pair.paper_title)}”`,
      onclick: () => emit("browse", { paper: pair.paper_id, swapOut: pair.reviewer_id }) }, "Swap…"));
}

// ---- the changes card: undo and history, pins and forbids, bulk upload ------------------------

/** The Changes card of the Assignment tab (chairs): edit history with undo on drafts, the
 * venue's pins and forbids, and the bulk change upload. */
export function changesCard(run) {
  const card = buildChangesCard(run);
  return card;
}

function buildChangesCard(run) {
  const draft = run.state === "draft";
  const status = errorBox();
  const parts = [h("h3", { id: "changes-title" }, "Changes")];
  if (!draft) {
    parts.push(h("p", { class: "muted" }, `${runName(run)} is ${run.state}: re-solve it for an editable draft (its own rules come along). Venue rules below apply to every solve.`));
  }
  const history = draft ? historyTable(run) : null;
  const versionLine = h("span", { class: "muted", "data-testid": "draft-version" });
  const showVersion = (current) => {
    versionLine.textContent = `Version ${current.version}${current.version > 1 ? ` (${plural(current.version - 1, "change")} so far, undos included)` : ""}`;
  };
  showVersion(run);
  if (draft) {
    parts.push(h("div", { class: "toolbar" },
      h("button", { type: "button", "data-testid": "undo", onclick: (event) => busy(event.currentTarget, status, () => undo(run), "Undoing") }, "Undo last edit"),
      versionLine),
    status, h("h4", {}, "Edit history"), history.element);
  }
  const own = ownRulesSection(run, editButton);
  parts.push(own);
  const pins = constraintTable(run, "pins");
  const forbids = constraintTable(run, "forbids");
  parts.push(h("div", { class: "grid2" },
    h("section", { "aria-labelledby": "pins-title" }, h("h4", { id: "pins-title" }, "Venue rules: pinned pairs (every solve)"), pins.element),
    h("section", { "aria-labelledby": "forbids-title" }, h("h4", { id: "forbids-title" }, "Venue rules: forbidden pairs (every solve)"), forbids.element)));
  if (draft) parts.push(bulkForm(run));
  const card = h("section", { class: "card", id: "changes-card", "aria-labelledby": "changes-title", "data-testid": "changes", dataset: { state: run.state } }, parts);
  /** Show the run's new state (after an edit or an undo) without rebuilding the card. */
  card.refresh = (current) => {
    showVersion(current);
    return Promise.all([history?.reload(), own.reload(), pins.reload(), forbids.reload()]);
  };
  card.refresh(run);
  return card;
}

async function undo(shownRun) {
  const run = latest(shownRun);
  try {
    const result = await state.api.post(EP.undo(state.venue, run.id), { version: run.version });
    const edit = result.edit;
    say(`Undid: ${edit ? editHeadline(edit) : "the last edit"}. ${runName(result.assignment)} is at version ${result.assignment.version}.`);
    updateRun(result.assignment);
  } catch (error) {
    if (error?.code === "nothing_to_undo") throw new UserError(`${runName(run)} has no edit left to undo.`);
    throw error;
  }
}

function historyTable(run) {
  return new PagedTable({
    label: "Edit history", noun: "edits", testid: "edit-history", pageSize: 10,
    empty: "No edits yet: this draft is as the solver left it.",
    columns: [
      { label: "#", num: true, render: (e) => e.seq ?? e.id },
      { label: "Change", render: (e) => h("span", { class: e.undone ? "undone" : "" },
        e.summary || (e.rows != null ? `bulk change of ${plural(e.rows, "row")}` : editHeadline(e)),
        e.undone ? h("span", { class: "tag alternate" }, "undone") : null) },
      { label: "Score change", num: true, render: (e) => signed(e.objective_change) },
      { label: "By", render: (e) => `${e.actor} · ${dateTime(e.at)}` },
      { label: "Reason", render: (e) => e.reason || "–" },
    ],
    load: ({ offset, limit, signal }) => state.api.page(EP.edits(state.venue, run.id), { offset, limit }, { signal }),
  });
}

function constraintTable(run, kind) {
  const label = kind === "pins" ? "Pinned pairs" : "Forbidden pairs";
  const columns = [
    { label: "Paper", render: (p) => paperCell(p.paper_id, { title: p.paper_title, max: 50 }) },
    { label: "Reviewer", render: (p) => reviewerCell(p.reviewer_id, { name: p.reviewer_name }) },
  ];
  if (kind === "forbids") columns.push({ label: "Reason", render: (p) => p.reason || "–" });
  columns.push({ label: "", render: (p) => h("button", { type: "button", class: "small-btn secondary",
    "aria-label": `Remove the ${kind === "pins" ? "pin" : "forbid"} of ${rName(p.reviewer_id, p.reviewer_name)} on “${pTitle(p.paper_id, p.paper_title)}”`,
    onclick: (event) => busy(event.currentTarget, null, () => removeVenueConstraint(kind, p), "Removing") }, "Remove") });
  const table = new PagedTable({
    label, noun: kind, testid: kind, pageSize: 10, columns,
    empty: kind === "pins" ? "No pinned pairs." : "No forbidden pairs.",
    load: async ({ offset, limit, signal }) => learnPage(await state.api.page(kind === "pins" ? EP.pins(state.venue) : EP.forbids(state.venue), { offset, limit }, { signal })),
  });
  return table;
}

function learnPage(page) {
  learnNames(page.items);
  return page;
}

async function removeVenueConstraint(kind, pair) {
  const what = kind === "pins" ? "pin" : "forbid";
  const done = await confirmDialog({
    title: `Remove the ${what} of ${rName(pair.reviewer_id, pair.reviewer_name)} on “${pTitle(pair.paper_id, pair.paper_title)}”?`,
    body: h("p", {}, kind === "pins"
      ? "Later re-solves may then leave this pair out. Runs that exist are not changed."
      : "Later re-solves may then choose this pair again. Runs that exist are not changed."),
    confirm: `Remove the ${what}`,
    onConfirm: () => state.api.delete(kind === "pins" ? EP.venuePin(state.venue, pair.paper_id, pair.reviewer_id) : EP.venueForbid(state.venue, pair.paper_id, pair.reviewer_id)),
  });
  if (done) {
    say(`Removed the ${what} of ${rName(pair.reviewer_id, pair.reviewer_name)} on “${pTitle(pair.paper_id, pair.paper_title)}”.`);
    emit("run-changed", null);
  }
}

// ---- bulk change upload -------------------------------------------------------------------

function bulkForm(run) {
  const input = h("input", { id: "bulk-file", type: "file", accept: ".csv,text/csv", required: true });
  const result = h("div", { class: "bulk-result", "data-testid": "bulk-preview", "aria-live": "polite" });
  const error = errorBox();
  const form = h("form", { class: "bulk-form", onsubmit: (event) => {
    event.preventDefault();
    const file = input.files?.[0];
    busy(event.submitter, error, async () => {
      if (!file) throw new UserError("Choose a CSV file first.");
      await bulkPreview(run, file, result);
    }, `Previewing ${file?.name ?? "the file"}`);
  } },
  h("h4", {}, "Bulk change"),
  h("p", { class: "hint" }, "CSV ", h("code", {}, "paper_id,reviewer_id,action"), " with actions ", h("code", {}, "add"), " and ",
    h("code", {}, "remove"), " (also pin, unpin, forbid, unforbid). Nothing changes until you apply the preview."),
  h("div", { class: "inline-form" }, h("div", { class: "field" }, h("label", { for: "bulk-file" }, "Bulk change file"), input),
    h("button", { type: "submit" }, "Preview changes")),
  error, result);
  return form;
}

const BULK_LISTS = [
  ["additions", "Additions", "added"], ["removals", "Removals", "removed"], ["constraint_changes", "Pins and forbids", ""],
];

async function bulkPreview(run, file, host) {
  const post = (query) => {
    const form = new FormData();
    form.append("file", file, file.name);
    return state.api.request("POST", EP.bulkPreview(state.venue, run.id), { form, query });
  };
  let preview;
  try {
    preview = await post({ limit: 50, offset: 0 });
  } catch (error) {
    if (error?.code !== "invalid_rows") throw error;
    const rows = error.body?.errors ?? [];
    fill(host, h("div", { class: "error-box", role: "alert", "data-testid": "bulk-errors" },
      h("p", {}, `${file.name}: no line changes the run — ${plural(rows.length, "bad row")}.`),
      problemTable(rows.map((r) => ({ file: file.name, line: r.line, field: r.field, message: r.message })), `${plural(rows.length, "bad row")}`)));
    return;
  }
  const listTable = (key, label, cls) => {
    const table = new PagedTable({
      label: `${label} in ${file.name}`, noun: "rows", pageSize: 50, testid: `bulk-${key}`,
      columns: [
        { label: "Line", num: true, key: "line" },
        { label: "Action", render: (r) => h("span", { class: `tag ${cls}` }, r.action) },
        { label: "Paper", render: (r) => paperCell(r.paper_id, { title: r.paper_title, max: 50, open: false }) },
        { label: "Reviewer", render: (r) => reviewerCell(r.reviewer_id, { name: r.reviewer_name, open: false }) },
        { label: "Score", num: true, render: (r) => niceNumber(r.score) },
      ],
      load: async ({ offset, limit }) => (offset === 0 && limit === 50 ? preview : await post({ offset, limit }))[key],
    });
    return table;
  };
  const errors = preview.errors?.items ?? [];
  const warnings = preview.warnings?.items ?? [];
  const sections = [];
  sections.push(h("p", { class: "bulk-counts", "data-testid": "bulk-counts" },
    h("strong", {}, `${file.name}: ${plural(preview.rows, "row")} — ${preview.applied_rows} to apply, ${preview.skipped_lines} skipped; `),
    `${plural(preview.additions?.total ?? 0, "addition")}, ${plural(preview.removals?.total ?? 0, "removal")}, ` +
    `${plural(preview.constraint_changes?.total ?? 0, "pin/forbid change")}, ${plural(preview.warnings?.total ?? 0, "warning")}.`));
  if (errors.length) {
    sections.push(h("div", { class: "error-box", "data-testid": "bulk-errors" },
      h("p", {}, h("strong", {}, `Skipped lines (${preview.skipped_lines}): they will not apply; the others will.`)),
      problemTable(errors.map((r) => ({ file: file.name, line: r.line, field: r.field, message: r.message })), `${plural(preview.errors.total, "problem")}`)));
  }
  if (warnings.length) {
    sections.push(h("div", { class: "warn-box", "data-testid": "bulk-warnings" }, h("strong", {}, `Warnings (${preview.warnings.total})`),
      h("ul", {}, warnings.map((w) => h("li", {}, `line ${w.line ?? "–"}: ${w.message}${w.force_required ? " (needs “apply over the limits”)" : ""}`)))));
  }
  if (preview.effect) sections.push(effectView({ ...preview.effect, warnings: [] }));
  for (const [key, label, cls] of BULK_LISTS) {
    if (preview[key]?.total) {
      const table = listTable(key, label, cls);
      sections.push(h("h5", {}, `${label} (${preview[key].total})`), table.element);
      table.reload();
    }
  }
  const force = h("input", { type: "checkbox", id: "bulk-force" });
  const reason = h("input", { type: "text", id: "bulk-reason", maxlength: 1000, placeholder: "optional" });
  const applyError = errorBox();
  if (preview.can_apply) {
    sections.push(h("div", { class: "inline-form bulk-apply" },
      preview.force_required ? h("label", { class: "check", for: "bulk-force" }, force, "Apply over the limits (the warnings above)") : null,
      h("div", { class: "field" }, h("label", { for: "bulk-reason" }, "Reason"), reason),
      h("button", { type: "button", "data-testid": "bulk-apply", onclick: (event) => busy(event.currentTarget, applyError, async () => {
        if (preview.force_required && !force.checked) throw new UserError("Some additions go over a limit: tick “Apply over the limits”, or fix the file.");
        const form = new FormData();
        form.append("file", file, file.name);
        form.append("version", String(preview.version ?? latest(run).version));
        form.append("force", force.checked ? "true" : "false");
        form.append("reason", reason.value.trim());
        const result = await state.api.request("POST", EP.bulkApply(state.venue, run.id), { form });
        const skipped = result.skipped?.length ? `; ${plural(new Set(result.skipped.map((p) => p.line)).size, "line")} skipped` : "";
        say(`Applied ${file.name} to ${runName(result.assignment)}: ${plural(result.effect.added_total, "pair")} added, ${plural(result.effect.removed_total, "pair")} removed${skipped}. Undo reverts the whole file.`);
        updateRun(result.assignment);
      }, `Applying ${file.name}`) }, `Apply ${file.name}`)), applyError);
  } else {
    sections.push(h("p", { class: "muted" }, "No line of the file changes the run: nothing to apply."));
  }
  fill(host, sections);
}
