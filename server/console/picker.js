// picker.js is the provider and model picker of the version editor and the
// playground: a provider, a credential of the workspace for it (or
// "automatic", the server's resolution rules) and a model name suggested
// from the price catalogue (GET /models) for that provider.

import { listAll } from "./api.js";
import { h } from "./dom.js";

// providers are the model vendors a credential or a configuration names.
export const providers = ["openai", "azure-openai", "openai-compatible", "anthropic", "gemini", "bedrock"];

// suggestFrom says whose catalogue models a provider's model field
// suggests: Azure serves OpenAI's models, and an OpenAI-compatible server
// any name.
const suggestFrom = {
  openai: ["openai"],
  "azure-openai": ["azure-openai", "openai"],
  "openai-compatible": ["openai-compatible"],
  anthropic: ["anthropic"],
  gemini: ["gemini"],
  bedrock: ["bedrock"],
};

// loadChoices reads what the picker offers for a canvas: the credentials
// the canvas may use (those of its project, and only those of its
// allowedCredentials when it has a list) and the priced models. A server
// without credentials offers none, and the picker still takes a model name.
export async function loadChoices(c) {
  const [credentials, models] = await Promise.all([
    listAll("/credentials", { projectId: c && c.projectId }).catch(() => []),
    listAll("/models").catch(() => []),
  ]);
  const allowed = c && Array.isArray(c.allowedCredentials) ? new Set(c.allowedCredentials) : null;
  return { credentials: allowed ? credentials.filter((x) => allowed.has(x.id)) : credentials, models };
}

// modelPicker builds the three fields, prefixed by prefix ("editor" gives
// #editor-provider, #editor-credential, #editor-model), starting on start
// {provider, credentialId, model}. It returns the label and field nodes
// for a .fields grid and read(), which gives {provider, credentialId,
// model} with "" for automatic or empty, and the three fields (provider,
// credential, model) to mark one the server refused.
export function modelPicker(prefix, choices, start) {
  const ids = { provider: `${prefix}-provider`, credential: `${prefix}-credential`, model: `${prefix}-model`, list: `${prefix}-models` };
  const provider = h("select", { id: ids.provider, "data-testid": ids.provider },
    h("option", { value: "" }, "automatic (from the model's name; echo runs offline)"),
    providers.map((p) => h("option", { value: p, selected: p === start.provider }, p)));
  const credential = h("select", { id: ids.credential, "data-testid": ids.credential });
  const model = h("input", { id: ids.model, type: "text", list: ids.list, value: start.model || "", "data-testid": ids.model, spellcheck: "false", autocomplete: "off" });
  const datalist = h("datalist", { id: ids.list, "data-testid": ids.list });
  const hint = h("p", { className: "hint", id: `${ids.credential}-hint`, "data-testid": `${ids.credential}-hint` });
  credential.setAttribute("aria-describedby", hint.id);

  const fill = (keepCredential) => {
    const p = provider.value;
    const creds = choices.credentials.filter((x) => !p || x.provider === p);
    const want = keepCredential === undefined ? credential.value : keepCredential;
    credential.replaceChildren(
      h("option", { value: "" }, "automatic"),
      ...creds.map((x) => h("option", { value: x.id, selected: x.id === want }, `${x.name} (${x.provider}${x.keyHint ? `, key ${x.keyHint}` : ""})`)));
    if (want && !creds.some((x) => x.id === want)) {
      // A credential the list does not hold (deleted, or of another
      // provider) is kept, so that saving does not drop it unseen.
      credential.append(h("option", { value: want, selected: true }, `unknown credential ${want}`));
    }
    const from = p ? suggestFrom[p] : null;
    const models = choices.models.filter((m) => !from || from.includes(m.provider));
    datalist.replaceChildren(...models.map((m) => h("option", { value: m.name },
      `${m.provider} · $${m.inputPerMillion} in, $${m.outputPerMillion} out per million tokens${m.source === "workspace" ? " (workspace price)" : ""}`)));
    hint.textContent = creds.length
      ? "Automatic picks the oldest credential that serves the model (see the server's resolution rules)."
      : p ? `The workspace has no ${p} credential this canvas may use: add one on the Credentials page.` : "Automatic: the server's back end, or the offline echo model for echo.";
  };
  provider.addEventListener("change", () => fill());
  fill(start.credentialId || "");

  return {
    nodes: [
      h("label", { for: ids.provider }, "Provider"), provider,
      h("label", { for: ids.credential }, "Credential"), h("div", null, credential, hint),
      h("label", { for: ids.model }, "Model"), h("div", null, model, datalist),
    ],
    provider,
    credential,
    model,
    read: () => ({ provider: provider.value, credentialId: credential.value, model: model.value.trim() }),
  };
}
