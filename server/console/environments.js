// environments.js shows a canvas' environments: each one's active version
// and history, publishing a version, promoting (publishing to production),
// rolling back (publishing an earlier version again), splitting traffic
// between versions by weight with the results of each variant, and
// creating and deleting custom environments, whose names are checked as
// they are typed. A protected environment takes publication requests
// instead of publishes, lists its pending ones, and admins edit its
// protection.

import { request, query, loadCanvas } from "./api.js";
import { h, table, when, badge, errorBox } from "./dom.js";
import { versionOptions } from "./canvases.js";
import { money, plural } from "./format.js";
import { actor } from "./actors.js";
import { pendingRequestsOf, approvalCount, flags } from "./requests.js";

const historyPageSize = 20;
const maxNameLength = 64;
// nameSpace is the whitespace the server trims around a name: ASCII only.
const nameSpace = /^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g;
const namePattern = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const reserved = ["production", "promoted", "latest", "draft"];

// nameRule is the environment name rule as the operator reads it.
export const nameRule = "Lowercase letters and digits, in segments joined by single hyphens (no hyphen first, last or twice in a row), " +
  `at most ${maxNameLength} characters; not ${reserved.join(", ")}, and not a UUID.`;

// customNameProblem checks the name of a new custom environment with the
// server's rules (env.CheckCustomName): it returns why the name is refused,
// or "" when it is valid.
export function customNameProblem(raw) {
  const n = raw.replace(nameSpace, "");
  if (n === "") {
    return "The name must not be empty.";
  }
  if (new TextEncoder().encode(n).length > maxNameLength) {
    return `The name must be at most ${maxNameLength} characters.`;
  }
  if (!namePattern.test(n)) {
    if (/[A-Z]/.test(n)) {
      return "The name must be lowercase.";
    }
    if (/^-|-$/.test(n)) {
      return "The name must not start or end with a hyphen.";
    }
    if (/--/.test(n)) {
      return "The name must not have two hyphens in a row.";
    }
    return "The name may hold only lowercase letters, digits and single hyphens.";
  }
  if (reserved.includes(n)) {
    return `The name ${n} is reserved.`;
  }
  if (n.length === 36 && uuidPattern.test(n)) {
    return "The name must not be a UUID.";
  }
  return "";
}

// publish makes versionId the active publication of the canvas'
// environment envName and returns the publication. Publishing the version
// already active changes nothing; an earlier version published again is a
// rollback.
export function publish(canvasId, envName, versionId) {
  return request("POST", "/environment/publish", { resourceType: "prompt", resourceId: canvasId, envName, versionId });
}

// historyPage reads one page of an environment's publication history.
function historyPage(canvasId, envName, offset) {
  return request("GET", `/environment/versions${query({
    resourceType: "prompt", resourceId: canvasId, envName, limit: historyPageSize, offset,
  })}`);
}

// historyTable lists publications, newest first; each one that is not
// active has a Roll back button that publishes its version again and then
// calls changed.
function historyTable(testid, canvasId, envName, rows, changed, report) {
  return table(testid, [
    { label: "#", cell: (p) => String(p.versionIndex) },
    { label: "Version", cell: (p) => [h("a", { href: `#/versions/${p.versionId}` }, p.title),
      p.split ? h("span", { className: "hint", "data-testid": `split-${p.publicationId}` }, ` split ${p.split.map((s) => s.weight).join("/")}`) : null] },
    { label: "Published", cell: (p) => when(p.publishedAt) },
    { label: "By", cell: (p) => actor(p.publishedBy) },
    { label: "Unpublished", cell: (p) => when(p.unpublishedAt) },
    { label: "Active", cell: (p) => (p.isActive ? badge("active", "on") : "") },
    { label: "", cell: (p) => (p.isActive ? "" : h("button", {
      type: "button", className: "rollback", "data-testid": `rollback-${envName}-${p.publicationId}`,
      "aria-label": `Roll back ${envName} to ${p.title}`,
      onclick: async (ev) => {
        const btn = ev.currentTarget;
        btn.disabled = true;
        try {
          await publish(canvasId, envName, p.versionId);
          await changed(`Rolled ${envName} back to ${p.title}.`);
        } catch (err) {
          btn.disabled = false;
          report(err);
        }
      },
    }, "Roll back to this")) },
  ], rows, "Nothing was published here yet.");
}

