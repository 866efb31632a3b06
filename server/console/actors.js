// actors.js shows who did something by name: actor(id) is an element
// showing the id at first and the actor's name once GET /actors has
// answered, with the id in its title. The ids a page shows are asked for
// together, at most 100 a request, and each name is kept for the rest of
// the page load, for as long as the same key is signed in.

import { request, apiKey } from "./api.js";
import { h } from "./dom.js";

const names = new Map(); // id → name, as answered
const waiting = new Map(); // id → the elements waiting for its name
let scheduled = false;
let namesFor = null; // the key the names were answered to

// forgetOnSignIn drops the names when another key signed in, since they
// depend on who asks.
function forgetOnSignIn() {
  if (namesFor !== apiKey()) {
    names.clear();
    namesFor = apiKey();
  }
}

// actor returns an element naming the actor id (createdBy, updatedBy,
// publishedBy...); an empty id gives an empty element.
export function actor(id) {
  const el = h("span", { className: "actor", "data-actor": id || "" });
  if (!id) {
    return el;
  }
  forgetOnSignIn();
  show(el, id);
  if (!names.has(id)) {
    if (!waiting.has(id)) {
      waiting.set(id, []);
    }
    waiting.get(id).push(el);
    if (!scheduled) {
      scheduled = true;
      // Once the page is built, ask for every id it shows at once.
      setTimeout(resolveWaiting, 0);
    }
  }
  return el;
}

// show writes the name known for id, or the id, with the id as title.
function show(el, id) {
  const name = names.get(id);
  el.textContent = name || id;
  el.title = id;
  el.classList.toggle("mono", !name || name === id);
}

async function resolveWaiting() {
  scheduled = false;
  const batch = new Map(waiting);
  waiting.clear();
  const ids = [...batch.keys()];
  for (let i = 0; i < ids.length; i += 100) {
    const part = ids.slice(i, i + 100);
    try {
      const res = await request("GET", `/actors?${part.map((id) => `id=${encodeURIComponent(id)}`).join("&")}`);
      for (const a of (res && res.data) || []) {
        names.set(a.id, a.name);
      }
    } catch {
      // The ids stay shown as they are; a later page asks again.
      continue;
    }
    for (const id of part) {
      batch.get(id).forEach((el) => show(el, id));
    }
  }
}
