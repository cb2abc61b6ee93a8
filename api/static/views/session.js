// Signing in and out, choosing and creating venues, opening a venue's console.
import { Api } from "../core/api.js";
import { $, h, fill, formValues } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { announceSignIn, announceSignOut, askOtherTabs, followOtherTabs } from "../core/handoff.js";
import { invalidateNames } from "../core/names.js";
import { parseRoute } from "../core/route.js";
import {
  addVenue, emit, enterVenue, rememberToken, rememberVenue, resetSession, setPool, signedIn, state, storedToken,
  storedVenue,
} from "../core/state.js";
import { busy, clearError, globalError, say, showError, UserError } from "../components/feedback.js";
import { openPersonPage } from "./person.js";
import { clearAddress, showAddress } from "./address.js";
import { refreshRuns } from "./runs.js";
import { resetChoice, selectTab } from "./tabs.js";

const PERSON_ROLES = ["reviewer", "area_chair"];

function showView(id) {
  for (const view of ["signin-view", "venue-view", "console-view", "person-view"]) $(`#${view}`).hidden = view !== id;
  $("#session-bar").hidden = id === "signin-view";
  const inConsole = id === "console-view";
  $("#venue-select").hidden = !inConsole || state.venues.length < 2;
  $("#venue-select-label").hidden = $("#venue-select").hidden;
  $("#all-venues").hidden = !inConsole || (state.me?.role !== "admin" && state.venues.length < 2);
}

async function signIn(token, { announce = true } = {}) {
  // the address the page was opened at (a link from a co-chair): where sign-in lands
  const route = parseRoute(location.hash);
  const api = new Api(token);
  const me = await api.get(EP.me());
  // a reviewer's or area chair's token opens their own page (it may read nothing else)
  const venues = PERSON_ROLES.includes(me.role) ? [] : await api.all(EP.venues());
  signedIn(api, me, venues);
  rememberToken(token);
  if (announce) announceSignIn(token);
  // CSS hides the controls marked data-requires="write"/"admin" that this role may not use
  document.body.dataset.role = me.role;
  $("#whoami").textContent = `Signed in as ${me.name} (${me.role}${me.venue_id ? " of " + me.venue_id : ""})`;
  if (PERSON_ROLES.includes(me.role)) {
    enterVenue(me.venue_id);
    showView("person-view");
    await openPersonPage(me.venue_id);
    return;
  }
  renderVenueChoices();
  if (route?.venue && venues.some((v) => v.id === route.venue)) { await openVenue(route.venue, route); return; }
  if (route?.venue) globalError(new UserError(`This token does not see venue ${route.venue}.`), "Opening the address");
  const remembered = route?.venues ? null : storedVenue();
  if (remembered && venues.some((v) => v.id === remembered)) await openVenue(remembered);
  else if (venues.length === 1 && me.role !== "admin" && !route?.venues) await openVenue(venues[0].id);
  else showVenueList();
}

function showVenueList() {
  showView("venue-view");
  showAddress({ venues: true });
  $("#venue-title").focus();
}

/** Go to an address of this page (a link pasted into the open tab). */
export async function navigate(route) {
  if (!route || !state.me || PERSON_ROLES.includes(state.me.role)) return;
  if (route.venues) { renderVenueChoices(); showVenueList(); return; }
  if (!state.venues.some((v) => v.id === route.venue)) {
    globalError(new UserError(`This token does not see venue ${route.venue}.`), "Opening the address");
    return;
  }
  if (route.venue !== state.venue || $("#console-view").hidden) { await openVenue(route.venue, route); return; }
  await showRoute(route);
}

/** In the open venue: the route's pool, run, tab and paper or reviewer. */
async function showRoute(route) {
  if (route.pool && route.pool !== state.pool) {
    setPool(route.pool);
    $("#pool-select").value = route.pool;
    emit("pool", route.pool);
    await refreshRuns({ select: route.run });
  } else if (route.run != null && route.run !== state.runId) {
    await refreshRuns({ select: route.run });
  }
  if (route.paper || route.reviewer) emit("browse", route.paper ? { paper: route.paper } : { reviewer: route.reviewer });
  else if (route.tab) {
    // a tab this role does not have (a chair's address sent to a viewer): the role's first
    const shown = $(`#${route.tab}`)?.getClientRects().length;
    await selectTab(shown ? route.tab : state.me?.role === "viewer" ? "tab-assignment" : "tab-data");
  }
}

