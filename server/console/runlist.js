// runlist.js shows every kind of run in one list: completion runs, tasks
// and workflow runs, filtered by kind, status, canvas, version and time,
// newest first; and the detail of a completion run or a task. Each kind is
// listed by its own API route; the list merges their pages by start time
// and loads more from each as it is read.

import { request, query, runTotals } from "./api.js";
import { h, when, badge, errorBox } from "./dom.js";
import { text, show, money, runSum, plural, versionLabel } from "./format.js";
import { runTarget } from "./runs.js";

const pageSize = 20;

const completionStatuses = ["queued", "running", "completed", "failed"];
const workflowStatuses = ["pending", "running", "waiting-for-review", "requires-action", "completed", "failed", "cancelled", "timeout"];

// sources are the API lists the run list merges: each lists one kind of
// run, takes a status only when it is one of its own, and maps its items to
// rows {kind, id, status, canvasId, versionId, started, completedAt, error,
// href}.
const sources = [
  {
    kind: "completion",
    statuses: completionStatuses,
    canvasScoped: true,
    path: (f, offset) => `/v2/chat/completions${query({ canvasId: f.canvas, versionId: f.version, status: f.status, since: f.since, until: f.until, limit: pageSize, offset })}`,
    row: (r) => ({ kind: "completion", id: r.id, status: r.status, canvasId: r.canvasId, versionId: r.versionId, started: r.createdAt, completedAt: r.completedAt, error: r.error, latencyMs: r.latencyMs, cost: r.cost, priced: true, href: `#/runs/completion/${r.id}` }),
  },
  {
    kind: "task",
    statuses: completionStatuses,
    canvasScoped: false,
    path: (f, offset) => `/v1/tasks${query({ status: f.status, since: f.since, until: f.until, limit: pageSize, offset })}`,
    row: (r) => ({ kind: "task", id: r.id, status: r.status, started: r.createdAt, completedAt: r.completedAt, error: r.error, latencyMs: r.latencyMs, cost: r.cost, priced: true, href: `#/runs/task/${r.id}` }),
  },
  {
    kind: "workflow",
    statuses: workflowStatuses,
    canvasScoped: true,
    path: (f, offset) => `/workflow/runs${query({ promptId: f.canvas, versionId: f.version, status: f.status, since: f.since, until: f.until, limit: pageSize, offset })}`,
    row: (r) => ({ kind: "workflow", id: r.id, status: r.status, canvasId: r.promptId, versionId: r.promptVersionId, started: r.startedAt, completedAt: r.completedAt, error: r.error, environment: r.environment, href: `#/runs/${r.id}` }),
  },
];

// isoOf turns the value of a datetime-local input into an RFC 3339
// instant, or "" when empty.
function isoOf(local) {
  if (!local) {
    return "";
  }
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? "" : d.toISOString();
}

// merger pages through the sources that filter f selects, merged newest
// first. next() returns the next rows (up to pageSize); more() says whether
// any source has rows left.
function merger(f) {
  const active = sources
    .filter((s) => !f.kind || s.kind === f.kind)
    .filter((s) => !f.status || s.statuses.includes(f.status))
    .filter((s) => s.canvasScoped || (!f.canvas && !f.version))
    .map((s) => ({ s, offset: 0, total: Infinity, buffer: [] }));
  const fill = async () => {
    await Promise.all(active.map(async (a) => {
      if (a.buffer.length >= pageSize || a.offset >= a.total) {
        return;
      }
      const page = await request("GET", a.s.path(f, a.offset));
      const items = (page && page.data) || [];
      a.total = (page && page.meta && page.meta.totalCount) || 0;
      a.offset += items.length;
      if (items.length === 0) {
        a.total = a.offset;
      }
      a.buffer.push(...items.map(a.s.row));
    }));
  };
  const exhausted = (a) => a.buffer.length === 0 && a.offset >= a.total;
  return {
    sources: active.map((a) => a.s.kind),
    more: () => active.some((a) => !exhausted(a)),
    async next() {
      await fill();
      const out = [];
      while (out.length < pageSize) {
        // A source whose buffer ran dry but has more may hold newer rows
        // than the others' heads: stop there, the next call refills it.
        if (active.some((a) => a.buffer.length === 0 && a.offset < a.total)) {
          break;
        }
        let best = null;
        for (const a of active) {
          if (a.buffer.length && (!best || a.buffer[0].started > best.buffer[0].started)) {
            best = a;
          }
        }
        if (!best) {
          break;
        }
        out.push(best.buffer.shift());
      }
      return out;
    },
  };
}

