// requests.js shows publication requests: the list of the canvases the
// key reaches, filtered by status, and one request with the diff of its
// version against what the environment served when it was made, its
// approvals, and the decisions on it (approve, reject, withdraw).

import { request, query } from "./api.js";
import { h, table, when, badge, errorBox, filteredPages } from "./dom.js";
import { actor } from "./actors.js";
import { versionLabel, plural } from "./format.js";
import { versionDiffView } from "./diff.js";

const pageSize = 20;
const statuses = ["pending", "published", "rejected", "withdrawn"];

// orNull reads path, or answers null when it fails (a canvas or version
// deleted since, or out of the key's reach): a request stays readable
// without the names of what it points at.
async function orNull(path) {
  try {
    return await request("GET", path);
  } catch {
    return null;
  }
}

// readEach reads each distinct id once through path(id), and returns a map
// of id to the answer (null when it failed).
async function readEach(ids, path) {
  const distinct = [...new Set(ids.filter(Boolean))];
  const got = await Promise.all(distinct.map((id) => orNull(path(id))));
  return new Map(distinct.map((id, i) => [id, got[i]]));
}

const canvasPath = (id) => `/prompt/${encodeURIComponent(id)}`;
const versionPath = (id) => `/prompt-version/${encodeURIComponent(id)}`;

// flags says in words what changed since request r was made: its
// environment moved, or its version was edited. Empty when neither.
export function flags(r) {
  const out = [];
  if (r.stale) {
    out.push(`${r.envName} moved since this request was made`);
  }
  if (r.versionChanged) {
    out.push("the version was edited since");
  }
  return out;
}

// flagsNode shows flags(r), or nothing.
function flagsNode(r, testid) {
  const words = flags(r);
  return words.length ? h("p", { className: "hint warning", "data-testid": testid }, `${words.join("; ")}.`) : null;
}

// approvalCount says how many approvals r has of how many it needs.
export function approvalCount(r) {
  return `${r.approvals.length} of ${r.requiredApprovals}`;
}

// pendingRequestsOf reads the pending requests of a canvas (at most 100,
// newest first).
export async function pendingRequestsOf(canvasId) {
  const page = await request("GET", `/publication-requests${query({ resourceId: canvasId, status: "pending", limit: 100 })}`);
  return (page && page.data) || [];
}

// requestsView is the Requests page: the publication requests, the
// pending ones unless the filter says otherwise, a page at a time.
export async function requestsView() {
  const list = await filteredPages("requests", statuses, requestsPage, "pending");
  return h("section", { "aria-labelledby": "requests-title", "data-testid": "requests" },
    h("h2", { id: "requests-title" }, "Publication requests"),
    h("p", { className: "hint" }, "A protected environment is published to through requests that other people approve."),
    list);
}

// requestsPage is one page of the requests of status ("" for any).
async function requestsPage(status, offset, load) {
  const page = await request("GET", `/publication-requests${query({ status, limit: pageSize, offset })}`);
  const rows = (page && page.data) || [];
  const total = (page && page.meta && page.meta.totalCount) || 0;
  const [canvases, versions] = await Promise.all([
    readEach(rows.map((r) => r.resourceId), canvasPath),
    readEach(rows.flatMap(requestVersions), versionPath),
  ]);
  const canvasTitle = (id) => (canvases.get(id) && canvases.get(id).title) || id;
  return h("div", null,
    table("requests-table", [
      { label: "Canvas", cell: (r) => h("a", { href: `#/canvases/${r.resourceId}` }, canvasTitle(r.resourceId)) },
      { label: "Environment", cell: (r) => r.envName },
      { label: "Version", cell: (r) => (r.split ? ["split: ", splitNode(r.split, versions, `request-split-${r.id}`)]
        : h("a", { href: `#/versions/${r.versionId}` }, versionLabel(versions.get(r.versionId)) || r.versionId)) },
      { label: "Requested by", cell: (r) => actor(r.requestedBy) },
      { label: "Approvals", cell: (r) => approvalCount(r) },
      { label: "Created", cell: (r) => when(r.createdAt) },
      { label: "Status", cell: (r) => [badge(r.status), flagsNode(r, `request-flags-${r.id}`)] },
      { label: "", cell: (r) => h("a", { href: `#/requests/${r.id}`, "data-testid": `request-link-${r.id}` }, "Open") },
    ], rows, status ? `No ${status} requests.` : "No requests."),
    h("div", { className: "pager" },
      h("button", { type: "button", disabled: offset <= 0, onclick: () => load(Math.max(0, offset - pageSize)) }, "Previous"),
      h("span", { "data-testid": "requests-count" }, total === 0 ? "" : `${offset + 1}–${offset + rows.length} of ${total}`),
      h("button", { type: "button", disabled: offset + rows.length >= total, onclick: () => load(offset + pageSize) }, "Next")));
}

