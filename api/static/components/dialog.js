// A modal dialog on the native <dialog> element (focus trap, Escape, top layer for free),
// named by its heading, that resolves to the chair's answer.
//
// Confirming is deliberate: the confirm button is never focused when the dialog opens (focus
// goes to the dialog's first field, else its heading), and Enter in a field never submits: a
// chair confirms by activating the confirm button itself. So Enter pressed again and again
// (on Deploy, say) opens the dialog and then does nothing.
import { h, fill } from "../core/dom.js";
import { activator, errorBox, showError, clearError, logUnexpected } from "./feedback.js";

let counter = 0;

/**
 * Ask for a confirmation.
 * @param {object} options
 * @param {string} options.title the dialog's heading and accessible name
 * @param {Node|Node[]|string} options.body what the chair confirms (effects, warnings)
 * @param {string} [options.confirm] label of the confirming button
 * @param {string} [options.cancel] label of the cancelling button
 * @param {boolean} [options.danger] style the confirming button as destructive
 * @param {() => Promise<any>} [options.onConfirm] run on confirm; an error is shown in the
 *        dialog (which stays open), its value resolves the dialog
 * @param {string} [options.testid]
 * @returns {Promise<any>} onConfirm's value (or true) when confirmed, null when cancelled
 */
export function confirmDialog({ title, body, confirm = "Confirm", cancel = "Cancel", danger = false, onConfirm, testid, wide = false }) {
  const id = `dialog-${++counter}`;
  const error = errorBox();
  const ok = h("button", { type: "submit", value: "ok", class: danger ? "danger" : "" }, confirm);
  const no = h("button", { type: "button", class: "secondary", value: "cancel" }, cancel);
  const form = h("form", { method: "dialog", class: "dialog-form" },
    h("h2", { id: `${id}-title`, class: "dialog-title", tabindex: "-1" }, title),
    h("div", { class: "dialog-body" }, body),
    error,
    h("div", { class: "dialog-actions" }, no, ok));
  const dialog = h("dialog", { class: `dialog${wide ? " wide" : ""}`, "aria-labelledby": `${id}-title`, "data-testid": testid }, form);
  document.body.append(dialog);
  const focused = document.activeElement;
  const opener = focused && focused !== document.body ? focused : activator();
  const place = placeOf(opener);
  return new Promise((resolve) => {
    let result = null;
    const finish = () => {
      dialog.remove();
      focusBack(opener, place);
      resolve(result);
    };
    dialog.addEventListener("close", finish, { once: true });
    no.addEventListener("click", () => dialog.close());
    // Enter in a field is no confirmation (implicit submission): only the button confirms
    form.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && event.target instanceof HTMLElement && event.target.matches("input, select")) event.preventDefault();
    });
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (event.submitter !== ok) return;
      clearError(error);
      ok.disabled = true;
      try {
        result = onConfirm ? await onConfirm() : true;
        if (result === undefined) result = true;
        dialog.close();
      } catch (failure) {
        showError(error, failure);
        logUnexpected(failure, title);
      } finally {
        ok.disabled = false;
      }
    });
    dialog.showModal();
    const field = form.querySelector(".dialog-body input:not([type=hidden]):not([disabled]), .dialog-body textarea, .dialog-body select");
    (field ?? form.querySelector(".dialog-title")).focus();
  });
}

/** Where a control sits, to find its stand-in if the view redrew it while the dialog was open. */
function placeOf(element) {
  if (!(element instanceof HTMLElement)) return {};
  const table = element.closest("table");
  const tr = element.closest("tr");
  return {
    key: element.dataset.focusKey ?? null,
    table: table?.getAttribute("aria-label") ?? null,
    row: tr && table?.tBodies[0] ? [...table.tBodies[0].rows].indexOf(tr) : -1,
  };
}

const lost = () => !document.activeElement || document.activeElement === document.body;

/** Focus back where the dialog was opened: the opener, else the control that replaced it
 * (same key, else the same row of the same table), else the main content. */
function focusBack(opener, place) {
  if (opener instanceof HTMLElement && opener.isConnected) {
    // the opener may still be disabled by the action that opened the dialog: focus it once
    // that action has ended
    if (opener.disabled) setTimeout(() => { if (lost()) opener.focus(); }, 0);
    else opener.focus();
    return;
  }
  if (place.key) {
    const same = [...document.querySelectorAll("[data-focus-key]")].find((el) => el.dataset.focusKey === place.key);
    if (same) { same.focus(); return; }
  }
  if (place.table && place.row >= 0) {
    const table = [...document.querySelectorAll("table")].find((t) => t.getAttribute("aria-label") === place.table);
    const rows = table?.tBodies[0]?.rows;
    const row = rows?.length ? rows[Math.min(place.row, rows.length - 1)] : null;
    const control = row?.querySelector("button, a[href], input, select");
    if (control) { control.tabIndex = 0; control.focus(); return; }
  }
  document.getElementById("venue-heading")?.focus();
}

/** Replace a dialog body's content (for bodies that load after opening). */
export function setBody(container, ...children) {
  fill(container, children);
}
