package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRun_Files runs the two-step upload against canvasd: the upload URL
// carries the bound address, the bytes land in <data>/files, and the
// metadata reads back.
func TestRun_Files(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := uuid.NewString()
	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", dir, "--max-file-size", "64"},
		map[string]string{"CANVAS_BOOTSTRAP_API_KEY": key, "CANVAS_UPLOAD_URL_LIFETIME": "2m"})

	status, up := d.postJSON(t, "/v3/files", key, map[string]any{"fileName": "hello.txt"},
		"x-compatibility-date", "2025-01-01")
	require.Equal(t, http.StatusCreated, status, "%v", up)
	uploadURL := up["uploadUrl"].(string)
	assert.True(t, strings.HasPrefix(uploadURL, d.URL+"/v3/files/"), "%s is under %s", uploadURL, d.URL)
	expires, err := time.Parse(time.RFC3339, up["expiresAt"].(string))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now().Add(2*time.Minute), expires, 5*time.Second, "the configured lifetime")

	put := func(body string) int {
		req, err := http.NewRequest(http.MethodPut, uploadURL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "text/plain")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusRequestEntityTooLarge, put(strings.Repeat("x", 65)), "the configured size limit")
	require.Equal(t, http.StatusOK, put("hello, files"))

	req, err := http.NewRequest(http.MethodGet, d.URL+"/v3/files/"+up["id"].(string), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("x-compatibility-date", "2025-06-01")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "2025-01-01", resp.Header.Get("x-compatibility-date"))
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var meta map[string]any
	require.NoError(t, json.Unmarshal(b, &meta))
	sum := sha256.Sum256([]byte("hello, files"))
	assert.Equal(t, hex.EncodeToString(sum[:]), meta["sha256"])
	assert.Equal(t, "uploaded", meta["status"])

	entries, err := os.ReadDir(filepath.Join(dir, "files"))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "the bytes are under <data>/files")
	require.NoError(t, d.stop())

	// The URL was signed with a secret kept in the database.
	db := openStore(t, dir)
	secret, err := db.UploadSecret(context.Background())
	require.NoError(t, err)
	assert.Len(t, secret, 32)
}

func TestRun_BadFileConfig(t *testing.T) {
	t.Parallel()
	for name, vars := range map[string]map[string]string{
		"Lifetime":    {"CANVAS_UPLOAD_URL_LIFETIME": "soon"},
		"NegLifetime": {"CANVAS_UPLOAD_URL_LIFETIME": "-1m"},
		"MaxSize":     {"CANVAS_MAX_FILE_SIZE": "big"},
	} {
		t.Run(name, func(t *testing.T) {
			vars["CANVAS_DATA"] = t.TempDir()
			vars["CANVAS_ADDR"] = "127.0.0.1:0"
			err := run(context.Background(), nil, getenv(vars), io.Discard, io.Discard)
			assert.Error(t, err)
			assert.NotErrorIs(t, err, errUsage)
		})
	}
}
