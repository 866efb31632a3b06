// projects.js lists the workspace's projects and creates one (admins).

import { request } from "./api.js";
import { h, table, when } from "./dom.js";

// projectsView is the Projects page.
export async function projectsView() {
  const projects = (await request("GET", "/projects")) || [];
  const section = h("section", { "aria-labelledby": "projects-title", "data-testid": "projects" });
  const name = h("input", { id: "project-name", type: "text", required: true, maxlength: "256", "data-testid": "project-name" });
  const result = h("p", { className: "result", role: "status", "data-testid": "project-result" });
  section.append(
    h("h2", { id: "projects-title" }, "Projects"),
    table("projects-table", [
      { label: "Name", cell: (p) => h("span", { "data-testid": `project-${p.id}` }, p.name) },
      { label: "Id", cell: (p) => h("span", { className: "mono" }, p.id) },
      { label: "Created", cell: (p) => when(p.createdAt) },
    ], projects, "No projects yet."),
    h("form", { id: "project-form", onsubmit: async (ev) => {
      ev.preventDefault();
      try {
        await request("POST", "/projects", { name: name.value.trim() });
      } catch (err) {
        result.dataset.state = "error";
        result.textContent = err.message;
        return;
      }
      const next = await projectsView();
      section.replaceWith(next);
      const r = next.querySelector('[data-testid="project-result"]');
      r.dataset.state = "saved";
      r.textContent = "Project created.";
      next.querySelector("#project-name").focus();
    } },
    h("h3", null, "New project"),
    h("div", { className: "fields" }, h("label", { for: "project-name" }, "Name"), name),
    h("div", { className: "actions" }, h("button", { type: "submit", className: "primary", id: "project-create", "data-testid": "project-create" }, "Create project")),
    result));
  return section;
}
