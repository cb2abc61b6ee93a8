// A paginated table over any list endpoint (or an in-memory array), with one tab stop for all
// of its rows (roving tabindex: arrows move between rows and controls, PageUp/PageDown turn
// pages), a visible row range and a pager. Long lists are never cut: every row is one page
// turn away.
import { h, fill } from "../core/dom.js";
import { offsetOf, pageCount, pageOf, rangeText, rovingMove } from "../lib/paging.js";
import { errorBox, showError, clearError, logUnexpected } from "./feedback.js";

const FOCUSABLE = "button, a[href], input, select, textarea, [tabindex]";

/**
 * @typedef {object} Column
 * @property {string} label header text
 * @property {string} [key] field shown as text
 * @property {(row:any)=>any} [render] a Node or text
 * @property {boolean} [num] right-aligned number
 * @property {string} [sort] sort key sent to `load` when the header is clicked
 * @property {boolean} [rowHeader] this cell names the row (th scope=row)
 */

export class PagedTable {
  /**
   * @param {object} options
   * @param {string} options.label the table's accessible name (and caption)
   * @param {Column[]} options.columns
   * @param {(query:{offset:number, limit:number, sort:(string|null), signal:AbortSignal})
   *   => Promise<{items:any[], total:number}>} options.load one page of rows
   * @param {number} [options.pageSize]
   * @param {string} [options.testid] data-testid of the table
   * @param {string} [options.noun] what a row is ("pairs"), for the range text
   * @param {string} [options.empty] text when there are no rows
   * @param {(row:any)=>object} [options.rowAttrs] attributes of a row
   * @param {string} [options.sort] initial sort key
   */
  constructor({ label, columns, load, pageSize = 50, testid, noun = "rows", empty, rowAttrs, sort = null }) {
    Object.assign(this, { label, columns, load, pageSize, noun, rowAttrs, sort });
    this.empty = empty ?? `No ${noun}.`;
    this.offset = 0;
    this.total = 0;
    this.items = [];
    this.controller = null;
    this.focusAt = null; // {row, col} to focus after the next render (keyboard page turns)
    this.range = h("span", { class: "range", "aria-live": "polite" });
    this.tbody = h("tbody");
    this.headRow = h("tr");
    this.table = h("table", { "aria-label": label, "data-testid": testid },
      h("caption", { class: "sr-only" }, label), h("thead", {}, this.headRow), this.tbody);
    this.error = errorBox();
    this.buttons = {
      first: h("button", { type: "button", class: "small-btn secondary", "aria-label": `First page of ${label}`, onclick: () => this.goToPage(0) }, "« First"),
      prev: h("button", { type: "button", class: "small-btn secondary", "aria-label": `Previous page of ${label}`, onclick: () => this.goToPage(this.page - 1) }, "‹ Previous"),
      next: h("button", { type: "button", class: "small-btn secondary", "aria-label": `Next page of ${label}`, onclick: () => this.goToPage(this.page + 1) }, "Next ›"),
      last: h("button", { type: "button", class: "small-btn secondary", "aria-label": `Last page of ${label}`, onclick: () => this.goToPage(this.pages - 1) }, "Last »"),
    };
    this.pageInput = h("input", {
      type: "text", inputmode: "numeric", class: "page-input", "aria-label": `Page of ${label}`, value: "1",
      onchange: () => this.goToPage(Number(this.pageInput.value) - 1),
    });
    this.pageLabel = h("span", { class: "muted" });
    this.sizeSelect = h("select", { "aria-label": `Rows per page of ${label}`, onchange: () => {
      this.pageSize = Number(this.sizeSelect.value);
      this.offset = 0;
      this.reload();
    } }, [25, 50, 100, 250].map((n) => h("option", { value: n, selected: n === pageSize }, `${n} per page`)));
    this.pager = h("nav", { class: "pager", "aria-label": `Pages of ${label}` },
      this.range, this.pageButtons = h("span", { class: "pager-buttons" }, this.buttons.first, this.buttons.prev,
        h("span", { class: "page-of" }, "Page ", this.pageInput, this.pageLabel), this.buttons.next, this.buttons.last),
      this.sizeSelect);
    this.element = h("div", { class: "paged-table" },
      h("div", { class: "table-wrap" }, this.table), this.pager, this.error);
    this.tbody.append(h("tr", {}, h("td", { colspan: columns.length, class: "muted" }, "Loading…")));
    this.pageButtons.hidden = true; // until the first page says there is a second
    this.sizeSelect.hidden = true;
    this.renderHead();
    this.tbody.addEventListener("keydown", (event) => this.onKey(event));
    this.tbody.addEventListener("focusin", (event) => this.rove(event.target));
  }

