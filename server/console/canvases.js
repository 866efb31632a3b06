// canvases.js holds the canvases list (search, create) and a canvas' page:
// its versions, a compare picker, its environments, the canvases that
// include it and its workflow runs.

import { request, query, loadCanvas, runTotals } from "./api.js";
import { h, table, when, badge, errorBox } from "./dom.js";
import { runsPanel } from "./runs.js";
import { money, plural, versionLabel } from "./format.js";
import { actor } from "./actors.js";

// canvasesView lists the workspace's canvases with a search box and the
// form that creates one. The list API has no search, so the filter runs
// over the loaded list as the operator types.
export async function canvasesView() {
  const [canvases, projects] = await Promise.all([
    request("GET", `/prompt${query({ includePromotedVersion: true })}`),
    request("GET", "/projects"),
  ]);
  const all = canvases || [];
  const holder = h("div", { id: "canvases-list" });
  const count = h("span", { className: "hint", id: "canvases-count", "data-testid": "canvases-count", role: "status" });
  const search = h("input", {
    type: "search", id: "canvas-search", "data-testid": "canvas-search", placeholder: "Title, tag or id",
    autocomplete: "off", spellcheck: "false",
  });
  const show = () => {
    const words = search.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    const rows = all.filter((c) => {
      const hay = [c.title, c.id, ...(c.customTags || [])].join(" ").toLowerCase();
      return words.every((w) => hay.includes(w));
    });
    count.textContent = words.length ? `${rows.length} of ${all.length}` : plural(all.length, "canvas", "canvases");
    holder.replaceChildren(table("canvases-table", [
      { label: "Title", cell: (c) => h("a", { href: `#/canvases/${c.id}`, "data-testid": `canvas-link-${c.id}` }, c.title || c.id) },
      { label: "Promoted version", cell: (c) => (c.promotedVersion ? versionLink(c.promotedVersion) : "—") },
      { label: "Latest version", cell: (c) => (c.latestVersion ? versionLink(c.latestVersion) : "—") },
      { label: "Tags", cell: (c) => (c.customTags || []).join(", ") },
      { label: "Updated", cell: (c) => when(c.updatedAt) },
    ], rows, all.length ? "No canvas matches the search." : "No canvases yet."));
  };
  search.addEventListener("input", show);
  show();
  return h("section", { "aria-labelledby": "canvases-title" },
    h("h2", { id: "canvases-title" }, "Canvases"),
    h("div", { className: "actions", role: "search" },
      h("label", { for: "canvas-search" }, "Search"), search, count),
    holder,
    newCanvasForm(projects || []));
}

// versionLink links to a version's page by its title.
function versionLink(v) {
  return h("a", { href: `#/versions/${v.id}` }, v.title || v.id);
}

// newCanvasForm creates a canvas in a project, or as a personal draft
// when the token carries a user identity (an API key has none, and the
// server says so).
function newCanvasForm(projects) {
  const out = h("div", { id: "new-canvas-error" });
  const title = h("input", { id: "new-canvas-title", type: "text", required: true, maxlength: "256", "data-testid": "new-canvas-title" });
  const project = h("select", { id: "new-canvas-project", "data-testid": "new-canvas-project" },
    projects.map((p) => h("option", { value: p.id }, p.name)),
    h("option", { value: "" }, "— personal draft (needs a user token) —"));
  const form = h("form", { className: "fields", id: "new-canvas-form", "data-testid": "new-canvas-form" },
    h("label", { for: "new-canvas-title" }, "Title"), title,
    h("label", { for: "new-canvas-project" }, "Project"), project,
    projects.length ? null : h("p", { className: "hint full" }, "This workspace has no project yet; an API key can only create canvases in a project."),
    h("div", { className: "full actions" },
      h("button", { type: "submit", className: "primary", id: "create-canvas", "data-testid": "create-canvas" }, "Create canvas")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    out.replaceChildren();
    const body = { title: title.value.trim(), projectId: project.value || null };
    try {
      const c = await request("POST", "/prompt", body);
      location.hash = `#/canvases/${c.id}`;
    } catch (err) {
      out.replaceChildren(errorBox(err));
    }
  });
  return h("section", { "aria-labelledby": "new-canvas-heading" },
    h("h3", { id: "new-canvas-heading" }, "New canvas"), form, out);
}

