// diff.js compares two versions side by side: their messages line by line,
// their variables, and their configuration. compareView diffs two versions
// it reads; versionDiffView renders the server's diff of two versions
// (GET /prompt-version/{id}/diff) with the same tables.

import { request, query } from "./api.js";
import { h } from "./dom.js";
import { versionOptions } from "./canvases.js";

// maxCells bounds the work of one line diff: past it (two texts of some
// thousands of changed lines each) the changed middle is shown as removed
// then added instead of aligned.
const maxCells = 4_000_000;

// lineDiff returns the edit script from the lines of a to those of b, as
// {op: "same"|"del"|"add", a?, b?} items, by the longest common
// subsequence of lines. The common head and tail are matched first, so
// that the table is only built over the lines that differ.
export function lineDiff(a, b) {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) {
    start++;
  }
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const head = a.slice(0, start).map((line) => ({ op: "same", a: line, b: line }));
  const tail = a.slice(endA).map((line) => ({ op: "same", a: line, b: line }));
  const ma = a.slice(start, endA);
  const mb = b.slice(start, endB);
  return [...head, ...middleDiff(ma, mb), ...tail];
}

// middleDiff aligns two runs of lines with an LCS table, or gives up and
// removes one then adds the other when the table would be too large.
function middleDiff(a, b) {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0 || (n + 1) * (m + 1) > maxCells) {
    return [...a.map((line) => ({ op: "del", a: line })), ...b.map((line) => ({ op: "add", b: line }))];
  }
  // lcs[i][j] is the LCS length of a[i:] and b[j:], stored row by row.
  const w = m + 1;
  const lcs = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * w + j] = a[i] === b[j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ op: "same", a: a[i], b: b[j] });
      i++;
      j++;
    } else if (lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
      out.push({ op: "del", a: a[i++] });
    } else {
      out.push({ op: "add", b: b[j++] });
    }
  }
  while (i < n) {
    out.push({ op: "del", a: a[i++] });
  }
  while (j < m) {
    out.push({ op: "add", b: b[j++] });
  }
  return out;
}

// sideBySide pairs an edit script into rows of a left and a right line:
// a run of removals next to the run of additions that follows it reads as
// changed lines.
export function sideBySide(script) {
  const rows = [];
  let la = 0;
  let lb = 0;
  for (let k = 0; k < script.length;) {
    if (script[k].op === "same") {
      rows.push({ kind: "same", left: { no: ++la, text: script[k].a }, right: { no: ++lb, text: script[k].b } });
      k++;
      continue;
    }
    const dels = [];
    const adds = [];
    while (k < script.length && script[k].op === "del") {
      dels.push(script[k++].a);
    }
    while (k < script.length && script[k].op === "add") {
      adds.push(script[k++].b);
    }
    for (let x = 0; x < Math.max(dels.length, adds.length); x++) {
      const left = x < dels.length ? { no: ++la, text: dels[x] } : null;
      const right = x < adds.length ? { no: ++lb, text: adds[x] } : null;
      rows.push({ kind: left && right ? "change" : left ? "del" : "add", left, right });
    }
  }
  return rows;
}

// sides are the column labels of the two sides of a diff.
const leftRight = ["Left", "Right"];

// diffTable renders two texts' line diff as a two-sided table, whose sides
// are labelled sides.
function diffTable(testid, left, right, sides = leftRight) {
  const rows = sideBySide(lineDiff(splitLines(left), splitLines(right)));
  const changed = rows.filter((r) => r.kind !== "same").length;
  const cell = (side, cls) => [
    h("td", { className: "ln" }, side ? String(side.no) : ""),
    h("td", { className: `code-cell ${side ? cls : "empty"}` }, side ? side.text : ""),
  ];
  return h("div", null,
    h("p", { className: "hint", "data-testid": `${testid}-summary` }, changed ? `${changed} changed line${changed === 1 ? "" : "s"}` : "No change."),
    h("table", { className: "diff", "data-testid": testid },
      h("thead", null, h("tr", null, h("th", { scope: "col", className: "ln" }, "#"), h("th", { scope: "col" }, sides[0]),
        h("th", { scope: "col", className: "ln" }, "#"), h("th", { scope: "col" }, sides[1]))),
      h("tbody", null, rows.map((r) => h("tr", { className: `diff-${r.kind}`, "data-kind": r.kind },
        cell(r.left, r.kind === "same" ? "" : "removed"), cell(r.right, r.kind === "same" ? "" : "added"))))));
}

