package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/engine/pgengine"
	"github.com/promptcanvas/promptcanvas/internal/pgtest"
)

// newKeyFile creates a key file for --secrets-key-file in a temporary
// directory and returns its path.
func newKeyFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secrets.key")
	out := mustRun(t, nil, "secrets", "create-key", "--out", path)
	require.Contains(t, out, "created "+path)
	return path
}

// keyIDs returns the ids of a key file's keys, the current one first.
func keyIDs(t *testing.T, path string) []string {
	t.Helper()
	ring, err := credential.LoadKeyFile(path)
	require.NoError(t, err)
	var ids []string
	for _, k := range ring.Keys() {
		ids = append(ids, k.ID)
	}
	return ids
}

func TestSecrets_CreateKey(t *testing.T) {
	t.Parallel()
	path := newKeyFile(t)
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	assert.Len(t, keyIDs(t, path), 1)

	var stderr bytes.Buffer
	err = run(context.Background(), []string{"secrets", "create-key", "--out", path}, getenv(nil), &bytes.Buffer{}, &stderr)
	assert.ErrorIs(t, err, os.ErrExist, "an existing key file is never overwritten")
	err = run(context.Background(), []string{"secrets", "create-key"}, getenv(nil), &bytes.Buffer{}, &stderr)
	assert.ErrorIs(t, err, errUsage)
}

func TestServe_SecretsKeyFile(t *testing.T) {
	t.Parallel()
	t.Run("PostgresNeedsOne", func(t *testing.T) {
		var stderr bytes.Buffer
		err := run(context.Background(), []string{"--addr", "127.0.0.1:0", "--database", "postgres://canvas@127.0.0.1:1/canvas"},
			getenv(nil), &bytes.Buffer{}, &stderr)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "--secrets-key-file")
		assert.Contains(t, err.Error(), "CANVAS_SECRETS_KEY_FILE")
	})
	t.Run("RefusesReadableByOthers", func(t *testing.T) {
		path := newKeyFile(t)
		require.NoError(t, os.Chmod(path, 0o640))
		err := run(context.Background(), []string{"--addr", "127.0.0.1:0", "--data", t.TempDir()},
			getenv(map[string]string{"CANVAS_SECRETS_KEY_FILE": path}), &bytes.Buffer{}, &bytes.Buffer{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "chmod 600")
	})
	t.Run("SQLiteDefaultIsMadeAndSaid", func(t *testing.T) {
		dir := t.TempDir()
		d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", dir}, nil)
		require.NoError(t, d.stop())
		info, err := os.Stat(filepath.Join(dir, engine.SecretsKeyFile))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
		assert.Contains(t, d.Stderr.String(), "created the secrets key file")
	})
}

