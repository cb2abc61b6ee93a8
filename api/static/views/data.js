// The Data tab: the venue's sizes and the uploads, each reporting every bad row inline.
import { $, $$, h, fill } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { invalidateNames } from "../core/names.js";
import { emit, on, setCounts, state } from "../core/state.js";
import { globalError, problemTable, say, showError } from "../components/feedback.js";
import { setupRecords } from "./records.js";
import { registerView } from "./tabs.js";

const KIND_WORDS = {
  reviewers: "reviewers", submissions: "submissions", bids: "bids", constraints: "conflicts and fixed pairs",
  "paper-demands": "paper demands", "reviewer-max-loads": "reviewer quotas",
};

const POOLED_KINDS = ["reviewers", "paper-demands", "reviewer-max-loads"];

function stat(label, value) {
  return h("div", { class: "stat" }, h("b", {}, value), h("span", {}, label));
}

/** Count the venue's reviewers and submissions (one small page each). */
export async function refreshCounts() {
  const venue = state.venue;
  const [reviewers, submissions, gonePersons, gonePapers] = await Promise.all([
    state.api.page(EP.reviewers(venue), { limit: 1 }),
    state.api.page(EP.submissions(venue), { limit: 1 }),
    state.api.page(EP.reviewers(venue), { limit: 1, status: "withdrawn" }),
    state.api.page(EP.submissions(venue), { limit: 1, status: "withdrawn" }),
  ]);
  if (venue !== state.venue) return;
  setCounts({ reviewers: reviewers.total, submissions: submissions.total });
  const withdrawn = (count) => (count ? ` (${count} withdrawn)` : "");
  fill($("#data-summary"),
    stat(`reviewers${withdrawn(gonePersons.total)}`, reviewers.total),
    stat(`submissions${withdrawn(gonePapers.total)}`, submissions.total),
    stat("assignment runs", state.runs.length));
  emit("counts", state.counts);
}

/** What uploading the file would change (reviewers and submissions); null for other kinds. */
function previewUpload(kind, file, query) {
  if (kind === "reviewers") return state.api.upload(EP.previewReviewers(state.venue), file, { query });
  if (kind === "submissions") return state.api.upload(EP.previewSubmissions(state.venue), file, { query });
  return null;
}

function idList(label, ids, total, testid) {
  if (!total) return null;
  const more = total > ids.length ? ` (first ${ids.length} of ${total})` : "";
  return h("details", { "data-testid": testid }, h("summary", {}, `${label}: ${total}${more}`),
    h("p", { class: "id-list" }, ids.join(", ")));
}

/** What replacing does to the records the file leaves out: withdrawn (their history stays), and
 * for persons in another pool too, out of this pool only. */
