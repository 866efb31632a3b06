//go:build soak

package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
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

// auditLoad is what the mixed writes of one load got acknowledged.
type auditLoad struct {
	mu       sync.Mutex
	canvases int
	versions int
	cases    int
	// updated counts the acknowledged and the sent title updates of each
	// canvas updated.
	updated, sent map[string]int
}

// TestCrash_AuditUnderLoad runs canvasd as a child process under mixed
// writes (canvases, versions, test cases, canvas updates), kills it with
// SIGKILL mid-load and restarts it on the same data, crashKills times.
// After each restart no change is without its audit event and no event
// without its change: every canvas, version and test case in the database
// has exactly one create event and every create event names one of them;
// each canvas has an update event for every update acknowledged and none
// beyond those sent. And `canvasd audit verify` passes on the data.
func TestCrash_AuditUnderLoad(t *testing.T) {
	bin := buildCanvasd(t)
	dir := t.TempDir()
	admin := uuid.NewString()
	env := []string{"CANVAS_BOOTSTRAP_API_KEY=" + admin, "CANVAS_RATE_PER_KEY=0"}
	server := startChild(t, "", bin, []string{"--data", dir}, env)
	c := &crashClient{t: t, url: server.URL, key: admin, client: &http.Client{Timeout: 30 * time.Second}}

	status, _, project, err := c.post("/projects", map[string]any{"name": "load"}, "")
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, status, "%v", project)
	// Each client writes versions, test cases and updates to a canvas of
	// its own.
	seeds := make([]string, crashClients)
	for w := range seeds {
		status, _, out, err := c.post("/prompt", map[string]any{"title": fmt.Sprintf("seed-%d", w),
			"projectId": project["id"]}, "")
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, status, "%v", out)
		seeds[w] = out["id"].(string)
	}

	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "canvas.db")+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()

	load := &auditLoad{updated: map[string]int{}, sent: map[string]int{}}
	for kill := range crashKills {
		auditLoadThenKill(t, c, server, load, project["id"], seeds, kill)
		server = startChild(t, "", bin, []string{"--data", dir}, env)
		c.url = server.URL
		checkAudited(t, db, load, kill)

		out, err := exec.CommandContext(t.Context(), bin, "audit", "verify", "--data", dir).CombinedOutput()
		require.NoError(t, err, "kill %d: canvasd audit verify: %s", kill+1, out)
		assert.Contains(t, string(out), "every chain is whole", "kill %d", kill+1)
	}

	require.NoError(t, server.Signal(syscall.SIGTERM))
	assert.NoError(t, server.Wait(), "the last server stops cleanly; stderr: %s", server.Stderr())
}

// auditLoadThenKill sends the mixed writes for crashLoad and kills the
// server with SIGKILL while requests are in flight, counting in load what
// was acknowledged.
func auditLoadThenKill(t *testing.T, c *crashClient, server *childproc.Process, load *auditLoad, projectID any,
	seeds []string, kill int) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range crashClients {
		seed := seeds[w]
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("a-%d-%d-%d", kill, w, i)
				switch (w + i) % 4 {
				case 0:
					status, _, _, err := c.post("/prompt", map[string]any{"title": name, "projectId": projectID}, "")
					load.count(err == nil && status == http.StatusCreated, &load.canvases)
				case 1:
					status, _, _, err := c.post("/prompt-version", map[string]any{"promptId": seed, "title": name}, "")
					load.count(err == nil && status == http.StatusCreated, &load.versions)
				case 2:
					status, _, _, err := c.post("/test-case", map[string]any{"promptId": seed, "title": name}, "")
					load.count(err == nil && status == http.StatusCreated, &load.cases)
				case 3:
					load.mu.Lock()
					load.sent[seed]++
					load.mu.Unlock()
					status, _, _, err := c.send(http.MethodPatch, "/prompt/"+seed, map[string]any{"title": name}, "")
					if err == nil && status == http.StatusOK {
						load.mu.Lock()
						load.updated[seed]++
						load.mu.Unlock()
					}
				}
			}
		})
	}
	time.Sleep(crashLoad)
	server.Kill() // mid-load: requests are in flight
	close(stop)
	wg.Wait()
	load.mu.Lock()
	defer load.mu.Unlock()
	require.Positive(t, load.canvases, "the load created canvases before kill %d", kill+1)
	require.Positive(t, load.versions, "the load created versions before kill %d", kill+1)
	require.Positive(t, load.cases, "the load created test cases before kill %d", kill+1)
	t.Logf("kill %d: %d canvases, %d versions, %d test cases acknowledged so far", kill+1,
		load.canvases, load.versions, load.cases)
}