// requestVersions are the ids of the versions a request publishes: its
// split's, or its one version.
const requestVersions = (r) => (r.split ? r.split.map((e) => e.versionId) : [r.versionId]);

// splitNode shows a split as its versions, linked, with their weights;
// versions maps ids to the versions read (a missing one shows its id).
function splitNode(split, versions, testid) {
  return h("span", { "data-testid": testid }, split.map((e, i) => [i ? " · " : "",
    h("a", { href: `#/versions/${e.versionId}` }, versionLabel(versions.get(e.versionId)) || e.versionId), ` ${e.weight} %`]));
}

// wholeVersion is the diff of version v against nothing: each message,
// variable and configuration value of it added. It is what a request
// shows when its environment served nothing.
function wholeVersion(v) {
  const pointer = (k) => `/${k.replaceAll("~", "~0").replaceAll("/", "~1")}`;
  return {
    identical: false,
    messages: (v.messages || []).map((m, i) => ({ index: i, change: "added", before: null, after: m })),
    variables: (v.variables || []).map((x) => ({ name: x.name, change: "added", before: null, after: x })),
    configuration: Object.entries(v.configuration || {}).map(([k, x]) => ({ path: pointer(k), change: "added", before: null, after: x })),
  };
}

// requestView shows one publication request, with notice above it when
// set (what the last decision did).
export async function requestView(id, notice) {
  const r = await request("GET", `/publication-requests/${encodeURIComponent(id)}`);
  const [c, v, base, current, splitVersions, me] = await Promise.all([
    orNull(canvasPath(r.resourceId)),
    orNull(versionPath(r.versionId)),
    r.baseVersionId ? orNull(versionPath(r.baseVersionId)) : null,
    r.currentVersionId && r.currentVersionId !== r.baseVersionId ? orNull(versionPath(r.currentVersionId)) : null,
    r.split ? readEach(requestVersions(r), versionPath) : null,
    orNull("/me"),
  ]);
  let diff;
  try {
    diff = r.diffPath ? versionDiffView(await request("GET", r.diffPath), ["Served then", "Requested"])
      : v ? [h("p", { className: "hint" }, `${r.envName} served nothing when the request was made: all of the version is new.`),
        versionDiffView(wholeVersion(v), ["Served then", "Requested"])]
        : h("p", { className: "hint" }, "The version is no longer readable.");
  } catch (err) {
    diff = errorBox(err);
  }
  const section = h("section", { "aria-labelledby": "request-title", "data-testid": "request" });
  const reload = async (text) => {
    const next = await requestView(id, text);
    if (section.isConnected) {
      section.replaceWith(next);
    }
  };
  const label = (x, xid) => (x ? versionLabel(x) : xid);
  const link = (x, xid, testid) => (xid ? h("a", { href: `#/versions/${xid}`, "data-testid": testid }, label(x, xid)) : "nothing");
  const title = c ? c.title || c.id : r.resourceId;
  section.append(
    h("p", null, h("a", { href: "#/requests" }, "← Publication requests"), " · ",
      h("a", { href: `#/canvases/${r.resourceId}/environments` }, `Environments of ${title}`)),
    h("h2", { id: "request-title" }, r.split ? `Publish a split of ${r.split.length} versions to ${r.envName}`
      : `Publish ${label(v, r.versionId)} to ${r.envName}`),
    notice ? h("p", { className: "result", "data-state": "saved", role: "status", "data-testid": "request-notice" }, notice) : null,
    h("p", { "data-testid": "request-status" }, badge(r.status), " ", statusWords(r)),
    flagsNode(r, "request-flags"),
    h("dl", { className: "fields" },
      h("dt", null, "Canvas"), h("dd", null, h("a", { href: `#/canvases/${r.resourceId}`, "data-testid": "request-canvas" }, title)),
      h("dt", null, "Environment"), h("dd", { "data-testid": "request-env" }, r.envName),
      h("dt", null, "Version"), h("dd", null, link(v, r.versionId, "request-version")),
      r.split ? [h("dt", null, "Split"), h("dd", null, splitNode(r.split, splitVersions, "request-split"),
        h("p", { className: "hint" }, "The diff below is of the split's first version.")) ] : null,
      h("dt", null, "Served when requested"), h("dd", null, link(base, r.baseVersionId, "request-base")),
      r.currentVersionId !== r.baseVersionId ? [h("dt", null, "Served now"), h("dd", null, link(current, r.currentVersionId, "request-current"))] : null,
      h("dt", null, "Requested by"), h("dd", { "data-testid": "request-by" }, actor(r.requestedBy)),
      h("dt", null, "Created"), h("dd", null, when(r.createdAt)),
      h("dt", null, "Comment"), h("dd", { "data-testid": "request-comment" }, r.comment || "—"),
      h("dt", null, "Approvals"), h("dd", { "data-testid": "request-approvals-count" }, approvalCount(r))),
    h("h3", null, "Approvals"),
    table("request-approvals", [
      { label: "By", cell: (a) => actor(a.by) },
      { label: "Comment", cell: (a) => a.comment || "—" },
      { label: "When", cell: (a) => when(a.createdAt) },
    ], r.approvals, "No approvals yet."),
    r.status === "pending" ? decisionForm(r, reload, me) : null,
    h("h3", null, "Changes"),
    h("div", { "data-testid": "request-diff" }, diff));
  return section;
}

