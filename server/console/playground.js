// playground.js runs a canvas' version, or the version an environment
// serves, with a form made from its variables, on the provider, credential
// and model picked, and shows the answer as it streams in (text, or the
// tool calls the model makes, which the operator answers to continue),
// then its usage, cost and latency and a link to the run.

import { request, query, apiKey, ApiError, loadCanvas } from "./api.js";
import { h, errorBox, submitOnCtrlEnter } from "./dom.js";
import { money } from "./format.js";
import { loadChoices, modelPicker } from "./picker.js";
import { toolCallsTable } from "./runlist.js";
import { variableField } from "./variables.js";

// playgroundView is the playground. Without canvasId it asks for a canvas;
// kind ("version" or "environment") and target preselect what runs.
export async function playgroundView(canvasId, kind, target) {
  if (!canvasId) {
    return canvasPicker();
  }
  const [c, list, envs] = await loadCanvas(canvasId);
  const served = envs.filter((e) => e.activeVersionId);
  const options = [
    ...served.map((e) => ({ value: `environment:${e.name}`, label: `Environment ${e.name}`, versionId: e.activeVersionId })),
    ...[...list].reverse().map((v) => ({ value: `version:${v.id}`, label: `Version #${v.versionIndex || "?"} ${v.title}`, versionId: v.id })),
  ];
  let selected = kind && target ? `${kind}:${target}` : "";
  if (!options.some((o) => o.value === selected)) {
    selected = options.length ? options[0].value : "";
  }
  const section = h("section", { "aria-labelledby": "playground-title", "data-testid": "playground" },
    h("p", null, h("a", { href: `#/canvases/${c.id}` }, `← ${c.title}`)),
    h("h2", { id: "playground-title" }, `Playground: ${c.title}`));
  if (!options.length) {
    section.append(h("p", { className: "hint", "data-testid": "playground-empty" }, "This canvas has no version to run yet."));
    return section;
  }
  const targetSelect = h("select", { id: "playground-target", "data-testid": "playground-target" },
    options.map((o) => h("option", { value: o.value, selected: o.value === selected }, o.label)));
  targetSelect.addEventListener("change", () => {
    const [k, ...rest] = targetSelect.value.split(":");
    location.hash = `#/canvases/${c.id}/playground/${k}/${encodeURIComponent(rest.join(":"))}`;
  });
  const [selKind, ...selRest] = selected.split(":");
  const selTarget = selRest.join(":");
  const [version, choices] = await Promise.all([
    selKind === "environment"
      ? request("GET", `/environment/version${query({ resourceType: "prompt", resourceId: c.id, envName: selTarget })}`)
      : request("GET", `/prompt-version/${encodeURIComponent(selTarget)}`),
    loadChoices(c),
  ]);
  section.append(
    h("div", { className: "actions" }, h("label", { for: "playground-target" }, "Run"), targetSelect,
      h("a", { href: `#/versions/${version.id}`, "data-testid": "playground-version-link" }, `${version.title} (model ${(version.configuration && version.configuration.model) || "default"})`)),
    runForm(c, selKind, selTarget, version, choices));
  return section;
}

// canvasPicker lists the canvases to open in the playground.
async function canvasPicker() {
  const canvases = (await request("GET", "/prompt")) || [];
  const select = h("select", { id: "playground-canvas", "data-testid": "playground-canvas" },
    canvases.map((c) => h("option", { value: c.id }, c.title)));
  const form = h("form", { className: "actions" },
    h("label", { for: "playground-canvas" }, "Canvas"), select,
    h("button", { type: "submit", className: "primary", "data-testid": "playground-open" }, "Open"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    location.hash = `#/canvases/${select.value}/playground`;
  });
  return h("section", { "aria-labelledby": "playground-title" },
    h("h2", { id: "playground-title" }, "Playground"),
    canvases.length ? form : h("p", { className: "hint" }, "No canvases yet."));
}