// environmentsView shows every environment of a canvas with its active
// version, its latest publications and its controls, and the form that
// creates a custom environment.
export async function environmentsView(canvasId, notice) {
  const [c, list, envs] = await loadCanvas(canvasId);
  const titles = new Map(list.map((v) => [v.id, v.title]));
  const ordered = [...envs].sort((a, b) => (b.isSystem - a.isSystem) || a.name.localeCompare(b.name));
  const [histories, pending, tags, me] = await Promise.all([
    Promise.all(ordered.map((e) => historyPage(canvasId, e.name, 0))),
    pendingRequestsOf(canvasId),
    // A server without test cases has no tags to gate on.
    request("GET", `/test-case-tags${query({ promptId: canvasId })}`).catch(() => []),
    // Who signed in: the protection is edited by admins only.
    request("GET", "/me").catch(() => null),
  ]);
  const stats = await Promise.all(ordered.map((e, i) => {
    const active = histories[i] && histories[i].data && histories[i].data[0];
    return active && active.isActive && active.split
      ? request("GET", `/environment/split-stats${query({ resourceType: "prompt", resourceId: canvasId, envName: e.name })}`)
      : null;
  }));
  const section = h("section", { "aria-labelledby": "environments-title", "data-testid": "environments" });
  const status = h("div", { id: "environments-result", role: "status", "data-testid": "environments-result" });
  const reload = async (text) => {
    const next = await environmentsView(canvasId, text);
    if (section.isConnected) {
      section.replaceWith(next);
    }
  };
  const report = (err, action) => status.replaceChildren(errorBox(err), ...(action ? [action] : []));
  if (notice) {
    status.replaceChildren(h("p", { className: "result", "data-state": "saved" }, notice));
  }
  section.append(
    h("p", null, h("a", { href: `#/canvases/${canvasId}` }, `← ${c.title}`)),
    h("h2", { id: "environments-title" }, `Environments of ${c.title}`),
    status,
    ...ordered.map((e, i) => environmentPanel(c, e, list, titles, (histories[i] && histories[i].data) || [],
      (histories[i] && histories[i].meta && histories[i].meta.totalCount) || 0, stats[i], reload, report,
      pending.filter((r) => r.environmentId === e.id), tags || [], me)),
    newEnvironmentForm(canvasId, reload));
  return section;
}

// environmentPanel is one environment: active version, publish (promote
// for production) or, when protected, request a publication, the pending
// requests, the protection (for admins: me, from GET /me, says who signed
// in; unknown, it is shown and the server decides), delete for a custom
// one, and its latest publications.
function environmentPanel(c, e, versions, titles, rows, total, stats, reload, report, requests, tags, me) {
  const id = `env-${e.name}`;
  const select = h("select", { id: `${id}-version`, "data-testid": `${id}-version` }, versionOptions(versions, e.activeVersionId));
  const isProd = e.name === "production";
  const publishForm = e.protected ? requestForm(c, e, select, titles, reload, report) : h("form", { className: "actions", "data-testid": `${id}-publish-form` },
    h("label", { for: `${id}-version` }, isProd ? "Promote version" : "Publish version"), select,
    h("button", { type: "submit", className: "primary", "data-testid": `${id}-publish` }, isProd ? "Promote" : "Publish"));
  if (!e.protected) {
    publishForm.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const versionId = select.value;
      try {
        const p = await publish(c.id, e.name, versionId);
        await reload(`${isProd ? "Promoted" : "Published"} ${p.title} to ${e.name}.`);
      } catch (err) {
        report(err, err.code === "APPROVAL_REQUIRED" ? requestControl(c, e, versionId, titles, reload, report) : null);
      }
    });
  }
  if (!versions.length) {
    publishForm.replaceChildren(h("p", { className: "hint" }, "No versions to publish yet."));
  }
  return h("section", { className: "panel", "aria-labelledby": `${id}-title`, "data-testid": id },
    h("h3", { id: `${id}-title` }, e.name, " ", badge(e.isSystem ? "system" : "custom"),
      e.protected ? h("span", { "data-testid": `${id}-protected` }, " ", badge(`protected: ${plural(e.requiredApprovals, "approval", "approvals")}`, "protected")) : null),
    e.requiredExperiment ? h("p", { className: "hint", "data-testid": `${id}-gate` }, experimentWords(e.requiredExperiment, tags)) : null,
    pendingList(e, requests, titles),
    h("p", null, "Active version: ",
      e.activeVersionId
        ? h("a", { href: `#/versions/${e.activeVersionId}`, "data-testid": `${id}-active` }, titles.get(e.activeVersionId) || e.activeVersionId)
        : h("span", { "data-testid": `${id}-active` }, "none")),
    publishForm,
    versions.length >= 2 ? splitForm(c, e, versions, rows[0] && rows[0].isActive ? rows[0].split : null, reload, report) : null,
    stats ? splitStatsTable(`${id}-split-stats`, stats, titles) : null,
    historyTable(`history-${e.name}`, c.id, e.name, rows, reload, report),
    h("div", { className: "actions" },
      h("a", { href: `#/canvases/${c.id}/environments/${encodeURIComponent(e.name)}`, "data-testid": `environment-link-${e.name}` },
        total > rows.length ? `Full history (${total} publications)` : "History page"),
      e.activeVersionId ? h("a", { href: `#/canvases/${c.id}/playground/environment/${encodeURIComponent(e.name)}` }, "Run in playground") : null,
      e.isSystem ? null : deleteControl(e, reload, report)),
    !me || me.role === "admin" ? policyForm(e, tags, reload) : null);
}