// count adds one to n when ok.
func (l *auditLoad) count(ok bool, n *int) {
	if ok {
		l.mu.Lock()
		*n++
		l.mu.Unlock()
	}
}

// checkAudited reads the database and checks that every change the load
// made has its event and every event its change.
func checkAudited(t *testing.T, db *sql.DB, load *auditLoad, kill int) {
	t.Helper()
	ctx := context.Background()
	ids := func(query string) []string {
		t.Helper()
		rows, err := db.QueryContext(ctx, query)
		require.NoError(t, err, query)
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id string
			require.NoError(t, rows.Scan(&id))
			out = append(out, id)
		}
		require.NoError(t, rows.Err())
		return out
	}
	for _, r := range []struct {
		kind, action, table, workspace string
	}{
		{"canvas", "prompt.create", "canvases", "r.workspace_id"},
		{"version", "prompt-version.create", "versions",
			"(SELECT c.workspace_id FROM canvases c WHERE c.id = r.canvas_id)"},
		{"test case", "test-case.create", "test_cases", "r.workspace_id"},
	} {
		assert.Empty(t, ids(fmt.Sprintf(`SELECT r.id FROM %s r WHERE NOT EXISTS (SELECT 1 FROM audit_events a
			WHERE a.workspace_id = %s AND a.action = '%s' AND a.resource_id = r.id)`, r.table, r.workspace, r.action)),
			"kill %d: every %s has its create event", kill+1, r.kind)
		assert.Empty(t, ids(fmt.Sprintf(`SELECT a.resource_id FROM audit_events a WHERE a.action = '%s'
			AND NOT EXISTS (SELECT 1 FROM %s r WHERE r.id = a.resource_id AND %s = a.workspace_id)`,
			r.action, r.table, r.workspace)), "kill %d: every %s create event has its %s", kill+1, r.action, r.kind)
		assert.Empty(t, ids(fmt.Sprintf(`SELECT resource_id FROM audit_events WHERE action = '%s'
			GROUP BY workspace_id, resource_id HAVING COUNT(*) > 1`, r.action)),
			"kill %d: one create event per %s", kill+1, r.kind)
	}
	var canvases, versions, cases int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM canvases WHERE title LIKE 'a-%'),
		(SELECT COUNT(*) FROM versions WHERE title LIKE 'a-%'),
		(SELECT COUNT(*) FROM test_cases WHERE title LIKE 'a-%')`).Scan(&canvases, &versions, &cases))
	load.mu.Lock()
	defer load.mu.Unlock()
	assert.GreaterOrEqual(t, canvases, load.canvases, "kill %d: every acknowledged canvas is kept", kill+1)
	assert.GreaterOrEqual(t, versions, load.versions, "kill %d: every acknowledged version is kept", kill+1)
	assert.GreaterOrEqual(t, cases, load.cases, "kill %d: every acknowledged test case is kept", kill+1)
	for id, sent := range load.sent {
		var n int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM audit_events
			WHERE action = 'prompt.update' AND resource_id = ?`, id).Scan(&n))
		assert.GreaterOrEqual(t, n, load.updated[id], "kill %d: every acknowledged update of %s has its event", kill+1, id)
		assert.LessOrEqual(t, n, sent, "kill %d: no update event of %s without an update sent", kill+1, id)
	}
}
