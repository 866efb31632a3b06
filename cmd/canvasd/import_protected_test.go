package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/env"
)

// TestImport_ProtectedEnvironment: import publishes through the same
// check as every other path, so files that would move a protected
// production stop with APPROVAL_REQUIRED and production keeps serving
// what it did; a dry run says so.
func TestImport_ProtectedEnvironment(t *testing.T) {
	src, c, versions := mustSourceData(t)
	files := t.TempDir()
	mustRun(t, nil, "export", "--data", src, "--out", files)

	// Roll production back, then protect it.
	ctx := context.Background()
	eng, err := engine.OpenSQLite(ctx, src, engine.Options{})
	require.NoError(t, err)
	ws, err := eng.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	require.NoError(t, err)
	actx := canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleAdmin})
	pub, _, err := eng.Environments.Publish(actx, env.PublishVersionParams{CanvasID: c.ID, EnvName: env.Production,
		VersionID: versions[0].ID})
	require.NoError(t, err)
	_, err = eng.Environments.SetPolicy(actx, env.SetPolicyParams{ID: pub.EnvironmentID, Protected: true})
	require.NoError(t, err)
	require.NoError(t, eng.Close())

	dry := mustRun(t, nil, "import", "--data", src, "--in", files, "--dry-run")
	assert.Contains(t, dry, `cannot publish version `+versions[2].ID+` to "production" of "Support bot": the environment is protected`)
	assert.Contains(t, dry, "POST /publication-requests")

	var stdout, stderr bytes.Buffer
	err = run(ctx, []string{"import", "--data", src, "--in", files}, getenv(nil), &stdout, &stderr)
	require.Error(t, err)
	assert.Equal(t, canvas.EAPPROVALREQUIRED, canvas.ErrorCode(err), "%v", err)
	assert.Contains(t, err.Error(), "POST /publication-requests")

	eng, err = engine.OpenSQLite(ctx, src, engine.Options{})
	require.NoError(t, err)
	defer eng.Close()
	served, err := eng.Environments.ActiveVersion(actx, env.ActiveVersionParams{CanvasID: c.ID, EnvName: env.Production})
	require.NoError(t, err)
	assert.Equal(t, versions[0].ID, served.ID, "production serves what it did")
}
