// deliveries.js is the delivery log of one application: each notification
// with its status, its attempts on demand, and a Redeliver button.

import { request, query } from "./api.js";
import { h, table, when, badge, errorBox, filteredPages } from "./dom.js";

const pageSize = 20;

// deliveriesTab renders the log's first page and pages on from there.
export async function deliveriesTab(app) {
  return filteredPages("deliveries", ["pending", "succeeded", "failed"],
    (status, offset, load) => deliveriesPage(app, status, offset, load));
}

async function deliveriesPage(app, status, offset, load) {
  const page = await request("GET", `/webhooks/deliveries${query({ applicationId: app.id, status, limit: pageSize, offset })}`);
  const rows = (page && page.data) || [];
  const meta = (page && page.meta) || { totalCount: rows.length, offset };
  const body = h("tbody");
  for (const d of rows) {
    const detail = h("tr", { hidden: true, className: "attempts-row" }, h("td", { colspan: "5" }));
    const redeliver = h("button", { type: "button", "data-testid": `redeliver-${d.id}`, onclick: async () => {
      redeliver.disabled = true;
      try {
        await request("POST", `/webhooks/deliveries/${d.id}/redeliver`);
        await load(offset);
      } catch (err) {
        detail.hidden = false;
        detail.firstChild.replaceChildren(errorBox(err));
        redeliver.disabled = false;
      }
    } }, "Redeliver");
    const expand = h("button", { type: "button", "aria-expanded": "false", "data-testid": `attempts-${d.id}`, onclick: async () => {
      if (!detail.hidden) {
        detail.hidden = true;
        expand.setAttribute("aria-expanded", "false");
        return;
      }
      try {
        const full = await request("GET", `/webhooks/deliveries/${d.id}`);
        detail.firstChild.replaceChildren(attemptsTable(full.attempts || []));
      } catch (err) {
        detail.firstChild.replaceChildren(errorBox(err));
      }
      detail.hidden = false;
      expand.setAttribute("aria-expanded", "true");
    } }, "Attempts");
    body.append(
      h("tr", { "data-testid": `delivery-${d.id}` },
        h("td", null, h("span", { className: "mono" }, d.eventType)),
        h("td", null, badge(d.status), d.lastError ? h("div", { className: "hint" }, d.lastError) : null),
        h("td", null, String(d.attemptCount ?? 0)),
        h("td", null, when(d.createdAt)),
        h("td", null, h("div", { className: "actions" }, expand, redeliver))),
      detail);
  }
  const list = rows.length === 0
    ? h("p", { className: "hint", "data-testid": "deliveries-empty" }, "No deliveries yet.")
    : h("table", { "data-testid": "deliveries-table" },
      h("thead", null, h("tr", null, ["Event", "Status", "Attempts", "Time", "Actions"].map((c) => h("th", { scope: "col" }, c)))),
      body);
  const total = meta.totalCount ?? rows.length;
  return h("div", null, list,
    h("div", { className: "pager" },
      h("button", { type: "button", disabled: offset <= 0, onclick: () => load(Math.max(0, offset - pageSize)) }, "Previous"),
      h("span", null, total === 0 ? "" : `${offset + 1}–${offset + rows.length} of ${total}`),
      h("button", { type: "button", disabled: offset + rows.length >= total, onclick: () => load(offset + pageSize) }, "Next")));
}

// attemptsTable lists every attempt of a delivery.
function attemptsTable(attempts) {
  return table("attempts-table", [
    { label: "#", cell: (a) => String(a.number) },
    { label: "Time", cell: (a) => when(a.at) },
    { label: "Status", cell: (a) => (a.statusCode ? String(a.statusCode) : "—") },
    { label: "Latency", cell: (a) => `${a.latencyMs} ms` },
    { label: "Error", cell: (a) => a.error || "" },
    { label: "Response", cell: (a) => h("pre", { className: "body" }, a.responseBody || "") },
  ], attempts, "No attempts yet.");
}
