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
