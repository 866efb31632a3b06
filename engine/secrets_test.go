package engine_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/engine"
)

// TestOpenSQLite_SecretsKeyFile checks the embedded default's key file:
// made on first start (mode 0600, and said so), the same on every later
// one, so that a credential stored before a restart opens after it; a key
// file the group or others may read stops the start.
func TestOpenSQLite_SecretsKeyFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	var logs bytes.Buffer
	e, err := engine.OpenSQLite(ctx, dir, engine.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	path := filepath.Join(dir, engine.SecretsKeyFile)
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	assert.Contains(t, logs.String(), "created the secrets key file")
	assert.Contains(t, logs.String(), path)

	_, admin, err := e.Bootstrap(ctx, "")
	require.NoError(t, err)
	require.NotEmpty(t, admin)
	ws, err := e.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	require.NoError(t, err)
	actx := canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, KeyID: "k", Role: canvas.RoleAdmin})
	key := "sk-restart-0123456789"
	c, err := e.Credentials.CreateCredential(actx, credential.CreateParams{Name: "a", Provider: canvas.ProviderOpenAI, APIKey: &key})
	require.NoError(t, err)
	require.NoError(t, e.Close())

	logs.Reset()
	e, err = engine.OpenSQLite(ctx, dir, engine.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	assert.NotContains(t, logs.String(), "created the secrets key file", "an existing file is loaded")
	opened, _, err := e.Credentials.Open(ctx, ws.ID, c.ID)
	require.NoError(t, err)
	assert.Equal(t, key, opened.APIKey)
	require.NoError(t, e.Close())

	require.NoError(t, os.Chmod(path, 0o644))
	_, err = engine.OpenSQLite(ctx, dir, engine.Options{})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "chmod 600"), "%v", err)

	other := filepath.Join(t.TempDir(), "given.key")
	ring, err := credential.CreateKeyFile(other)
	require.NoError(t, err)
	e, err = engine.OpenSQLite(ctx, dir, engine.Options{Secrets: ring})
	require.NoError(t, err, "a key ring given replaces the directory's file")
	_, _, err = e.Credentials.Open(ctx, ws.ID, c.ID)
	assert.Equal(t, canvas.EINTERNAL, canvas.ErrorCode(err), "sealed under another key: it does not open")
	require.NoError(t, e.Close())
}
