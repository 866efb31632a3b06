package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/audit"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/promptfile"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/env"
)

// importCmd applies a directory written by export to the database,
// idempotently: a canvas is found by its id, else by its project and
// title; a version by its id, else by its title within the canvas;
// projects by name. What is missing is created (keeping the file's ids),
// environments are created and published as the files say, and each change
// is printed. An environment the files say serves nothing is left as it
// is (publications cannot be withdrawn). A protected environment the files
// would move stops the import there with APPROVAL_REQUIRED, which the
// publish itself answers, as it does on every path; a dry run reports it.
// Credentials, which the files name by name, are the target workspace's
// credentials of those names; a file
// naming a credential the workspace does not have stops the import with an
// error naming it, before that canvas is written (import never creates a
// credential: its key is never in a file). With --dry-run nothing is
// written.
func importCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var cfg config
	var in, workspace string
	var dryRun bool
	fs := newFlagSet("canvasd import", stderr)
	cfg.dataFlag(fs, getenv)
	fs.StringVar(&in, "in", "", "`directory` written by canvasd export")
	fs.StringVar(&workspace, "workspace", canvas.DefaultWorkspaceName, "`name` of the workspace to import into (created when missing)")
	fs.BoolVar(&dryRun, "dry-run", false, "print what would change without changing anything")
	if err := noPositional(fs, args, stderr); err != nil {
		return err
	}
	if in == "" {
		fmt.Fprint(stderr, "canvasd import: --in is required\n\n"+commandUsage("import"))
		return errUsage
	}
	files, err := promptfile.ReadDir(in)
	if err != nil {
		return err
	}
	eng, closeEngine, err := cfg.openEngine(ctx, engine.Options{}, true, false)
	if err != nil {
		return err
	}
	defer closeEngine()
	if !dryRun && workspace == canvas.DefaultWorkspaceName {
		// A new database gets its first admin key, as canvasd serve
		// would give it.
		created, token, err := eng.Bootstrap(ctx, getenv("CANVAS_BOOTSTRAP_API_KEY"))
		if err != nil {
			return err
		}
		if created {
			fmt.Fprintf(stderr, "new database: created workspace %q and an admin API key (shown only once):\n%s\n",
				canvas.DefaultWorkspaceName, token)
		}
	}
	actx, err := adminContext(ctx, eng, workspace, !dryRun)
	switch {
	case dryRun && canvas.ErrorCode(err) == canvas.ENOTFOUND:
		// The workspace does not exist yet: everything would be created.
		actx = canvas.NewContext(ctx, &canvas.Principal{Role: canvas.RoleAdmin})
	case err != nil:
		return err
	}
	// Every change of the import is recorded as the system's (the
	// operator's command), under one request id that names the import.
	ctx = audit.WithOrigin(actx, audit.Origin{RequestID: "import-" + uuid.NewString(), RemoteAddr: "canvasd import"})
	creds, err := workspaceCredentials(ctx, eng)
	if err != nil {
		return err
	}
	im := &importer{eng: eng, dryRun: dryRun, out: stdout, creds: creds, canvasIDs: map[string]string{}}
	for _, f := range includeOrder(files) {
		if err := im.canvas(ctx, f); err != nil {
			return fmt.Errorf("%s: %w", promptfile.FileName(f), err)
		}
	}
	verb := "changes"
	if dryRun {
		verb = "changes would be made"
	}
	fmt.Fprintf(stdout, "%d %s\n", im.changes, verb)
	return nil
}

// importer applies files and reports what it changes.
type importer struct {
	eng     *engine.Engine
	creds   credentialNames
	dryRun  bool
	out     io.Writer
	changes int
	// canvasIDs maps the id of each canvas imported so far in its file to
	// its id in the database, for the includes of later versions.
	canvasIDs map[string]string
}

// change reports one change.
func (im *importer) change(format string, args ...any) {
	im.changes++
	fmt.Fprintf(im.out, format+"\n", args...)
}

