// The People tab: each paper's chairs (area chairs and senior area chairs of the live runs),
// and for chairs the bidding switch, bid coverage of the selected pool, the persons' declines
// turned into an emergency re-assignment draft with one action, and the persons' own tokens
// (reviewer and area chair tokens: created, listed, revoked).
import { $, h, fill } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { dateTime, jobTitle, plural, POOL_WORDS, runName } from "../core/format.js";
import { canWrite, state } from "../core/state.js";
import { paperCell, reviewerCell } from "../components/cells.js";
import { busy, errorBox, say, UserError } from "../components/feedback.js";
import { PagedTable } from "../components/table.js";
import { jobResult } from "./jobs.js";
import { refreshRuns } from "./runs.js";
import { registerView, selectTab } from "./tabs.js";


function people(list) {
  if (!list?.length) return h("span", { class: "muted" }, "—");
  return h("span", {}, list.map((p, i) => [i ? ", " : "", p.reviewer_name || p.reviewer_id]));
}

function chairsCard() {
  const table = new PagedTable({
    label: "Each paper's chairs", noun: "papers", testid: "paper-chairs", pageSize: 25,
    load: ({ offset, limit, signal }) => state.api.get(EP.paperChairs(state.venue), { offset, limit }, { signal }),
    columns: [
      { label: "Paper", rowHeader: true, render: (p) => paperCell(p.paper_id, { title: p.paper_title }) },
      { label: "Area chairs", render: (p) => people(p.area_chairs) },
      { label: "Senior area chairs", render: (p) => people(p.senior_area_chairs) },
    ],
  });
  return [h("section", { class: "card", "aria-labelledby": "chairs-title" },
    h("h3", { id: "chairs-title" }, "Each paper's chairs"),
    h("p", { class: "hint" }, "From the published area-chair and senior-area-chair runs: a paper belongs to its ",
      "area chair's senior area chair."), table.element), table];
}

async function biddingCard() {
  const venue = await state.api.get(EP.venue(state.venue));
  const error = errorBox();
  const status = h("p", { "data-testid": "bidding-status" }, venue.bidding_open ? "Bidding is open." : "Bidding is closed.");
  const button = h("button", { type: "button" }, venue.bidding_open ? "Close bidding" : "Open bidding");
  let open = venue.bidding_open;
  button.addEventListener("click", () => busy(button, error, async () => {
    const answer = await state.api.patch(EP.venue(state.venue), { bidding_open: !open });
    open = answer.bidding_open;
    status.textContent = open ? "Bidding is open." : "Bidding is closed.";
    button.textContent = open ? "Close bidding" : "Open bidding";
    say(open ? "Bidding opened: persons may bid on their candidates." : "Bidding closed.");
  }, "Could not change bidding"));
  return h("section", { class: "card", "aria-labelledby": "bidding-title" },
    h("h3", { id: "bidding-title" }, "Bidding"),
    h("p", { class: "hint" }, "Reviewers and area chairs bid on their candidate papers (ranked by their own affinity) ",
      "with their own token while bidding is open; their bids are folded into the next affinity run."),
    status, button, error);
}

function coverageCard() {
  const threshold = h("input", { id: "coverage-min", type: "number", min: 1, max: 1000, value: 3 });
  const papers = new PagedTable({
    label: "Papers with few positive bids", noun: "papers", testid: "coverage-papers", pageSize: 10,
    empty: "Every paper has enough positive bids.",
    load: ({ offset, limit, signal }) => state.api.get(EP.bidCoveragePapers(state.venue),
      { pool: state.pool, min_positive: Number(threshold.value) || 1, offset, limit }, { signal }),
    columns: [
      { label: "Paper", rowHeader: true, render: (p) => paperCell(p.paper_id, { title: p.paper_title }) },
      { label: "Positive bids", num: true, key: "positive_bids" },
      { label: "All bids", num: true, key: "bids" },
    ],
  });
  const persons = new PagedTable({
    label: "Persons who have not bid", noun: "persons", testid: "coverage-persons", pageSize: 10,
    empty: "Everyone has bid.",
    load: ({ offset, limit, signal }) => state.api.get(EP.bidCoveragePersons(state.venue),
      { pool: state.pool, offset, limit }, { signal }),
    columns: [{ label: "Person", rowHeader: true, render: (p) => reviewerCell(p.person_id, { name: p.person_name, open: false }) }],
  });
  threshold.addEventListener("change", () => papers.restart());
  return [h("section", { class: "card", "aria-labelledby": "coverage-title" },
    h("h3", { id: "coverage-title" }, `Bid coverage (${POOL_WORDS[state.pool]})`),
    h("div", { class: "field" }, h("label", { for: "coverage-min" }, "Papers with fewer positive bids than"), threshold),
    papers.element, persons.element), [papers, persons]];
}

