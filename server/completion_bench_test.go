package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
)

// benchCompletion is a server with the completion service (echo) on a real
// SQLite database, a canvas whose promoted version takes one variable, an
// editor key, and the body of POST /v2/chat/completions.
type benchCompletion struct {
	db      *sqlite.DB
	ws      *canvas.Workspace
	handler http.Handler
	token   string
	body    []byte
	answer  []byte
}

func mustBenchCompletion(b *testing.B) *benchCompletion {
	b.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "canvas.db"))
	require.NoError(b, err)
	b.Cleanup(func() { db.Close() })
	envs := env.NewService(env.Options{Store: db, Canvases: db, Changes: db})
	h, err := server.New(server.Options{
		Store: db, Canvases: canvas.NewService(canvas.Options{Store: db}), Environments: envs, Auth: server.NewAuthenticator(server.AuthOptions{Store: db, Changes: db}),
		Completions: completion.NewService(completion.Options{Store: db, Canvases: db, Environments: envs,
			Models: model.NewCaller(model.Options{})}),
	})
	require.NoError(b, err)

	ws := &canvas.Workspace{Name: "bench"}
	require.NoError(b, db.CreateWorkspace(ctx, ws))
	p := &canvas.Project{Name: "bench", WorkspaceID: ws.ID}
	require.NoError(b, db.CreateProject(ctx, p))
	c := &canvas.Canvas{Title: "Support bot", ProjectID: &p.ID, WorkspaceID: ws.ID, InferencesPercentage: "0",
		LayoutVersion: canvas.LayoutV2, CreatedBy: "bench", UpdatedBy: "bench"}
	require.NoError(b, db.CreateCanvas(ctx, c))
	v := &canvas.Version{
		PromptID: c.ID, Title: "v1", WorkspaceID: ws.ID, CreatedBy: "bench", UpdatedBy: "bench",
		Configuration: canvas.Configuration{Model: "echo", Type: "chat"},
		Variables:     []canvas.Variable{{Name: "name", Type: canvas.VariableText, Required: true}},
		Messages: []canvas.Message{{Role: canvas.RoleSystem, CreatedBy: "bench", UpdatedBy: "bench",
			Content: "You answer {{name}}'s questions about billing, briefly and politely."}},
	}
	require.NoError(b, db.CreateVersion(ctx, v))
	_, _, err = db.Publish(ctx, env.PublishParams{WorkspaceID: ws.ID, CanvasID: c.ID, EnvName: env.Production, VersionID: v.ID, By: "bench"})
	require.NoError(b, err)
	token, key := canvas.NewAPIKey(ws.ID, canvas.RoleEditor, nil)
	require.NoError(b, db.CreateAPIKey(ctx, key))

	s := &benchCompletion{db: db, ws: ws, handler: h, token: token,
		body: []byte(`{"canvas_id":"` + c.ID + `","variables":{"name":"Ada"}}`)}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, s.request(""))
	require.Equal(b, http.StatusOK, rec.Code, "%s", rec.Body)
	s.answer = rec.Body.Bytes()
	return s
}

func (s *benchCompletion) request(url string) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, url+"/v2/chat/completions", bytes.NewReader(s.body))
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	return req
}

// bare is the baseline: a plain net/http handler that reads the body and
// answers the same bytes, with no routing, authentication, model or
// database.
func (s *benchCompletion) bare() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(s.answer)
	})
}

// BenchmarkCompletion measures POST /v2/chat/completions, synchronous with
// the echo model, through the real handler (authentication, validation,
// target resolution, rendering, one durable run record per request)
// against a bare handler answering the same bytes, over a loopback HTTP
// server with parallel clients, in the same run. CommitCeiling is the
// store's limit for one commit per operation: a one-row transaction per
// operation from as many parallel writers, with nothing else. Run records
// share commits (the Runs group of store/sqlstore/runs.go), so the real handler is not
// bound by it.
func BenchmarkCompletion(b *testing.B) {
	s := mustBenchCompletion(b)
	for _, hh := range []struct {
		name string
		h    http.Handler
	}{{"Real", s.handler}, {"Bare", s.bare()}} {
		b.Run("Loopback/"+hh.name, func(b *testing.B) {
			srv := httptest.NewServer(hh.h)
			defer srv.Close()
			client := srv.Client()
			client.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
			b.ReportAllocs()
			b.SetParallelism(4)
			b.ResetTimer()
			defer reportCPU(b)()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := client.Do(s.request(srv.URL))
					if err != nil {
						b.Error(err)
						return
					}
					n, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK || int(n) != len(s.answer) {
						b.Errorf("status %d, %d bytes", resp.StatusCode, n)
						return
					}
				}
			})
		})
	}
	b.Run("CommitCeiling", func(b *testing.B) {
		ctx := context.Background()
		b.SetParallelism(4)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				// One job row, one transaction, one commit: the least a
				// request that writes durably and alone can cost.
				if err := s.db.EnqueueJob(ctx, &queue.Job{Kind: "bench.ceiling", RunAt: farFuture}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// farFuture keeps the ceiling's jobs from ever being due.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
