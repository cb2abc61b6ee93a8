// A person's own page (reviewer and area chair tokens): their papers in the live run of their
// pool (an area chair also sees each paper's reviewers and senior area chair), their candidate
// papers ranked by their own affinity with a bid control each while the chairs keep bidding
// open, "Why?" for their own pairs, and a decline with a reason. It calls the /venues/{v}/me
// routes only: every other route of the service refuses a person token.
import { $, h, fill } from "../core/dom.js";
import { EP } from "../core/endpoints.js";
import { niceNumber } from "../core/format.js";
import { state } from "../core/state.js";
import { paperCell } from "../components/cells.js";
import { confirmDialog } from "../components/dialog.js";
import { busy, errorBox, say, UserError } from "../components/feedback.js";
import { PagedTable } from "../components/table.js";
import { evidenceView } from "./explain.js";

const BIDS = ["Very High", "High", "Neutral", "Low", "Very Low", "Not Willing"];
const ROLE_WORDS = { reviewer: "Reviewer", area_chair: "Area chair" };

/** The person, as GET /venues/{v}/me answered (kept for this page only). */
let me = null;

function names(people) {
  if (!people?.length) return h("span", { class: "muted" }, "none yet");
  return h("ul", { class: "plain-list" }, people.map((p) => h("li", {}, p.reviewer_name || p.reviewer_id)));
}

/** The evidence behind the person's own pair, in a dialog. */
async function explainOwn(paperId, title) {
  const pair = await state.api.get(EP.myPair(state.venue, paperId), { explain: true });
  const body = h("div", { class: "explanation", "data-testid": "explanation" },
    h("p", {}, "Your score on ", h("strong", {}, title || paperId), `: ${niceNumber(pair.score)}`,
      pair.bid ? ` (your bid: ${pair.bid})` : ""),
    evidenceView(pair.explanation ?? {}, { own: true }));
  await confirmDialog({ title: "Why this score", body, confirm: "Close", cancel: "Back", testid: "explain-dialog", wide: true });
}

function whyButton(paperId, title) {
  return h("button", {
    type: "button", class: "small-btn secondary", "aria-label": `Why do I score “${title || paperId}”?`,
    onclick: (event) => busy(event.currentTarget, null, () => explainOwn(paperId, title), "Explaining the score"),
  }, "Why?");
}

/** Decline one of the person's papers: a dialog asks the reason, the service records it. */
function declineButton(paper, table) {
  return h("button", {
    type: "button", class: "small-btn secondary", "aria-label": `Decline “${paper.paper_title || paper.paper_id}”`,
    onclick: async () => {
      const reason = h("textarea", { id: "decline-reason", rows: 3, maxlength: 2000, required: true });
      const done = await confirmDialog({
        title: `Decline ${paper.paper_title || paper.paper_id}`,
        body: [h("p", {}, "The chairs see your reason and re-assign the paper."),
          h("label", { for: "decline-reason" }, "Reason"), reason],
        confirm: "Decline paper", danger: true, testid: "decline-dialog",
        onConfirm: async () => {
          if (!reason.value.trim()) throw new UserError("Give a reason for the chairs.");
          return state.api.post(EP.myDecline(state.venue, paper.paper_id), { reason: reason.value.trim() });
        },
      });
      if (done) { say(`You declined ${paper.paper_title || paper.paper_id}.`); await table.reload(); }
    },
  }, "Decline…");
}

function papersTable() {
  const area = me.role === "area_chair";
  const table = new PagedTable({
    label: "Your papers", noun: "papers", testid: "my-papers", pageSize: 25,
    empty: "No papers assigned to you yet (nothing is published, or you have none).",
    load: ({ offset, limit, signal }) => state.api.get(EP.myPapers(state.venue), { offset, limit }, { signal }),
    columns: [
      { label: "Paper", rowHeader: true, render: (p) => paperCell(p.paper_id, { title: p.paper_title, open: false }) },
      { label: "Your score", num: true, render: (p) => niceNumber(p.score) },
      ...(area ? [
        { label: "Reviewers", render: (p) => names(p.reviewers) },
        { label: "Senior area chair", render: (p) => names(p.senior_area_chairs) },
      ] : []),
      { label: "Status", render: (p) => (p.declined
        ? h("span", { class: "tag conflict", "data-testid": "declined" }, `Declined: ${p.decline_reason}`)
        : declineButton(p, table)) },
      { label: "Why", render: (p) => whyButton(p.paper_id, p.paper_title) },
    ],
  });
  return table;
}

