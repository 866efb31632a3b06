// runs.js shows workflow runs: a canvas's runs a page at a time, and one
// run with its graph and steps, where an operator answers a review, gives
// an action its input, or cancels the run.

import { request, query } from "./api.js";
import { h, table, when, badge, errorBox, filteredPages } from "./dom.js";
import { show, surface, versionLabel } from "./format.js";
import { runGraph } from "./graph.js";

const pageSize = 20;

// statuses are the run statuses the list filters by.
const statuses = ["pending", "running", "waiting-for-review", "requires-action", "completed", "failed", "cancelled", "timeout"];

// terminal reports whether a run status is final.
function terminal(status) {
  return status === "completed" || status === "failed" || status === "cancelled" || status === "timeout";
}

// refreshMs is how often a run that is pending or running is read again
// while its view is shown.
const refreshMs = 1000;

// runsPanel renders the first page of a canvas's runs and pages on from
// there; titles names versions by id. A failure to list shows in the panel
// only, so that the rest of the canvas view stands.
export async function runsPanel(canvasId, titles) {
  return filteredPages("runs", statuses, (status, offset, load) => runsPage(canvasId, titles, status, offset, load));
}

async function runsPage(canvasId, titles, status, offset, load) {
  const page = await request("GET", `/workflow/runs${query({ promptId: canvasId, status, limit: pageSize, offset })}`);
  const rows = (page && page.data) || [];
  const total = (page && page.meta && page.meta.totalCount) || 0;
  return h("div", null,
    table("runs-table", [
      { label: "Started", cell: (r) => h("a", { href: `#/runs/${r.id}`, "data-testid": `run-link-${r.id}` }, when(r.startedAt)) },
      { label: "Status", cell: (r) => [badge(r.status), r.error ? h("div", { className: "hint" }, r.error.message) : null] },
      { label: "Started from", cell: (r) => surface(r.environment) },
      { label: "Version", cell: (r) => h("a", { href: `#/versions/${r.promptVersionId}` }, (titles && titles.get(r.promptVersionId)) || r.promptVersionId) },
      { label: "Completed", cell: (r) => when(r.completedAt) },
    ], rows, "No runs yet."),
    h("div", { className: "pager" },
      h("button", { type: "button", disabled: offset <= 0, onclick: () => load(Math.max(0, offset - pageSize)) }, "Previous"),
      h("span", null, total === 0 ? "" : `${offset + 1}–${offset + rows.length} of ${total}`),
      h("button", { type: "button", disabled: offset + rows.length >= total, onclick: () => load(offset + pageSize) }, "Next")));
}

// runView shows one run. While the run is pending or running it is read
// again every refreshMs, for as long as the view is on the page.
export async function runView(id) {
  const run = await request("GET", `/workflow/runs/${encodeURIComponent(id)}`);
  const [c, v] = await runTarget(run.promptId, run.promptVersionId);
  const section = h("section", { "aria-labelledby": "run-title", "data-testid": "run", "data-status": run.status });
  const reread = async () => {
    if (!section.isConnected) {
      return;
    }
    let next;
    try {
      next = await runView(id);
    } catch (err) {
      next = errorBox(err);
    }
    if (section.isConnected) {
      section.replaceWith(next);
    }
  };
  section.append(
    h("p", { className: "actions" },
      h("a", { href: `#/canvases/${run.promptId}`, "data-testid": "run-canvas-link" }, `← ${c ? c.title || "Canvas" : "Canvas"}`),
      h("a", { href: "#/runs" }, "← Runs")),
    h("h2", { id: "run-title" }, "Workflow run"),
    h("p", { className: "hint mono" }, run.id),
    h("dl", { className: "fields" },
      h("dt", null, "Status"), h("dd", { id: "run-status", "data-testid": "run-status", "data-status": run.status }, badge(run.status)),
      h("dt", null, "Canvas"), h("dd", null, h("a", { href: `#/canvases/${run.promptId}`, "data-testid": "run-canvas" }, c ? c.title || run.promptId : run.promptId)),
      h("dt", null, "Version"), h("dd", null, h("a", { href: `#/versions/${run.promptVersionId}`, "data-testid": "run-version" }, v ? versionLabel(v) : run.promptVersionId)),
      h("dt", null, "Started from"), h("dd", { "data-testid": "run-surface" }, surface(run.environment)),
      h("dt", null, "Started"), h("dd", null, when(run.startedAt)),
      h("dt", null, "Completed"), h("dd", null, when(run.completedAt)),
      h("dt", null, "Deadline"), h("dd", null, when(run.deadline)),
      run.startNodeId || run.endNodeId ? [h("dt", null, "Range"), h("dd", { className: "mono" }, `${run.startNodeId || "start"} → ${run.endNodeId || "end"}`)] : null,
      run.error ? [h("dt", null, "Error"), h("dd", { className: "error", "data-testid": "run-error" }, `${run.error.code}: ${run.error.message}`)] : null),
    actionsPanel(run, reread) || "",
    h("h3", null, "Output"),
    h("pre", { className: "body", id: "run-output", "data-testid": "run-output" }, run.output ? show(run.output.output) : "—"),
    h("h3", null, "Graph"),
    graphPanel(run),
    h("h3", null, "Steps"),
    table("steps-table", [
      { label: "Step", cell: (s) => [h("span", { className: "mono", id: `step-${s.id}`, tabindex: "-1" }, s.id), s.name && s.name !== s.id ? h("div", { className: "hint" }, s.name) : null] },
      { label: "Action", cell: (s) => h("span", { className: "mono" }, s.actionId) },
      { label: "Status", cell: (s) => badge(s.status) },
      { label: "Output", cell: (s) => h("pre", { className: "body" }, show(s.output)) },
      { label: "Error", cell: (s) => (s.error ? `${s.error.code}: ${s.error.message}` : "—") },
    ], run.steps, "No steps."),
    h("h3", null, "Input"),
    table("input-table", [
      { label: "Variable", cell: (v) => h("span", { className: "mono" }, v.name) },
      { label: "Type", cell: (v) => v.type },
      { label: "Value", cell: (v) => h("pre", { className: "body" }, show(v.value)) },
      { label: "Files", cell: (v) => (v.files || []).map((f) => f.name || f.fileUrl).join(", ") },
    ], Object.values(run.input || {}), "No input."));
  if (run.status === "pending" || run.status === "running") {
    setTimeout(reread, refreshMs);
  }
  return section;
}

