// versions.js is a version's page: its messages, variables and
// configuration, with what can be done from it (a new version from it,
// compare, publish, promote, run in the playground).

import { request, query, runTotals, listAll } from "./api.js";
import { h, table, when, badge, errorBox } from "./dom.js";
import { versionState, versionOptions } from "./canvases.js";
import { publish } from "./environments.js";
import { runSum } from "./format.js";
import { highlighted, includedTitles, includesList, includeRefs, resolveMessages, resolvedList } from "./includes.js";
import { actor } from "./actors.js";

// knownConfigKeys are the configuration keys the console shows as fields;
// any other key is shown, and kept, as JSON.
export const knownConfigKeys = ["provider", "credentialId", "model", "type", "temperature", "maxTokens", "topP", "structuredOutput", "functions", "toolChoice"];

// versionView shows one version.
export async function versionView(id) {
  const v = await request("GET", `/prompt-version/${encodeURIComponent(id)}`);
  const [c, versions, envs, totals, creds] = await Promise.all([
    request("GET", `/prompt/${encodeURIComponent(v.promptId)}`),
    request("GET", `/prompt-version${query({ promptId: v.promptId })}`),
    request("GET", `/environment${query({ resourceType: "prompt", resourceId: v.promptId })}`),
    runTotals({ canvasId: v.promptId, versionId: v.id }).catch(() => null),
    v.configuration && v.configuration.credentialId ? listAll("/credentials").catch(() => []) : [],
  ]);
  const titles = await includedTitles(v.messages || []);
  const others = (versions || []).filter((o) => o.id !== v.id);
  const out = h("div", { id: "version-action-result", "data-testid": "version-action-result", role: "status" });
  const state = h("dd", { "data-testid": "version-state" }, stateOf(v, envs || []));
  // refresh reads the version and the environments again after a
  // publication, so that its State follows without a reload.
  const refresh = async () => {
    const [nv, nenvs] = await Promise.all([
      request("GET", `/prompt-version/${encodeURIComponent(v.id)}`),
      request("GET", `/environment${query({ resourceType: "prompt", resourceId: v.promptId })}`),
    ]);
    state.replaceChildren(stateOf(nv, nenvs || []));
  };
  return h("section", { "aria-labelledby": "version-title", "data-testid": "version" },
    h("p", null, h("a", { href: `#/canvases/${v.promptId}`, "data-testid": "version-canvas-link" }, `← ${c.title || "Canvas"}`)),
    h("h2", { id: "version-title", "data-testid": "version-title" }, v.title),
    h("dl", { className: "fields" },
      h("dt", null, "Position"), h("dd", { "data-testid": "version-index" }, v.versionIndex ? `#${v.versionIndex}` : "—"),
      h("dt", null, "State"), state,
      h("dt", null, "Created"), h("dd", null, `${when(v.createdAt)} by `, actor(v.createdBy)),
      h("dt", null, "Updated"), h("dd", null, `${when(v.updatedAt)} by `, actor(v.updatedBy)),
      v.originVersionId ? [h("dt", null, "From"), h("dd", null, h("a", { href: `#/versions/${v.originVersionId}`, "data-testid": "version-origin" },
        (others.find((o) => o.id === v.originVersionId) || {}).title || v.originVersionId))] : null,
      h("dt", null, "Runs"), h("dd", { "data-testid": "version-cost" }, runSum(totals)),
      h("dt", null, "Id"), h("dd", { className: "mono" }, v.id)),
    h("div", { className: "actions" },
      h("a", { className: "button primary", href: `#/versions/${v.id}/new`, id: "new-from-version", "data-testid": "new-from-version" }, "New version from this one"),
      h("a", { className: "button", href: `#/canvases/${v.promptId}/playground/version/${v.id}`, id: "version-playground", "data-testid": "version-playground" }, "Run in playground"),
      v.originVersionId ? h("a", { className: "button", href: `#/canvases/${v.promptId}/compare/${v.originVersionId}/${v.id}`, "data-testid": "compare-origin" }, "Compare with its origin") : null),
    actionsForm(v, others, envs || [], out, refresh),
    out,
    h("h3", null, "Messages"),
    messagesList(v.messages || [], titles),
    includesSection(v, envs || [], titles),
    h("h3", null, "Variables"),
    variablesTable(v.variables || []),
    h("h3", null, "Configuration"),
    configurationView(v.configuration || {}, creds),
    v.isWorkflow ? [h("h3", null, "Workflow"), h("pre", { className: "code", "data-testid": "version-workflow" }, JSON.stringify(v.workflowSpec, null, 2))] : null);
}

