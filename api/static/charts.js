// Small dependency-free charts: SVG bar histograms and a canvas heatmap with
// structure-revealing row/column orders. Every chart carries a text alternative.

const SVG_NS = "http://www.w3.org/2000/svg";

function el(name, attrs = {}, text) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function niceNumber(value) {
  if (!Number.isFinite(value)) return "–";
  const abs = Math.abs(value);
  if (abs !== 0 && (abs < 0.01 || abs >= 10000)) return value.toExponential(1);
  return Number.isInteger(value) ? String(value) : value.toFixed(abs < 1 ? 3 : 2);
}

/**
 * Bars of one or more series over shared categories.
 * @param {HTMLElement} host container (emptied)
 * @param {string[]} labels category labels (x axis), length K
 * @param {Array<{name:string, values:number[], cls?:string}>} series each of length K
 * @param {{title:string, xLabel?:string, yLabel?:string}} options
 */
export function barChart(host, labels, series, options) {
  host.replaceChildren();
  const width = 560, height = 240, left = 44, right = 10, top = 14, bottom = 42;
  const plotW = width - left - right, plotH = height - top - bottom;
  const rawMax = Math.max(1e-12, ...series.flatMap((s) => s.values));
  const integral = series.every((s) => s.values.every(Number.isInteger));
  const step = tickStep(rawMax / 4, integral);
  const maxValue = step * Math.ceil(rawMax / step - 1e-9);
  const nTicks = Math.round(maxValue / step);
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
      const h = (plotH * value) / maxValue;
      const x = left + i * groupW + groupW * 0.08 + j * barW;
      const rect = el("rect", {
        x, y: top + plotH - h, width: barW, height: Math.max(0, h), class: `bar ${s.cls ?? ""}`,
      });
      rect.append(el("title", {}, `${s.name} ${label}: ${niceNumber(value)}`));
      svg.append(rect);
    });
    if (i % labelEvery === 0) {
      axis.append(el("text", { x: left + i * groupW + groupW / 2, y: top + plotH + 12, "text-anchor": "middle" }, label));
    }
  });
  if (options.xLabel) axis.append(el("text", { x: left + plotW / 2, y: height - 6, "text-anchor": "middle" }, options.xLabel));
  if (options.yLabel) axis.append(el("text", { x: 10, y: top + plotH / 2, transform: `rotate(-90 10 ${top + plotH / 2})`, "text-anchor": "middle" }, options.yLabel));
  host.append(svg);
  if (series.length > 1) {
    const legend = document.createElement("div");
    legend.className = "legend";
    series.forEach((s) => {
      const item = document.createElement("span");
      const sw = document.createElement("span");
      sw.className = "swatch";
      sw.style.background = s.cls === "b" ? "#d9822b" : "#1f5fbf";
      item.append(sw, document.createTextNode(s.name));
      legend.append(item);
    });
    host.append(legend);
  }
}

/** A 1-2-5 step of at least `raw` (at least 1 for counts). */
function tickStep(raw, integral) {
  const exponent = Math.floor(Math.log10(Math.max(raw, 1e-12)));
  const base = 10 ** exponent;
  const step = [1, 2, 5, 10].map((m) => m * base).find((candidate) => candidate >= raw) ?? 10 * base;
  return integral ? Math.max(1, Math.round(step)) : step;
}

/** Histogram of raw values into `bins` equal-width bins over [lo, hi]. */
export function histogram(values, bins = 20, lo = null, hi = null) {
  const finite = values.filter(Number.isFinite);
  const low = lo ?? (finite.length ? Math.min(...finite) : 0);
  let high = hi ?? (finite.length ? Math.max(...finite) : 1);
  if (high <= low) high = low + 1;
  const counts = new Array(bins).fill(0);
  for (const v of finite) {
    const k = Math.min(bins - 1, Math.max(0, Math.floor(((v - low) / (high - low)) * bins)));
    counts[k] += 1;
  }
  const edges = Array.from({ length: bins + 1 }, (_, i) => low + ((high - low) * i) / bins);
  return { counts, edges };
}

export function edgeLabels(edges) {
  return edges.slice(0, -1).map((e) => niceNumber(e));
}

// ---- heatmap ordering ---------------------------------------------------------------------

/** Rows by the column of their maximum, then by that maximum; columns by first-hit order. */
export function argmaxOrder(matrix) {
  const nRows = matrix.length, nCols = matrix[0]?.length ?? 0;
  const colOrder = [...Array(nCols).keys()].sort((a, b) => {
    const sa = matrix.reduce((s, row) => s + row[a], 0);
    const sb = matrix.reduce((s, row) => s + row[b], 0);
    return sb - sa;
  });
  const colRank = new Map(colOrder.map((c, i) => [c, i]));
  const best = matrix.map((row) => {
    let k = 0;
    row.forEach((v, j) => { if (v > row[k]) k = j; });
    return { k, v: row[k] };
  });
  const rowOrder = [...Array(nRows).keys()].sort((a, b) =>
    colRank.get(best[a].k) - colRank.get(best[b].k) || best[b].v - best[a].v);
  return { rowOrder, colOrder };
}

/**
 * Spectral co-clustering order (Dhillon 2001): normalise A_n = D_r^{-1/2} A D_c^{-1/2},
 * take the second left/right singular vectors (power iteration on A_n A_n^T with the
 * first, trivial vector projected out) and sort rows and columns by them.
 */
