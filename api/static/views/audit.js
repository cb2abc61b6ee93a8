// The Audit log tab: who did what, when, in words (every entry, paginated).
import { $, h, fill } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { auditText, dateTime } from "../core/format.js";
import { state } from "../core/state.js";
import { PagedTable } from "../components/table.js";
import { registerView } from "./tabs.js";

function entryCell(entry) {
  const { summary, details } = auditText(entry);
  return h("div", { class: "audit-entry" },
    h("span", { class: "audit-summary" }, summary),
    details.length ? h("span", { class: "muted audit-details" }, details.map(([k, v]) => `${k}: ${v}`).join(" · ")) : null);
}

async function show() {
  const table = new PagedTable({
    label: "Audit log", noun: "entries", testid: "audit", pageSize: 50,
    empty: "Nothing recorded yet.",
    columns: [
      { label: "When", render: (e) => h("time", { datetime: e.at }, dateTime(e.at)) },
      { label: "Who", key: "actor" },
      { label: "What", render: entryCell },
      { label: "Action", render: (e) => h("code", {}, e.action) },
    ],
    load: ({ offset, limit, signal }) => state.api.page(EP.audit(state.venue), { offset, limit }, { signal }),
  });
  fill($("#audit-view"), h("section", { class: "card", "aria-labelledby": "audit-title" },
    h("div", { class: "toolbar" }, h("h3", { id: "audit-title" }, "Audit log"),
      h("button", { type: "button", class: "secondary", onclick: () => table.reload() }, "Refresh")),
    table.element));
  await table.reload();
}

export function setupAudit() {
  registerView("tab-audit", show);
}
