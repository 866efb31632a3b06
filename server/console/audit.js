// audit.js is the audit log page: the workspace's audit events (GET
// /audit-events, for admins), newest first, a page at a time. Its filters
// and page live in the hash route's query (#/audit?resourceId=...), in
// the API's own parameters, so that a filtered view can be linked and
// reloaded. A row opens on the difference of the resource before and
// after the change.

import { request, query, ApiError } from "./api.js";
import { h, errorBox } from "./dom.js";
import { actor } from "./actors.js";
import { plural } from "./format.js";

// resourceTypes are the types of resource GET /audit-events documents.
export const resourceTypes = ["prompt", "prompt-version", "prompt-version-message", "environment",
  "publication-request", "credential", "model-price", "api-key", "project", "application", "test-case",
  "test-case-tag", "test-case-tags", "experiment", "experiment-result", "evaluator", "review-item", "file"];

// filterNames are the API's filter parameters the page keeps in its route.
const filterNames = ["resourceType", "resourceId", "actor", "action", "since", "until"];

const pageSize = 50;

// auditView is the audit page for the query of its route (without "?").
export async function auditView(search) {
  const params = new URLSearchParams(search || "");
  const f = Object.fromEntries(filterNames.map((k) => [k, params.get(k) || ""]));
  const offset = Math.max(0, Number.parseInt(params.get("offset"), 10) || 0);
  const heading = h("h2", { id: "audit-title" }, "Audit log");
  let page;
  try {
    page = await request("GET", `/audit-events${query({ ...f, limit: pageSize, offset })}`);
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) {
      return h("section", { "aria-labelledby": "audit-title", "data-testid": "audit" }, heading,
        h("p", { className: "error", role: "alert", "data-testid": "audit-forbidden" }, "The audit log is for admins."));
    }
    if (!(err instanceof ApiError) || err.status !== 422) {
      throw err;
    }
    // A filter the API refused (a malformed time in a hand-written link):
    // the form stays, to be corrected.
    return h("section", { "aria-labelledby": "audit-title", "data-testid": "audit" }, heading, filterForm(f), errorBox(err));
  }
  const events = (page && page.data) || [];
  const meta = (page && page.meta) || {};
  const filtered = filterNames.some((k) => f[k]);
  return h("section", { "aria-labelledby": "audit-title", "data-testid": "audit" }, heading,
    chainHead(events[0], !filtered && offset === 0),
    filterForm(f),
    events.length
      ? eventsTable(events)
      : h("p", { className: "hint", "data-testid": "audit-empty" }, filtered ? "No events match these filters." : "No events yet."),
    pager(meta, events.length));
}

// chainHead shows the newest event of the page (the chain's head when the
// page is the unfiltered first) and how the chain is checked.
function chainHead(e, isHead) {
  return h("div", { className: "hint", "data-testid": "audit-chain" },
    e ? h("p", null, isHead ? "Chain head: " : "Newest event shown: ",
      h("span", { className: "mono", "data-testid": "audit-head", title: e.hash }, `#${e.seq} ${e.hash.slice(0, 12)}`)) : null,
    h("p", null, "Each event's hash covers the event before it; ",
      h("code", null, "canvasd audit verify"), " checks the chain and finds an event edited or deleted."));
}

// filterForm edits the filters; applying them moves to their route.
function filterForm(f) {
  const type = h("select", { id: "audit-resource-type", "data-testid": "audit-resource-type" },
    h("option", { value: "" }, "any"),
    resourceTypes.map((t) => h("option", { value: t, selected: t === f.resourceType }, t)));
  const text = (id, value, placeholder) => h("input", { type: "text", id, "data-testid": id, value, placeholder });
  const resourceId = text("audit-resource-id", f.resourceId, "");
  const who = text("audit-actor", f.actor, "key id or user id");
  const action = text("audit-action", f.action, "environment.publish");
  const since = h("input", { type: "datetime-local", step: "1", id: "audit-since", "data-testid": "audit-since", value: localOf(f.since) });
  const until = h("input", { type: "datetime-local", step: "1", id: "audit-until", "data-testid": "audit-until", value: localOf(f.until) });
  return h("form", { className: "filters", id: "audit-filters", "data-testid": "audit-filters", onsubmit: (ev) => {
    ev.preventDefault();
    go({ resourceType: type.value, resourceId: resourceId.value.trim(), actor: who.value.trim().replace(/^key:/, ""), action: action.value.trim(),
      since: isoOf(since.value), until: isoOf(until.value) });
  } },
  field("audit-resource-type", "Resource type", type),
  field("audit-resource-id", "Resource id", resourceId),
  field("audit-actor", "Actor", who),
  field("audit-action", "Action", action),
  field("audit-since", "From (local time)", since),
  field("audit-until", "Before (local time)", until),
  h("div", { className: "filter-actions" },
    h("button", { type: "submit", className: "primary", id: "audit-apply", "data-testid": "audit-apply" }, "Apply"),
    h("button", { type: "button", id: "audit-clear", "data-testid": "audit-clear", onclick: () => go({}) }, "Clear")));
}

