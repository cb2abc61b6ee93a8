// The console's tabs (ARIA tabs pattern: one tab stop, arrow keys, Home/End) and which view
// each one shows. A view registers a `show` function; it runs when its tab opens and when
// the selected run or the venue changes while it is open.
import { $, $$ } from "../core/dom.js";
import { emit, on, setTab, state } from "../core/state.js";
import { globalError } from "../components/feedback.js";

const views = new Map(); // tab id -> show()
let chosen = 0; // tabs the user opened since the venue was opened

/** Register the view of a tab ("tab-assignment" → show). */
export function registerView(tabId, show) {
  views.set(tabId, show);
}

/** The open tab's id. */
export function openTab() {
  return $$('[role="tab"]').find((tab) => tab.getAttribute("aria-selected") === "true")?.id ?? "tab-data";
}

/** Open a tab (and focus it when `focus`). */
export function selectTab(tabId, focus = false) {
  for (const tab of $$('[role="tab"]')) {
    const selected = tab.id === tabId;
    tab.setAttribute("aria-selected", String(selected));
    tab.tabIndex = selected ? 0 : -1;
    $(`#${tab.getAttribute("aria-controls")}`).hidden = !selected;
    if (selected && focus) tab.focus();
  }
  setTab(tabId);
  emit("tab", tabId);
  return refreshOpenTab();
}

/** Show the open tab's view again (its data changed). */
export function refreshOpenTab() {
  const show = views.get(openTab());
  if (!show || !state.venue) return Promise.resolve();
  return Promise.resolve().then(show).catch((error) => globalError(error, "Loading the view"));
}

/** Did the user open a tab since `resetChoice()` (so the page should not switch for them)? */
export function userChoseTab() {
  return chosen > 0;
}

export function resetChoice() {
  chosen = 0;
}

export function setupTabs() {
  const tabs = $$('[role="tab"]');
  tabs.forEach((tab) => {
    tab.addEventListener("click", () => { chosen += 1; selectTab(tab.id); });
    tab.addEventListener("keydown", (event) => {
      // the tabs this role has (a viewer has no chair tabs: CSS hides them)
      const shown = tabs.filter((t) => t.getClientRects().length);
      const index = shown.indexOf(tab);
      let next = null;
      if (event.key === "ArrowRight") next = shown[(index + 1) % shown.length];
      if (event.key === "ArrowLeft") next = shown[(index - 1 + shown.length) % shown.length];
      if (event.key === "Home") next = shown[0];
      if (event.key === "End") next = shown[shown.length - 1];
      if (next) { event.preventDefault(); chosen += 1; selectTab(next.id, true); }
    });
  });
  // a run chosen in the run bar, or a venue opened: the open view shows it
  on("run", () => refreshOpenTab());
}