// canvas applies one file.
func (im *importer) canvas(ctx context.Context, f *promptfile.Canvas) error {
	p := canvas.PrincipalFrom(ctx)
	if f.Project == "" {
		return fmt.Errorf("canvas %q has no project", f.Title)
	}
	projectID, err := im.project(ctx, f.Project)
	if err != nil {
		return err
	}
	c, err := im.findCanvas(ctx, f, projectID)
	if err != nil {
		return err
	}
	defer func() {
		if c != nil {
			im.canvasIDs[strings.ToLower(f.ID)] = c.ID
		}
	}()
	isNew := c == nil
	if isNew {
		allowed, err := im.creds.ids(f.AllowedCredentials)
		if err != nil {
			return err
		}
		im.change("create canvas %q (%s) in project %q", f.Title, f.ID, f.Project)
		c = &canvas.Canvas{ID: f.ID, Title: f.Title, ProjectID: &projectID, WorkspaceID: p.WorkspaceID,
			CustomTags: f.CustomTags, LayoutVersion: f.LayoutVersion, InferencesPercentage: f.InferencesPercentage,
			AllowedCredentials: allowed, CreatedBy: "import", UpdatedBy: "import"}
		if !im.dryRun {
			if err := im.eng.Store.CreateCanvas(ctx, c); err != nil {
				return err
			}
		}
	}
	var existing []*canvas.Version
	if !isNew {
		if existing, err = im.eng.Canvases.ListVersions(ctx, canvas.ListVersionsParams{PromptID: c.ID}); err != nil {
			return err
		}
	}
	ids := map[string]string{} // file version id -> database version id
	for i := range f.Versions {
		fv := &f.Versions[i]
		id, err := im.version(ctx, c, fv, existing)
		if err != nil {
			return err
		}
		ids[fv.ID] = id
	}
	return im.environments(ctx, c, f, ids, isNew && im.dryRun)
}

// project returns the id of the project with that name, creating it.
func (im *importer) project(ctx context.Context, name string) (string, error) {
	projects, err := im.eng.Canvases.ListProjects(ctx)
	if err != nil && !im.dryRun {
		return "", err
	}
	for _, p := range projects {
		if p.Name == name {
			return p.ID, nil
		}
	}
	im.change("create project %q", name)
	if im.dryRun {
		return "", nil
	}
	p, err := im.eng.Canvases.CreateProject(ctx, canvas.CreateProjectParams{Name: name})
	if err != nil {
		return "", err
	}
	return p.ID, nil
}

// findCanvas returns the canvas of f by id, else by project and title, or
// nil when it is missing.
func (im *importer) findCanvas(ctx context.Context, f *promptfile.Canvas, projectID string) (*canvas.Canvas, error) {
	c, err := im.eng.Canvases.GetCanvas(ctx, f.ID)
	if err == nil {
		return c, nil
	}
	if canvas.ErrorCode(err) != canvas.ENOTFOUND {
		return nil, err
	}
	if projectID == "" {
		return nil, nil
	}
	list, err := im.eng.Canvases.ListCanvases(ctx, canvas.ListCanvasesParams{ProjectID: projectID})
	if err != nil {
		return nil, err
	}
	for _, c := range list {
		if c.Title == f.Title {
			return c, nil
		}
	}
	return nil, nil
}

// version returns the database id of fv, creating the version when no
// live version of c has its id or title.
func (im *importer) version(ctx context.Context, c *canvas.Canvas, fv *promptfile.Version, existing []*canvas.Version) (string, error) {
	if i := slices.IndexFunc(existing, func(v *canvas.Version) bool { return v.ID == fv.ID }); i >= 0 {
		return fv.ID, nil
	}
	if i := slices.IndexFunc(existing, func(v *canvas.Version) bool { return v.Title == fv.Title }); i >= 0 {
		return existing[i].ID, nil
	}
	cfg, err := canvasConfiguration(fv.Configuration, im.creds)
	if err != nil {
		return "", fmt.Errorf("version %q: %w", fv.Title, err)
	}
	spec, err := mapSpecCredentials(fv.WorkflowSpec, im.creds.toID)
	if err == nil {
		spec, err = rewriteSpecIncludes(spec, im.canvasIDs)
	}
	if err != nil {
		return "", fmt.Errorf("version %q: %w", fv.Title, err)
	}
	im.change("create version %q (%s) of %q", fv.Title, fv.ID, c.Title)
	if im.dryRun {
		return fv.ID, nil
	}
	p := canvas.PrincipalFrom(ctx)
	v := &canvas.Version{ID: fv.ID, PromptID: c.ID, Title: fv.Title, WorkspaceID: p.WorkspaceID,
		Configuration: cfg, Variables: canvasVariables(fv.Variables), Draft: fv.Draft,
		IsWorkflow: fv.IsWorkflow, WorkflowSpec: spec, CreatedBy: "import", UpdatedBy: "import"}
	if fv.IsWorkflow {
		graph, err := im.eng.Workflows.CompileSpec(spec)
		if err != nil {
			return "", fmt.Errorf("version %q: %w", fv.Title, err)
		}
		v.Graph = graph
	}
	for _, m := range fv.Messages {
		v.Messages = append(v.Messages, canvas.Message{Role: m.Role, Content: rewriteIncludes(m.Content, im.canvasIDs),
			MarkdownContent: m.MarkdownContent, Index: m.Index, CreatedBy: "import", UpdatedBy: "import"})
	}
	if err := im.eng.Store.CreateVersion(ctx, v); err != nil {
		return "", err
	}
	return v.ID, nil
}

