package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServe_DataDirHeld runs canvasd as a child process on a data directory:
// a second server on it fails, naming the directory and its holder, while
// the other commands work beside the server; once the first is killed
// (SIGKILL), a server starts on the directory again.
func TestServe_DataDirHeld(t *testing.T) {
	t.Parallel()
	bin := buildCanvasd(t)
	dir := t.TempDir()
	admin := uuid.NewString()
	first := startChild(t, "first", bin, []string{"--data", dir}, []string{"CANVAS_BOOTSTRAP_API_KEY=" + admin})

	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data", dir}, getenv(nil), &stdout, &stderr)
	require.Error(t, err, "a second server on the same data directory")
	assert.ErrorContains(t, err, "another server holds the data directory")
	assert.ErrorContains(t, err, dir)
	assert.ErrorContains(t, err, fmt.Sprintf("(process %d)", first.PID()), "the holder is named")
	assert.NotContains(t, stdout.String(), "listening on")

	rows := keysTable(t, mustRun(t, nil, "keys", "list", "--data", dir))
	assert.Len(t, rows, 1, "keys works beside the server")
	mustRun(t, nil, "export", "--data", dir, "--out", filepath.Join(t.TempDir(), "export"))

	first.Kill()
	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", dir}, nil)
	assert.Equal(t, 200, d.get(t, "/projects", admin), "the killed server's lock went with it")
	require.NoError(t, d.stop())
}
