// editor.js is the form that saves a new version, empty or from an existing
// one: its messages (added, removed, reordered), variables and
// configuration (the provider, credential and model picked, the tools the
// model may call), with the structured output schema and the functions
// checked before save.

import { request } from "./api.js";
import { h, errorBox, submitOnCtrlEnter } from "./dom.js";
import { knownConfigKeys } from "./versions.js";
import { loadChoices, modelPicker } from "./picker.js";
import { highlighted, includedTitles, includesList, includeRefs, resolveMessages, resolvedList } from "./includes.js";

const roles = ["system", "user", "assistant", "function"];
const variableTypes = ["text", "number", "boolean", "json", "file"];

// newVersionView is the editor. With originId the form starts from that
// version and the new one records it as its origin; otherwise it starts
// empty, for canvasId.
export async function newVersionView(originId, canvasId) {
  const origin = originId ? await request("GET", `/prompt-version/${encodeURIComponent(originId)}`) : null;
  const promptId = origin ? origin.promptId : canvasId;
  const c = await request("GET", `/prompt/${encodeURIComponent(promptId)}`);
  const choices = await loadChoices(c);
  const cfg = (origin && origin.configuration) || { model: "echo", type: "chat" };
  const so = cfg.structuredOutput || {};
  const extra = Object.fromEntries(Object.entries(cfg).filter(([k]) => !knownConfigKeys.includes(k)));

  const out = h("div", { id: "editor-error", "data-testid": "editor-error" });
  const title = h("input", { id: "editor-title", type: "text", maxlength: "256", "data-testid": "editor-title",
    value: origin ? `${origin.title} (copy)` : "", placeholder: "Version N when empty" });
  const draft = h("input", { id: "editor-draft", type: "checkbox", "data-testid": "editor-draft" });

  const messages = h("ol", { className: "editor-messages", id: "editor-messages", "data-testid": "editor-messages" });
  const startMessages = origin ? origin.messages || [] : [{ role: "system", content: "" }];
  startMessages.forEach((m) => messages.append(messageRow(m)));
  const addMessage = h("button", { type: "button", id: "add-message", "data-testid": "add-message", onclick: () => {
    const row = messageRow({ role: messages.children.length ? "user" : "system", content: "" });
    messages.append(row);
    renumber(messages);
    row.querySelector("textarea").focus();
  } }, "Add message");
  renumber(messages);

  const variables = h("tbody", { id: "editor-variables", "data-testid": "editor-variables" },
    ((origin && origin.variables) || []).map(variableRow));
  const placeholders = h("p", { className: "hint", id: "editor-placeholders", "data-testid": "editor-placeholders", "aria-live": "polite" });
  const showPlaceholders = () => {
    const names = placeholderNames(messages);
    const declared = new Set([...variables.querySelectorAll(".var-name")].map((i) => i.value.trim()));
    const missing = names.filter((n) => !declared.has(n));
    placeholders.textContent = names.length
      ? `Placeholders in the messages: ${names.join(", ")}.${missing.length ? ` Not declared: ${missing.join(", ")} (left as written unless a value is given).` : ""}`
      : "";
  };
  messages.addEventListener("input", showPlaceholders);

  // Includes: each message's include tags are shown as links under it, the
  // includes of all messages are listed, and the prompt can be previewed
  // with them resolved as they resolve now.
  const titles = await includedTitles(startMessages);
  const includes = h("div", { id: "editor-includes", "aria-live": "polite" });
  const preview = h("div", { id: "editor-preview", "data-testid": "editor-preview" });
  let titling = null;
  const showIncludes = () => {
    const msgs = readMessages(messages);
    [...messages.children].forEach((row, i) => {
      const view = row.querySelector(".msg-includes");
      const content = msgs[i].content;
      view.hidden = !includeRefs(content).length;
      view.replaceChildren(...(view.hidden ? [] : highlighted(content, titles)));
    });
    includes.replaceChildren(includesList(msgs, titles, "editor-includes-list") || "");
    const missing = msgs.filter((m) => includeRefs(m.content).some((r) => !titles.has(r.canvasId)));
    if (missing.length && !titling) {
      titling = includedTitles(missing).then((found) => {
        found.forEach((t, id) => titles.set(id, t));
        titling = null;
        if (found.size) {
          showIncludes();
        }
      });
    }
  };
  messages.addEventListener("input", showIncludes);
  showIncludes();
  const previewButton = h("button", { type: "button", id: "editor-preview-button", "data-testid": "editor-preview-button", onclick: async () => {
    preview.replaceChildren(h("p", { className: "hint" }, "Resolving…"));
    try {
      const resolved = await resolveMessages(readMessages(messages), promptId);
      preview.replaceChildren(h("h4", null, "Resolved prompt"), resolvedList(resolved, "editor-preview-messages"));
    } catch (err) {
      preview.replaceChildren(errorBox(err));
    }
  } }, "Preview resolved prompt");
  variables.addEventListener("input", showPlaceholders);
  const addVariable = h("button", { type: "button", id: "add-variable", "data-testid": "add-variable", onclick: () => {
    const row = variableRow({ name: "", type: "text", required: false, description: "" });
    variables.append(row);
    row.querySelector("input").focus();
  } }, "Add variable");
  showPlaceholders();

  const picker = modelPicker("editor", choices, { provider: cfg.provider, credentialId: cfg.credentialId, model: cfg.model });
  const ctype = h("input", { id: "editor-type", type: "text", value: cfg.type || "", "data-testid": "editor-type", spellcheck: "false" });
  const temperature = numberInput("editor-temperature", cfg.temperature, "0.1", "0", "2");
  const maxTokens = numberInput("editor-max-tokens", cfg.maxTokens, "1", "1");
  const topP = numberInput("editor-top-p", cfg.topP, "0.05", "0", "1");
  const soEnabled = h("input", { id: "editor-structured", type: "checkbox", checked: Boolean(so.enabled), "data-testid": "editor-structured" });
  const schema = jsonArea("editor-schema", so.schema === undefined || so.schema === null ? "" : JSON.stringify(so.schema, null, 2), 8);
  const schemaError = h("p", { className: "error", id: "editor-schema-error", "data-testid": "editor-schema-error", role: "alert" });
  schema.setAttribute("aria-describedby", "editor-schema-error editor-schema-hint");
  const other = jsonArea("editor-extra", Object.keys(extra).length ? JSON.stringify(extra, null, 2) : "", 4);
  const otherError = h("p", { className: "error", id: "editor-extra-error", "data-testid": "editor-extra-error", role: "alert" });
  other.setAttribute("aria-describedby", "editor-extra-error");
  const checkSchema = () => showError(schema, schemaError, schemaProblem(schema.value, soEnabled.checked));
  const checkOther = () => showError(other, otherError, extraProblem(other.value));
  schema.addEventListener("input", checkSchema);
  soEnabled.addEventListener("change", checkSchema);
  other.addEventListener("input", checkOther);
  const functions = jsonArea("editor-functions", Array.isArray(cfg.functions) ? JSON.stringify(cfg.functions, null, 2) : "", 6);
  const functionsError = h("p", { className: "error", id: "editor-functions-error", "data-testid": "editor-functions-error", role: "alert" });
  functions.setAttribute("aria-describedby", "editor-functions-error editor-functions-hint");
  const toolChoice = h("select", { id: "editor-tool-choice", "data-testid": "editor-tool-choice" });
  const toolChoiceError = h("p", { className: "error", id: "editor-tool-choice-error", "data-testid": "editor-tool-choice-error", role: "alert" });
  toolChoice.setAttribute("aria-describedby", "editor-tool-choice-error");
  const startChoice = cfg.toolChoice && typeof cfg.toolChoice === "object" ? `function:${cfg.toolChoice.name}` : cfg.toolChoice || "";
  const fillToolChoice = () => {
    const want = toolChoice.options.length ? toolChoice.value : startChoice;
    const names = functionNames(functions.value);
    if (want.startsWith("function:") && !names.includes(want.slice(9))) {
      names.push(want.slice(9));
    }
    toolChoice.replaceChildren(
      h("option", { value: "" }, "default (auto when there are functions)"),
      ...["auto", "none", "required"].map((v) => h("option", { value: v, selected: v === want }, v)),
      ...names.map((n) => h("option", { value: `function:${n}`, selected: `function:${n}` === want }, `call ${n}`)));
  };
  fillToolChoice();
  const checkFunctions = () => showError(functions, functionsError, functionsProblem(functions.value));
  functions.addEventListener("input", () => {
    checkFunctions();
    fillToolChoice();
  });

  const save = h("button", { type: "submit", className: "primary", id: "save-version", "data-testid": "save-version" }, "Save version");
  const form = h("form", { id: "editor-form", "data-testid": "editor-form", novalidate: true },
    h("div", { className: "fields" },
      h("label", { for: "editor-title" }, "Title"), title,
      h("label", { for: "editor-draft" }, "Draft"), h("div", null, draft, h("span", { className: "hint" }, " marks the version as work in progress"))),
    h("h3", null, "Messages"),
    h("p", { className: "hint" }, "The prompt is the system message at index 0; the others follow it in order. Use {{name}} for a variable."),
    h("p", { className: "hint" }, "{{> CANVAS_ID}} includes what a canvas's production serves; {{> CANVAS_ID@ENV}} what an environment serves; {{> CANVAS_ID@vN}} its version N."),
    messages,
    h("div", { className: "actions" }, addMessage, previewButton),
    includes,
    preview,
    h("h3", null, "Variables"),
    h("table", { className: "editor-variables" },
      h("thead", null, h("tr", null, ["Name", "Type", "Required", "Description", ""].map((l) => h("th", { scope: "col" }, l)))),
      variables),
    placeholders,
    h("div", { className: "actions" }, addVariable),
    h("h3", null, "Configuration"),
    h("div", { className: "fields" },
      picker.nodes,
      h("label", { for: "editor-type" }, "Type"), ctype,
      h("label", { for: "editor-temperature" }, "Temperature"), temperature,
      h("label", { for: "editor-max-tokens" }, "Max tokens"), maxTokens,
      h("label", { for: "editor-top-p" }, "Top P"), topP,
      h("label", { for: "editor-structured" }, "Structured output"), h("div", null, soEnabled, h("span", { className: "hint" }, " answer JSON matching the schema below")),
      h("label", { for: "editor-schema", className: "full" }, "Response schema (JSON Schema, an object)"),
      h("div", { className: "full" }, schema,
        h("p", { className: "hint", id: "editor-schema-hint" }, 'For example {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}.'),
        schemaError),
      h("label", { for: "editor-functions", className: "full" }, "Functions the model may call (JSON list of {name, description, parameters})"),
      h("div", { className: "full" }, functions,
        h("p", { className: "hint", id: "editor-functions-hint" }, 'For example [{"name": "get_weather", "description": "The weather of a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]. The echo model calls one when the last user message says "call get_weather".'),
        functionsError),
      h("label", { for: "editor-tool-choice" }, "Tool choice"), h("div", null, toolChoice, toolChoiceError),
      h("label", { for: "editor-extra", className: "full" }, "Other configuration keys (JSON object, kept as written)"),
      h("div", { className: "full" }, other, otherError)),
    h("div", { className: "actions" }, save, h("span", { className: "hint" }, "Enter saves; in a text area, Ctrl+Enter."),
      h("a", { href: origin ? `#/versions/${origin.id}` : `#/canvases/${promptId}` }, "Cancel")),
    out);

  submitOnCtrlEnter(form);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    out.replaceChildren();
    const problems = [checkSchema(), checkOther(), checkFunctions()].filter(Boolean);
    const vars = readVariables(variables, problems);
    const msgs = readMessages(messages);
    if (problems.length) {
      out.replaceChildren(errorBox(new Error(`Not saved: ${problems.join(" ")}`)));
      const bad = form.querySelector("[aria-invalid='true']");
      if (bad) {
        bad.focus();
      }
      return;
    }
    const configuration = { ...JSON.parse(other.value.trim() || "{}") };
    const picked = picker.read();
    setIf(configuration, "provider", picked.provider);
    setIf(configuration, "credentialId", picked.credentialId);
    setIf(configuration, "model", picked.model);
    setIf(configuration, "type", ctype.value.trim());
    setIf(configuration, "temperature", temperature.value === "" ? "" : Number(temperature.value));
    setIf(configuration, "maxTokens", maxTokens.value === "" ? "" : Number(maxTokens.value));
    setIf(configuration, "topP", topP.value === "" ? "" : Number(topP.value));
    if (soEnabled.checked || schema.value.trim()) {
      configuration.structuredOutput = { enabled: soEnabled.checked };
      if (schema.value.trim()) {
        configuration.structuredOutput.schema = JSON.parse(schema.value);
      }
    }
    if (functions.value.trim()) {
      configuration.functions = JSON.parse(functions.value);
    }
    if (toolChoice.value) {
      configuration.toolChoice = toolChoice.value.startsWith("function:") ? { name: toolChoice.value.slice(9) } : toolChoice.value;
    }
    const body = { promptId, configuration, variables: vars, draft: draft.checked };
    if (title.value.trim()) {
      body.title = title.value.trim();
    }
    if (origin) {
      body.originVersionId = origin.id;
    }
    if (msgs.length) {
      body.message = { role: msgs[0].role, content: msgs[0].content };
    }
    save.disabled = true;
    try {
      const created = await saveVersion(body, msgs);
      location.hash = `#/versions/${created.id}`;
    } catch (err) {
      out.replaceChildren(saveError(err));
      // Each problem the server names under a field is also shown there.
      const at = [
        ["/json/configuration/structuredOutput/schema", schema, schemaError, "the schema"],
        ["/json/configuration/functions", functions, functionsError, "the functions"],
        ["/json/configuration/toolChoice", toolChoice, toolChoiceError, "the tool choice"],
        ["/json/configuration/credentialId", picker.credential, null, "the credential"],
        ["/json/configuration/provider", picker.provider, null, "the provider"],
      ];
      for (const d of err.details || []) {
        const hit = at.find(([prefix]) => d.path && (d.path === prefix || d.path.startsWith(`${prefix}/`)));
        if (!hit) {
          continue;
        }
        const [prefix, field, el, name] = hit;
        const msg = `${d.path.slice(prefix.length) || name}: ${d.message}`;
        if (el) {
          showError(field, el, el.textContent ? `${el.textContent} ${msg}` : msg);
        } else {
          field.setAttribute("aria-invalid", "true");
        }
      }
      const bad = form.querySelector("[aria-invalid='true']");
      if (bad) {
        bad.focus();
      }
    } finally {
      save.disabled = false;
    }
  });

  return h("section", { "aria-labelledby": "editor-heading" },
    h("p", null, h("a", { href: origin ? `#/versions/${origin.id}` : `#/canvases/${promptId}` }, origin ? `← ${origin.title}` : `← ${c.title}`)),
    h("h2", { id: "editor-heading" }, origin ? `New version of ${c.title} from ${origin.title}` : `New version of ${c.title}`),
    form);
}

