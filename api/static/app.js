// The chair console: one page over the service's venue API. Plain ES modules, no build step.
//
//   core/        state (declared in one place), the API client, endpoints, names, formatting
//   components/  reusable pieces: paginated table, type-ahead picker, dialog, feedback, charts
//   lib/         pure arithmetic (paging, chart maths), unit-tested under `node --test`
//   views/       one module per tab, plus the run bar, the session and the edit dialogs
import { $ } from "./core/dom.js";
import { on } from "./core/state.js";
import { setupAddress } from "./views/address.js";
import { setupAssignment } from "./views/assignment.js";
import { setupAudit } from "./views/audit.js";
import { setupBrowse } from "./views/browse.js";
import { setupCompare } from "./views/compare.js";
import { setupData } from "./views/data.js";
import { setupJobs } from "./views/jobs.js";
import { setupPeople } from "./views/people.js";
import { setupPools } from "./views/pools.js";
import { setupRuns } from "./views/runs.js";
import { setupScores } from "./views/scores.js";
import { resumeSession, setupSession } from "./views/session.js";
import { setupStats } from "./views/stats.js";
import { selectTab, setupTabs } from "./views/tabs.js";

function boot() {
  setupTabs();
  setupSession();
  setupRuns();
  setupData();
  setupJobs();
  setupAssignment();
  setupBrowse();
  setupStats();
  setupCompare();
  setupScores();
  setupAudit();
  setupPools();
  setupPeople();
  setupAddress();
  on("open-tab", (tabId) => selectTab(tabId));
  // the skip link moves focus without changing the address (which names the open view)
  $(".skip-link").addEventListener("click", (event) => { event.preventDefault(); $("#main").focus(); });
  resumeSession();
}

boot();
