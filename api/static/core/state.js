// The page's state, declared in one place. Views read `state` and change it only through the
// functions below (or their own `set…` helpers that end in `emit`), so a newcomer can find
// every piece of shared state and every event here.
import { Api } from "./api.js";

const TOKEN_KEY = "recommender.token";
const VENUE_KEY = "recommender.venue";

export const state = {
  /** @type {Api} client of the signed-in token */
  api: new Api(sessionStorage.getItem(TOKEN_KEY) ?? ""),
  /** @type {{name:string, role:"admin"|"chair"|"viewer", venue_id:(string|null)}|null} GET /me */
  me: null,
  /** @type {Array<{id:string,name:string,live_assignment_id:(number|null)}>} venues the token sees */
  venues: [],
  /** @type {string|null} id of the open venue */
  venue: null,
  /** @type {{reviewers:number, submissions:number}} sizes of the open venue */
  counts: { reviewers: 0, submissions: 0 },
  /** @type {object|null} the venue's latest affinity run (null: none yet) */
  affinityRun: null,
  /** @type {Array<object>} assignment runs the token sees, newest first */
  runs: [],
  /** @type {number|null} the run the Assignment, Browse and Statistics views show */
  runId: null,
  /** @type {Map<number, number>} polling timers of followed jobs, by job id */
  polling: new Map(),
  /** @type {string} the tab shown ("data", "jobs", …) */
  tab: "data",
};

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

/** Forget everything of the session (sign out). */
export function resetSession() {
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(VENUE_KEY);
  state.polling.forEach((timer) => clearInterval(timer));
  state.polling.clear();
  Object.assign(state, {
    api: new Api(""), me: null, venues: [], venue: null, counts: { reviewers: 0, submissions: 0 },
    affinityRun: null, runs: [], runId: null,
  });
}

// ---- derived --------------------------------------------------------------------------------

/** May the signed-in token change the open venue (upload, run jobs, edit, deploy)? */
export function canWrite() {
  const me = state.me;
  return !!me && (me.role === "admin" || (me.role === "chair" && me.venue_id === state.venue));
}

/** Does the token see chairs' material (bids, conflicts, drafts, jobs)? */
export function isChair() {
  return canWrite();
}

/** The open venue's record. */
export function currentVenue() {
  return state.venues.find((v) => v.id === state.venue) ?? null;
}

/** The selected run, or null. */
export function currentRun() {
  return state.runs.find((run) => run.id === state.runId) ?? null;
}

/** Replace one run in the list (after an edit or a publication) and tell the views. */
export function updateRun(run) {
  const index = state.runs.findIndex((r) => r.id === run.id);
  if (index >= 0) state.runs[index] = run;
  else state.runs.unshift(run);
  emit("runs", state.runs);
  if (run.id === state.runId) emit("run-changed", run);
}