// runsListView is the Runs page: the filter form and the merged list.
export async function runsListView() {
  const canvases = (await request("GET", "/prompt")) || [];
  const canvasTitles = new Map(canvases.map((c) => [c.id, c.title]));
  const versionTitles = new Map();
  const loadedCanvases = new Set();

  const kind = h("select", { id: "runs-kind", name: "kind", "data-testid": "runs-kind" },
    h("option", { value: "" }, "all"), sources.map((s) => h("option", { value: s.kind }, s.kind)));
  const status = h("select", { id: "runs-filter-status", name: "status", "data-testid": "runs-filter-status" },
    h("option", { value: "" }, "any"),
    [...new Set([...completionStatuses, ...workflowStatuses])].map((s) => h("option", { value: s }, s)));
  const canvasSel = h("select", { id: "runs-canvas", name: "canvas", "data-testid": "runs-canvas" },
    h("option", { value: "" }, "any"), canvases.map((c) => h("option", { value: c.id }, c.title || c.id)));
  const version = h("select", { id: "runs-version", name: "version", "data-testid": "runs-version", disabled: true },
    h("option", { value: "" }, "any"));
  const since = h("input", { id: "runs-since", name: "since", type: "datetime-local", "data-testid": "runs-since" });
  const until = h("input", { id: "runs-until", name: "until", type: "datetime-local", "data-testid": "runs-until" });
  const out = h("div", { id: "runs-list", "data-testid": "runs-list" });

  canvasSel.addEventListener("change", async () => {
    version.replaceChildren(h("option", { value: "" }, "any"));
    version.disabled = true;
    if (!canvasSel.value) {
      return;
    }
    try {
      const versions = (await request("GET", `/prompt-version${query({ promptId: canvasSel.value })}`)) || [];
      for (const v of versions) {
        versionTitles.set(v.id, versionLabel(v));
        version.append(h("option", { value: v.id }, versionLabel(v)));
      }
      version.disabled = false;
    } catch (err) {
      out.replaceChildren(errorBox(err));
    }
  });

  const tbody = h("tbody", { id: "runs-rows" });
  const load = async () => {
    const f = { kind: kind.value, status: status.value, canvas: canvasSel.value, version: version.value, since: isoOf(since.value), until: isoOf(until.value) };
    const m = merger(f);
    tbody.replaceChildren();
    const more = h("button", { type: "button", id: "runs-more", "data-testid": "runs-more" }, "Load more");
    const count = h("span", { className: "hint", "data-testid": "runs-count" });
    const sum = h("p", { className: "hint", id: "runs-totals", "data-testid": "runs-totals" });
    if (m.sources.includes("completion")) {
      runTotals({ canvasId: f.canvas, versionId: f.version, status: f.status, since: f.since, until: f.until })
        .then((t) => { sum.textContent = `Completion runs selected: ${runSum(t)}.`; })
        .catch(() => { sum.textContent = ""; });
    }
    const showNext = async () => {
      more.disabled = true;
      try {
        const rows = await m.next();
        await loadVersionLabels(rows, versionTitles, loadedCanvases);
        tbody.append(...rows.map((r) => runRow(r, canvasTitles, versionTitles)));
      } catch (err) {
        out.replaceChildren(errorBox(err));
        return;
      }
      const n = tbody.children.length;
      count.textContent = n === 1 ? "1 run shown" : `${n} runs shown`;
      more.disabled = false;
      more.hidden = !m.more();
      if (n === 0) {
        out.replaceChildren(h("p", { className: "hint", "data-testid": "all-runs-empty" },
          m.sources.length ? "No runs match." : "No kind of run matches these filters (tasks have no canvas or version)."));
      }
    };
    more.addEventListener("click", showNext);
    out.replaceChildren(
      h("table", { "data-testid": "all-runs-table" },
        h("thead", null, h("tr", null, ["Started", "Kind", "Status", "Canvas", "Version", "Completed", "Latency", "Cost"].map((l) => h("th", { scope: "col" }, l)))),
        tbody),
      h("div", { className: "pager" }, more, count),
      sum);
    await showNext();
  };

  const form = h("form", { className: "filters", id: "runs-filters", "data-testid": "runs-filters", onsubmit: (ev) => { ev.preventDefault(); load(); } },
    field("runs-kind", "Kind", kind),
    field("runs-filter-status", "Status", status),
    field("runs-canvas", "Canvas", canvasSel),
    field("runs-version", "Version", version),
    field("runs-since", "Started from", since),
    field("runs-until", "Started before", until),
    h("div", { className: "filter-actions" },
      h("button", { type: "submit", className: "primary", id: "runs-apply", "data-testid": "runs-apply" }, "Apply"),
      h("button", { type: "reset", id: "runs-reset", onclick: () => setTimeout(() => { version.disabled = true; load(); }) }, "Clear")));
  await load();
  return h("section", { "aria-labelledby": "runs-title" },
    h("h2", { id: "runs-title" }, "Runs"),
    h("p", { className: "hint" }, "Completion runs, tasks and workflow runs, newest first."),
    form, out);
}