// saveVersion creates the version with its first message, then writes the
// others through POST /prompt-version-message, each at its index. A
// version from an origin given no message would copy the origin's, so an
// emptied message list is written back as empty.
async function saveVersion(body, msgs) {
  const created = await request("POST", "/prompt-version", body);
  try {
    if (!msgs.length && (created.messages || []).length) {
      await request("PATCH", `/prompt-version/${created.id}`, { messages: [] });
    }
    for (let i = 1; i < msgs.length; i++) {
      await request("POST", "/prompt-version-message", { promptVersionId: created.id, role: msgs[i].role, content: msgs[i].content, index: i });
    }
  } catch (err) {
    err.created = created;
    throw err;
  }
  return created;
}

// saveError explains a failed save: the message and every detail, and a
// link to the version when it was created before a message failed.
function saveError(err) {
  return h("div", { className: "error", role: "alert", "data-testid": "error" },
    h("p", null, err.message),
    err.details && err.details.length
      ? h("ul", null, err.details.map((d) => h("li", null, h("span", { className: "mono" }, d.path), `: ${d.message}`)))
      : null,
    err.created ? h("p", null, "The version was created without all its messages: ", h("a", { href: `#/versions/${err.created.id}` }, "open it")) : null);
}

// messageRow is one editable message: role, content, and buttons to move
// it up or down or remove it.
function messageRow(m) {
  const row = h("li", { className: "editor-message", "data-testid": "editor-message" });
  const role = h("select", { className: "msg-role", "aria-label": "Role", "data-testid": "msg-role" },
    roles.map((r) => h("option", { value: r, selected: r === (m.role || "system") }, r)));
  const content = h("textarea", { className: "msg-content code", rows: "4", "aria-label": "Content", "data-testid": "msg-content", spellcheck: "false" });
  content.value = m.content || "";
  const move = (dir) => {
    const list = row.parentElement;
    const to = dir < 0 ? row.previousElementSibling : row.nextElementSibling;
    if (!to) {
      return;
    }
    if (dir < 0) {
      list.insertBefore(row, to);
    } else {
      list.insertBefore(to, row);
    }
    renumber(list);
    content.focus();
  };
  row.append(
    h("div", { className: "message-head" },
      h("span", { className: "msg-index hint" }), role,
      h("button", { type: "button", className: "msg-up", "data-testid": "msg-up", onclick: () => move(-1) }, "Move up"),
      h("button", { type: "button", className: "msg-down", "data-testid": "msg-down", onclick: () => move(1) }, "Move down"),
      h("button", { type: "button", className: "danger msg-remove", "data-testid": "msg-remove", onclick: () => {
        const list = row.parentElement;
        row.remove();
        renumber(list);
        list.dispatchEvent(new Event("input"));
      } }, "Remove")),
    content,
    h("pre", { className: "code msg-includes", "data-testid": "msg-includes", hidden: true }));
  return row;
}

