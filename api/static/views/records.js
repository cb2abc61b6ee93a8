// The Data tab's records: the venue's submissions and persons (of the pool chosen in the console
// head) listed a page at a time, filtered by text and status; each one edited, withdrawn or
// restored, or deleted (only while nothing refers to it: the service answers 409 otherwise).
// Withdrawing a record of the live run offers the emergency re-assignment without it. A person
// shows their pools; one in another pool too can be taken out of the pool shown (the service
// refuses while the pool's live run assigns them, and for a person's only pool).
import { h } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { jobTitle, plural, POOL_WORDS, runName } from "../core/format.js";
import { invalidateNames } from "../core/names.js";
import { canWrite, emit, on, state } from "../core/state.js";
import { confirmDialog } from "../components/dialog.js";
import { busy, errorBox, say } from "../components/feedback.js";
import { PagedTable } from "../components/table.js";
import { refreshCounts } from "./data.js";
import { jobResult } from "./jobs.js";
import { refreshRuns } from "./runs.js";

const KINDS = {
  submissions: { noun: "submissions", one: "submission", fields: [["title", "Title", "input"], ["abstract", "Abstract", "textarea"]] },
  reviewers: { noun: "persons", one: "person", fields: [["name", "Name", "input"], ["email", "Email", "input"], ["affiliation", "Affiliation", "input"]] },
};

let view = null;

function statusBadge(record) {
  return h("span", { class: `badge ${record.status === "withdrawn" ? "badge-warn" : ""}`, "data-testid": "record-status" }, record.status);
}

function list(kind, query, signal) {
  return kind === "submissions"
    ? state.api.get(EP.submissions(state.venue), query, { signal })
    : state.api.get(EP.reviewers(state.venue), query, { signal });
}

function edit(kind, id, changes) {
  return kind === "submissions"
    ? state.api.patch(EP.submission(state.venue, id), changes)
    : state.api.patch(EP.reviewer(state.venue, id), changes);
}

function remove(kind, id) {
  return kind === "submissions"
    ? state.api.delete(EP.submission(state.venue, id))
    : state.api.delete(EP.reviewer(state.venue, id));
}

async function setStatus(kind, record, status) {
  if (kind === "submissions") {
    return status === "withdrawn"
      ? state.api.post(EP.withdrawSubmission(state.venue, record.id), { reason: record.reason ?? "" })
      : state.api.post(EP.restoreSubmission(state.venue, record.id), {});
  }
  return status === "withdrawn"
    ? state.api.post(EP.withdrawReviewer(state.venue, record.id), { reason: record.reason ?? "" })
    : state.api.post(EP.restoreReviewer(state.venue, record.id), {});
}

/** What a withdrawal did: the runs holding the record's pairs, and per live run the emergency
 * re-assignment without it, one click away. */
function effectsView(answer, host) {
  const parts = [];
  const drafts = answer.runs.filter((r) => r.state === "draft");
  if (drafts.length) {
    parts.push(h("p", {}, `Its pairs in ${drafts.map((r) => `draft #${r.number ?? r.assignment_id} (${plural(r.pairs.length, "pair")})`).join(", ")} `,
      "now break its limit: the drafts' checks list them as to be removed."));
  }
  for (const offer of answer.reassign) {
    const button = h("button", { type: "button", "data-testid": "offer-reassign" }, `Re-assign live run #${offer.number ?? offer.assignment_id} without ${answer.id}`);
    const error = errorBox();
    button.addEventListener("click", () => busy(button, error, async () => {
      const job = await state.api.post(EP.reassignLive(state.venue), offer.body);
      say(`${jobTitle(job)} started: re-assigning without ${answer.id}.`);
      const made = await jobResult(job);
      say(`${runName({ id: made.assignment_id, number: made.assignment_number })} drafted without ${answer.id}: review it, then deploy it.`);
      button.disabled = true;
      await refreshRuns({ select: made.assignment_id });
    }, "Could not re-assign the live run"));
    parts.push(h("div", { class: "warn-box", "data-testid": "withdraw-live" },
      h("p", {}, `${answer.id} has ${plural(answer.runs.find((r) => r.assignment_id === offer.assignment_id)?.pairs.length ?? 0, "pair")} in the live run.`),
      button, error));
  }
  host.replaceChildren(...parts);
}