// loadVersionLabels reads the versions of the canvases of rows not read
// yet (one request per canvas), so that each row names its version by its
// position and title; a canvas that cannot be read leaves its rows' ids.
async function loadVersionLabels(rows, labels, loaded) {
  const wanted = [...new Set(rows.filter((r) => r.canvasId && r.versionId && !labels.has(r.versionId)).map((r) => r.canvasId))]
    .filter((id) => !loaded.has(id));
  await Promise.all(wanted.map(async (id) => {
    loaded.add(id);
    const versions = await request("GET", `/prompt-version${query({ promptId: id })}`).catch(() => []);
    for (const v of versions || []) {
      labels.set(v.id, versionLabel(v));
    }
  }));
}

// field is a labelled filter control.
function field(id, label, control) {
  return h("div", { className: "filter" }, h("label", { for: id }, label), control);
}

// runRow is one row of the run list.
function runRow(r, canvasTitles, versionTitles) {
  return h("tr", { "data-kind": r.kind, "data-id": r.id, "data-status": r.status },
    h("td", null, h("a", { href: r.href, "data-testid": `run-row-link-${r.id}` }, when(r.started))),
    h("td", null, r.kind),
    h("td", null, badge(r.status), r.error ? h("div", { className: "hint" }, text(r.error.message)) : null),
    h("td", null, r.canvasId ? h("a", { href: `#/canvases/${r.canvasId}` }, canvasTitles.get(r.canvasId) || r.canvasId) : "—"),
    h("td", null, r.versionId ? h("a", { href: `#/versions/${r.versionId}`, "data-testid": `run-version-${r.id}` }, versionTitles.get(r.versionId) || r.versionId) : "—"),
    h("td", null, when(r.completedAt)),
    h("td", null, typeof r.latencyMs === "number" && r.completedAt ? `${r.latencyMs} ms` : "—"),
    h("td", { "data-testid": `run-cost-${r.id}` }, r.priced ? money(r.cost) : "—"));
}

// refreshMs is how often a queued or running run is read again while its
// view is shown.
const refreshMs = 1000;