function renderVenueChoices() {
  const list = $("#venue-list");
  fill(list, state.venues.length
    ? state.venues.map((venue) => h("li", {},
      h("button", {
        type: "button", class: "secondary", "data-venue": venue.id,
        onclick: () => openVenue(venue.id).catch((e) => globalError(e, "Opening the venue")),
      }, `${venue.name || venue.id} (${venue.id})`)))
    : h("li", { class: "muted" }, state.me?.role === "admin" ? "No venues yet — create one below." : "This token sees no venue."));
  const select = $("#venue-select");
  fill(select, state.venues.map((v) => h("option", { value: v.id }, v.name || v.id)));
  if (state.venue) select.value = state.venue;
}

/** Open a venue's console: its sizes, scores and runs (the live run selected), or what
 * `route` (an address) names: its pool, run, tab, paper or reviewer. */
export async function openVenue(venueId, route = null) {
  clearError($("#global-error"));
  enterVenue(venueId);
  if (route?.pool) setPool(route.pool);
  invalidateNames();
  rememberVenue(venueId);
  $("#venue-select").value = venueId;
  const venue = state.venues.find((v) => v.id === venueId);
  $("#venue-heading").textContent = venue?.name || venueId;
  document.title = `${venue?.name || venueId} — reviewer assignment`;
  showView("console-view");
  // focus goes to the main content: the venue's heading, at the top of it
  $("#venue-heading").focus();
  resetChoice();
  emit("venue", venueId);
  if (route?.tab) {
    await refreshRuns({ select: route.run }).catch((e) => globalError(e, "Loading assignment runs"));
    await showRoute({ ...route, pool: null, run: null });
    return;
  }
  // a viewer comes for the published run (and has no Data tab): show it
  const first = selectTab(state.me?.role === "viewer" ? "tab-assignment" : "tab-data");
  await refreshRuns().catch((e) => globalError(e, "Loading assignment runs"));
  await first;
}

export function setupSession() {
  $("#signin-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const token = $("#token-input").value.trim();
    await busy(event.submitter, $("#signin-error"), () => signIn(token), "Sign-in failed");
  });
  $("#sign-out").addEventListener("click", () => {
    signOut();
    announceSignOut();
  });
  followOtherTabs({
    token: () => (state.me ? storedToken() : null),
    signedIn: (token) => signIn(token, { announce: false }).catch(() => signOut()),
    signedOut: () => signOut(),
  });
  window.addEventListener("hashchange", () => navigate(parseRoute(location.hash)).catch((e) => globalError(e, "Opening the address")));
  $("#all-venues").addEventListener("click", () => {
    renderVenueChoices();
    showVenueList();
  });
  $("#venue-select").addEventListener("change", (event) =>
    openVenue(event.target.value).catch((e) => globalError(e, "Opening the venue")));
  $("#venue-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const values = formValues(form);
    await busy(event.submitter, form.querySelector(".error-box"), async () => {
      const venue = await state.api.post(EP.venues(), { id: values.id.trim(), name: values.name.trim() });
      addVenue(venue);
      renderVenueChoices();
      form.reset();
      say(`Venue ${venue.id} created.`);
      await openVenue(venue.id);
    }, "Could not create the venue");
  });
}

/** Sign out this tab (the sign-out button, or another tab's). */
function signOut() {
  resetSession();
  delete document.body.dataset.role;
  clearAddress();
  $("#token-input").value = "";
  showView("signin-view");
  $("#token-input").focus();
  emit("signed-out");
}

/** Sign in with the token kept for this tab, else the one of another open tab, if any. */
export async function resumeSession() {
  const token = storedToken() || await askOtherTabs();
  if (state.me) return; // signed in with the form while the other tabs were asked
  if (!token) { showView("signin-view"); return; }
  await signIn(token, { announce: false }).catch((error) => {
    showView("signin-view");
    showError($("#signin-error"), error, "Stored token no longer works");
  });
}
