// Table cells that show people and papers by name, and pair marks as separate chips.
import { h } from "../core/dom.js";
import { clip, pairChips } from "../core/format.js";
import { paperTitle, reviewerInfo, reviewerName } from "../core/names.js";
import { emit } from "../core/state.js";

/** A reviewer's name (their id under it); a link-button to their page when `open`. */
export function reviewerCell(id, { name = null, open = true } = {}) {
  const known = name || reviewerName(id);
  const shown = known && known !== id ? known : ""; // the service names unnamed ids by their id
  const affiliation = reviewerInfo(id)?.affiliation ?? "";
  const label = shown || id;
  const main = open
    ? h("button", { type: "button", class: "link", title: `Open reviewer ${label} in the browser`, onclick: () => emit("browse", { reviewer: id }) }, label)
    : h("span", { class: "who" }, label);
  return h("span", { class: "person", title: affiliation || undefined }, main,
    shown ? h("span", { class: "id muted" }, id) : null);
}

/** A paper's title (clipped; whole on hover) and its id. */
export function paperCell(id, { title = null, max = 70, open = true } = {}) {
  const known = title || paperTitle(id);
  const full = known && known !== id ? known : "";
  const label = full ? clip(full, max) : id;
  const main = open
    ? h("button", { type: "button", class: "link", title: full ? `${full} — open in the browser` : "Open in the browser", onclick: () => emit("browse", { paper: id }) }, label)
    : h("span", { class: "what", title: full || undefined }, label);
  return h("span", { class: "paper" }, main, full ? h("span", { class: "id muted" }, id) : null);
}

/** A pair's marks (assigned, pinned, alternate, bid, each conflict reason) as chips. */
export function chips(pair) {
  const list = pairChips(pair);
  if (!list.length) return "";
  return h("span", { class: "chips" }, list.map((chip) => h("span", { class: `tag ${chip.kind}` }, chip.text)));
}

/** A state badge: draft / live / superseded. */
export function stateBadge(stateName, attrs = {}) {
  return h("span", { class: `badge ${stateName}`, ...attrs }, stateName);
}
