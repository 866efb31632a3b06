// testcases.js is the Test cases page: pick a canvas, list its test cases
// with their tags and latest result, create and edit a test case and its
// tags, run one or a tag's set against a version, and read the generations
// with pass or fail and the output beside the expected output.

import { request, query } from "./api.js";
import { h, when, badge, errorBox } from "./dom.js";
import { variableField } from "./variables.js";
import { text, show, plural, versionLabel } from "./format.js";

// pollMs is how often an execution is read again until every generation
// of it has ended.
const pollMs = 500;

// graders are the ways a test case's output is graded, and graderHelp
// says what each does.
const graders = ["exact", "contains", "regex", "json-schema", "json-equal", "similarity"];
const graderHelp = {
  exact: "The output equals the expected output.",
  contains: "The output contains the expected output.",
  regex: "The output matches the pattern (RE2 syntax, unanchored unless the pattern anchors itself); no expected output needed.",
  "json-schema": "The output is JSON valid against the schema; no expected output needed.",
  "json-equal": "The output is the same JSON value as the expected output (key order and white space do not count).",
  similarity: "The output is alike the expected output, at least at the threshold (0.8 when empty).",
};

// testCasesView shows the test cases of canvasId, or asks for a canvas.
export async function testCasesView(canvasId) {
  const canvases = (await request("GET", "/prompt")) || [];
  const pick = h("select", { id: "tc-canvas", "data-testid": "tc-canvas", onchange: (ev) => { location.hash = ev.target.value ? `#/test-cases/${ev.target.value}` : "#/test-cases"; } },
    h("option", { value: "" }, "Choose a canvas"),
    canvases.map((c) => h("option", { value: c.id, selected: c.id === canvasId }, c.title || c.id)));
  const head = [
    h("h2", { id: "tc-title-h" }, "Test cases"),
    h("div", { className: "actions" }, h("label", { for: "tc-canvas" }, "Canvas"), pick),
  ];
  if (!canvasId) {
    return h("section", { "aria-labelledby": "tc-title-h" }, head,
      h("p", { className: "hint", "data-testid": "tc-choose" }, canvases.length ? "Choose a canvas to see its test cases." : "No canvases yet."));
  }
  const [cases, tags, versions] = await Promise.all([
    request("GET", `/test-case${query({ promptId: canvasId, includeGenerations: true })}`),
    request("GET", `/test-case-tags${query({ promptId: canvasId })}`),
    request("GET", `/prompt-version${query({ promptId: canvasId })}`),
  ]);
  const state = { cases: cases || [], tags: tags || [], versions: versions || [] };
  const section = h("section", { "aria-labelledby": "tc-title-h", "data-testid": "test-cases" }, head);
  const reload = async () => {
    const next = await testCasesView(canvasId);
    section.replaceWith(next);
    return next;
  };
  const casesHolder = h("div", { id: "tc-cases" }, casesTable(canvasId, state, reload));
  const gensHolder = h("div", { id: "tc-generations-panel" }, generationsPanel(state));
  // refresh shows the test cases and generations as cases, read again
  // after an execution ended, has them.
  state.refresh = (cases) => {
    state.cases = cases;
    casesHolder.replaceChildren(casesTable(canvasId, state, reload));
    gensHolder.replaceChildren(generationsPanel(state));
  };
  section.append(runPanel(canvasId, state), casesHolder, editor(canvasId, state, null, reload), gensHolder);
  return section;
}

// versionSelect is a select of the canvas's versions, the newest first.
function versionSelect(id, versions) {
  return h("select", { id, "data-testid": id },
    [...versions].reverse().map((v) => h("option", { value: v.id }, `${versionLabel(v)}${v.draft ? " (draft)" : ""}`)));
}

// runPanel runs a tag's test cases, or all of them, against a version and
// shows the execution's generations as they end.
function runPanel(canvasId, state) {
  const version = versionSelect("tc-version", state.versions);
  const tag = h("select", { id: "tc-run-tag-select", "data-testid": "tc-run-tag-select" },
    h("option", { value: "" }, "every test case"),
    state.tags.map((t) => h("option", { value: t.id }, `tag: ${t.name}`)));
  const out = h("div", { id: "tc-execution", "data-testid": "tc-execution" });
  const run = h("button", { type: "button", className: "primary", id: "tc-run-set", "data-testid": "tc-run-set", onclick: async () => {
    run.disabled = true;
    out.replaceChildren(h("p", { className: "hint" }, "Starting…"));
    const body = { promptId: canvasId, promptVersionId: version.value };
    if (tag.value) {
      body.tagIds = [tag.value];
    }
    try {
      const res = await request("POST", "/test-case/run", body);
      await followExecution(res.executionId, state, out);
    } catch (err) {
      out.replaceChildren(errorBox(err));
    }
    run.disabled = false;
  } }, "Run");
  return h("div", { className: "run-actions" },
    h("h3", null, "Run against a version"),
    state.versions.length === 0
      ? h("p", { className: "hint" }, "The canvas has no versions to run against.")
      : h("div", { className: "actions" },
        h("label", { for: "tc-version" }, "Version"), version,
        h("label", { for: "tc-run-tag-select" }, "Run"), tag, run),
    out);
}