function bidControl(candidate, error) {
  const select = h("select", {
    "aria-label": `Your bid on “${candidate.paper_title || candidate.paper_id}”`, disabled: !me.bidding_open,
    "data-testid": "bid-select",
  }, h("option", { value: "" }, "— no bid —"), BIDS.map((bid) => h("option", { value: bid }, bid)));
  const known = BIDS.includes(candidate.bid) || !candidate.bid;
  if (!known) select.append(h("option", { value: candidate.bid }, candidate.bid));
  select.value = candidate.bid ?? "";
  select.addEventListener("change", () => busy(select, error, async () => {
    const url = EP.myBid(state.venue, candidate.paper_id);
    const answer = select.value ? await state.api.put(url, { bid: select.value }) : await state.api.delete(url);
    say(answer.bid ? `Bid ${answer.bid} on ${candidate.paper_title || candidate.paper_id} saved.` : "Bid withdrawn.");
  }, "Could not save the bid"));
  return select;
}

function candidatesTable(error) {
  return new PagedTable({
    label: "Your candidate papers", noun: "papers", testid: "my-candidates", pageSize: 25,
    empty: "No candidate papers yet (the chairs have not computed affinities).",
    load: ({ offset, limit, signal }) => state.api.get(EP.myCandidates(state.venue), { offset, limit }, { signal }),
    columns: [
      { label: "Paper", rowHeader: true, render: (c) => paperCell(c.paper_id, { title: c.paper_title, open: false }) },
      { label: "Your score", num: true, render: (c) => niceNumber(c.score) },
      { label: "Your bid", render: (c) => bidControl(c, error) },
      { label: "Assigned", render: (c) => (c.assigned ? "yes" : "") },
      { label: "Why", render: (c) => whyButton(c.paper_id, c.paper_title) },
    ],
  });
}

/** Show the person's page for the signed-in person token (GET /venues/{v}/me first). */
export async function openPersonPage(venueId) {
  me = await state.api.get(EP.venueMe(venueId));
  const view = $("#person-view");
  const bidError = errorBox();
  const papers = papersTable();
  const candidates = candidatesTable(bidError);
  document.title = `${me.name} — ${me.venue_name}`;
  fill(view,
    h("h2", { id: "person-heading", tabindex: -1 }, `${me.name} — ${me.venue_name}`),
    h("p", { class: "muted", "data-testid": "person-role" },
      `${ROLE_WORDS[me.role] ?? me.role} of ${me.venue_name}. You see your own papers, scores and bids only.`),
    h("section", { class: "card", "aria-labelledby": "my-papers-title" },
      h("h3", { id: "my-papers-title" }, "Your papers"),
      h("p", { class: "hint" }, me.role === "area_chair"
        ? "The papers you chair in the published assignment, with their reviewers."
        : "The papers assigned to you in the published assignment. Decline one if you cannot review it."),
      papers.element),
    h("section", { class: "card", "aria-labelledby": "my-candidates-title" },
      h("h3", { id: "my-candidates-title" }, "Bidding"),
      h("p", { class: "hint", "data-testid": "bidding-state" }, me.bidding_open
        ? "Bidding is open: tell the chairs how much you want each paper; you can change a bid until it closes."
        : "Bidding is closed: your bids are shown, and cannot be changed now."),
      bidError, candidates.element));
  await Promise.all([papers.reload(), candidates.reload()]);
  $("#person-heading").focus();
}
