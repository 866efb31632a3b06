package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/internal/childproc"
	"github.com/promptcanvas/promptcanvas/internal/pgtest"
)

// replicaWait bounds each wait of the replica test; the job lease (30 s)
// is the longest thing it waits for.
const replicaWait = 90 * time.Second

// startReplica runs the canvasd binary bin on the shared database env
// names, with a few job slots, and waits until it listens.
func startReplica(t *testing.T, name, bin string, env ...string) *childproc.Process {
	t.Helper()
	return startChild(t, name, bin, []string{"--data", t.TempDir(),
		"--worker-concurrency", "4", "--delivery-concurrency", "4"}, env)
}

// modelBackend is an OpenAI-compatible back end that answers slowly with
// its replica's name, so that a completion's output tells which replica
// ran it.
func modelBackend(t *testing.T, name string, calls *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		time.Sleep(150 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"x","object":"chat.completion","created":1,"model":"m",
			"choices":[{"index":0,"message":{"role":"assistant","content":"from %s"},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`, name)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// hookLog records the webhook requests a receiver got. The first attempt
// of every delivery fails with 503, so that each delivery is retried and
// each replica that attempts one logs it.
type hookLog struct {
	mu sync.Mutex
	// ids holds the webhook-id headers of each completion's attempts.
	ids map[string][]string
	// delivered holds the completions whose notification was answered 200.
	delivered map[string]bool
}

func (h *hookLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ev struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil || ev.Data.ID == "" {
		http.Error(w, "bad event", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ids[ev.Data.ID] = append(h.ids[ev.Data.ID], r.Header.Get("webhook-id"))
	if len(h.ids[ev.Data.ID]) == 1 {
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	h.delivered[ev.Data.ID] = true
}

func (h *hookLog) deliveredCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.delivered)
}

// TestReplicas_KillOne runs two canvasd processes on one Postgres database
// and SIGKILLs one of them in the middle of the work. Asynchronous
// completions with a webhook_url are sent to both; both run completions
// (each replica's model back end answers with its name) and both deliver
// webhooks (each logs the first, failing attempt of the deliveries it
// sends). After the kill, the surviving replica takes over the jobs the
// dead one held once their lease lapses: every accepted completion
// succeeds, every notification is delivered, each with one webhook-id
// across its attempts. Concurrent publishes through both replicas leave
// exactly one active publication and a gap-free history.
func TestReplicas_KillOne(t *testing.T) {
	t.Parallel()
	dsn := pgtest.New(t)
	bin := buildCanvasd(t)

	var callsA, callsB atomic.Int64
	backendA, backendB := modelBackend(t, "A", &callsA), modelBackend(t, "B", &callsB)
	hooks := &hookLog{ids: map[string][]string{}, delivered: map[string]bool{}}
	receiver := httptest.NewServer(hooks)
	t.Cleanup(receiver.Close)

	key := uuid.NewString()
	// The push-back on model work is off: this test is of the failover,
	// and on a loaded machine the burst it sends beside its publishes can
	// be predicted to wait past the default bound and refused (429).
	env := []string{"CANVAS_DATABASE=" + dsn, "CANVAS_BOOTSTRAP_API_KEY=" + key, "CANVAS_ALLOW_PRIVATE_NETWORKS=1",
		"CANVAS_SECRETS_KEY_FILE=" + newKeyFile(t), "CANVAS_MAX_QUEUE_DELAY=0"}
	a := startReplica(t, "A", bin, append(env, "CANVAS_OPENAI_BASE_URL="+backendA.URL+"/v1")...)
	b := startReplica(t, "B", bin, append(env, "CANVAS_OPENAI_BASE_URL="+backendB.URL+"/v1")...)
	da, db := &daemon{URL: a.URL}, &daemon{URL: b.URL}

	status, project := da.postJSON(t, "/projects", key, map[string]any{"name": "p"})
	require.Equal(t, http.StatusCreated, status, "%v", project)
	status, c := db.postJSON(t, "/prompt", key, map[string]any{"title": "c", "projectId": project["id"]})
	require.Equal(t, http.StatusCreated, status, "%v", c)
	// Every publish publishes a version of its own, so that each adds one
	// publication to the history.
	const publishes = 1 + 16
	var versions []string
	for i := range publishes {
		status, v := da.postJSON(t, "/prompt-version", key, map[string]any{"promptId": c["id"],
			"configuration": map[string]any{"model": "echo"},
			"message":       map[string]any{"role": "system", "content": fmt.Sprintf("Hi %d {{who}}", i)}})
		require.Equal(t, http.StatusCreated, status, "%v", v)
		versions = append(versions, v["id"].(string))
	}

	// One publish, then more through both replicas at once.
	publish := func(d *daemon, version string) error {
		raw, _ := json.Marshal(map[string]any{"resourceType": "prompt", "resourceId": c["id"],
			"envName": "production", "versionId": version})
		req, err := http.NewRequest(http.MethodPost, d.URL+"/environment/publish", bytes.NewReader(raw))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("publish: %d %s", resp.StatusCode, body)
		}
		return nil
	}
	require.NoError(t, publish(da, versions[0]))
	var wg sync.WaitGroup
	publishErrs := make([]error, publishes)
	for i := 1; i < publishes; i++ {
		wg.Go(func() { publishErrs[i] = publish([]*daemon{da, db}[i%2], versions[i]) })
	}

	// Completions through both replicas, in two waves: the first until
	// both replicas ran completions and attempted deliveries, the second
	// cut by the kill.
	var accepted []string
	send := func(n int) {
		for i := range n {
			d := []*daemon{da, db}[i%2]
			status, got := d.postJSON(t, "/v2/chat/completions", key, map[string]any{"canvas_id": c["id"],
				"variables": map[string]any{"who": "Ada"}, "settings": map[string]any{"model": "llama3"},
				"webhook_url": receiver.URL})
			require.Equal(t, http.StatusAccepted, status, "%v", got)
			accepted = append(accepted, got["id"].(string))
		}
	}
	send(16)
	require.Eventually(t, func() bool {
		return callsA.Load() > 0 && callsB.Load() > 0 &&
			strings.Contains(a.Stderr(), "webhook delivery failed") &&
			strings.Contains(b.Stderr(), "webhook delivery failed")
	}, replicaWait, 20*time.Millisecond, "both replicas run completions and deliver webhooks")
	wg.Wait()
	for _, err := range publishErrs {
		assert.NoError(t, err)
	}

	before := callsA.Load() + callsB.Load()
	send(16)
	require.Eventually(t, func() bool { return callsA.Load()+callsB.Load() >= before+4 }, replicaWait, 5*time.Millisecond)
	a.Kill()

	// Every accepted completion ends, through the surviving replica.
	outputs := map[string]int{}
	require.Eventually(t, func() bool {
		for _, id := range accepted {
			if _, ok := outputs[id]; ok {
				continue
			}
			status, got := db.sendJSON(t, http.MethodGet, "/v2/chat/completions/"+id, key, nil)
			if status != http.StatusOK || got["status"] != "completed" {
				return false
			}
			outputs[id] = strings.Count(fmt.Sprint(got), "from A")
		}
		return true
	}, replicaWait, 50*time.Millisecond, "every accepted completion succeeds")
	ranOnA := 0
	for _, n := range outputs {
		if n > 0 {
			ranOnA++
		}
	}
	assert.Positive(t, ranOnA, "replica A ran completions before it died")
	assert.Less(t, ranOnA, len(accepted), "replica B ran completions")

	require.Eventually(t, func() bool { return hooks.deliveredCount() == len(accepted) }, replicaWait,
		50*time.Millisecond, "every completion's notification is delivered")
	hooks.mu.Lock()
	for _, id := range accepted {
		ids := hooks.ids[id]
		require.GreaterOrEqual(t, len(ids), 2, "completion %s: a failed attempt and a delivered one", id)
		for _, wid := range ids {
			assert.Equal(t, ids[0], wid, "completion %s: every attempt carries one webhook-id", id)
		}
		assert.NotEmpty(t, ids[0])
	}
	hooks.mu.Unlock()

	// The publication history through the survivor: one active, and the
	// sequence 1..publishes without a gap.
	status, page := db.sendJSON(t, http.MethodGet, fmt.Sprintf(
		"/environment/versions?resourceType=prompt&resourceId=%s&envName=production&limit=100", c["id"]), key, nil)
	require.Equal(t, http.StatusOK, status, "%v", page)
	requireHistory(t, page, dsn, c["id"].(string), "production", publishes)
}

// requireHistory checks an environment's publication history: through
// the API, n publications of which exactly one is active; in the database,
// their sequence numbers are 1..n and the environment's last_seq is n.
func requireHistory(t *testing.T, page map[string]any, dsn, canvasID, env string, n int) {
	t.Helper()
	data, _ := page["data"].([]any)
	require.Len(t, data, n, "%v", page)
	active := 0
	for _, p := range data {
		if p.(map[string]any)["isActive"] == true {
			active++
		}
	}
	assert.Equal(t, 1, active, "exactly one active publication")

	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var seqs []int64
	rows, err := conn.Query(ctx, `SELECT p.seq FROM publications p JOIN environments e ON e.id = p.environment_id
		WHERE e.canvas_id = $1 AND e.name = $2 ORDER BY p.seq`, canvasID, env)
	require.NoError(t, err)
	for rows.Next() {
		var seq int64
		require.NoError(t, rows.Scan(&seq))
		seqs = append(seqs, seq)
	}
	require.NoError(t, rows.Err())
	want := make([]int64, n)
	for i := range want {
		want[i] = int64(i + 1)
	}
	assert.Equal(t, want, seqs, "the history has no gap")
	var last int64
	require.NoError(t, conn.QueryRow(ctx, `SELECT last_seq FROM environments WHERE canvas_id = $1 AND name = $2`,
		canvasID, env).Scan(&last))
	assert.Equal(t, int64(n), last)
}
