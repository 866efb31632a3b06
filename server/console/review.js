// review.js is a canvas's review queue: the live runs its
// inferencesPercentage samples and the runs added by hand, pending or
// reviewed. Each is annotated in place (good or bad, a score, a comment)
// and can be made into a test case; the counts per version sit on top.

import { request, query } from "./api.js";
import { h, table, when, errorBox, badge } from "./dom.js";
import { plural } from "./format.js";

// reviewView shows the queue of canvasId, the items of status (pending by
// default; "all" for both).
export async function reviewView(canvasId, status) {
  status = status || "pending";
  const [c, stats, page] = await Promise.all([
    request("GET", `/prompt/${encodeURIComponent(canvasId)}`),
    request("GET", `/review-queue/stats${query({ promptId: canvasId })}`),
    request("GET", `/review-queue${query({ promptId: canvasId, status: status === "all" ? "" : status, limit: 50 })}`),
  ]);
  const filter = h("select", { id: "review-status", "data-testid": "review-status" },
    ["pending", "reviewed", "all"].map((s) => h("option", { value: s, selected: s === status }, s)));
  filter.addEventListener("change", () => {
    location.hash = `#/canvases/${canvasId}/review/${filter.value}`;
  });
  const items = h("div", { "data-testid": "review-items" });
  if (page.data.length === 0) {
    items.append(h("p", { className: "hint", "data-testid": "review-empty" }, "Nothing to review here."));
  }
  for (const it of page.data) {
    items.append(await itemCard(it));
  }
  return h("section", { "aria-labelledby": "review-title", "data-testid": "review" },
    h("p", null, h("a", { href: `#/canvases/${c.id}` }, `← ${c.title || c.id}`)),
    h("h2", { id: "review-title" }, `Review: ${c.title || c.id}`),
    h("p", { className: "hint", "data-testid": "review-share" },
      `${c.inferencesPercentage} % of live runs are sampled into this queue; runs can also be added by hand.`),
    statsTable(stats.versions),
    h("div", { className: "actions" }, h("label", { for: "review-status" }, "Show"), filter,
      h("span", { className: "hint", "data-testid": "review-total" }, plural(page.meta.totalCount, "item", "items"))),
    items);
}

// statsTable shows the counts per version.
function statsTable(versions) {
  const mean = (v) => (v.meanScore === null || v.meanScore === undefined ? "—" : v.meanScore.toFixed(2));
  return table("review-stats", [
    { label: "Version", cell: (v) => h("a", { href: `#/versions/${v.versionId}`, className: "mono" }, v.versionId) },
    { label: "Pending", cell: (v) => h("span", { "data-testid": `stats-pending-${v.versionId}` }, String(v.pending)) },
    { label: "Reviewed", cell: (v) => String(v.reviewed) },
    { label: "Good", cell: (v) => h("span", { "data-testid": `stats-good-${v.versionId}` }, String(v.good)) },
    { label: "Bad", cell: (v) => h("span", { "data-testid": `stats-bad-${v.versionId}` }, String(v.bad)) },
    { label: "Mean score", cell: (v) => h("span", { "data-testid": `stats-mean-${v.versionId}` }, mean(v)) },
  ], versions, "No runs in the queue yet.");
}

// runText returns a run's last input message and its output (or error).
function runText(run) {
  const msgs = (run.request && run.request.messages) || [];
  const input = msgs.length ? msgs[msgs.length - 1].content : "";
  const choice = run.result && run.result.choices && run.result.choices[0];
  const output = choice ? choice.message.content.text : run.error ? `Error: ${run.error.message}` : `(${run.status})`;
  return { input, output };
}

// itemCard shows one item with its run and the annotation form.
async function itemCard(it) {
  let run = null;
  try {
    run = await request("GET", `/v2/chat/completions/${encodeURIComponent(it.runId)}`);
  } catch {
    run = null; // the item stands without its run's text
  }
  const { input, output } = run ? runText(run) : { input: "", output: "" };
  const a = it.annotation || {};
  const id = it.id;
  const passed = h("select", { id: `review-passed-${id}`, "data-testid": `review-passed-${id}` },
    h("option", { value: "", selected: a.passed === undefined }, "—"),
    h("option", { value: "true", selected: a.passed === true }, "Good"),
    h("option", { value: "false", selected: a.passed === false }, "Bad"));
  const score = h("input", { id: `review-score-${id}`, "data-testid": `review-score-${id}`, type: "number", min: "0", max: "1", step: "0.05",
    value: a.score === undefined ? "" : String(a.score) });
  const comment = h("input", { id: `review-comment-${id}`, "data-testid": `review-comment-${id}`, type: "text", maxlength: "10000",
    value: a.comment || "" });
  const result = h("p", { className: "hint", "data-testid": `review-result-${id}`, role: "status" });
  const state = badge(it.status);
  state.setAttribute("data-testid", `review-state-${id}`);

  const form = h("form", { className: "actions", "data-testid": `review-form-${id}` },
    h("label", { for: `review-passed-${id}` }, "Verdict"), passed,
    h("label", { for: `review-score-${id}` }, "Score (0–1)"), score,
    h("label", { for: `review-comment-${id}` }, "Comment"), comment,
    h("button", { type: "submit", className: "primary", "data-testid": `review-save-${id}` }, "Save"),
    h("button", { type: "button", "data-testid": `review-testcase-${id}`, onClick: () => makeTestCase(id, result) }, "Make test case"));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (passed.value === "") {
      result.dataset.state = "failed";
      result.replaceChildren("Choose good or bad.");
      return;
    }
    const body = { passed: passed.value === "true", comment: comment.value };
    if (score.value !== "") {
      body.score = Number(score.value);
    }
    try {
      const saved = await request("POST", `/review-queue/${encodeURIComponent(id)}/annotation`, body);
      state.textContent = saved.status;
      state.className = `badge ${saved.status}`;
      result.dataset.state = "saved";
      result.replaceChildren(`Saved: ${saved.annotation.passed ? "good" : "bad"}.`);
    } catch (err) {
      result.dataset.state = "failed";
      result.replaceChildren(errorBox(err));
    }
  });
  return h("article", { className: "review-item", "data-testid": `review-item-${id}`, "data-run": it.runId },
    h("p", null, state, " ", h("a", { href: `#/runs/completion/${encodeURIComponent(it.runId)}`, className: "mono" }, it.runId),
      ` · ${it.source} · ${when(it.createdAt)}`),
    h("dl", null,
      h("dt", null, "Input"), h("dd", { className: "mono", "data-testid": `review-input-${id}` }, input),
      h("dt", null, "Output"), h("dd", { className: "mono", "data-testid": `review-output-${id}` }, output)),
    form, result);
}

// makeTestCase turns an item's run into a test case and links to it.
async function makeTestCase(id, result) {
  try {
    const tc = await request("POST", `/review-queue/${encodeURIComponent(id)}/test-case`);
    result.dataset.state = "test-case";
    result.replaceChildren("Test case created: ",
      h("a", { href: `#/test-cases/${encodeURIComponent(tc.promptId)}`, "data-testid": `review-testcase-link-${id}` }, tc.id),
      tc.expectedOutput !== null ? " (with the output as expected output)" : "");
  } catch (err) {
    result.dataset.state = "failed";
    result.replaceChildren(errorBox(err));
  }
}
