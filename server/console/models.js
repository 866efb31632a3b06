// models.js is the Models page: the price of every model the server knows
// (the bundled, dated catalogue merged with the workspace's overrides),
// from which each run's cost is computed. Admins set an override, which
// wins for its name and the dated names extending it, and remove one to
// go back to the catalogue's price.

import { request, listAll } from "./api.js";
import { h, table, when, badge, errorBox } from "./dom.js";
import { providers } from "./picker.js";
import { actor } from "./actors.js";

const priceProviders = [...providers, "echo"];

// modelsView is the Models page; notice, when set, says what was just done.
export async function modelsView(notice) {
  const models = await listAll("/models");
  const section = h("section", { "aria-labelledby": "models-title", "data-testid": "models" });
  const reload = async (text) => {
    const next = await modelsView(text);
    section.replaceWith(next);
    return next;
  };
  const out = h("div", { id: "models-error", "data-testid": "models-error" });
  const filter = h("select", { id: "models-provider", "data-testid": "models-provider" },
    h("option", { value: "" }, "any"), priceProviders.map((p) => h("option", { value: p }, p)));
  const holder = h("div", { id: "models-list" });
  const form = priceForm(reload);
  const show = () => {
    const rows = models.filter((m) => !filter.value || m.provider === filter.value);
    holder.replaceChildren(table("models-table", [
      { label: "Model", cell: (m) => h("span", { className: "mono", "data-testid": `model-${m.name}` }, m.name) },
      { label: "Provider", cell: (m) => m.provider },
      { label: "Input, per million tokens", cell: (m) => h("span", { "data-testid": `model-input-${m.name}` }, `$${m.inputPerMillion}`) },
      { label: "Output, per million tokens", cell: (m) => h("span", { "data-testid": `model-output-${m.name}` }, `$${m.outputPerMillion}`) },
      { label: "Source", cell: (m) => (m.source === "workspace"
        ? [badge("workspace", "on"), h("div", { className: "hint" }, `${when(m.updatedAt)} by `, actor(m.updatedBy))]
        : badge("catalogue")) },
      { label: "", cell: (m) => h("div", { className: "actions" },
        h("button", { type: "button", "data-testid": `model-edit-${m.name}`, onclick: () => form.edit(m) }, "Set price"),
        m.source === "workspace" ? h("button", { type: "button", className: "danger", "data-testid": `model-reset-${m.name}`, onclick: async (ev) => {
          ev.currentTarget.disabled = true;
          try {
            await request("DELETE", `/models/${encodeURIComponent(m.name)}`);
          } catch (err) {
            out.replaceChildren(errorBox(err));
            return;
          }
          reload(`The workspace's price of ${m.name} was removed.`);
        } }, "Remove override") : null) },
    ], rows, "No model matches."));
  };
  filter.addEventListener("change", show);
  show();
  section.append(
    h("h2", { id: "models-title" }, "Models and prices"),
    h("p", { className: "hint" }, "Prices in USD per million tokens. A run's cost is its usage at the price of the model that answered; a model without a price gives runs without a cost."),
    notice ? h("p", { className: "result", "data-state": "saved", role: "status", "data-testid": "models-notice" }, notice) : null,
    h("div", { className: "actions" }, h("label", { for: "models-provider" }, "Provider"), filter),
    holder, out, form.node);
  return section;
}

// priceForm sets a workspace's price of a model (PUT /models/{name});
// edit(m) fills it from a row. The server's problems show at their fields.
function priceForm(reload) {
  const fieldOf = (id, input, label) => {
    const err = h("p", { className: "error", id: `${id}-error`, "data-testid": `${id}-error`, "aria-live": "polite" });
    input.setAttribute("aria-describedby", `${id}-error`);
    return { input, err, nodes: [h("label", { for: id }, label), h("div", null, input, err)] };
  };
  const name = fieldOf("price-name", h("input", { id: "price-name", type: "text", spellcheck: "false", "data-testid": "price-name" }), "Model");
  const provider = fieldOf("price-provider", h("select", { id: "price-provider", "data-testid": "price-provider" },
    priceProviders.map((p) => h("option", { value: p }, p))), "Provider");
  const input = fieldOf("price-input", h("input", { id: "price-input", type: "number", min: "0", max: "10000", step: "any", "data-testid": "price-input" }), "Input, USD per million tokens");
  const output = fieldOf("price-output", h("input", { id: "price-output", type: "number", min: "0", max: "10000", step: "any", "data-testid": "price-output" }), "Output, USD per million tokens");
  const fields = { "/path/name": name, "/json/provider": provider, "/json/inputPerMillion": input, "/json/outputPerMillion": output };
  const result = h("div", { id: "price-result", "data-testid": "price-result" });
  const node = h("form", { id: "price-form", "data-testid": "price-form", novalidate: true },
    h("h3", null, "Set a price"),
    h("p", { className: "hint" }, "Admins only. The workspace's price replaces the catalogue's for this name and the dated or versioned names extending it."),
    h("div", { className: "fields" }, name.nodes, provider.nodes, input.nodes, output.nodes),
    h("div", { className: "actions" }, h("button", { type: "submit", className: "primary", id: "price-save", "data-testid": "price-save" }, "Save price")),
    result);
  node.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    result.replaceChildren();
    for (const f of Object.values(fields)) {
      f.err.textContent = "";
      f.input.removeAttribute("aria-invalid");
    }
    const model = name.input.value.trim();
    if (!model) {
      name.err.textContent = "Name the model.";
      name.input.setAttribute("aria-invalid", "true");
      name.input.focus();
      return;
    }
    const num = (x) => (x.input.value === "" ? null : Number(x.input.value));
    try {
      await request("PUT", `/models/${encodeURIComponent(model)}`,
        { provider: provider.input.value, inputPerMillion: num(input), outputPerMillion: num(output) });
    } catch (err) {
      const rest = [];
      for (const d of err.details || []) {
        const f = fields[d.path];
        if (f) {
          f.err.textContent = d.message;
          f.input.setAttribute("aria-invalid", "true");
        } else {
          rest.push(d);
        }
      }
      result.replaceChildren(h("div", { className: "error", role: "alert", "data-testid": "error" }, h("p", null, err.message),
        rest.length ? h("ul", null, rest.map((d) => h("li", null, h("span", { className: "mono" }, d.path), `: ${d.message}`))) : null));
      const bad = node.querySelector("[aria-invalid='true']");
      if (bad) {
        bad.focus();
      }
      return;
    }
    reload(`The workspace's price of ${model} is set.`);
  });
  return {
    node,
    edit(m) {
      name.input.value = m.name;
      provider.input.value = m.provider;
      input.input.value = String(m.inputPerMillion);
      output.input.value = String(m.outputPerMillion);
      input.input.focus();
    },
  };
}