// runForm is the variables form, the model picker, the Run and Stop
// buttons, the output, and the answers to the model's tool calls.
function runForm(c, kind, target, version, choices) {
  const cfg = version.configuration || {};
  const vars = version.variables || [];
  const fields = vars.map((v, i) => variableField(v, i));
  const picker = modelPicker("playground", choices, { provider: cfg.provider, credentialId: cfg.credentialId, model: cfg.model });
  const extra = h("textarea", { id: "playground-message", rows: "2", "data-testid": "playground-message" });
  const stream = h("input", { type: "checkbox", id: "playground-stream", checked: true, "data-testid": "playground-stream" });
  const run = h("button", { type: "submit", className: "primary", id: "playground-run", "data-testid": "playground-run" }, "Run");
  const stop = h("button", { type: "button", id: "playground-stop", "data-testid": "playground-stop", disabled: true }, "Stop");
  const status = h("p", { className: "result", id: "playground-status", "data-testid": "playground-status", role: "status" });
  const output = h("pre", { className: "output", id: "playground-output", "data-testid": "playground-output", "aria-live": "polite", "aria-busy": "false" });
  const toolStream = h("pre", { className: "output code", id: "playground-tool-stream", "data-testid": "playground-tool-stream", hidden: true });
  const tools = h("div", { id: "playground-tool-calls", "data-testid": "playground-tool-calls" });
  const transcript = h("div", { id: "playground-conversation", "data-testid": "playground-conversation" });
  const stats = h("dl", { className: "fields stats", id: "playground-stats", "data-testid": "playground-stats", hidden: true });
  const error = h("div", { id: "playground-error", "data-testid": "playground-error" });
  let controller = null;
  // conversation holds the messages sent after the version's own: the
  // extra user message, then each tool-call answer and its results.
  let conversation = [];
  let values = {};

  const form = h("form", { id: "playground-form", "data-testid": "playground-form", novalidate: true },
    h("h3", null, "Variables"),
    fields.length ? h("div", { className: "fields" }, fields.map((f) => f.nodes)) : h("p", { className: "hint" }, "This version declares no variables."),
    h("h3", null, "Model"),
    h("div", { className: "fields" }, picker.nodes),
    h("p", { className: "hint" }, "Starts on the version's configuration; a model or credential picked here is sent as the run's settings. The provider narrows the credentials and the models suggested."),
    h("div", { className: "fields" },
      h("label", { for: "playground-message" }, "Extra user message (optional)"), extra,
      h("label", { for: "playground-stream" }, "Stream the answer"), stream),
    h("div", { className: "actions" }, run, stop, h("span", { className: "hint" }, "Enter runs; in a text area, Ctrl+Enter.")));

  // settings are the run's overrides: what the picker holds that the
  // version's configuration does not say already.
  const settings = () => {
    const picked = picker.read();
    const out = {};
    if (picked.model && picked.model !== (cfg.model || "")) {
      out.model = picked.model;
    }
    if (picked.credentialId && picked.credentialId !== (cfg.credentialId || "")) {
      out.credentialId = picked.credentialId;
    }
    return out;
  };

  // execute runs the version with the conversation so far and shows the
  // answer; an answer with tool calls is added to the conversation and
  // offered for the operator to answer.
  const execute = async () => {
    run.disabled = true;
    stop.disabled = false;
    controller = new AbortController();
    output.textContent = "";
    output.dataset.state = "running";
    toolStream.textContent = "";
    toolStream.hidden = true;
    tools.replaceChildren();
    stats.hidden = true;
    stats.replaceChildren();
    setStatus(status, "running", "Running…");
    showConversation(transcript, conversation);
    const started = performance.now();
    try {
      const body = { canvas_id: c.id, variables: values, stream: stream.checked };
      if (kind === "environment") {
        body.environment_name = target;
      } else {
        body.version_id = target;
      }
      if (conversation.length) {
        body.messages = conversation;
      }
      const set = settings();
      if (Object.keys(set).length) {
        body.settings = set;
      }
      const res = await complete(body, controller.signal, (text) => {
        output.textContent += text;
      }, (deltas) => {
        toolStream.hidden = false;
        toolStream.textContent = deltas.map((d) => `${d.name || "?"}(${d.arguments})`).join("\n");
      });
      const total = performance.now() - started;
      output.dataset.state = "done";
      if (res.paused) {
        setStatus(status, "paused", `The workflow run is ${res.paused.status}; it waits for an answer.`);
        stats.hidden = false;
        stats.replaceChildren(h("dt", null, "Run"), h("dd", null, runLink(res.paused.id)));
        return;
      }
      if (res.toolCalls && res.toolCalls.length) {
        setStatus(status, "done", `The model called ${res.toolCalls.map((t) => t.name).join(", ")}.`);
        const assistant = { role: "assistant", toolCalls: res.toolCalls };
        if (output.textContent) {
          assistant.content = output.textContent;
        }
        conversation = [...conversation, assistant];
        tools.replaceChildren(toolAnswerForm(res.toolCalls, (results) => {
          conversation = [...conversation, ...results];
          return execute();
        }));
      } else {
        setStatus(status, "done", "Done.");
      }
      await showStats(stats, res, total);
    } catch (err) {
      output.dataset.state = "failed";
      if (err.name === "AbortError") {
        setStatus(status, "stopped", "Stopped.");
      } else {
        setStatus(status, "failed", "Failed.");
        error.replaceChildren(runError(err));
      }
    } finally {
      run.disabled = false;
      stop.disabled = true;
      controller = null;
    }
  };

  stop.addEventListener("click", () => controller && controller.abort());
  submitOnCtrlEnter(form);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    error.replaceChildren();
    const problems = [];
    for (const f of fields) {
      const p = f.check();
      if (p) {
        problems.push(p);
      }
    }
    if (problems.length) {
      error.replaceChildren(errorBox(new Error(`Not run: ${problems.join(" ")}`)));
      form.querySelector("[aria-invalid='true']").focus();
      return;
    }
    values = {};
    try {
      for (const f of fields) {
        const v = await f.value(setStatus.bind(null, status, "running"));
        if (v !== undefined) {
          values[f.name] = v;
        }
      }
    } catch (err) {
      setStatus(status, "failed", "Failed.");
      error.replaceChildren(runError(err));
      return;
    }
    // A new run starts a new conversation.
    conversation = extra.value.trim() ? [{ role: "user", content: extra.value }] : [];
    await execute();
  });
  return h("div", null, form, error, transcript, status,
    h("h3", null, "Answer"), output, toolStream, tools, stats);
}