export function spectralOrder(matrix, iterations = 200) {
  const nRows = matrix.length, nCols = matrix[0]?.length ?? 0;
  if (nRows < 3 || nCols < 3) return argmaxOrder(matrix);
  const minValue = Math.min(...matrix.flat());
  const a = matrix.map((row) => row.map((v) => v - minValue + 1e-9));
  const rowSum = a.map((row) => row.reduce((s, v) => s + v, 0));
  const colSum = Array.from({ length: nCols }, (_, j) => a.reduce((s, row) => s + row[j], 0));
  const n = a.map((row, i) => row.map((v, j) => v / Math.sqrt(rowSum[i] * colSum[j])));
  const u1 = rowSum.map(Math.sqrt);
  const u1Norm = Math.hypot(...u1);
  u1.forEach((_, i) => { u1[i] /= u1Norm; });
  // deterministic start vector
  let u = Array.from({ length: nRows }, (_, i) => Math.sin(i + 1));
  const project = (vec) => {
    const dot = vec.reduce((s, v, i) => s + v * u1[i], 0);
    return vec.map((v, i) => v - dot * u1[i]);
  };
  for (let it = 0; it < iterations; it++) {
    u = project(u);
    const v = Array.from({ length: nCols }, (_, j) => n.reduce((s, row, i) => s + row[j] * u[i], 0));
    const next = n.map((row) => row.reduce((s, x, j) => s + x * v[j], 0));
    const norm = Math.hypot(...next) || 1;
    u = project(next.map((x) => x / norm));
  }
  const v = Array.from({ length: nCols }, (_, j) => n.reduce((s, row, i) => s + row[j] * u[i], 0));
  const rowKey = u.map((x, i) => x / Math.sqrt(rowSum[i]));
  const colKey = v.map((x, j) => x / Math.sqrt(colSum[j]));
  const rowOrder = [...Array(nRows).keys()].sort((p, q) => rowKey[p] - rowKey[q]);
  const colOrder = [...Array(nCols).keys()].sort((p, q) => colKey[p] - colKey[q]);
  return { rowOrder, colOrder };
}

function colour(t) {
  // white -> blue ramp; t in [0, 1]
  const clamp = Math.max(0, Math.min(1, t));
  const r = Math.round(247 - clamp * (247 - 16));
  const g = Math.round(251 - clamp * (251 - 64));
  const b = Math.round(255 - clamp * (255 - 140));
  return `rgb(${r},${g},${b})`;
}

/**
 * Draw a rows x cols score matrix (NaN = score not stored) on a canvas.
 * @param {HTMLElement} host
 * @param {number[][]} matrix rows = papers, cols = reviewers
 * @param {string[]} rowLabels
 * @param {string[]} colLabels
 * @param {{title:string, marks?:Set<string>}} options marks: "r,c" cells to outline (assigned)
 */
export function heatmap(host, matrix, rowLabels, colLabels, options) {
  host.replaceChildren();
  const nRows = matrix.length, nCols = matrix[0]?.length ?? 0;
  const cell = Math.max(4, Math.min(14, Math.floor(620 / Math.max(nRows, nCols, 1))));
  const canvas = document.createElement("canvas");
  canvas.width = nCols * cell;
  canvas.height = nRows * cell;
  // colour range: 2nd to 98th percentile, so one outlier does not wash out the structure
  const finite = matrix.flat().filter(Number.isFinite).sort((x, y) => x - y);
  const quantile = (f) => finite[Math.min(finite.length - 1, Math.max(0, Math.round(f * (finite.length - 1))))];
  const lo = finite.length ? quantile(0.02) : 0;
  const hi = finite.length ? quantile(0.98) : 1;
  const ctx = canvas.getContext("2d");
  for (let i = 0; i < nRows; i++) {
    for (let j = 0; j < nCols; j++) {
      const v = matrix[i][j];
      ctx.fillStyle = Number.isFinite(v) ? colour((v - lo) / (hi - lo || 1)) : "#e9e9e9";
      ctx.fillRect(j * cell, i * cell, cell, cell);
      if (options.marks?.has(`${i},${j}`)) {
        ctx.strokeStyle = "#d9822b";
        ctx.lineWidth = Math.max(1, cell / 5);
        ctx.strokeRect(j * cell + 1, i * cell + 1, cell - 2, cell - 2);
      }
    }
  }
  canvas.setAttribute("role", "img");
  canvas.setAttribute("aria-label",
    `${options.title}: ${nRows} papers by ${nCols} reviewers, colour scale ${niceNumber(lo)} to ${niceNumber(hi)} (2nd–98th percentile)` +
    (options.marks ? `, ${options.marks.size} assigned pairs outlined` : ""));
  canvas.title = "hover for the pair";
  canvas.addEventListener("mousemove", (event) => {
    const rect = canvas.getBoundingClientRect();
    const j = Math.floor(((event.clientX - rect.left) / rect.width) * nCols);
    const i = Math.floor(((event.clientY - rect.top) / rect.height) * nRows);
    if (i >= 0 && i < nRows && j >= 0 && j < nCols) {
      const v = matrix[i][j];
      canvas.title = `paper ${rowLabels[i]} × reviewer ${colLabels[j]}: ${Number.isFinite(v) ? niceNumber(v) : "not stored"}`;
    }
  });
  const legend = document.createElement("p");
  legend.className = "legend";
  const low = document.createElement("span");
  low.innerHTML = `<span class="swatch" style="background:${colour(0)};border:1px solid #ccc"></span>≤ ${niceNumber(lo)}`;
  const high = document.createElement("span");
  high.innerHTML = `<span class="swatch" style="background:${colour(1)}"></span>≥ ${niceNumber(hi)}`;
  const missing = document.createElement("span");
  missing.innerHTML = `<span class="swatch" style="background:#e9e9e9"></span>not stored (outside top-N)`;
  legend.append(low, high, missing);
  if (options.marks) {
    const m = document.createElement("span");
    m.innerHTML = `<span class="swatch" style="border:2px solid #d9822b"></span>assigned`;
    legend.append(m);
  }
  host.append(canvas, legend);
}

export { niceNumber };
