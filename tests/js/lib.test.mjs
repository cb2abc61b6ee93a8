// Unit tests of the pure arithmetic behind tables and charts (api/static/lib).
import { test } from "node:test";
import assert from "node:assert/strict";
import { offsetOf, pageCount, pageOf, rangeText, rovingMove } from "../../api/static/lib/paging.js";
import { argmaxOrder, edgeLabels, histogram, rampColour, robustRange, spectralOrder, tickStep } from "../../api/static/lib/chartmath.js";

test("pages: counts, offsets clamped, ranges in words", () => {
  assert.equal(pageCount(633, 50), 13);
  assert.equal(pageCount(0, 50), 1);
  assert.equal(pageOf(100, 50), 2);
  assert.equal(offsetOf(99, 50, 633), 600);
  assert.equal(offsetOf(-3, 50, 633), 0);
  assert.equal(rangeText(50, 50, 633, "pairs"), "Pairs 51–100 of 633");
  assert.equal(rangeText(0, 0, 0, "pairs"), "No pairs");
});

test("roving tabindex moves: rows, cells, pages", () => {
  const at = { row: 1, col: 0, rows: 3, cols: 2 };
  assert.deepEqual(rovingMove("ArrowDown", at), { row: 2, col: 0 });
  assert.deepEqual(rovingMove("ArrowUp", at), { row: 0, col: 0 });
  assert.deepEqual(rovingMove("ArrowRight", at), { row: 1, col: 1 });
  assert.equal(rovingMove("ArrowLeft", at), null);
  assert.equal(rovingMove("ArrowDown", { ...at, row: 2 }), null);
  assert.deepEqual(rovingMove("End", at), { row: 2, col: 0 });
  assert.deepEqual(rovingMove("PageDown", at), { page: 1 });
  assert.equal(rovingMove("a", at), null);
});

test("histograms count every finite value once, on fixed or data ranges", () => {
  const { counts, edges } = histogram([0, 0.1, 0.5, 0.99, 1, NaN], 4, 0, 1);
  assert.deepEqual(counts, [2, 0, 1, 2]);
  assert.equal(edges.length, 5);
  assert.deepEqual(histogram([], 3).counts, [0, 0, 0]);
  assert.deepEqual(histogram([2, 2, 2], 2).counts, [3, 0]);
  assert.deepEqual(edgeLabels([0, 0.5, 1]), ["0", "0.500"]);
});

test("axis steps are 1-2-5 and whole for counts", () => {
  assert.equal(tickStep(3.2, true), 5);
  assert.equal(tickStep(0.12, false), 0.2);
  assert.equal(tickStep(0.3, true), 1);
  assert.equal(tickStep(1, false), 1);
});

test("heatmap orders are permutations that group a block structure", () => {
  const block = [
    [9, 9, 0, 0], [0, 0, 9, 9], [9, 8, 1, 0], [0, 1, 8, 9],
  ];
  for (const order of [argmaxOrder(block), spectralOrder(block)]) {
    assert.deepEqual([...order.rowOrder].sort(), [0, 1, 2, 3]);
    assert.deepEqual([...order.colOrder].sort(), [0, 1, 2, 3]);
    const rows = order.rowOrder;
    // rows 0 and 2 (same block) are neighbours, as are 1 and 3
    assert.equal(Math.abs(rows.indexOf(0) - rows.indexOf(2)), 1);
    assert.equal(Math.abs(rows.indexOf(1) - rows.indexOf(3)), 1);
  }
});

test("colour ranges ignore outliers and missing values", () => {
  const values = [...Array(100).keys()].map((i) => i / 100);
  values.push(1000, NaN);
  const { lo, hi } = robustRange(values);
  assert.ok(lo <= 0.03 && hi < 1.5, `${lo} ${hi}`);
  assert.equal(rampColour(0), "rgb(247,251,255)");
  assert.equal(rampColour(1), "rgb(16,64,140)");
  assert.equal(rampColour(NaN), rampColour(0));
});
