// The page's addresses (api/static/core/route.js): parse and format are each other's inverse,
// and an address that names no route (the skip link's "#main", junk) is none.
import { test } from "node:test";
import assert from "node:assert/strict";
import { formatRoute, parseRoute } from "../../api/static/core/route.js";

test("a paper's view round-trips, ids with slashes, spaces and tildes included", () => {
  const route = { venue: "iclr 2026/main", tab: "tab-browse", pool: "area_chairs", run: 12, paper: "P/1 x", reviewer: null };
  const hash = formatRoute(route);
  assert.equal(hash, "#/venue/iclr%202026%2Fmain/browse?pool=area_chairs&run=12&paper=P%2F1+x");
  assert.deepEqual(parseRoute(hash), route);
});

test("a reviewer's view and a plain tab", () => {
  assert.deepEqual(parseRoute("#/venue/v1/browse?reviewer=~Ada_Lovelace1"),
    { venue: "v1", tab: "tab-browse", pool: null, run: null, paper: null, reviewer: "~Ada_Lovelace1" });
  assert.equal(formatRoute({ venue: "v1", tab: "tab-stats", pool: "reviewers", run: 3, paper: "P1" }), "#/venue/v1/stats?run=3");
  assert.deepEqual(parseRoute("#/venue/v1/stats?run=3"),
    { venue: "v1", tab: "tab-stats", pool: null, run: 3, paper: null, reviewer: null });
});

test("the venue list, and addresses that name no route", () => {
  assert.deepEqual(parseRoute("#/venues"), { venues: true });
  assert.equal(formatRoute({ venues: true }), "#/venues");
  for (const hash of ["", "#", "#main", "#/nowhere", "#/venue/", "#/venue/v/x/y", "#/venue/%E0%A4%A/data"]) {
    assert.equal(parseRoute(hash), null, hash);
  }
  // unknown tabs, pools and runs are dropped, not trusted
  assert.deepEqual(parseRoute("#/venue/v/secret?pool=admins&run=-4"),
    { venue: "v", tab: null, pool: null, run: null, paper: null, reviewer: null });
});
