// "Why this score": the evidence behind one pair's affinity, in a dialog.
import { h } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { niceNumber } from "../core/format.js";
import { learnNames, paperTitle, reviewerName } from "../core/names.js";
import { state } from "../core/state.js";
import { chips } from "../components/cells.js";
import { confirmDialog } from "../components/dialog.js";

// the score's parts in its own units (what each source adds), in the order a chair reads them
const PART_LABELS = [
  ["text_match", "Text match (TF-IDF)"],
  ["embedding", "Embedding"],
  ["bid", "Bid"],
  ["baseline", "Scaling and centering"],
];

/** The share of the evidence as a percentage ("42%", "<1%"). */
function shareText(share) {
  if (typeof share !== "number" || !Number.isFinite(share)) return "";
  if (share > 0 && share < 0.005) return "<1%";
  return `${Math.round(share * 100)}%`;
}

/** The readable parts of an explanation (the API's ``explanation``): the plain sentence,
 * the score split into its parts, the publications behind it with their share, the shared
 * terms. ``own``: worded for the person whose score it is. Uploaded scores (``available``
 * false) say why nothing explains them. */
export function evidenceView(ex, { own = false } = {}) {
  if (ex?.available === false) {
    // uploaded scores: computed elsewhere, nothing here explains them
    return [h("p", { class: "muted", "data-testid": "explain-unavailable" },
      `No explanation available: ${ex.reason ?? "these scores were computed elsewhere"}.`)];
  }
  const pubs = ex?.publications ?? [];
  const terms = ex?.shared_terms ?? [];
  const parts = ex?.parts;
  const shown = parts ? PART_LABELS.filter(([key]) => typeof parts[key] === "number" && parts[key] !== 0) : [];
  return [
    ex?.sentence ? h("p", { class: "explain-sentence", "data-testid": "explain-sentence" }, ex.sentence) : null,
    shown.length ? h("table", { class: "explain-parts", "data-testid": "explain-parts" },
      h("caption", {}, "The score, part by part (in the score's units)"),
      h("tbody", {}, shown.map(([key, label]) => h("tr", {}, h("th", { scope: "row" }, label), h("td", { class: "num" }, niceNumber(parts[key])))),
        h("tr", { class: "total" }, h("th", { scope: "row" }, "Score"), h("td", { class: "num" }, niceNumber(parts.total))))) : null,
    h("h4", {}, own ? "Your publications behind it" : "The reviewer's publications behind it"),
    pubs.length ? h("ol", { class: "explain-pubs", "data-testid": "explain-publications" }, pubs.slice(0, 8).map((p) => h("li", {},
      h("strong", {}, p.title || p.id), p.year ? ` (${p.year})` : "",
      typeof p.share === "number" ? h("span", { class: "share", "data-testid": "explain-share" }, ` — ${shareText(p.share)} of the evidence`) : null,
      h("span", { class: "muted" }, ` (similarity ${niceNumber(p.similarity)}, weight ${niceNumber(p.weight)})`)))) :
      h("p", { class: "muted" }, own ? "No publication evidence." : "No publication evidence (the reviewer has no publications)."),
    h("h4", {}, "Shared terms"),
    terms.length ? h("ul", { class: "terms", "data-testid": "explain-terms" }, terms.map((t) =>
      h("li", {}, `${t.term ?? t[0]} `, h("span", { class: "muted" }, niceNumber(t.contribution ?? t[1]))))) :
      h("p", { class: "muted" }, "No shared terms."),
  ];
}

/** The explanation of (paper, reviewer) as elements. */
export async function explanationView(paperId, reviewerId) {
  const pair = await state.api.get(EP.pair(state.venue, paperId, reviewerId), { explain: true });
  learnNames([pair]);
  return h("div", { class: "explanation", "data-testid": "explanation" },
    h("p", {}, "Paper ", h("strong", {}, pair.paper_title || paperTitle(paperId) || paperId), " × reviewer ",
      h("strong", {}, pair.reviewer_name || reviewerName(reviewerId) || reviewerId),
      `: score ${niceNumber(pair.score)} `, chips({ bid: pair.bid, conflict: pair.conflict })),
    evidenceView(pair.explanation ?? {}));
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