// stateOf shows a version's promoted, draft and workflow marks and the
// environments that serve it, or a dash.
function stateOf(v, envs) {
  const serving = envs.filter((e) => e.activeVersionId === v.id).map((e) => e.name);
  const marks = [versionState(v), serving.length ? h("span", { className: "hint", "data-testid": "version-serving" }, ` served by ${serving.join(", ")}`) : null];
  return v.promoted || v.draft || v.isWorkflow || serving.length ? h("span", null, marks) : "—";
}

// actionsForm holds compare, publish and promote; refresh shows the
// version's state again after a publication.
function actionsForm(v, others, envs, out, refresh) {
  const done = async (text) => {
    out.replaceChildren(h("p", { className: "result", "data-state": "saved" }, text));
    try {
      await refresh();
    } catch (err) {
      out.append(errorBox(err));
    }
  };
  const failed = (err) => { out.replaceChildren(errorBox(err)); };
  const parts = [];
  if (others.length) {
    const other = h("select", { id: "version-compare-with", "data-testid": "version-compare-with" }, versionOptions(others));
    const compare = h("form", { className: "actions", id: "version-compare-form" },
      h("label", { for: "version-compare-with" }, "Compare with"), other,
      h("button", { type: "submit", "data-testid": "version-compare" }, "Compare"));
    compare.addEventListener("submit", (ev) => {
      ev.preventDefault();
      location.hash = `#/canvases/${v.promptId}/compare/${other.value}/${v.id}`;
    });
    parts.push(compare);
  }
  const names = envs.map((e) => e.name);
  if (!names.includes("production")) {
    names.unshift("production");
  }
  const env = h("select", { id: "version-publish-env", "data-testid": "version-publish-env" }, names.map((n) => h("option", { value: n }, n)));
  const pub = h("form", { className: "actions", id: "version-publish-form" },
    h("label", { for: "version-publish-env" }, "Publish to"), env,
    h("button", { type: "submit", id: "version-publish", "data-testid": "version-publish" }, "Publish"),
    v.promoted ? null : h("button", { type: "button", id: "version-promote", "data-testid": "version-promote", onclick: async (ev) => {
      const btn = ev.currentTarget;
      btn.disabled = true;
      try {
        await publish(v.promptId, "production", v.id);
        btn.hidden = true;
        await done("Promoted: production serves this version.");
      } catch (err) {
        btn.disabled = false;
        failed(err);
      }
    } }, "Promote"));
  pub.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const p = await publish(v.promptId, env.value, v.id);
      await done(`Published to ${p.environmentName}.`);
    } catch (err) {
      failed(err);
    }
  });
  parts.push(pub);
  return parts;
}

// includesSection lists the includes of v's messages and previews its
// prompt resolved: as an environment that serves v resolves it on the
// server, otherwise as its includes resolve now. Nothing without includes.
function includesSection(v, envs, titles) {
  const messages = (v.messages || []).filter((m) => !m.deletedAt);
  if (!messages.some((m) => includeRefs(m.content || "").length)) {
    return null;
  }
  const serving = envs.find((e) => e.activeVersionId === v.id);
  const preview = h("div", { "data-testid": "version-resolved" }, h("p", { className: "hint" }, "Resolving…"));
  const show = async () => {
    try {
      if (serving) {
        const served = await request("GET", `/environment/version${query({ resourceType: "prompt", resourceId: v.promptId, envName: serving.name, resolve: true })}`);
        if (served.id === v.id) {
          preview.replaceChildren(h("p", { className: "hint", "data-testid": "version-resolved-source" }, `As ${serving.name} serves it.`),
            resolvedList(served.resolvedMessages || [], "version-resolved-messages"));
          return;
        }
      }
      const resolved = await resolveMessages(messages, v.promptId);
      preview.replaceChildren(h("p", { className: "hint", "data-testid": "version-resolved-source" }, "Not served: as its includes resolve now."),
        resolvedList(resolved, "version-resolved-messages"));
    } catch (err) {
      preview.replaceChildren(errorBox(err));
    }
  };
  show();
  return [h("h3", null, "Includes"), includesList(messages, titles, "version-includes"),
    h("h3", null, "Resolved prompt"), preview];
}

