// The address bar follows the console: the open venue, tab, pool, run, and the paper or
// reviewer shown (core/route.js says how they are written). It is replaced, not pushed, so a
// reload comes back to the same view and the address can be sent to a co-chair as it is.
// Going to an address (sign-in, a pasted link) is views/session.js's `navigate`.
import { formatRoute } from "../core/route.js";
import { isPerson, on, state } from "../core/state.js";

/** The paper or reviewer the Papers and reviewers tab shows ({paper} or {reviewer}). */
let subject = null;

/** Put `route` in the address bar (no navigation, no history entry). */
export function showAddress(route) {
  const hash = formatRoute(route);
  if (location.hash !== hash) history.replaceState(history.state, "", hash);
}

/** Signed out: the address names nothing. */
export function clearAddress() {
  subject = null;
  history.replaceState(history.state, "", `${location.pathname}${location.search}`);
}

function follow() {
  if (!state.me || !state.venue || isPerson()) return;
  showAddress({ venue: state.venue, tab: state.tab, pool: state.pool, run: state.runId, ...(subject ?? {}) });
}

export function setupAddress() {
  on("venue", () => { subject = null; follow(); });
  on("subject", (shown) => { subject = shown; follow(); });
  for (const event of ["tab", "run", "runs", "pool"]) on(event, follow);
}
