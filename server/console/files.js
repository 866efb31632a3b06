// files.js lists the workspace's files with their status and size, a page
// at a time.

import { request, query } from "./api.js";
import { h, table, when, badge, filteredPages } from "./dom.js";
import { text, bytes } from "./format.js";

const pageSize = 20;

// compatibilityDate is the x-compatibility-date the console's file reads
// send: the first dated behaviour of the file operations.
const compatibilityDate = "2025-01-01";

// filesView is the Files page.
export async function filesView() {
  const list = await filteredPages("files", ["pending", "uploaded"], filesPage);
  return h("section", { "aria-labelledby": "files-title" },
    h("h2", { id: "files-title" }, "Files"),
    h("p", { className: "hint" }, "Files uploaded through POST /v3/files, newest first. A pending file's upload address has not been used yet; it is removed when the address expires."),
    list);
}

async function filesPage(status, offset, load) {
  const page = await request("GET", `/v3/files${query({ status, limit: pageSize, offset })}`, undefined, { "x-compatibility-date": compatibilityDate });
  const rows = (page && page.data) || [];
  const total = (page && page.meta && page.meta.totalCount) || 0;
  return h("div", null,
    table("files-table", [
      { label: "Name", cell: (f) => h("span", { "data-testid": `file-${f.id}` }, text(f.fileName)) },
      { label: "Status", cell: (f) => badge(f.status) },
      { label: "Size", cell: (f) => (f.status === "uploaded" ? bytes(f.size) : "—") },
      { label: "Type", cell: (f) => text(f.mimeType) },
      { label: "Created", cell: (f) => when(f.createdAt) },
      { label: "Uploaded", cell: (f) => when(f.uploadedAt) },
      { label: "Address", cell: (f) => h("code", { className: "mono" }, `vault://${f.id}`) },
    ], rows, "No files yet."),
    h("div", { className: "pager" },
      h("button", { type: "button", disabled: offset <= 0, onclick: () => load(Math.max(0, offset - pageSize)) }, "Previous"),
      h("span", null, total === 0 ? "" : `${offset + 1}–${offset + rows.length} of ${total}`),
      h("button", { type: "button", disabled: offset + rows.length >= total, onclick: () => load(offset + pageSize) }, "Next")));
}
