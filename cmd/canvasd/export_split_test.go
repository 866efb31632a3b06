package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/promptfile"
	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withEngine opens the data directory dir as its admin and calls fn.
func withEngine(t *testing.T, dir string, fn func(ctx context.Context, eng *engine.Engine)) {
	t.Helper()
	ctx := context.Background()
	eng, err := engine.OpenSQLite(ctx, dir, engine.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, eng.Close()) }()
	ws, err := eng.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	require.NoError(t, err)
	fn(canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleAdmin}), eng)
}

// served returns the version and split an environment of c serves.
func served(t *testing.T, ctx context.Context, eng *engine.Engine, canvasID, name string) (string, []env.SplitEntry) {
	t.Helper()
	envs, err := eng.Environments.ListEnvironments(ctx, canvasID)
	require.NoError(t, err)
	for _, e := range envs {
		if e.Name == name {
			require.NotNil(t, e.ActiveVersionID)
			return *e.ActiveVersionID, e.Split
		}
	}
	t.Fatalf("no environment %q", name)
	return "", nil
}

// TestExport_Split: an environment that serves a split is exported with
// the whole split, and importing the files publishes it; a file of one
// version ends a split.
func TestExport_Split(t *testing.T) {
	src, c, versions := mustSourceData(t)
	split := []env.SplitEntry{{VersionID: versions[2].ID, Weight: 70}, {VersionID: versions[0].ID, Weight: 30}}
	withEngine(t, src, func(ctx context.Context, eng *engine.Engine) {
		_, _, err := eng.Environments.Publish(ctx, env.PublishVersionParams{CanvasID: c.ID, EnvName: "staging", Split: split})
		require.NoError(t, err)
	})
	out1 := t.TempDir()
	mustRun(t, nil, "export", "--data", src, "--out", out1)
	parsed, err := promptfile.ReadDir(out1)
	require.NoError(t, err)
	require.Len(t, parsed, 1)
	assert.Equal(t, []promptfile.Environment{{Name: "production", VersionID: versions[2].ID}, {Name: "empty"},
		{Name: "staging", VersionID: versions[2].ID, Split: []wire.SplitEntry{{VersionID: versions[2].ID, Weight: 70},
			{VersionID: versions[0].ID, Weight: 30}}}}, parsed[0].Environments)
	files := readFiles(t, out1)

	dst := filepath.Join(t.TempDir(), "data")
	report := mustRun(t, nil, "import", "--data", dst, "--in", out1)
	assert.Contains(t, report, `publish split `+versions[2].ID+` 70%, `+versions[0].ID+` 30% to "staging"`)
	withEngine(t, dst, func(ctx context.Context, eng *engine.Engine) {
		v, got := served(t, ctx, eng, c.ID, "staging")
		assert.Equal(t, versions[2].ID, v)
		assert.Equal(t, split, got, "the import published the whole split")
	})
	out2 := t.TempDir()
	mustRun(t, nil, "export", "--data", dst, "--out", out2)
	assert.Equal(t, files, readFiles(t, out2), "export, import, export gives the same files")
	assert.Equal(t, "0 changes\n", mustRun(t, nil, "import", "--data", dst, "--in", out1))

	// The first version alone in the database: the import publishes the
	// split again.
	withEngine(t, dst, func(ctx context.Context, eng *engine.Engine) {
		_, _, err := eng.Environments.Publish(ctx, env.PublishVersionParams{CanvasID: c.ID, EnvName: "staging", VersionID: versions[2].ID})
		require.NoError(t, err)
	})
	assert.Contains(t, mustRun(t, nil, "import", "--data", dst, "--in", out1, "--dry-run"), "1 changes would be made")
	mustRun(t, nil, "import", "--data", dst, "--in", out1)
	withEngine(t, dst, func(ctx context.Context, eng *engine.Engine) {
		_, got := served(t, ctx, eng, c.ID, "staging")
		assert.Equal(t, split, got)
	})

	// The files of the source before the split: importing them ends it.
	withEngine(t, src, func(ctx context.Context, eng *engine.Engine) {
		_, _, err := eng.Environments.Publish(ctx, env.PublishVersionParams{CanvasID: c.ID, EnvName: "staging", VersionID: versions[2].ID})
		require.NoError(t, err)
	})
	single := t.TempDir()
	mustRun(t, nil, "export", "--data", src, "--out", single)
	report = mustRun(t, nil, "import", "--data", dst, "--in", single)
	assert.Contains(t, report, `publish version `+versions[2].ID+` to "staging"`)
	withEngine(t, dst, func(ctx context.Context, eng *engine.Engine) {
		v, got := served(t, ctx, eng, c.ID, "staging")
		assert.Equal(t, versions[2].ID, v)
		assert.Nil(t, got, "one version ends the split")
	})
}