function actions(kind, record) {
  if (!canWrite()) return "";
  const host = h("div", { class: "row-actions" });
  const editButton = h("button", { type: "button", class: "small-btn secondary", "aria-label": `Edit ${record.id}` }, "Edit");
  const toggle = record.status === "withdrawn"
    ? h("button", { type: "button", class: "small-btn secondary", "aria-label": `Restore ${record.id}` }, "Restore")
    : h("button", { type: "button", class: "small-btn secondary", "aria-label": `Withdraw ${record.id}` }, "Withdraw");
  const deleteButton = h("button", { type: "button", class: "small-btn danger-btn", "aria-label": `Delete ${record.id}` }, "Delete");
  editButton.addEventListener("click", () => editDialog(kind, record));
  toggle.addEventListener("click", () => statusDialog(kind, record));
  deleteButton.addEventListener("click", () => deleteDialog(kind, record));
  host.append(editButton, toggle);
  // out of the pool shown, for a person who is in another too (their only pool: withdraw them)
  const pool = state.pool;
  if (kind === "reviewers" && record.pools?.includes(pool) && record.pools.length > 1) {
    const leave = h("button", { type: "button", class: "small-btn secondary", "aria-label": `Remove ${record.id} from the ${POOL_WORDS[pool]}`, "data-testid": "leave-pool" },
      `Remove from ${POOL_WORDS[pool]}`);
    leave.addEventListener("click", () => leaveDialog(record, pool));
    host.append(leave);
  }
  host.append(deleteButton);
  return host;
}

function poolBadges(record) {
  return h("span", { class: "pool-list", "data-testid": "record-pools" },
    ...(record.pools ?? []).map((pool) => h("span", { class: "badge" }, POOL_WORDS[pool] ?? pool)));
}

async function leaveDialog(record, pool) {
  const others = record.pools.filter((p) => p !== pool).map((p) => POOL_WORDS[p] ?? p).join(", ");
  const answer = await confirmDialog({
    title: `Remove ${record.id} from the ${POOL_WORDS[pool]}`, confirm: "Remove from pool", danger: true, testid: "leave-pool-dialog",
    body: [
      h("p", {}, `${record.id} stays a person of the venue, in: ${others}. Their stored quota among the ${POOL_WORDS[pool]} goes; `,
        "their pairs in this pool's drafts stay, flagged as to be removed by the drafts' checks."),
      h("p", { class: "hint" }, "Refused while this pool's live run assigns them: re-assign it without them first."),
    ],
    onConfirm: () => state.api.delete(EP.reviewerPool(state.venue, record.id, pool)),
  });
  if (!answer) return;
  say(`${record.id} removed from the ${POOL_WORDS[pool]}.`);
  const drafts = answer.runs ?? [];
  view.effects.replaceChildren(...(drafts.length ? [h("p", { "data-testid": "leave-pool-drafts" },
    `${record.id}'s pairs in ${drafts.map((r) => `draft #${r.number ?? r.assignment_id} (${plural(r.pairs.length, "pair")})`).join(", ")} `,
    `are now pairs of a person outside the ${POOL_WORDS[pool]}: the drafts' checks list them as to be removed.`)] : []));
  invalidateNames();
  emit("data", "reviewers");
  await refreshCounts();
}

async function editDialog(kind, record) {
  const inputs = KINDS[kind].fields.map(([name, label, tag]) => {
    const id = `record-edit-${name}`;
    const input = h(tag, { id, name, value: record[name] ?? "" });
    if (tag === "textarea") { input.value = record[name] ?? ""; input.rows = 6; }
    return [name, h("div", { class: "field" }, h("label", { for: id }, label), input), input];
  });
  const done = await confirmDialog({
    title: `Edit ${KINDS[kind].one} ${record.id}`, confirm: "Save", testid: "record-edit",
    body: inputs.map(([, field]) => field),
    onConfirm: () => {
      const changes = {};
      for (const [name, , input] of inputs) if (input.value !== (record[name] ?? "")) changes[name] = input.value;
      return edit(kind, record.id, changes);
    },
  });
  if (done) {
    say(`Saved ${record.id}.`);
    invalidateNames();
    await view.table.reload();
  }
}

