// Unit tests of the page's wording (api/static/core/format.js): run with `node --test tests/js`.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  auditText, clip, conflictReasons, duration, elapsed, jobParamsText, jobTitle, lineageText, loadText,
  niceNumber, pairChips, parseLogLine, plural, runLabel, runName, signed, solveParamsText,
  affinityParamsText, estimateText, rateText, textProgressText,
} from "../../api/static/core/format.js";

test("numbers read short, missing ones as a dash", () => {
  assert.equal(niceNumber(0.44712), "0.447");
  assert.equal(niceNumber(12.345), "12.35");
  assert.equal(niceNumber(3), "3");
  assert.equal(niceNumber(0.001234), "0.0012");
  assert.equal(niceNumber(0.00001234), "1.2e-5");
  assert.equal(niceNumber(123456), "123,456");
  assert.equal(niceNumber(12345.67), "12,346");
  assert.equal(niceNumber(NaN), "–");
  assert.equal(niceNumber(null), "–");
  assert.equal(niceNumber("3"), "–");
  assert.equal(signed(-0.365), "−0.365");
  assert.equal(signed(2), "+2");
  assert.equal(signed(0), "0");
});

test("plurals, clipping and durations", () => {
  assert.equal(plural(1, "pair"), "1 pair");
  assert.equal(plural(2, "pair"), "2 pairs");
  assert.equal(plural(0, "entry", "entries"), "0 entries");
  assert.equal(clip("abcdef", 4), "abc…");
  assert.equal(clip("abc", 4), "abc");
  assert.equal(duration(0.25), "250 ms");
  assert.equal(duration(12.4), "12 s");
  assert.equal(duration(185), "3 min 05 s");
  assert.equal(duration(3720), "1 h 02 min");
  assert.equal(elapsed("2026-01-01T00:00:00Z", "2026-01-01T00:00:42Z"), "42 s");
  assert.equal(elapsed(null, null), "");
});

