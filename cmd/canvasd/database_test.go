package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/internal/pgtest"
	"github.com/promptcanvas/promptcanvas/internal/s3test"
	"github.com/promptcanvas/promptcanvas/vault/bucketblobs"
)

func TestParseDatabase(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw  string
		want database
	}{
		{"", database{Kind: kindSQLite, Dir: "data"}},
		{"sqlite:", database{Kind: kindSQLite, Dir: "data"}},
		{"sqlite:/srv/canvas", database{Kind: kindSQLite, Dir: "/srv/canvas"}},
		{"postgres://u:p@db:5432/canvas?pool_max_conns=20", database{Kind: kindPostgres, DSN: "postgres://u:p@db:5432/canvas?pool_max_conns=20"}},
		{"postgresql://u@db/canvas", database{Kind: kindPostgres, DSN: "postgresql://u@db/canvas"}},
	} {
		got, err := parseDatabase(tc.raw, "data")
		require.NoError(t, err, tc.raw)
		assert.Equal(t, tc.want, got, tc.raw)
	}
	for _, raw := range []string{"mysql://u:hunter2@db/x", "canvas.db", "postgres://", "postgres:///x"} {
		_, err := parseDatabase(raw, "data")
		require.Error(t, err, raw)
		assert.NotContains(t, err.Error(), "hunter2", "an error never repeats a password")
	}
	db, err := parseDatabase("postgres://u:hunter2@db/x", "")
	require.NoError(t, err)
	assert.NotContains(t, db.String(), "hunter2", "logs name the database without its password")
}

func TestRun_BadDatabase(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"serve", "--addr", "127.0.0.1:0", "--database", "mysql://db/x"},
		{"keys", "list", "--database", "mysql://db/x"},
		{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--blobs", "gs://bucket"},
	} {
		err := run(context.Background(), args, getenv(nil), io.Discard, io.Discard)
		require.Error(t, err, "%v", args)
	}
}

// TestKeys_Postgres manages keys in a Postgres database and serves with
// them.
func TestKeys_Postgres(t *testing.T) {
	t.Parallel()
	dsn := pgtest.New(t)
	vars := map[string]string{"CANVAS_DATABASE": dsn}
	token := firstLine(t, mustRun(t, vars, "keys", "create", "--workspace", "acme", "--role", "editor"))
	table := keysTable(t, mustRun(t, nil, "keys", "list", "--database", dsn))
	require.Len(t, table, 1)
	var id string
	for k := range table {
		id = k
	}
	assert.Equal(t, []string{"-", "acme", "editor", "all"}, table[id][1:5], "an unnamed key")

	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir(), "--database", dsn,
		"--secrets-key-file", newKeyFile(t)}, nil)
	assert.Equal(t, http.StatusOK, d.get(t, "/projects", token))
	assert.Contains(t, mustRun(t, vars, "keys", "revoke", id), "revoked "+id)
	assert.Equal(t, http.StatusUnauthorized, d.get(t, "/projects", token), "a revocation reaches a running server")
}