// renumber writes each message's index and labels its controls with it.
function renumber(list) {
  [...list.children].forEach((row, i) => {
    row.querySelector(".msg-index").textContent = `#${i}`;
    row.querySelector(".msg-role").setAttribute("aria-label", `Role of message ${i}`);
    row.querySelector(".msg-content").setAttribute("aria-label", `Content of message ${i}`);
    row.querySelector(".msg-up").setAttribute("aria-label", `Move message ${i} up`);
    row.querySelector(".msg-down").setAttribute("aria-label", `Move message ${i} down`);
    row.querySelector(".msg-remove").setAttribute("aria-label", `Remove message ${i}`);
    row.querySelector(".msg-up").disabled = i === 0;
    row.querySelector(".msg-down").disabled = i === list.children.length - 1;
  });
}

// readMessages returns the messages in their on-screen order.
function readMessages(list) {
  return [...list.children].map((row) => ({
    role: row.querySelector(".msg-role").value,
    content: row.querySelector(".msg-content").value,
  }));
}

// placeholderNames lists the {{name}} placeholders of the messages, once each.
function placeholderNames(list) {
  const names = new Set();
  for (const m of readMessages(list)) {
    for (const match of m.content.matchAll(/\{\{\s*([^{}\s]+)\s*\}\}/g)) {
      names.add(match[1]);
    }
  }
  return [...names];
}

