// application.js is one application's page: the Settings, Events and
// Deliveries tabs.

import { request } from "./api.js";
import { h, errorBox } from "./dom.js";
import { canvasTitles, canvasSelect, takeSecret, rememberSecret } from "./applications.js";
import { deliveriesTab } from "./deliveries.js";

const tabs = [
  ["settings", "Settings"],
  ["events", "Events"],
  ["deliveries", "Deliveries"],
];

// applicationView renders the application with one tab open.
export async function applicationView(id, tab) {
  const app = await request("GET", `/applications/${encodeURIComponent(id)}`);
  let panel;
  if (tab === "events") {
    panel = eventsTab(app);
  } else if (tab === "deliveries") {
    panel = await deliveriesTab(app);
  } else {
    panel = await settingsTab(app);
  }
  return h("section", { "aria-labelledby": "application-title" },
    h("p", null, h("a", { href: "#/applications" }, "← Applications")),
    h("h2", { id: "application-title", "data-testid": "application-title" }, app.name),
    h("div", { className: "tabs", role: "tablist", "aria-label": "Application" },
      tabs.map(([key, label]) => h("button", {
        type: "button", role: "tab", id: `tab-${key}`, "data-testid": `tab-${key}`,
        "aria-selected": key === tab ? "true" : "false", "aria-controls": `panel-${key}`,
        onclick: () => { location.hash = `#/applications/${app.id}/${key}`; },
      }, label))),
    h("div", { role: "tabpanel", id: `panel-${tab}`, "aria-labelledby": `tab-${tab}` }, panel));
}

// settingsTab edits the name, canvas and environment, and deletes.
async function settingsTab(app) {
  const { canvases } = await canvasTitles();
  const out = h("p", { className: "result", id: "settings-result", role: "status", "data-testid": "settings-result" });
  const form = h("form", { className: "fields", id: "settings-form" },
    h("label", { for: "settings-name" }, "Name"),
    h("input", { id: "settings-name", type: "text", required: true, value: app.name, "data-testid": "settings-name" }),
    h("label", { for: "settings-canvas" }, "Canvas"),
    canvasSelect("settings-canvas", canvases, app.promptId),
    h("label", { for: "settings-environment" }, "Environment"),
    h("input", { id: "settings-environment", type: "text", value: app.environmentName || "production", "data-testid": "settings-environment" }),
    h("div", { className: "full actions" },
      h("button", { type: "submit", className: "primary", id: "save-settings", "data-testid": "save-settings" }, "Save"),
      h("button", { type: "button", className: "danger", id: "delete-application", "data-testid": "delete-application", onclick: remove }, "Delete application")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const promptId = form.querySelector("#settings-canvas").value;
    try {
      await request("PATCH", `/applications/${app.id}`, {
        name: form.querySelector("#settings-name").value.trim(),
        promptId: promptId || null,
        environmentName: form.querySelector("#settings-environment").value.trim() || "production",
      });
      setResult(out, "saved", "Saved.");
    } catch (err) {
      setResult(out, "error", err.message);
    }
  });
  async function remove() {
    if (!window.confirm(`Delete the application ${app.name}?`)) {
      return;
    }
    try {
      await request("DELETE", `/applications/${app.id}`);
      location.hash = "#/applications";
    } catch (err) {
      setResult(out, "error", err.message);
    }
  }
  return h("div", null, form, out);
}

// setResult shows the outcome of a button in a status line.
function setResult(el, state, text) {
  el.dataset.state = state;
  el.textContent = text;
}

// headerRow is one editable row of the fixed headers table.
function headerRow(header) {
  const row = h("tr", { className: "header-row", "data-testid": "header-row" },
    h("td", null, h("input", { type: "text", className: "header-name", "aria-label": "Header name", value: header.name || "", "data-testid": "header-name", spellcheck: "false" })),
    h("td", null, h("input", { type: "text", className: "header-value", "aria-label": "Header value", value: header.value || "", "data-testid": "header-value", spellcheck: "false" })),
    h("td", null, h("button", { type: "button", className: "remove-header", "data-testid": "remove-header", onclick: () => row.remove() }, "Remove")));
  return row;
}

