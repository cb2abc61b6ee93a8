// The page's state, declared in one place. Views read `state` and change it only through the
// functions below: `state` is read-only outside this module (assigning to it throws), its
// lists and records are frozen, and tests/js/state.test.mjs checks that no view assigns to it. So a
// newcomer finds every piece of shared state, every change of it and every event here.
import { Api } from "./api.js";

const TOKEN_KEY = "recommender.token";
const VENUE_KEY = "recommender.venue";
const NO_COUNTS = Object.freeze({ reviewers: 0, submissions: 0 });

const current = {
  /** @type {Api} client of the signed-in token */
  api: new Api(sessionStorage.getItem(TOKEN_KEY) ?? ""),
  /** @type {{name:string, role:"admin"|"chair"|"viewer", venue_id:(string|null)}|null} GET /me */
  me: null,
  /** @type {ReadonlyArray<{id:string,name:string,live_assignment_id:(number|null)}>} venues the token sees */
  venues: Object.freeze([]),
  /** @type {string|null} id of the open venue */
  venue: null,
  /** @type {Readonly<{reviewers:number, submissions:number}>} sizes of the open venue */
  counts: NO_COUNTS,
  /** @type {object|null} the venue's latest affinity run (null: none yet) */
  affinityRun: null,
  /** @type {ReadonlyArray<object>} assignment runs the token sees, newest first */
  runs: Object.freeze([]),
  /** @type {number|null} the run the Assignment, Browse and Statistics views show */
  runId: null,
  /** @type {string} the open tab's id ("tab-data", "tab-jobs", …) */
  tab: "tab-data",
  /** @type {"reviewers"|"area_chairs"|"senior_area_chairs"} the pool runs, uploads of persons,
   *  stored quotas and solves are of (chairs pick it in the console head) */
  pool: "reviewers",
};

/** Polling timers of followed jobs, by job id (private: see `startPolling`). */
const polling = new Map();

/** A list of frozen copies of `items`, itself frozen: what `state` holds. */
function frozenList(items) {
  return Object.freeze(items.map((item) => Object.freeze({ ...item })));
}

function readOnly(name) {
  throw new TypeError(`state.${String(name)} is read-only: change it through a function of core/state.js`);
}

/** What the views read. */
export const state = new Proxy(current, {
  set: (_target, name) => readOnly(name),
  deleteProperty: (_target, name) => readOnly(name),
  defineProperty: (_target, name) => readOnly(name),
});

// ---- events: "venue" (opened), "runs" (list changed), "run" (selection changed),
// "run-changed" (the selected run was edited), "affinity" (scores changed), "data"
// (reviewers/submissions changed), "job-finished" (detail: job), "tab" (detail: tab id)
const bus = new EventTarget();

export function on(name, handler) {
  const listener = (event) => handler(event.detail);
  bus.addEventListener(name, listener);
  return () => bus.removeEventListener(name, listener);
}

export function emit(name, detail) {
  bus.dispatchEvent(new CustomEvent(name, { detail }));
}

// ---- session --------------------------------------------------------------------------------

export function rememberToken(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function storedToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function rememberVenue(venueId) {
  if (venueId) sessionStorage.setItem(VENUE_KEY, venueId);
  else sessionStorage.removeItem(VENUE_KEY);
}

export function storedVenue() {
  return sessionStorage.getItem(VENUE_KEY);
}

/** A token was accepted: its client, who it is (GET /me) and the venues it sees. */
export function signedIn(api, me, venues) {
  Object.assign(current, { api, me: Object.freeze({ ...me }), venues: frozenList(venues) });
}

/** A venue was created: add it to the venues the token sees. */
export function addVenue(venue) {
  current.venues = frozenList([...current.venues, venue]);
}

/** Open a venue: stop following the previous venue's jobs and forget its runs and scores. */
export function enterVenue(venueId) {
  stopAllPolling();
  Object.assign(current, { venue: venueId, runs: Object.freeze([]), runId: null, affinityRun: null, pool: "reviewers" });
}

/** Forget everything of the session (sign out). */
export function resetSession() {
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(VENUE_KEY);
  stopAllPolling();
  Object.assign(current, {
    api: new Api(""), me: null, venues: Object.freeze([]), venue: null, counts: NO_COUNTS,
    affinityRun: null, runs: Object.freeze([]), runId: null, pool: "reviewers",
  });
}

// ---- the open venue -------------------------------------------------------------------------

/** The open venue's sizes. */
export function setCounts({ reviewers, submissions }) {
  current.counts = Object.freeze({ reviewers, submissions });
}

/** The venue's latest affinity run (null: none yet). */
export function setAffinityRun(run) {
  current.affinityRun = run && Object.freeze({ ...run });
}

/** The venue's runs (any order; kept newest first); the venue record names the live one. */
export function setRuns(runs) {
  current.runs = frozenList([...runs].sort((a, b) => b.id - a.id));
  const liveId = current.runs.find((run) => run.state === "live")?.id ?? null;
  current.venues = frozenList(current.venues.map((venue) =>
    (venue.id === current.venue ? { ...venue, live_assignment_id: liveId } : venue)));
}

/** The run the Assignment, Browse and Statistics views show (null: none). */
export function setRunId(runId) {
  current.runId = runId;
}

/** Replace one run in the list (after an edit or a publication) and tell the views. */
export function updateRun(run) {
  const known = current.runs.some((r) => r.id === run.id);
  current.runs = frozenList(known ? current.runs.map((r) => (r.id === run.id ? run : r)) : [run, ...current.runs]);
  emit("runs", current.runs);
  if (run.id === current.runId) emit("run-changed", currentRun());
}

/** The open tab's id. */
export function setTab(tabId) {
  current.tab = tabId;
}

/** The pool the console shows and acts on; the run list is the pool's. */
export function setPool(pool) {
  current.pool = pool;
  current.runs = Object.freeze([]);
  current.runId = null;
}

// ---- followed jobs --------------------------------------------------------------------------

/** Is the job followed (polled) already? */
export function isPolling(jobId) {
  return polling.has(jobId);
}

/** Follow a job with the interval timer `timer` (stopped by `stopPolling` or a venue change). */
export function startPolling(jobId, timer) {
  stopPolling(jobId);
  polling.set(jobId, timer);
}

export function stopPolling(jobId) {
  clearInterval(polling.get(jobId));
  polling.delete(jobId);
}

function stopAllPolling() {
  polling.forEach((timer) => clearInterval(timer));
  polling.clear();
}

// ---- derived --------------------------------------------------------------------------------

/** May the signed-in token change the open venue (upload, run jobs, edit, deploy)? */
export function canWrite() {
  const me = current.me;
  return !!me && (me.role === "admin" || (me.role === "chair" && me.venue_id === current.venue));
}

/** Is the signed-in token a person's own (reviewer, area chair)? */
export function isPerson() {
  return ["reviewer", "area_chair"].includes(current.me?.role);
}

/** Does the token see chairs' material (bids, conflicts, drafts, jobs)? */
export function isChair() {
  return canWrite();
}

/** The open venue's record. */
export function currentVenue() {
  return current.venues.find((v) => v.id === current.venue) ?? null;
}

/** The selected run, or null. */
export function currentRun() {
  return current.runs.find((run) => run.id === current.runId) ?? null;
}
