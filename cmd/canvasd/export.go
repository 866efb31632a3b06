package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/promptfile"
	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/promptcanvas/promptcanvas/engine"
)

// export writes the canvases of a workspace (those of its projects; personal
// drafts are not exported), their live versions and what their environments
// serve to one JSON file per canvas in --out (see client/promptfile), naming
// credentials by their names and holding no key. Files
// of an earlier export that no canvas wrote this time are removed, so the
// directory is exactly the workspace's prompts.
func export(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var cfg config
	var out, workspace string
	fs := newFlagSet("canvasd export", stderr)
	cfg.dataFlag(fs, getenv)
	fs.StringVar(&out, "out", "", "`directory` to write the files to (created when missing)")
	fs.StringVar(&workspace, "workspace", canvas.DefaultWorkspaceName, "`name` of the workspace to export")
	if err := noPositional(fs, args, stderr); err != nil {
		return err
	}
	if out == "" {
		fmt.Fprint(stderr, "canvasd export: --out is required\n\n"+commandUsage("export"))
		return errUsage
	}
	eng, closeEngine, err := cfg.openEngine(ctx, engine.Options{}, false, false)
	if err != nil {
		return err
	}
	defer closeEngine()
	ctx, err = adminContext(ctx, eng, workspace, false)
	if err != nil {
		return err
	}
	files, err := exportFiles(ctx, eng)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	written := map[string]bool{}
	for _, f := range files {
		raw, err := promptfile.Encode(f)
		if err != nil {
			return err
		}
		name := promptfile.FileName(f)
		written[name] = true
		if err := os.WriteFile(filepath.Join(out, name), raw, 0o644); err != nil {
			return err
		}
	}
	if err := removeStale(out, written); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "exported %d canvases to %s\n", len(files), out)
	return nil
}

// adminContext returns ctx carrying an admin principal of the named
// workspace. With create, a missing workspace is created (a new database
// is bootstrapped as canvasd serve would, its admin key printed once).
func adminContext(ctx context.Context, eng *engine.Engine, name string, create bool) (context.Context, error) {
	ws, err := eng.Store.GetWorkspaceByName(ctx, name)
	if canvas.ErrorCode(err) == canvas.ENOTFOUND && create {
		ws = &canvas.Workspace{Name: name}
		err = eng.Store.CreateWorkspace(ctx, ws)
	}
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", name, err)
	}
	return canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, Role: canvas.RoleAdmin}), nil
}

// exportFiles reads the workspace of ctx's principal into files.
func exportFiles(ctx context.Context, eng *engine.Engine) ([]*promptfile.Canvas, error) {
	projects, err := eng.Canvases.ListProjects(ctx)
	if err != nil {
		return nil, err
	}
	projectName := map[string]string{}
	for _, p := range projects {
		projectName[p.ID] = p.Name
	}
	canvases, err := eng.Canvases.ListCanvases(ctx, canvas.ListCanvasesParams{})
	if err != nil {
		return nil, err
	}
	creds, err := workspaceCredentials(ctx, eng)
	if err != nil {
		return nil, err
	}
	var files []*promptfile.Canvas
	for _, c := range canvases {
		if c.ProjectID == nil {
			continue
		}
		f := &promptfile.Canvas{FormatVersion: promptfile.FormatVersion, ID: c.ID, Title: c.Title,
			Project: projectName[*c.ProjectID], CustomTags: nonNilStrings(c.CustomTags), LayoutVersion: c.LayoutVersion,
			InferencesPercentage: c.InferencesPercentage, AllowedCredentials: creds.names(c.AllowedCredentials)}
		versions, err := eng.Canvases.ListVersions(ctx, canvas.ListVersionsParams{PromptID: c.ID})
		if err != nil {
			return nil, err
		}
		slices.SortStableFunc(versions, func(a, b *canvas.Version) int { return cmp.Compare(a.VersionIndex, b.VersionIndex) })
		for _, v := range versions {
			cfg, err := fileConfiguration(v.Configuration, creds)
			if err != nil {
				return nil, fmt.Errorf("canvas %q, version %s: %w", c.Title, v.ID, err)
			}
			spec, err := mapSpecCredentials(v.WorkflowSpec, creds.toName)
			if err != nil {
				return nil, fmt.Errorf("canvas %q, version %s: %w", c.Title, v.ID, err)
			}
			fv := promptfile.Version{ID: v.ID, Title: v.Title, Draft: v.Draft, Configuration: cfg,
				Variables: fileVariables(v.Variables), IsWorkflow: v.IsWorkflow, WorkflowSpec: spec,
				Messages: []promptfile.Message{}}
			msgs := slices.Clone(v.Messages)
			slices.SortStableFunc(msgs, func(a, b canvas.Message) int { return cmp.Compare(a.Index, b.Index) })
			for _, m := range msgs {
				fv.Messages = append(fv.Messages, promptfile.Message{Role: m.Role, Content: m.Content,
					MarkdownContent: m.MarkdownContent, Index: m.Index})
			}
			f.Versions = append(f.Versions, fv)
		}
		envs, err := eng.Environments.ListEnvironments(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		for _, e := range envs {
			fe := promptfile.Environment{Name: e.Name}
			if e.ActiveVersionID != nil && f.Version(*e.ActiveVersionID) != nil {
				fe.VersionID = *e.ActiveVersionID
				for _, en := range e.Split {
					if f.Version(en.VersionID) == nil {
						return nil, fmt.Errorf("canvas %q, environment %q: its split serves version %s, which is not exported",
							c.Title, e.Name, en.VersionID)
					}
					fe.Split = append(fe.Split, wire.SplitEntry{VersionID: en.VersionID, Weight: en.Weight})
				}
			}
			f.Environments = append(f.Environments, fe)
		}
		files = append(files, f)
	}
	slices.SortFunc(files, func(a, b *promptfile.Canvas) int {
		return cmp.Compare(promptfile.FileName(a), promptfile.FileName(b))
	})
	return files, nil
}

// removeStale removes the prompt files of dir that were not written.
func removeStale(dir string, written map[string]bool) error {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	for _, name := range names {
		if written[filepath.Base(name)] {
			continue
		}
		raw, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		var head struct {
			FormatVersion int `json:"formatVersion"`
		}
		if json.NewDecoder(bytes.NewReader(raw)).Decode(&head) == nil && head.FormatVersion == promptfile.FormatVersion {
			if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
