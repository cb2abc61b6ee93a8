// Feedback in the right place: successes as short toasts (polite live region), failures as
// error panels (role=alert) next to what failed, with the service's structured diagnosis and
// row-level problems. Bugs of the page itself go to the console; API answers and user
// mistakes never do.
import { ApiError } from "../core/api.js";
import { $, h, fill } from "../core/dom.js";

/** A problem the user can fix (bad input, nothing selected): shown, not logged as a bug. */
export class UserError extends Error {}

/** Announce a success or a state change: a toast in the polite live region. */
export function say(message) {
  const region = $("#toasts");
  if (!region) return;
  const toast = h("div", { class: "toast", "data-testid": "toast" }, message);
  region.append(toast);
  while (region.children.length > 3) region.firstElementChild.remove();
  setTimeout(() => toast.remove(), 6000);
}

/** Anything but an API answer, an abort or a UserError is a bug of this page: log it. */
export function logUnexpected(error, context) {
  if (error instanceof ApiError || error instanceof UserError) return;
  if (error && error.name === "AbortError") return;
  console.error(context, error);
}

/** A table of row-level upload problems. */
export function problemTable(problems, caption = null) {
  const shown = problems.slice(0, 500);
  return h("div", { class: "table-wrap" }, h("table", { class: "error-table", "data-testid": "problem-table" },
    h("caption", { class: "muted" },
      caption ?? `${problems.length} problem${problems.length === 1 ? "" : "s"}; nothing was loaded` +
      (problems.length > shown.length ? ` (first ${shown.length} shown)` : "")),
    h("thead", {}, h("tr", {}, ["File", "Line", "Field", "Reason"].map((label) => h("th", { scope: "col" }, label)))),
    h("tbody", {}, shown.map((p) => h("tr", {},
      h("td", {}, p.file), h("td", { class: "num" }, p.line ?? "–"), h("td", {}, p.field ?? "–"),
      h("td", {}, p.message))))));
}

/** The lists of a structured diagnosis ({summary, causes, suggestions, …}) as elements. */
export function diagnosisView(diagnosis) {
  if (!diagnosis || typeof diagnosis !== "object") return null;
  const parts = [];
  const summary = diagnosis.summary ?? diagnosis.message ?? diagnosis.reason;
  if (typeof summary === "string" && summary) parts.push(h("p", { class: "diagnosis-summary" }, summary));
  const lists = [
    ["causes", "Why"], ["reasons", "Why"], ["details", "Details"], ["items", "Details"],
    ["suggestions", "What to do"], ["hints", "What to do"], ["actions", "What to do"], ["fixes", "What to do"],
  ];
  for (const [key, heading] of lists) {
    const values = diagnosis[key];
    if (!Array.isArray(values) || !values.length) continue;
    parts.push(h("p", { class: "diagnosis-heading" }, heading),
      h("ul", { class: "diagnosis-list" }, values.slice(0, 50).map((v) => h("li", {}, describeItem(v)))));
  }
  for (const [key, value] of Object.entries(diagnosis)) {
    if (typeof value === "string" && value && !["summary", "message", "reason", "code", "kind"].includes(key) && parts.length < 12) {
      parts.push(h("p", {}, h("span", { class: "muted" }, `${key.replaceAll("_", " ")}: `), value));
    }
  }
  return parts.length ? h("div", { class: "diagnosis", "data-testid": "diagnosis" }, parts) : null;
}

function describeItem(value) {
  if (value == null) return "";
  if (typeof value !== "object") return String(value);
  return value.message ?? value.detail ?? value.text ??
    Object.entries(value).map(([k, v]) => `${k.replaceAll("_", " ")}: ${typeof v === "object" ? JSON.stringify(v) : v}`).join(", ");
}

/** Render an error (ApiError or any Error) into `box`: the sentence, the structured
 * diagnosis the service sent and row-level problems as a table. */
export function showError(box, error, context = "") {
  if (!box) return;
  box.hidden = false;
  const text = error instanceof Error ? error.message : String(error);
  const children = [h("p", { class: "error-message" }, context ? `${context}: ${text}` : text)];
  if (error instanceof ApiError) {
    const detail = error.detail;
    const diagnosis = detail?.diagnosis ?? (detail && (detail.causes || detail.suggestions) ? detail : null);
    children.push(diagnosisView(diagnosis));
    if (error.problems.length) children.push(problemTable(error.problems));
    if (error.status === 401) children.push(h("p", {}, "Sign in again with a valid token."));
  }
  fill(box, children);
}

export function clearError(box) {
  if (box) { box.hidden = true; box.replaceChildren(); }
}

/** Show an error in the page-wide error panel. */
export function globalError(error, context) {
  if (error && error.name === "AbortError") return;
  showError($("#global-error"), error, context);
  logUnexpected(error, context);
}

/** The control that started the latest action: disabling a focused button blurs it, so a
 * dialog the action opens finds its opener here (to give focus back when it closes). */
let lastActivator = null;

export function activator() {
  return lastActivator;
}

/** Run an async UI action with its button disabled and errors shown in `errorBox` (or the
 * page-wide panel); resolves to the action's value, or undefined when it failed. */
export async function busy(button, errorBox, action, context) {
  if (button) lastActivator = button;
  if (button) { button.disabled = true; button.setAttribute("aria-busy", "true"); }
  clearError(errorBox ?? $("#global-error"));
  try {
    return await action();
  } catch (error) {
    if (errorBox) {
      showError(errorBox, error, context);
      logUnexpected(error, context);
    } else {
      globalError(error, context);
    }
    return undefined;
  } finally {
    if (button) {
      button.disabled = false;
      button.removeAttribute("aria-busy");
      // disabling blurred it: give the focus back if nothing else took it (without scrolling:
      // the action may have brought its result into view, e.g. a job's progress)
      if (button.isConnected && (!document.activeElement || document.activeElement === document.body)) button.focus({ preventScroll: true });
    }
  }
}

/** An empty error panel (role=alert) to put next to a form or a view. */
export function errorBox(attrs = {}) {
  return h("div", { class: "error-box", role: "alert", hidden: true, ...attrs });
}
