// Small dependency-free charts: SVG bar charts and a canvas heatmap with axis labels and a
// keyboard path. Every chart carries a text alternative.
import { h } from "../core/dom.js";
import { niceNumber } from "../core/format.js";
import { rampColour, robustRange, tickStep } from "../lib/chartmath.js";

const SVG_NS = "http://www.w3.org/2000/svg";

function el(name, attrs = {}, text) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

const SERIES_COLOURS = { "": "#1f5fbf", b: "#d9822b", c: "#2e8b57", d: "#a61b1b" };

/**
 * Bars of one or more series over shared categories.
 * @param {HTMLElement} host container (emptied)
 * @param {string[]} labels category labels (x axis), length K
 * @param {Array<{name:string, values:number[], cls?:string}>} series each of length K
 * @param {{title:string, xLabel?:string, yLabel?:string, onBar?:(index:number)=>void}} options
 */
export function barChart(host, labels, series, options) {
  host.replaceChildren();
  const width = 560, height = 240, left = 48, right = 10, top = 14, bottom = 44;
  const plotW = width - left - right, plotH = height - top - bottom;
  const rawMax = Math.max(1e-12, ...series.flatMap((s) => s.values.filter(Number.isFinite)));
  const integral = series.every((s) => s.values.every(Number.isInteger));
  const step = tickStep(rawMax / 4, integral);
  const maxValue = step * Math.ceil(rawMax / step - 1e-9);
  const nTicks = Math.max(1, Math.round(maxValue / step));
  const svg = el("svg", { viewBox: `0 0 ${width} ${height}`, role: "img" });
  const summary = series.map((s) =>
    `${s.name}: ` + labels.map((l, i) => `${l}=${niceNumber(s.values[i])}`).join(", ")).join("; ");
  svg.append(el("title", {}, `${options.title}. ${summary}`));
  const axis = el("g", { class: "axis" });
  svg.append(axis); // first, so grid lines lie under the bars
  for (let t = 0; t <= nTicks; t++) {
    const y = top + plotH - (plotH * t) / nTicks;
    axis.append(el("line", { x1: left, x2: width - right, y1: y, y2: y, stroke: "#e3e7ec" }));
    axis.append(el("text", { x: left - 4, y: y + 3, "text-anchor": "end" }, niceNumber(step * t)));
  }
  const groupW = plotW / Math.max(1, labels.length);
  const barW = Math.max(1, (groupW * 0.84) / series.length);
  const labelEvery = Math.ceil(labels.length / 14);
  labels.forEach((label, i) => {
    series.forEach((s, j) => {
      const value = s.values[i] ?? 0;
      const barH = (plotH * value) / maxValue;
      const x = left + i * groupW + groupW * 0.08 + j * barW;
      const rect = el("rect", {
        x, y: top + plotH - barH, width: barW, height: Math.max(0, barH), class: `bar ${s.cls ?? ""}`,
      });
      rect.append(el("title", {}, `${s.name} ${label}: ${niceNumber(value)}`));
      svg.append(rect);
    });
    if (i % labelEvery === 0) {
      axis.append(el("text", { x: left + i * groupW + groupW / 2, y: top + plotH + 13, "text-anchor": "middle" }, label));
    }
  });
  if (options.xLabel) axis.append(el("text", { class: "axis-title", x: left + plotW / 2, y: height - 6, "text-anchor": "middle" }, options.xLabel));
  if (options.yLabel) axis.append(el("text", { class: "axis-title", x: 11, y: top + plotH / 2, transform: `rotate(-90 11 ${top + plotH / 2})`, "text-anchor": "middle" }, options.yLabel));
  host.append(svg);
  if (series.length > 1) {
    host.append(h("div", { class: "legend" }, series.map((s) => h("span", {},
      h("span", { class: "swatch", style: `background:${SERIES_COLOURS[s.cls ?? ""] ?? SERIES_COLOURS[""]}` }), s.name))));
  }
}

/**
 * Draw a rows × cols score matrix (NaN = score not stored) on a canvas, with row labels
 * (papers) at the left and column labels (reviewers) on top, and a keyboard path: the
 * heatmap is one tab stop; arrow keys move a cursor cell whose pair is announced; Enter
 * calls `onPick(row, col)`.
 * @param {HTMLElement} host
 * @param {number[][]} matrix rows = papers, cols = reviewers
 * @param {string[]} rowLabels
 * @param {string[]} colLabels
 * @param {{title:string, marks?:Set<string>, rowAxis?:string, colAxis?:string,
 *   onPick?:(row:number, col:number)=>void}} options marks: "r,c" cells to outline (assigned)
 */