// messagesList shows the messages in order, each with its role and its
// includes as links (titled from titles, a map of canvas titles by id).
export function messagesList(messages, titles) {
  if (!messages.length) {
    return h("p", { className: "hint", "data-testid": "messages-empty" }, "No messages.");
  }
  return h("ol", { className: "messages", "data-testid": "messages" },
    messages.map((m) => h("li", { className: "message", "data-role": m.role },
      h("div", { className: "message-head" }, badge(m.role, "role"), h("span", { className: "hint" }, ` index ${m.index}`)),
      h("pre", { className: "code" }, highlighted(m.content || "", titles)))));
}

// variablesTable shows the variable definitions.
export function variablesTable(vars) {
  return table("variables-table", [
    { label: "Name", cell: (x) => h("span", { className: "mono" }, x.name) },
    { label: "Type", cell: (x) => x.type },
    { label: "Required", cell: (x) => (x.required ? badge("required", "on") : "optional") },
    { label: "Description", cell: (x) => x.description || "" },
    { label: "Multimodal", cell: (x) => (x.processingOptions && x.processingOptions.allowMultimodal ? "yes" : "") },
  ], vars, "No variables.");
}

// configurationView shows the known configuration keys (the credential by
// its name when creds holds it), the structured output schema, the
// functions and any other key as JSON.
export function configurationView(cfg, creds) {
  const so = cfg.structuredOutput;
  const extra = Object.fromEntries(Object.entries(cfg).filter(([k]) => !knownConfigKeys.includes(k)));
  const show = (v) => (v === undefined || v === null || v === "" ? "—" : String(v));
  return h("div", { "data-testid": "configuration" },
    h("dl", { className: "fields" },
      h("dt", null, "Provider"), h("dd", { "data-testid": "config-provider" }, cfg.provider || "automatic"),
      h("dt", null, "Credential"), h("dd", { "data-testid": "config-credential" }, cfg.credentialId
        ? h("a", { href: "#/credentials" }, ((creds || []).find((x) => x.id === cfg.credentialId) || {}).name || cfg.credentialId)
        : "automatic"),
      h("dt", null, "Model"), h("dd", { "data-testid": "config-model" }, show(cfg.model)),
      h("dt", null, "Type"), h("dd", null, show(cfg.type)),
      h("dt", null, "Temperature"), h("dd", { "data-testid": "config-temperature" }, show(cfg.temperature)),
      h("dt", null, "Max tokens"), h("dd", null, show(cfg.maxTokens)),
      h("dt", null, "Top P"), h("dd", null, show(cfg.topP)),
      h("dt", null, "Structured output"), h("dd", { "data-testid": "config-structured" }, so && so.enabled ? "on" : "off"),
      h("dt", null, "Tool choice"), h("dd", { "data-testid": "config-tool-choice" },
        cfg.toolChoice && typeof cfg.toolChoice === "object" ? `call ${cfg.toolChoice.name}` : show(cfg.toolChoice))),
    Array.isArray(cfg.functions) && cfg.functions.length
      ? [h("h4", null, "Functions"), table("config-functions", [
        { label: "Name", cell: (f) => h("span", { className: "mono" }, f.name) },
        { label: "Description", cell: (f) => f.description || "" },
        { label: "Parameters", cell: (f) => h("pre", { className: "body" }, f.parameters ? JSON.stringify(f.parameters, null, 2) : "none") },
      ], cfg.functions, "")]
      : null,
    so && so.schema ? [h("h4", null, "Response schema"), h("pre", { className: "code", "data-testid": "config-schema" }, JSON.stringify(so.schema, null, 2))] : null,
    Object.keys(extra).length ? [h("h4", null, "Other keys"), h("pre", { className: "code", "data-testid": "config-extra" }, JSON.stringify(extra, null, 2))] : null);
}
