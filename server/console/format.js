// format.js turns API values into text for people, so that a missing
// value always shows as a dash and never as "null" or "undefined".

// text returns v as text, or a dash when it is null, undefined or empty.
export function text(v) {
  return v === null || v === undefined || v === "" ? "—" : String(v);
}

// show renders a JSON value: text as it is, anything else as indented JSON,
// nothing as a dash.
export function show(v) {
  if (v === null || v === undefined) {
    return "—";
  }
  return typeof v === "string" ? v : JSON.stringify(v, null, 2);
}

// bytes formats a size in bytes with a binary unit.
export function bytes(n) {
  if (typeof n !== "number" || n < 0) {
    return "—";
  }
  const units = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(1)} ${units[i]}`;
}

// money formats a run's cost ({total, currency}) in dollars, with as many
// decimals as a small amount needs (at least two, at most six); null is a
// dash.
export function money(cost) {
  if (!cost || typeof cost.total !== "number") {
    return "—";
  }
  let s = cost.total.toFixed(6).replace(/0+$/, "");
  const [whole, frac = ""] = s.split(".");
  s = `${whole}.${frac.padEnd(2, "0")}`;
  return cost.currency && cost.currency !== "USD" ? `${s} ${cost.currency}` : `$${s}`;
}

// runSum says what a sum of runs ({count, inputTokens, outputTokens, cost,
// unpriced}) came to, or a dash when there is none.
export function runSum(sum) {
  if (!sum || !sum.count) {
    return "—";
  }
  const unpriced = sum.unpriced ? `, ${sum.unpriced} without a price` : "";
  return `${money(sum.cost)} (${plural(sum.count, "run", "runs")}, ${sum.inputTokens} input and ${plural(sum.outputTokens, "output token", "output tokens")}${unpriced})`;
}

// versionLabel names a version by its position and title ("#2 Shorter"),
// or its id when it has neither.
export function versionLabel(v) {
  if (!v) {
    return "";
  }
  return `${v.versionIndex ? `#${v.versionIndex} ` : ""}${v.title || v.id}`;
}

// surfaces names the surfaces a workflow run is started from, as the API
// records them (its environment field).
const surfaces = { api: "the API", "craft-preview": "a preview", "test-case": "a test case", workstation: "the workstation" };

// surface says what started a workflow run, from its environment field.
export function surface(env) {
  return surfaces[env] || text(env);
}

// plural counts n things: "1 test case", "2 test cases".
export function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}
