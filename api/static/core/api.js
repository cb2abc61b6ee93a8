// Thin client for the service's HTTP API: bearer token, JSON, and errors turned into words.
// Pure (no DOM): runs in the browser and under `node --test`.

export class ApiError extends Error {
  /**
   * @param {number} status HTTP status (0 when the request never reached the server)
   * @param {string} message one human-readable sentence (or several lines)
   * @param {object} [more]
   * @param {Array<{file:string,line:(number|null),field:(string|null),message:string}>} [more.problems]
   *        row-level problems of an upload, if the server sent any
   * @param {string|null} [more.code] the machine-readable error code the service sent (decide on
   *        this, never on the message text)
   * @param {any} [more.body] the parsed error body (structured diagnoses, violation lists)
   */
  constructor(status, message, { problems = [], code = null, body = null } = {}) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.problems = problems;
    this.code = code;
    this.body = body;
  }

  /** The structured `detail` object of the body, if the service sent one. */
  get detail() {
    const detail = this.body && typeof this.body === "object" ? this.body.detail : null;
    return detail && typeof detail === "object" && !Array.isArray(detail) ? detail : null;
  }
}

const STATUS_WORDS = {
  400: "bad request", 401: "not signed in or token not accepted", 403: "not allowed",
  404: "not found", 409: "conflict with the current state", 413: "upload too large",
  415: "unsupported file type", 422: "the input was rejected", 429: "too many requests",
  500: "server error", 502: "bad gateway", 503: "service unavailable",
};

function isProblem(item) {
  return item && typeof item === "object" && ("file" in item) &&
    ("message" in item || "reason" in item);
}

/** Find row-level upload problems anywhere in an error body. */
export function extractProblems(body) {
  if (!body || typeof body !== "object") return [];
  const queue = [body];
  while (queue.length) {
    const value = queue.shift();
    if (Array.isArray(value)) {
      if (value.length && value.every(isProblem)) {
        return value.map((p) => ({
          file: p.file ?? "", line: p.line ?? null, field: p.field ?? null,
          message: p.message ?? p.reason ?? "",
        }));
      }
      queue.push(...value.filter((v) => v && typeof v === "object"));
    } else if (value && typeof value === "object") {
      queue.push(...Object.values(value).filter((v) => v && typeof v === "object"));
    }
  }
  return [];
}

/** The machine-readable error code of a body: `{"code"}` or `{"detail": {"code"}}`. */
export function errorCode(body) {
  if (!body || typeof body !== "object") return null;
  if (typeof body.code === "string") return body.code;
  const detail = body.detail;
  if (detail && typeof detail === "object" && !Array.isArray(detail) && typeof detail.code === "string") {
    return detail.code;
  }
  return null;
}

/** Words for a FastAPI error body: {"detail": str | [{loc,msg}] | {message, problems}}. */
export function describeErrorBody(status, body) {
  const head = `${status} ${STATUS_WORDS[status] ?? "error"}`;
  if (body == null) return head;
  if (typeof body === "string") return body.trim() ? `${head}: ${body.trim().slice(0, 500)}` : head;
  const detail = body.detail ?? body.error ?? body.message ?? body;
  if (typeof detail === "string") return `${head}: ${detail}`;
  if (Array.isArray(detail)) {
    const lines = detail.map((d) => {
      if (typeof d === "string") return d;
      if (d && d.msg) {
        const where = Array.isArray(d.loc) ? d.loc.filter((x) => x !== "body").join(".") : "";
        return where ? `${where}: ${d.msg}` : d.msg;
      }
      if (isProblem(d)) return `${d.file}${d.line != null ? ":" + d.line : ""}${d.field ? " [" + d.field + "]" : ""}: ${d.message ?? d.reason}`;
      return JSON.stringify(d);
    });
    return `${head}:\n${lines.join("\n")}`;
  }
  if (typeof detail === "object") {
    const msg = detail.message ?? detail.detail ?? detail.error;
    if (typeof msg === "string") return `${head}: ${msg}`;
    return `${head}: ${JSON.stringify(detail).slice(0, 500)}`;
  }
  return `${head}: ${String(detail)}`;
}

