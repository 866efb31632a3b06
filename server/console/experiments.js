// experiments.js is a canvas's Experiments tab: its experiments and the
// form that starts one (versions or environments, test cases by tag,
// evaluators given here or saved for the canvas), and an experiment's page:
// its progress while it runs, the totals per version beside the live
// review queue's counts, a score histogram per version, and the
// side-by-side table of a baseline and a candidate, filtered, with links
// to each run and annotation in place.

import { request, query, loadCanvas, listAll } from "./api.js";
import { h, table, when, badge, errorBox } from "./dom.js";
import { money, show, plural, versionLabel } from "./format.js";
import { loadChoices, modelPicker } from "./picker.js";
import { actor } from "./actors.js";

// evaluatorTypes are the types an experiment's evaluator may have.
export const evaluatorTypes = ["exact", "contains", "regex", "json-schema", "json-equal", "similarity", "llm-judge", "webhook"];

// evaluatorHelp says what each type does, under its type.
const evaluatorHelp = {
  exact: "The output equals the test case's expected output.",
  contains: "The output contains the expected output.",
  regex: "The output matches a pattern (RE2 syntax, unanchored unless the pattern anchors itself).",
  "json-schema": "The output is JSON valid against a schema.",
  "json-equal": "The output is the same JSON value as the expected output (key order and white space do not count).",
  similarity: "The output is alike the expected output, at least at the threshold (0.8 when empty).",
  "llm-judge": "A model scores the output against a rubric (structured output {score, reason}); it passes at the pass threshold (0.5 when empty).",
  webhook: "Your endpoint scores the output: a signed POST answered {score, passed, reason}.",
};

// refreshMs is how often an experiment that has not ended is read again
// while its page is shown.
const refreshMs = 1000;

// terminal reports whether an experiment's status is final.
function terminal(status) {
  return status === "completed" || status === "failed" || status === "cancelled";
}

// percent formats a rate 0..1, or a dash.
function percent(r) {
  return typeof r === "number" ? `${Math.round(r * 100)} %` : "—";
}

// score formats a score 0..1 with two decimals, or a dash.
function score(s) {
  return typeof s === "number" ? s.toFixed(2) : "—";
}

// experimentsView is the Experiments tab of canvasId: the experiments,
// newest first, and the form that starts one.
export async function experimentsView(canvasId) {
  const [[c, versions, envs], tags, saved, page] = await Promise.all([
    loadCanvas(canvasId),
    request("GET", `/test-case-tags${query({ promptId: canvasId })}`),
    listAll("/evaluators", { promptId: canvasId }),
    request("GET", `/experiments${query({ promptId: canvasId, limit: 20 })}`),
  ]);
  const titles = new Map(versions.map((v) => [v.id, versionLabel(v)]));
  const list = page.data || [];
  return h("section", { "aria-labelledby": "experiments-title", "data-testid": "experiments" },
    h("p", null, h("a", { href: `#/canvases/${c.id}` }, `← ${c.title || c.id}`)),
    h("h2", { id: "experiments-title" }, `Experiments: ${c.title || c.id}`),
    h("p", { className: "hint" }, "An experiment runs the canvas's test cases against versions and scores every output; it runs in the background."),
    table("experiments-table", [
      { label: "Started", cell: (x) => h("a", { href: `#/experiments/${x.id}`, "data-testid": `experiment-link-${x.id}` }, when(x.createdAt)) },
      { label: "Status", cell: (x) => badge(x.status) },
      { label: "Progress", cell: (x) => `${x.progress.done} of ${x.progress.total}` },
      { label: "Versions", cell: (x) => (x.versions || []).map((v) => titles.get(v.versionId) || v.versionId).join(", ") || (x.request.environments || []).join(", ") },
      { label: "Started by", cell: (x) => actor(x.createdBy) },
    ], list, "No experiments yet."),
    page.meta && page.meta.totalCount > list.length ? h("p", { className: "hint" }, `The ${list.length} newest of ${page.meta.totalCount}.`) : null,
    await startForm(c, versions, envs, tags || [], saved));
}