// toolAnswerForm shows the model's tool calls (function and arguments)
// with a field for the result of each; sending them adds one tool message
// per call (onSend(results)) and runs again.
function toolAnswerForm(calls, onSend) {
  const inputs = calls.map((c, i) => h("textarea", { id: `tool-result-${i}`, rows: "2", className: "code", spellcheck: "false",
    "data-testid": `tool-result-${c.name}`, "aria-label": `Result of ${c.name} (${c.id})` }));
  const send = h("button", { type: "submit", className: "primary", id: "playground-continue", "data-testid": "playground-continue" }, "Send the results and continue");
  const form = h("form", { id: "playground-tool-form", "data-testid": "playground-tool-form", className: "panel" },
    h("h3", null, "Tool calls"),
    toolCallsTable("playground-tool-table", calls),
    h("p", { className: "hint" }, "Run each function yourself and write what it returned (text or JSON); the model reads it as the tool's answer."),
    h("div", { className: "fields" }, calls.map((c, i) => [
      h("label", { for: `tool-result-${i}` }, h("span", { className: "mono" }, c.name), ` returned`), inputs[i]])),
    h("div", { className: "actions" }, send));
  submitOnCtrlEnter(form);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    send.disabled = true;
    onSend(calls.map((c, i) => ({ role: "tool", toolCallId: c.id, content: inputs[i].value })));
  });
  return form;
}

// showConversation lists the messages sent after the version's own, once
// there is more than the extra user message.
function showConversation(el, conversation) {
  if (conversation.length < 2) {
    el.replaceChildren();
    return;
  }
  el.replaceChildren(h("h3", null, "Conversation so far"),
    h("ol", { className: "messages", "data-testid": "playground-messages" }, conversation.map((m) => h("li", { className: "message", "data-role": m.role },
      h("div", { className: "message-head" }, h("span", { className: "badge role" }, m.role),
        m.toolCallId ? h("span", { className: "hint mono" }, ` answers ${m.toolCallId}`) : null),
      m.toolCalls ? h("pre", { className: "code" }, m.toolCalls.map((t) => `${t.name}(${JSON.stringify(t.arguments)})`).join("\n")) : null,
      m.content !== undefined ? h("pre", { className: "code" }, m.content) : null))));
}

function setStatus(el, state, text) {
  el.dataset.state = state;
  el.textContent = text;
}

// runLink links to a run's page.
function runLink(id) {
  return h("a", { href: `#/runs/completion/${encodeURIComponent(id)}`, id: "playground-run-link", "data-testid": "playground-run-link" }, id);
}

// runError shows a failed run with the server's details.
function runError(err) {
  return h("div", { className: "error", role: "alert", "data-testid": "error" },
    h("p", null, err.message),
    err.details && err.details.length
      ? h("ul", null, err.details.map((d) => h("li", null, h("span", { className: "mono" }, d.path), `: ${d.message}`)))
      : null);
}

