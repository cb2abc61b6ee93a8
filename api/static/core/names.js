// Names and titles for ids, and type-ahead search of papers and reviewers.
// The service sends `paper_title` and `reviewer_name` beside every id (docs/page-api.md, "Names beside ids");
// this cache remembers them so that a view can name an id another answer mentioned, and the
// search functions ask the service's indexed search (fast at 20,000 papers and reviewers).
import { EP } from "./endpoints.js";
import { state } from "./state.js";
import { paperLabel, reviewerLabel } from "./format.js";

const cache = {
  venue: null,
  reviewers: new Map(), // id -> {id, name, affiliation}
  papers: new Map(), // id -> {id, title}
};

function current() {
  if (cache.venue !== state.venue) {
    cache.venue = state.venue;
    cache.reviewers.clear();
    cache.papers.clear();
  }
  return cache;
}

/** Forget the cached names (after an upload changed them). */
export function invalidateNames() {
  cache.venue = null;
}

export function reviewerName(id) {
  return current().reviewers.get(id)?.name ?? "";
}

export function reviewerInfo(id) {
  return current().reviewers.get(id) ?? null;
}

export function paperTitle(id) {
  return current().papers.get(id)?.title ?? "";
}

/** Remember the names the service sent along with rows (`reviewer_name`, `paper_title`,
 * `remove_reviewer_name`), including nested lists of changed pairs. */
export function learnNames(rows) {
  const c = current();
  const visit = (row) => {
    if (!row || typeof row !== "object") return;
    if (row.reviewer_id && row.reviewer_name) {
      c.reviewers.set(row.reviewer_id, { ...(c.reviewers.get(row.reviewer_id) ?? {}), id: row.reviewer_id, name: row.reviewer_name });
    }
    if (row.remove_reviewer_id && row.remove_reviewer_name) {
      c.reviewers.set(row.remove_reviewer_id, { id: row.remove_reviewer_id, name: row.remove_reviewer_name });
    }
    if (row.paper_id && row.paper_title) c.papers.set(row.paper_id, { id: row.paper_id, title: row.paper_title });
  };
  for (const row of rows ?? []) visit(row);
  return rows;
}

function learnReviewer(hit) {
  current().reviewers.set(hit.id, { id: hit.id, name: hit.name ?? hit.display_name ?? "", affiliation: hit.affiliation ?? "" });
}

/** Type-ahead: the best reviewers for a query (name, affiliation or id), best first; the
 * first reviewers by id for an empty query. */
export async function searchReviewers(query, signal) {
  const text = String(query ?? "").trim();
  const page = text
    ? await state.api.get(EP.searchReviewers(state.venue), { q: text, limit: 20 }, { signal })
    : await state.api.get(EP.reviewers(state.venue), { limit: 20 }, { signal });
  return page.items.map((hit) => {
    learnReviewer(hit);
    const name = hit.name || hit.display_name || "";
    return { id: hit.id, label: reviewerLabel(hit.id, name), detail: hit.affiliation || "" };
  });
}

/** Type-ahead: the best papers for a query (title words or id), best first; the first papers
 * by id for an empty query. */
export async function searchPapers(query, signal) {
  const text = String(query ?? "").trim();
  const page = text
    ? await state.api.get(EP.searchPapers(state.venue), { q: text, limit: 20 }, { signal })
    : await state.api.get(EP.submissions(state.venue), { limit: 20 }, { signal });
  return page.items.map((hit) => {
    current().papers.set(hit.id, { id: hit.id, title: hit.title ?? "" });
    return { id: hit.id, label: paperLabel(hit.id, hit.title, 90), detail: "" };
  });
}
