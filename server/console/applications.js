// applications.js lists applications and creates new ones.

import { request } from "./api.js";
import { h, table, badge, errorBox } from "./dom.js";

// oneTimeSecrets holds a signing secret the server just returned, until the
// Events tab shows it once; it is never stored anywhere else.
const oneTimeSecrets = new Map();

// rememberSecret keeps a new secret for the Events tab to show.
export function rememberSecret(appId, secret) {
  oneTimeSecrets.set(appId, secret);
}

// takeSecret returns the secret waiting to be shown, and forgets it.
export function takeSecret(appId) {
  const s = oneTimeSecrets.get(appId);
  oneTimeSecrets.delete(appId);
  return s;
}

// canvasTitles maps canvas ids to titles, for showing which canvas an
// application runs.
export async function canvasTitles() {
  const canvases = (await request("GET", "/prompt")) || [];
  return { canvases, titles: new Map(canvases.map((c) => [c.id, c.title])) };
}

// applicationsView is the Applications list.
export async function applicationsView() {
  const [apps, { titles }] = await Promise.all([request("GET", "/applications"), canvasTitles()]);
  const list = Array.isArray(apps) ? apps : (apps && apps.data) || [];
  return h("section", { "aria-labelledby": "applications-title" },
    h("h2", { id: "applications-title" }, "Applications"),
    h("div", { className: "actions" },
      h("a", { href: "#/applications/new", id: "new-application", "data-testid": "new-application" }, "New application")),
    table("applications-table", [
      { label: "Name", cell: (a) => h("a", { href: `#/applications/${a.id}/settings`, "data-testid": `application-link-${a.id}` }, a.name) },
      { label: "Canvas", cell: (a) => (a.promptId ? h("a", { href: `#/canvases/${a.promptId}` }, titles.get(a.promptId) || a.promptId) : "—") },
      { label: "Environment", cell: (a) => a.environmentName || "production" },
      { label: "Events", cell: (a) => (a.events && a.events.enabled ? badge("enabled", "on") : badge("disabled", "off")) },
    ], list, "No applications yet."));
}

// canvasSelect is a labelled select of the workspace's canvases, with a
// "none" choice.
export function canvasSelect(id, canvases, selected) {
  return h("select", { id, name: id, "data-testid": id },
    h("option", { value: "" }, "— none —"),
    canvases.map((c) => h("option", { value: c.id, selected: c.id === selected }, c.title || c.id)));
}

// newApplicationView is the form that creates an application; on success
// it opens the Events tab, where the one-time secret is shown.
export async function newApplicationView() {
  const { canvases } = await canvasTitles();
  const out = h("div", { id: "new-application-error" });
  const form = h("form", { className: "fields", id: "new-application-form", "data-testid": "new-application-form" },
    h("label", { for: "new-name" }, "Name"),
    h("input", { id: "new-name", type: "text", required: true, "data-testid": "new-name" }),
    h("label", { for: "new-canvas" }, "Canvas"),
    canvasSelect("new-canvas", canvases, ""),
    h("label", { for: "new-environment" }, "Environment"),
    h("input", { id: "new-environment", type: "text", value: "production", "data-testid": "new-environment" }),
    h("div", { className: "full actions" },
      h("button", { type: "submit", className: "primary", id: "create-application", "data-testid": "create-application" }, "Create application"),
      h("a", { href: "#/applications" }, "Cancel")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    out.replaceChildren();
    const body = { name: form.querySelector("#new-name").value.trim() };
    const promptId = form.querySelector("#new-canvas").value;
    const environmentName = form.querySelector("#new-environment").value.trim();
    if (promptId) {
      body.promptId = promptId;
    }
    if (environmentName) {
      body.environmentName = environmentName;
    }
    try {
      const app = await request("POST", "/applications", body);
      if (app.secret) {
        rememberSecret(app.id, app.secret);
      }
      location.hash = `#/applications/${app.id}/events`;
    } catch (err) {
      out.replaceChildren(errorBox(err));
    }
  });
  return h("section", { "aria-labelledby": "new-application-title" },
    h("h2", { id: "new-application-title" }, "New application"), form, out);
}