  get page() { return pageOf(this.offset, this.pageSize); }
  get pages() { return pageCount(this.total, this.pageSize); }

  renderHead() {
    fill(this.headRow, this.columns.map((c) => {
      const cls = c.num ? "num" : "";
      if (!c.sort) return h("th", { scope: "col", class: cls }, c.label);
      const active = this.sort === c.sort || this.sort === `-${c.sort}`;
      const descending = this.sort === `-${c.sort}`;
      return h("th", { scope: "col", class: cls, "aria-sort": active ? (descending ? "descending" : "ascending") : "none" },
        h("button", { type: "button", class: "sort-btn", onclick: () => {
          this.sort = this.sort === c.sort ? `-${c.sort}` : c.sort;
          this.offset = 0;
          this.renderHead();
          this.reload();
        } }, c.label, active ? (descending ? " ▼" : " ▲") : ""));
    }));
  }

  /** Load the current page again (after a change of filters or data). */
  async reload() {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    this.table.setAttribute("aria-busy", "true");
    try {
      const answer = await this.load({ offset: this.offset, limit: this.pageSize, sort: this.sort, signal: controller.signal });
      if (controller.signal.aborted) return;
      this.items = answer.items ?? [];
      this.total = answer.total ?? this.items.length;
      if (!this.items.length && this.total && this.offset >= this.total) {
        this.offset = offsetOf(this.pages - 1, this.pageSize, this.total);
        await this.reload();
        return;
      }
      clearError(this.error);
      this.render();
    } catch (error) {
      if (error?.name === "AbortError") return;
      showError(this.error, error, `Loading ${this.label.toLowerCase()}`);
      logUnexpected(error, this.label);
    } finally {
      if (this.controller === controller) this.table.removeAttribute("aria-busy");
    }
  }

  /** Show the first page again (after a new filter). */
  restart() {
    this.offset = 0;
    return this.reload();
  }

  goToPage(page) {
    if (!Number.isFinite(page)) { this.pageInput.value = String(this.page + 1); return Promise.resolve(); }
    this.offset = offsetOf(page, this.pageSize, this.total);
    return this.reload();
  }

  render() {
    // a focused control in the old rows (e.g. the button whose edit changed the data) hands
    // its focus to the control at the same place in the new rows
    const active = document.activeElement;
    if (active && this.tbody.contains(active) && !this.focusAt) {
      const tr = active.closest("tr");
      this.focusAt = { row: [...this.tbody.rows].indexOf(tr), col: Math.max(0, this.controlsOf(tr).indexOf(active)) };
    }
    const rows = this.items.map((item) => {
      const tr = h("tr", this.rowAttrs ? this.rowAttrs(item) : {});
      for (const c of this.columns) {
        const value = c.render ? c.render(item) : item[c.key];
        const cell = h(c.rowHeader ? "th" : "td", { class: c.num ? "num" : "", scope: c.rowHeader ? "row" : undefined });
        if (value instanceof Node) cell.append(value);
        else cell.textContent = value === null || value === undefined || value === "" ? "–" : String(value);
        tr.append(cell);
      }
      return tr;
    });
    if (!rows.length) rows.push(h("tr", {}, h("td", { colspan: this.columns.length, class: "muted" }, this.empty)));
    fill(this.tbody, rows);
    this.range.textContent = rangeText(this.offset, this.items.length, this.total, this.noun);
    this.range.hidden = !this.total; // the empty row says it
    this.pageInput.value = String(this.page + 1);
    this.pageLabel.textContent = ` of ${this.pages}`;
    const first = this.page === 0, last = this.page >= this.pages - 1;
    this.buttons.first.disabled = first;
    this.buttons.prev.disabled = first;
    this.buttons.next.disabled = last;
    this.buttons.last.disabled = last;
    // one page: the range says it all; the page controls appear when there is a second page
    this.pageButtons.hidden = this.total <= this.pageSize && this.offset === 0;
    this.sizeSelect.hidden = this.total <= 25;
    this.setupRoving();
  }