/** `path?query` with empty values left out and arrays repeated (`ids=a&ids=b`). */
export function withQuery(path, query) {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === "") continue;
    if (Array.isArray(value)) value.forEach((v) => params.append(key, String(v)));
    else params.append(key, String(value));
  }
  const text = params.toString();
  return text ? path + (path.includes("?") ? "&" : "?") + text : path;
}

const MAX_RETRIES = 3;
const MAX_RETRY_WAIT_S = 5;

/** Whether a 429 is the admission's `too_many_requests` (the request never ran), read from
 * a clone so the body stays readable. */
async function refusedBeforeRunning(response) {
  try {
    return (await response.clone().json())?.code === "too_many_requests";
  } catch {
    return false;
  }
}

export class Api {
  /**
   * @param {string} token bearer token ("" for none)
   * @param {typeof fetch} [fetcher] the fetch function (tests pass a fake)
   */
  constructor(token = "", fetcher = null) {
    this.token = token;
    this.fetcher = fetcher ?? ((...args) => globalThis.fetch(...args));
    this.retryScale = 1; // tests shorten the waits after a 429
  }

  async request(method, path, { json, form, query, raw = false, signal } = {}) {
    const url = withQuery(path, query);
    const headers = { Accept: raw ? "*/*" : "application/json" };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    let body;
    if (json !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(json);
    } else if (form !== undefined) {
      body = form;
    }
    let response;
    for (let attempt = 0; ; attempt += 1) {
      try {
        response = await this.fetcher(url, { method, headers, body, signal });
      } catch (err) {
        if (err && err.name === "AbortError") throw err;
        throw new ApiError(0, `Could not reach the service (${method} ${path}): ${err.message}`);
      }
      // the service's admission refused the request before it ran (too many in flight for
      // the venue or the token): nothing happened, so it is sent again after Retry-After
      if (response.status !== 429 || attempt >= MAX_RETRIES || !(await refusedBeforeRunning(response))) break;
      const seconds = Math.min(Number(response.headers.get("retry-after")) || 1, MAX_RETRY_WAIT_S);
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000 * this.retryScale));
    }
    if (!response.ok) {
      let parsed = null;
      const text = await response.text();
      try { parsed = JSON.parse(text); } catch { parsed = text; }
      throw new ApiError(response.status, describeErrorBody(response.status, parsed), {
        problems: extractProblems(parsed), code: errorCode(parsed), body: parsed,
      });
    }
    if (raw) return response;
    if (response.status === 204) return null;
    const type = response.headers.get("content-type") ?? "";
    if (type.includes("json")) return response.json();
    return response.text();
  }

  get(path, query, options = {}) { return this.request("GET", path, { query, ...options }); }
  post(path, json, query) { return this.request("POST", path, { json: json ?? {}, query }); }
  put(path, json) { return this.request("PUT", path, { json: json ?? {} }); }
  patch(path, json) { return this.request("PATCH", path, { json: json ?? {} }); }
  delete(path, query) { return this.request("DELETE", path, { query }); }
  upload(path, file, { fieldName = "file", query, fields = {} } = {}) {
    const form = new FormData();
    for (const [key, value] of Object.entries(fields)) form.append(key, value);
    form.append(fieldName, file, file.name);
    return this.request("POST", path, { form, query });
  }
  download(path, query) { return this.request("GET", path, { query, raw: true }); }

  /** One page of a list endpoint as {items, total, limit, offset}. */
  async page(path, { limit = 50, offset = 0, ...query } = {}, options = {}) {
    const answer = await this.get(path, { ...query, limit, offset }, options);
    if (Array.isArray(answer)) return { items: answer, total: answer.length, limit, offset: 0 };
    return answer;
  }

  /** Every item of a paginated list endpoint (Page{items,total,limit,offset}), in pages of
   * `pageSize`, at most `maxItems`. */
  async all(path, query = {}, pageSize = 500, maxItems = 100_000) {
    const items = [];
    for (let offset = 0; offset < maxItems; offset += pageSize) {
      const page = await this.get(path, { ...query, limit: pageSize, offset });
      if (Array.isArray(page)) return page;
      items.push(...page.items);
      if (items.length >= page.total || page.items.length === 0) break;
    }
    return items;
  }
}