// startForm is the form that starts an experiment.
async function startForm(c, versions, envs, tags, saved) {
  const choices = await loadChoices(c);
  const general = h("div", { id: "exp-start-error", "data-testid": "exp-start-error" });

  // Targets: versions, or environments resolved when it starts.
  const byEnv = h("input", { type: "radio", name: "exp-target", id: "exp-target-environments", value: "environments", "data-testid": "exp-target-environments" });
  const byVersion = h("input", { type: "radio", name: "exp-target", id: "exp-target-versions", value: "versions", checked: true, "data-testid": "exp-target-versions" });
  const versionChecks = [...versions].reverse().map((v) => h("label", { className: "check" },
    h("input", { type: "checkbox", value: v.id, id: `exp-version-${v.id}`, "data-testid": `exp-version-${v.id}` }), ` ${versionLabel(v)}`));
  const served = envs.filter((e) => e.activeVersionId);
  const envChecks = served.map((e) => h("label", { className: "check" },
    h("input", { type: "checkbox", value: e.name, id: `exp-env-${e.name}`, "data-testid": `exp-env-${e.name}` }), ` ${e.name}`));
  const versionBox = h("div", { className: "checks", id: "exp-versions" }, versionChecks.length ? versionChecks : h("p", { className: "hint" }, "No versions yet."));
  const envBox = h("div", { className: "checks", id: "exp-environments", hidden: true }, envChecks.length ? envChecks : h("p", { className: "hint" }, "No environment serves a version yet."));
  const targetErr = h("p", { className: "error", id: "exp-targets-error", "data-testid": "exp-targets-error" });
  const showTarget = () => {
    versionBox.hidden = !byVersion.checked;
    envBox.hidden = byVersion.checked;
  };
  byEnv.addEventListener("change", showTarget);
  byVersion.addEventListener("change", showTarget);

  // Test cases: all of the canvas, or those of some tags.
  const tagChecks = tags.map((t) => h("label", { className: "check" },
    h("input", { type: "checkbox", value: t.id, id: `exp-tag-${t.id}`, "data-testid": `exp-tag-${t.name}` }), ` ${t.name}`));
  const casesErr = h("p", { className: "error", id: "exp-cases-error", "data-testid": "exp-cases-error" });
  const repetitions = h("input", { type: "number", id: "exp-repetitions", min: "1", max: "10", step: "1", value: "1", "data-testid": "exp-repetitions" });
  const repetitionsErr = h("p", { className: "error", id: "exp-repetitions-error" });

  // Evaluators: saved ones by id, and those written here.
  const savedChecks = saved.map((e) => h("label", { className: "check" },
    h("input", { type: "checkbox", value: e.id, id: `exp-saved-${e.id}`, "data-testid": `exp-saved-${e.name}` }), ` ${e.name} (${e.type})`));
  const editors = [];
  const editorList = h("ol", { className: "editor-messages", id: "exp-evaluators", "data-testid": "exp-evaluators" });
  let next = 0;
  const add = (type) => {
    const ed = evaluatorEditor(next++, type, choices, (gone) => {
      editors.splice(editors.indexOf(gone), 1);
      gone.node.remove();
    });
    editors.push(ed);
    editorList.append(ed.node);
    return ed;
  };
  add("exact");
  const addButton = h("button", { type: "button", id: "exp-add-evaluator", "data-testid": "exp-add-evaluator", onclick: () => add("contains").focus() }, "Add evaluator");
  const evalErr = h("p", { className: "error", id: "exp-evaluators-error", "data-testid": "exp-evaluators-error" });

  const form = h("form", { id: "exp-form", "data-testid": "exp-form", novalidate: true },
    h("h3", { id: "exp-form-title" }, "New experiment"),
    h("fieldset", null, h("legend", null, "Run against"),
      h("div", { className: "checks" },
        h("label", { className: "check" }, byVersion, " versions"),
        h("label", { className: "check" }, byEnv, " environments (the version each serves when the experiment starts)")),
      versionBox, envBox, targetErr),
    h("fieldset", null, h("legend", null, "Test cases"),
      tagChecks.length
        ? [h("p", { className: "hint" }, "Every test case of the canvas, or only those with one of the tags checked."), h("div", { className: "checks", id: "exp-tags" }, tagChecks)]
        : h("p", { className: "hint" }, "Every test case of the canvas (it has no tags)."),
      casesErr,
      h("div", { className: "actions" }, h("label", { for: "exp-repetitions" }, "Repetitions"), repetitions), repetitionsErr),
    h("fieldset", null, h("legend", null, "Evaluators"),
      savedChecks.length ? [h("p", { className: "hint" }, "Saved for this canvas:"), h("div", { className: "checks", id: "exp-saved" }, savedChecks)] : null,
      editorList,
      h("div", { className: "actions" }, addButton),
      evalErr),
    general,
    h("div", { className: "actions" },
      h("button", { type: "submit", className: "primary", id: "exp-start", "data-testid": "exp-start" }, "Start experiment")));

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    general.replaceChildren();
    for (const el of [targetErr, casesErr, repetitionsErr, evalErr]) {
      el.textContent = "";
    }
    for (const el of form.querySelectorAll("[aria-invalid='true']")) {
      el.setAttribute("aria-invalid", "false");
    }
    const body = { promptId: c.id, evaluators: [] };
    const checked = (boxes) => boxes.map((l) => l.querySelector("input")).filter((i) => i.checked).map((i) => i.value);
    const targets = byVersion.checked ? checked(versionChecks) : checked(envChecks);
    if (targets.length === 0) {
      targetErr.textContent = byVersion.checked ? "Check at least one version." : "Check at least one environment.";
    } else if (byVersion.checked) {
      body.versionIds = targets;
    } else {
      body.environments = targets;
    }
    const tagIds = checked(tagChecks);
    if (tagIds.length) {
      body.tagIds = tagIds;
    }
    const reps = Number(repetitions.value);
    if (!Number.isInteger(reps) || reps < 1 || reps > 10) {
      repetitionsErr.textContent = "Repetitions is a whole number from 1 to 10.";
      repetitions.setAttribute("aria-invalid", "true");
    } else if (reps > 1) {
      body.repetitions = reps;
    }
    // pointers maps an evaluator's index in the body to what shows its
    // problems: an editor, or the saved evaluator's check box.
    const pointers = [];
    let bad = false;
    for (const ed of editors) {
      const spec = ed.read();
      if (spec === null) {
        bad = true;
        continue;
      }
      pointers.push(ed);
      body.evaluators.push(spec);
    }
    for (const id of checked(savedChecks)) {
      pointers.push(null);
      body.evaluators.push({ id });
    }
    if (body.evaluators.length === 0 && !bad) {
      evalErr.textContent = "Add an evaluator, or check a saved one.";
    }
    if (bad || !targets.length || repetitionsErr.textContent || evalErr.textContent) {
      focusFirstProblem(form);
      return;
    }
    let x;
    try {
      x = await request("POST", "/experiments", body);
    } catch (err) {
      const rest = [];
      for (const d of err.details || []) {
        const path = (d.path || "").replace(/^\/json\/?/, "");
        const m = path.match(/^evaluators\/(\d+)(?:\/(.*))?$/);
        if (m && pointers[Number(m[1])]) {
          pointers[Number(m[1])].problem(m[2] || "", d.message);
        } else if (/^(versionIds|environments)/.test(path)) {
          targetErr.textContent = [targetErr.textContent, d.message].filter(Boolean).join(" ");
        } else if (/^(tagIds|testCaseIds)/.test(path)) {
          casesErr.textContent = [casesErr.textContent, d.message].filter(Boolean).join(" ");
        } else if (/^repetitions/.test(path)) {
          repetitionsErr.textContent = d.message;
          repetitions.setAttribute("aria-invalid", "true");
        } else {
          rest.push(d);
        }
      }
      general.replaceChildren(h("div", { className: "error", role: "alert", "data-testid": "error" },
        h("p", null, err.message),
        rest.length ? h("ul", null, rest.map((d) => h("li", null, h("span", { className: "mono" }, d.path), `: ${d.message}`))) : null));
      focusFirstProblem(form);
      return;
    }
    location.hash = `#/experiments/${x.id}`;
  });
  return form;
}