// variableRow is one editable variable definition.
function variableRow(v) {
  const row = h("tr", { className: "editor-variable", "data-testid": "editor-variable" },
    h("td", null, h("input", { type: "text", className: "var-name", "aria-label": "Variable name", value: v.name || "", "data-testid": "var-name", spellcheck: "false" })),
    h("td", null, h("select", { className: "var-type", "aria-label": "Variable type", "data-testid": "var-type" },
      variableTypes.map((t) => h("option", { value: t, selected: t === (v.type || "text") }, t)))),
    h("td", null, h("input", { type: "checkbox", className: "var-required", "aria-label": "Required", checked: Boolean(v.required), "data-testid": "var-required" })),
    h("td", null, h("input", { type: "text", className: "var-description", "aria-label": "Description", value: v.description || "", "data-testid": "var-description" })),
    h("td", null, h("button", { type: "button", className: "danger", "data-testid": "var-remove", onclick: () => {
      const body = row.parentElement;
      row.remove();
      body.dispatchEvent(new Event("input"));
    } }, "Remove")));
  row.processingOptions = v.processingOptions || { allowMultimodal: false };
  return row;
}

// readVariables returns the definitions on screen; an empty or repeated
// name is added to problems and marked on its field.
function readVariables(body, problems) {
  const seen = new Set();
  return [...body.children].map((row) => {
    const nameInput = row.querySelector(".var-name");
    const name = nameInput.value.trim();
    let problem = "";
    if (!name) {
      problem = "A variable has no name.";
    } else if (seen.has(name)) {
      problem = `The variable ${name} is declared twice.`;
    }
    seen.add(name);
    nameInput.setAttribute("aria-invalid", problem ? "true" : "false");
    if (problem) {
      problems.push(problem);
    }
    return {
      name,
      type: row.querySelector(".var-type").value,
      required: row.querySelector(".var-required").checked,
      description: row.querySelector(".var-description").value.trim(),
      processingOptions: row.processingOptions,
    };
  });
}

