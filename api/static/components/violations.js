// Broken hard constraints in a chair's words: the kind (matching/violations.py's vocabulary),
// the paper and the reviewer it is about, and the service's detail. Used by the deploy
// dialog and the edit previews, so both name a broken constraint the same way.
import { h } from "../core/dom.js";
import { paperTitle, reviewerName } from "../core/names.js";

export const KIND_WORDS = {
  conflict: "conflict of interest", bid: "Not Willing / conflict bid", forbid: "forbidden pair",
  pin: "missing pin", max_load: "reviewer over quota", min_load: "reviewer under minimum", demand: "paper demand not met",
};

/** "paper “Title” (P1) × reviewer Ada (~Ada1)": what a violation is about. */
export function who(violation) {
  const parts = [];
  if (violation.paper_id) {
    const title = violation.paper_title || paperTitle(violation.paper_id);
    parts.push(`paper ${title && title !== violation.paper_id ? `“${title}” ` : ""}(${violation.paper_id})`);
  }
  if (violation.reviewer_id) {
    const name = violation.reviewer_name || reviewerName(violation.reviewer_id);
    parts.push(`reviewer ${name && name !== violation.reviewer_id ? `${name} (${violation.reviewer_id})` : violation.reviewer_id}`);
  }
  return parts.join(" × ");
}

/** One violation as list content: "<kind>: <who> — <detail>". */
export function violationLine(violation) {
  return [h("strong", {}, KIND_WORDS[violation.kind] ?? violation.kind), `: ${who(violation)}`,
    violation.detail ? h("span", { class: "muted" }, ` — ${violation.detail}`) : null];
}

/** A titled list of violations (null when there are none); `total` counts those not listed. */
export function violationList(title, violations, total, { cls = "", testid } = {}) {
  if (!violations?.length) return null;
  const more = total > violations.length ? h("li", { class: "muted" }, `and ${total - violations.length} more`) : null;
  return h("div", { class: `violation-list ${cls}`, "data-testid": testid },
    h("h4", {}, title), h("ul", {}, violations.map((v) => h("li", {}, violationLine(v))), more));
}
