package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/promptfile"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/env"
)

// includeData is a data directory whose canvas "Bot" includes "Shared"
// (production) and "Tone" (version 1); Bot's file sorts before theirs.
type includeData struct {
	dir                 string
	bot, shared, tone   string
	botVersion, shared1 string
}

// openAdmin opens the engine of dir as an admin of the default workspace.
func openAdmin(t *testing.T, dir string) (*engine.Engine, context.Context) {
	t.Helper()
	ctx := context.Background()
	eng, err := engine.OpenSQLite(ctx, dir, engine.Options{})
	require.NoError(t, err)
	_, _, err = eng.Bootstrap(ctx, "")
	require.NoError(t, err)
	ws, err := eng.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	require.NoError(t, err)
	return eng, canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleAdmin})
}

// mustCanvasWith creates a canvas of the project "support" (created when
// missing) with one version of content, published to production.
func mustCanvasWith(t *testing.T, eng *engine.Engine, ctx context.Context, title, content string) (canvasID, versionID string) {
	t.Helper()
	projects, err := eng.Canvases.ListProjects(ctx)
	require.NoError(t, err)
	var pid string
	for _, p := range projects {
		if p.Name == "support" {
			pid = p.ID
		}
	}
	if pid == "" {
		p, err := eng.Canvases.CreateProject(ctx, canvas.CreateProjectParams{Name: "support"})
		require.NoError(t, err)
		pid = p.ID
	}
	c, err := eng.Canvases.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: title, ProjectID: &pid})
	require.NoError(t, err)
	v, err := eng.Canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID,
		Configuration: &canvas.Configuration{Model: "echo"},
		Message:       &canvas.MessageInput{Role: canvas.RoleSystem, Content: content}})
	require.NoError(t, err)
	_, _, err = eng.Environments.Publish(ctx, env.PublishVersionParams{CanvasID: c.ID, EnvName: env.Production, VersionID: v.ID})
	require.NoError(t, err)
	return c.ID, v.ID
}

func mustIncludeData(t *testing.T) includeData {
	t.Helper()
	d := includeData{dir: t.TempDir()}
	eng, ctx := openAdmin(t, d.dir)
	defer eng.Close()
	d.shared, d.shared1 = mustCanvasWith(t, eng, ctx, "Shared", "Be kind.")
	d.tone, _ = mustCanvasWith(t, eng, ctx, "Tone", "Be brief.")
	d.bot, d.botVersion = mustCanvasWith(t, eng, ctx, "Bot", "{{> "+d.shared+"}} {{> "+d.tone+"@v1}} Answer.")
	return d
}

// resolved returns the production prompt of canvasID with its includes
// resolved.
func resolved(t *testing.T, dir, canvasID string) string {
	t.Helper()
	eng, ctx := openAdmin(t, dir)
	defer eng.Close()
	v, err := eng.Environments.ActiveVersion(ctx, env.ActiveVersionParams{CanvasID: canvasID, EnvName: env.Production})
	require.NoError(t, err)
	res, err := eng.Environments.Resolve(ctx, v, nil)
	require.NoError(t, err)
	return res.Messages[0].Content
}

func TestImport_Includes(t *testing.T) {
	d := mustIncludeData(t)
	out := t.TempDir()
	mustRun(t, nil, "export", "--data", d.dir, "--out", out)
	files := readFiles(t, out)
	require.Len(t, files, 3)

	t.Run("EmptyDatabase", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "data")
		mustRun(t, nil, "import", "--data", dst, "--in", out)
		assert.Equal(t, "Be kind. Be brief. Answer.", resolved(t, dst, d.bot))
		again := t.TempDir()
		mustRun(t, nil, "export", "--data", dst, "--out", again)
		assert.Equal(t, files, readFiles(t, again), "the includes round-trip")
	})

	t.Run("MatchedByTitle", func(t *testing.T) {
		// The target already has "Shared" and "Tone" under other ids: the
		// imported Bot includes them there.
		dst := filepath.Join(t.TempDir(), "data")
		eng, ctx := openAdmin(t, dst)
		shared, _ := mustCanvasWith(t, eng, ctx, "Shared", "Be kind here.")
		tone, _ := mustCanvasWith(t, eng, ctx, "Tone", "Be brief here.")
		require.NoError(t, eng.Close())
		require.NotEqual(t, d.shared, shared)
		mustRun(t, nil, "import", "--data", dst, "--in", out)
		assert.Equal(t, "Be kind here. Be brief here. Answer.", resolved(t, dst, d.bot))

		eng, ctx = openAdmin(t, dst)
		defer eng.Close()
		v, err := eng.Canvases.GetVersion(ctx, d.botVersion)
		require.NoError(t, err)
		assert.Equal(t, "{{> "+shared+"}} {{> "+tone+"@v1}} Answer.", *v.Content)
	})
}

func TestIncludeOrder(t *testing.T) {
	d := mustIncludeData(t)
	out := t.TempDir()
	mustRun(t, nil, "export", "--data", d.dir, "--out", out)
	files, err := promptfile.ReadDir(out)
	require.NoError(t, err)
	var order []string
	for _, f := range includeOrder(files) {
		order = append(order, f.Title)
	}
	assert.Equal(t, "Bot", order[2], "after what it includes: %v", order)
}

func TestImport_WorkflowIncludes(t *testing.T) {
	src := t.TempDir()
	eng, ctx := openAdmin(t, src)
	shared, _ := mustCanvasWith(t, eng, ctx, "Shared", "Be kind.")
	flow, _ := mustCanvasWith(t, eng, ctx, "A flow", "Plain.")
	spec := `{"specVersion": "1", "nodes": [{"id": "start", "actionId": "input"},
		{"id": "draft", "actionId": "llm", "config": {"messages": [{"role": "system", "content": "{{> ` + shared + `}} Answer."}]}},
		{"id": "done", "actionId": "output"}],
	 "edges": [{"from": {"node": "start", "port": "out"}, "to": {"node": "draft", "port": "in"}},
		{"from": {"node": "draft", "port": "out"}, "to": {"node": "done", "port": "in"}}]}`
	wf, err := eng.Canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: flow, Title: "Flow",
		IsWorkflow: true, WorkflowSpec: json.RawMessage(spec)})
	require.NoError(t, err)
	require.NoError(t, eng.Close())
	out := t.TempDir()
	mustRun(t, nil, "export", "--data", src, "--out", out)

	files, err := promptfile.ReadDir(out)
	require.NoError(t, err)
	var order []string
	for _, f := range includeOrder(files) {
		order = append(order, f.Title)
	}
	assert.Equal(t, []string{"Shared", "A flow"}, order, "a workflow's includes order the files too")

	// The target has "Shared" under another id: the imported workflow
	// includes it there.
	dst := filepath.Join(t.TempDir(), "data")
	eng, ctx = openAdmin(t, dst)
	there, _ := mustCanvasWith(t, eng, ctx, "Shared", "Be kind here.")
	require.NoError(t, eng.Close())
	mustRun(t, nil, "import", "--data", dst, "--in", out)

	eng, ctx = openAdmin(t, dst)
	defer eng.Close()
	v, err := eng.Canvases.GetVersion(ctx, wf.ID)
	require.NoError(t, err)
	msgs := eng.Workflows.SpecMessages(v.WorkflowSpec)
	require.Len(t, msgs, 1)
	assert.Equal(t, "{{> "+there+"}} Answer.", msgs[0].Content)
	assert.Equal(t, "/json/workflowSpec/nodes/1/config/messages/0/content", msgs[0].Path)
}