function splitLines(text) {
  return text === "" ? [] : text.split(/\r?\n/);
}

// stableJSON writes v as indented JSON with object keys sorted, so that
// equal configurations print the same.
export function stableJSON(v) {
  const sort = (x) => {
    if (Array.isArray(x)) {
      return x.map(sort);
    }
    if (x && typeof x === "object") {
      return Object.fromEntries(Object.keys(x).sort().map((k) => [k, sort(x[k])]));
    }
    return x;
  };
  return JSON.stringify(sort(v === undefined ? {} : v), null, 2);
}

// compareView compares version a (left) with version b (right).
export async function compareView(canvasId, aId, bId) {
  const [a, b, versions] = await Promise.all([
    request("GET", `/prompt-version/${encodeURIComponent(aId)}`),
    request("GET", `/prompt-version/${encodeURIComponent(bId)}`),
    request("GET", `/prompt-version${query({ promptId: canvasId })}`),
  ]);
  const left = h("select", { id: "diff-left", "data-testid": "diff-left" }, versionOptions(versions || [], a.id));
  const right = h("select", { id: "diff-right", "data-testid": "diff-right" }, versionOptions(versions || [], b.id));
  const picker = h("form", { className: "actions", id: "diff-form" },
    h("label", { for: "diff-left" }, "Left"), left,
    h("label", { for: "diff-right" }, "Right"), right,
    h("button", { type: "submit" }, "Compare"),
    h("button", { type: "button", "data-testid": "diff-swap", onclick: () => { location.hash = `#/canvases/${canvasId}/compare/${b.id}/${a.id}`; } }, "Swap"));
  picker.addEventListener("submit", (ev) => {
    ev.preventDefault();
    location.hash = `#/canvases/${canvasId}/compare/${left.value}/${right.value}`;
  });
  const am = a.messages || [];
  const bm = b.messages || [];
  const messageDiffs = [];
  for (let i = 0; i < Math.max(am.length, bm.length); i++) {
    const ma = am[i];
    const mb = bm[i];
    const role = ma && mb && ma.role !== mb.role ? `${ma.role} → ${mb.role}` : (ma || mb).role;
    messageDiffs.push(h("div", { className: "diff-block", "data-testid": `diff-message-${i}` },
      h("h4", null, `Message #${i} (${role})`, !ma ? " — only on the right" : !mb ? " — only on the left" : ""),
      diffTable(`diff-message-${i}-table`, ma ? ma.content : "", mb ? mb.content : "")));
  }
  return h("section", { "aria-labelledby": "diff-title", "data-testid": "diff" },
    h("p", null, h("a", { href: `#/canvases/${canvasId}` }, "← Canvas")),
    h("h2", { id: "diff-title" }, "Compare versions"),
    picker,
    h("div", { className: "diff-heads" },
      h("div", null, h("a", { href: `#/versions/${a.id}`, "data-testid": "diff-left-title" }, a.title), h("span", { className: "hint" }, ` #${a.versionIndex || "?"}`)),
      h("div", null, h("a", { href: `#/versions/${b.id}`, "data-testid": "diff-right-title" }, b.title), h("span", { className: "hint" }, ` #${b.versionIndex || "?"}`))),
    h("h3", null, "Messages"),
    messageDiffs.length ? messageDiffs : h("p", { className: "hint" }, "Neither version has messages."),
    h("h3", null, "Variables"),
    variablesDiff(a.variables || [], b.variables || []),
    h("h3", null, "Configuration"),
    diffTable("diff-configuration", stableJSON(a.configuration), stableJSON(b.configuration)));
}

