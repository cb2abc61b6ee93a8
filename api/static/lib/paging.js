// Page arithmetic and keyboard moves of long tables. Pure: unit-tested under `node --test`.

/** Number of pages of `total` rows at `size` per page (at least 1). */
export function pageCount(total, size) {
  return Math.max(1, Math.ceil(Math.max(0, total) / Math.max(1, size)));
}

/** The 0-based page holding row `offset`. */
export function pageOf(offset, size) {
  return Math.floor(Math.max(0, offset) / Math.max(1, size));
}

/** The offset of page `page` (clamped to the existing pages). */
export function offsetOf(page, size, total) {
  const last = pageCount(total, size) - 1;
  return Math.min(Math.max(0, page), last) * Math.max(1, size);
}

/** "Rows 51–100 of 633" / "No rows". */
export function rangeText(offset, shown, total, noun = "rows") {
  if (!total) return `No ${noun}`;
  if (!shown) return `None of ${total} ${noun} on this page`;
  return `${noun[0].toUpperCase()}${noun.slice(1)} ${offset + 1}–${offset + shown} of ${total}`;
}

/**
 * Where a key moves focus in a table with one tab stop (roving tabindex).
 * @param {string} key KeyboardEvent.key
 * @param {{row:number, col:number, rows:number, cols:number}} at current cell of focusable
 *        controls (cols: controls in the current row)
 * @returns {{row:number, col:number}|{page:number}|null} the new position, a page move
 *          (+1/-1), or null when the key is not a move
 */
export function rovingMove(key, { row, col, rows, cols }) {
  switch (key) {
    case "ArrowDown": return row + 1 < rows ? { row: row + 1, col } : null;
    case "ArrowUp": return row > 0 ? { row: row - 1, col } : null;
    case "ArrowRight": return col + 1 < cols ? { row, col: col + 1 } : null;
    case "ArrowLeft": return col > 0 ? { row, col: col - 1 } : null;
    case "Home": return { row: 0, col: 0 };
    case "End": return { row: Math.max(0, rows - 1), col: 0 };
    case "PageDown": return { page: +1 };
    case "PageUp": return { page: -1 };
    default: return null;
  }
}