// showStats reads the finished run for its usage, cost and the server's
// latency, and shows them with the time measured here.
async function showStats(stats, res, total) {
  let run = null;
  if (res.id) {
    try {
      run = await request("GET", `/v2/chat/completions/${encodeURIComponent(res.id)}`);
    } catch {
      run = null; // the answer stands without the record
    }
  }
  const usage = (run && run.usage) || res.usage || {};
  const cost = run ? run.cost : res.cost;
  const ms = (x) => `${Math.round(x)} ms`;
  stats.replaceChildren(...[
    h("dt", null, "Input tokens"), h("dd", { "data-testid": "stat-input-tokens" }, String(usage.inputTokens ?? "—")),
    h("dt", null, "Output tokens"), h("dd", { "data-testid": "stat-output-tokens" }, String(usage.outputTokens ?? "—")),
    h("dt", null, "Cost"), h("dd", { "data-testid": "stat-cost" }, money(cost)),
    h("dt", null, "Latency (server)"), h("dd", { "data-testid": "stat-latency" }, run ? ms(run.latencyMs) : "—"),
    res.firstMs !== undefined ? [h("dt", null, "First token after"), h("dd", { "data-testid": "stat-first" }, ms(res.firstMs))] : null,
    h("dt", null, "Total (here)"), h("dd", { "data-testid": "stat-total" }, ms(total)),
    h("dt", null, "Model"), h("dd", { "data-testid": "stat-model" }, (run && run.model) || res.model || "—"),
    run && run.provider ? [h("dt", null, "Provider"), h("dd", null, run.provider)] : null,
    res.id ? [h("dt", null, "Run"), h("dd", null, runLink(res.id))] : null,
  ].flat().filter(Boolean));
  stats.hidden = false;
}

// complete sends a completion and calls onText with each piece of the
// answer as it arrives, and onTools with the tool calls streamed so far
// ([{name, arguments}], arguments the JSON text received) as their pieces
// arrive. A streamed answer is read from the response body as server-sent
// events (fetch, not EventSource: the request is a POST with an
// Authorization header). It returns {id, usage?, cost?, model?, firstMs?,
// toolCalls?} or {paused: {id, status}} for a workflow run waiting for an
// answer.
async function complete(body, signal, onText, onTools) {
  const t0 = performance.now();
  const resp = await fetch("/v2/chat/completions", {
    method: "POST", signal, credentials: "omit", cache: "no-store",
    // A playground run is a preview: the canvas's inferencesPercentage
    // never samples it for review.
    headers: { Authorization: `Bearer ${apiKey() || ""}`, "Content-Type": "application/json", Accept: "text/event-stream, application/json",
      "Canvas-Preview": "true" },
    body: JSON.stringify(body),
  });
  const type = resp.headers.get("Content-Type") || "";
  if (!type.startsWith("text/event-stream")) {
    const text = await resp.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = { message: text };
    }
    if (!resp.ok) {
      throw new ApiError(resp.status, data);
    }
    if (resp.status === 202) {
      return { paused: { id: data.executionId || data.id, status: data.status } };
    }
    const choice = (data.choices || [])[0];
    const message = (choice && choice.message) || {};
    onText((message.content && message.content.text) || "");
    return { id: data.id, usage: data.usage, cost: data.cost, model: data.model, toolCalls: message.toolCalls };
  }
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  let id = "";
  let firstMs;
  let last = null;
  const streamed = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) {
      throw new Error("The stream ended before the answer was complete.");
    }
    buf += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
    let cut;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      const ev = parseEvent(buf.slice(0, cut));
      buf = buf.slice(cut + 2);
      if (ev.data === "[DONE]") {
        reader.cancel().catch(() => {});
        const choice = last && last.choices && last.choices[0];
        return { id, firstMs, usage: last && last.usage, cost: last ? last.cost : undefined, toolCalls: choice && choice.toolCalls };
      }
      if (ev.name === "error") {
        const errBody = JSON.parse(ev.data);
        throw new ApiError(502, errBody);
      }
      if (!ev.data) {
        continue;
      }
      const chunk = JSON.parse(ev.data);
      id = chunk.id || id;
      if (chunk.usage) {
        last = chunk;
      }
      const delta = chunk.choices && chunk.choices[0] && chunk.choices[0].delta;
      const text = (delta && delta.content && delta.content.text) || "";
      if ((text || (delta && delta.toolCall)) && firstMs === undefined) {
        firstMs = performance.now() - t0;
      }
      if (text) {
        onText(text);
      }
      if (delta && delta.toolCall) {
        const d = delta.toolCall;
        const cur = streamed[d.index] || (streamed[d.index] = { name: "", arguments: "" });
        cur.name = d.name || cur.name;
        cur.arguments += d.arguments || "";
        onTools(streamed.filter(Boolean));
      }
    }
  }
}

// parseEvent reads one server-sent event: its name and its data lines
// joined by "\n".
function parseEvent(block) {
  let name = "";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) {
      continue;
    }
    const i = line.indexOf(":");
    const field = i < 0 ? line : line.slice(0, i);
    const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
    if (field === "event") {
      name = value;
    } else if (field === "data") {
      data.push(value);
    }
  }
  return { name, data: data.join("\n") };
}