// eventsTab is the subscription: enable, URL, fixed headers, Test Request,
// Save, and the signing secret.
function eventsTab(app) {
  const ev = app.events || {};
  const rows = h("tbody", { id: "events-headers-body" }, (ev.headers || []).map(headerRow));
  const testOut = h("p", { className: "result", id: "test-result", role: "status", "data-testid": "test-result" });
  const saveOut = h("p", { className: "result", id: "save-result", role: "status", "data-testid": "save-result" });
  const enabled = h("input", { type: "checkbox", id: "events-enabled", checked: Boolean(ev.enabled), "data-testid": "events-enabled" });
  const url = h("input", { type: "url", id: "events-url", value: ev.url || "", placeholder: "https://example.com/webhooks", size: "60", "data-testid": "events-url", spellcheck: "false" });

  // current reads the form as the API's subscription fields.
  const current = () => ({
    url: url.value.trim(),
    headers: [...rows.querySelectorAll("tr")]
      .map((tr) => ({ name: tr.querySelector(".header-name").value.trim(), value: tr.querySelector(".header-value").value }))
      .filter((hd) => hd.name !== ""),
  });

  async function testRequest(e) {
    const btn = e.currentTarget;
    btn.disabled = true;
    testOut.dataset.status = "pending";
    testOut.textContent = "Sending…";
    try {
      const r = await request("POST", `/applications/${app.id}/events/test`, current());
      testOut.dataset.status = r.delivered ? "success" : "failure";
      const parts = [r.delivered ? "Delivered" : "Not delivered"];
      if (r.status) {
        parts.push(`status ${r.status}`);
      }
      parts.push(`${r.latencyMs ?? 0} ms`);
      if (r.error) {
        parts.push(r.error);
      }
      testOut.textContent = parts.join(" · ");
      testOut.dataset.httpStatus = r.status ? String(r.status) : "";
    } catch (err) {
      testOut.dataset.status = "failure";
      testOut.textContent = err.message;
    } finally {
      btn.disabled = false;
    }
  }

  async function save(e) {
    e.preventDefault();
    saveOut.dataset.state = "saving";
    saveOut.textContent = "Saving…";
    try {
      const updated = await request("PATCH", `/applications/${app.id}`, {
        events: { enabled: enabled.checked, ...current() },
      });
      Object.assign(ev, updated.events || {});
      status.replaceChildren(subscriptionStatus(ev));
      setResult(saveOut, "saved", "Saved.");
    } catch (err) {
      setResult(saveOut, "error", err.message);
    }
  }

  const secretBox = h("div", { id: "secret-box" });
  const showSecret = (secret) => secretBox.replaceChildren(h("div", { className: "secret", role: "status", "data-testid": "secret" },
    h("p", null, "Signing secret — copy it now, it is not shown again:"),
    h("code", { id: "secret-value", "data-testid": "secret-value" }, secret)));
  const fresh = takeSecret(app.id);
  if (fresh) {
    showSecret(fresh);
  }
  async function rotate() {
    if (!window.confirm("Rotate the signing secret? The old one stays valid for a while, and both signatures are sent.")) {
      return;
    }
    try {
      const r = await request("POST", `/applications/${app.id}/events/rotate-secret`);
      rememberSecret(app.id, r.secret);
      showSecret(takeSecret(app.id));
    } catch (err) {
      secretBox.replaceChildren(errorBox(err));
    }
  }

  const status = h("div", { id: "subscription-status" }, subscriptionStatus(ev));
  return h("form", { id: "events-form", "data-testid": "events-form", onsubmit: save },
    status,
    h("div", { className: "fields" },
      h("label", { for: "events-enabled" }, "Enable events"),
      h("div", null, enabled),
      h("label", { for: "events-url" }, "URL"),
      url),
    h("h3", { id: "headers-title" }, "Headers"),
    h("p", { className: "hint" }, "Fixed headers are sent with every notification, before forwarded and webhook-* headers."),
    h("table", { id: "events-headers", "aria-labelledby": "headers-title", "data-testid": "events-headers" },
      h("thead", null, h("tr", null, h("th", { scope: "col" }, "Name"), h("th", { scope: "col" }, "Value"), h("th", { scope: "col" }, "Actions"))),
      rows),
    h("div", { className: "actions" },
      h("button", { type: "button", id: "add-header", "data-testid": "add-header", onclick: () => {
        const row = headerRow({});
        rows.append(row);
        row.querySelector(".header-name").focus();
      } }, "Add row")),
    h("div", { className: "actions" },
      h("button", { type: "button", id: "test-request", "data-testid": "test-request", onclick: testRequest }, "Test Request"),
      h("button", { type: "submit", className: "primary", id: "save-events", "data-testid": "save-events" }, "Save")),
    testOut,
    saveOut,
    h("h3", null, "Signing secret"),
    h("p", { className: "hint", id: "secret-state" }, ev.hasSecret ? "Notifications are signed (Standard Webhooks)." : "No secret: notifications are not signed."),
    secretBox,
    h("div", { className: "actions" },
      h("button", { type: "button", id: "rotate-secret", "data-testid": "rotate-secret", onclick: rotate }, "Rotate secret")));
}

// subscriptionStatus tells whether deliveries were stopped, and why.
function subscriptionStatus(ev) {
  if (!ev.disabledAt) {
    return h("p", { className: "hint" }, ev.consecutiveFailures ? `${ev.consecutiveFailures} failed deliveries in a row.` : "");
  }
  return h("p", { className: "error", role: "alert", "data-testid": "subscription-disabled" },
    `Deliveries were stopped: ${ev.disabledReason || "disabled"}. Save to enable them again.`);
}
