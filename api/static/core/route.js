// The page's addresses: every venue, tab, run, paper and reviewer view is a hash route, so a
// reload comes back to it and a chair can send it to a co-chair (who signs in and lands on
// it). The token never goes into an address.
//
//   #/venues                                   the venue list
//   #/venue/VENUE/TAB                          a tab of a venue's console (TAB: data, jobs,
//                                              assignment, browse, stats, compare, inspect,
//                                              people, audit: the tab ids without "tab-")
//   …?pool=area_chairs&run=12                  the pool and the run shown
//   #/venue/VENUE/browse?run=12&paper=P1       a paper's view (or &reviewer=~Ada1)

export const TABS = ["data", "jobs", "assignment", "browse", "stats", "compare", "inspect", "people", "audit"];
const POOLS = ["reviewers", "area_chairs", "senior_area_chairs"];

/**
 * The route of an address's hash, or null when it names none (empty, "#main", unknown).
 * @param {string} hash location.hash
 * @returns {{venues:true}|{venue:string, tab:(string|null), pool:(string|null), run:(number|null),
 *   paper:(string|null), reviewer:(string|null)}|null}
 */
export function parseRoute(hash) {
  const text = String(hash ?? "").replace(/^#/, "");
  if (!text.startsWith("/")) return null;
  const [path, query = ""] = text.slice(1).split("?", 2);
  const parts = path.split("/").filter(Boolean).map((part) => {
    try { return decodeURIComponent(part); } catch { return null; }
  });
  if (parts.includes(null)) return null;
  if (parts.length === 1 && parts[0] === "venues") return { venues: true };
  if (parts[0] !== "venue" || !parts[1] || parts.length > 3) return null;
  const params = new URLSearchParams(query);
  const tab = parts[2] && TABS.includes(parts[2]) ? `tab-${parts[2]}` : null;
  const run = Number(params.get("run"));
  const pool = params.get("pool");
  const browse = tab === "tab-browse";
  return {
    venue: parts[1],
    tab,
    pool: POOLS.includes(pool) ? pool : null,
    run: Number.isSafeInteger(run) && run > 0 ? run : null,
    paper: browse ? params.get("paper") || null : null,
    reviewer: browse && !params.get("paper") ? params.get("reviewer") || null : null,
  };
}

/**
 * The hash of a route (the inverse of parseRoute).
 * @param {{venues?:boolean, venue?:string, tab?:string, pool?:string, run?:(number|null),
 *   paper?:(string|null), reviewer?:(string|null)}} route
 */
export function formatRoute(route) {
  if (route.venues || !route.venue) return "#/venues";
  const tab = String(route.tab ?? "tab-data").replace(/^tab-/, "");
  const params = new URLSearchParams();
  if (route.pool && route.pool !== "reviewers") params.set("pool", route.pool);
  if (route.run != null) params.set("run", String(route.run));
  if (tab === "browse" && route.paper) params.set("paper", route.paper);
  else if (tab === "browse" && route.reviewer) params.set("reviewer", route.reviewer);
  const query = params.toString();
  return `#/venue/${encodeURIComponent(route.venue)}/${TABS.includes(tab) ? tab : "data"}${query ? `?${query}` : ""}`;
}
