// app.js starts the console: sign in, sign out, and the hash router that
// renders one view at a time into #view.

import { apiKey, request, signIn, signOut, ApiError } from "./api.js";
import { errorBox } from "./dom.js";
import { applicationsView, newApplicationView } from "./applications.js";
import { applicationView } from "./application.js";
import { canvasesView, canvasView } from "./canvases.js";
import { compareView } from "./diff.js";
import { newVersionView } from "./editor.js";
import { environmentsView, environmentView } from "./environments.js";
import { playgroundView } from "./playground.js";
import { versionView } from "./versions.js";
import { runView } from "./runs.js";
import { runsListView, completionRunView } from "./runlist.js";
import { testCasesView } from "./testcases.js";
import { filesView } from "./files.js";
import { keysView } from "./keys.js";
import { projectsView } from "./projects.js";
import { credentialsView } from "./credentials.js";
import { modelsView } from "./models.js";
import { reviewView } from "./review.js";
import { experimentsView, experimentView } from "./experiments.js";
import { auditView } from "./audit.js";
import { requestsView, requestView } from "./requests.js";

// routes map a hash path to a view; a view is an async function that
// returns the node to show.
const routes = [
  [/^\/applications$/, () => applicationsView()],
  [/^\/applications\/new$/, () => newApplicationView()],
  [/^\/applications\/([^/]+)(?:\/(settings|events|deliveries))?$/, (m) => applicationView(m[1], m[2] || "settings")],
  [/^\/canvases$/, () => canvasesView()],
  [/^\/canvases\/([^/]+)$/, (m) => canvasView(m[1])],
  [/^\/canvases\/([^/]+)\/new-version$/, (m) => newVersionView(null, m[1])],
  [/^\/canvases\/([^/]+)\/environments$/, (m) => environmentsView(m[1])],
  [/^\/canvases\/([^/]+)\/environments\/([^/]+)$/, (m) => environmentView(m[1], decodeURIComponent(m[2]))],
  [/^\/canvases\/([^/]+)\/compare\/([^/]+)\/([^/]+)$/, (m) => compareView(m[1], m[2], m[3])],
  [/^\/canvases\/([^/]+)\/playground(?:\/(version|environment)\/([^/]+))?$/, (m) => playgroundView(m[1], m[2], m[3] && decodeURIComponent(m[3]))],
  [/^\/playground$/, () => playgroundView()],
  [/^\/canvases\/([^/]+)\/review(?:\/(pending|reviewed|all))?$/, (m) => reviewView(m[1], m[2])],
  [/^\/canvases\/([^/]+)\/experiments$/, (m) => experimentsView(m[1])],
  [/^\/experiments\/([^/]+)$/, (m) => experimentView(m[1])],
  [/^\/versions\/([^/]+)$/, (m) => versionView(m[1])],
  [/^\/versions\/([^/]+)\/new$/, (m) => newVersionView(m[1])],
  [/^\/runs\/([^/]+)$/, (m) => runView(decodeURIComponent(m[1]))],
  [/^\/runs$/, () => runsListView()],
  [/^\/runs\/(completion|task)\/([^/]+)$/, (m) => completionRunView(m[1], decodeURIComponent(m[2]))],
  [/^\/test-cases(?:\/([^/]+))?$/, (m) => testCasesView(m[1] && decodeURIComponent(m[1]))],
  [/^\/files$/, () => filesView()],
  [/^\/api-keys$/, () => keysView()],
  [/^\/projects$/, () => projectsView()],
  [/^\/credentials$/, () => credentialsView()],
  [/^\/models$/, () => modelsView()],
  [/^\/audit(?:\?(.*))?$/, (m) => auditView(m[1])],
  [/^\/requests$/, () => requestsView()],
  [/^\/requests\/([^/]+)$/, (m) => requestView(decodeURIComponent(m[1]))],
];

// lastPageKey is where the path of the last page shown is kept (in
// localStorage, so that a new tab opens there too); startPage is the
// page shown when there is none.
const lastPageKey = "promptcanvas.lastPage";
const startPage = "/canvases";

// lastPage returns the path of the last page shown, or startPage.
function lastPage() {
  try {
    return localStorage.getItem(lastPageKey) || startPage;
  } catch {
    return startPage; // storage refused (a private window's policy)
  }
}

// remember keeps path as the last page shown.
function remember(path) {
  try {
    localStorage.setItem(lastPageKey, path);
  } catch {
    // Storage refused: the console opens on startPage next time.
  }
}

const view = document.getElementById("view");
const signInSection = document.getElementById("sign-in");
const nav = document.getElementById("nav");

// render shows the view of the current hash, or the sign-in form.
async function render() {
  const signedIn = Boolean(apiKey());
  signInSection.hidden = signedIn;
  nav.hidden = !signedIn;
  if (!signedIn) {
    // What a render still loads was asked for in the session that ended.
    render.current = Symbol("signed out");
    view.replaceChildren();
    document.getElementById("api-key").focus();
    return;
  }
  const path = location.hash.replace(/^#/, "") || lastPage();
  const token = Symbol("render");
  render.current = token;
  view.setAttribute("aria-busy", "true");
  let node;
  try {
    const route = routes.find(([re]) => re.test(path));
    node = route ? await route[1](path.match(route[0])) : errorBox(new Error(`No page at ${path}.`));
    if (route) {
      remember(path);
    }
  } catch (err) {
    if (render.current !== token) {
      return; // a later navigation, or a sign-out, won: its key is not this render's
    }
    if (err instanceof ApiError && err.status === 401) {
      signOut();
      document.getElementById("sign-in-error").textContent = "The key was refused; sign in again.";
      render();
      return;
    }
    node = errorBox(err);
  }
  if (render.current !== token) {
    return; // a later navigation won
  }
  view.replaceChildren(node);
  // data-path names the page shown, so that a page can be told from the
  // one it replaced.
  view.dataset.path = path;
  view.removeAttribute("aria-busy");
  markCurrent(path);
  // The page's heading takes the focus, so that a keyboard or screen
  // reader user starts on the new page rather than on the link left.
  const heading = view.querySelector("h2");
  if (heading) {
    heading.tabIndex = -1;
    heading.focus({ preventScroll: true });
  }
}

// markCurrent marks the navigation link of the section shown.
function markCurrent(path) {
  path = path.split("?")[0];
  for (const a of nav.querySelectorAll("a[href^='#/']")) {
    const section = a.getAttribute("href").slice(1);
    if (path === section || path.startsWith(`${section}/`)) {
      a.setAttribute("aria-current", "page");
    } else {
      a.removeAttribute("aria-current");
    }
  }
}

document.getElementById("sign-in-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const input = document.getElementById("api-key");
  const out = document.getElementById("sign-in-error");
  out.textContent = "";
  signIn(input.value.trim());
  try {
    await request("GET", "/prompt");
  } catch (err) {
    signOut();
    out.textContent = err.status === 401 ? "The key was refused." : err.message;
    return;
  }
  input.value = "";
  if (!location.hash || location.hash === "#") {
    location.hash = `#${lastPage()}`;
  }
  render();
});

document.getElementById("sign-out").addEventListener("click", () => {
  signOut();
  location.hash = "";
  render();
});

window.addEventListener("hashchange", render);
render();
