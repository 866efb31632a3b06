// canvases.js holds the read-only views: canvases, a canvas' versions,
// environments and workflow runs, and an environment's publication history.

import { request, query } from "./api.js";
import { h, table, when, badge } from "./dom.js";
import { runsPanel } from "./runs.js";

const historyPageSize = 20;

// canvasesView lists the workspace's canvases.
export async function canvasesView() {
  const canvases = (await request("GET", "/prompt")) || [];
  return h("section", { "aria-labelledby": "canvases-title" },
    h("h2", { id: "canvases-title" }, "Canvases"),
    table("canvases-table", [
      { label: "Title", cell: (c) => h("a", { href: `#/canvases/${c.id}`, "data-testid": `canvas-link-${c.id}` }, c.title || c.id) },
      { label: "Tags", cell: (c) => (c.customTags || []).join(", ") },
      { label: "Updated", cell: (c) => when(c.updatedAt) },
    ], canvases, "No canvases yet."));
}

// canvasView shows a canvas with its versions, environments and, when it
// has workflow versions, its workflow runs.
export async function canvasView(id) {
  const enc = encodeURIComponent(id);
  const [c, versions, envs] = await Promise.all([
    request("GET", `/prompt/${enc}`),
    request("GET", `/prompt-version${query({ promptId: id })}`),
    request("GET", `/environment${query({ resourceType: "prompt", resourceId: id })}`),
  ]);
  const titles = new Map((versions || []).map((v) => [v.id, v.title]));
  // Only workflow versions have runs: a canvas without one is not asked
  // for them (and a server without workflows is never asked).
  const runs = (versions || []).some((v) => v.isWorkflow)
    ? await runsPanel(c.id, titles)
    : h("p", { className: "hint", "data-testid": "runs-none" }, "No workflow versions, so no runs.");
  return h("section", { "aria-labelledby": "canvas-title" },
    h("p", null, h("a", { href: "#/canvases" }, "← Canvases")),
    h("h2", { id: "canvas-title" }, c.title || c.id),
    h("p", { className: "hint mono" }, c.id),
    h("h3", null, "Environments"),
    table("environments-table", [
      { label: "Name", cell: (e) => h("a", { href: `#/canvases/${c.id}/environments/${encodeURIComponent(e.name)}`, "data-testid": `environment-link-${e.name}` }, e.name) },
      { label: "Active version", cell: (e) => (e.activeVersionId ? titles.get(e.activeVersionId) || e.activeVersionId : "—") },
      { label: "Kind", cell: (e) => (e.isSystem ? "system" : "custom") },
    ], envs, "No environments."),
    h("h3", null, "Versions"),
    table("versions-table", [
      { label: "Title", cell: (v) => v.title },
      { label: "State", cell: (v) => [v.draft ? badge("draft") : null, v.promoted ? badge("promoted", "on") : null] },
      { label: "Model", cell: (v) => (v.configuration && v.configuration.model) || "" },
      { label: "Updated", cell: (v) => when(v.updatedAt) },
      { label: "Id", cell: (v) => h("span", { className: "mono" }, v.id) },
    ], versions, "No versions yet."),
    h("h3", { id: "runs-title" }, "Workflow runs"),
    runs);
}

// environmentView shows an environment's publication history, newest
// first, a page at a time.
export async function environmentView(canvasId, envName, offset = 0) {
  const page = await request("GET", `/environment/versions${query({
    resourceType: "prompt", resourceId: canvasId, envName, limit: historyPageSize, offset,
  })}`);
  const rows = (page && page.data) || [];
  const total = (page && page.meta && page.meta.totalCount) || 0;
  const section = h("section", { "aria-labelledby": "environment-title" });
  const go = async (o) => section.replaceWith(await environmentView(canvasId, envName, o));
  section.append(
    h("p", null, h("a", { href: `#/canvases/${canvasId}` }, "← Canvas")),
    h("h2", { id: "environment-title" }, `Environment ${envName}`),
    h("h3", null, "Publication history"),
    table("history-table", [
      { label: "#", cell: (p) => String(p.versionIndex) },
      { label: "Version", cell: (p) => p.title },
      { label: "Published", cell: (p) => when(p.publishedAt) },
      { label: "By", cell: (p) => p.publishedBy },
      { label: "Unpublished", cell: (p) => when(p.unpublishedAt) },
      { label: "Active", cell: (p) => (p.isActive ? badge("active", "on") : "") },
    ], rows, "Nothing was published here yet."),
    h("div", { className: "pager" },
      h("button", { type: "button", disabled: offset <= 0, onclick: () => go(Math.max(0, offset - historyPageSize)) }, "Previous"),
      h("span", null, total === 0 ? "" : `${offset + 1}–${offset + rows.length} of ${total}`),
      h("button", { type: "button", disabled: offset + rows.length >= total, onclick: () => go(offset + historyPageSize) }, "Next")));
  return section;
}
