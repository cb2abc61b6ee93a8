// The page's state (api/static/core/state.js) changes only through its functions: no view,
// component or app.js assigns to it (a check over their source), and the exported `state`
// refuses assignments at run time.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const STATIC = fileURLToPath(new URL("../../api/static/", import.meta.url));

// state.js reads the stored token when it loads: a sessionStorage for Node
const stored = new Map();
globalThis.sessionStorage = {
  getItem: (key) => stored.get(key) ?? null,
  setItem: (key, value) => stored.set(key, String(value)),
  removeItem: (key) => stored.delete(key),
};
const store = await import("../../api/static/core/state.js");
const { state } = store;

/** The page's modules other than state.js itself. */
function pageModules() {
  const files = ["app.js"];
  for (const folder of ["views", "components", "core", "lib"]) {
    for (const name of readdirSync(join(STATIC, folder))) {
      if (name.endsWith(".js") && !(folder === "core" && name === "state.js")) files.push(`${folder}/${name}`);
    }
  }
  return files;
}

/** Source without comments and string or template literal contents (the ${…} parts kept). */
function code(source) {
  let out = "";
  for (let i = 0; i < source.length;) {
    const two = source.slice(i, i + 2);
    if (two === "//") { while (i < source.length && source[i] !== "\n") i += 1; continue; }
    if (two === "/*") { const end = source.indexOf("*/", i + 2); i = end < 0 ? source.length : end + 2; continue; }
    const quote = source[i];
    if (quote === '"' || quote === "'") {
      out += quote;
      for (i += 1; i < source.length && source[i] !== quote && source[i] !== "\n"; i += 1) if (source[i] === "\\") i += 1;
      out += quote;
      i += 1;
      continue;
    }
    if (quote === "`") {
      out += "`";
      for (i += 1; i < source.length && source[i] !== "`"; i += 1) {
        if (source[i] === "\\") { i += 1; continue; }
        if (source[i] === "$" && source[i + 1] === "{") {
          let depth = 1;
          let j = i + 2;
          while (j < source.length && depth) { if (source[j] === "{") depth += 1; if (source[j] === "}") depth -= 1; j += 1; }
          out += code(source.slice(i, j));
          i = j - 1;
        }
      }
      out += "`";
      i += 1;
      continue;
    }
    out += source[i];
    i += 1;
  }
  return out;
}