// schemaProblem checks the response schema: valid JSON, an object, and the
// common keywords of the right shape. It returns the problem, or "".
export function schemaProblem(text, enabled) {
  const src = text.trim();
  if (!src) {
    return enabled ? "Structured output is on, so it needs a response schema." : "";
  }
  let schema;
  try {
    schema = JSON.parse(src);
  } catch (err) {
    return `The response schema is not valid JSON: ${err.message}.`;
  }
  return schemaShape(schema, "the schema");
}

// schemaShape checks the shape of one schema object and its sub-schemas.
function schemaShape(s, where) {
  const isObject = (x) => x !== null && typeof x === "object" && !Array.isArray(x);
  if (typeof s === "boolean") {
    return "";
  }
  if (!isObject(s)) {
    return `${where} must be a JSON object.`;
  }
  const types = ["string", "number", "integer", "boolean", "object", "array", "null"];
  if (s.type !== undefined) {
    const list = Array.isArray(s.type) ? s.type : [s.type];
    const bad = list.find((t) => !types.includes(t));
    if (bad !== undefined || list.length === 0) {
      return `${where}: "type" must be one of ${types.join(", ")} (or a list of them), not ${JSON.stringify(bad)}.`;
    }
  }
  if (s.properties !== undefined) {
    if (!isObject(s.properties)) {
      return `${where}: "properties" must be an object of schemas.`;
    }
    for (const [k, sub] of Object.entries(s.properties)) {
      const p = schemaShape(sub, `${where} › properties › ${k}`);
      if (p) {
        return p;
      }
    }
  }
  if (s.required !== undefined && !(Array.isArray(s.required) && s.required.every((r) => typeof r === "string"))) {
    return `${where}: "required" must be a list of property names.`;
  }
  if (s.items !== undefined) {
    const p = schemaShape(s.items, `${where} › items`);
    if (p) {
      return p;
    }
  }
  if (s.enum !== undefined && !Array.isArray(s.enum)) {
    return `${where}: "enum" must be a list.`;
  }
  return "";
}

