// A modal dialog on the native <dialog> element (focus trap, Escape, top layer for free),
// named by its heading, that resolves to the chair's answer.
import { h, fill } from "../core/dom.js";
import { errorBox, showError, clearError, logUnexpected } from "./feedback.js";

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
    h("h2", { id: `${id}-title`, class: "dialog-title" }, title),
    h("div", { class: "dialog-body" }, body),
    error,
    h("div", { class: "dialog-actions" }, no, ok));
  const dialog = h("dialog", { class: `dialog${wide ? " wide" : ""}`, "aria-labelledby": `${id}-title`, "data-testid": testid }, form);
  document.body.append(dialog);
  const opener = document.activeElement;
  return new Promise((resolve) => {
    let result = null;
    const finish = () => {
      dialog.remove();
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
      resolve(result);
    };
    dialog.addEventListener("close", finish, { once: true });
    no.addEventListener("click", () => dialog.close());
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
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
    ok.focus();
  });
}

/** Replace a dialog body's content (for bodies that load after opening). */
export function setBody(container, ...children) {
  fill(container, children);
}
