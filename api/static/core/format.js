// Words and numbers for the page. Pure functions (no DOM): unit-tested under `node --test`.

/** A number in at most 3-4 significant characters; "–" for missing values. */
export function niceNumber(value) {
  if (typeof value !== "number" || !Number.isFinite(value)) return "–";
  const abs = Math.abs(value);
  // counts and large totals in full, grouped by thousands
  if (Number.isInteger(value) || abs >= 10000) return Math.round(value).toLocaleString("en-US");
  if (abs < 0.0001) return value.toExponential(1);
  if (abs < 0.01) return value.toFixed(4);
  return value.toFixed(abs < 1 ? 3 : 2);
}

/** What each pool's persons are called, plural. */
export const POOL_WORDS = { reviewers: "reviewers", area_chairs: "area chairs", senior_area_chairs: "senior area chairs" };

/** A signed difference: "+0.120", "−3", "0". */
export function signed(value) {
  if (typeof value !== "number" || !Number.isFinite(value)) return "–";
  if (value === 0) return "0";
  return (value > 0 ? "+" : "−") + niceNumber(Math.abs(value));
}

/** "1 paper", "3 papers" (irregular plurals as the third argument). */
export function plural(count, word, many = `${word}s`) {
  return `${count} ${count === 1 ? word : many}`;
}

/** The start of a text, cut at `max` characters with an ellipsis. */
export function clip(text, max) {
  const value = String(text ?? "");
  return value.length > max ? `${value.slice(0, Math.max(1, max - 1)).trimEnd()}…` : value;
}