// focusFirstProblem moves the focus to the first field marked invalid.
function focusFirstProblem(form) {
  const bad = form.querySelector("[aria-invalid='true']");
  if (bad) {
    bad.focus();
  }
}

// evaluatorEditor is the editor of one evaluator written in the form,
// numbered n: its name, type and the fields of its type. read() returns
// the evaluator to send, or null (with the problems shown at their
// fields) when a field cannot be read; problem(field, message) shows a
// problem the server found.
function evaluatorEditor(n, type, choices, remove) {
  const id = (f) => `exp-eval-${n}-${f}`;
  const fields = new Map();
  const field = (name, label, input, types, hint) => {
    input.id = id(name);
    input.setAttribute("data-testid", id(name));
    const err = h("p", { className: "error", id: `${id(name)}-error`, "data-testid": `${id(name)}-error` });
    input.setAttribute("aria-describedby", err.id);
    const row = [h("label", { for: input.id }, label), h("div", null, input, hint ? h("p", { className: "hint" }, hint) : null, err)];
    fields.set(name, { input, err, types, row });
    return row;
  };
  const typeSel = h("select", null, evaluatorTypes.map((t) => h("option", { value: t, selected: t === type }, t)));
  const name = h("input", { type: "text", maxlength: "100", value: type, spellcheck: "false" });
  // The name follows the type until it is typed in.
  let named = false;
  name.addEventListener("input", () => { named = true; });
  const pattern = h("input", { type: "text", maxlength: "10000", spellcheck: "false", className: "mono" });
  const schema = h("textarea", { rows: "4", className: "code", spellcheck: "false", placeholder: '{"type": "object", "required": ["answer"]}' });
  const threshold = h("input", { type: "number", min: "0", max: "1", step: "0.05", placeholder: "0.8" });
  const rubric = h("textarea", { rows: "3", maxlength: "20000", placeholder: "Score 1 when the answer is polite and correct, 0 when it is rude or wrong." });
  const picker = modelPicker(id("judge"), choices, { model: "" });
  const passThreshold = h("input", { type: "number", min: "0", max: "1", step: "0.05", placeholder: "0.5" });
  const url = h("input", { type: "url", maxlength: "2048", placeholder: "https://example.com/evaluate" });
  const secret = h("input", { type: "text", spellcheck: "false", autocomplete: "off", className: "mono", placeholder: "whsec_…" });
  const generate = h("button", { type: "button", id: id("secret-generate"), "data-testid": id("secret-generate"), onclick: () => { secret.value = newSecret(); } }, "Generate");
  const timeout = h("input", { type: "number", min: "1", max: "60000", step: "1", placeholder: "10000" });
  const general = h("p", { className: "error", id: id("error"), "data-testid": id("error") });
  const help = h("p", { className: "hint full", "data-testid": id("help") });

  const grid = h("div", { className: "fields" },
    field("type", "Type", typeSel, null),
    field("name", "Name", name, null, "Names its scores in the results and totals."),
    field("pattern", "Pattern", pattern, ["regex"]),
    field("schema", "Schema (JSON)", schema, ["json-schema"]),
    field("threshold", "Threshold (0–1)", threshold, ["similarity"]),
    field("rubric", "Rubric", rubric, ["llm-judge"]),
    picker.nodes,
    field("passThreshold", "Pass threshold (0–1)", passThreshold, ["llm-judge"]),
    field("url", "URL", url, ["webhook"]),
    field("secret", "Signing secret", h("span", null), ["webhook"]),
    field("timeoutMs", "Timeout (ms)", timeout, ["webhook"]),
    help);
  // The secret's row holds the input and the Generate button.
  const secretRow = fields.get("secret");
  secretRow.row[1].firstChild.replaceWith(h("span", { className: "actions" }, secret, generate));
  secret.id = id("secret");
  secret.setAttribute("data-testid", id("secret"));
  secret.setAttribute("aria-describedby", secretRow.err.id);
  secretRow.row[0].setAttribute("for", secret.id);
  secretRow.input = secret;
  // The judge's model and credential are the picker's, known by the
  // server's field names.
  const pickerErr = h("p", { className: "error", id: id("model-error"), "data-testid": id("model-error") });
  picker.nodes[picker.nodes.length - 1].append(pickerErr);
  fields.set("model", { input: picker.model, err: pickerErr, types: ["llm-judge"], row: picker.nodes });
  fields.set("credentialId", { input: picker.credential, err: pickerErr, types: ["llm-judge"], row: [] });

  const showType = () => {
    const t = typeSel.value;
    for (const f of fields.values()) {
      for (const node of f.row) {
        node.hidden = Boolean(f.types) && !f.types.includes(t);
      }
    }
    help.textContent = evaluatorHelp[t];
    if (!named) {
      name.value = t;
    }
  };
  typeSel.addEventListener("change", showType);
  showType();

  const node = h("li", { className: "editor-message", "data-testid": `exp-evaluator-${n}` },
    h("div", { className: "message-head" }, h("strong", null, `Evaluator ${n + 1}`),
      h("button", { type: "button", className: "danger", id: id("remove"), "data-testid": id("remove"), onclick: () => remove(self) }, "Remove")),
    grid, general);

  const mark = (f, message) => {
    const entry = fields.get(f);
    entry.err.textContent = [entry.err.textContent, message].filter(Boolean).join(" ");
    entry.input.setAttribute("aria-invalid", "true");
  };
  const self = {
    node,
    focus: () => typeSel.focus(),
    problem(f, message) {
      const key = f.split("/")[0];
      if (fields.has(key)) {
        mark(key, message);
      } else {
        general.textContent = [general.textContent, `${f ? `${f}: ` : ""}${message}`].filter(Boolean).join(" ");
      }
    },
    read() {
      for (const f of fields.values()) {
        f.err.textContent = "";
      }
      general.textContent = "";
      const t = typeSel.value;
      const spec = { name: name.value.trim(), type: t };
      let ok = true;
      const fail = (f, message) => {
        mark(f, message);
        ok = false;
      };
      if (!spec.name) {
        fail("name", "Give the evaluator a name.");
      }
      const unit = (f, input) => {
        if (input.value === "") {
          return;
        }
        const v = Number(input.value);
        if (!(v >= 0 && v <= 1)) {
          fail(f, "A number from 0 to 1.");
          return;
        }
        spec[f] = v;
      };
      switch (t) {
        case "regex":
          spec.pattern = pattern.value;
          break;
        case "json-schema":
          try {
            spec.schema = JSON.parse(schema.value);
            if (spec.schema === null || typeof spec.schema !== "object" || Array.isArray(spec.schema)) {
              fail("schema", "The schema must be a JSON object.");
            }
          } catch (e) {
            fail("schema", `The schema is not valid JSON: ${e.message}.`);
          }
          break;
        case "similarity":
          unit("threshold", threshold);
          break;
        case "llm-judge": {
          spec.rubric = rubric.value;
          const picked = picker.read();
          if (picked.model) {
            spec.model = picked.model;
          }
          if (picked.credentialId) {
            spec.credentialId = picked.credentialId;
          }
          unit("passThreshold", passThreshold);
          break;
        }
        case "webhook":
          spec.url = url.value.trim();
          spec.secret = secret.value.trim();
          if (timeout.value !== "") {
            spec.timeoutMs = Number(timeout.value);
          }
          break;
        default:
      }
      return ok ? spec : null;
    },
  };
  return self;
}