// TestSecrets_RotateKey_SQLite rotates the key of a data directory beside
// its running server: every credential opens under the new key alone, the
// file holds that key alone, and the server seals what it stores next
// under it.
func TestSecrets_RotateKey_SQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	admin := uuid.NewString()
	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", dir}, map[string]string{"CANVAS_BOOTSTRAP_API_KEY": admin})
	path := filepath.Join(dir, engine.SecretsKeyFile)
	before := keyIDs(t, path)

	keys := map[string]string{}
	for _, name := range []string{"a", "b"} {
		key := "sk-rotate-" + name + "-" + uuid.NewString()
		status, c := d.postJSON(t, "/credentials", admin, map[string]any{"name": name, "provider": "openai", "apiKey": key})
		require.Equal(t, http.StatusCreated, status, "%v", c)
		keys[c["id"].(string)] = key
	}
	status, project := d.postJSON(t, "/projects", admin, map[string]any{"name": "p"})
	require.Equal(t, http.StatusCreated, status, "%v", project)
	status, cv := d.postJSON(t, "/prompt", admin, map[string]any{"title": "c", "projectId": project["id"]})
	require.Equal(t, http.StatusCreated, status, "%v", cv)
	status, ev := d.postJSON(t, "/evaluators", admin, map[string]any{"promptId": cv["id"], "name": "team",
		"type": "webhook", "url": "https://example.com/judge"})
	require.Equal(t, http.StatusCreated, status, "%v", ev)
	require.NotEmpty(t, ev["secret"], "the new secret, shown once")

	out := mustRun(t, nil, "secrets", "rotate-key", "--data", dir)
	assert.Contains(t, out, "re-sealed 2 credentials and the webhook secrets of 1 evaluators and experiments")
	after := keyIDs(t, path)
	require.Len(t, after, 1, "the older keys left the file")
	assert.NotEqual(t, before[0], after[0])
	assert.Contains(t, out, after[0])

	status, c := d.postJSON(t, "/credentials", admin, map[string]any{"name": "c", "provider": "openai", "apiKey": "sk-after-rotation"})
	require.Equal(t, http.StatusCreated, status, "%v", c)
	keys[c["id"].(string)] = "sk-after-rotation"
	require.NoError(t, d.stop())

	ring, err := credential.LoadKeyFile(path)
	require.NoError(t, err)
	eng, err := engine.OpenSQLite(context.Background(), dir, engine.Options{Secrets: ring})
	require.NoError(t, err)
	defer eng.Close()
	ws := openWorkspace(t, eng)
	for id, key := range keys {
		opened, _, err := eng.Credentials.Open(context.Background(), ws, id)
		require.NoError(t, err)
		assert.Equal(t, key, opened.APIKey)
	}
	saved, err := eng.Store.GetEvaluator(context.Background(), ws, ev["id"].(string))
	require.NoError(t, err)
	assert.Empty(t, saved.Secret, "stored sealed")
	require.NotNil(t, saved.Sealed)
	assert.Equal(t, after[0], saved.Sealed.KeyID, "re-sealed under the new key")
	assert.Contains(t, mustRun(t, nil, "secrets", "rotate-key", "--data", dir),
		"re-sealed 3 credentials and the webhook secrets of 1 evaluators and experiments")
}

// openWorkspace returns the id of the default workspace of eng.
func openWorkspace(t *testing.T, eng *engine.Engine) string {
	t.Helper()
	ws, err := eng.Store.GetWorkspaceByName(context.Background(), "default")
	require.NoError(t, err)
	return ws.ID
}

// TestSecrets_RotateKey_Postgres rotates the key of a Postgres database,
// as its replicas share it.
func TestSecrets_RotateKey_Postgres(t *testing.T) {
	t.Parallel()
	dsn := pgtest.New(t)
	path := newKeyFile(t)
	admin := uuid.NewString()
	vars := map[string]string{"CANVAS_DATABASE": dsn, "CANVAS_SECRETS_KEY_FILE": path, "CANVAS_BOOTSTRAP_API_KEY": admin}
	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir()}, vars)
	key := "sk-pg-rotate-" + uuid.NewString()
	status, c := d.postJSON(t, "/credentials", admin, map[string]any{"name": "a", "provider": "anthropic", "apiKey": key})
	require.Equal(t, http.StatusCreated, status, "%v", c)

	var stderr bytes.Buffer
	err := run(context.Background(), []string{"secrets", "rotate-key", "--database", dsn}, getenv(nil), &bytes.Buffer{}, &stderr)
	require.Error(t, err, "Postgres names its key file")
	assert.True(t, strings.Contains(err.Error(), "--secrets-key-file"), "%v", err)

	assert.Contains(t, mustRun(t, vars, "secrets", "rotate-key"), "re-sealed 1 credentials")
	require.Len(t, keyIDs(t, path), 1)
	require.NoError(t, d.stop())

	ring, err := credential.LoadKeyFile(path)
	require.NoError(t, err)
	eng, err := pgengine.Open(context.Background(), dsn, engine.Options{Secrets: ring})
	require.NoError(t, err)
	defer eng.Close()
	opened, _, err := eng.Credentials.Open(context.Background(), openWorkspace(t, eng), c["id"].(string))
	require.NoError(t, err)
	assert.Equal(t, key, opened.APIKey)
}
