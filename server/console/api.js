// api.js talks to the Prompt Canvas API with the key the operator pasted.
// The key lives in sessionStorage only: it is gone when the tab closes.

const keyName = "promptcanvas.apiKey";

// ApiError is a failed request: the HTTP status and the server's error body.
export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || `Request failed with status ${status}.`);
    this.status = status;
    this.code = body && body.code;
    this.details = body && body.details;
  }
}

// apiKey returns the stored key, or null when signed out.
export function apiKey() {
  return sessionStorage.getItem(keyName);
}

// signIn stores the key for this tab.
export function signIn(key) {
  sessionStorage.setItem(keyName, key);
}

// signOut forgets the key.
export function signOut() {
  sessionStorage.removeItem(keyName);
}

// request sends one API call, with the extra headers when given, and
// returns the decoded JSON body (null when there is none); it throws an
// ApiError for any status from 400 up.
export async function request(method, path, body, extra) {
  const headers = { ...extra, Authorization: `Bearer ${apiKey() || ""}` };
  const init = { method, headers, credentials: "omit", cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(path, init);
  const text = await resp.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = { message: text };
    }
  }
  if (!resp.ok) {
    throw new ApiError(resp.status, data);
  }
  return data;
}

// query builds a query string from the defined, non-empty values of params.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") {
      q.set(k, String(v));
    }
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

// loadCanvas reads a canvas, its versions and its environments at once, as
// [canvas, versions, environments]; a missing list is empty.
export async function loadCanvas(canvasId) {
  const [c, versions, envs] = await Promise.all([
    request("GET", `/prompt/${encodeURIComponent(canvasId)}`),
    request("GET", `/prompt-version${query({ promptId: canvasId })}`),
    request("GET", `/environment${query({ resourceType: "prompt", resourceId: canvasId })}`),
  ]);
  return [c, versions || [], envs || []];
}

// listAll reads every item of a paged list (the page envelope: data and
// meta.totalCount), 100 at a time, stopping after maxPages pages.
export async function listAll(path, params, maxPages = 10) {
  const items = [];
  for (let page = 0; page < maxPages; page++) {
    const res = await request("GET", `${path}${query({ ...params, limit: 100, offset: items.length })}`);
    const data = (res && res.data) || [];
    items.push(...data);
    const total = (res && res.meta && res.meta.totalCount) || 0;
    if (data.length === 0 || items.length >= total) {
      break;
    }
  }
  return items;
}

// runTotals returns the totals of the completion runs that params select
// ({count, inputTokens, outputTokens, cost, unpriced, groups, groupCount};
// groups by canvas and version).
export async function runTotals(params) {
  const page = await request("GET", `/v2/chat/completions${query({ ...params, totals: true, limit: 1 })}`);
  return page && page.totals;
}
