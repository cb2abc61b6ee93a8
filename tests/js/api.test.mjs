// Unit tests of the API client (api/static/core/api.js) with a fake fetch.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Api, ApiError, describeErrorBody, errorCode, extractProblems, withQuery } from "../../api/static/core/api.js";
import { EP } from "../../api/static/core/endpoints.js";

function fakeFetch(responses) {
  const calls = [];
  const fetcher = async (url, init) => {
    calls.push({ url, ...init });
    const next = responses.shift();
    const body = typeof next.body === "string" ? next.body : JSON.stringify(next.body);
    return new Response(next.status === 204 ? null : body, {
      status: next.status ?? 200, headers: { "content-type": next.type ?? "application/json" },
    });
  };
  return { fetcher, calls };
}

test("queries leave out empty values and repeat arrays", () => {
  assert.equal(withQuery("/x", { a: 1, b: "", c: null, d: undefined, e: ["p", "q"], f: false }), "/x?a=1&e=p&e=q&f=false");
  assert.equal(withQuery("/x?z=1", { a: "b c" }), "/x?z=1&a=b+c");
  assert.equal(withQuery("/x", {}), "/x");
});

test("endpoints percent-encode ids (OpenReview ids, slashes refused by the service anyway)", () => {
  assert.equal(EP.paperEdges("v 1", 3, "p#1"), "/venues/v%201/assignments/3/papers/p%231/edges");
  assert.equal(EP.reviewerEdges("v", 3, "~Ada_Lovelace1"), "/venues/v/assignments/3/reviewers/~Ada_Lovelace1/edges");
  assert.equal(EP.compare("v", 1, 2), "/venues/v/assignments/1/compare/2");
  assert.equal(EP.randomness("v 1", 7), "/venues/v%201/assignments/7/randomness");
  assert.equal(EP.reassignLive("v"), "/venues/v/assignments/live/reassign");
});

test("errors carry status, words, the machine-readable code and row problems", async () => {
  const { fetcher, calls } = fakeFetch([{
    status: 409, body: { detail: "pinning would overfill draft 3: reviewer 'r' would review 7 papers", code: "would_overfill", force_allowed: true },
  }]);
  const api = new Api("secret", fetcher);
  await assert.rejects(api.post("/venues/v/assignments/3/pin", { paper_id: "p" }), (error) => {
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, 409);
    assert.equal(error.code, "would_overfill");
    assert.equal(error.body.force_allowed, true);
    assert.match(error.message, /^409 conflict with the current state: pinning would overfill/);
    return true;
  });
  assert.equal(calls[0].headers.Authorization, "Bearer secret");
  assert.equal(calls[0].headers["Content-Type"], "application/json");
  assert.equal(calls[0].body, JSON.stringify({ paper_id: "p" }));
});

test("upload problems are found wherever the body puts them", () => {
  const body = { detail: { message: "bad rows", problems: [{ file: "b.csv", line: 2, field: "bid", message: "unknown bid" }] }, code: "invalid_input" };
  assert.deepEqual(extractProblems(body), [{ file: "b.csv", line: 2, field: "bid", message: "unknown bid" }]);
  assert.equal(errorCode(body), "invalid_input");
  assert.equal(errorCode({ detail: { code: "nested" } }), "nested");
  assert.equal(errorCode("text"), null);
  assert.deepEqual(extractProblems({ detail: "x" }), []);
});

test("validation lists and other bodies read as words", () => {
  assert.equal(describeErrorBody(422, { detail: [{ loc: ["body", "max_load"], msg: "must be ≥ 0" }] }),
    "422 the input was rejected:\nmax_load: must be ≥ 0");
  assert.equal(describeErrorBody(404, null), "404 not found");
  assert.equal(describeErrorBody(500, "  boom "), "500 server error: boom");
  assert.equal(describeErrorBody(409, { detail: { message: "breaks 2 constraints", violations: [] } }), "409 conflict with the current state: breaks 2 constraints");
});

test("pages, every page, and 204", async () => {
  const { fetcher, calls } = fakeFetch([
    { body: { items: [1, 2], total: 5, limit: 2, offset: 0 } },
    { body: { items: [3, 4], total: 5, limit: 2, offset: 2 } },
    { body: { items: [5], total: 5, limit: 2, offset: 4 } },
    { status: 204, body: "" },
  ]);
  const api = new Api("", fetcher);
  assert.deepEqual(await api.all("/things", { q: "x" }, 2), [1, 2, 3, 4, 5]);
  assert.deepEqual(calls.map((c) => c.url), ["/things?q=x&limit=2&offset=0", "/things?q=x&limit=2&offset=2", "/things?q=x&limit=2&offset=4"]);
  assert.equal(await api.delete("/things/1"), null);
  assert.equal(calls[3].headers.Authorization, undefined);
});

test("an unreachable service is an ApiError with status 0; an abort stays an abort", async () => {
  const api = new Api("", async () => { throw new TypeError("network down"); });
  await assert.rejects(api.get("/me"), (error) => error instanceof ApiError && error.status === 0 && /network down/.test(error.message));
  const aborting = new Api("", async () => { const e = new Error("aborted"); e.name = "AbortError"; throw e; });
  await assert.rejects(aborting.get("/me"), (error) => error.name === "AbortError" && !(error instanceof ApiError));
});

test("a request refused as too many in flight is sent again after Retry-After; a busy one is not", async () => {
  const { fetcher, calls } = fakeFetch([
    { status: 429, body: { detail: "too many requests at once", code: "too_many_requests" } },
    { status: 200, body: { ok: true } },
    { status: 429, body: { detail: "re-assignment: venue 'v' already runs 1 at once", code: "busy" } },
  ]);
  const api = new Api("secret", fetcher);
  api.retryScale = 0;
  assert.deepEqual(await api.post("/venues/v/submissions", [{ id: "p" }]), { ok: true });
  assert.equal(calls.length, 2);
  assert.equal(calls[1].body, calls[0].body);
  await assert.rejects(api.post("/venues/v/assignments/live/reassign", {}), (error) => {
    assert.equal(error.status, 429);
    assert.equal(error.code, "busy");
    return true;
  });
  assert.equal(calls.length, 3);
});

test("a job refused for a full queue is shown in words once, never sent again", async () => {
  const detail = "venue 'v' already has 20 jobs queued or running, the most it may have at once " +
    "(20, RECOMMENDER_MAX_QUEUED_JOBS_PER_VENUE); nothing was queued: start it again when one " +
    "has ended (try in 30 s) or cancel one";
  const { fetcher, calls } = fakeFetch([
    { status: 429, body: { detail, code: "too_many_jobs", limit: 20, waiting: 20, retry_after: 30 } },
  ]);
  const api = new Api("secret", fetcher);
  api.retryScale = 0;
  await assert.rejects(api.post("/venues/v/affinity/jobs", { config: { method: "tfidf" } }), (error) => {
    assert.equal(error.status, 429);
    assert.equal(error.code, "too_many_jobs");
    assert.equal(error.message, `429 too many requests: ${detail}`);
    assert.equal(error.body.waiting, 20);
    return true;
  });
  assert.equal(calls.length, 1);
});