// runTarget reads a run's canvas and version, to name them; either is
// null when it cannot be read (deleted since, say), and the run page names
// it by its id.
export async function runTarget(canvasId, versionId) {
  return Promise.all([
    canvasId ? request("GET", `/prompt/${encodeURIComponent(canvasId)}`).catch(() => null) : null,
    versionId ? request("GET", `/prompt-version/${encodeURIComponent(versionId)}`).catch(() => null) : null,
  ]);
}

// actionsPanel holds what an operator can do to the run: answer its review,
// resume its action, cancel it. Each action re-reads the run after it.
function actionsPanel(run, reread) {
  if (terminal(run.status)) {
    return null;
  }
  const out = h("div", { id: "run-action-error", "data-testid": "run-action-error" });
  const buttons = [];
  // act posts one action with every button disabled, then re-reads the
  // run; a refused action is shown and the buttons come back.
  const act = async (path, body) => {
    out.replaceChildren();
    buttons.forEach((b) => { b.disabled = true; });
    try {
      await request("POST", `/workflow/runs/${encodeURIComponent(run.id)}/${path}`, body);
    } catch (err) {
      out.replaceChildren(errorBox(err));
      buttons.forEach((b) => { b.disabled = false; });
      return;
    }
    await reread();
  };
  const parts = [];
  if (run.status === "waiting-for-review") {
    const comment = h("textarea", { id: "run-comment", "data-testid": "run-comment", rows: "3" });
    const review = (approved) => act("review", comment.value.trim() ? { approved, comment: comment.value.trim() } : { approved });
    const approve = h("button", { type: "button", className: "primary", id: "run-approve", "data-testid": "run-approve", onclick: () => review(true) }, "Approve");
    const reject = h("button", { type: "button", className: "danger", id: "run-reject", "data-testid": "run-reject", onclick: () => review(false) }, "Reject");
    buttons.push(approve, reject);
    parts.push(
      h("h3", null, "Review"),
      reviewPrompt(run),
      h("label", { for: "run-comment" }, "Comment (optional)"),
      comment,
      h("div", { className: "actions" }, approve, reject));
  }
  if (run.status === "requires-action") {
    const input = h("textarea", { id: "run-resume-input", "data-testid": "run-resume-input", rows: "5", className: "mono" });
    input.value = "{}";
    const resume = h("button", { type: "button", className: "primary", id: "run-resume", "data-testid": "run-resume", onclick: () => {
      let value;
      try {
        value = JSON.parse(input.value);
      } catch {
        out.replaceChildren(errorBox(new Error("The input is not valid JSON.")));
        return;
      }
      act("resume", { input: value });
    } }, "Resume");
    buttons.push(resume);
    parts.push(
      h("h3", null, "Action"),
      h("label", { for: "run-resume-input" }, "Input (JSON)"),
      input,
      h("div", { className: "actions" }, resume));
  }
  const cancel = h("button", { type: "button", className: "danger", id: "run-cancel", "data-testid": "run-cancel", onclick: () => act("cancel") }, "Cancel run");
  buttons.push(cancel);
  parts.push(h("div", { className: "actions" }, cancel, h("button", { type: "button", id: "run-refresh", onclick: () => reread() }, "Refresh")), out);
  return h("div", { className: "run-actions", "data-testid": "run-actions" }, parts);
}

// reviewPrompt names the step that waits for review.
function reviewPrompt(run) {
  const step = (run.steps || []).find((s) => s.status === "waiting-for-review");
  return step ? h("p", { className: "hint", "data-testid": "run-review-step" }, `Step ${step.name || step.id} waits for a review.`) : null;
}

// graphPanel draws the run's executed graph, laid out by depth, or says
// that the run has none.
function graphPanel(run) {
  const svg = runGraph(run.graph);
  if (!svg) {
    return h("p", { className: "hint", "data-testid": "run-graph-empty" }, "No graph.");
  }
  return h("div", { className: "graph-scroll" }, svg);
}