// functionsProblem checks the functions: a JSON list of objects, each with
// a name the vendors accept (letters, digits, _ and -, at most 64), once,
// and parameters, when given, an object. It returns the problem, or "".
export function functionsProblem(text) {
  const src = text.trim();
  if (!src) {
    return "";
  }
  let list;
  try {
    list = JSON.parse(src);
  } catch (err) {
    return `The functions are not valid JSON: ${err.message}.`;
  }
  if (!Array.isArray(list)) {
    return "The functions must be a JSON list.";
  }
  const seen = new Set();
  for (const [i, f] of list.entries()) {
    if (f === null || typeof f !== "object" || Array.isArray(f)) {
      return `Function ${i} must be an object.`;
    }
    if (typeof f.name !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(f.name)) {
      return `Function ${i}: "name" must be 1 to 64 letters, digits, _ or -.`;
    }
    if (seen.has(f.name)) {
      return `The function ${f.name} is declared twice.`;
    }
    seen.add(f.name);
    if (f.parameters !== undefined && (f.parameters === null || typeof f.parameters !== "object" || Array.isArray(f.parameters))) {
      return `Function ${f.name}: "parameters" must be a JSON Schema object.`;
    }
  }
  return "";
}

// functionNames lists the names of the functions text declares, or none
// while it does not parse.
function functionNames(text) {
  try {
    const list = JSON.parse(text);
    return Array.isArray(list) ? list.filter((f) => f && typeof f.name === "string").map((f) => f.name) : [];
  } catch {
    return [];
  }
}

// extraProblem checks the other configuration keys: a JSON object whose
// keys are not the ones the form sets.
function extraProblem(text) {
  const src = text.trim();
  if (!src) {
    return "";
  }
  let v;
  try {
    v = JSON.parse(src);
  } catch (err) {
    return `The other configuration keys are not valid JSON: ${err.message}.`;
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    return "The other configuration keys must be a JSON object.";
  }
  const dup = Object.keys(v).find((k) => knownConfigKeys.includes(k));
  return dup ? `The key ${dup} has its own field above; remove it from the other keys.` : "";
}

// showError marks field invalid with its message, or clears it, and
// returns the message.
function showError(field, el, msg) {
  el.textContent = msg;
  field.setAttribute("aria-invalid", msg ? "true" : "false");
  return msg;
}

function numberInput(id, value, step, min, max) {
  return h("input", { id, type: "number", step, min, max, value: value === undefined || value === null ? "" : String(value), "data-testid": id });
}

function jsonArea(id, value, rows) {
  const el = h("textarea", { id, className: "code", rows: String(rows), "data-testid": id, spellcheck: "false" });
  el.value = value;
  return el;
}

function setIf(obj, key, value) {
  if (value !== "" && value !== undefined && !Number.isNaN(value)) {
    obj[key] = value;
  }
}