// completionRunView shows a completion run or a task: what was asked (the
// rendered messages and settings), what came back, its usage and latency.
export async function completionRunView(kind, id) {
  const path = kind === "task" ? `/v1/tasks/${encodeURIComponent(id)}` : `/v2/chat/completions/${encodeURIComponent(id)}`;
  const run = await request("GET", path);
  const [c, v] = await runTarget(run.canvasId, run.versionId);
  const req = run.request || {};
  const message = run.result && run.result.choices && run.result.choices[0] ? run.result.choices[0].message : null;
  const output = message ? message.content.text : null;
  const settings = ["model", "provider", "temperature", "maxTokens", "topP"].filter((k) => req[k] !== undefined && req[k] !== null && req[k] !== "");
  const section = h("section", { "aria-labelledby": "crun-title", "data-testid": "completion-run", "data-status": run.status },
    h("p", null, h("a", { href: "#/runs" }, "← Runs")),
    h("h2", { id: "crun-title" }, kind === "task" ? "Task" : "Completion run"),
    h("p", { className: "hint mono" }, run.id),
    h("dl", { className: "fields" },
      h("dt", null, "Status"), h("dd", { id: "crun-status", "data-testid": "crun-status", "data-status": run.status }, badge(run.status), run.workflowStatus ? [" ", badge(run.workflowStatus)] : null),
      run.canvasId ? [h("dt", null, "Canvas"), h("dd", null, h("a", { href: `#/canvases/${run.canvasId}`, "data-testid": "crun-canvas" }, c ? c.title || run.canvasId : run.canvasId))] : null,
      run.versionId ? [h("dt", null, "Version"), h("dd", null, h("a", { href: `#/versions/${run.versionId}`, "data-testid": "crun-version" }, v ? versionLabel(v) : run.versionId))] : null,
      run.environmentName ? [h("dt", null, "Environment"), h("dd", null, run.environmentName)] : null,
      run.variant !== undefined && run.variant !== null ? [h("dt", null, "Variant"), h("dd", { "data-testid": "crun-variant" }, `${run.variant} of the split`)] : null,
      run.feedback ? [h("dt", null, "Feedback"), h("dd", { "data-testid": "crun-feedback" }, `score ${run.feedback.score}`,
        run.feedback.comment ? h("span", { className: "hint" }, ` — ${run.feedback.comment}`) : null)] : null,
      h("dt", null, "Model"), h("dd", null, text(run.model)),
      run.provider ? [h("dt", null, "Provider"), h("dd", { "data-testid": "crun-provider" }, run.provider)] : null,
      run.credentialId ? [h("dt", null, "Credential"), h("dd", null, h("a", { href: "#/credentials", className: "mono" }, run.credentialId))] : null,
      h("dt", null, "Mode"), h("dd", { "data-testid": "crun-mode" }, run.async ? "asynchronous" : run.stream ? "streamed" : "synchronous"),
      h("dt", null, "Created"), h("dd", null, when(run.createdAt)),
      h("dt", null, "Completed"), h("dd", null, when(run.completedAt)),
      h("dt", null, "Latency"), h("dd", { "data-testid": "crun-latency" }, run.completedAt ? `${run.latencyMs} ms` : "—"),
      h("dt", null, "Usage"), h("dd", { "data-testid": "crun-usage" }, run.usage ? `${plural(run.usage.inputTokens, "input token", "input tokens")}, ${plural(run.usage.outputTokens, "output token", "output tokens")}` : "—"),
      h("dt", null, "Cost"), h("dd", { "data-testid": "crun-cost" }, money(run.cost),
        run.cost ? h("span", { className: "hint" }, ` (input ${money({ total: run.cost.input })}, output ${money({ total: run.cost.output })})`) : null),
      run.error ? [h("dt", null, "Error"), h("dd", { className: "error", "data-testid": "crun-error" }, `${run.error.code}: ${run.error.message}`)] : null),
    run.kind === "workflow" ? h("p", null, h("a", { href: `#/runs/${run.id}`, "data-testid": "crun-workflow-link" }, "Open the workflow run with its graph")) : null,
    h("h3", null, "Output"),
    h("pre", { className: "body tall", id: "crun-output", "data-testid": "crun-output" }, message && message.toolCalls && !output ? "—" : show(output)),
    message && message.toolCalls ? toolCallsTable("crun-tool-calls", message.toolCalls) : null,
    h("h3", null, "Input: rendered messages"),
    (req.messages || []).length
      ? h("table", { "data-testid": "crun-messages" },
        h("thead", null, h("tr", null, h("th", { scope: "col" }, "Role"), h("th", { scope: "col" }, "Content"))),
        h("tbody", null, req.messages.map((m) => h("tr", null,
          h("td", null, m.role),
          h("td", null, h("pre", { className: "body tall" }, m.toolCallId ? `(answers ${m.toolCallId}) ${m.content}` : show(m.content)),
            m.toolCalls ? toolCallsTable(null, m.toolCalls) : null,
            (m.fileRefs || []).length ? h("div", { className: "hint" }, `Files: ${m.fileRefs.map((f) => `${f.variable} (${f.url})`).join(", ")}`) : null)))))
      : h("p", { className: "hint", "data-testid": "crun-messages-empty" }, "No messages recorded."),
    settings.length
      ? [h("h3", null, "Settings"), h("dl", { className: "fields", "data-testid": "crun-settings" }, settings.map((k) => [h("dt", null, k), h("dd", null, String(req[k]))]))]
      : null,
    (req.tools || []).length
      ? [h("h3", null, "Functions"), h("p", { className: "hint", "data-testid": "crun-tools" },
        `${req.tools.map((t) => t.name).join(", ")}; tool choice ${req.toolChoice ? (typeof req.toolChoice === "object" ? `call ${req.toolChoice.name}` : req.toolChoice) : "default"}.`)]
      : null);
  if (run.status === "queued" || run.status === "running") {
    setTimeout(async () => {
      if (!section.isConnected) {
        return;
      }
      let next;
      try {
        next = await completionRunView(kind, id);
      } catch (err) {
        next = errorBox(err);
      }
      if (section.isConnected) {
        section.replaceWith(next);
      }
    }, refreshMs);
  }
  return section;
}

// toolCallsTable lists tool calls the model made: id, function and arguments.
export function toolCallsTable(testid, calls) {
  return h("table", { "data-testid": testid || undefined, className: "tool-calls" },
    h("thead", null, h("tr", null, ["Tool call", "Function", "Arguments"].map((l) => h("th", { scope: "col" }, l)))),
    h("tbody", null, calls.map((c) => h("tr", { "data-tool-call": c.id },
      h("td", { className: "mono" }, c.id),
      h("td", { className: "mono" }, c.name),
      h("td", null, h("pre", { className: "body" }, JSON.stringify(c.arguments, null, 2)))))));
}