/** Seconds as "850 ms", "12 s", "3 min 05 s", "1 h 02 min". */
export function duration(seconds) {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0) return "–";
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${String(Math.round(seconds % 60)).padStart(2, "0")} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} min`;
}

/** A rate of texts per second as a person reads it: "15", "2.1", "0.35". */
export function rateText(rate) {
  if (typeof rate !== "number" || !Number.isFinite(rate) || rate <= 0) return "–";
  if (rate >= 10) return Math.round(rate).toLocaleString("en-US");
  return String(Number(rate.toPrecision(2)));
}

/** An affinity job's progress numbers (the job's result.progress while it runs), while
 * texts are embedded: "1,200 of 3,400 texts embedded · 15 texts/s · about 2 min 40 s left";
 * while papers are scored: "1,200 of 20,000 papers scored · 150 papers/s · about 2 min left". */
export function textProgressText(p) {
  if (!p) return "";
  const unit = typeof p.texts_total === "number" ? ["texts", "embedded"]
    : typeof p.papers_total === "number" ? ["papers", "scored"] : null;
  if (!unit) return "";
  const [name, verb] = unit;
  const done = p[`${name}_done`], total = p[`${name}_total`], rate = p[`${name}_per_second`];
  const parts = [`${done.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} ${name} ${verb}`];
  if (typeof rate === "number") parts.push(`${rateText(rate)} ${name}/s`);
  if (typeof p.eta_seconds === "number" && done < total) parts.push(`about ${duration(p.eta_seconds)} left`);
  return parts.join(" · ");
}

/** An affinity job's estimate (POST .../affinity/estimate) in one line. */
export function estimateText(e) {
  if (!e) return "";
  if (!e.model || e.texts_to_embed === 0) {
    return e.model ? `About a few seconds: every text is already embedded with ${e.model}.` : "About a few seconds: TF-IDF only, nothing to embed.";
  }
  return `About ${duration(e.seconds)}: ${e.texts_to_embed.toLocaleString("en-US")} of ${e.texts_total.toLocaleString("en-US")} texts to embed with ${e.model} at ${rateText(e.texts_per_second)} texts/s` +
    (e.texts_cached ? ` (${e.texts_cached.toLocaleString("en-US")} already cached).` : ".");
}

/** A timestamp as local date and time ("2026-01-05 14:03:12"); "–" when missing or bad. */
export function dateTime(value) {
  if (!value) return "–";
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** A reviewer as "Name (id)" or the id alone. */
export function reviewerLabel(id, name) {
  return name && name !== id ? `${name} (${id})` : String(id);
}

/** A paper as "Title (id)" or the id alone, the title clipped to `max`. */
export function paperLabel(id, title, max = 80) {
  return title ? `${clip(title, max)} (${id})` : String(id);
}

// ---- runs and jobs ---------------------------------------------------------------------------

const SOLVER_WORDS = {
  auto: "auto", flow: "min-cost flow", ilp: "ILP", randomized: "randomized", perturbed: "perturbed maximization",
};

/** A run's or a solve job's parameters in a few words: "flow, 3 per paper, load 0–6, …". */
export function solveParamsText(p = {}) {
  if (!p || typeof p !== "object") return "";
  const parts = [];
  if (p.solver) parts.push(SOLVER_WORDS[p.solver] ?? p.solver);
  if (p.fairness_keep != null) parts.push(`fairness (keep ${p.fairness_keep})`);
  if (p.perturbation != null) parts.push(`perturbation β ${p.perturbation}`);
  const q = p.probability_cap ?? p.options?.q;
  if (q != null) parts.push(`max pair probability ${q}`);
  if (p.reviewers_per_paper != null) parts.push(`${p.reviewers_per_paper} per paper`);
  if (p.max_load != null) parts.push(`load ${p.min_load ?? 0}–${p.max_load}`);
  if (p.min_score != null) parts.push(`min score ${p.min_score}`);
  if (p.max_per_affiliation != null) parts.push(`≤ ${p.max_per_affiliation} per affiliation`);
  if (p.require_attribute?.name) {
    const r = p.require_attribute;
    parts.push(`≥ ${r.min_count ?? 1} with ${r.name}=${r.value}`);
  }
  const custom = Object.keys(p.custom_max_load ?? {}).length;
  if (custom) parts.push(`${plural(custom, "custom max load")}`);
  const demand = Object.keys(p.demand ?? {}).length;
  if (demand) parts.push(`${plural(demand, "custom demand")}`);
  if (p.seed != null && p.seed !== 0) parts.push(`seed ${p.seed}`);
  if (p.time_limit != null) parts.push(`time limit ${duration(p.time_limit)}`);
  return parts.join(", ");
}

/** An affinity job's or run's configuration in a few words. */
export function affinityParamsText(p = {}) {
  if (!p || typeof p !== "object") return "";
  const config = p.config ?? p;
  if (config.method === "uploaded") {
    return `uploaded from ${config.source ?? "a file"}` + (config.bid_weight != null ? `, bid weight ${config.bid_weight}` : "");
  }
  const parts = [];
  if (config.method) parts.push(config.method === "tfidf" ? "TF-IDF" : config.method);
  if (config.aggregation) parts.push(`${config.aggregation} aggregation`);
  if (p.top_n != null) parts.push(`top ${p.top_n} kept`);
  if (config.bid_weight != null) parts.push(`bid weight ${config.bid_weight}`);
  return parts.join(", ");
}

/** The number a chair sees for a run or job: the per-venue number if the service sends
 * one, else the global id. */
export function shownNumber(item) {
  return item?.number ?? item?.venue_number ?? item?.id;
}

/** "Run #3 “Fairness try”" — a run's number and name. */
export function runName(run) {
  if (!run) return "no run";
  const name = (run.name ?? "").trim();
  return `Run #${shownNumber(run)}${name ? ` “${name}”` : ""}`;
}

/** The option text of a run: number, name, state, parameters and objective. */
export function runLabel(run) {
  const parts = [runName(run), run.state ?? ""];
  if (run.summary?.edited || (run.version ?? 1) > 1) parts.push(`edited, v${run.version}`);
  let text = parts.filter(Boolean).join(" · ");
  const params = runParamsText(run);
  if (params) text += ` — ${params}`;
  const objective = run.summary?.objective;
  if (typeof objective === "number") text += `, total score ${niceNumber(objective)}`;
  return text;
}

