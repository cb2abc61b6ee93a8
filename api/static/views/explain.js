// "Why this score": the evidence behind one pair's affinity, in a dialog.
import { h } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { niceNumber } from "../core/format.js";
import { learnNames, paperTitle, reviewerName } from "../core/names.js";
import { state } from "../core/state.js";
import { chips } from "../components/cells.js";
import { confirmDialog } from "../components/dialog.js";

/** The explanation of (paper, reviewer) as elements. */
export async function explanationView(paperId, reviewerId) {
  const pair = await state.api.get(EP.pair(state.venue, paperId, reviewerId), { explain: true });
  learnNames([pair]);
  const ex = pair.explanation ?? {};
  const head = h("p", {}, "Paper ", h("strong", {}, pair.paper_title || paperTitle(paperId) || paperId), " × reviewer ",
    h("strong", {}, pair.reviewer_name || reviewerName(reviewerId) || reviewerId),
    `: score ${niceNumber(pair.score)} `, chips({ bid: pair.bid, conflict: pair.conflict }));
  if (ex.available === false) {
    // uploaded scores: computed elsewhere, nothing here explains them
    return h("div", { class: "explanation", "data-testid": "explanation" }, head,
      h("p", { class: "muted", "data-testid": "explain-unavailable" }, `No explanation available: ${ex.reason ?? "these scores were computed elsewhere"}.`));
  }
  const pubs = ex.publications ?? [];
  const terms = ex.shared_terms ?? [];
  return h("div", { class: "explanation", "data-testid": "explanation" }, head,
    h("h4", {}, "Top matching publications of the reviewer"),
    pubs.length ? h("ol", { class: "explain-pubs", "data-testid": "explain-publications" }, pubs.slice(0, 8).map((p) => h("li", {},
      h("strong", {}, p.title || p.id), p.year ? ` (${p.year})` : "",
      h("span", { class: "muted" }, ` — similarity ${niceNumber(p.similarity)}, weight ${niceNumber(p.weight)}`)))) :
      h("p", { class: "muted" }, "No publication evidence (the reviewer has no publications)."),
    h("h4", {}, "Top shared terms"),
    terms.length ? h("ul", { class: "terms", "data-testid": "explain-terms" }, terms.map((t) =>
      h("li", {}, `${t.term ?? t[0]} `, h("span", { class: "muted" }, niceNumber(t.contribution ?? t[1]))))) :
      h("p", { class: "muted" }, "No shared terms."));
}

/** Open the explanation of a pair in a dialog. */
export async function explainDialog(paperId, reviewerId) {
  const body = await explanationView(paperId, reviewerId);
  await confirmDialog({ title: "Why this score", body, confirm: "Close", cancel: "Back", testid: "explain-dialog", wide: true });
}

/** A "Why?" button for a pair. */
export function explainButton(paperId, reviewerId, busyRun) {
  return h("button", {
    type: "button", class: "small-btn secondary", "data-testid": "explain",
    "aria-label": `Why does ${reviewerName(reviewerId) || reviewerId} score this on “${paperTitle(paperId) || paperId}”?`,
    onclick: (event) => busyRun(event.currentTarget, () => explainDialog(paperId, reviewerId)),
  }, "Why?");
}