// experimentWords says what a required experiment asks of a version.
function experimentWords(x, tags) {
  const names = new Map(tags.map((t) => [t.id, t.name]));
  const over = x.tagIds.length ? `over the test cases tagged ${x.tagIds.map((t) => names.get(t) || t).join(", ")}` : "over any test cases";
  return `Approvals need a completed experiment of the version ${over}, passing at least ${Math.round(x.minPassRate * 100)} %.`;
}

// pendingList lists the pending publication requests of environment e,
// each linked to its page.
function pendingList(e, requests, titles) {
  const id = `env-${e.name}-requests`;
  if (!requests.length) {
    return e.protected ? h("p", { className: "hint", "data-testid": `${id}-empty` }, "No pending publication requests.") : null;
  }
  return [h("h4", null, "Pending publication requests"),
    h("ul", { className: "env-requests", "data-testid": id }, requests.map((r) => {
      const words = flags(r);
      return h("li", { "data-testid": `env-request-${r.id}` },
        h("a", { href: `#/requests/${r.id}`, "data-testid": `env-request-link-${r.id}` }, titles.get(r.versionId) || r.versionId),
        " requested by ", actor(r.requestedBy), `, ${when(r.createdAt)}: ${approvalCount(r)} approvals`,
        words.length ? h("span", { className: "warning" }, ` (${words.join("; ")})`) : null);
    }))];
}

// createRequest asks that versionId be published to environment e and
// returns the notice to show.
async function createRequest(c, e, versionId, comment, titles) {
  const body = { resourceType: "prompt", resourceId: c.id, envName: e.name, versionId };
  if (comment) {
    body.comment = comment;
  }
  const r = await request("POST", "/publication-requests", body);
  return `Requested the publication of ${titles.get(versionId) || versionId} to ${e.name}: ` +
    `${plural(r.requiredApprovals, "approval", "approvals")} by other people publish it.`;
}

// requestForm asks for the publication of the version select picks to the
// protected environment e, with an optional comment.
function requestForm(c, e, select, titles, reload, report) {
  const id = `env-${e.name}`;
  const comment = h("input", { type: "text", id: `${id}-request-comment`, maxlength: "2000", "data-testid": `${id}-request-comment` });
  const form = h("form", { className: "actions", "data-testid": `${id}-request-form` },
    h("label", { for: `${id}-version` }, "Version"), select,
    h("label", { for: `${id}-request-comment` }, "Comment"), comment,
    h("button", { type: "submit", className: "primary", "data-testid": `${id}-request` }, "Request publication"));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      await reload(await createRequest(c, e, select.value, comment.value.trim(), titles));
    } catch (err) {
      report(err);
    }
  });
  return form;
}

