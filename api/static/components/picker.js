// A type-ahead picker (ARIA 1.2 combobox with a listbox popup) over a search function, so a
// venue of 20,000 papers or reviewers is searched by name, title or id instead of scrolled.
import { h, fill } from "../core/dom.js";
import { logUnexpected } from "./feedback.js";

let counter = 0;

export class Picker {
  /**
   * @param {object} options
   * @param {string} options.label visible label text (the input's accessible name)
   * @param {(query:string, signal:AbortSignal) => Promise<Array<{id:string, label:string, detail?:string}>>} options.search
   * @param {(item:{id:string,label:string}|null) => void} [options.onSelect] called on a choice
   * @param {string} [options.placeholder]
   * @param {string} [options.name] form field name (the chosen id is submitted)
   * @param {boolean} [options.required]
   * @param {number} [options.delay] debounce in ms
   */
  constructor({ label, search, onSelect, placeholder = "type a name, title or id", name, required = false, delay = 120 }) {
    const id = `picker-${++counter}`;
    Object.assign(this, { search, onSelect, delay });
    this.items = [];
    this.active = -1;
    this.selected = null;
    this.timer = null;
    this.controller = null;
    this.listbox = h("ul", { id: `${id}-list`, role: "listbox", class: "picker-list", "aria-label": `${label} suggestions`, hidden: true });
    this.status = h("span", { class: "sr-only", "aria-live": "polite" });
    this.input = h("input", {
      id, type: "text", role: "combobox", autocomplete: "off", spellcheck: "false",
      "aria-autocomplete": "list", "aria-expanded": "false", "aria-controls": this.listbox.id,
      placeholder, required,
    });
    this.hidden = name ? h("input", { type: "hidden", name }) : null;
    this.labelElement = h("label", { for: id }, label);
    this.element = h("div", { class: "picker" }, this.labelElement,
      h("div", { class: "picker-box" }, this.input, this.listbox), this.hidden, this.status);
    this.input.addEventListener("input", () => this.schedule());
    this.input.addEventListener("focus", () => { if (this.input.value && !this.selected) this.schedule(); });
    this.input.addEventListener("keydown", (event) => this.onKey(event));
    this.input.addEventListener("blur", () => setTimeout(() => this.close(), 150));
  }

  /** The chosen id: the selected option's, else the typed text (an exact id works too). */
  get value() {
    return this.selected?.id ?? this.input.value.trim();
  }

  /** Show `item` as chosen without searching. */
  set(item) {
    this.selected = item;
    this.input.value = item ? item.label : "";
    if (this.hidden) this.hidden.value = item ? item.id : "";
  }

  clear() { this.set(null); }

  schedule() {
    this.selected = null;
    if (this.hidden) this.hidden.value = this.input.value.trim();
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.runSearch(), this.delay);
  }

  async runSearch() {
    const query = this.input.value.trim();
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    try {
      const items = await this.search(query, controller.signal);
      if (controller.signal.aborted) return;
      this.show(items);
    } catch (error) {
      if (error?.name === "AbortError") return;
      logUnexpected(error, "search");
      this.show([]);
      this.status.textContent = `Search failed: ${error.message}`;
    }
  }

  show(items) {
    this.items = items;
    this.active = items.length ? 0 : -1;
    fill(this.listbox, items.map((item, index) => h("li", {
      id: `${this.listbox.id}-${index}`, role: "option", class: "picker-option",
      "aria-selected": index === this.active ? "true" : "false", "data-id": item.id,
      onmousedown: (event) => { event.preventDefault(); this.choose(index); },
    }, h("span", { class: "picker-label" }, item.label), item.detail ? h("span", { class: "picker-detail muted" }, ` ${item.detail}`) : null)));
    if (!items.length && this.input.value.trim()) {
      this.listbox.append(h("li", { class: "picker-empty muted", role: "presentation" }, "No match"));
    }
    const open = this.listbox.children.length > 0 && document.activeElement === this.input;
    this.listbox.hidden = !open;
    this.input.setAttribute("aria-expanded", String(open));
    this.highlight();
    this.status.textContent = items.length ? `${items.length} suggestion${items.length === 1 ? "" : "s"}` : "no match";
  }

  highlight() {
    [...this.listbox.querySelectorAll("[role=option]")].forEach((li, index) => {
      li.setAttribute("aria-selected", index === this.active ? "true" : "false");
      if (index === this.active) li.scrollIntoView({ block: "nearest" });
    });
    if (this.active >= 0) this.input.setAttribute("aria-activedescendant", `${this.listbox.id}-${this.active}`);
    else this.input.removeAttribute("aria-activedescendant");
  }

  close() {
    this.listbox.hidden = true;
    this.input.setAttribute("aria-expanded", "false");
    this.input.removeAttribute("aria-activedescendant");
  }

  choose(index) {
    const item = this.items[index];
    if (!item) return;
    this.set(item);
    this.close();
    this.onSelect?.(item);
  }

  onKey(event) {
    const open = !this.listbox.hidden;
    if (event.key === "ArrowDown") {
      event.preventDefault();
      if (!open) { this.runSearch(); return; }
      this.active = Math.min(this.items.length - 1, this.active + 1);
      this.highlight();
    } else if (event.key === "ArrowUp") {
      event.preventDefault();
      this.active = Math.max(0, this.active - 1);
      this.highlight();
    } else if (event.key === "Enter") {
      if (open && this.active >= 0) {
        event.preventDefault();
        this.choose(this.active);
      }
    } else if (event.key === "Escape") {
      if (open) { event.preventDefault(); this.close(); }
    }
  }
}
