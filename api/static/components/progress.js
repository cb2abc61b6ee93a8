// A progress bar with its percentage, stage and elapsed time in words.
import { h } from "../core/dom.js";

export class ProgressBar {
  /** @param {string} label the bar's accessible name ("Assignment job #4 progress") */
  constructor(label) {
    this.bar = h("progress", { max: 100, value: 0, "aria-label": label });
    this.text = h("span", { class: "progress-text", "data-testid": "job-progress" });
    this.element = h("div", { class: "progress" }, this.bar, this.text);
  }

  /**
   * @param {number} fraction 0..1
   * @param {string} stage what runs now
   * @param {string} [extra] e.g. "12 s"
   */
  set(fraction, stage = "", extra = "") {
    const percent = Math.round(Math.max(0, Math.min(1, fraction || 0)) * 100);
    this.bar.value = percent;
    const words = `${percent}%${stage ? ` — ${stage}` : ""}`;
    this.bar.setAttribute("aria-valuetext", words);
    const text = `${words}${extra ? ` (${extra})` : ""}`;
    if (this.text.textContent !== text) this.text.textContent = text;
  }

  /** An ended job: the bar stops; failures and cancellations are styled as such. */
  finish(outcome) {
    this.element.dataset.outcome = outcome;
  }
}

/** A small inline bar (load vs quota, share of papers): a meter with its text. */
export function meter(value, max, label) {
  const ratio = max > 0 ? Math.min(1, value / max) : 0;
  return h("span", { class: "meter", role: "img", "aria-label": label ?? `${value} of ${max}` },
    h("span", { class: `meter-fill${value > max ? " over" : ""}`, style: `width:${Math.round(ratio * 100)}%` }));
}
