// credentials.js is the Credentials page: the workspace's keys to model
// vendors, listed with their hint (the key itself is write-only and never
// comes back), created, edited, rotated and deleted by admins. A refused
// request shows each of the server's problems at its field.

import { request, listAll } from "./api.js";
import { h, table, when, errorBox } from "./dom.js";
import { providers } from "./picker.js";

// providerSettings are the settings each provider reads beside the common
// ones: [key, label, hint]. Gemini's backend is a select, the others text.
const providerSettings = {
  "azure-openai": [
    ["apiVersion", "API version", "Azure OpenAI's api-version, such as 2024-10-21 (required)."],
    ["deployment", "Deployment", "The deployment name; the model's name when empty."],
  ],
  gemini: [
    ["backend", "Back end", "Gemini API (the default) or Vertex AI."],
    ["project", "Vertex project", "Required with Vertex AI."],
    ["location", "Vertex location", "Required with Vertex AI, such as us-central1."],
  ],
  bedrock: [
    ["region", "AWS region", "Required, such as us-east-1."],
  ],
};

// baseUrlHints say what the base URL is for, by provider.
const baseUrlHints = {
  "azure-openai": "Your Azure OpenAI resource, such as https://my-resource.openai.azure.com (required).",
  "openai-compatible": "The server's API root, such as http://localhost:11434/v1 for Ollama (required).",
};

// credentialsView is the Credentials page; notice, when set, is a line
// saying what was just done.
export async function credentialsView(notice) {
  const [creds, projects] = await Promise.all([
    listAll("/credentials"),
    request("GET", "/projects"),
  ]);
  const names = new Map((projects || []).map((p) => [p.id, p.name]));
  const section = h("section", { "aria-labelledby": "credentials-title", "data-testid": "credentials" });
  const reload = async (text) => {
    const next = await credentialsView(text);
    section.replaceWith(next);
    return next;
  };
  const out = h("div", { id: "credentials-error", "data-testid": "credentials-error" });
  const editor = h("div", { id: "credential-editor", "data-testid": "credential-editor" });
  const open = (mode, c) => {
    const form = credentialForm(mode, c, projects || [], reload, () => editor.replaceChildren());
    editor.replaceChildren(form);
    const first = form.querySelector("input:not([type=checkbox]), select");
    if (first) {
      first.focus();
    }
  };
  section.append(
    h("h2", { id: "credentials-title" }, "Credentials"),
    h("p", { className: "hint" }, "Keys to model vendors, sealed at rest. A key is never shown again once saved: the list shows its last four characters."),
    notice ? h("p", { className: "result", "data-state": "saved", role: "status", "data-testid": "credentials-notice" }, notice) : null,
    table("credentials-table", [
      { label: "Name", cell: (c) => h("span", { "data-testid": `credential-name-${c.id}` }, c.name) },
      { label: "Provider", cell: (c) => c.provider },
      { label: "Key", cell: (c) => h("span", { className: "mono", "data-testid": `credential-hint-${c.id}` }, c.keyHint || "no key") },
      { label: "Endpoint", cell: (c) => (c.baseUrl ? h("span", { className: "mono" }, c.baseUrl) : "—") },
      { label: "Projects", cell: (c) => (c.projectIds ? c.projectIds.map((id) => names.get(id) || id).join(", ") : "all") },
      { label: "Last used", cell: (c) => h("span", { "data-testid": `credential-used-${c.id}` }, c.lastUsedAt ? when(c.lastUsedAt) : "never") },
      { label: "", cell: (c) => rowActions(c, out, open, reload) },
    ], creds, "No credentials yet: runs use the server's own back end, or the offline echo model."),
    out,
    editor,
    credentialForm("create", null, projects || [], reload));
  return section;
}

