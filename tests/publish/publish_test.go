// Package publish_test drives many concurrent publishes to one environment
// through the HTTP API, on each store, with a small Postgres pool: every
// publish is answered, quickly, and the history stays whole.
package publish_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/engine/pgengine"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/internal/pgtest"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/webhook"
)

const (
	// publishers is how many publishes are sent at once.
	publishers = 200
	// versions is how many versions they publish between them, so that
	// some publishes find their version already active.
	versions = 7
	// slowest bounds the time of any one publish.
	slowest = 5 * time.Second
	// poolSize is the Postgres pool: far fewer connections than
	// publishers.
	poolSize = 4
)

func TestConcurrentPublishes(t *testing.T) {
	stores := []struct {
		name string
		open func(t *testing.T, opts engine.Options) *engine.Engine
	}{
		{"SQLite", func(t *testing.T, opts engine.Options) *engine.Engine {
			e, err := engine.OpenSQLite(context.Background(), t.TempDir(), opts)
			require.NoError(t, err)
			return e
		}},
		{"Postgres", func(t *testing.T, opts engine.Options) *engine.Engine {
			e, err := pgengine.Open(context.Background(), withPool(pgtest.New(t), poolSize), opts)
			require.NoError(t, err)
			return e
		}},
	}
	for _, st := range stores {
		for _, subscribed := range []bool{false, true} {
			name := st.name
			if subscribed {
				name += "/Subscribed"
			}
			t.Run(name, func(t *testing.T) {
				e := st.open(t, engine.Options{Limits: engine.Limits{AllowPrivateNetworks: true}})
				publishConcurrently(t, e, subscribed)
			})
		}
	}
}

// withPool sets the pool size of a Postgres connection string, in either
// of its forms.
func withPool(dsn string, n int) string {
	switch {
	case !strings.Contains(dsn, "://"):
		return fmt.Sprintf("%s pool_max_conns=%d", dsn, n)
	case strings.Contains(dsn, "?"):
		return fmt.Sprintf("%s&pool_max_conns=%d", dsn, n)
	}
	return fmt.Sprintf("%s?pool_max_conns=%d", dsn, n)
}

func publishConcurrently(t *testing.T, e *engine.Engine, subscribed bool) {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done; e.Close() })

	_, token, err := e.Bootstrap(ctx, "")
	require.NoError(t, err)
	ws, err := e.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	require.NoError(t, err)
	admin := canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleAdmin})
	project, err := e.Canvases.CreateProject(admin, canvas.CreateProjectParams{Name: "Support"})
	require.NoError(t, err)
	c, err := e.Canvases.CreateCanvas(admin, canvas.CreateCanvasParams{Title: "Greeter", ProjectID: &project.ID})
	require.NoError(t, err)
	ids := make([]string, versions)
	for i := range ids {
		v, err := e.Canvases.CreateVersion(admin, canvas.CreateVersionParams{PromptID: c.ID,
			Message: &canvas.MessageInput{Role: canvas.RoleSystem, Content: fmt.Sprintf("Version %d", i)}})
		require.NoError(t, err)
		ids[i] = v.ID
	}

	var received atomic.Int64
	if subscribed {
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			received.Add(1)
		}))
		t.Cleanup(receiver.Close)
		enabled, url := true, receiver.URL
		_, err := e.Applications.CreateApplication(admin, webhook.CreateApplicationParams{Name: "hooks",
			PromptID: &c.ID, Events: &webhook.SubscriptionParams{Enabled: &enabled, URL: &url}})
		require.NoError(t, err)
	}

	auth := server.NewAuthenticator(server.AuthOptions{Store: e.Store, Changes: e.Changes})
	h, err := server.New(server.Options{Engine: e, Auth: auth})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	type answer struct {
		status int
		took   time.Duration
		err    error
	}
	answers := make([]answer, publishers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			body, _ := json.Marshal(map[string]string{"resourceType": "prompt", "resourceId": c.ID,
				"envName": env.Production, "versionId": ids[i%versions]})
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/environment/publish", bytes.NewReader(body))
			if err != nil {
				answers[i].err = err
				return
			}
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			<-start
			began := time.Now()
			resp, err := srv.Client().Do(req)
			answers[i].took = time.Since(began)
			if err != nil {
				answers[i].err = err
				return
			}
			resp.Body.Close()
			answers[i].status = resp.StatusCode
		})
	}
	close(start)
	wg.Wait()

	var longest time.Duration
	for i, a := range answers {
		require.NoError(t, a.err, "publish %d", i)
		assert.True(t, a.status >= 200 && a.status < 300, "publish %d answered %d", i, a.status)
		longest = max(longest, a.took)
	}
	t.Logf("the slowest of %d publishes took %v", publishers, longest)
	assert.Less(t, longest, slowest, "the slowest publish")

	page, err := e.Environments.History(admin, env.HistoryParams{CanvasID: c.ID, EnvName: env.Production,
		Limit: env.MaxLimit})
	require.NoError(t, err)
	n := page.Total
	require.Positive(t, n)
	require.LessOrEqual(t, n, publishers)
	hist := page.Items
	for page.Total > len(hist) {
		next, err := e.Environments.History(admin, env.HistoryParams{CanvasID: c.ID, EnvName: env.Production,
			Limit: env.MaxLimit, Offset: len(hist)})
		require.NoError(t, err)
		require.NotEmpty(t, next.Items)
		hist = append(hist, next.Items...)
	}
	require.Len(t, hist, n)
	active := 0
	for i, p := range hist {
		assert.Equal(t, int64(n-i), p.Seq, "history is numbered %d..1, newest first, without gaps", n)
		if p.IsActive {
			active++
		}
	}
	assert.Equal(t, 1, active, "exactly one active publication")
	assert.True(t, hist[0].IsActive, "the newest publication is the active one")

	if subscribed {
		require.Eventually(t, func() bool { return received.Load() >= int64(n) }, time.Minute, 20*time.Millisecond,
			"the subscription receives each of the %d publications", n)
		time.Sleep(50 * time.Millisecond)
		assert.Equal(t, int64(n), received.Load(), "and no publication twice")
	}
}