function declinesCard() {
  const error = errorBox();
  const table = new PagedTable({
    label: "Declined papers", noun: "declines", testid: "declines", pageSize: 25,
    empty: "Nobody declined a paper.",
    load: ({ offset, limit, signal }) => state.api.get(EP.declines(state.venue), { pool: state.pool, offset, limit }, { signal }),
    columns: [
      { label: "Paper", rowHeader: true, render: (d) => paperCell(d.paper_id, { title: d.paper_title }) },
      { label: "Person", render: (d) => reviewerCell(d.person_id, { name: d.person_name }) },
      { label: "Reason", key: "reason" },
      { label: "State", render: (d) => (d.state === "open" ? (d.on_live_run ? "open" : "open (not the live run)")
        : `re-assigned in run ${d.reassignment_id}`) },
      { label: "When", render: (d) => dateTime(d.created_at) },
    ],
  });
  const button = h("button", { type: "button" }, "Turn open declines into a re-assignment draft");
  button.addEventListener("click", () => busy(button, error, async () => {
    const job = await state.api.post(EP.reassignDeclines(state.venue), { pool: state.pool });
    say(`${jobTitle(job)} started: re-assigning the declined papers.`);
    const answer = await jobResult(job);
    const draft = { id: answer.assignment_id, number: answer.assignment_number };
    say(`${runName(draft)} drafted: ${plural(answer.declines.length, "declined pair")} re-assigned. Review it, then deploy it.`);
    await table.reload();
    await refreshRuns({ select: draft.id });
    await selectTab("tab-assignment");
  }, "Could not re-assign the declined papers"));
  return [h("section", { class: "card", "aria-labelledby": "declines-title" },
    h("h3", { id: "declines-title" }, `Declines (${POOL_WORDS[state.pool]})`),
    h("p", { class: "hint" }, "One action makes a draft from the live run without the declined pairs (they become ",
      "forbids), filling only their slots; it is published through the usual Deploy."),
    table.element, button, error), table];
}

function tokensCard() {
  const error = errorBox();
  const secret = h("div", { class: "ok-box", hidden: true, "data-testid": "new-token" });
  const person = h("input", { id: "token-person", required: true, placeholder: "the person's id, e.g. ~Ada_Lovelace1" });
  const role = h("select", { id: "token-role" }, h("option", { value: "reviewer" }, "reviewer"),
    h("option", { value: "area_chair" }, "area chair"));
  const table = new PagedTable({
    label: "Person tokens", noun: "tokens", testid: "person-tokens", pageSize: 10,
    load: ({ offset, limit, signal }) => state.api.get(EP.venueTokens(state.venue), { offset, limit }, { signal }),
    columns: [
      { label: "Person", rowHeader: true, render: (t) => (t.person_id ? reviewerCell(t.person_id, { open: false }) : t.name) },
      { label: "Role", key: "role" },
      { label: "Prefix", key: "prefix" },
      { label: "State", key: "state" },
      { label: "", render: (t) => (t.state === "active" ? h("button", {
        type: "button", class: "small-btn secondary", "aria-label": `Revoke the token of ${t.person_id || t.name}`,
        onclick: (event) => busy(event.currentTarget, error, async () => {
          await state.api.post(EP.revokeVenueToken(state.venue, t.id));
          say("Token revoked.");
          await table.reload();
        }, "Could not revoke the token"),
      }, "Revoke") : "") },
    ],
  });
  const form = h("form", { class: "inline-form", onsubmit: (event) => {
    event.preventDefault();
    busy(event.submitter, error, async () => {
      const id = person.value.trim();
      if (!id) throw new UserError("Name the person (their id).");
      const made = await state.api.post(EP.venueTokens(state.venue), { name: `${role.value} ${id}`, role: role.value, person_id: id });
      fill(secret, `Token for ${made.person_id} (shown once): `, h("code", {}, made.token));
      secret.hidden = false;
      await table.reload();
    }, "Could not create the token");
  } },
  h("div", { class: "field" }, h("label", { for: "token-person" }, "Person id"), person),
  h("div", { class: "field" }, h("label", { for: "token-role" }, "Role"), role),
  h("button", { type: "submit" }, "Create person token"));
  return [h("section", { class: "card", "aria-labelledby": "tokens-title" },
    h("h3", { id: "tokens-title" }, "Person tokens"),
    h("p", { class: "hint" }, "A reviewer or area chair signs in with their own token and sees only their own papers, ",
      "candidates, bids and declines."), form, secret, error, table.element), table];
}

/** What the tab shows now (its venue, pool and role) and its tables, to reload them when it
 * is shown again rather than redraw it under the chair's pointer. */
let shown = null;

async function show() {
  const key = `${state.venue}|${state.pool}|${canWrite()}`;
  if (shown?.key === key && $("#people-view").contains(shown.first)) {
    await Promise.all(shown.tables.map((t) => t.reload()));
    return;
  }
  const view = $("#people-view");
  const [chairs, chairsTable] = chairsCard();
  if (!canWrite()) {
    fill(view, chairs);
    shown = { key, first: chairs, tables: [chairsTable] };
    await chairsTable.reload();
    return;
  }
  const [coverage, coverageTables] = coverageCard();
  const [declines, declinesTable] = declinesCard();
  const [tokens, tokensTable] = tokensCard();
  const first = h("div", { class: "grid2" }, await biddingCard(), tokens);
  fill(view, first, coverage, declines, chairs);
  const tables = [chairsTable, declinesTable, tokensTable, ...coverageTables];
  shown = { key, first, tables };
  await Promise.all(tables.map((t) => t.reload()));
}

export function setupPeople() {
  registerView("tab-people", show);
}
