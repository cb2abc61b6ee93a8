// Publishing a run: a confirmation dialog naming the run and the version the chair reviewed,
// what it replaces, and every hard constraint it breaks now, each with its own override
// and reason. Nothing is sent until the chair confirms; the service checks again.
import { h } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { plural, runName } from "../core/format.js";
import { state, updateRun } from "../core/state.js";
import { confirmDialog } from "../components/dialog.js";
import { say, UserError } from "../components/feedback.js";
import { KIND_WORDS, who } from "../components/violations.js";
import { refreshRuns } from "./runs.js";

/** Ask, then publish `run`. Resolves to the published run, or null when cancelled. */
export async function deployDialog(run) {
  const check = await state.api.get(EP.check(state.venue, run.id));
  if (check.version !== run.version) {
    // the run changed since the page loaded it: show the current one first
    await refreshRuns();
    throw new UserError(`${runName(run)} changed since this page loaded it (now version ${check.version}); review it again, then deploy.`);
  }
  const live = state.runs.find((r) => r.state === "live" && r.id !== run.id);
  const items = check.violations.map((violation, index) => {
    const box = h("input", { type: "checkbox", id: `override-${index}`, "aria-describedby": `violation-${index}` });
    const reason = h("input", { type: "text", id: `override-reason-${index}`, maxlength: 1000, placeholder: "why publish anyway",
      "aria-label": `Reason for overriding: ${KIND_WORDS[violation.kind] ?? violation.kind} ${who(violation)}` });
    reason.addEventListener("input", () => { if (reason.value.trim()) box.checked = true; });
    return { violation, box, reason, row: h("tr", {},
      h("td", {}, box, h("label", { for: `override-${index}`, class: "inline" }, "Override")),
      h("td", { id: `violation-${index}` }, h("strong", {}, KIND_WORDS[violation.kind] ?? violation.kind), ": ", who(violation),
        h("div", { class: "muted" }, violation.detail)),
      h("td", {}, reason)) };
  });
  const sharedReason = h("input", { type: "text", id: "override-all-reason", maxlength: 1000, placeholder: "e.g. agreed with the PC chairs" });
  const body = [
    h("p", {}, `Publish ${runName(run)}, version ${run.version}${run.summary?.pairs != null ? ` (${plural(run.summary.pairs, "pair")})` : ""}: `,
      "viewers will see it and it becomes the venue's live assignment."),
    h("p", {}, live ? `It replaces ${runName(live)}, which becomes superseded (publishing that again is a rollback).` : "No run is live yet."),
  ];
  if (items.length) {
    body.push(
      h("div", { class: "warn-box", role: "note" },
        h("p", {}, h("strong", {}, `${plural(check.total, "hard constraint")} broken now. `),
          "Re-solve, or override each item below with a reason; every override is recorded in the audit log."),
        check.total > items.length ? h("p", {}, `The first ${items.length} are listed; re-solve first.`) : null),
      h("div", { class: "field inline-field" }, h("label", { for: "override-all-reason" }, "Reason for every override"), sharedReason,
        h("button", { type: "button", class: "small-btn secondary", onclick: () => {
          for (const item of items) { item.box.checked = true; if (!item.reason.value.trim()) item.reason.value = sharedReason.value; }
        } }, "Override all with this reason")),
      h("div", { class: "table-wrap" }, h("table", { "aria-label": "Broken constraints", "data-testid": "violations" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Override"), h("th", { scope: "col" }, "Item"), h("th", { scope: "col" }, "Reason"))),
        h("tbody", {}, items.map((item) => item.row)))));
  } else {
    body.push(h("p", { class: "ok-line", "data-testid": "no-violations" }, "It meets every hard constraint of the venue as it is now."));
  }
  return confirmDialog({
    title: `Deploy ${runName(run)} (version ${run.version})?`,
    body, confirm: `Deploy ${runName(run)}`, testid: "deploy-dialog", wide: items.length > 0,
    onConfirm: async () => {
      const overrides = [];
      const missing = [];
      for (const item of items) {
        const reason = item.reason.value.trim() || (item.box.checked ? sharedReason.value.trim() : "");
        if (!item.box.checked) missing.push(item);
        else if (!reason) throw new UserError(`Give a reason for overriding ${who(item.violation)}.`);
        else overrides.push({ paper_id: item.violation.paper_id, reviewer_id: item.violation.reviewer_id, reason });
      }
      if (missing.length) {
        throw new UserError(`${plural(missing.length, "listed item is", "listed items are")} not overridden: tick each one (with a reason), or cancel and re-solve.`);
      }
      const published = await state.api.post(EP.deploy(state.venue, run.id), { assignment_id: run.id, version: run.version, overrides });
      say(`${runName(published)} (version ${published.version}) is live: viewers now see it.`);
      updateRun(published);
      await refreshRuns();
      return published;
    },
  });
}