const STATE_PATH = String.raw`\bstate(?:\s*\.\s*[A-Za-z_$][\w$]*|\s*\[[^\]]*\])+`;
const WRITES = [
  // state.x = …, state.x.y += …, state.x[i] = …, state.x++
  new RegExp(String.raw`${STATE_PATH}\s*(?:=(?!=)|[-+*/%&|^]=|\*\*=|<<=|>>>?=|&&=|\|\|=|\?\?=|\+\+|--)`, "g"),
  new RegExp(String.raw`(?:\+\+|--)\s*${STATE_PATH}`, "g"),
  // state.runs.push(…), state.counts.x.sort(…); calls on state.api are requests, not changes
  new RegExp(String.raw`\bstate\s*\.\s*(?!api\b)[\w$]+(?:\s*\.\s*[\w$]+|\s*\[[^\]]*\])*\s*\.\s*(?:push|pop|shift|unshift|splice|sort|reverse|fill|copyWithin|set|add|delete|clear)\s*\(`, "g"),
  /\b(?:Object\.(?:assign|defineProperty|defineProperties|setPrototypeOf)|Reflect\.(?:set|defineProperty|deleteProperty))\s*\(\s*state\b/g,
  /\bdelete\s+state\b/g,
];

/** Each place in `source` that changes `state` directly: "line: text". */
function directWrites(source) {
  const text = code(source);
  const found = [];
  for (const pattern of WRITES) {
    for (const match of text.matchAll(pattern)) {
      const line = text.slice(0, match.index).split("\n").length;
      found.push(`${line}: ${match[0].trim()}`);
    }
  }
  return found;
}

test("the check finds every kind of direct write", () => {
  const writes = [
    "state.runId = 3;", "state.counts.reviewers += 1;", "state.runs[0] = run;", "state.tab++;",
    "--state.runId;", "state.venues.push(venue);", "state.runs.sort((a, b) => a.id - b.id);",
    "Object.assign(state, { me: null });", "delete state.me;", "state.me.role = 'admin';",
    "state . runId=1", "x = `${state.runId = 1}`;",
  ];
  for (const line of writes) assert.equal(directWrites(line).length, 1, line);
  const reads = [
    "if (state.runId === 3) go();", "state.api.delete(EP.maxLoad(state.venue, r));", "a = state.runs.find((r) => r.id);",
    "// state.runId = 3", "say('state.runId = 3');", "x = `state.tab = ${state.tab}`;", "f(state.runId >= 2, state.tab !== t);",
    "const s = state.counts; s2 = { ...state };",
  ];
  for (const line of reads) assert.deepEqual(directWrites(line), [], line);
});

test("views, components and app.js change the state only through core/state.js", () => {
  const files = pageModules();
  assert.ok(files.some((f) => f.startsWith("views/")) && files.includes("app.js"));
  const offences = files.flatMap((file) =>
    directWrites(readFileSync(join(STATIC, file), "utf8")).map((where) => `${file}:${where}`));
  assert.deepEqual(offences, [], "use (or add) a function of core/state.js");
});

test("the exported state refuses assignments; its lists and records are frozen", () => {
  assert.throws(() => { state.runId = 3; }, /read-only/);
  assert.throws(() => { delete state.me; }, /read-only/);
  assert.throws(() => Object.assign(state, { tab: "x" }), /read-only/);
  assert.throws(() => state.runs.push({ id: 1 }), TypeError);
  assert.throws(() => state.venues.push({ id: "v" }), TypeError);
  assert.throws(() => { state.counts.reviewers = 2; }, TypeError);
  store.signedIn({}, { role: "admin" }, [{ id: "v", live_assignment_id: null }]);
  store.enterVenue("v");
  store.setRuns([{ id: 1, state: "live" }]);
  assert.throws(() => { store.currentVenue().live_assignment_id = 2; }, TypeError);
  assert.throws(() => { state.runs[0].name = "x"; }, TypeError);
  store.resetSession();
  assert.equal(state.runId, null);
});

test("signing in, opening a venue, runs and the selection go through the functions", () => {
  const me = { name: "Chair", role: "chair", venue_id: "v1" };
  store.signedIn({ token: "t" }, me, [{ id: "v1", name: "One", live_assignment_id: null }]);
  store.addVenue({ id: "v2", name: "Two", live_assignment_id: null });
  assert.deepEqual(state.venues.map((v) => v.id), ["v1", "v2"]);
  store.enterVenue("v1");
  assert.equal(state.venue, "v1");
  assert.ok(store.canWrite());

  store.setRuns([{ id: 1, state: "superseded" }, { id: 3, state: "draft" }, { id: 2, state: "live" }]);
  assert.deepEqual(state.runs.map((r) => r.id), [3, 2, 1]);
  assert.equal(store.currentVenue().live_assignment_id, 2);
  assert.equal(state.venues[1].live_assignment_id, null);

  const seen = [];
  const offRuns = store.on("runs", (runs) => seen.push(["runs", runs.length]));
  const offChanged = store.on("run-changed", (run) => seen.push(["run-changed", run.version]));
  store.setRunId(3);
  store.updateRun({ id: 3, state: "draft", version: 2 });
  store.updateRun({ id: 4, state: "draft", version: 1 });
  offRuns();
  offChanged();
  assert.deepEqual(seen, [["runs", 3], ["run-changed", 2], ["runs", 4]]);
  assert.deepEqual(state.runs.map((r) => r.id), [4, 3, 2, 1]);
  assert.equal(store.currentRun().version, 2);

  store.setCounts({ reviewers: 27, submissions: 76 });
  store.setAffinityRun({ id: 9 });
  store.setTab("tab-jobs");
  assert.deepEqual({ ...state.counts }, { reviewers: 27, submissions: 76 });
  assert.equal(state.affinityRun.id, 9);
  assert.equal(state.tab, "tab-jobs");

  store.enterVenue("v2");
  assert.deepEqual([state.venue, state.runs.length, state.runId, state.affinityRun], ["v2", 0, null, null]);
  assert.equal(store.canWrite(), false);
});

test("followed jobs stop polling on request, on opening a venue and on sign-out", () => {
  const timers = [setInterval(() => {}, 1000), setInterval(() => {}, 1000), setInterval(() => {}, 1000)];
  store.startPolling(1, timers[0]);
  store.startPolling(2, timers[1]);
  assert.ok(store.isPolling(1) && store.isPolling(2));
  store.stopPolling(1);
  assert.ok(!store.isPolling(1) && store.isPolling(2));
  store.enterVenue("v1");
  assert.ok(!store.isPolling(2));
  store.startPolling(3, timers[2]);
  store.rememberToken("secret");
  store.resetSession();
  assert.ok(!store.isPolling(3));
  assert.equal(store.storedToken(), null);
  assert.deepEqual([state.me, state.venue, state.venues.length, state.runs.length], [null, null, 0, 0]);
  timers.forEach((timer) => clearInterval(timer));
});