// environments creates the custom environments f names and publishes the
// versions f says they serve; missing says c is not in the database (a dry
// run's new canvas).
func (im *importer) environments(ctx context.Context, c *canvas.Canvas, f *promptfile.Canvas, ids map[string]string, missing bool) error {
	var envs []*env.Environment
	if !missing {
		var err error
		if envs, err = im.eng.Environments.ListEnvironments(ctx, c.ID); err != nil {
			return err
		}
	}
	for _, fe := range f.Environments {
		i := slices.IndexFunc(envs, func(e *env.Environment) bool { return e.Name == fe.Name })
		var active string
		if i >= 0 && envs[i].ActiveVersionID != nil {
			active = *envs[i].ActiveVersionID
		}
		if i < 0 && fe.Name != env.Production {
			im.change("create environment %q of %q", fe.Name, c.Title)
			if !im.dryRun {
				if _, err := im.eng.Environments.CreateEnvironment(ctx, env.CreateEnvironmentParams{CanvasID: c.ID, Name: fe.Name}); err != nil {
					return err
				}
			}
		}
		if fe.VersionID == "" {
			continue
		}
		want, split, err := fileTarget(fe, ids)
		if err != nil {
			return fmt.Errorf("canvas %q: %w", c.Title, err)
		}
		var activeSplit []env.SplitEntry
		if i >= 0 {
			activeSplit = envs[i].Split
		}
		if want == active && slices.Equal(split, activeSplit) {
			continue
		}
		what := "version " + want
		if split != nil {
			what = "split " + describeSplit(split)
		}
		if im.dryRun && i >= 0 && envs[i].Protected {
			// A protected environment is published to only through an
			// approved publication request: the publish below would be
			// APPROVAL_REQUIRED.
			fmt.Fprintf(im.out, "cannot publish %s to %q of %q: the environment is protected "+
				"(publish through POST /publication-requests)\n", what, fe.Name, c.Title)
			continue
		}
		im.change("publish %s to %q of %q", what, fe.Name, c.Title)
		if !im.dryRun {
			params := env.PublishVersionParams{CanvasID: c.ID, EnvName: fe.Name, VersionID: want, Split: split}
			if split != nil {
				params.VersionID = ""
			}
			if _, _, err := im.eng.Environments.Publish(ctx, params); err != nil {
				return err
			}
		}
	}
	return nil
}

// fileTarget returns the database id of the version an environment of a
// file serves and, when it serves a split, the split with database ids
// (nil otherwise); ids maps the file's version ids to the database's. A
// split that names a version the file does not hold is an error.
func fileTarget(fe promptfile.Environment, ids map[string]string) (string, []env.SplitEntry, error) {
	if fe.Split == nil {
		return ids[fe.VersionID], nil, nil
	}
	split := make([]env.SplitEntry, len(fe.Split))
	for i, e := range fe.Split {
		id, ok := ids[e.VersionID]
		if !ok {
			return "", nil, fmt.Errorf("environment %q: the split names version %s, which the file does not hold", fe.Name, e.VersionID)
		}
		split[i] = env.SplitEntry{VersionID: id, Weight: e.Weight}
	}
	return split[0].VersionID, split, nil
}

// describeSplit writes a split for the import's report: each version with
// its weight.
func describeSplit(split []env.SplitEntry) string {
	parts := make([]string, len(split))
	for i, e := range split {
		parts[i] = fmt.Sprintf("%s %d%%", e.VersionID, e.Weight)
	}
	return strings.Join(parts, ", ")
}
