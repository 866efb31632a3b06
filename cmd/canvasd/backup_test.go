package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ackedWrite is a write the server acknowledged: the path that reads it
// back, and when the acknowledgement arrived.
type ackedWrite struct {
	path  string
	acked time.Time
}

// loadClient sends the writes of the backup test's load, without the
// testing.T (it runs in goroutines).
type loadClient struct {
	url, key string
}

// send sends a JSON body and decodes the JSON answer.
func (c loadClient) send(method, path string, body any, want int) (map[string]any, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("x-compatibility-date", "2025-01-01")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	var out map[string]any
	if len(raw) > 0 {
		err = json.Unmarshal(raw, &out)
	}
	return out, err
}

// upload creates a file and uploads data to it, and returns its id.
func (c loadClient) upload(name, data string) (string, error) {
	up, err := c.send(http.MethodPost, "/v3/files", map[string]any{"fileName": name}, http.StatusCreated)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(up["uploadUrl"].(string))
	if err != nil {
		return "", err
	}
	req, err := http.NewRequest(http.MethodPut, c.url+u.RequestURI(), strings.NewReader(data))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("upload: %d", resp.StatusCode)
	}
	return up["id"].(string), nil
}

// writeLoad runs one writer of mixed writes against the canvas of w until
// stop is closed: new versions, publishes, completions (run records) and
// uploads, each recorded once acknowledged.
func writeLoad(c loadClient, w *sourceWorld, n int, stop <-chan struct{}, record func(ackedWrite)) error {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return nil
		default:
		}
		var path string
		switch i % 4 {
		case 0, 1:
			v, err := c.send(http.MethodPost, "/prompt-version", map[string]any{"promptId": w.Canvas,
				"configuration": map[string]any{"model": "echo"},
				"message":       map[string]any{"role": "system", "content": fmt.Sprintf("Hello {{name}} %d.%d", n, i)}},
				http.StatusCreated)
			if err != nil {
				return err
			}
			path = "/prompt-version/" + v["id"].(string)
			if i%4 == 1 {
				if _, err := c.send(http.MethodPost, "/environment/publish", map[string]any{"resourceType": "prompt",
					"resourceId": w.Canvas, "envName": fmt.Sprintf("load-%d", n), "versionId": v["id"]},
					http.StatusCreated); err != nil {
					return err
				}
				path = fmt.Sprintf("/environment/version?resourceType=prompt&resourceId=%s&envName=load-%d", w.Canvas, n)
			}
		case 2:
			r, err := c.send(http.MethodPost, "/v2/chat/completions", map[string]any{"canvas_id": w.Canvas,
				"variables": map[string]any{"name": fmt.Sprint(i)}}, http.StatusOK)
			if err != nil {
				return err
			}
			path = "/v2/chat/completions/" + r["id"].(string)
		case 3:
			id, err := c.upload(fmt.Sprintf("load-%d-%d.txt", n, i), fmt.Sprintf("bytes of %d.%d", n, i))
			if err != nil {
				return err
			}
			path = "/v3/files/" + id
		}
		record(ackedWrite{path: path, acked: time.Now()})
	}
}