export function heatmap(host, matrix, rowLabels, colLabels, options) {
  host.replaceChildren();
  const nRows = matrix.length, nCols = matrix[0]?.length ?? 0;
  const cell = Math.max(6, Math.min(16, Math.floor(620 / Math.max(nRows, nCols, 1))));
  const rowAxisW = 220, colAxisH = 120, tailW = 60; // tail: room for the last rotated labels
  const { lo, hi } = robustRange(matrix.flat());
  const canvas = h("canvas", { width: nCols * cell, height: nRows * cell });
  const ctx = canvas.getContext("2d");
  for (let i = 0; i < nRows; i++) {
    for (let j = 0; j < nCols; j++) {
      const v = matrix[i][j];
      ctx.fillStyle = Number.isFinite(v) ? rampColour((v - lo) / (hi - lo || 1)) : "#e9e9e9";
      ctx.fillRect(j * cell, i * cell, cell, cell);
      if (options.marks?.has(`${i},${j}`)) {
        ctx.strokeStyle = "#d9822b";
        ctx.lineWidth = Math.max(1, cell / 5);
        ctx.strokeRect(j * cell + 1, i * cell + 1, cell - 2, cell - 2);
      }
    }
  }
  // axis labels as SVG text (readable, selectable and scaled with the canvas)
  const axes = el("svg", {
    class: "heatmap-axes", viewBox: `0 0 ${rowAxisW + nCols * cell + tailW} ${colAxisH + nRows * cell}`,
    "aria-hidden": "true",
  });
  const font = Math.max(7, Math.min(10, cell - 3));
  rowLabels.forEach((label, i) => axes.append(el("text", {
    x: rowAxisW - 4, y: colAxisH + i * cell + cell / 2 + font / 3, "text-anchor": "end", "font-size": font,
  }, clipLabel(label, 34))));
  colLabels.forEach((label, j) => {
    const x = rowAxisW + j * cell + cell / 2 + font / 3, y = colAxisH - 4;
    axes.append(el("text", { x, y, transform: `rotate(-60 ${x} ${y})`, "font-size": font }, clipLabel(label, 18)));
  });
  axes.append(el("text", { class: "axis-title", x: 4, y: 12, "font-size": 11 }, options.rowAxis ?? "papers ↓"));
  axes.append(el("text", { class: "axis-title", x: rowAxisW, y: 12, "font-size": 11 }, options.colAxis ?? "reviewers →"));
  const cursor = h("div", { class: "heatmap-cursor", hidden: true });
  const plot = h("div", {
    class: "heatmap-plot", tabindex: 0, role: "application",
    "aria-roledescription": "heatmap",
    "aria-label": `${options.title}: ${nRows} papers by ${nCols} reviewers, colour scale ${niceNumber(lo)} to ${niceNumber(hi)} (2nd–98th percentile)` +
      (options.marks ? `, ${options.marks.size} assigned pairs outlined` : "") +
      ". Arrow keys move between cells, Enter explains the pair.",
    style: `--cell:${cell}px; --row-axis:${rowAxisW}px; --col-axis:${colAxisH}px; width:${rowAxisW + nCols * cell + tailW}px`,
  }, axes, h("div", { class: "heatmap-canvas" }, canvas, cursor));
  const readout = h("p", { class: "heatmap-readout", "aria-live": "polite", "data-testid": "heatmap-readout" },
    "Hover or use the arrow keys for a pair's score.");
  let at = { row: 0, col: 0 };
  const describe = (i, j) => {
    const v = matrix[i][j];
    const marked = options.marks?.has(`${i},${j}`) ? " (assigned)" : "";
    return `paper ${rowLabels[i]} × reviewer ${colLabels[j]}: ${Number.isFinite(v) ? niceNumber(v) : "not stored"}${marked}`;
  };
  const moveTo = (i, j) => {
    at = { row: Math.max(0, Math.min(nRows - 1, i)), col: Math.max(0, Math.min(nCols - 1, j)) };
    cursor.hidden = false;
    cursor.style.left = `${at.col * cell}px`;
    cursor.style.top = `${at.row * cell}px`;
    cursor.style.width = cursor.style.height = `${cell}px`;
    readout.textContent = describe(at.row, at.col);
  };
  plot.addEventListener("focus", () => moveTo(at.row, at.col));
  plot.addEventListener("keydown", (event) => {
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (moves[event.key]) {
      event.preventDefault();
      moveTo(at.row + moves[event.key][0], at.col + moves[event.key][1]);
    } else if (event.key === "Home") { event.preventDefault(); moveTo(at.row, 0); }
    else if (event.key === "End") { event.preventDefault(); moveTo(at.row, nCols - 1); }
    else if (event.key === "Enter" && options.onPick) { event.preventDefault(); options.onPick(at.row, at.col); }
  });
  canvas.addEventListener("mousemove", (event) => {
    const rect = canvas.getBoundingClientRect();
    const j = Math.floor(((event.clientX - rect.left) / rect.width) * nCols);
    const i = Math.floor(((event.clientY - rect.top) / rect.height) * nRows);
    if (i >= 0 && i < nRows && j >= 0 && j < nCols) { canvas.title = describe(i, j); readout.textContent = describe(i, j); }
  });
  if (options.onPick) {
    canvas.addEventListener("click", (event) => {
      const rect = canvas.getBoundingClientRect();
      const j = Math.floor(((event.clientX - rect.left) / rect.width) * nCols);
      const i = Math.floor(((event.clientY - rect.top) / rect.height) * nRows);
      if (i >= 0 && i < nRows && j >= 0 && j < nCols) { moveTo(i, j); options.onPick(i, j); }
    });
  }
  const swatch = (style) => h("span", { class: "swatch", style });
  const legend = h("p", { class: "legend" },
    h("span", {}, swatch(`background:${rampColour(0)};border:1px solid #ccc`), `≤ ${niceNumber(lo)}`),
    h("span", {}, swatch(`background:${rampColour(1)}`), `≥ ${niceNumber(hi)}`),
    h("span", {}, swatch("background:#e9e9e9"), "not stored (outside top-N)"),
    options.marks ? h("span", {}, swatch("border:2px solid #d9822b"), "assigned") : null);
  host.append(h("div", { class: "heatmap-scroll" }, plot), readout, legend);
}

function clipLabel(text, max) {
  const value = String(text ?? "");
  return value.length > max ? `${value.slice(0, max - 1)}…` : value;
}