// newSecret makes a Standard Webhooks signing secret: "whsec_" and the
// base64 of 24 random bytes.
function newSecret() {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

// experimentView shows one experiment. While it has not ended it is read
// again every refreshMs, for as long as the page is shown; once it has,
// the side-by-side table of two of its versions is shown.
export async function experimentView(id) {
  const x = await request("GET", `/experiments/${encodeURIComponent(id)}`);
  const [c, versions, stats, saved] = await Promise.all([
    request("GET", `/prompt/${encodeURIComponent(x.promptId)}`),
    request("GET", `/prompt-version${query({ promptId: x.promptId })}`),
    request("GET", `/review-queue/stats${query({ promptId: x.promptId })}`).catch(() => null),
    listAll("/evaluators", { promptId: x.promptId }).catch(() => []),
  ]);
  const savedById = new Map(saved.map((e) => [e.id, e]));
  const evaluatorName = (e) => {
    const s = e.name ? e : savedById.get(e.id);
    return s ? `${s.name} (${s.type}${e.id ? ", saved" : ""})` : "a saved evaluator since deleted";
  };
  const byId = new Map((versions || []).map((v) => [v.id, v]));
  byVersionIndex(x, byId);
  const section = h("section", { "aria-labelledby": "experiment-title", "data-testid": "experiment", "data-status": x.status });
  const reread = async () => {
    if (!section.isConnected) {
      return;
    }
    let next;
    try {
      next = await experimentView(id);
    } catch (err) {
      next = errorBox(err);
    }
    if (section.isConnected) {
      section.replaceWith(next);
    }
  };
  const out = h("div", { id: "exp-action-error", "data-testid": "exp-action-error" });
  const cancel = terminal(x.status) ? null : h("button", { type: "button", className: "danger", id: "exp-cancel", "data-testid": "exp-cancel", onclick: async () => {
    cancel.disabled = true;
    out.replaceChildren();
    try {
      await request("POST", `/experiments/${encodeURIComponent(x.id)}/cancel`);
    } catch (err) {
      out.replaceChildren(errorBox(err));
      cancel.disabled = false;
      return;
    }
    await reread();
  } }, "Cancel experiment");
  const totalsHolder = h("div", { id: "exp-totals-holder" }, totalsTable(x, byId, stats));
  section.append(
    h("p", { className: "actions" },
      h("a", { href: `#/canvases/${c.id}/experiments`, "data-testid": "exp-back" }, `← Experiments of ${c.title || c.id}`)),
    h("h2", { id: "experiment-title" }, "Experiment"),
    h("p", { className: "hint mono" }, x.id),
    h("dl", { className: "fields" },
      h("dt", null, "Status"), h("dd", { id: "exp-status", "data-testid": "exp-status", "data-status": x.status }, badge(x.status)),
      h("dt", null, "Progress"), h("dd", null,
        h("progress", { id: "exp-progress", max: String(Math.max(x.progress.total, 1)), value: String(x.progress.done), "aria-label": "Progress" }),
        " ", h("span", { "data-testid": "exp-progress-text" }, `${x.progress.done} of ${plural(x.progress.total, "result", "results")}`)),
      h("dt", null, "Test cases"), h("dd", null, plural((x.testCaseIds || []).length, "test case", "test cases"),
        x.request.repetitions > 1 ? `, ${x.request.repetitions} repetitions` : ""),
      h("dt", null, "Evaluators"), h("dd", { "data-testid": "exp-evaluators-used" }, x.request.evaluators.map(evaluatorName).join(", ")),
      h("dt", null, "Started"), h("dd", null, `${when(x.startedAt)} by `, actor(x.createdBy)),
      h("dt", null, "Ended"), h("dd", null, when(x.completedAt)),
      x.error ? [h("dt", null, "Error"), h("dd", { className: "error", "data-testid": "exp-error" }, `${x.error.code}: ${x.error.message}`)] : null),
    cancel ? h("div", { className: "actions" }, cancel, h("button", { type: "button", id: "exp-refresh", onclick: () => reread() }, "Refresh")) : "",
    out,
    h("h3", null, "Totals per version"),
    totalsHolder);
  if (!terminal(x.status)) {
    section.append(h("p", { className: "hint", "data-testid": "exp-wait" }, "The side-by-side table is shown once the experiment has ended."));
    setTimeout(reread, refreshMs);
    return section;
  }
  if ((x.versions || []).length) {
    section.append(await resultsPanel(x, byId, async () => {
      const [nx, ns] = await Promise.all([
        request("GET", `/experiments/${encodeURIComponent(x.id)}`),
        request("GET", `/review-queue/stats${query({ promptId: x.promptId })}`).catch(() => null),
      ]);
      byVersionIndex(nx, byId);
      totalsHolder.replaceChildren(totalsTable(nx, byId, ns));
    }));
  }
  return section;
}

// byVersionIndex puts the experiment's versions in the canvas's order,
// the oldest first, as the totals and histograms show them.
function byVersionIndex(x, byId) {
  const index = (v) => (byId.get(v.versionId) || {}).versionIndex || 0;
  x.versions = [...(x.versions || [])].sort((a, b) => index(a) - index(b));
}

// totalsTable shows each version's totals, with one column per
// evaluator's mean score, and beside them the counts of the canvas's live
// review queue for that version.
function totalsTable(x, byId, stats) {
  const names = [...new Set((x.versions || []).flatMap((v) => Object.keys((v.totals && v.totals.scores) || {})))].sort();
  const review = new Map(((stats && stats.versions) || []).map((s) => [s.versionId, s]));
  const t = (v) => v.totals || {};
  const cell = (testid, value) => h("span", { "data-testid": testid }, value);
  return table("exp-totals", [
    { label: "Version", cell: (v) => [h("a", { href: `#/versions/${v.versionId}` }, versionLabel(byId.get(v.versionId)) || v.versionId),
      v.environment ? h("div", { className: "hint" }, `from ${v.environment}`) : null] },
    { label: "Cases", cell: (v) => String(t(v).cases ?? 0) },
    { label: "Passed", cell: (v) => cell(`exp-passed-${v.versionId}`, String(t(v).passed ?? 0)) },
    { label: "Failed", cell: (v) => cell(`exp-failed-${v.versionId}`, String(t(v).failed ?? 0)) },
    { label: "Errors", cell: (v) => cell(`exp-errored-${v.versionId}`, String(t(v).errored ?? 0)) },
    { label: "Pass rate", cell: (v) => cell(`exp-passrate-${v.versionId}`, percent(t(v).passRate)) },
    ...names.map((n) => ({ label: `Mean ${n}`, cell: (v) => cell(`exp-score-${v.versionId}-${n}`, score(((t(v).scores) || {})[n])) })),
    { label: "Cost", cell: (v) => [cell(`exp-cost-${v.versionId}`, money(t(v).cost)),
      t(v).judgeCost ? h("div", { className: "hint" }, `judges ${money(t(v).judgeCost)}`) : null] },
    { label: "Tokens", cell: (v) => cell(`exp-tokens-${v.versionId}`, String(t(v).tokens ?? 0)) },
    { label: "Latency p50 / p95", cell: (v) => cell(`exp-latency-${v.versionId}`, `${t(v).latencyP50Ms ?? 0} / ${t(v).latencyP95Ms ?? 0} ms`) },
    { label: "Live review", cell: (v) => cell(`exp-review-${v.versionId}`, reviewCounts(review.get(v.versionId))) },
  ], x.versions || [], "The versions are known once the experiment starts.");
}

// reviewCounts says what the live review queue holds for a version.
function reviewCounts(s) {
  if (!s) {
    return "—";
  }
  return `${s.pending} pending, ${s.good} good, ${s.bad} bad${s.meanScore === null ? "" : `, mean ${score(s.meanScore)}`}`;
}

// resultsPanel holds the histograms and the side-by-side table; changed()
// is called after an annotation, to show the totals again.
async function resultsPanel(x, byId, changed) {
  const vs = x.versions;
  const [cases, results] = await Promise.all([
    request("GET", `/test-case${query({ promptId: x.promptId })}`).catch(() => []),
    Promise.all(vs.map((v) => listAll(`/experiments/${encodeURIComponent(x.id)}/results`, { versionId: v.versionId }))),
  ]);
  const testCases = new Map((cases || []).map((tc) => [tc.id, tc]));
  const evaluatorNames = [...new Set(results.flat().flatMap((r) => r.scores.map((s) => s.evaluator)))];
  if (results.flat().some((r) => r.annotation && typeof r.annotation.score === "number")) {
    evaluatorNames.push("human");
  }
  const resultsById = new Map(results.flat().map((r) => [r.id, r]));

  // Histograms.
  const histEvaluator = h("select", { id: "exp-hist-evaluator", "data-testid": "exp-hist-evaluator" },
    evaluatorNames.map((n) => h("option", { value: n }, n)));
  const hists = h("div", { className: "histograms", id: "exp-histograms", "data-testid": "exp-histograms" });
  const drawHists = () => {
    const byVersion = new Map(vs.map((v) => [v.versionId, []]));
    for (const r of resultsById.values()) {
      byVersion.get(r.versionId).push(r);
    }
    hists.replaceChildren(...vs.map((v) => histogram(v.versionId, versionLabel(byId.get(v.versionId)) || v.versionId,
      byVersion.get(v.versionId).map((r) => scoreOf(r, histEvaluator.value)))));
  };
  histEvaluator.addEventListener("change", drawHists);
  drawHists();

  // The side-by-side table of a baseline and a candidate.
  const options = (selected) => vs.map((v) => h("option", { value: v.versionId, selected: v.versionId === selected },
    versionLabel(byId.get(v.versionId)) || v.versionId));
  // The baseline starts on the oldest version, the candidate on the newest.
  const baseline = h("select", { id: "exp-baseline", "data-testid": "exp-baseline" }, options(vs[0].versionId));
  const candidate = h("select", { id: "exp-candidate", "data-testid": "exp-candidate" }, options(vs[vs.length - 1].versionId));
  const onlyRegressions = h("input", { type: "checkbox", id: "exp-filter-regressions", "data-testid": "exp-filter-regressions" });
  const onlyFailed = h("input", { type: "checkbox", id: "exp-filter-failed", "data-testid": "exp-filter-failed" });
  const counts = h("p", { id: "exp-counts", "data-testid": "exp-counts", role: "status" });
  const holder = h("div", { id: "exp-compare-holder" });
  let cmp = null;
  const rows = new Map();

  // row builds the row of one pair.
  const row = (p) => h("tr", { "data-testid": `exp-pair-${p.testCaseId}-${p.repetition}`, "data-change": p.change || "" },
    h("td", null, testCaseCell(testCases.get(p.testCaseId), p)),
    h("td", null, h("pre", { className: "body", "data-testid": "exp-expected" }, show((testCases.get(p.testCaseId) || {}).expectedOutput))),
    h("td", null, resultCell(x, p.baseline, onAnnotated)),
    h("td", null, resultCell(x, p.candidate, onAnnotated)),
    h("td", null, p.change ? badge(p.change, p.change === "regression" ? "failed" : p.change === "improvement" ? "passed" : "") : "—"));

  const keep = (p) => (!onlyRegressions.checked || p.change === "regression") &&
    (!onlyFailed.checked || !p.candidate || p.candidate.passed !== true);
  const render = () => {
    counts.replaceChildren(
      h("span", { "data-testid": "exp-regressions" }, plural(cmp.regressions, "regression", "regressions")), ", ",
      h("span", { "data-testid": "exp-improvements" }, plural(cmp.improvements, "improvement", "improvements")), ", ",
      h("span", { "data-testid": "exp-unchanged" }, `${cmp.unchanged} unchanged`), ".");
    const shown = cmp.cases.filter(keep);
    rows.clear();
    if (shown.length === 0) {
      holder.replaceChildren(h("p", { className: "hint", "data-testid": "exp-compare-empty" }, cmp.cases.length ? "No pair matches the filters." : "No results to compare."));
      return;
    }
    const body = h("tbody", null, shown.map((p) => {
      const tr = row(p);
      rows.set(`${p.testCaseId}/${p.repetition}`, tr);
      return tr;
    }));
    holder.replaceChildren(h("table", { className: "compare", "data-testid": "exp-compare" },
      h("thead", null, h("tr", null, ["Test case", "Expected output", `Baseline: ${baseline.selectedOptions[0].textContent}`,
        `Candidate: ${candidate.selectedOptions[0].textContent}`, "Change"].map((l) => h("th", { scope: "col" }, l)))),
      body));
  };
  // load shows the pairs of the chosen versions; of loads that overlap
  // (the choice changed while one was on its way), only the latest shows.
  let loads = 0;
  const load = async () => {
    const mine = ++loads;
    holder.replaceChildren(h("p", { className: "hint" }, "Loading…"));
    let got;
    try {
      got = await request("GET", `/experiments/${encodeURIComponent(x.id)}/compare${query({ baseline: baseline.value, candidate: candidate.value })}`);
    } catch (err) {
      if (mine === loads) {
        holder.replaceChildren(errorBox(err));
      }
      return;
    }
    if (mine !== loads) {
      return;
    }
    cmp = got;
    render();
  };
  // onAnnotated takes an annotated result in: the counts, its pair's row,
  // the histograms and the totals follow, the other rows stay as they are.
  async function onAnnotated(saved) {
    resultsById.set(saved.id, saved);
    if (saved.annotation && typeof saved.annotation.score === "number" && !evaluatorNames.includes("human")) {
      evaluatorNames.push("human");
      histEvaluator.append(h("option", { value: "human" }, "human"));
    }
    drawHists();
    const fresh = await request("GET", `/experiments/${encodeURIComponent(x.id)}/compare${query({ baseline: baseline.value, candidate: candidate.value })}`);
    cmp = fresh;
    const p = fresh.cases.find((q) => q.testCaseId === saved.testCaseId && q.repetition === saved.repetition);
    const old = rows.get(`${saved.testCaseId}/${saved.repetition}`);
    if (p && old) {
      const tr = row(p);
      old.replaceWith(tr);
      rows.set(`${p.testCaseId}/${p.repetition}`, tr);
    }
    counts.replaceChildren(
      h("span", { "data-testid": "exp-regressions" }, plural(cmp.regressions, "regression", "regressions")), ", ",
      h("span", { "data-testid": "exp-improvements" }, plural(cmp.improvements, "improvement", "improvements")), ", ",
      h("span", { "data-testid": "exp-unchanged" }, `${cmp.unchanged} unchanged`), ".");
    await changed();
  }
  baseline.addEventListener("change", load);
  candidate.addEventListener("change", load);
  onlyRegressions.addEventListener("change", () => cmp && render());
  onlyFailed.addEventListener("change", () => cmp && render());
  await load();

  return h("div", null,
    h("h3", null, "Scores per version"),
    evaluatorNames.length
      ? h("div", { className: "actions" }, h("label", { for: "exp-hist-evaluator" }, "Scores of"), histEvaluator)
      : h("p", { className: "hint" }, "No scores."),
    hists,
    h("h3", { id: "exp-compare-title" }, "Side by side"),
    h("div", { className: "actions" },
      h("label", { for: "exp-baseline" }, "Baseline"), baseline,
      h("label", { for: "exp-candidate" }, "Candidate"), candidate),
    h("div", { className: "actions" },
      h("label", { className: "check" }, onlyRegressions, " regressions only"),
      h("label", { className: "check" }, onlyFailed, " failed only (the candidate did not pass)")),
    counts,
    holder);
}

// scoreOf returns a result's score by the evaluator named, the
// annotation's for "human"; null when it has none.
function scoreOf(r, name) {
  if (name === "human") {
    return r.annotation && typeof r.annotation.score === "number" ? r.annotation.score : null;
  }
  const s = r.scores.find((x) => x.evaluator === name);
  return s && typeof s.score === "number" ? s.score : null;
}

// histogramBins is how many bars a histogram has, each a tenth of 0..1
// (the last one includes 1).
const histogramBins = 10;

// histogram draws the scores of one version as bars in SVG, with the
// count of each bar in its title and a data attribute.
function histogram(versionId, label, scores) {
  const bins = new Array(histogramBins).fill(0);
  let none = 0;
  for (const s of scores) {
    if (s === null) {
      none++;
      continue;
    }
    bins[Math.min(histogramBins - 1, Math.floor(s * histogramBins))]++;
  }
  const max = Math.max(1, ...bins);
  const w = 22;
  const hgt = 70;
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", "histogram");
  svg.setAttribute("width", String(w * histogramBins + 2));
  svg.setAttribute("height", String(hgt + 18));
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `Scores of ${label}: ${bins.map((n, i) => `${(i / histogramBins).toFixed(1)}–${((i + 1) / histogramBins).toFixed(1)}: ${n}`).join(", ")}`);
  bins.forEach((n, i) => {
    const barH = Math.round((n / max) * hgt);
    const rect = document.createElementNS(ns, "rect");
    rect.setAttribute("x", String(1 + i * w + 1));
    rect.setAttribute("y", String(hgt - barH));
    rect.setAttribute("width", String(w - 2));
    rect.setAttribute("height", String(Math.max(barH, n ? 1 : 0)));
    rect.setAttribute("class", "bar");
    rect.setAttribute("data-bin", String(i));
    rect.setAttribute("data-count", String(n));
    const title = document.createElementNS(ns, "title");
    title.textContent = `${(i / histogramBins).toFixed(1)} to ${((i + 1) / histogramBins).toFixed(1)}: ${plural(n, "result", "results")}`;
    rect.append(title);
    svg.append(rect);
  });
  const axis = document.createElementNS(ns, "line");
  axis.setAttribute("x1", "0");
  axis.setAttribute("x2", String(w * histogramBins + 2));
  axis.setAttribute("y1", String(hgt + 0.5));
  axis.setAttribute("y2", String(hgt + 0.5));
  axis.setAttribute("class", "axis");
  svg.append(axis);
  for (const [x, t, anchor] of [[1, "0", "start"], [w * histogramBins / 2 + 1, "0.5", "middle"], [w * histogramBins + 1, "1", "end"]]) {
    const txt = document.createElementNS(ns, "text");
    txt.setAttribute("x", String(x));
    txt.setAttribute("y", String(hgt + 14));
    txt.setAttribute("text-anchor", anchor);
    txt.setAttribute("class", "tick");
    txt.textContent = t;
    svg.append(txt);
  }
  return h("figure", { className: "histogram", "data-testid": `exp-histogram-${versionId}` },
    svg,
    h("figcaption", null, label, none ? h("span", { className: "hint" }, ` (${none} without a score)`) : null));
}

