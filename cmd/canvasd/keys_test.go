package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// firstLine returns the first line of out, which must be an API key token.
func firstLine(t *testing.T, out string) string {
	t.Helper()
	line, _, _ := strings.Cut(out, "\n")
	require.True(t, canvas.IsAPIKeyToken(line), "first line %q is an API key", line)
	return line
}

// keysTable parses the output of keys list into rows by key id.
func keysTable(t *testing.T, out string) map[string][]string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.NotEmpty(t, lines)
	assert.Equal(t, []string{"ID", "NAME", "WORKSPACE", "ROLE", "PROJECTS", "CREATED", "REVOKED"}, strings.Fields(lines[0]))
	rows := map[string][]string{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		require.Len(t, f, 7, "row %q", l)
		rows[f[0]] = f
	}
	return rows
}

// TestKeys_WhileServing runs every keys command against the data of a
// running server, and uses what they did through the server.
func TestKeys_WhileServing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	admin := uuid.NewString()
	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", dir},
		map[string]string{"CANVAS_BOOTSTRAP_API_KEY": admin})
	db := openStore(t, dir)
	data := []string{"--data", dir}

	// keys create in the existing workspace.
	editor := firstLine(t, mustRun(t, nil, append([]string{"keys", "create", "--workspace", "default", "--role", "editor",
		"--name", " ci-bot "}, data...)...))
	assert.Equal(t, http.StatusOK, d.get(t, "/projects", editor))

	// keys create in a new workspace, with the data directory from the
	// environment.
	team := firstLine(t, mustRun(t, map[string]string{"CANVAS_DATA": dir}, "keys", "create", "--workspace", "team", "--role", "viewer"))
	assert.Equal(t, http.StatusOK, d.get(t, "/projects", team))
	ws, err := db.GetWorkspaceByName(context.Background(), "team")
	require.NoError(t, err)
	teamKey, err := db.GetAPIKeyByHash(context.Background(), canvas.HashToken(team))
	require.NoError(t, err)
	assert.Equal(t, ws.ID, teamKey.WorkspaceID)
	assert.Equal(t, canvas.RoleViewer, teamKey.Role)

	// keys create restricted to a project.
	project := &canvas.Project{Name: "p", WorkspaceID: ws.ID}
	require.NoError(t, db.CreateProject(context.Background(), project))
	restricted := firstLine(t, mustRun(t, nil, append([]string{"keys", "create", "--workspace", "team", "--role", "editor",
		"--project", project.ID, "--project", project.ID}, data...)...))
	restrictedKey, err := db.GetAPIKeyByHash(context.Background(), canvas.HashToken(restricted))
	require.NoError(t, err)
	assert.Equal(t, []string{project.ID}, restrictedKey.Projects)

	// keys list shows them all.
	rows := keysTable(t, mustRun(t, nil, append([]string{"keys", "list"}, data...)...))
	assert.Len(t, rows, 4)
	editorID := keyID(t, db, editor)
	require.Contains(t, rows, editorID)
	assert.Equal(t, []string{"ci-bot", "default", "editor", "all"}, rows[editorID][1:5])
	assert.Equal(t, "-", rows[editorID][6])
	require.Contains(t, rows, restrictedKey.ID)
	assert.Equal(t, []string{"-", "team", "editor", project.ID}, rows[restrictedKey.ID][1:5])

	teamRows := keysTable(t, mustRun(t, nil, append([]string{"keys", "list", "--workspace", "team"}, data...)...))
	assert.Len(t, teamRows, 2)

	// keys revoke, with the flag after the id: the key stops working.
	out := mustRun(t, nil, "keys", "revoke", editorID, "--data", dir)
	assert.Equal(t, "revoked "+editorID+"\n", out)
	assert.Equal(t, http.StatusUnauthorized, d.get(t, "/projects", editor))
	assert.Equal(t, http.StatusOK, d.get(t, "/projects", admin))
	rows = keysTable(t, mustRun(t, nil, append([]string{"keys", "list"}, data...)...))
	assert.NotEqual(t, "-", rows[editorID][6], "the revocation time is listed")

	// Revoking again is no error.
	mustRun(t, nil, "keys", "revoke", editorID, "--data", dir)
}

func TestKeys_Errors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, nil, "keys", "create", "--workspace", "default", "--role", "admin", "--data", dir)

	usage := map[string][]string{
		"CreateNoWorkspace":   {"keys", "create", "--role", "admin"},
		"CreateNoRole":        {"keys", "create", "--workspace", "default"},
		"CreateUnknownRole":   {"keys", "create", "--workspace", "default", "--role", "owner"},
		"CreatePositional":    {"keys", "create", "--workspace", "default", "--role", "admin", "extra"},
		"CreateBlankName":     {"keys", "create", "--workspace", "default", "--role", "admin", "--name", "  "},
		"RevokeNoID":          {"keys", "revoke"},
		"RevokeTwoIDs":        {"keys", "revoke", "a", "b"},
		"UnknownKeysCommand":  {"keys", "rotate"},
		"ListUnexpectedValue": {"keys", "list", "extra"},
	}
	for name, args := range usage {
		t.Run(name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := run(context.Background(), append(args, "--data", dir), getenv(nil), io.Discard, &stderr)
			assert.ErrorIs(t, err, errUsage)
			assert.NotEmpty(t, stderr.String(), "the problem is explained")
		})
	}

	failures := map[string][]string{
		"UnknownProject":   {"keys", "create", "--workspace", "default", "--role", "admin", "--project", uuid.NewString(), "--data", dir},
		"RevokeUnknownKey": {"keys", "revoke", uuid.NewString(), "--data", dir},
		"ListUnknownWS":    {"keys", "list", "--workspace", "nope", "--data", dir},
		"ListNoDatabase":   {"keys", "list", "--data", filepath.Join(dir, "missing")},
		"RevokeNoDatabase": {"keys", "revoke", uuid.NewString(), "--data", filepath.Join(dir, "missing")},
	}
	for name, args := range failures {
		t.Run(name, func(t *testing.T) {
			var stdout bytes.Buffer
			err := run(context.Background(), args, getenv(nil), &stdout, io.Discard)
			assert.Error(t, err)
			assert.NotErrorIs(t, err, errUsage)
			assert.Empty(t, stdout.String())
		})
	}

	t.Run("FlagBeatsEnv", func(t *testing.T) {
		other := t.TempDir()
		out := mustRun(t, map[string]string{"CANVAS_DATA": other}, "keys", "list", "--data", dir)
		assert.Len(t, keysTable(t, out), 1)
		assert.NoFileExists(t, filepath.Join(other, "canvas.db"))
	})
}