  /** Controls of a row that take part in the roving tab stop. */
  controlsOf(tr) {
    return [...tr.querySelectorAll(FOCUSABLE)].filter((el) => !el.disabled && !el.closest("[hidden]"));
  }

  setupRoving() {
    const rows = [...this.tbody.rows];
    let stop = null;
    rows.forEach((tr) => this.controlsOf(tr).forEach((el) => {
      el.tabIndex = -1;
      stop ??= el;
    }));
    if (this.focusAt) {
      const target = this.controlAt(this.focusAt.row, this.focusAt.col);
      this.focusAt = null;
      if (target) { this.rove(target); target.focus(); return; }
    }
    if (stop) stop.tabIndex = 0;
  }

  controlAt(row, col) {
    const rows = [...this.tbody.rows];
    const tr = rows[Math.max(0, Math.min(row, rows.length - 1))];
    if (!tr) return null;
    const controls = this.controlsOf(tr);
    return controls[Math.min(col, controls.length - 1)] ?? null;
  }

  rove(target) {
    if (!(target instanceof HTMLElement) || !target.matches(FOCUSABLE)) return;
    for (const el of this.tbody.querySelectorAll("[tabindex='0']")) if (el !== target) el.tabIndex = -1;
    target.tabIndex = 0;
  }

  onKey(event) {
    const target = event.target;
    const tr = target.closest("tr");
    if (!tr || event.altKey || event.ctrlKey || event.metaKey) return;
    const isText = target.matches("input, textarea, select");
    if (isText && !["ArrowUp", "ArrowDown", "PageUp", "PageDown"].includes(event.key)) return;
    if (target.matches("select")) return;
    const rows = [...this.tbody.rows];
    const row = rows.indexOf(tr);
    const controls = this.controlsOf(tr);
    const col = Math.max(0, controls.indexOf(target));
    const move = rovingMove(event.key, { row, col, rows: rows.length, cols: controls.length });
    if (!move) return;
    event.preventDefault();
    if ("page" in move) {
      const page = this.page + move.page;
      if (page < 0 || page >= this.pages) return;
      this.focusAt = { row: 0, col };
      this.goToPage(page);
      return;
    }
    // rows without controls are skipped in the direction of the move
    let nextRow = move.row;
    const step = nextRow >= row ? 1 : -1;
    while (rows[nextRow] && !this.controlsOf(rows[nextRow]).length) nextRow += step;
    const next = rows[nextRow] ? this.controlAt(nextRow, move.col) : null;
    if (next) { this.rove(next); next.focus(); }
  }
}

/** A loader over an in-memory array (filtering done by the caller). */
export function arrayLoader(getRows, compare = null) {
  return async ({ offset, limit, sort }) => {
    let rows = getRows();
    if (sort && compare) rows = [...rows].sort((a, b) => compare(a, b, sort.replace(/^-/, "")) * (sort.startsWith("-") ? -1 : 1));
    return { items: rows.slice(offset, offset + limit), total: rows.length };
  };
}

/** A plain (short) table: columns as for PagedTable, every row shown. */
export function simpleTable(columns, rows, attrs = {}) {
  return h("div", { class: "table-wrap" }, h("table", attrs,
    attrs["aria-label"] ? h("caption", { class: "sr-only" }, attrs["aria-label"]) : null,
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col", class: c.num ? "num" : "" }, c.label)))),
    h("tbody", {}, rows.map((row) => h("tr", {}, columns.map((c) => {
      const value = c.render ? c.render(row) : row[c.key];
      return h("td", { class: c.num ? "num" : "" }, value instanceof Node ? value : (value ?? "–"));
    }))))));
}
