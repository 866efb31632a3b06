package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/stretchr/testify/require"
)

// benchServed is a server on a real SQLite database with a canvas whose
// production environment serves a version, the API key to read it, and the
// exact bytes GET /environment/version answers.
type benchServed struct {
	handler http.Handler
	path    string
	token   string
	body    []byte
}

func mustBenchServed(b *testing.B) *benchServed {
	b.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "canvas.db"))
	require.NoError(b, err)
	b.Cleanup(func() { db.Close() })
	h, err := server.New(server.Options{
		Store:        db,
		Canvases:     canvas.NewService(canvas.Options{Store: db}),
		Environments: env.NewService(env.Options{Store: db, Canvases: db, Changes: db}),
		Auth:         server.NewAuthenticator(server.AuthOptions{Store: db, Changes: db}),
	})
	require.NoError(b, err)

	ws := &canvas.Workspace{Name: "bench"}
	require.NoError(b, db.CreateWorkspace(ctx, ws))
	p := &canvas.Project{Name: "bench", WorkspaceID: ws.ID}
	require.NoError(b, db.CreateProject(ctx, p))
	c := &canvas.Canvas{
		Title: "Support bot", ProjectID: &p.ID, WorkspaceID: ws.ID, InferencesPercentage: "0",
		LayoutVersion: canvas.LayoutV2, CustomTags: []string{"support"}, CreatedBy: "bench", UpdatedBy: "bench",
	}
	require.NoError(b, db.CreateCanvas(ctx, c))
	temp := 0.2
	v := &canvas.Version{
		PromptID: c.ID, Title: "v1", WorkspaceID: ws.ID, CreatedBy: "bench", UpdatedBy: "bench",
		Configuration: canvas.Configuration{Model: "echo", Type: "chat", Temperature: &temp},
		Variables:     []canvas.Variable{{Name: "name", Type: canvas.VariableText, Required: true}},
		Messages: []canvas.Message{{
			Role: canvas.RoleSystem, Content: "You answer {{name}}'s questions about billing, briefly and politely.",
			CreatedBy: "bench", UpdatedBy: "bench",
		}},
	}
	require.NoError(b, db.CreateVersion(ctx, v))
	_, _, err = db.Publish(ctx, env.PublishParams{WorkspaceID: ws.ID, CanvasID: c.ID, EnvName: env.Production, VersionID: v.ID, By: "bench"})
	require.NoError(b, err)
	token, key := canvas.NewAPIKey(ws.ID, canvas.RoleViewer, nil)
	require.NoError(b, db.CreateAPIKey(ctx, key))

	s := &benchServed{
		handler: h,
		path:    "/environment/version?resourceType=prompt&resourceId=" + c.ID + "&envName=production",
		token:   token,
	}
	rec := s.serve()
	require.Equal(b, http.StatusOK, rec.Code, "%s", rec.Body)
	s.body = rec.Body.Bytes()
	return s
}

func (s *benchServed) request() *http.Request {
	req := httptest.NewRequest("GET", s.path, nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	return req
}

func (s *benchServed) serve() *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, s.request())
	return rec
}

// bare is the baseline: a plain net/http handler answering the same bytes
// with no routing, authentication or database.
func (s *benchServed) bare() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(s.body)
	})
}

// BenchmarkEnvironmentVersion measures GET /environment/version through the
// real handler (API key authentication, SQLite reads, JSON encoding) against
// a bare handler answering the same bytes, in the same run: directly through
// ServeHTTP, and over a loopback HTTP server with parallel clients.
func BenchmarkEnvironmentVersion(b *testing.B) {
	s := mustBenchServed(b)
	handlers := []struct {
		name string
		h    http.Handler
	}{
		{"Real", s.handler},
		{"Bare", s.bare()},
	}
	for _, hh := range handlers {
		b.Run("ServeHTTP/"+hh.name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				rec := httptest.NewRecorder()
				hh.h.ServeHTTP(rec, s.request())
				if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), s.body) {
					b.Fatalf("status %d, body %s", rec.Code, rec.Body)
				}
			}
		})
	}
	for _, hh := range handlers {
		b.Run("Loopback/"+hh.name, func(b *testing.B) {
			loopback(b, hh.h, s.path, s.token, nil, func(status int, n int64) bool {
				return status == http.StatusOK && int(n) == len(s.body)
			})
		})
	}
}

// loopback serves h on a loopback listener and sends it GET path with
// token and headers from four clients per CPU (so that both sides stay
// busy and the run measures throughput rather than one client's round
// trips), reporting CPU time per request; ok checks each answer's status
// and body size.
func loopback(b *testing.B, h http.Handler, path, token string, headers map[string]string, ok func(status int, n int64) bool) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := srv.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
	url := srv.URL + path
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	defer reportCPU(b)()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			for k, v := range headers {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if !ok(resp.StatusCode, n) {
				b.Errorf("status %d, %d bytes", resp.StatusCode, n)
				return
			}
		}
	})
}

// reportCPU starts counting the process' CPU time (user and system, every
// thread) and returns the function that reports it per operation as
// cpu-ns/op. On a shared machine wall time depends on the neighbours; CPU
// time per request does not, and the throughput two dedicated cores would
// reach follows from it.
func reportCPU(b *testing.B) func() {
	start := cpuTime(b)
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64((cpuTime(b)-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
