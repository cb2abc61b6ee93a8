// The Data tab: the venue's sizes and the uploads, each reporting every bad row inline.
import { $, $$, h, fill } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { invalidateNames } from "../core/names.js";
import { emit, on, setCounts, state } from "../core/state.js";
import { globalError, say, showError } from "../components/feedback.js";
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
  const [reviewers, submissions] = await Promise.all([
    state.api.page(EP.reviewers(venue), { limit: 1 }),
    state.api.page(EP.submissions(venue), { limit: 1 }),
  ]);
  if (venue !== state.venue) return;
  setCounts({ reviewers: reviewers.total, submissions: submissions.total });
  fill($("#data-summary"),
    stat("reviewers", reviewers.total), stat("submissions", submissions.total),
    stat("assignment runs", state.runs.length));
  emit("counts", state.counts);
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
      fill(result, h("p", { class: "muted" }, `Uploading ${file.name}…`));
      try {
        // persons and their quotas go to the pool chosen in the console head
        const query = POOLED_KINDS.includes(kind) ? { pool: state.pool } : undefined;
        const answer = await state.api.upload(EP.upload(state.venue, kind), file, { query });
        const parts = [];
        if (answer && typeof answer === "object") {
          if ("created" in answer) parts.push(`${answer.created} new`);
          if ("updated" in answer) parts.push(`${answer.updated} updated`);
          if ("total" in answer) parts.push(`${answer.total} ${kind} in the venue`);
        }
        fill(result, h("div", { class: "ok-box", "data-testid": `upload-ok-${kind}` },
          `${file.name}: loaded ${KIND_WORDS[kind] ?? kind}${parts.length ? " — " + parts.join(", ") : ""}.`));
        say(`Uploaded ${KIND_WORDS[kind] ?? kind} from ${file.name}.`);
        if (kind === "reviewers" || kind === "submissions") {
          invalidateNames();
          await refreshCounts();
        }
        emit("data", kind);
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