function field(id, label, control) {
  return h("div", { className: "filter" }, h("label", { for: id }, label), control);
}

// go shows the page of params; the same route again is read again.
function go(params) {
  const hash = `#/audit${query(params)}`;
  if (location.hash === hash) {
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  } else {
    location.hash = hash;
  }
}

// isoOf turns a datetime-local value (local time) into an RFC 3339 UTC
// instant, or "" when empty.
function isoOf(local) {
  const d = local ? new Date(local) : null;
  return d && !Number.isNaN(d.getTime()) ? d.toISOString() : "";
}

// localOf turns an RFC 3339 instant into a datetime-local value (local
// time, to the second), or "" when empty or malformed.
function localOf(iso) {
  const d = iso ? new Date(iso) : null;
  if (!d || Number.isNaN(d.getTime())) {
    return "";
  }
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

// eventsTable lists events, each row followed by its hidden details.
function eventsTable(events) {
  return h("table", { "data-testid": "audit-table" },
    h("thead", null, h("tr", null, ["", "Time", "Actor", "Action", "Resource", "Request"].map((l) => h("th", { scope: "col" }, l)))),
    h("tbody", null, events.map(eventRows)));
}

// eventRows is an event's row and its details row, which its button opens.
function eventRows(e) {
  const details = h("tr", { className: "audit-details", id: `audit-details-${e.id}`, "data-testid": `audit-details-${e.id}`, hidden: true },
    h("td", { colspan: "6" }, detailsOf(e)));
  const toggle = h("button", { type: "button", className: "toggle", "aria-expanded": "false", "aria-controls": details.id,
    "data-testid": `audit-toggle-${e.id}`, "aria-label": `The change of event #${e.seq}`, onclick: () => {
      details.hidden = !details.hidden;
      toggle.setAttribute("aria-expanded", String(!details.hidden));
      toggle.textContent = details.hidden ? "▸" : "▾";
    } }, "▸");
  const t = new Date(e.time);
  return [
    h("tr", { "data-testid": "audit-row", "data-id": e.id, "data-seq": String(e.seq), "data-action": e.action },
      h("td", null, toggle),
      h("td", { title: e.time }, Number.isNaN(t.getTime()) ? e.time : t.toLocaleString()),
      h("td", null, h("a", { href: `#/audit${query({ actor: e.actor.id })}`, title: "Only this actor's events" }, actor(actorID(e.actor)))),
      h("td", { className: "mono" }, e.action),
      h("td", null, resourceCell(e)),
      h("td", { className: "mono" }, e.requestId || "—")),
    details,
  ];
}

// actorID is the id GET /actors names for an event's actor: an API key
// as "key:<id>", as createdBy records it.
function actorID(a) {
  return a.type === "apiKey" ? `key:${a.id}` : a.id;
}

// resourceCell names an event's resource: a link to its page when the
// console has one, its id otherwise.
function resourceCell(e) {
  const id = e.resourceId;
  const href = resourceHref(e.resourceType, id, e.after || e.before || {});
  const label = id || "(several)";
  return [h("span", { className: "hint" }, `${e.resourceType} `),
    href ? h("a", { href, className: "mono", "data-testid": "audit-resource-link" }, label) : h("span", { className: "mono" }, label)];
}

// resourceHref is the console's page of a resource, read from its id and
// its state s (for the canvas or version it belongs to), or null.
function resourceHref(type, id, s) {
  const enc = encodeURIComponent;
  const canvas = s.promptId ? enc(s.promptId) : "";
  switch (type) {
    case "prompt": return `#/canvases/${enc(id)}`;
    case "prompt-version": return `#/versions/${enc(id)}`;
    case "prompt-version-message": return s.promptVersionId ? `#/versions/${enc(s.promptVersionId)}` : null;
    case "environment": return s.resourceType === "prompt" && s.resourceId && s.name
      ? `#/canvases/${enc(s.resourceId)}/environments/${enc(s.name)}` : null;
    case "experiment": return `#/experiments/${enc(id)}`;
    case "experiment-result": return s.experimentId ? `#/experiments/${enc(s.experimentId)}` : null;
    case "evaluator": return canvas ? `#/canvases/${canvas}/experiments` : null;
    case "review-item": return canvas ? `#/canvases/${canvas}/review` : null;
    case "test-case":
    case "test-case-tag": return canvas ? `#/test-cases/${canvas}` : null;
    case "application": return `#/applications/${enc(id)}`;
    case "credential": return "#/credentials";
    case "api-key": return "#/api-keys";
    case "project": return "#/projects";
    case "model-price": return "#/models";
    case "file": return "#/files";
    case "publication-request": return `#/requests/${enc(id)}`;
    default: return null;
  }
}

// detailsOf shows an event's change member by member, and where it came
// from.
function detailsOf(e) {
  const diff = memberDiff(e.before, e.after);
  const b = e.before || {};
  const a = e.after || {};
  const unchanged = Object.keys(b).filter((k) => k in a && JSON.stringify(a[k]) === JSON.stringify(b[k])).length;
  return h("div", null,
    diff.length
      ? h("table", { className: "audit-diff", "data-testid": "audit-diff" },
        h("thead", null, h("tr", null, ["Member", "Before", "After"].map((l) => h("th", { scope: "col" }, l)))),
        h("tbody", null, diff.map((d) => h("tr", { className: d.change, "data-member": d.name, "data-change": d.change },
          h("td", { className: "mono" }, d.name),
          h("td", { className: "mono" }, d.change === "added" ? "—" : jsonText(d.before)),
          h("td", { className: "mono" }, d.change === "removed" ? "—" : jsonText(d.after))))))
      : h("p", { className: "hint" }, "Nothing changed in the resource as the API shows it."),
    h("p", { className: "hint" },
      unchanged > 0 ? `${plural(unchanged, "member", "members")} unchanged. ` : "",
      `Event #${e.seq} from ${e.remoteAddr || "an unknown address"}; hash `,
      h("span", { className: "mono", title: e.hash }, e.hash.slice(0, 12)), ", after ",
      h("span", { className: "mono", title: e.prevHash }, e.prevHash ? e.prevHash.slice(0, 12) : "none"), "."));
}

// memberDiff compares two JSON objects (null for none) member by member:
// [{name, change: "changed"|"added"|"removed", before, after}], in the
// order of before's members then after's new ones.
export function memberDiff(before, after) {
  const a = before || {};
  const b = after || {};
  const out = [];
  for (const k of Object.keys(a)) {
    if (!(k in b)) {
      out.push({ name: k, change: "removed", before: a[k] });
    } else if (JSON.stringify(a[k]) !== JSON.stringify(b[k])) {
      out.push({ name: k, change: "changed", before: a[k], after: b[k] });
    }
  }
  for (const k of Object.keys(b)) {
    if (!(k in a)) {
      out.push({ name: k, change: "added", after: b[k] });
    }
  }
  return out;
}

// jsonText is a value as JSON text.
function jsonText(v) {
  return JSON.stringify(v === undefined ? null : v);
}

// pager moves between pages by the envelope's links, kept in the route.
function pager(meta, shown) {
  const links = meta.links || {};
  const to = (link, label, testid) => (typeof link === "string" && link
    ? h("a", { className: "button", href: `#/audit${link}`, "data-testid": testid }, label)
    : null);
  const from = (meta.offset || 0) + 1;
  return h("div", { className: "pager" },
    to(links.previous, "Newer", "audit-newer"),
    to(links.next, "Older", "audit-older"),
    h("span", { className: "hint", "data-testid": "audit-count" },
      shown ? `${from}–${from + shown - 1} of ${plural(meta.totalCount || 0, "event", "events")}` : plural(meta.totalCount || 0, "event", "events")));
}
