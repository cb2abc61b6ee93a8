// The arithmetic behind the charts: histograms, axis ticks and heatmap orders.
// Pure: unit-tested under `node --test`.
import { niceNumber } from "../core/format.js";

/** A 1-2-5 step of at least `raw` (at least 1 for counts). */
export function tickStep(raw, integral) {
  const exponent = Math.floor(Math.log10(Math.max(raw, 1e-12)));
  const base = 10 ** exponent;
  const step = [1, 2, 5, 10].map((m) => m * base).find((candidate) => candidate >= raw * (1 - 1e-12)) ?? 10 * base;
  return integral ? Math.max(1, Math.round(step)) : step;
}

/** Histogram of raw values into `bins` equal-width bins over [lo, hi]. */
export function histogram(values, bins = 20, lo = null, hi = null) {
  const finite = values.filter(Number.isFinite);
  let low = lo ?? Infinity, high = hi ?? -Infinity;
  if (lo == null || hi == null) {
    for (const v of finite) { if (lo == null && v < low) low = v; if (hi == null && v > high) high = v; }
  }
  if (!Number.isFinite(low)) low = 0;
  if (!Number.isFinite(high)) high = 1;
  if (high <= low) high = low + 1;
  const counts = new Array(bins).fill(0);
  for (const v of finite) {
    const k = Math.min(bins - 1, Math.max(0, Math.floor(((v - low) / (high - low)) * bins)));
    counts[k] += 1;
  }
  const edges = Array.from({ length: bins + 1 }, (_, i) => low + ((high - low) * i) / bins);
  return { counts, edges };
}

/** Labels of histogram bins: their lower edges. */
export function edgeLabels(edges) {
  return edges.slice(0, -1).map((e) => niceNumber(e));
}

/** Rows by the column of their maximum, then by that maximum; columns by total, largest first. */
export function argmaxOrder(matrix) {
  const nRows = matrix.length, nCols = matrix[0]?.length ?? 0;
  const colSums = Array.from({ length: nCols }, (_, j) => matrix.reduce((s, row) => s + row[j], 0));
  const colOrder = [...Array(nCols).keys()].sort((a, b) => colSums[b] - colSums[a]);
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
  let u = Array.from({ length: nRows }, (_, i) => Math.sin(i + 1)); // deterministic start
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

/** A white-to-blue ramp colour for t in [0, 1]. */
export function rampColour(t) {
  const clamp = Math.max(0, Math.min(1, Number.isFinite(t) ? t : 0));
  const r = Math.round(247 - clamp * (247 - 16));
  const g = Math.round(251 - clamp * (251 - 64));
  const b = Math.round(255 - clamp * (255 - 140));
  return `rgb(${r},${g},${b})`;
}

/** The 2nd and 98th percentiles of the finite values (a colour range one outlier cannot wash out). */
export function robustRange(values) {
  const finite = values.filter(Number.isFinite).sort((x, y) => x - y);
  if (!finite.length) return { lo: 0, hi: 1 };
  const at = (f) => finite[Math.min(finite.length - 1, Math.max(0, Math.round(f * (finite.length - 1))))];
  return { lo: at(0.02), hi: at(0.98) };
}