test("runs say what they are: number, name, state, lineage, parameters", () => {
  const run = {
    id: 41, number: 3, name: "fairness try", state: "draft", version: 2,
    parameters: { solver: "auto", fairness_keep: 1, reviewers_per_paper: 3, min_load: 0, max_load: 9 },
    summary: { objective: 12.3456 },
    derived_from: { kind: "re-solve", assignment_id: 40, assignment_number: 1, text: "re-solve of #1" },
  };
  assert.equal(runName(run), "Run #3 “fairness try”");
  assert.equal(runName({ id: 7 }), "Run #7");
  const label = runLabel(run);
  assert.match(label, /^Run #3 “fairness try” · draft · edited, v2 — /);
  assert.match(label, /fairness \(keep 1\)/);
  assert.match(label, /3 per paper, load 0–9/);
  assert.match(label, /total score 12\.35$/);
  assert.equal(runLabel({ ...run, parameters_summary: "3 per paper, loads 0-9" }).includes("3 per paper, loads 0-9"), true);
  assert.equal(lineageText(run), "re-solve of #1");
  assert.equal(lineageText({ derived_from: { kind: "rerun", job_id: 9, job_number: 2 } }), "rerun of job #2");
  assert.equal(lineageText({ derived_from: null }), "");
});

test("solve parameters in words", () => {
  assert.equal(solveParamsText({ solver: "flow", reviewers_per_paper: 3, min_load: 1, max_load: 6 }),
    "min-cost flow, 3 per paper, load 1–6");
  const text = solveParamsText({
    solver: "randomized", probability_cap: 0.5, reviewers_per_paper: 2, max_load: 4, min_score: 0.1,
    max_per_affiliation: 1, require_attribute: { name: "seniority", value: "senior", min_count: 1 },
    custom_max_load: { a: 1, b: 2 }, seed: 7, time_limit: 90,
  });
  for (const part of ["randomized", "max pair probability 0.5", "min score 0.1", "≤ 1 per affiliation",
    "≥ 1 with seniority=senior", "2 custom max loads", "seed 7", "time limit 1 min 30 s"]) {
    assert.ok(text.includes(part), `${part} in ${text}`);
  }
  assert.equal(solveParamsText(null), "");
});

test("jobs: per-venue numbers, parameters, readable logs", () => {
  assert.equal(jobTitle({ id: 55, number: 4, kind: "assignment" }), "Assignment job #4");
  assert.equal(jobTitle({ id: 55, kind: "affinity" }), "Affinity scores job #55");
  assert.equal(jobTitle({ id: 56, number: 5, kind: "reassignment" }), "Re-assignment job #5");
  assert.equal(jobParamsText({ kind: "affinity", params: { config: { method: "tfidf" }, top_n: 50 } }), "TF-IDF, top 50 kept");
  assert.equal(jobParamsText({ kind: "assignment", parameters_summary: "from the service", params: {} }), "from the service");
  assert.deepEqual(parseLogLine("2026-01-05T10:00:00+00:00 built 228 candidate pairs"),
    { time: "2026-01-05T10:00:00+00:00", message: "built 228 candidate pairs", level: "info" });
  assert.equal(parseLogLine("2026-01-05T10:00:00+00:00 warning: bids folded twice").level, "warning");
  assert.deepEqual(parseLogLine({ time: "t", level: "error", message: "boom" }), { time: "t", message: "boom", level: "error" });
  assert.equal(parseLogLine("no time here").time, null);
});

test("audit entries in words, the service's sentence first", () => {
  const entry = { action: "assignment.deploy", detail: { assignment_id: 3, version: 2, previous_live_id: null, rollback: false, overridden: [] } };
  const { summary, details } = auditText(entry);
  assert.equal(summary, "published a run");
  assert.deepEqual(details, [["run", "#3"], ["version", "2"]]);
  assert.equal(auditText({ ...entry, summary: "published run #3, version 2" }).summary, "published run #3, version 2");
  assert.equal(auditText({ action: "something.new_thing", detail: {} }).summary, "something new thing");
});

test("pair marks are separate chips: each bid and each conflict reason", () => {
  const chips = pairChips({ assigned: true, bid: "Not Willing", conflict: ["co-author", "same affiliation"], rank: 2 });
  assert.deepEqual(chips.map((c) => c.text), ["assigned", "alternate #2", "bid: Not Willing", "conflict: co-author", "conflict: same affiliation"]);
  assert.deepEqual(pairChips({ pinned: true, withdrawn: "paper" }).map((c) => c.text), ["pinned", "paper withdrawn: to remove"]);
  assert.deepEqual(conflictReasons(null), []);
  assert.deepEqual(conflictReasons("one"), ["one"]);
  assert.equal(loadText(3, 6), "3 / 6");
  assert.equal(loadText(3, null), "3");
});

test("an affinity job's progress (embedding, scoring), an estimate and uploaded scores read in words", () => {
  assert.equal(rateText(15.4), "15");
  assert.equal(rateText(2.14), "2.1");
  assert.equal(rateText(0.351), "0.35");
  assert.equal(rateText(null), "–");
  assert.equal(
    textProgressText({ texts_done: 1200, texts_total: 3400, texts_per_second: 15.2, eta_seconds: 160, elapsed_seconds: 80 }),
    "1,200 of 3,400 texts embedded · 15 texts/s · about 2 min 40 s left");
  assert.equal(textProgressText({ texts_done: 0, texts_total: 10, texts_per_second: null, eta_seconds: null }),
    "0 of 10 texts embedded");
  assert.equal(textProgressText(undefined), "");
  assert.equal(
    textProgressText({ fraction: 0.06, papers_done: 1200, papers_total: 20000, papers_per_second: 150.4, eta_seconds: 125, elapsed_seconds: 8, blocks_done: 1, blocks_total: 11 }),
    "1,200 of 20,000 papers scored · 150 papers/s · about 2 min 05 s left");
  assert.equal(textProgressText({ papers_done: 9, papers_total: 9, papers_per_second: 40, eta_seconds: 0 }),
    "9 of 9 papers scored · 40 papers/s");
  assert.equal(
    estimateText({ model: "all-mpnet-base-v2", texts_total: 380000, texts_cached: 1000, texts_to_embed: 379000, texts_per_second: 2.1, seconds: 180476 }),
    "About 50 h 07 min: 379,000 of 380,000 texts to embed with all-mpnet-base-v2 at 2.1 texts/s (1,000 already cached).");
  assert.equal(estimateText({ model: null, texts_total: 11, texts_to_embed: 0, seconds: 0 }),
    "About a few seconds: TF-IDF only, nothing to embed.");
  assert.equal(estimateText({ model: "m", texts_total: 11, texts_cached: 11, texts_to_embed: 0, seconds: 0 }),
    "About a few seconds: every text is already embedded with m.");
  assert.equal(affinityParamsText({ config: { method: "uploaded", source: "s.csv", bid_weight: 0.1 }, top_n: 3 }),
    "uploaded from s.csv, bid weight 0.1");
});
