// variables.js builds the form of a version's variables, one field per
// variable by its type, for the playground and the test cases: text,
// number, boolean (a checkbox), JSON (checked before it is sent) and file
// (uploaded in the files API's two steps and given as vault://<id>).

import { request, ApiError } from "./api.js";
import { h } from "./dom.js";

// compatibilityDate is the x-compatibility-date the file calls send.
const compatibilityDate = "2025-01-01";

// variableField builds the input of one variable by its type, numbered i
// and its ids prefixed by prefix ("var" gives #var-0), holding initial
// when given (a file variable keeps it until other files are chosen).
// check returns the problem with the value on screen, or ""; value
// returns what is sent (undefined when the field is left empty),
// uploading files first.
export function variableField(v, i, prefix = "var", initial = undefined) {
  const id = `${prefix}-${i}`;
  const label = h("label", { for: id }, h("span", { className: "mono" }, v.name), v.required ? " (required)" : "", h("span", { className: "hint" }, ` ${v.type}`));
  const hint = v.description ? h("p", { className: "hint", id: `${id}-hint` }, v.description) : null;
  const err = h("p", { className: "error", id: `${id}-error`, "data-testid": `${prefix}-error-${v.name}`, "aria-live": "polite" });
  const describedBy = [v.description ? `${id}-hint` : "", `${id}-error`].filter(Boolean).join(" ");
  let input;
  let read;
  switch (v.type) {
    case "number":
      input = h("input", { id, type: "number", step: "any", "aria-describedby": describedBy });
      read = () => (input.value === "" ? undefined : Number(input.value));
      break;
    case "boolean":
      input = h("input", { id, type: "checkbox", "aria-describedby": describedBy });
      read = () => input.checked;
      break;
    case "json":
      input = h("textarea", { id, rows: "3", className: "code", spellcheck: "false", "aria-describedby": describedBy, placeholder: '{"key": "value"}' });
      read = () => (input.value.trim() === "" ? undefined : JSON.parse(input.value));
      break;
    case "file":
      input = h("input", { id, type: "file", multiple: true, "aria-describedby": describedBy });
      read = undefined;
      break;
    default:
      input = h("input", { id, type: "text", size: "60", "aria-describedby": describedBy });
      read = () => (input.value === "" ? undefined : input.value);
  }
  input.setAttribute("data-testid", `${prefix}-input-${v.name}`);
  input.setAttribute("name", v.name);
  let kept = null;
  if (initial !== undefined && initial !== null) {
    switch (v.type) {
      case "boolean":
        input.checked = initial === true;
        break;
      case "json":
        input.value = JSON.stringify(initial, null, 2);
        break;
      case "file":
        kept = h("p", { className: "hint", "data-testid": `${prefix}-kept-${v.name}` },
          `Now: ${[].concat(initial).map((f) => (f && (f.file_url || f.fileUrl)) || JSON.stringify(f)).join(", ")} (choose files to replace)`);
        break;
      default:
        input.value = typeof initial === "string" ? initial : JSON.stringify(initial);
    }
  }
  const check = () => {
    let problem = "";
    if (v.type === "json" && input.value.trim() !== "") {
      try {
        JSON.parse(input.value);
      } catch (e) {
        problem = `${v.name} is not valid JSON: ${e.message}.`;
      }
    } else if (v.type === "number" && input.value === "" && input.validity && input.validity.badInput) {
      problem = `${v.name} must be a number.`;
    }
    if (!problem && v.required && v.type !== "boolean") {
      const empty = v.type === "file" ? input.files.length === 0 && !kept : input.value.trim() === "";
      if (empty) {
        problem = `${v.name} is required.`;
      }
    }
    err.textContent = problem;
    input.setAttribute("aria-invalid", problem ? "true" : "false");
    return problem;
  };
  input.addEventListener(v.type === "file" || v.type === "boolean" ? "change" : "input", () => {
    if (input.getAttribute("aria-invalid") === "true") {
      check();
    }
  });
  const value = async (progress) => {
    if (v.type !== "file") {
      return read();
    }
    const files = [...input.files];
    if (!files.length) {
      return kept ? initial : undefined;
    }
    const refs = [];
    for (const f of files) {
      progress(`Uploading ${f.name}…`);
      refs.push({ file_url: `vault://${await upload(f)}` });
    }
    return refs.length === 1 ? refs[0] : refs;
  };
  // show puts a problem the server found at the field.
  const show = (problem) => {
    err.textContent = problem;
    input.setAttribute("aria-invalid", "true");
  };
  return { name: v.name, check, value, show, input, nodes: [label, h("div", null, input, kept, hint, err)] };
}

// upload sends a file in the two steps of the files API: POST /v3/files
// for an id and an upload URL, then PUT of the bytes there. The URL is
// used by its path and query on this origin: the console is served by the
// same server, and its Content-Security-Policy allows no other origin
// (the server's base URL may name another host, a proxy's say).
async function upload(file) {
  const created = await request("POST", "/v3/files", { fileName: file.name }, { "x-compatibility-date": compatibilityDate });
  const url = new URL(created.uploadUrl, location.href);
  const resp = await fetch(url.pathname + url.search, {
    method: "PUT", credentials: "omit", cache: "no-store",
    headers: { "Content-Type": file.type || "application/octet-stream" },
    body: file,
  });
  if (!resp.ok) {
    let data = null;
    try {
      data = await resp.json();
    } catch {
      data = null;
    }
    throw new ApiError(resp.status, data);
  }
  return created.id;
}