// policyForm edits the protection of environment e (admins): whether it
// is protected, how many approvals a request needs, and optionally the
// experiment a version must have passed, over some tags of the canvas.
function policyForm(e, tags, reload) {
  const p = `env-${e.name}-policy`;
  const x = e.requiredExperiment;
  const on = h("input", { type: "checkbox", id: `${p}-protected`, checked: e.protected, "data-testid": `${p}-protected` });
  const count = h("input", { type: "number", id: `${p}-approvals`, min: "1", max: "5", step: "1",
    value: String(e.requiredApprovals || 1), "data-testid": `${p}-approvals` });
  const gate = h("input", { type: "checkbox", id: `${p}-gate`, checked: Boolean(x), "data-testid": `${p}-gate` });
  const tagChecks = tags.map((t) => h("label", { className: "check" },
    h("input", { type: "checkbox", value: t.id, checked: Boolean(x && x.tagIds.includes(t.id)), "data-testid": `${p}-tag-${t.name}` }), ` ${t.name}`));
  const rate = h("input", { type: "number", id: `${p}-rate`, min: "0", max: "100", step: "1",
    value: String(x ? Math.round(x.minPassRate * 100) : 80), "data-testid": `${p}-rate` });
  const gateFields = h("div", { className: "full" },
    tags.length ? [h("p", { className: "hint" }, "Over the test cases of every tag checked (none: any experiment)."), h("div", { className: "checks" }, tagChecks)]
      : h("p", { className: "hint" }, "The canvas has no test case tags: any experiment of the version counts."),
    h("label", { for: `${p}-rate` }, "Minimum pass rate (%) "), rate);
  const out = h("p", { className: "error full", role: "alert", "data-testid": `${p}-error` });
  const sync = () => {
    count.disabled = !on.checked;
    gate.disabled = !on.checked;
    gateFields.hidden = !(on.checked && gate.checked);
  };
  on.addEventListener("change", sync);
  gate.addEventListener("change", sync);
  sync();
  // The form checks its fields itself, so that the reason shows in words.
  const form = h("form", { className: "fields", novalidate: true, "data-testid": `${p}-form` },
    h("label", { for: `${p}-protected` }, "Protected"), on,
    h("label", { for: `${p}-approvals` }, "Approvals (1 to 5)"), count,
    h("label", { for: `${p}-gate` }, "Require an experiment"), gate,
    gateFields, out,
    h("div", { className: "full actions" }, h("button", { type: "submit", className: "primary", "data-testid": `${p}-save` }, "Save protection")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    out.textContent = "";
    const body = { protected: on.checked };
    if (on.checked) {
      const n = Number(count.value);
      if (!Number.isInteger(n) || n < 1 || n > 5) {
        out.textContent = "The approvals are a whole number from 1 to 5.";
        count.focus();
        return;
      }
      body.requiredApprovals = n;
      if (gate.checked) {
        const pct = Number(rate.value);
        if (rate.value === "" || !Number.isFinite(pct) || pct < 0 || pct > 100) {
          out.textContent = "The minimum pass rate is from 0 to 100 %.";
          rate.focus();
          return;
        }
        body.requiredExperiment = { tagIds: tagChecks.map((l) => l.firstChild).filter((i) => i.checked).map((i) => i.value), minPassRate: pct / 100 };
      }
    }
    try {
      const saved = await request("PATCH", `/environment/${encodeURIComponent(e.id)}`, body);
      await reload(saved.protected ? `${e.name} is protected: ${plural(saved.requiredApprovals, "approval", "approvals")} publish it.`
        : `${e.name} is no longer protected.`);
    } catch (err) {
      out.textContent = err.message;
    }
  });
  return h("details", { className: "policy", "data-testid": p },
    h("summary", { "data-testid": `${p}-toggle` }, e.protected ? "Protection (admins)" : "Protect this environment (admins)"), form);
}

// maxSplit is the most versions a split serves.
const maxSplit = 5;

// splitProblem checks a split's entries [{versionId, weight}] as the server
// does, and returns the problem to show, or "".
export function splitProblem(entries) {
  if (entries.length < 2 || entries.length > maxSplit) {
    return `A split serves 2 to ${maxSplit} versions.`;
  }
  if (new Set(entries.map((e) => e.versionId)).size !== entries.length) {
    return "Each version may appear once.";
  }
  if (entries.some((e) => !Number.isInteger(e.weight) || e.weight < 1 || e.weight > 99)) {
    return "Each weight is a whole number from 1 to 99.";
  }
  const sum = entries.reduce((n, e) => n + e.weight, 0);
  return sum === 100 ? "" : `The weights sum to ${sum}, not 100.`;
}

