// Thin client for the service's HTTP API: bearer token, JSON, and errors turned into words.

export class ApiError extends Error {
  /**
   * @param {number} status HTTP status (0 when the request never reached the server)
   * @param {string} message one human-readable sentence (or several lines)
   * @param {Array<{file:string,line:(number|null),field:(string|null),message:string}>} problems
   *        row-level problems of an upload, if the server sent any
   */
  constructor(status, message, problems = []) {
    super(message);
    this.status = status;
    this.problems = problems;
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

export class Api {
  constructor(token = "") {
    this.token = token;
  }

  async request(method, path, { json, form, query, raw = false } = {}) {
    let url = path;
    if (query) {
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries(query)) {
        if (value === undefined || value === null || value === "") continue;
        if (Array.isArray(value)) value.forEach((v) => params.append(key, v));
        else params.append(key, String(value));
      }
      const text = params.toString();
      if (text) url += (url.includes("?") ? "&" : "?") + text;
    }
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
    try {
      response = await fetch(url, { method, headers, body });
    } catch (err) {
      throw new ApiError(0, `Could not reach the service (${method} ${path}): ${err.message}`);
    }
    if (!response.ok) {
      let parsed = null;
      const text = await response.text();
      try { parsed = JSON.parse(text); } catch { parsed = text; }
      throw new ApiError(response.status, describeErrorBody(response.status, parsed),
        extractProblems(parsed));
    }
    if (raw) return response;
    if (response.status === 204) return null;
    const type = response.headers.get("content-type") ?? "";
    if (type.includes("json")) return response.json();
    return response.text();
  }

  get(path, query) { return this.request("GET", path, { query }); }
  post(path, json, query) { return this.request("POST", path, { json: json ?? {}, query }); }
  put(path, json) { return this.request("PUT", path, { json: json ?? {} }); }
  delete(path, query) { return this.request("DELETE", path, { query }); }
  upload(path, file, fieldName = "file") {
    const form = new FormData();
    form.append(fieldName, file, file.name);
    return this.request("POST", path, { form });
  }
  download(path, query) { return this.request("GET", path, { query, raw: true }); }

  /** Every item of a paginated list endpoint (Page{items,total,limit,offset}). */
  async all(path, query = {}, pageSize = 500, maxItems = 20000) {
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