// rowActions are Edit, Rotate key and Delete (which asks once more).
function rowActions(c, out, open, reload) {
  const holder = h("div", { className: "actions" });
  const edit = h("button", { type: "button", "data-testid": `credential-edit-${c.id}`, onclick: () => open("edit", c) }, "Edit");
  const rotate = h("button", { type: "button", "data-testid": `credential-rotate-${c.id}`, onclick: () => open("rotate", c) }, "Rotate key");
  const ask = h("button", { type: "button", className: "danger", "data-testid": `credential-delete-${c.id}`, onclick: () => {
    const confirm = h("button", { type: "button", className: "danger", "data-testid": `credential-confirm-delete-${c.id}`, onclick: async () => {
      confirm.disabled = true;
      try {
        await request("DELETE", `/credentials/${encodeURIComponent(c.id)}`);
      } catch (err) {
        out.replaceChildren(errorBox(err));
        confirm.disabled = false;
        return;
      }
      reload(`Credential ${c.name} deleted.`);
    } }, "Confirm delete");
    const cancel = h("button", { type: "button", onclick: () => { holder.replaceChildren(edit, rotate, ask); ask.focus(); } }, "Cancel");
    holder.replaceChildren(h("span", { className: "hint" }, "Runs naming it will fail."), confirm, cancel);
    confirm.focus();
  } }, "Delete");
  holder.append(edit, rotate, ask);
  return holder;
}