// splitForm edits a split of the environment: rows of a version and its
// weight in percent (starting from the active split, if any), whose sum is
// shown and checked as it is typed; Publish split publishes it.
function splitForm(c, e, versions, active, reload, report) {
  const id = `env-${e.name}-split`;
  const body = h("tbody", { "data-testid": `${id}-rows` });
  const sum = h("p", { className: "hint", "aria-live": "polite", "data-testid": `${id}-sum` });
  const addRow = (versionId, weight) => {
    const select = h("select", { className: "split-version", "aria-label": "Version" }, versionOptions(versions, versionId));
    const input = h("input", { className: "split-weight", type: "number", min: "1", max: "99", step: "1", value: String(weight), "aria-label": "Weight (%)" });
    input.addEventListener("input", check);
    select.addEventListener("change", check);
    const row = h("tr", null, h("td", null, select), h("td", null, input),
      h("td", null, h("button", { type: "button", className: "split-remove", onclick: () => { row.remove(); check(); } }, "Remove")));
    body.append(row);
  };
  const entries = () => [...body.querySelectorAll("tr")].map((tr) => ({
    versionId: tr.querySelector(".split-version").value,
    weight: Number(tr.querySelector(".split-weight").value),
  }));
  function check() {
    const problem = splitProblem(entries());
    const total = entries().reduce((n, x) => n + (Number.isFinite(x.weight) ? x.weight : 0), 0);
    sum.textContent = problem || `The weights sum to ${total}.`;
    sum.dataset.state = problem ? "error" : "ok";
    add.disabled = body.children.length >= maxSplit;
    return problem;
  }
  const add = h("button", { type: "button", "data-testid": `${id}-add`, onclick: () => {
    const used = new Set(entries().map((x) => x.versionId));
    const next = versions.find((v) => !used.has(v.id)) || versions[0];
    addRow(next.id, 0);
    check();
  } }, "Add version");
  for (const x of active || [{ versionId: versions[0].id, weight: 50 }, { versionId: versions[1].id, weight: 50 }]) {
    addRow(x.versionId, x.weight);
  }
  const form = h("form", { "data-testid": `${id}-form` },
    h("table", null, h("thead", null, h("tr", null, h("th", { scope: "col" }, "Version"), h("th", { scope: "col" }, "Weight (%)"), h("th", null, ""))), body),
    sum,
    h("div", { className: "actions" }, add,
      h("button", { type: "submit", className: "primary", "data-testid": `${id}-publish` }, "Publish split")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (check()) {
      return;
    }
    try {
      await request("POST", "/environment/publish", { resourceType: "prompt", resourceId: c.id, envName: e.name, split: entries() });
      await reload(`Published a split to ${e.name}.`);
    } catch (err) {
      report(err);
    }
  });
  check();
  return h("details", { className: "split", open: !!active },
    h("summary", { "data-testid": `${id}-toggle` }, active ? "Split traffic (active)" : "Split traffic between versions"), form);
}

// splitStatsTable shows the results of each variant of the active split.
function splitStatsTable(testid, stats, titles) {
  const ms = (v) => (v === null || v === undefined ? "—" : `${v} ms`);
  return [h("h4", null, "Results per variant"), table(testid, [
    { label: "Variant", cell: (v) => String(v.variant) },
    { label: "Version", cell: (v) => h("a", { href: `#/versions/${v.versionId}` }, titles.get(v.versionId) || v.versionId) },
    { label: "Weight", cell: (v) => `${v.weight} %` },
    { label: "Runs", cell: (v) => String(v.runs) },
    { label: "Errors", cell: (v) => String(v.errors) },
    { label: "Latency p50 / p95", cell: (v) => `${ms(v.latencyP50Ms)} / ${ms(v.latencyP95Ms)}` },
    { label: "Cost", cell: (v) => money({ total: v.cost }) },
    { label: "Feedback", cell: (v) => (v.feedbackCount ? `${v.feedbackMean.toFixed(2)} (${v.feedbackCount})` : "—") },
  ], stats.variants, "No runs yet.")];
}

// requestControl asks, after a publish to a protected environment was
// refused (APPROVAL_REQUIRED), for a publication request of the version
// that other people approve.
function requestControl(c, e, versionId, titles, reload, report) {
  return h("button", { type: "button", className: "primary", "data-testid": `env-${e.name}-request`, onclick: async (ev) => {
    ev.currentTarget.disabled = true;
    try {
      await reload(await createRequest(c, e, versionId, "", titles));
    } catch (err) {
      report(err);
    }
  } }, "Request publication");
}

