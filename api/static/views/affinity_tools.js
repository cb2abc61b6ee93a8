// The Compute tab's affinity tools beside the affinity form: bringing scores computed
// elsewhere (a scores file becomes the pool's latest affinity run).
import { $, h, fill } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { plural } from "../core/format.js";
import { state } from "../core/state.js";
import { say, showError } from "../components/feedback.js";

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