// testCaseCell names a pair's test case, with its variables.
function testCaseCell(tc, p) {
  if (!tc) {
    return h("span", { className: "mono" }, p.testCaseId);
  }
  const vars = Object.entries(tc.variables || {});
  return [h("a", { href: `#/test-cases/${tc.promptId}` }, tc.title || tc.id),
    p.repetition > 1 ? h("span", { className: "hint" }, ` (repetition ${p.repetition})`) : null,
    vars.length ? h("div", { className: "hint mono" }, vars.map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(" ")) : null];
}

// verdictBadge shows a result's verdict: passed, failed or error.
function verdictBadge(r) {
  if (r.passed === true) {
    return badge("passed", "passed");
  }
  if (r.passed === false) {
    return badge("failed", "failed");
  }
  return badge(r.error ? "error" : "no verdict", r.error ? "failed" : "");
}

// resultCell shows one side of a pair: its verdict, output, each
// evaluator's score and reason, the annotation form, and a link to its
// run; onAnnotated(result) is called with the annotated result.
function resultCell(x, r, onAnnotated) {
  if (!r) {
    return h("p", { className: "hint" }, "No result.");
  }
  const rid = r.id;
  const a = r.annotation || {};
  const passed = h("select", { id: `exp-ann-passed-${rid}`, "data-testid": `exp-ann-passed-${rid}` },
    h("option", { value: "", selected: r.annotation === null }, "—"),
    h("option", { value: "true", selected: a.passed === true }, "Pass"),
    h("option", { value: "false", selected: a.passed === false }, "Fail"));
  const sc = h("input", { id: `exp-ann-score-${rid}`, "data-testid": `exp-ann-score-${rid}`, type: "number", min: "0", max: "1", step: "0.05",
    value: typeof a.score === "number" ? String(a.score) : "" });
  const comment = h("input", { id: `exp-ann-comment-${rid}`, "data-testid": `exp-ann-comment-${rid}`, type: "text", maxlength: "10000", value: a.comment || "" });
  const result = h("p", { className: "hint", "data-testid": `exp-ann-result-${rid}`, role: "status" });
  const form = h("form", { className: "annotation", "data-testid": `exp-ann-form-${rid}` },
    h("label", { for: `exp-ann-passed-${rid}` }, "Verdict"), passed,
    h("label", { for: `exp-ann-score-${rid}` }, "Score"), sc,
    h("label", { for: `exp-ann-comment-${rid}` }, "Comment"), comment,
    h("button", { type: "submit", "data-testid": `exp-ann-save-${rid}` }, "Save"));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (passed.value === "") {
      result.dataset.state = "failed";
      result.textContent = "Choose pass or fail.";
      passed.focus();
      return;
    }
    const body = { passed: passed.value === "true" };
    if (sc.value !== "") {
      body.score = Number(sc.value);
    }
    if (comment.value.trim()) {
      body.comment = comment.value.trim();
    }
    let saved;
    try {
      saved = await request("POST", `/experiments/${encodeURIComponent(x.id)}/results/${encodeURIComponent(rid)}/annotation`, body);
    } catch (err) {
      result.dataset.state = "failed";
      result.replaceChildren(errorBox(err));
      return;
    }
    try {
      await onAnnotated(saved);
    } catch (err) {
      result.dataset.state = "failed";
      result.replaceChildren(errorBox(err));
    }
  });
  return h("div", { className: "result-cell", "data-testid": `exp-result-${rid}`, "data-passed": r.passed === null ? "" : String(r.passed) },
    h("div", { className: "message-head" }, verdictBadge(r),
      r.annotation ? h("span", { className: "hint", "data-testid": `exp-annotated-${rid}` }, `annotated ${r.annotation.passed ? "pass" : "fail"}`) : null,
      r.runId ? h("a", { href: `#/runs/completion/${encodeURIComponent(r.runId)}`, "data-testid": `exp-run-${rid}` }, "run") : null),
    h("pre", { className: "body", "data-testid": `exp-output-${rid}` }, show(r.output)),
    r.error ? h("p", { className: "error" }, `${r.error.code}: ${r.error.message}`) : null,
    r.scores.length ? h("ul", { className: "scores" }, r.scores.map((s) => h("li", null,
      h("span", { className: "mono" }, s.evaluator), ` ${score(s.score)}`,
      s.passed === true ? " pass" : s.passed === false ? " fail" : "",
      s.error ? h("span", { className: "error" }, ` ${s.error.message}`) : s.reason ? h("span", { className: "hint" }, ` ${s.reason}`) : null))) : null,
    h("p", { className: "hint" }, `${r.latencyMs} ms · ${r.usage.inputTokens + r.usage.outputTokens} tokens · ${money(r.cost)}`),
    h("details", { open: r.annotation !== null }, h("summary", null, r.annotation ? "Annotation" : "Annotate"), form, result));
}