// credentialForm creates a credential (mode "create"), edits one ("edit":
// everything but its provider, the key optional) or rotates its key
// ("rotate": the key only). reload shows the page again with a notice;
// close, when given, puts the form away.
function credentialForm(mode, c, projects, reload, close) {
  const p = mode === "create" ? "credential" : `credential-${mode}`;
  const errors = new Map(); // field path → its error element
  const field = (path, id, label, input, hint) => {
    const err = h("p", { className: "error", id: `${id}-error`, "data-testid": `${id}-error`, "aria-live": "polite" });
    errors.set(path, { err, input });
    input.setAttribute("aria-describedby", `${id}-error${hint ? ` ${id}-hint` : ""}`);
    return [h("label", { for: id }, label),
      h("div", null, input, hint ? h("p", { className: "hint", id: `${id}-hint` }, hint) : null, err)];
  };

  const name = h("input", { id: `${p}-name`, type: "text", maxlength: "200", "data-testid": `${p}-name`, value: c ? c.name : "", autocomplete: "off" });
  const provider = h("select", { id: `${p}-provider`, "data-testid": `${p}-provider`, disabled: mode !== "create" },
    providers.map((x) => h("option", { value: x, selected: c && c.provider === x }, x)));
  const apiKey = h("input", { id: `${p}-key`, type: "password", autocomplete: "new-password", spellcheck: "false", "data-testid": `${p}-key` });
  const baseUrl = h("input", { id: `${p}-base-url`, type: "url", size: "50", spellcheck: "false", "data-testid": `${p}-base-url`, value: (c && c.baseUrl) || "" });
  const checks = projects.map((x) => h("label", { className: "check" },
    h("input", { type: "checkbox", value: x.id, checked: Boolean(c && c.projectIds && c.projectIds.includes(x.id)), "data-testid": `${p}-project-${x.id}` }), ` ${x.name}`));
  const projectsErr = h("p", { className: "error", id: `${p}-projects-error`, "data-testid": `${p}-projects-error`, "aria-live": "polite" });
  errors.set("projectIds", { err: projectsErr, input: null });

  // The settings inputs of every provider are built once; only those of
  // the chosen provider are shown and sent.
  const settings = {};
  const settingsBox = h("div", { className: "fields", id: `${p}-settings`, "data-testid": `${p}-settings` });
  const settingsNodes = {};
  for (const [prov, list] of Object.entries(providerSettings)) {
    settingsNodes[prov] = list.map(([key, label, hint]) => {
      const id = `${p}-setting-${key}`;
      const cur = c && c.settings && c.settings[key] !== undefined ? String(c.settings[key]) : "";
      const input = key === "backend"
        ? h("select", { id, "data-testid": id }, [["", "default (Gemini API)"], ["gemini-api", "Gemini API"], ["vertex", "Vertex AI"]]
          .map(([v, t]) => h("option", { value: v, selected: v === cur }, t)))
        : h("input", { id, type: "text", spellcheck: "false", "data-testid": id, value: cur });
      settings[key] = input;
      const err = h("p", { className: "error", id: `${id}-error`, "data-testid": `${id}-error`, "aria-live": "polite" });
      errors.set(`settings/${key}`, { err, input });
      input.setAttribute("aria-describedby", `${id}-error ${id}-hint`);
      return [h("label", { for: id }, label), h("div", null, input, h("p", { className: "hint", id: `${id}-hint` }, hint), err)];
    });
  }
  const settingsErr = h("p", { className: "error", id: `${p}-settings-error`, "data-testid": `${p}-settings-error`, "aria-live": "polite" });
  errors.set("settings", { err: settingsErr, input: null });
  const baseUrlHint = h("p", { className: "hint", id: `${p}-base-url-hint` });
  const showProvider = () => {
    settingsBox.replaceChildren(...(settingsNodes[provider.value] || []).flat());
    baseUrlHint.textContent = baseUrlHints[provider.value] || "Optional: replaces the vendor's API root (a proxy, a regional endpoint).";
  };
  provider.addEventListener("change", showProvider);
  showProvider();

  const general = h("div", { id: `${p}-result`, "data-testid": `${p}-result`, role: "status" });
  const submit = h("button", { type: "submit", className: "primary", id: `${p}-save`, "data-testid": `${p}-save` },
    { create: "Create credential", edit: "Save changes", rotate: "Rotate key" }[mode]);
  const heading = { create: "New credential", edit: `Edit ${c && c.name}`, rotate: `Rotate the key of ${c && c.name}` }[mode];

  const keyLabel = mode === "edit" ? "New API key (empty keeps the key)" : mode === "rotate" ? "New API key" : "API key";
  const keyHint = mode === "create"
    ? "Sealed at rest and never shown again. Not needed for a local openai-compatible server."
    : `The key now ends ${c.keyHint || "(no key)"}; the new one replaces it for every run from now on.`;
  const fields = mode === "rotate"
    ? [field("apiKey", `${p}-key`, keyLabel, apiKey, keyHint)]
    : [
      field("name", `${p}-name`, "Name", name),
      field("provider", `${p}-provider`, "Provider", provider, mode === "create" ? null : "A credential's provider cannot change."),
      field("apiKey", `${p}-key`, keyLabel, apiKey, keyHint),
      [h("label", { for: `${p}-base-url` }, "Base URL"), h("div", null, baseUrl, baseUrlHint, (() => {
        const err = h("p", { className: "error", id: `${p}-base-url-error`, "data-testid": `${p}-base-url-error`, "aria-live": "polite" });
        errors.set("baseUrl", { err, input: baseUrl });
        baseUrl.setAttribute("aria-describedby", `${p}-base-url-error ${p}-base-url-hint`);
        return err;
      })())],
    ];

  const form = h("form", { id: `${p}-form`, "data-testid": `${p}-form`, className: mode === "create" ? "" : "panel", novalidate: true },
    h("h3", null, heading),
    h("div", { className: "fields" }, fields.flat()),
    mode === "rotate" ? null : [
      h("fieldset", null, h("legend", null, "Projects (none checked: every project)"),
        checks.length ? h("div", { className: "checks" }, checks) : h("p", { className: "hint" }, "No projects yet."),
        projectsErr),
      h("h4", null, "Provider settings"),
      settingsBox,
      settingsErr,
    ],
    h("div", { className: "actions" }, submit,
      close ? h("button", { type: "button", "data-testid": `${p}-cancel`, onclick: close }, "Cancel") : null),
    general);

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    for (const { err, input } of errors.values()) {
      err.textContent = "";
      if (input) {
        input.removeAttribute("aria-invalid");
      }
    }
    general.replaceChildren();
    const body = mode === "rotate" ? {} : readForm(mode, c, { name, provider, apiKey, baseUrl, checks, settings });
    if (mode === "rotate") {
      body.apiKey = apiKey.value;
    }
    if (mode !== "create" && Object.keys(body).length === 0) {
      general.replaceChildren(h("p", { className: "hint" }, "Nothing changed."));
      return;
    }
    submit.disabled = true;
    let saved;
    try {
      saved = mode === "create"
        ? await request("POST", "/credentials", body)
        : await request("PATCH", `/credentials/${encodeURIComponent(c.id)}`, body);
    } catch (err) {
      submit.disabled = false;
      showProblems(err, errors, general, form);
      return;
    }
    apiKey.value = "";
    const done = { create: `Credential ${saved.name} created; its key ends ${saved.keyHint || "(no key)"}.`,
      edit: `Credential ${saved.name} saved.`, rotate: `The key of ${saved.name} was rotated; it ends ${saved.keyHint}.` }[mode];
    const next = await reload(done);
    const notice = next.querySelector('[data-testid="credentials-notice"]');
    if (notice) {
      notice.tabIndex = -1;
      notice.focus();
    }
  });
  return form;
}