// variablesDiff lists every variable of either side with its definition on
// each, and whether it was added, removed, changed or kept.
function variablesDiff(av, bv) {
  const names = [...new Set([...av.map((v) => v.name), ...bv.map((v) => v.name)])];
  if (!names.length) {
    return h("p", { className: "hint", "data-testid": "diff-variables-empty" }, "Neither version declares variables.");
  }
  const same = (x, y) => stableJSON(x) === stableJSON(y);
  return changesTable("diff-variables", "Variable", "data-variable", names.map((n) => {
    const x = av.find((v) => v.name === n);
    const y = bv.find((v) => v.name === n);
    return { key: n, x, y, kind: !x ? "add" : !y ? "del" : same(x, y) ? "same" : "change" };
  }), showVariable, leftRight);
}

// showVariable describes a variable's definition, or a dash.
function showVariable(v) {
  return v ? `${v.type}${v.required ? ", required" : ""}${v.description ? ` — ${v.description}` : ""}` : "—";
}

// changesTable lists rows {key, x, y, kind} (kind: add, del, change or
// same) as the key (also in the row's attribute keyAttr), each side shown
// by show, and the change in words.
function changesTable(testid, keyLabel, keyAttr, rows, show, sides) {
  const word = { add: "added", del: "removed", same: "", change: "changed" };
  return h("table", { className: "diff", "data-testid": testid },
    h("thead", null, h("tr", null, [keyLabel, ...sides, "Change"].map((l) => h("th", { scope: "col" }, l)))),
    h("tbody", null, rows.map((r) => h("tr", { className: `diff-${r.kind}`, "data-kind": r.kind, [keyAttr]: r.key },
      h("td", { className: "mono" }, r.key), h("td", { className: r.x !== undefined && r.kind !== "same" && r.kind !== "add" ? "removed" : "" }, show(r.x)),
      h("td", { className: r.y !== undefined && r.kind !== "same" && r.kind !== "del" ? "added" : "" }, show(r.y)), h("td", null, word[r.kind])))));
}

// kinds maps the server's change words to the tables' row kinds.
const kinds = { added: "add", removed: "del", changed: "change" };

// versionDiffView renders a VersionDiff as the server answers it (what
// changes from againstId to versionId: messages by position, variables by
// name, configuration values by JSON pointer), with the sides labelled
// sides ([before, after]).
export function versionDiffView(d, sides) {
  if (d.identical) {
    return h("p", { className: "hint", "data-testid": "diff-identical" }, "No difference of messages, variables or configuration.");
  }
  const side = (v) => (v === null || v === undefined ? undefined : v);
  return h("div", { "data-testid": "version-diff" },
    h("h3", null, "Messages"),
    d.messages.length ? d.messages.map((m) => {
      const role = m.before && m.after && m.before.role !== m.after.role ? `${m.before.role} → ${m.after.role}` : (m.after || m.before).role;
      return h("div", { className: "diff-block", "data-testid": `diff-message-${m.index}` },
        h("h4", null, `Message #${m.index} (${role})`, m.change === "changed" ? "" : ` — ${m.change}`),
        diffTable(`diff-message-${m.index}-table`, m.before ? m.before.content : "", m.after ? m.after.content : "", sides));
    }) : h("p", { className: "hint", "data-testid": "diff-messages-same" }, "The messages are the same."),
    h("h3", null, "Variables"),
    d.variables.length
      ? changesTable("diff-variables", "Variable", "data-variable", d.variables.map((v) => ({ key: v.name, x: side(v.before), y: side(v.after), kind: kinds[v.change] })), showVariable, sides)
      : h("p", { className: "hint", "data-testid": "diff-variables-same" }, "The variables are the same."),
    h("h3", null, "Configuration"),
    d.configuration.length
      ? changesTable("diff-configuration", "Setting", "data-setting", d.configuration.map((c) => ({ key: c.path || "/", x: c.change === "added" ? undefined : c.before,
        y: c.change === "removed" ? undefined : c.after, kind: kinds[c.change] })), (v) => (v === undefined ? "—" : stableJSON(v)), sides)
      : h("p", { className: "hint", "data-testid": "diff-configuration-same" }, "The configuration is the same."));
}