// canvasView shows a canvas: its versions (with a compare picker), its
// environments and, when it has workflow versions, its workflow runs.
export async function canvasView(id) {
  const [[c, list, envs], totals] = await Promise.all([loadCanvas(id), runTotals({ canvasId: id }).catch(() => null)]);
  // The totals' groups are this canvas's versions with the most runs (at
  // most 100): a version left out of a partial list shows a dash.
  const sums = new Map(((totals && totals.groups) || []).map((g) => [g.versionId, g]));
  const partial = !totals || totals.groupCount > totals.groups.length;
  const titles = new Map(list.map((v) => [v.id, v.title]));
  // Only workflow versions have runs: a canvas without one is not asked
  // for them (and a server without workflows is never asked).
  const runs = list.some((v) => v.isWorkflow)
    ? await runsPanel(c.id, new Map(list.map((v) => [v.id, versionLabel(v)])))
    : h("p", { className: "hint", "data-testid": "runs-none" }, "No workflow versions, so no runs.");
  return h("section", { "aria-labelledby": "canvas-title" },
    h("p", null, h("a", { href: "#/canvases" }, "← Canvases")),
    h("h2", { id: "canvas-title", "data-testid": "canvas-title" }, c.title || c.id),
    h("p", { className: "hint mono" }, c.id),
    h("div", { className: "actions" },
      h("a", { className: "button primary", href: `#/canvases/${c.id}/new-version`, id: "new-version", "data-testid": "new-version" }, "New version"),
      h("a", { className: "button", href: `#/canvases/${c.id}/environments`, id: "open-environments", "data-testid": "open-environments" }, "Environments"),
      h("a", { className: "button", href: `#/canvases/${c.id}/playground`, id: "open-playground", "data-testid": "open-playground" }, "Playground"),
      h("a", { className: "button", href: `#/canvases/${c.id}/review`, id: "open-review", "data-testid": "open-review" }, "Review"),
      h("a", { className: "button", href: `#/canvases/${c.id}/experiments`, id: "open-experiments", "data-testid": "open-experiments" }, "Experiments")),
    h("h3", null, "Versions"),
    table("versions-table", [
      { label: "#", cell: (v) => String(v.versionIndex || "") },
      { label: "Title", cell: (v) => h("a", { href: `#/versions/${v.id}`, "data-testid": `version-link-${v.id}` }, v.title || v.id) },
      { label: "State", cell: (v) => versionState(v) },
      { label: "Model", cell: (v) => (v.configuration && v.configuration.model) || "" },
      { label: "Runs", cell: (v) => (sums.has(v.id) ? String(sums.get(v.id).count) : partial ? "—" : "0") },
      { label: "Cost", cell: (v) => h("span", { "data-testid": `version-cost-${v.id}` }, money((sums.get(v.id) || {}).cost)) },
      { label: "Created by", cell: (v) => actor(v.createdBy) },
      { label: "Created", cell: (v) => when(v.createdAt) },
      { label: "Updated", cell: (v) => when(v.updatedAt) },
    ], list, "No versions yet."),
    list.length >= 2 ? compareForm(c.id, list) : null,
    h("h3", null, "Environments"),
    table("environments-table", [
      { label: "Name", cell: (e) => h("a", { href: `#/canvases/${c.id}/environments/${encodeURIComponent(e.name)}`, "data-testid": `environment-link-${e.name}` }, e.name) },
      { label: "Active version", cell: (e) => (e.activeVersionId ? h("a", { href: `#/versions/${e.activeVersionId}` }, titles.get(e.activeVersionId) || e.activeVersionId) : "—") },
      { label: "Kind", cell: (e) => (e.isSystem ? "system" : "custom") },
    ], envs, "No environments."),
    h("h3", null, "Dependents"),
    await dependentsTable(c.id),
    h("h3", { id: "runs-title" }, "Workflow runs"),
    runs);
}

// dependentsTable lists the live versions of other canvases that include
// canvas id, each linked, with the reference they include it by. A
// dependent the caller cannot read is shown by its ids.
async function dependentsTable(id) {
  let deps;
  try {
    deps = (await request("GET", `/prompt/${encodeURIComponent(id)}/dependents`)) || [];
  } catch (err) {
    return errorBox(err);
  }
  const titles = new Map();
  await Promise.all([...new Set(deps.map((d) => d.canvasId))].map(async (cid) => {
    try {
      titles.set(cid, (await request("GET", `/prompt/${encodeURIComponent(cid)}`)).title || cid);
    } catch {
      // Shown by its id.
    }
  }));
  return table("dependents-table", [
    { label: "Canvas", cell: (d) => h("a", { href: `#/canvases/${d.canvasId}`, "data-testid": `dependent-canvas-${d.canvasId}` }, titles.get(d.canvasId) || d.canvasId) },
    { label: "Version", cell: (d) => h("a", { href: `#/versions/${d.versionId}`, "data-testid": `dependent-version-${d.versionId}` }, `#${d.versionIndex}`) },
    { label: "Includes", cell: (d) => (d.includedVersionIndex ? `version ${d.includedVersionIndex}` : `as ${d.environment} serves it`) },
  ], deps, "No other canvas includes this one.");
}

// versionState shows a version's promoted, draft and workflow marks.
export function versionState(v) {
  return [
    v.promoted ? badge("promoted", "on") : null,
    v.draft ? badge("draft") : null,
    v.isWorkflow ? badge("workflow") : null,
  ];
}

// versionOptions are the options of a version select, newest first.
export function versionOptions(versions, selected) {
  return [...versions].reverse().map((v) => h("option", { value: v.id, selected: v.id === selected },
    `${v.versionIndex ? `#${v.versionIndex} ` : ""}${v.title}${v.promoted ? " (promoted)" : ""}${v.draft ? " (draft)" : ""}`));
}

// compareForm picks two versions and opens their diff; it starts on the
// two newest.
function compareForm(canvasId, versions) {
  const n = versions.length;
  const left = h("select", { id: "compare-left", "data-testid": "compare-left" }, versionOptions(versions, versions[n - 2].id));
  const right = h("select", { id: "compare-right", "data-testid": "compare-right" }, versionOptions(versions, versions[n - 1].id));
  const form = h("form", { className: "actions", id: "compare-form", "data-testid": "compare-form" },
    h("label", { for: "compare-left" }, "Compare"), left,
    h("label", { for: "compare-right" }, "with"), right,
    h("button", { type: "submit", id: "compare-button", "data-testid": "compare-button" }, "Compare"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    location.hash = `#/canvases/${canvasId}/compare/${left.value}/${right.value}`;
  });
  return form;
}