// TestBackup_UnderLoad backs up a data directory with canvasd backup while
// the canvasd binary serves it under a mixed write load, restores the
// backup into a new directory with canvasd restore, serves it, and checks
// that every write acknowledged before the backup began is there, that
// the world written before the load reads back, and that the restored
// server publishes, completes, uploads and runs workflows.
func TestBackup_UnderLoad(t *testing.T) {
	t.Parallel()
	bin := buildCanvasd(t)
	dir := t.TempDir()
	w := mustSourceWorld(t, dir)

	server := startChild(t, "backed up", bin, []string{"--data", dir}, []string{"CANVAS_ALLOW_PRIVATE_NETWORKS=1"})
	c := loadClient{url: server.URL, key: w.Key}
	var (
		mu    sync.Mutex
		acked []ackedWrite
	)
	stop := make(chan struct{})
	errs := make(chan error, 4)
	var failed error
	for n := range 4 {
		_, err := c.send(http.MethodPost, "/environment", map[string]any{"resourceType": "prompt", "resourceId": w.Canvas,
			"name": fmt.Sprintf("load-%d", n)}, http.StatusCreated)
		require.NoError(t, err)
	}
	for n := range 4 {
		go func() {
			err := writeLoad(c, w, n, stop, func(a ackedWrite) { mu.Lock(); acked = append(acked, a); mu.Unlock() })
			mu.Lock()
			failed = cmp.Or(failed, err)
			mu.Unlock()
			errs <- err
		}()
	}
	loaded := func(n int) func() bool {
		return func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= n || failed != nil }
	}
	require.Eventually(t, loaded(40), waitLimit, 10*time.Millisecond, "the load is under way")
	mu.Lock()
	require.NoError(t, failed)
	mu.Unlock()

	backupDir := filepath.Join(t.TempDir(), "backup")
	began := time.Now()
	out, err := exec.CommandContext(t.Context(), bin, "backup", "--data", dir, "--to", backupDir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "secrets key file")
	assert.Contains(t, string(out), "keep it where only the operator can read it")
	mu.Lock()
	during := len(acked)
	mu.Unlock()
	require.Eventually(t, loaded(during+20), waitLimit, 10*time.Millisecond, "writes go on after the backup")
	close(stop)
	for range 4 {
		require.NoError(t, <-errs, "no write failed while the backup ran; the server's log:\n%s", server.Stderr())
	}
	server.Stop()

	restored := filepath.Join(t.TempDir(), "restored")
	out, err = exec.CommandContext(t.Context(), bin, "restore", "--from", backupDir, "--data", restored).CombinedOutput()
	require.NoError(t, err, "%s", out)
	key, err := os.ReadFile(filepath.Join(restored, "secrets.key"))
	require.NoError(t, err)
	original, err := os.ReadFile(filepath.Join(dir, "secrets.key"))
	require.NoError(t, err)
	assert.Equal(t, original, key, "the key file is restored")

	d := &daemon{URL: startChild(t, "restored", bin, []string{"--data", restored},
		[]string{"CANVAS_ALLOW_PRIVATE_NETWORKS=1"}).URL}
	rc := loadClient{url: d.URL, key: w.Key}
	var before int
	for _, a := range acked {
		if a.acked.Before(began) {
			before++
			_, err := rc.send(http.MethodGet, a.path, nil, http.StatusOK)
			assert.NoError(t, err, "acknowledged before the backup")
		}
	}
	require.GreaterOrEqual(t, before, 40)
	readAll(t, d, w.Key, w.reads())

	// Smoke: publish, completion reading the uploaded file, upload, workflow.
	// The world's staging is protected, so the smoke run publishes to
	// production.
	status, v := d.postJSON(t, "/prompt-version", w.Key, map[string]any{"promptId": w.Canvas,
		"configuration": map[string]any{"model": "echo"},
		"variables":     []any{map[string]any{"name": "doc", "type": "file"}},
		"message":       map[string]any{"role": "user", "content": "{{doc}}"}})
	require.Equal(t, http.StatusCreated, status, "%v", v)
	status, p := d.postJSON(t, "/environment/publish", w.Key, map[string]any{"resourceType": "prompt",
		"resourceId": w.Canvas, "envName": "production", "versionId": v["id"]})
	require.Equal(t, http.StatusCreated, status, "%v", p)
	status, got := d.postJSON(t, "/v2/chat/completions", w.Key, map[string]any{"canvas_id": w.Canvas,
		"environment_name": "production", "variables": map[string]any{"doc": map[string]any{"file_url": "vault://" + w.File}}})
	require.Equal(t, http.StatusOK, status, "%v", got)
	assert.Contains(t, fmt.Sprint(got), w.FileBytes, "the file's bytes were restored")
	id, err := rc.upload("after.txt", "after the restore")
	require.NoError(t, err)
	_, err = rc.send(http.MethodGet, "/v3/files/"+id, nil, http.StatusOK)
	assert.NoError(t, err)
	status, run := d.postJSON(t, "/workflow/runs", w.Key, map[string]any{"versionId": w.WorkflowVersion,
		"input": map[string]any{"name": "Ada"}})
	require.Equal(t, http.StatusCreated, status, "%v", run)
	require.Eventually(t, func() bool {
		_, r := d.sendJSON(t, http.MethodGet, "/workflow/runs/"+run["id"].(string), w.Key, nil)
		return r["status"] == "completed" || r["status"] == "succeeded"
	}, waitLimit, 20*time.Millisecond, "the workflow run ends")
}

// TestBackup_Refusals: a backup goes to a new or empty directory, a
// restore into a new or empty one, and a backup that does not match its
// manifest is not restored.
func TestBackup_Refusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, nil, "keys", "create", "--workspace", "default", "--role", "admin", "--data", dir)
	full := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(full, "x"), nil, 0o600))
	ctx := context.Background()

	err := run(ctx, []string{"backup", "--data", dir, "--to", full}, getenv(nil), io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not empty")
	err = run(ctx, []string{"backup", "--data", t.TempDir(), "--to", t.TempDir()}, getenv(nil), io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no database in")
	err = run(ctx, []string{"backup", "--database", "postgres://h/db", "--to", t.TempDir()}, getenv(nil), io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pg_dump")

	b := filepath.Join(t.TempDir(), "b")
	mustRun(t, nil, "backup", "--data", dir, "--to", b)
	err = run(ctx, []string{"restore", "--from", b, "--data", full}, getenv(nil), io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not empty")
	err = run(ctx, []string{"restore", "--from", t.TempDir(), "--data", t.TempDir()}, getenv(nil), io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "holds no manifest.json")

	f, err := os.OpenFile(filepath.Join(b, "canvas.db"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte{0})
	require.NoError(t, err)
	require.NoError(t, f.Close())
	target := filepath.Join(t.TempDir(), "r")
	err = run(ctx, []string{"restore", "--from", b, "--data", target}, getenv(nil), io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "canvas.db does not match the manifest")
	_, err = os.Stat(target)
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing is written for a backup that fails its check")

	var stderr bytes.Buffer
	err = run(ctx, []string{"restore", "--from", b}, getenv(nil), io.Discard, &stderr)
	assert.ErrorIs(t, err, errUsage)
	assert.Contains(t, stderr.String(), "restore --from DIR --data NEW_DIR")
}

// canvasd healthcheck succeeds against a serving server, asked on loopback
// for an unspecified address, and fails where nothing answers.
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, []string{"--addr", "0.0.0.0:0", "--data", t.TempDir()}, nil)
	u, err := url.Parse(d.URL)
	require.NoError(t, err)
	_, port, err := net.SplitHostPort(u.Host)
	require.NoError(t, err)
	out := mustRun(t, nil, "healthcheck", "--addr", "0.0.0.0:"+port)
	assert.Contains(t, out, "/healthz: ok")
	require.NoError(t, d.stop())
	err = run(context.Background(), []string{"healthcheck", "--addr", "127.0.0.1:" + port}, getenv(nil), io.Discard, io.Discard)
	assert.ErrorContains(t, err, "health check")
}