// followExecution reads an execution's generations until none is
// initializing or running, showing them each time.
async function followExecution(executionId, state, out) {
  for (;;) {
    const exec = await request("GET", `/test-case/executions/${encodeURIComponent(executionId)}`);
    const cases = await casesOf(state);
    const gens = cases.flatMap((tc) => (tc.generations || []).filter((g) => g.executionId === executionId));
    out.replaceChildren(
      h("p", { "data-testid": "tc-execution-summary", "data-done": String(exec.counts.initializing + exec.counts.running === 0) },
        `Execution ${executionId.slice(0, 8)}: ${plural(exec.total, "test case", "test cases")}, ${exec.passed} passed, ${exec.failed} failed`,
        exec.counts.initializing + exec.counts.running > 0 ? ", still running…" : "."),
      generationsTable("tc-execution-table", gens, state));
    if (exec.counts.initializing + exec.counts.running === 0) {
      state.refresh(cases);
      return;
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

// casesOf reads the canvas's test cases again, with their generations.
async function casesOf(state) {
  const canvasId = state.cases.length ? state.cases[0].promptId : null;
  if (!canvasId) {
    return [];
  }
  return (await request("GET", `/test-case${query({ promptId: canvasId, includeGenerations: true })}`)) || [];
}

// casesTable lists the test cases with their tags and latest generation.
function casesTable(canvasId, state, reload) {
  if (state.cases.length === 0) {
    return h("p", { className: "hint", "data-testid": "tc-table-empty" }, "No test cases yet: create one below.");
  }
  const out = h("div", { id: "tc-row-result", "data-testid": "tc-row-result" });
  return h("div", null,
    h("h3", null, "Test cases"),
    h("table", { "data-testid": "tc-table" },
      h("thead", null, h("tr", null, ["Title", "Tags", "Expected output", "Latest result", ""].map((l) => h("th", { scope: "col" }, l)))),
      h("tbody", null, state.cases.map((tc) => {
        const latest = latestGeneration(tc);
        return h("tr", { "data-testid": `tc-row-${tc.id}` },
          h("td", null, text(tc.title)),
          h("td", null, (tc.tags || []).length ? tc.tags.map((t) => h("span", { className: "tag" }, t.name)) : "—"),
          h("td", null, h("pre", { className: "body" }, show(tc.expectedOutput))),
          h("td", null, latest ? verdict(latest) : "—"),
          h("td", null, h("div", { className: "actions" },
            h("button", { type: "button", "data-testid": `tc-edit-${tc.id}`, onclick: (ev) => {
              const form = document.getElementById("tc-form");
              form.replaceWith(editor(canvasId, state, tc, reload));
              document.getElementById("tc-title").focus();
              ev.preventDefault();
            } }, "Edit"),
            h("button", { type: "button", "data-testid": `tc-run-${tc.id}`, onclick: async () => {
              const version = document.getElementById("tc-version");
              document.getElementById("tc-execution").replaceChildren(h("p", { className: "hint" }, "Starting…"));
              try {
                const res = await request("POST", `/test-case/${encodeURIComponent(tc.id)}/run`, { promptVersionId: version.value });
                await followExecution(res.executionId, state, document.getElementById("tc-execution"));
              } catch (err) {
                out.replaceChildren(errorBox(err));
              }
            } }, "Run"))));
      }))),
    out);
}

// latestGeneration returns a test case's newest generation, or null.
function latestGeneration(tc) {
  const gens = tc.generations || [];
  return gens.reduce((a, g) => (!a || g.createdAt > a.createdAt ? g : a), null);
}

// verdict shows a generation's status and, once graded, pass or fail.
function verdict(g) {
  if (g.passed === true) {
    return badge("passed", "passed");
  }
  if (g.passed === false) {
    return badge("failed", "failed");
  }
  return badge(g.status);
}

// editor is the form that creates a test case, or edits tc: title, the
// variables (a field per variable of the version picked, the newest to
// start with, and any other key as JSON), expected output, grader with its
// parameters, and tags, with a new tag made on save.
function editor(canvasId, state, tc, reload) {
  const editing = Boolean(tc);
  const title = h("input", { id: "tc-title", type: "text", required: true, maxlength: "256", value: editing ? tc.title : "", "data-testid": "tc-title" });
  const result = h("p", { id: "tc-form-result", className: "result", role: "status", "data-testid": "tc-form-result" });

  // Variables: the form of the version picked; values typed survive a
  // change of version by name, and keys the version does not declare are
  // kept in the JSON field below it.
  let values = editing && tc.variables ? { ...tc.variables } : {};
  const newest = state.versions.length ? state.versions[state.versions.length - 1].id : "";
  const varsVersion = h("select", { id: "tc-vars-version", "data-testid": "tc-vars-version" },
    [...state.versions].reverse().map((v) => h("option", { value: v.id, selected: v.id === newest }, versionLabel(v))));
  const varsHolder = h("div", { id: "tc-variables", "data-testid": "tc-variables" });
  const extra = h("textarea", { id: "tc-variables-extra", rows: "2", className: "code", spellcheck: "false", "data-testid": "tc-variables-extra", placeholder: "{}" });
  const extraErr = h("p", { className: "error", id: "tc-variables-extra-error", "data-testid": "tc-variables-extra-error" });
  extra.setAttribute("aria-describedby", extraErr.id);
  let fields = [];
  const showVars = () => {
    const v = state.versions.find((x) => x.id === varsVersion.value);
    const defs = (v && v.variables) || [];
    fields = defs.map((d, i) => variableField(d, i, "tc-var", values[d.name]));
    const declared = new Set(defs.map((d) => d.name));
    const others = Object.fromEntries(Object.entries(values).filter(([k]) => !declared.has(k)));
    extra.value = Object.keys(others).length ? JSON.stringify(others, null, 2) : "";
    varsHolder.replaceChildren(fields.length
      ? h("div", { className: "fields" }, fields.map((f) => f.nodes))
      : h("p", { className: "hint", "data-testid": "tc-variables-none" }, "This version declares no variables."));
  };
  // readVars returns the variables on screen, or null with the problems
  // shown at their fields.
  const readVars = async () => {
    extraErr.textContent = "";
    extra.setAttribute("aria-invalid", "false");
    const problems = fields.map((f) => f.check()).filter(Boolean);
    let others = {};
    if (extra.value.trim() !== "") {
      try {
        others = JSON.parse(extra.value);
        if (others === null || typeof others !== "object" || Array.isArray(others)) {
          throw new Error("not an object");
        }
      } catch {
        extraErr.textContent = "Other variables must be a JSON object, like {\"name\": \"Ada\"}.";
        extra.setAttribute("aria-invalid", "true");
        problems.push(extraErr.textContent);
      }
    }
    if (problems.length) {
      return null;
    }
    const out = { ...others };
    for (const f of fields) {
      const v = await f.value((msg) => { result.textContent = msg; });
      if (v !== undefined) {
        out[f.name] = v;
      }
    }
    return out;
  };
  varsVersion.addEventListener("change", async () => {
    // What was typed is kept by name for the next version's form.
    for (const f of fields) {
      try {
        const v = f.input.type === "file" ? undefined : await f.value(() => {});
        if (v === undefined) {
          delete values[f.name];
        } else {
          values[f.name] = v;
        }
      } catch {
        // A JSON field that does not parse is left as it was.
      }
    }
    showVars();
  });
  showVars();

  const expected = h("textarea", { id: "tc-expected", rows: "3", "data-testid": "tc-expected" });
  expected.value = editing && tc.expectedOutput !== null && tc.expectedOutput !== undefined ? tc.expectedOutput : "";

  // The grader and its parameters.
  const ev = (editing && tc.evaluator) || { type: "exact" };
  const grader = h("select", { id: "tc-evaluator", "data-testid": "tc-evaluator" },
    graders.map((g) => h("option", { value: g, selected: g === ev.type }, g)));
  const pattern = h("input", { id: "tc-pattern", type: "text", maxlength: "10000", className: "mono", spellcheck: "false", value: ev.pattern || "", "data-testid": "tc-pattern" });
  const schema = h("textarea", { id: "tc-schema", rows: "4", className: "code", spellcheck: "false", "data-testid": "tc-schema", placeholder: '{"type": "object"}' });
  schema.value = ev.schema ? JSON.stringify(ev.schema, null, 2) : "";
  const threshold = h("input", { id: "tc-threshold", type: "number", min: "0", max: "1", step: "0.05", placeholder: "0.8",
    value: typeof ev.threshold === "number" ? String(ev.threshold) : "", "data-testid": "tc-threshold" });
  const params = {
    pattern: { input: pattern, label: "Pattern", types: ["regex"] },
    schema: { input: schema, label: "Schema (JSON)", types: ["json-schema"] },
    threshold: { input: threshold, label: "Threshold (0–1)", types: ["similarity"] },
  };
  for (const p of Object.values(params)) {
    p.err = h("p", { className: "error", id: `${p.input.id}-error`, "data-testid": `${p.input.id}-error` });
    p.input.setAttribute("aria-describedby", p.err.id);
    p.nodes = [h("label", { for: p.input.id }, p.label), h("div", null, p.input, p.err)];
  }
  const graderHint = h("p", { className: "hint full", id: "tc-evaluator-hint", "data-testid": "tc-evaluator-hint" });
  const showGrader = () => {
    for (const p of Object.values(params)) {
      for (const n of p.nodes) {
        n.hidden = !p.types.includes(grader.value);
      }
    }
    graderHint.textContent = graderHelp[grader.value];
  };
  grader.addEventListener("change", showGrader);
  showGrader();
  // readGrader returns the evaluator to send (null for exact, the
  // default), or undefined with the problem shown at its field.
  const readGrader = () => {
    for (const p of Object.values(params)) {
      p.err.textContent = "";
      p.input.setAttribute("aria-invalid", "false");
    }
    const fail = (name, message) => {
      params[name].err.textContent = message;
      params[name].input.setAttribute("aria-invalid", "true");
      return undefined;
    };
    switch (grader.value) {
      case "exact":
        return null;
      case "regex":
        return pattern.value === "" ? fail("pattern", "Give the pattern the output must match.") : { type: "regex", pattern: pattern.value };
      case "json-schema": {
        let parsed;
        try {
          parsed = JSON.parse(schema.value);
        } catch (e) {
          return fail("schema", `The schema is not valid JSON: ${e.message}.`);
        }
        if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
          return fail("schema", "The schema must be a JSON object.");
        }
        return { type: "json-schema", schema: parsed };
      }
      case "similarity": {
        if (threshold.value === "") {
          return { type: "similarity" };
        }
        const t = Number(threshold.value);
        return t >= 0 && t <= 1 ? { type: "similarity", threshold: t } : fail("threshold", "A number from 0 to 1.");
      }
      default:
        return { type: grader.value };
    }
  };

  const had = new Set(editing ? (tc.tags || []).map((t) => t.id) : []);
  const checks = state.tags.map((t) => h("label", { className: "check" },
    h("input", { type: "checkbox", value: t.id, checked: had.has(t.id), "data-testid": `tc-tag-${t.name}` }), ` ${t.name}`));
  const newTag = h("input", { id: "tc-new-tag", type: "text", maxlength: "256", "data-testid": "tc-new-tag" });
  const save = async (event) => {
    event.preventDefault();
    result.replaceChildren();
    delete result.dataset.state;
    const evaluator = readGrader();
    let vars;
    try {
      vars = await readVars();
    } catch (err) {
      result.dataset.state = "error";
      result.textContent = err.message;
      return;
    }
    if (vars === null || evaluator === undefined) {
      result.dataset.state = "error";
      result.textContent = "Fix the fields marked.";
      const bad = form.querySelector("[aria-invalid='true']");
      if (bad) {
        bad.focus();
      }
      return;
    }
    const body = { title: title.value.trim(), variables: vars, expectedOutput: expected.value === "" ? null : expected.value, evaluator };
    try {
      const saved = editing
        ? await request("PATCH", `/test-case/${encodeURIComponent(tc.id)}`, body)
        : await request("POST", "/test-case", { ...body, promptId: canvasId });
      const want = new Set(checks.map((l) => l.querySelector("input")).filter((i) => i.checked).map((i) => i.value));
      if (newTag.value.trim()) {
        const tag = await request("POST", "/test-case-tags", { name: newTag.value.trim(), promptId: canvasId });
        want.add(tag.id);
      }
      const add = [...want].filter((id) => !had.has(id));
      const remove = [...had].filter((id) => !want.has(id));
      if (add.length) {
        await request("POST", "/test-case/bulk-add-tags", { testCaseIds: [saved.id], tagIds: add });
      }
      if (remove.length) {
        await request("POST", "/test-case/bulk-remove-tags", { testCaseIds: [saved.id], tagIds: remove });
      }
    } catch (err) {
      result.dataset.state = "error";
      result.textContent = err.message;
      // The server's problems go to their fields: the grader's parameters
      // and the variables by name.
      for (const d of err.details || []) {
        const m = (d.path || "").match(/^\/json\/(evaluator|variables)\/([^/]+)/);
        if (m && m[1] === "evaluator" && params[m[2]]) {
          params[m[2]].err.textContent = d.message;
          params[m[2]].input.setAttribute("aria-invalid", "true");
        } else if (m && m[1] === "variables" && fields.some((f) => f.name === m[2])) {
          fields.find((f) => f.name === m[2]).show(d.message);
        }
      }
      const bad = form.querySelector("[aria-invalid='true']");
      if (bad) {
        bad.focus();
      }
      return;
    }
    const next = await reload();
    const r = next.querySelector("#tc-form-result");
    r.dataset.state = "saved";
    r.textContent = editing ? "Test case saved." : "Test case created.";
  };
  const form = h("form", { id: "tc-form", "data-testid": "tc-form", "data-editing": editing ? tc.id : "", onsubmit: save, novalidate: true },
    h("h3", null, editing ? `Edit test case “${tc.title}”` : "New test case"),
    h("div", { className: "fields" },
      h("label", { for: "tc-title" }, "Title"), title),
    h("fieldset", null, h("legend", null, "Variables"),
      state.versions.length
        ? h("div", { className: "actions" }, h("label", { for: "tc-vars-version" }, "The variables of"), varsVersion)
        : h("p", { className: "hint" }, "The canvas has no version: give the variables as JSON."),
      varsHolder,
      h("label", { for: "tc-variables-extra" }, "Other variables (JSON object, optional)"), extra, extraErr),
    h("div", { className: "fields" },
      h("label", { for: "tc-expected" }, "Expected output"), expected,
      h("label", { for: "tc-evaluator" }, "Grader"), grader,
      graderHint,
      Object.values(params).map((p) => p.nodes)),
    h("fieldset", null, h("legend", null, "Tags"),
      checks.length ? h("div", { className: "checks" }, checks) : h("p", { className: "hint" }, "No tags yet."),
      h("label", { for: "tc-new-tag" }, "New tag"), newTag),
    h("div", { className: "actions" },
      h("button", { type: "submit", className: "primary", id: "tc-save", "data-testid": "tc-save" }, editing ? "Save test case" : "Create test case"),
      editing ? h("button", { type: "button", id: "tc-cancel-edit", onclick: () => document.getElementById("tc-form").replaceWith(editor(canvasId, state, null, reload)) }, "New instead") : null),
    result);
  return form;
}

// generationsPanel lists every generation of the canvas's test cases,
// newest first.
function generationsPanel(state) {
  const gens = state.cases.flatMap((tc) => tc.generations || []).sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
  return h("div", null, h("h3", null, "Generations"), generationsTable("tc-generations", gens, state));
}

// generationsTable shows generations with pass or fail, and the output
// beside the expected output.
function generationsTable(testid, gens, state) {
  if (gens.length === 0) {
    return h("p", { className: "hint", "data-testid": `${testid}-empty` }, "No generations yet.");
  }
  const cases = new Map(state.cases.map((tc) => [tc.id, tc]));
  const versions = new Map(state.versions.map((v) => [v.id, versionLabel(v)]));
  return h("table", { "data-testid": testid },
    h("thead", null, h("tr", null, ["Test case", "Version", "Result", "Output and expected output", "Latency", "Created"].map((l) => h("th", { scope: "col" }, l)))),
    h("tbody", null, gens.map((g) => {
      const tc = cases.get(g.testCaseId);
      return h("tr", { "data-testid": `generation-${g.id}`, "data-status": g.status, "data-passed": g.passed === undefined || g.passed === null ? "" : String(g.passed) },
        h("td", null, tc ? text(tc.title) : h("span", { className: "mono" }, g.testCaseId)),
        h("td", null, h("a", { href: `#/versions/${g.promptVersionId}` }, versions.get(g.promptVersionId) || g.promptVersionId)),
        h("td", null, verdict(g), g.error ? h("div", { className: "error" }, `${g.error.code}: ${g.error.message}`) : null),
        h("td", null, h("div", { className: "side-by-side" },
          h("div", null, h("h4", null, "Output"), h("pre", { className: "body", "data-testid": "gen-output" }, show(g.output))),
          h("div", null, h("h4", null, "Expected"), h("pre", { className: "body", "data-testid": "gen-expected" }, show(tc ? tc.expectedOutput : null))))),
        h("td", null, typeof g.latencyMs === "number" ? `${g.latencyMs} ms` : "—"),
        h("td", null, when(g.createdAt)));
    })));
}