// deleteControl deletes a custom environment after a second, explicit
// press (no dialog, so it works the same from the keyboard).
function deleteControl(e, reload, report) {
  const holder = h("span", { className: "actions" });
  const ask = h("button", { type: "button", className: "danger", "data-testid": `env-${e.name}-delete`, onclick: () => {
    const yes = h("button", { type: "button", className: "danger", "data-testid": `env-${e.name}-delete-confirm`, onclick: async () => {
      try {
        await request("DELETE", `/environment/${encodeURIComponent(e.id)}`);
        await reload(`Deleted the environment ${e.name}.`);
      } catch (err) {
        report(err);
      }
    } }, `Delete ${e.name} and its history`);
    const no = h("button", { type: "button", onclick: () => { holder.replaceChildren(ask); ask.focus(); } }, "Keep it");
    holder.replaceChildren(yes, no);
    yes.focus();
  } }, "Delete environment");
  holder.append(ask);
  return holder;
}

// newEnvironmentForm creates a custom environment; the name is checked
// as it is typed, with the rule shown beside it.
function newEnvironmentForm(canvasId, reload) {
  const input = h("input", { id: "new-env-name", type: "text", required: true, autocomplete: "off", spellcheck: "false",
    "data-testid": "new-env-name", "aria-describedby": "new-env-rule new-env-error" });
  const error = h("p", { className: "error", id: "new-env-error", "data-testid": "new-env-error", "aria-live": "polite" });
  const out = h("div", { id: "new-env-result" });
  const check = () => {
    const problem = input.value === "" ? "" : customNameProblem(input.value);
    error.textContent = problem;
    input.setAttribute("aria-invalid", problem ? "true" : "false");
    return problem;
  };
  input.addEventListener("input", check);
  const form = h("form", { className: "fields", id: "new-env-form", "data-testid": "new-env-form" },
    h("label", { for: "new-env-name" }, "Name"), input,
    h("p", { className: "hint full", id: "new-env-rule" }, nameRule),
    h("div", { className: "full" }, error),
    h("div", { className: "full actions" },
      h("button", { type: "submit", className: "primary", id: "create-env", "data-testid": "create-env" }, "Create environment")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    out.replaceChildren();
    const problem = customNameProblem(input.value);
    if (problem) {
      error.textContent = problem;
      input.setAttribute("aria-invalid", "true");
      input.focus();
      return;
    }
    try {
      const e = await request("POST", "/environment", { resourceType: "prompt", resourceId: canvasId, name: input.value.replace(nameSpace, "") });
      await reload(`Created the environment ${e.name}.`);
    } catch (err) {
      out.replaceChildren(errorBox(err));
    }
  });
  return h("section", { className: "panel", "aria-labelledby": "new-env-title" },
    h("h3", { id: "new-env-title" }, "New environment"), form, out);
}

// environmentView shows one environment's whole publication history,
// newest first, a page at a time, with Roll back on earlier publications.
export async function environmentView(canvasId, envName, offset = 0, notice) {
  const page = await historyPage(canvasId, envName, offset);
  const rows = (page && page.data) || [];
  const total = (page && page.meta && page.meta.totalCount) || 0;
  const section = h("section", { "aria-labelledby": "environment-title" });
  const status = h("div", { role: "status", "data-testid": "environment-result" },
    notice ? h("p", { className: "result", "data-state": "saved" }, notice) : null);
  const go = async (o, text) => section.replaceWith(await environmentView(canvasId, envName, o, text));
  section.append(
    h("p", null, h("a", { href: `#/canvases/${canvasId}` }, "← Canvas"), " · ",
      h("a", { href: `#/canvases/${canvasId}/environments` }, "All environments")),
    h("h2", { id: "environment-title" }, `Environment ${envName}`),
    status,
    h("h3", null, "Publication history"),
    historyTable("history-table", canvasId, envName, rows, (text) => go(0, text), (err) => status.replaceChildren(errorBox(err))),
    h("div", { className: "pager" },
      h("button", { type: "button", disabled: offset <= 0, onclick: () => go(Math.max(0, offset - historyPageSize)) }, "Previous"),
      h("span", null, total === 0 ? "" : `${offset + 1}–${offset + rows.length} of ${total}`),
      h("button", { type: "button", disabled: offset + rows.length >= total, onclick: () => go(offset + historyPageSize) }, "Next")));
  return section;
}
