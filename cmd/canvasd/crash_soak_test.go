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
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/internal/childproc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

// crashLoad is how long the mixed load runs before each kill.
const crashLoad = 2 * time.Second

// crashKills is how many times the server is killed under load and
// restarted on the same data.
const crashKills = 3

// crashClients is how many clients send the load.
const crashClients = 8

// crashClient sends the load's requests.
type crashClient struct {
	t      *testing.T
	url    string
	key    string
	client *http.Client
}

// post sends body to path with an optional Idempotency-Key and returns
// the status, the headers and the decoded answer; err is set when no
// answer came.
func (c *crashClient) post(path string, body any, idemKey string) (int, http.Header, map[string]any, error) {
	return c.send(http.MethodPost, path, body, idemKey)
}

// send is post with any method.
func (c *crashClient) send(method, path string, body any, idemKey string) (int, http.Header, map[string]any, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return 0, nil, nil, err
	}
	req, err := http.NewRequest(method, c.url+path, bytes.NewReader(raw))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, err
	}
	_ = json.Unmarshal(b, &out)
	return resp.StatusCode, resp.Header, out, nil
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
// with SIGKILL mid-load and restarts it on the same data, crashKills
// times. After each restart every acknowledged canvas is there, and a
// retry of every task sent before the kill gets an answer: none is
// refused without Retry-After, and none is refused at all, since the
// restarted server releases the killed one's keys at start; the answer
// is the task's acknowledged id, and the run the killed server had
// created for the key when it made one (no run is orphaned). At the end
// every task runs to its end and each key made exactly one run.
func TestCrash_KillUnderLoad(t *testing.T) {
	start := time.Now()
	bin := buildCanvasd(t)
	t.Logf("built canvasd in %s", time.Since(start).Round(time.Millisecond))
	start = time.Now()

	dir := t.TempDir()
	admin := uuid.NewString()
	// One key sends the whole load: its rate is not limited.
	env := []string{"CANVAS_BOOTSTRAP_API_KEY=" + admin, "CANVAS_RATE_PER_KEY=0"}
	server := startChild(t, "", bin, []string{"--data", dir}, env)
	c := &crashClient{t: t, url: server.URL, key: admin, client: &http.Client{Timeout: 30 * time.Second}}

	status, _, project, err := c.post("/projects", map[string]any{"name": "load"}, "")
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, status, "%v", project)

	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "canvas.db")+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()

	var all []*keyedTask
	for kill := range crashKills {
		canvases, tasks := crashLoadThenKill(t, c, server, project["id"], kill)
		all = append(all, tasks...)

		server = startChild(t, "", bin, []string{"--data", dir}, env)
		c.url = server.URL
		for _, id := range canvases {
			status, _ := c.get("/prompt/" + id)
			assert.Equal(t, http.StatusOK, status, "acknowledged canvas %s survived", id)
		}
		// The runs the killed server made, read before any retry.
		made := make(map[*keyedTask][]string, len(tasks))
		for _, k := range tasks {
			made[k] = runsOf(t, db, k)
		}
		t.Logf("kill %d: restarted %s after the start of the load", kill+1, time.Since(start).Round(time.Millisecond))

		refused := retryTasks(t, c, tasks)
		assert.Zero(t, refused, "kill %d: the restarted server released the killed one's keys at start", kill+1)
		for _, k := range tasks {
			require.LessOrEqual(t, len(made[k]), 1, "key %s made at most one run before the kill", k.key)
			if len(made[k]) == 1 {
				assert.Equal(t, made[k][0], k.id, "the retry of %s answers the run the killed server made", k.key)
			}
		}
	}
	t.Logf("every key answered %s after the start of the load", time.Since(start).Round(time.Millisecond))

	// Every task runs to its end on the last server.
	for _, k := range all {
		require.Eventually(t, func() bool {
			status, out := c.get("/v1/tasks/" + k.id)
			return status == http.StatusOK && out["status"] == "completed"
		}, 30*time.Second, 50*time.Millisecond, "task %s (%s) completes", k.id, k.key)
	}

	// Each key made exactly one run: no acknowledged work was lost and no
	// retry ran its request twice.
	for _, k := range all {
		assert.Equal(t, []string{k.id}, runsOf(t, db, k), "key %s made one run, the one its retry answered", k.key)
	}

	require.NoError(t, server.Signal(syscall.SIGTERM))
	assert.NoError(t, server.Wait(), "the last server stops cleanly; stderr: %s", server.Stderr())
}

