// graph.js draws a workflow run's graph as an SVG: nodes in layers by their
// depth in the DAG (the longest path from a node without inputs), edges as
// curves from a node's right side to the next one's left side. Each node
// shows its name, action and step status; activating it (click, Enter or
// Space) shows its step in the steps table.

import { plural } from "./format.js";

const svgNS = "http://www.w3.org/2000/svg";

// Layout sizes, in SVG units.
const nodeW = 168;
const nodeH = 52;
const gapX = 64;
const gapY = 22;
const pad = 12;

function el(tag, attrs, ...children) {
  const n = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) {
      n.setAttribute(k, String(v));
    }
  }
  for (const c of children) {
    if (c !== null && c !== undefined) {
      n.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
  }
  return n;
}

// layers returns the nodes' depths: a node's depth is one more than the
// deepest of its predecessors. A cycle (which a valid spec never has) is
// cut where it is met, so the layout always ends.
export function layers(nodes, edges) {
  const preds = new Map(nodes.map((n) => [n.id, []]));
  for (const e of edges || []) {
    const from = e.from && e.from.node;
    const to = e.to && e.to.node;
    if (preds.has(from) && preds.has(to)) {
      preds.get(to).push(from);
    }
  }
  const depth = new Map();
  const visiting = new Set();
  const visit = (id) => {
    if (depth.has(id)) {
      return depth.get(id);
    }
    if (visiting.has(id)) {
      return 0;
    }
    visiting.add(id);
    let d = 0;
    for (const p of preds.get(id)) {
      d = Math.max(d, visit(p) + 1);
    }
    visiting.delete(id);
    depth.set(id, d);
    return d;
  };
  nodes.forEach((n) => visit(n.id));
  return depth;
}

// clip shortens text to n characters for a node's label.
function clip(text, n) {
  const s = String(text || "");
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

// showStep brings a step's row of the steps table into view and focus;
// the hash stays the run's, since the router reads it.
function showStep(id) {
  const target = document.getElementById(`step-${id}`);
  if (target) {
    target.scrollIntoView({ block: "center" });
    target.focus();
  }
}

// runGraph returns the SVG of graph ({nodes, edges}, nodes enriched with
// their step's status), or null when it has no nodes. Nodes keep the
// order of the graph inside their layer.
export function runGraph(graph) {
  const nodes = (graph && graph.nodes) || [];
  if (nodes.length === 0) {
    return null;
  }
  const edges = (graph && graph.edges) || [];
  const depth = layers(nodes, edges);
  const columns = [];
  for (const n of nodes) {
    const d = depth.get(n.id);
    (columns[d] = columns[d] || []).push(n);
  }
  const pos = new Map();
  const tallest = Math.max(...columns.map((c) => (c ? c.length : 0)));
  const height = pad * 2 + tallest * nodeH + (tallest - 1) * gapY;
  columns.forEach((col, d) => {
    if (!col) {
      return;
    }
    const colH = col.length * nodeH + (col.length - 1) * gapY;
    const top = (height - colH) / 2;
    col.forEach((n, i) => pos.set(n.id, { x: pad + d * (nodeW + gapX), y: top + i * (nodeH + gapY) }));
  });
  const width = pad * 2 + columns.length * nodeW + (columns.length - 1) * gapX;

  const svg = el("svg", {
    viewBox: `0 0 ${width} ${height}`, width, height, class: "graph", role: "img",
    "aria-labelledby": "graph-title", "data-testid": "run-graph",
  }, el("title", { id: "graph-title" }, `Workflow graph: ${plural(nodes.length, "step", "steps")} in ${plural(columns.length, "layer", "layers")}`),
  el("defs", null, el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
    el("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "graph-arrow" }))));

  for (const e of edges) {
    const a = pos.get(e.from && e.from.node);
    const b = pos.get(e.to && e.to.node);
    if (!a || !b) {
      continue;
    }
    const x1 = a.x + nodeW;
    const y1 = a.y + nodeH / 2;
    const x2 = b.x;
    const y2 = b.y + nodeH / 2;
    const mx = (x1 + x2) / 2;
    svg.append(el("path", {
      d: `M ${x1} ${y1} C ${mx} ${y1}, ${mx} ${y2}, ${x2 - 2} ${y2}`, class: "graph-edge", "marker-end": "url(#arrow)",
      "data-from": e.from.node, "data-to": e.to.node,
    }));
  }
  for (const n of nodes) {
    const p = pos.get(n.id);
    const status = n.status || "pending";
    const g = el("g", {
      class: "graph-node-link", tabindex: 0, role: "button", "aria-label": `Step ${n.name || n.id}, ${n.actionId}, ${status}: show in the steps table`,
      "data-testid": `graph-node-${n.id}`, "data-node": n.id, "data-status": status, "data-depth": depth.get(n.id),
    },
    el("title", null, `${n.name || n.id} (${n.actionId}): ${status}`),
    el("rect", { x: p.x, y: p.y, width: nodeW, height: nodeH, rx: 6, class: `graph-node ${status}` }),
    el("text", { x: p.x + 10, y: p.y + 20, class: "graph-label" }, clip(n.name || n.id, 22)),
    el("text", { x: p.x + 10, y: p.y + 38, class: "graph-sub" }, `${clip(n.actionId, 12)} · ${status}`));
    g.addEventListener("click", () => showStep(n.id));
    g.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") {
        ev.preventDefault();
        showStep(n.id);
      }
    });
    svg.append(g);
  }
  return svg;
}
