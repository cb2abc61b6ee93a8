// Signing in and out, choosing and creating venues, opening a venue's console.
import { Api } from "../core/api.js";
import { $, h, fill, formValues } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { invalidateNames } from "../core/names.js";
import {
  addVenue, emit, enterVenue, rememberToken, rememberVenue, resetSession, signedIn, state, storedToken,
  storedVenue,
} from "../core/state.js";
import { busy, clearError, globalError, say, showError } from "../components/feedback.js";
import { openPersonPage } from "./person.js";
import { refreshRuns } from "./runs.js";
import { resetChoice, selectTab, userChoseTab } from "./tabs.js";

const PERSON_ROLES = ["reviewer", "area_chair"];

function showView(id) {
  for (const view of ["signin-view", "venue-view", "console-view", "person-view"]) $(`#${view}`).hidden = view !== id;
  $("#session-bar").hidden = id === "signin-view";
  const inConsole = id === "console-view";
  $("#venue-select").hidden = !inConsole || state.venues.length < 2;
  $("#venue-select-label").hidden = $("#venue-select").hidden;
  $("#all-venues").hidden = !inConsole || (state.me?.role !== "admin" && state.venues.length < 2);
}

async function signIn(token) {
  const api = new Api(token);
  const me = await api.get(EP.me());
  // a reviewer's or area chair's token opens their own page (it may read nothing else)
  const venues = PERSON_ROLES.includes(me.role) ? [] : await api.all(EP.venues());
  signedIn(api, me, venues);
  rememberToken(token);
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
  const remembered = storedVenue();
  if (remembered && venues.some((v) => v.id === remembered)) await openVenue(remembered);
  else if (venues.length === 1 && me.role !== "admin") await openVenue(venues[0].id);
  else showVenueList();
}

function showVenueList() {
  showView("venue-view");
  $("#venue-title").focus();
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

/** Open a venue's console: its sizes, scores and runs (the live run selected). */
export async function openVenue(venueId) {
  clearError($("#global-error"));
  enterVenue(venueId);
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
  const first = selectTab("tab-data");
  await refreshRuns().catch((e) => globalError(e, "Loading assignment runs"));
  // a viewer comes for the published run: show it, unless they already chose a tab
  if (state.me?.role === "viewer" && state.runs.length && !userChoseTab()) await selectTab("tab-assignment");
  await first;
}

export function setupSession() {
  $("#signin-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const token = $("#token-input").value.trim();
    await busy(event.submitter, $("#signin-error"), () => signIn(token), "Sign-in failed");
  });
  $("#sign-out").addEventListener("click", () => {
    resetSession();
    delete document.body.dataset.role;
    $("#token-input").value = "";
    showView("signin-view");
    $("#token-input").focus();
    emit("signed-out");
  });
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

/** Sign in with the token kept for this tab, if any. */
export function resumeSession() {
  const token = storedToken();
  if (!token) { showView("signin-view"); return; }
  signIn(token).catch((error) => {
    showView("signin-view");
    showError($("#signin-error"), error, "Stored token no longer works");
  });
}
