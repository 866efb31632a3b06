package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/promptfile"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mustSourceData fills a new data directory: a project with a canvas of
// three versions (the second deleted), production and staging published,
// an empty custom environment, and a personal draft, which export skips.
func mustSourceData(t *testing.T) (dir string, c *canvas.Canvas, versions []*canvas.Version) {
	t.Helper()
	dir = t.TempDir()
	ctx := context.Background()
	eng, err := engine.OpenSQLite(ctx, dir, engine.Options{})
	require.NoError(t, err)
	defer eng.Close()
	_, _, err = eng.Bootstrap(ctx, "")
	require.NoError(t, err)
	ws, err := eng.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	require.NoError(t, err)
	ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleAdmin})
	p, err := eng.Canvases.CreateProject(ctx, canvas.CreateProjectParams{Name: "support"})
	require.NoError(t, err)
	c, err = eng.Canvases.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Support bot", ProjectID: &p.ID,
		CustomTags: []string{"support"}})
	require.NoError(t, err)
	temp := 0.2
	for i, text := range []string{"Hello {{name}}", "Dropped", "Bonjour {{name}}"} {
		v, err := eng.Canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID,
			Configuration: &canvas.Configuration{Model: "echo", Type: "chat", Temperature: &temp},
			Variables:     []canvas.Variable{{Name: "name", Type: canvas.VariableText, Required: true}},
			Message:       &canvas.MessageInput{Role: canvas.RoleSystem, Content: text}, Draft: i == 1})
		require.NoError(t, err)
		versions = append(versions, v)
	}
	require.NoError(t, eng.Canvases.DeleteVersion(ctx, versions[1].ID))
	flow, err := eng.Canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID, Title: "Flow",
		IsWorkflow: true, WorkflowSpec: json.RawMessage(`{"specVersion": "1", "nodes": [
			{"id": "start", "name": "Topic", "actionId": "input", "config": {"variables": [{"name": "topic", "type": "text"}]}},
			{"id": "result", "name": "Result", "actionId": "output"}],
			"edges": [{"from": {"node": "start", "port": "out"}, "to": {"node": "result", "port": "in"}}]}`)})
	require.NoError(t, err)
	versions = append(versions, flow)
	for _, e := range []string{"staging", "empty"} {
		_, err = eng.Environments.CreateEnvironment(ctx, env.CreateEnvironmentParams{CanvasID: c.ID, Name: e})
		require.NoError(t, err)
	}
	for _, pub := range []struct {
		env string
		v   int
	}{{"production", 0}, {"production", 2}, {"staging", 0}} {
		_, _, err = eng.Environments.Publish(ctx, env.PublishVersionParams{CanvasID: c.ID, EnvName: pub.env,
			VersionID: versions[pub.v].ID})
		require.NoError(t, err)
	}
	_, err = eng.Canvases.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "My draft"})
	require.NoError(t, err)
	return dir, c, versions
}

// readFiles returns the files of dir by name.
func readFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string]string{}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(raw)
	}
	return out
}

