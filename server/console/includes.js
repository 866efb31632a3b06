// includes.js reads the include tags of message content ({{> CANVAS_ID}},
// {{> CANVAS_ID@ENV}}, {{> CANVAS_ID@vN}}), shows them as links to the
// canvases they name, and previews a prompt with its includes resolved.

import { request, query } from "./api.js";
import { h } from "./dom.js";

// maxDepth and separator follow the server: includes nest at most 5 deep,
// and an included version's live messages are joined by a blank line.
const maxDepth = 5;
const separator = "\n\n";
const uuid = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const envName = /^[a-z0-9]+(-[a-z0-9]+)*$/;

// includeRefs returns the well-formed include tags of content in order,
// each as {canvasId, environment, versionIndex, text, start, end}; a "{{>"
// that is not one stays text, as on the server.
export function includeRefs(content) {
  const refs = [];
  let from = 0;
  for (;;) {
    const start = content.indexOf("{{>", from);
    if (start < 0) {
      return refs;
    }
    const close = content.indexOf("}}", start);
    if (close < 0) {
      return refs;
    }
    const end = close + 2;
    const ref = parseBody(content.slice(start + 3, close).trim());
    if (ref) {
      refs.push({ ...ref, text: content.slice(start, end), start, end });
    }
    from = end;
  }
}

function parseBody(body) {
  const at = body.indexOf("@");
  const id = at < 0 ? body : body.slice(0, at);
  if (!uuid.test(id)) {
    return null;
  }
  const ref = { canvasId: id.toLowerCase(), environment: "production", versionIndex: 0 };
  if (at < 0) {
    return ref;
  }
  const target = body.slice(at + 1);
  if (/^v[0-9]+$/.test(target)) {
    const n = Number(target.slice(1));
    if (n < 1 || String(n) !== target.slice(1)) {
      return null;
    }
    return { ...ref, environment: "", versionIndex: n };
  }
  if (!envName.test(target) || target.length > 64) {
    return null;
  }
  return { ...ref, environment: target };
}

// refTarget is the reference as written after the canvas id.
export function refTarget(ref) {
  return ref.versionIndex ? `v${ref.versionIndex}` : ref.environment;
}

// highlighted returns content as nodes, each include tag a link to the
// canvas it names (titled with the canvas's title when titles has it).
export function highlighted(content, titles) {
  const out = [];
  let last = 0;
  for (const ref of includeRefs(content)) {
    out.push(content.slice(last, ref.start));
    const title = titles && titles.get(ref.canvasId);
    out.push(h("a", { className: "include", href: `#/canvases/${ref.canvasId}`, "data-testid": "include-tag",
      title: `${title ? `Includes “${title}”` : "Includes a canvas"} as ${refTarget(ref)} serves it` }, ref.text));
    last = ref.end;
  }
  out.push(content.slice(last));
  return out;
}

// includedTitles reads the titles of the canvases messages include, as a
// map by id; a canvas the caller cannot read is left out.
export async function includedTitles(messages) {
  const ids = new Set();
  for (const m of messages) {
    includeRefs(m.content || "").forEach((r) => ids.add(r.canvasId));
  }
  const titles = new Map();
  await Promise.all([...ids].map(async (id) => {
    try {
      const c = await request("GET", `/prompt/${encodeURIComponent(id)}`);
      titles.set(id, c.title || id);
    } catch {
      // Shown by its id.
    }
  }));
  return titles;
}

// includesList lists the includes of messages, each linked to its canvas,
// or nothing when there are none.
export function includesList(messages, titles, testid) {
  const seen = new Map();
  for (const m of messages) {
    for (const r of includeRefs(m.content || "")) {
      seen.set(`${r.canvasId}@${refTarget(r)}`, r);
    }
  }
  if (!seen.size) {
    return null;
  }
  return h("ul", { className: "includes", "data-testid": testid },
    [...seen.values()].map((r) => h("li", null,
      h("a", { href: `#/canvases/${r.canvasId}`, "data-testid": `include-link-${r.canvasId}` }, (titles && titles.get(r.canvasId)) || r.canvasId),
      r.versionIndex ? ` at version ${r.versionIndex}` : ` as ${r.environment} serves it`)));
}

// resolveMessages returns messages with their includes replaced as the
// server replaces them: an environment's include by what it serves,
// resolved (GET /environment/version?resolve=true), a version index's by
// that version's live messages, whose own includes are resolved in turn.
// ownCanvas is the canvas of the messages, for the cycle check. A problem
// throws an Error naming the chain of includes.
export async function resolveMessages(messages, ownCanvas) {
  const cache = new Map();
  const out = [];
  for (const m of messages) {
    out.push({ role: m.role, content: await expand(m.content || "", [ownCanvas], 0, cache) });
  }
  return out;
}

async function expand(content, chain, depth, cache) {
  const refs = includeRefs(content);
  let text = "";
  let last = 0;
  for (const ref of refs) {
    const key = `${ref.canvasId}@${refTarget(ref)}`;
    const next = [...chain, key];
    const fail = (why) => new Error(`include chain ${next.join(" → ")}: ${why}`);
    if (depth + 1 > maxDepth) {
      throw fail(`includes nest deeper than ${maxDepth}`);
    }
    if (chain.some((c) => c && c.startsWith(ref.canvasId))) {
      throw fail("a cycle: the canvas includes itself");
    }
    if (!cache.has(key)) {
      cache.set(key, included(ref, next, depth, cache).catch((err) => {
        throw err.message.startsWith("include chain") ? err : fail(err.message);
      }));
    }
    text += content.slice(last, ref.start) + await cache.get(key);
    last = ref.end;
  }
  return text + content.slice(last);
}

// included is the text an include stands for.
async function included(ref, chain, depth, cache) {
  if (!ref.versionIndex) {
    const v = await request("GET", `/environment/version${query({ resourceType: "prompt", resourceId: ref.canvasId, envName: ref.environment, resolve: true })}`);
    return (v.resolvedMessages || []).map((m) => m.content).join(separator);
  }
  const versions = await request("GET", `/prompt-version${query({ promptId: ref.canvasId })}`);
  const found = (versions || []).find((v) => v.versionIndex === ref.versionIndex);
  if (!found) {
    throw new Error(`the canvas has no version ${ref.versionIndex}`);
  }
  const v = await request("GET", `/prompt-version/${encodeURIComponent(found.id)}`);
  const parts = [];
  for (const m of (v.messages || []).filter((x) => !x.deletedAt)) {
    parts.push(await expand(m.content || "", chain, depth + 1, cache));
  }
  return parts.join(separator);
}

// resolvedList shows resolved messages in order, each with its role.
export function resolvedList(messages, testid) {
  return h("ol", { className: "messages", "data-testid": testid },
    messages.map((m) => h("li", { className: "message", "data-role": m.role },
      h("div", { className: "message-head" }, h("span", { className: "badge role" }, m.role)),
      h("pre", { className: "code" }, m.content))));
}
