//go:build soak

package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

// crashLoad is how long the mixed load runs before the kill.
const crashLoad = 2 * time.Second

// crashClient sends the load's requests.
type crashClient struct {
	t      *testing.T
	url    string
	key    string
	client *http.Client
}

// post sends body to path with an optional Idempotency-Key and returns
// the status and the decoded answer; err is set when no answer came.
func (c *crashClient) post(path string, body any, idemKey string) (int, map[string]any, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequest(http.MethodPost, c.url+path, bytes.NewReader(raw))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	_ = json.Unmarshal(b, &out)
	return resp.StatusCode, out, nil
}

// get reads path and returns the status and the decoded answer.
func (c *crashClient) get(path string) (int, map[string]any) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.url+path, nil)
	require.NoError(c.t, err)
	req.Header.Set("Authorization", "Bearer "+c.key)
	resp, err := c.client.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &out)
	return resp.StatusCode, out
}

// keyedTask is a task sent with an Idempotency-Key: its prompt carries the
// key, so that the runs it made can be counted in the database.
type keyedTask struct {
	key string
	id  string // the acknowledged run id; empty when no answer came
}

func (k keyedTask) body() map[string]any { return map[string]any{"prompt": "task " + k.key} }

// TestCrash_KillUnderLoad builds canvasd, runs it as a child process under
// a mixed load (canvas writes, idempotent asynchronous tasks), kills it
// with SIGKILL mid-load and restarts it on the same data. Then every
// acknowledged canvas is there, every acknowledged task runs to its end,
// a retry of every acknowledged task answers its id, a retry of every task
// whose answer the crash swallowed gets an answer (once the dead process's
// hold on its key has lapsed) and ends, and each key made exactly one run.
func TestCrash_KillUnderLoad(t *testing.T) {
	start := time.Now()
	bin := buildCanvasd(t)
	t.Logf("built canvasd in %s", time.Since(start).Round(time.Millisecond))
	start = time.Now()

	dir := t.TempDir()
	admin := uuid.NewString()
	// One key sends the whole load: its rate is not limited.
	env := []string{"CANVAS_BOOTSTRAP_API_KEY=" + admin, "CANVAS_RATE_PER_KEY=0"}
	first := startChild(t, "", bin, []string{"--data", dir}, env)
	c := &crashClient{t: t, url: first.URL, key: admin, client: &http.Client{Timeout: 30 * time.Second}}

	status, project, err := c.post("/projects", map[string]any{"name": "load"}, "")
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, status, "%v", project)

	var (
		mu       sync.Mutex
		canvases []string // acknowledged canvas ids
		tasks    []*keyedTask
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if w%2 == 0 {
					status, out, err := c.post("/prompt", map[string]any{"title": fmt.Sprintf("c-%d-%d", w, i),
						"projectId": project["id"]}, "")
					if err == nil && status == http.StatusCreated {
						mu.Lock()
						canvases = append(canvases, out["id"].(string))
						mu.Unlock()
					}
					continue
				}
				k := &keyedTask{key: fmt.Sprintf("k-%d-%d-%s", w, i, uuid.NewString()[:8])}
				mu.Lock()
				tasks = append(tasks, k)
				mu.Unlock()
				status, out, err := c.post("/v1/tasks", k.body(), k.key)
				if err == nil && status == http.StatusAccepted {
					mu.Lock()
					k.id = out["id"].(string)
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(crashLoad)
	first.Kill() // mid-load: requests are in flight
	close(stop)
	wg.Wait()

	acked := 0
	for _, k := range tasks {
		if k.id != "" {
			acked++
		}
	}
	require.NotEmpty(t, canvases, "the load wrote canvases before the kill")
	require.Positive(t, acked, "the load had tasks accepted before the kill")
	t.Logf("before the kill: %d canvases and %d of %d tasks acknowledged", len(canvases), acked, len(tasks))

	second := startChild(t, "", bin, []string{"--data", dir}, env)
	c.url = second.URL

	for _, id := range canvases {
		status, _ := c.get("/prompt/" + id)
		assert.Equal(t, http.StatusOK, status, "acknowledged canvas %s survived", id)
	}

	t.Logf("restarted %s after the start of the load", time.Since(start).Round(time.Millisecond))

	// Retry every task with its key: an acknowledged one answers its id at
	// once; one whose answer was lost answers once the dead process's hold
	// on the key has lapsed, from the run it made if it made one.
	deadline := time.Now().Add(idempotencyLeaseBound)
	for _, k := range tasks {
		for {
			status, out, err := c.post("/v1/tasks", k.body(), k.key)
			require.NoError(t, err)
			if status == http.StatusConflict && k.id == "" && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			require.Equal(t, http.StatusAccepted, status, "retry of %s: %v", k.key, out)
			if k.id != "" {
				assert.Equal(t, k.id, out["id"], "the retry of acknowledged task %s answers its id", k.key)
			}
			k.id = out["id"].(string)
			break
		}
	}

	t.Logf("every key answered %s after the start of the load", time.Since(start).Round(time.Millisecond))

	// Every task runs to its end on the restarted server.
	for _, k := range tasks {
		require.Eventually(t, func() bool {
			status, out := c.get("/v1/tasks/" + k.id)
			return status == http.StatusOK && out["status"] == "completed"
		}, 30*time.Second, 50*time.Millisecond, "task %s (%s) completes", k.id, k.key)
	}

	// Each key made exactly one run: no acknowledged work was lost and no
	// retry ran its request twice.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "canvas.db")+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	for _, k := range tasks {
		var n int
		require.NoError(t, db.QueryRowContext(context.Background(),
			`SELECT COUNT(*) FROM runs WHERE kind = 'task' AND instr(request, ?) > 0`, "task "+k.key+`"`).Scan(&n))
		assert.Equal(t, 1, n, "key %s made one run", k.key)
	}

	require.NoError(t, second.Signal(syscall.SIGTERM))
	assert.NoError(t, second.Wait(), "the restarted server stops cleanly; stderr: %s", second.Stderr())
}

// idempotencyLeaseBound bounds how long a retry waits for the killed
// process's hold on a key to lapse: the default owner lease, with room.
const idempotencyLeaseBound = 30 * time.Second