// TestServe_Replicas_UploadURL runs two servers on one Postgres database: an
// upload URL that one signs is accepted by the other, and the bytes it
// stores (in the database, or in an S3 bucket both use) are read by the
// first.
func TestServe_Replicas_UploadURL(t *testing.T) {
	s3test.SetCredentials(t)
	srv := s3test.Start(t)
	srv.CreateBucket(t, "files")
	for _, blobs := range []string{"", srv.URL("files")} {
		name := "Postgres"
		if blobs != "" {
			name = "S3"
		}
		t.Run(name, func(t *testing.T) {
			dsn := pgtest.New(t)
			key := uuid.NewString()
			vars := map[string]string{"CANVAS_DATABASE": dsn, "CANVAS_BLOBS": blobs, "CANVAS_BOOTSTRAP_API_KEY": key,
				"CANVAS_SECRETS_KEY_FILE": newKeyFile(t)}
			a := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir()}, vars)
			b := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir()}, vars)

			status, up := a.postJSON(t, "/v3/files", key, map[string]any{"fileName": "notes.txt"}, "x-compatibility-date", "2025-01-01")
			require.Equal(t, http.StatusCreated, status, "%v", up)
			u, err := url.Parse(up["uploadUrl"].(string))
			require.NoError(t, err)
			data := "bytes for " + uuid.NewString()
			req, err := http.NewRequest(http.MethodPut, b.URL+u.RequestURI(), strings.NewReader(data))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "text/plain")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode, "the other replica verifies the URL: %s", body)

			tampered := strings.Replace(u.RequestURI(), "signature=", "signature=x", 1)
			req, err = http.NewRequest(http.MethodPut, b.URL+tampered, bytes.NewReader([]byte(data)))
			require.NoError(t, err)
			resp, err = http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusForbidden, resp.StatusCode, "a tampered URL is refused")

			// The first replica reads the bytes the second stored: a
			// completion inlines the file.
			status, p := a.postJSON(t, "/projects", key, map[string]any{"name": "p"})
			require.Equal(t, http.StatusCreated, status, "%v", p)
			status, c := a.postJSON(t, "/prompt", key, map[string]any{"title": "reader", "projectId": p["id"]})
			require.Equal(t, http.StatusCreated, status, "%v", c)
			status, v := a.postJSON(t, "/prompt-version", key, map[string]any{"promptId": c["id"],
				"configuration": map[string]any{"model": "echo"},
				"variables":     []any{map[string]any{"name": "doc", "type": "file"}},
				"message":       map[string]any{"role": "user", "content": "{{doc}}"}})
			require.Equal(t, http.StatusCreated, status, "%v", v)
			status, got := a.postJSON(t, "/v2/chat/completions", key, map[string]any{"canvas_id": c["id"],
				"version_id": v["id"], "variables": map[string]any{"doc": map[string]any{"file_url": "vault://" + up["id"].(string)}}})
			require.Equal(t, http.StatusOK, status, "%v", got)
			assert.Contains(t, fmt.Sprint(got), data)
		})
	}
}

// TestServe_SQLiteS3 keeps the files of a SQLite server in an S3 bucket:
// the bytes land in the bucket, none in the data directory.
func TestServe_SQLiteS3(t *testing.T) {
	s3test.SetCredentials(t)
	srv := s3test.Start(t)
	srv.CreateBucket(t, "files")
	dir, key := t.TempDir(), uuid.NewString()
	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", dir, "--blobs", srv.URL("files") + "&prefix=canvas/"},
		map[string]string{"CANVAS_BOOTSTRAP_API_KEY": key})
	status, up := d.postJSON(t, "/v3/files", key, map[string]any{"fileName": "notes.txt"}, "x-compatibility-date", "2025-01-01")
	require.Equal(t, http.StatusCreated, status, "%v", up)
	u, err := url.Parse(up["uploadUrl"].(string))
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPut, d.URL+u.RequestURI(), strings.NewReader("in the bucket"))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, d.stop())

	entries, err := os.ReadDir(filepath.Join(dir, "files"))
	if !errors.Is(err, os.ErrNotExist) {
		require.NoError(t, err)
		assert.Empty(t, entries, "no bytes in the data directory")
	}
	db := openStore(t, dir)
	ws, err := db.GetWorkspaceByName(t.Context(), "default")
	require.NoError(t, err)
	f, err := db.GetFile(t.Context(), ws.ID, up["id"].(string))
	require.NoError(t, err)
	bucket, err := bucketblobs.Open(t.Context(), srv.URL("files"))
	require.NoError(t, err)
	defer bucket.Close()
	rc, err := bucket.Open(t.Context(), "canvas/"+f.BlobKey)
	require.NoError(t, err, "the bytes are in the bucket, under the prefix")
	got, err := io.ReadAll(rc)
	rc.Close()
	require.NoError(t, err)
	assert.Equal(t, "in the bucket", string(got))
}
