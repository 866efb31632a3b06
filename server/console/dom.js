// dom.js builds elements without innerHTML, so that no value from the API
// is ever parsed as markup.

// h creates an element: attrs sets properties (on*, className, hidden...)
// or attributes (data-*, aria-*, for, role...); children are nodes, strings
// or arrays of them; null and undefined are skipped.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) {
      continue;
    }
    if (k.startsWith("on") && typeof v === "function") {
      el.addEventListener(k.slice(2).toLowerCase(), v);
    } else if (k === "className" || k === "value" || k === "checked" || k === "hidden" || k === "disabled" || k === "selected") {
      el[k] = v;
    } else {
      el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) {
      continue;
    }
    if (Array.isArray(c)) {
      append(el, c);
    } else {
      el.append(c instanceof Node ? c : String(c));
    }
  }
}

// table builds a table: columns are {label, cell(row) -> node|string};
// empty is the text shown when there are no rows.
export function table(testid, columns, rows, empty) {
  if (!rows || rows.length === 0) {
    return h("p", { className: "hint", "data-testid": `${testid}-empty` }, empty);
  }
  return h("table", { "data-testid": testid },
    h("thead", null, h("tr", null, columns.map((c) => h("th", { scope: "col" }, c.label)))),
    h("tbody", null, rows.map((r) => h("tr", null, columns.map((c) => h("td", null, c.cell(r)))))));
}

// when formats a timestamp for people, or a dash.
export function when(ts) {
  if (!ts) {
    return "—";
  }
  const d = new Date(ts);
  return Number.isNaN(d.getTime()) ? String(ts) : d.toLocaleString();
}

// errorBox shows a failure in a way screen readers announce.
export function errorBox(err) {
  return h("p", { className: "error", role: "alert", "data-testid": "error" }, err && err.message ? err.message : String(err));
}

// badge shows a short status word.
export function badge(text, kind) {
  return h("span", { className: `badge ${kind || text}` }, text);
}

// filteredPages renders a paged list with a status filter and a Refresh
// button: name prefixes the elements' ids ("runs" gives #runs,
// #runs-status, #runs-refresh); page(status, offset, load) returns the node
// of one page and calls load(offset) to show another. The filter starts on
// initial ("": any status). A failure to load shows in the list only.
export async function filteredPages(name, statuses, page, initial = "") {
  const holder = h("div", { id: name, "data-testid": name });
  const status = h("select", { id: `${name}-status`, "data-testid": `${name}-status` },
    ["", ...statuses].map((s) => h("option", { value: s, selected: s === initial }, s || "any")));
  const load = async (offset) => {
    try {
      holder.replaceChildren(await page(status.value, offset, load));
    } catch (err) {
      holder.replaceChildren(errorBox(err));
    }
  };
  status.addEventListener("change", () => load(0));
  await load(0);
  return h("div", null,
    h("div", { className: "actions" },
      h("label", { for: `${name}-status` }, "Status"), status,
      h("button", { type: "button", id: `${name}-refresh`, onclick: () => load(0) }, "Refresh")),
    holder);
}

// submitOnCtrlEnter lets Ctrl+Enter (or Cmd+Enter) submit form from a
// text area too, where Enter alone starts a new line.
export function submitOnCtrlEnter(form) {
  form.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey) && ev.target.tagName === "TEXTAREA") {
      ev.preventDefault();
      form.requestSubmit();
    }
  });
}