/** Where a run comes from: "re-solve of #1", "rerun of job #3", "re-assignment of run #2"
 * (`runs`: the venue's runs, to number the live run a re-assignment came from); "" for a
 * new solve. */
export function lineageText(run, runs = []) {
  const from = run?.derived_from;
  const reassigned = run?.summary?.reassignment;
  if (!from && reassigned?.derived_from != null) {
    const base = runs.find((r) => r.id === reassigned.derived_from);
    const version = reassigned.derived_from_version != null ? ` (version ${reassigned.derived_from_version})` : "";
    return `re-assignment of run #${shownNumber(base) ?? reassigned.derived_from}${version}`;
  }
  if (!from) return "";
  if (from.text) return from.text;
  if (from.assignment_id != null) return `${from.kind ?? "re-solve"} of run #${from.assignment_number ?? from.assignment_id}`;
  if (from.job_id != null) return `${from.kind ?? "rerun"} of job #${from.job_number ?? from.job_id}`;
  return "";
}

/** A run's parameters in words: the service's summary, else worked out here. */
export function runParamsText(run) {
  return run?.parameters_summary || solveParamsText(run?.parameters);
}

const JOB_KIND_WORDS = { affinity: "Affinity scores", assignment: "Assignment", reassignment: "Re-assignment" };

/** "Assignment job #4" (per-venue number when the service sends one). */
export function jobTitle(job) {
  return `${JOB_KIND_WORDS[job.kind] ?? job.kind} job #${shownNumber(job)}`;
}

/** A job's parameters in words. */
export function jobParamsText(job) {
  // an affinity job's full configuration is long: its few deciding fields say what it is
  if (job?.kind === "affinity" && job.params) {
    return affinityParamsText(job.params) || "the default scoring (the command line's)";
  }
  if (job?.parameters_summary) return job.parameters_summary;
  if (!job?.params) return "";
  return solveParamsText(job.params);
}

const ISO_PREFIX = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?)\s+(.*)$/s;

/** A job log line "2026-01-05T10:00:00+00:00 message" (or a structured {at, message,
 * level}) as {time, message, level}. */
export function parseLogLine(line) {
  if (line && typeof line === "object") {
    return { time: line.at ?? line.time ?? null, message: String(line.message ?? ""), level: line.level ?? "info" };
  }
  const text = String(line ?? "");
  const match = ISO_PREFIX.exec(text);
  const message = match ? match[2] : text;
  const level = /^(warning|error)\b/i.test(message) ? message.split(/\b/)[0].toLowerCase() : "info";
  return { time: match ? match[1] : null, message, level };
}

/** "12 s" between two timestamps, or since `start` when `end` is missing (running jobs). */
export function elapsed(start, end, now = Date.now()) {
  if (!start) return "";
  const from = new Date(start).getTime();
  const to = end ? new Date(end).getTime() : now;
  if (!Number.isFinite(from) || !Number.isFinite(to)) return "";
  return duration(Math.max(0, (to - from) / 1000));
}

// ---- audit log --------------------------------------------------------------------------------

