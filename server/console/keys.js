// keys.js manages the workspace's API keys (admins without project
// restriction): list them, create one, whose token is shown once, and
// revoke one.

import { request, query } from "./api.js";
import { h, table, when, badge, errorBox } from "./dom.js";

const roles = ["viewer", "editor", "admin"];

// keysView is the API keys page. shown, when set, is the key just created
// with its token, shown once above the list.
export async function keysView(shown) {
  const [page, projects] = await Promise.all([
    request("GET", `/api-keys${query({ limit: 100 })}`),
    request("GET", "/projects"),
  ]);
  const keys = (page && page.data) || [];
  const names = new Map((projects || []).map((p) => [p.id, p.name]));
  const section = h("section", { "aria-labelledby": "keys-title", "data-testid": "keys" });
  const reload = async (created) => {
    const next = await keysView(created);
    section.replaceWith(next);
    return next;
  };
  const out = h("div", { id: "keys-error", "data-testid": "keys-error" });
  section.append(
    h("h2", { id: "keys-title" }, "API keys"),
    shown ? secretBox(shown) : "",
    table("keys-table", [
      { label: "Key", cell: (k) => h("span", { className: "mono", "data-testid": `key-${k.id}` }, k.id) },
      { label: "Role", cell: (k) => k.role },
      { label: "Projects", cell: (k) => (k.projects ? k.projects.map((id) => names.get(id) || id).join(", ") : "all") },
      { label: "Created", cell: (k) => when(k.createdAt) },
      { label: "Status", cell: (k) => (k.revokedAt ? [badge("revoked"), h("div", { className: "hint" }, when(k.revokedAt))] : badge("active", "on")) },
      { label: "", cell: (k) => (k.revokedAt ? "" : revokeControl(k, out, reload)) },
    ], keys, "No keys."),
    out,
    createForm(projects || [], reload));
  return section;
}

// revokeControl asks once more before it revokes key k: Revoke shows
// Confirm and Cancel in its place.
function revokeControl(k, out, reload) {
  const holder = h("div", { className: "actions" });
  const ask = h("button", { type: "button", className: "danger", "data-testid": `revoke-${k.id}`, onclick: () => {
    const confirm = h("button", { type: "button", className: "danger", "data-testid": `confirm-revoke-${k.id}`, onclick: async () => {
      confirm.disabled = true;
      try {
        await request("DELETE", `/api-keys/${encodeURIComponent(k.id)}`);
      } catch (err) {
        out.replaceChildren(errorBox(err));
        confirm.disabled = false;
        return;
      }
      reload();
    } }, "Confirm revoke");
    const cancel = h("button", { type: "button", onclick: () => { holder.replaceChildren(ask); ask.focus(); } }, "Cancel");
    holder.replaceChildren(h("span", { className: "hint" }, "Requests with this key will be refused."), confirm, cancel);
    confirm.focus();
  } }, "Revoke");
  holder.append(ask);
  return holder;
}

// secretBox shows a new key's token, once.
function secretBox(key) {
  return h("div", { className: "secret", role: "status", "data-testid": "key-secret" },
    h("p", null, `Key ${key.id} (${key.role}) was created. Copy its token now: it is not shown again.`),
    h("code", { id: "key-token", "data-testid": "key-token" }, key.token));
}

// createForm creates a key with a role, for every project or some.
function createForm(projects, reload) {
  const role = h("select", { id: "key-role", "data-testid": "key-role" }, roles.map((r) => h("option", { value: r }, r)));
  const checks = projects.map((p) => h("label", { className: "check" },
    h("input", { type: "checkbox", value: p.id, "data-testid": `key-project-${p.id}` }), ` ${p.name}`));
  const result = h("p", { className: "result", role: "status", "data-testid": "key-create-result" });
  return h("form", { id: "key-form", "data-testid": "key-form", onsubmit: async (ev) => {
    ev.preventDefault();
    const chosen = checks.map((l) => l.querySelector("input")).filter((i) => i.checked).map((i) => i.value);
    const body = chosen.length ? { role: role.value, projects: chosen } : { role: role.value };
    let created;
    try {
      created = await request("POST", "/api-keys", body);
    } catch (err) {
      result.dataset.state = "error";
      result.textContent = err.message;
      return;
    }
    const next = await reload(created);
    next.querySelector("#key-token").focus();
  } },
  h("h3", null, "New key"),
  h("div", { className: "fields" }, h("label", { for: "key-role" }, "Role"), role),
  h("fieldset", null, h("legend", null, "Projects (none checked: every project)"),
    checks.length ? h("div", { className: "checks" }, checks) : h("p", { className: "hint" }, "No projects yet.")),
  h("div", { className: "actions" }, h("button", { type: "submit", className: "primary", id: "key-create", "data-testid": "key-create" }, "Create key")),
  result);
}
