// The Compute tab's affinity tools: the affinity form's request and its estimate before it
// starts (a warning above ten minutes with the faster model one click away), and bringing
// scores computed elsewhere (a scores file becomes the pool's latest affinity run).
import { $, h, fill, formValues } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { duration, estimateText, plural } from "../core/format.js";
import { canWrite, state } from "../core/state.js";
import { confirmDialog } from "../components/dialog.js";
import { say, showError } from "../components/feedback.js";

// ---- the affinity form and its estimate -------------------------------------------------------

const estimate = { timer: null, seq: 0, answer: null, key: "" };

/** The affinity job request of the form: only what the chair chose, everything else takes
 * the server's defaults, which are the command line's (one ScoringParams default). */
export function affinityBody() {
  const values = formValues($("#affinity-form"));
  const config = {};
  if (values.method) config.method = values.method;
  if (values.aggregation) config.aggregation = values.aggregation;
  if (values.model) config.model = values.model;
  const body = { config, pool: state.pool };
  if (values.top_n) body.top_n = values.top_n;
  return body;
}

/** The embedding models this server offers, in the form's model list. */
export async function loadModels() {
  if (!canWrite() || !state.venue) return;
  const answer = await state.api.get(EP.affinityModels(state.venue));
  const select = $("#affinity-model");
  const chosen = select.value;
  fill(select, h("option", { value: "" }, `Default: ${answer.default} (the same as the command line)`),
    answer.models.map((name) => h("option", { value: name }, name)));
  select.value = answer.models.includes(chosen) ? chosen : "";
}

/** The service's estimate of the form's job (texts not yet embedded x the model's rate). */
export async function refreshEstimate() {
  if (!canWrite() || !state.venue) return null;
  const body = affinityBody();
  const seq = ++estimate.seq;
  const { reviewers, submissions } = state.counts ?? {};
  if (reviewers === 0 || submissions === 0) {
    // nothing to score yet: no request (the service would answer 409)
    estimate.answer = null;
    const host = $("#affinity-estimate");
    host.className = "capacity warn";
    fill(host, h("p", {}, `No estimate yet: upload ${reviewers === 0 ? "reviewers" : "submissions"} first.`));
    return null;
  }
  let answer;
  try {
    answer = await state.api.post(EP.estimateAffinity(state.venue), body);
  } catch (error) {
    if (seq !== estimate.seq) return null;
    estimate.answer = null;
    const host = $("#affinity-estimate");
    host.className = "capacity warn";
    // no persons or submissions yet, or a choice the job would refuse: said here, in words
    fill(host, h("p", {}, `No estimate: ${error.message}`));
    return null;
  }
  if (seq !== estimate.seq) return null;
  estimate.answer = answer;
  estimate.key = JSON.stringify(body);
  renderEstimate(answer);
  return answer;
}

export function scheduleEstimate() {
  clearTimeout(estimate.timer);
  estimate.timer = setTimeout(() => { refreshEstimate(); }, 150);
}

export function clearEstimate() {
  estimate.answer = null;
  estimate.seq += 1;
  $("#affinity-estimate").replaceChildren();
}

/** Choose another model in the form (the warning's one-click switch) and estimate again. */
function useModel(name) {
  const select = $("#affinity-model");
  if (![...select.options].some((option) => option.value === name)) select.append(h("option", { value: name }, name));
  select.value = name;
  say(`Model switched to ${name}.`);
  return refreshEstimate();
}

function switchButton(faster) {
  return h("button", { type: "button", class: "small-btn secondary", "data-testid": "use-faster-model",
    onclick: () => { useModel(faster.name); } }, `Use ${faster.name} (about ${duration(faster.seconds)})`);
}

function renderEstimate(answer) {
  const host = $("#affinity-estimate");
  host.className = `capacity ${answer.warn ? "warn" : "ok"}`;
  fill(host,
    h("p", {}, h("strong", {}, answer.warn ? "Long job. " : "Estimate: "), estimateText(answer)),
    answer.warn ? h("p", {}, `Above ${Math.round(answer.warn_above_seconds / 60)} min: a faster model gives scores sooner.`,
      answer.faster_model ? [" ", switchButton(answer.faster_model)] : null) : null);
}

/** Before starting the form's job: the estimate of exactly this request; above ten minutes
 * the chair confirms (or switches to the faster model). True to start. */
export async function confirmLongJob() {
  const answer = estimate.answer && estimate.key === JSON.stringify(affinityBody()) ? estimate.answer : await refreshEstimate();
  if (!answer?.warn) return true;
  const faster = answer.faster_model;
  const choice = await confirmDialog({
    title: "A long affinity job",
    body: [h("p", {}, estimateText(answer)),
      faster ? h("p", {}, `${faster.name} would take about ${duration(faster.seconds)}.`) : null],
    confirm: "Start anyway", cancel: faster ? `Back (then “Use ${faster.name}”)` : "Back", testid: "long-job-dialog",
  });
  return Boolean(choice);
}

export function setupEstimate() {
  const form = $("#affinity-form");
  form.addEventListener("input", scheduleEstimate);
  form.addEventListener("change", scheduleEstimate);
}

// ---- bringing your own scores -------------------------------------------------------------

/** Bring your own scores: a scores file becomes the pool's latest affinity run; a bad file
 * is refused whole with its row-level problems shown inline. */
export function setupScoresUpload({ stored }) {
  const form = $("#affinity-upload-form");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const file = form.querySelector('input[type="file"]').files?.[0];
    const result = form.querySelector(".upload-result");
    if (!file) {
      fill(result, h("div", { class: "error-box", role: "alert" }, "Choose a file first."));
      return;
    }
    const button = event.submitter ?? form.querySelector("button");
    button.disabled = true;
    fill(result, h("p", { class: "muted" }, `Uploading ${file.name}…`));
    try {
      const answer = await state.api.upload(EP.uploadAffinity(state.venue), file, { query: { pool: state.pool } });
      fill(result, h("div", { class: "ok-box", "data-testid": "upload-ok-scores" },
        h("p", {}, `${file.name}: run #${answer.run_id}, ${plural(answer.pairs, "pair")} of ` +
          `${answer.papers} of ${answer.papers_total} papers and ${answer.reviewers} of ${answer.reviewers_total} reviewers` +
          (answer.bids_folded ? `, ${plural(answer.bids_folded, "bid")} folded in.` : ".")),
        answer.warnings?.length ? h("ul", { class: "warn" }, answer.warnings.map((w) => h("li", {}, w))) : null));
      say(`Scores of ${file.name} stored as affinity run #${answer.run_id}.`);
      await stored();
    } catch (error) {
      const box = h("div", { class: "error-box", role: "alert", "data-testid": "upload-error-scores" });
      fill(result, box);
      showError(box, error, `${file.name} was not loaded`);
    } finally {
      button.disabled = false;
    }
  });
}