// readForm builds the body of a create, or of an edit (only what changed:
// an emptied setting is removed with null, as the merge patch says).
function readForm(mode, c, f) {
  const chosen = f.checks.map((l) => l.querySelector("input")).filter((i) => i.checked).map((i) => i.value);
  const prov = f.provider.value;
  const keys = (providerSettings[prov] || []).map(([k]) => k);
  if (mode === "create") {
    const body = { name: f.name.value.trim(), provider: prov };
    if (f.apiKey.value !== "") {
      body.apiKey = f.apiKey.value;
    }
    if (f.baseUrl.value.trim()) {
      body.baseUrl = f.baseUrl.value.trim();
    }
    if (chosen.length) {
      body.projectIds = chosen;
    }
    const settings = {};
    for (const k of keys) {
      const v = f.settings[k].value.trim();
      if (v) {
        settings[k] = v;
      }
    }
    // A provider with settings of its own is sent them even when empty,
    // so that a missing one is refused at its own field.
    if (Object.keys(settings).length || keys.length) {
      body.settings = settings;
    }
    return body;
  }
  const body = {};
  if (f.name.value.trim() !== c.name) {
    body.name = f.name.value.trim();
  }
  if (f.apiKey.value !== "") {
    body.apiKey = f.apiKey.value;
  }
  const url = f.baseUrl.value.trim();
  if (url !== (c.baseUrl || "")) {
    body.baseUrl = url || null;
  }
  const was = c.projectIds ? [...c.projectIds].sort().join(",") : "";
  if ([...chosen].sort().join(",") !== was) {
    body.projectIds = chosen.length ? chosen : null;
  }
  const patch = {};
  for (const k of keys) {
    const v = f.settings[k].value.trim();
    const cur = c.settings && c.settings[k] !== undefined ? String(c.settings[k]) : "";
    if (v !== cur) {
      patch[k] = v || null;
    }
  }
  if (Object.keys(patch).length) {
    body.settings = patch;
  }
  return body;
}

// showProblems puts each problem of a refused request at its field (the
// detail's path under /json), and the rest, with the message, above the
// buttons; the first field in error takes the focus.
function showProblems(err, errors, general, form) {
  const rest = [];
  for (const d of err.details || []) {
    const path = (d.path || "").replace(/^\/json\/?/, "");
    const key = [...errors.keys()].filter((k) => path === k || path.startsWith(`${k}/`)).sort((a, b) => b.length - a.length)[0];
    if (key === undefined) {
      rest.push(d);
      continue;
    }
    const { err: el, input } = errors.get(key);
    const sub = path.slice(key.length).replace(/^\//, "");
    el.textContent = [el.textContent, `${sub ? `${sub}: ` : ""}${d.message}`].filter(Boolean).join(" ");
    if (input) {
      input.setAttribute("aria-invalid", "true");
    }
  }
  // A name taken by another credential is a conflict without details.
  if (err.status === 409 && errors.has("name") && !(err.details || []).length) {
    errors.get("name").err.textContent = err.message;
    errors.get("name").input.setAttribute("aria-invalid", "true");
  }
  general.replaceChildren(h("div", { className: "error", role: "alert", "data-testid": "error" },
    h("p", null, err.message),
    rest.length ? h("ul", null, rest.map((d) => h("li", null, h("span", { className: "mono" }, d.path), `: ${d.message}`))) : null));
  const bad = form.querySelector("[aria-invalid='true']");
  if (bad) {
    bad.focus();
  }
}