// crashLoadThenKill sends the mixed load to the server for crashLoad, kills
// it with SIGKILL while requests are in flight, and returns the
// acknowledged canvases and every task sent (acknowledged or not).
func crashLoadThenKill(t *testing.T, c *crashClient, server *childproc.Process, projectID any, kill int) ([]string, []*keyedTask) {
	var (
		mu       sync.Mutex
		canvases []string // acknowledged canvas ids
		tasks    []*keyedTask
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range crashClients {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if w%2 == 0 {
					status, _, out, err := c.post("/prompt", map[string]any{"title": fmt.Sprintf("c-%d-%d-%d", kill, w, i),
						"projectId": projectID}, "")
					if err == nil && status == http.StatusCreated {
						mu.Lock()
						canvases = append(canvases, out["id"].(string))
						mu.Unlock()
					}
					continue
				}
				k := &keyedTask{key: fmt.Sprintf("k-%d-%d-%d-%s", kill, w, i, uuid.NewString()[:8])}
				mu.Lock()
				tasks = append(tasks, k)
				mu.Unlock()
				status, _, out, err := c.post("/v1/tasks", k.body(), k.key)
				if err == nil && status == http.StatusAccepted {
					mu.Lock()
					k.id = out["id"].(string)
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(crashLoad)
	server.Kill() // mid-load: requests are in flight
	close(stop)
	wg.Wait()

	acked := 0
	for _, k := range tasks {
		if k.id != "" {
			acked++
		}
	}
	require.NotEmpty(t, canvases, "the load wrote canvases before kill %d", kill+1)
	require.Positive(t, acked, "the load had tasks accepted before kill %d", kill+1)
	t.Logf("kill %d: %d canvases and %d of %d tasks acknowledged", kill+1, len(canvases), acked, len(tasks))
	return canvases, tasks
}

// retryTasks sends every task again with its key until it is answered 202,
// and records the id it answers; an acknowledged task must answer its id.
// A refusal (409) must carry Retry-After, which is honoured, within
// idempotencyLeaseBound. It returns how many retries were refused.
func retryTasks(t *testing.T, c *crashClient, tasks []*keyedTask) (refused int) {
	t.Helper()
	deadline := time.Now().Add(idempotencyLeaseBound)
	for _, k := range tasks {
		for {
			status, header, out, err := c.post("/v1/tasks", k.body(), k.key)
			require.NoError(t, err)
			if status == http.StatusConflict {
				refused++
				after, err := strconv.Atoi(header.Get("Retry-After"))
				require.NoError(t, err, "a retry of %s refused without Retry-After: %v", k.key, out)
				require.Positive(t, after, "Retry-After of %s", k.key)
				require.True(t, time.Now().Before(deadline), "the retry of %s was still refused after %s: %v",
					k.key, idempotencyLeaseBound, out)
				time.Sleep(time.Duration(after) * time.Second)
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
	return refused
}

// runsOf returns the ids of the task runs the key of k made, read from the
// database beside the server.
func runsOf(t *testing.T, db *sql.DB, k *keyedTask) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(),
		`SELECT id FROM runs WHERE kind = 'task' AND instr(request, ?) > 0 ORDER BY id`, "task "+k.key+`"`)
	require.NoError(t, err)
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	return ids
}

// idempotencyLeaseBound bounds how long the retries after a restart may be
// refused: the default owner lease, with room.
const idempotencyLeaseBound = 30 * time.Second