function replaceLabel(kind, noun, diff) {
  const withdrawing = diff.withdrawing ?? diff.removed;
  const leaving = diff.leaving_pool ?? 0;
  const parts = [];
  if (withdrawing) {
    parts.push(`withdraw the ${withdrawing} ${noun} not in the file (their history stays` +
      `${kind === "reviewers" ? "; a withdrawn person takes no paper in any pool" : ""})`);
  }
  if (leaving) parts.push(`take the ${leaving} leaving this pool out of it (they stay in their other pools)`);
  const text = parts.join(", and ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The diff of a replacing upload, with Apply (optionally withdrawing the records the file
 * leaves out) and Cancel; resolves to the query to apply with, or null when cancelled. */
function diffView(kind, file, diff, result) {
  const noun = kind === "reviewers" ? "persons" : "submissions";
  const withdraw = h("input", { type: "checkbox", id: `withdraw-absent-${kind}` });
  const apply = h("button", { type: "button", "data-testid": `apply-upload-${kind}` }, "Apply this upload");
  const cancel = h("button", { type: "button", class: "secondary" }, "Cancel");
  fill(result, h("div", { class: "warn-box", "data-testid": `upload-diff-${kind}` },
    h("p", {}, h("strong", {}, `${file.name} would change the venue's ${noun}:`)),
    h("p", { class: "diff-counts", "data-testid": `diff-counts-${kind}` },
      h("span", {}, `${diff.added} added`), h("span", {}, `${diff.changed} changed`),
      h("span", {}, `${diff.unchanged} unchanged`), h("span", {}, `${diff.removed} not in the file`)),
    idList("Added", diff.added_ids, diff.added, "diff-added"),
    idList(`Changed (${Object.entries(diff.changed_fields).map(([f, n]) => `${f} ${n}`).join(", ")})`, diff.changed_ids, diff.changed, "diff-changed"),
    idList("Not in the file", diff.removed_ids, diff.removed, "diff-removed"),
    diff.no_publications.length ? h("p", { "data-testid": "diff-no-publications" },
      `${diff.no_publications.length} without publications (nothing to score them with): ${diff.no_publications.slice(0, 20).join(", ")}`) : null,
    diff.withdrawn_named.length ? h("p", { "data-testid": "diff-withdrawn-named" },
      `${diff.withdrawn_named.length} withdrawn ${noun} in the file stay withdrawn (restore them under Records): ` +
      diff.withdrawn_named.slice(0, 20).join(", ")) : null,
    idList(`Leaving this pool only (in another pool too, where they stay)`, diff.leaving_pool_ids ?? [], diff.leaving_pool ?? 0, "diff-leaving-pool"),
    diff.leaving_assigned?.length ? h("p", { class: "error-message", "data-testid": "diff-leaving-assigned" },
      `The live run of this pool assigns ${diff.leaving_assigned.join(", ")}: a replace is refused until it is re-assigned without them.`) : null,
    diff.removed ? h("div", { class: "field checkbox" }, withdraw,
      h("label", { for: withdraw.id }, replaceLabel(kind, noun, diff))) : null,
    h("div", { class: "dialog-actions" }, cancel, apply)));
  return new Promise((resolve) => {
    cancel.addEventListener("click", () => { fill(result, h("p", { class: "muted" }, `${file.name} was not applied.`)); resolve(null); });
    apply.addEventListener("click", () => resolve({ preview: diff.token, withdraw_absent: withdraw.checked ? "true" : undefined }));
  });
}

function loadedText(kind, file, answer) {
  const parts = [];
  if (answer && typeof answer === "object") {
    if ("created" in answer) parts.push(`${answer.created} new`);
    if ("updated" in answer) parts.push(`${answer.updated} updated`);
    if (answer.withdrawn) parts.push(`${answer.withdrawn} withdrawn`);
    if (answer.left_pool) parts.push(`${answer.left_pool} out of the pool`);
    if ("total" in answer) parts.push(`${answer.total} ${kind} in the venue`);
  }
  return `${file.name}: loaded ${KIND_WORDS[kind] ?? kind}${parts.length ? " — " + parts.join(", ") : ""}.`;
}

function loadedView(kind, file, answer) {
  // HotCRP style (bids, constraints, demands, quotas): the valid lines loaded, the others listed
  const skipped = answer?.skipped ?? [];
  const lines = answer?.skipped_lines ?? new Set(skipped.map((p) => p.line)).size;
  const bare = answer?.no_publications ?? [];
  return h("div", { class: "ok-box", "data-testid": `upload-ok-${kind}` }, loadedText(kind, file, answer),
    bare.length ? h("p", { "data-testid": "upload-no-publications" },
      `${bare.length} without publications (flagged in the records list): ${bare.slice(0, 20).join(", ")}`) : null,
    skipped.length ? h("div", { "data-testid": `upload-skipped-${kind}` },
      problemTable(skipped.map((p) => ({ file: file.name, ...p })),
        `${lines} line${lines === 1 ? "" : "s"} skipped; the others were loaded`)) : null);
}

async function uploadFile(kind, file, result) {
  // persons and their quotas go to the pool chosen in the console head
  const pooled = POOLED_KINDS.includes(kind) ? { pool: state.pool } : {};
  let query = pooled;
  if (kind === "reviewers" || kind === "submissions") {
    fill(result, h("p", { class: "muted" }, `Comparing ${file.name} with the venue…`));
    const diff = await previewUpload(kind, file, pooled);
    // a first upload only adds: nothing to confirm
    const confirmed = diff.changed || diff.removed || diff.withdrawn_named.length
      ? await diffView(kind, file, diff, result) : { preview: diff.token };
    if (!confirmed) return;
    query = { ...pooled, ...Object.fromEntries(Object.entries(confirmed).filter(([, v]) => v !== undefined)) };
  }
  fill(result, h("p", { class: "muted" }, `Uploading ${file.name}…`));
  const answer = await state.api.upload(EP.upload(state.venue, kind), file, { query });
  fill(result, loadedView(kind, file, answer));
  say(`Uploaded ${KIND_WORDS[kind] ?? kind} from ${file.name}.`);
  if (kind === "reviewers" || kind === "submissions") {
    invalidateNames();
    await refreshCounts();
  }
  emit("data", kind);
}

function setupUploads() {
  for (const form of $$(".upload-form")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const kind = form.dataset.kind;
      const input = form.querySelector('input[type="file"]');
      const result = form.querySelector(".upload-result");
      const button = form.querySelector("button");
      const file = input.files?.[0];
      if (!file) {
        fill(result, h("div", { class: "error-box", role: "alert" }, "Choose a file first."));
        return;
      }
      button.disabled = true;
      try {
        await uploadFile(kind, file, result);
      } catch (error) {
        const box = h("div", { class: "error-box", role: "alert", "data-testid": `upload-error-${kind}` });
        fill(result, box);
        showError(box, error, `${file.name} was not loaded`);
      } finally {
        button.disabled = false;
      }
    });
  }
}

export function setupData() {
  setupUploads();
  setupRecords($("#panel-data"));
  registerView("tab-data", refreshCounts);
  on("runs", () => {
    const runs = $("#data-summary .stat:nth-child(3) b");
    if (runs) runs.textContent = String(state.runs.length);
  });
  on("venue", () => {
    fill($("#data-summary"), h("span", { class: "muted" }, "Loading…"));
    refreshCounts().catch((error) => globalError(error, "Counting reviewers and submissions"));
  });
}