async function statusDialog(kind, record) {
  const withdrawing = record.status !== "withdrawn";
  const reason = h("input", { id: "record-reason", maxlength: 1000 });
  const body = withdrawing
    ? [h("p", {}, kind === "submissions"
      ? "A withdrawn submission keeps its history but needs no reviewer: every later solve, edit and deploy check leaves it out."
      : "A withdrawn person keeps their history but takes no paper, in any pool: every later solve, edit and deploy check leaves them out."),
      h("div", { class: "field" }, h("label", { for: "record-reason" }, "Reason (audited)"), reason)]
    : [h("p", {}, `${record.id} will be assignable again from the next solve.`)];
  const answer = await confirmDialog({
    title: `${withdrawing ? "Withdraw" : "Restore"} ${record.id}`, confirm: withdrawing ? "Withdraw" : "Restore",
    danger: withdrawing, body, testid: "record-status-dialog",
    onConfirm: () => setStatus(kind, { ...record, reason: reason.value }, withdrawing ? "withdrawn" : "active"),
  });
  if (!answer) return;
  say(`${record.id} ${withdrawing ? "withdrawn" : "restored"}.`);
  effectsView(answer, view.effects);
  emit("data", kind);
  await refreshCounts();
}

async function deleteDialog(kind, record) {
  const done = await confirmDialog({
    title: `Delete ${record.id}`, confirm: "Delete", danger: true, testid: "record-delete",
    body: h("p", {}, `Deletes ${record.id} with its conflicts, limits and scores. A record with history `,
      "(a run's pair, a bid, a pin, a decline, a token) cannot be deleted: withdraw it instead."),
    onConfirm: () => remove(kind, record.id),
  });
  if (!done) return;
  say(`Deleted ${record.id}.`);
  invalidateNames();
  emit("data", kind);
  await refreshCounts();
}

function columns(kind) {
  const common = [{ label: "Status", render: statusBadge }, { label: "Actions", render: (r) => actions(kind, r) }];
  if (kind === "submissions") {
    return [{ label: "Id", key: "id", rowHeader: true }, { label: "Title", key: "title" }, ...common];
  }
  return [
    { label: "Id", key: "id", rowHeader: true },
    { label: "Name", key: "name" },
    { label: "Affiliation", key: "affiliation" },
    { label: "Pools", render: poolBadges },
    { label: "Publications", num: true, render: (r) => (r.no_publications
      ? h("span", { class: "badge badge-warn", "data-testid": "no-publications", title: "no profile to score this person with" }, "none")
      : String(r.n_publications)) },
    ...common,
  ];
}

function build(kind) {
  const table = new PagedTable({
    label: kind === "submissions" ? "Submissions" : "Persons", noun: KINDS[kind].noun, pageSize: 25,
    testid: "records-table", columns: columns(kind),
    empty: `No ${KINDS[kind].noun} match.`,
    load: ({ offset, limit, signal }) => {
      const query = { offset, limit };
      if (view.text.value.trim()) query.q = view.text.value.trim();
      if (view.status.value) query.status = view.status.value;
      if (kind === "reviewers") query.pool = state.pool;
      return list(kind, query, signal);
    },
  });
  view.host.replaceChildren(table.element);
  view.table = table;
  table.reload();
}

/** The records card of the Data tab. */
export function setupRecords(container) {
  const kind = h("select", { id: "records-kind" },
    h("option", { value: "submissions" }, "Submissions"), h("option", { value: "reviewers" }, "Persons of the pool"));
  const text = h("input", { id: "records-filter", type: "search", maxlength: 300, placeholder: "id, name or title" });
  const status = h("select", { id: "records-status" },
    h("option", { value: "" }, "any"), h("option", { value: "active" }, "active"), h("option", { value: "withdrawn" }, "withdrawn"));
  const effects = h("div", { "data-testid": "record-effects", "aria-live": "polite" });
  const host = h("div");
  view = { kind, text, status, effects, host, table: null };
  let timer = null;
  text.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => view.table?.restart(), 250); });
  status.addEventListener("change", () => view.table?.restart());
  kind.addEventListener("change", () => { effects.replaceChildren(); build(kind.value); });
  container.append(h("section", { class: "card", "aria-labelledby": "records-title", "data-testid": "records" },
    h("h3", { id: "records-title" }, "Records"),
    h("div", { class: "inline-form" },
      h("div", { class: "field" }, h("label", { for: "records-kind" }, "Records to list"), kind),
      h("div", { class: "field" }, h("label", { for: "records-filter" }, "Filter records"), text),
      h("div", { class: "field" }, h("label", { for: "records-status" }, "Record status"), status)),
    effects, host));
  on("venue", () => { effects.replaceChildren(); build(kind.value); });
  on("pool", () => { if (kind.value === "reviewers") build(kind.value); });
  on("data", (what) => { if (what === "reviewers" || what === "submissions") view.table?.reload(); });
}

export function refreshRecords() {
  if (view) build(view.kind.value);
}