// statusWords says what became of request r.
function statusWords(r) {
  switch (r.status) {
  case "pending":
    return `waiting for ${plural(r.requiredApprovals - r.approvals.length, "more approval", "more approvals")} by people other than the requester.`;
  case "published":
    return `to ${r.envName} ${when(r.decidedAt)}.`;
  case "rejected":
    return [`by `, actor(r.decidedBy), ` ${when(r.decidedAt)}`, r.decisionComment ? `: ${r.decisionComment}` : "."];
  default:
    return [`by the requester ${when(r.decidedAt)}`, r.decisionComment ? `: ${r.decisionComment}` : "."];
  }
}

// decisions are the decisions on a pending request: the path's verb, the
// button, and what the notice says afterwards.
const decisions = [
  { verb: "approve", label: "Approve", className: "primary",
    done: (r) => (r.status === "published" ? `Approved: the request is published to ${r.envName}.` : `Approved: ${approvalCount(r)} approvals.`) },
  { verb: "reject", label: "Reject", className: "danger", done: () => "Rejected." },
  { verb: "withdraw", label: "Withdraw", className: "", done: () => "Withdrawn." },
];

// decisionForm decides on pending request r with an optional comment, as
// the caller me (GET /me; null when unknown, and then every decision is
// offered): the requester withdraws, the others approve, each once, or
// reject. A refusal (a version edited since, a required experiment not
// passed yet) shows next to the buttons; a decision reloads the request.
function decisionForm(r, reload, me) {
  const mine = Boolean(me) && r.requestedBy === me.actorId;
  const approved = Boolean(me) && r.approvals.some((a) => a.by === me.actorId);
  const offered = decisions.filter((d) => !me || (mine ? d.verb === "withdraw"
    : d.verb === "reject" || (d.verb === "approve" && !approved)));
  const hint = !me ? "People other than the requester approve or reject, each once; the requester withdraws."
    : mine ? "You made this request: people other than you approve or reject it; you may withdraw it."
      : approved ? "You approved this request: it waits for the approvals of other people. You may still reject it."
        : "Approve or reject it; the requester withdraws it.";
  const comment = h("textarea", { id: "request-decision-comment", "data-testid": "request-decision-comment", rows: "2", maxlength: "2000" });
  const out = h("p", { className: "error", role: "alert", id: "request-decision-error", "data-testid": "request-decision-error" });
  const buttons = offered.map((d) => h("button", { type: "button", className: d.className, "data-testid": `request-${d.verb}`,
    onclick: async () => {
      out.textContent = "";
      buttons.forEach((b) => { b.disabled = true; });
      try {
        const after = await request("POST", `/publication-requests/${encodeURIComponent(r.id)}/${d.verb}`,
          comment.value.trim() ? { comment: comment.value.trim() } : {});
        await reload(d.done(after));
      } catch (err) {
        out.textContent = err.message;
        buttons.forEach((b) => { b.disabled = false; });
      }
    } }, d.label));
  return h("section", { className: "panel", "aria-labelledby": "request-decision-title", "data-testid": "request-decision" },
    h("h3", { id: "request-decision-title" }, "Decide"),
    h("p", { className: "hint", "data-testid": "request-decision-hint" }, hint),
    h("label", { for: "request-decision-comment" }, "Comment (optional)"), comment,
    h("div", { className: "actions" }, buttons, out));
}