func TestExport_RoundTrip(t *testing.T) {
	src, c, versions := mustSourceData(t)
	out1 := t.TempDir()
	mustRun(t, nil, "export", "--data", src, "--out", out1)
	files := readFiles(t, out1)
	require.Len(t, files, 1, "one file per canvas; the personal draft is not exported")

	parsed, err := promptfile.ReadDir(out1)
	require.NoError(t, err)
	f := parsed[0]
	assert.Equal(t, c.ID, f.ID)
	assert.Equal(t, "support", f.Project)
	require.Len(t, f.Versions, 3, "the deleted version is not exported")
	assert.True(t, f.Versions[2].IsWorkflow)
	assert.Equal(t, []promptfile.Environment{{Name: "production", VersionID: versions[2].ID},
		{Name: "empty"}, {Name: "staging", VersionID: versions[0].ID}}, f.Environments)
	for _, volatile := range []string{"createdAt", "updatedAt", "publishedAt", "createdBy"} {
		assert.NotContains(t, files[promptfile.FileName(f)], volatile)
	}

	again := t.TempDir()
	mustRun(t, nil, "export", "--data", src, "--out", again)
	assert.Equal(t, files, readFiles(t, again), "export is reproducible")

	dst := filepath.Join(t.TempDir(), "data")
	report := mustRun(t, nil, "import", "--data", dst, "--in", out1)
	for _, want := range []string{`create project "support"`, `create canvas "Support bot"`, `create version`,
		`create environment "staging"`, `create environment "empty"`, `to "production"`, `to "staging"`} {
		assert.Contains(t, report, want)
	}
	out2 := t.TempDir()
	mustRun(t, nil, "export", "--data", dst, "--out", out2)
	assert.Equal(t, files, readFiles(t, out2), "export, import into an empty database, export gives the same files")

	t.Run("Idempotent", func(t *testing.T) {
		assert.Equal(t, "0 changes\n", mustRun(t, nil, "import", "--data", dst, "--in", out1))
	})

	t.Run("PublishesWhatTheFilesSay", func(t *testing.T) {
		// Roll production back in the database; importing restores it.
		ctx := context.Background()
		eng, err := engine.OpenSQLite(ctx, dst, engine.Options{})
		require.NoError(t, err)
		ws, err := eng.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
		require.NoError(t, err)
		actx := canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, Role: canvas.RoleAdmin})
		flow, err := eng.Canvases.GetVersion(actx, versions[3].ID)
		require.NoError(t, err)
		assert.NotEmpty(t, flow.Graph, "an imported workflow version has its compiled graph")
		_, _, err = eng.Environments.Publish(actx, env.PublishVersionParams{CanvasID: c.ID, EnvName: "production",
			VersionID: versions[0].ID})
		require.NoError(t, err)
		require.NoError(t, eng.Close())

		dry := mustRun(t, nil, "import", "--data", dst, "--in", out1, "--dry-run")
		assert.Contains(t, dry, "1 changes would be made")
		report := mustRun(t, nil, "import", "--data", dst, "--in", out1)
		assert.Contains(t, report, `publish version `+versions[2].ID+` to "production"`)
		out3 := t.TempDir()
		mustRun(t, nil, "export", "--data", dst, "--out", out3)
		assert.Equal(t, files, readFiles(t, out3))
	})

	t.Run("DryRunChangesNothing", func(t *testing.T) {
		empty := filepath.Join(t.TempDir(), "data")
		report := mustRun(t, nil, "import", "--data", empty, "--in", out1, "--dry-run")
		assert.Contains(t, report, `create canvas "Support bot"`)
		assert.True(t, strings.HasSuffix(report, "changes would be made\n"))
		ctx := context.Background()
		eng, err := engine.OpenSQLite(ctx, empty, engine.Options{})
		require.NoError(t, err)
		defer eng.Close()
		_, err = eng.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err), "nothing was written")
	})

	t.Run("StaleFilesRemoved", func(t *testing.T) {
		dir := t.TempDir()
		stale := filepath.Join(dir, "old-canvas-00000000.json")
		require.NoError(t, os.WriteFile(stale, []byte(`{"formatVersion": 1, "id": "x"}`), 0o600))
		other := filepath.Join(dir, "notes.json")
		require.NoError(t, os.WriteFile(other, []byte(`{"mine": true}`), 0o600))
		mustRun(t, nil, "export", "--data", src, "--out", dir)
		assert.NoFileExists(t, stale)
		assert.FileExists(t, other)
	})
}

func TestExport_Usage(t *testing.T) {
	var stdout, stderr strings.Builder
	err := run(context.Background(), []string{"export"}, getenv(nil), &stdout, &stderr)
	assert.ErrorIs(t, err, errUsage)
	err = run(context.Background(), []string{"import", "--data", t.TempDir()}, getenv(nil), &stdout, &stderr)
	assert.ErrorIs(t, err, errUsage)
	err = run(context.Background(), []string{"export", "--data", t.TempDir(), "--out", t.TempDir()}, getenv(nil), &stdout, &stderr)
	assert.ErrorContains(t, err, "no database")
}

// TestExport_ClientSnapshot serves prompts from an export to a client whose
// server cannot be reached.
func TestExport_ClientSnapshot(t *testing.T) {
	src, c, versions := mustSourceData(t)
	out := t.TempDir()
	mustRun(t, nil, "export", "--data", src, "--out", out)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there
	cl, err := client.New(down, client.Options{MaxRetries: -1})
	require.NoError(t, err)
	prompts, err := cl.NewPrompts(client.PromptsOptions{SnapshotDir: out})
	require.NoError(t, err)
	defer prompts.Close()

	for envName, want := range map[string]*canvas.Version{"production": versions[2], "staging": versions[0]} {
		p, err := prompts.Get(context.Background(), c.ID, envName)
		require.NoError(t, err)
		assert.True(t, p.Stale)
		assert.Equal(t, want.ID, p.Version.ID)
		assert.Equal(t, want.Messages[0].Content, *p.Version.Content)
	}
	_, err = prompts.Get(context.Background(), c.ID, "empty")
	assert.Error(t, err, "an environment that serves nothing is not served from the snapshot")
}