const ACTION_WORDS = {
  "venue.create": "created the venue",
  "reviewers.upload": "uploaded reviewers",
  "submissions.upload": "uploaded submissions",
  "bids.upload": "uploaded bids",
  "affinity.upload": "uploaded affinity scores",
  "constraints.upload": "uploaded conflicts and fixed pairs",
  "paper_demands.upload": "uploaded paper demands",
  "paper_demand.set": "set a paper's demand",
  "paper_demand.delete": "removed a paper's demand",
  "paper_demands.clear": "cleared the paper demands",
  "reviewer_max_loads.upload": "uploaded reviewer max loads",
  "reviewer_max_load.set": "set a reviewer's max load",
  "reviewer_max_load.delete": "removed a reviewer's max load",
  "reviewer_max_loads.clear": "cleared the reviewer max loads",
  "job.start": "started a job",
  "job.cancel": "cancelled a job",
  "job.rerun": "re-ran a job",
  "assignment.pin": "pinned a pair",
  "assignment.unpin": "unpinned a pair",
  "assignment.forbid": "forbade a pair",
  "assignment.unforbid": "allowed a forbidden pair again",
  "assignment.swap": "swapped a reviewer",
  "assignment.add": "added a pair",
  "assignment.remove": "removed a pair",
  "assignment.bulk": "applied a bulk change",
  "assignment.undo": "undid an edit",
  "assignment.deploy": "published a run",
  "assignment.rename": "renamed a run",
  "assignment.update": "updated a run",
  "token.create": "created a token",
  "token.revoke": "revoked a token",
};

const DETAIL_WORDS = {
  assignment_id: "run", job_id: "job", paper_id: "paper", reviewer_id: "reviewer",
  remove_reviewer_id: "removed", add_reviewer_id: "added", version: "version",
  previous_live_id: "replaced run", rollback: "rollback", rows: "rows", source: "file",
  created: "new", updated: "updated", total: "total", kind: "kind", reason: "reason",
  demand: "demand", max_load: "max load", name: "name", note: "note", force: "forced",
};

function detailValue(key, value) {
  if (value === null || value === undefined || value === "") return null;
  if (typeof value === "boolean") return value ? "yes" : null;
  if (key === "assignment_id" || key === "previous_live_id") return `#${value}`;
  if (key === "job_id") return `#${value}`;
  if (Array.isArray(value)) return value.length ? `${value.length} item${value.length === 1 ? "" : "s"}` : null;
  if (typeof value === "object") return Object.keys(value).length ? `${Object.keys(value).length} fields` : null;
  return String(value);
}

/** An audit entry in words: {summary: "published a run", details: [["run", "#3"], …]}. */
export function auditText(entry) {
  const action = String(entry?.action ?? "");
  const summary = entry?.summary ?? ACTION_WORDS[action] ?? action.replaceAll(/[._]/g, " ");
  const details = [];
  for (const [key, value] of Object.entries(entry?.detail ?? {})) {
    const shown = detailValue(key, value);
    if (shown != null) details.push([DETAIL_WORDS[key] ?? key.replaceAll("_", " "), shown]);
  }
  return { summary, details };
}

// ---- pairs ------------------------------------------------------------------------------------

/** Conflict reasons of a pair as a list of separate strings (the service sends a list, older
 * bodies a string; null means "not visible to this role"). */
export function conflictReasons(conflict) {
  if (Array.isArray(conflict)) return conflict.map(String).filter(Boolean);
  return conflict ? [String(conflict)] : [];
}

/** The chips of a pair: [{kind, text}] — each bid and each conflict reason its own chip. */
export function pairChips(pair = {}) {
  const chips = [];
  if (pair.assigned) chips.push({ kind: "assigned", text: "assigned" });
  if (pair.pinned) chips.push({ kind: "pinned", text: "pinned" });
  if (pair.withdrawn) chips.push({ kind: "withdrawn", text: `${pair.withdrawn} withdrawn: to remove` });
  if (pair.forbidden) chips.push({ kind: "forbidden", text: "forbidden" });
  if (pair.rank != null) chips.push({ kind: "alternate", text: `alternate #${pair.rank}` });
  if (pair.bid) chips.push({ kind: "bid", text: `bid: ${pair.bid}` });
  for (const reason of conflictReasons(pair.conflict)) chips.push({ kind: "conflict", text: `conflict: ${reason}` });
  return chips;
}

/** "3 / 6" for a load against a quota; "3" when the quota is unknown. */
export function loadText(load, max) {
  return max == null ? String(load ?? 0) : `${load ?? 0} / ${max}`;
}
