package clienttest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClient_New(t *testing.T) {
	for _, bad := range []string{"", "localhost:8080", "ftp://x", "http://"} {
		_, err := client.New(bad, client.Options{})
		assert.Error(t, err, bad)
	}
}

func TestClient_API(t *testing.T) {
	ts := startServer(t)
	c := ts.Client(t)
	ctx := context.Background()
	f := mustFixture(t, c, 2)

	t.Run("Canvases", func(t *testing.T) {
		got, err := c.GetCanvas(ctx, f.Canvas.ID)
		require.NoError(t, err)
		assert.Equal(t, "Greeter", got.Title)
		list, err := c.ListCanvases(ctx, client.ListCanvasesParams{ProjectID: *f.Canvas.ProjectID})
		require.NoError(t, err)
		require.Len(t, list, 1)
		upd, err := c.UpdateCanvas(ctx, f.Canvas.ID, map[string]any{"customTags": []string{"a"}})
		require.NoError(t, err)
		assert.Equal(t, []string{"a"}, upd.CustomTags)
	})

	t.Run("Versions", func(t *testing.T) {
		vs, err := c.ListVersions(ctx, f.Canvas.ID)
		require.NoError(t, err)
		assert.Len(t, vs, 2)
		v, err := c.GetVersion(ctx, f.Versions[0].ID)
		require.NoError(t, err)
		assert.Equal(t, "Prompt 1 for {{name}}", *v.Content)
		msgs, err := c.ListMessages(ctx, v.ID)
		require.NoError(t, err)
		require.Len(t, msgs, 1)
		assert.Equal(t, wire.RoleSystem, msgs[0].Role)
	})

	t.Run("Environments", func(t *testing.T) {
		e, err := c.CreateEnvironment(ctx, f.Canvas.ID, "staging")
		require.NoError(t, err)
		assert.Equal(t, "staging", e.Name)
		pub := f.publish(t, c, "staging", 1)
		assert.True(t, pub.IsActive)
		f.publish(t, c, "staging", 2)
		page, err := c.History(ctx, client.HistoryParams{CanvasID: f.Canvas.ID, EnvName: "staging", Limit: 1})
		require.NoError(t, err)
		assert.Equal(t, 2, page.Meta.TotalCount)
		require.Len(t, page.Data, 1)
		assert.Equal(t, f.Versions[1].ID, page.Data[0].VersionID)
		v, err := c.ActiveVersion(ctx, f.Canvas.ID, "staging")
		require.NoError(t, err)
		assert.Equal(t, f.Versions[1].ID, v.ID)
	})

	t.Run("Completions", func(t *testing.T) {
		f.publish(t, c, "production", 1)
		req := wire.CompletionRequest{CanvasID: f.Canvas.ID, Variables: map[string]any{"name": "Ada"}}
		res, err := c.Complete(ctx, req)
		require.NoError(t, err)
		require.Len(t, res.Choices, 1)
		assert.Equal(t, "Prompt 1 for Ada", res.Choices[0].Message.Content.Text)

		var streamed strings.Builder
		require.NoError(t, c.CompleteStream(ctx, req, func(s string) error { streamed.WriteString(s); return nil }))
		assert.Equal(t, "Prompt 1 for Ada", streamed.String())

		acc, err := c.CompleteAsync(ctx, req)
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			run, err := c.GetCompletion(ctx, acc.ID)
			return err == nil && run.Status == wire.StatusCompleted
		}, waitFor, tick)

		task, err := c.CreateTask(ctx, wire.TaskRequest{Prompt: "Hello {{who}}", Model: "echo", Variables: map[string]any{"who": "you"}})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			run, err := c.GetTask(ctx, task.ID)
			return err == nil && run.Status == wire.StatusCompleted
		}, waitFor, tick)
	})

	t.Run("Files", func(t *testing.T) {
		up, err := c.CreateFile(ctx, "notes.txt")
		require.NoError(t, err)
		_, err = c.UploadFile(ctx, up, "text/plain", []byte("hello"))
		require.NoError(t, err)
		file, err := c.GetFile(ctx, up.ID)
		require.NoError(t, err)
		assert.Equal(t, int64(5), file.Size)
	})

	t.Run("TestCases", func(t *testing.T) {
		tc, err := c.CreateTestCase(ctx, wire.CreateTestCaseParams{PromptID: f.Canvas.ID, Title: "greets",
			Variables: map[string]any{"name": "Ada"}})
		require.NoError(t, err)
		got, err := c.GetTestCase(ctx, tc.ID)
		require.NoError(t, err)
		assert.Equal(t, "greets", got.Title)
		list, err := c.ListTestCases(ctx, f.Canvas.ID)
		require.NoError(t, err)
		assert.Len(t, list, 1)
		run, err := c.RunTestCase(ctx, tc.ID, f.Versions[0].ID)
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			g, err := c.GetGeneration(ctx, run.GenerationID)
			return err == nil && g.Status == wire.GenerationCompleted
		}, waitFor, tick)
	})

	t.Run("Applications", func(t *testing.T) {
		app, err := c.CreateApplication(ctx, wire.CreateApplicationParams{Name: "app"})
		require.NoError(t, err)
		assert.NotEmpty(t, app.Secret)
		got, err := c.GetApplication(ctx, app.ID)
		require.NoError(t, err)
		assert.Equal(t, "app", got.Name)
		list, err := c.ListApplications(ctx)
		require.NoError(t, err)
		assert.Len(t, list, 1)
		renamed, err := c.UpdateApplication(ctx, app.ID, map[string]any{"name": "renamed"})
		require.NoError(t, err)
		assert.Equal(t, "renamed", renamed.Name)
		page, err := c.ListDeliveries(ctx, client.DeliveryFilter{})
		require.NoError(t, err)
		assert.NotNil(t, page.Data)
		require.NoError(t, c.DeleteApplication(ctx, app.ID))
	})

	t.Run("WorkflowRunNotFound", func(t *testing.T) {
		_, err := c.GetWorkflowRun(ctx, uuid.NewString())
		assert.Equal(t, wire.CodeNotFound, client.ErrorCode(err))
	})

	t.Run("Errors", func(t *testing.T) {
		_, err := c.GetCanvas(ctx, uuid.NewString())
		var ce *client.Error
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, wire.CodeNotFound, ce.Code)
		assert.Equal(t, http.StatusNotFound, client.StatusCode(err))
		assert.NotEmpty(t, ce.RequestID)

		_, err = c.CreateCanvas(ctx, wire.CreateCanvasParams{Title: strings.Repeat("x", 300)})
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, wire.CodeInvalid, ce.Code)
		assert.NotEmpty(t, ce.Details)

		anon, err := client.New(ts.URL, client.Options{})
		require.NoError(t, err)
		_, err = anon.ListProjects(ctx)
		assert.Equal(t, wire.CodeUnauthorized, client.ErrorCode(err))
	})

	t.Run("IdempotencyKey", func(t *testing.T) {
		key := uuid.NewString()
		req := wire.CompletionRequest{CanvasID: f.Canvas.ID, Variables: map[string]any{"name": "Ada"}}
		a, err := c.CompleteAsync(ctx, req, client.WithIdempotencyKey(key))
		require.NoError(t, err)
		b, err := c.CompleteAsync(ctx, req, client.WithIdempotencyKey(key))
		require.NoError(t, err)
		assert.Equal(t, a.ID, b.ID, "the same key answers the first run again")
	})
}

// flaky is a reverse proxy to the real server that answers the first
// failures requests of each method with status and Retry-After: 0.
type flaky struct {
	proxy    http.Handler
	status   int
	failures int32
	seen     atomic.Int32
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.seen.Add(1) <= f.failures {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(f.status)
		return
	}
	f.proxy.ServeHTTP(w, r)
}

func TestClient_Retry(t *testing.T) {
	ts := startServer(t)
	target, err := url.Parse(ts.URL)
	require.NoError(t, err)
	ctx := context.Background()
	newFlaky := func(t *testing.T, status int, failures int32) (*flaky, *client.Client) {
		fl := &flaky{proxy: httputil.NewSingleHostReverseProxy(target), status: status, failures: failures}
		srv := httptest.NewServer(fl)
		t.Cleanup(srv.Close)
		c, err := client.New(srv.URL, client.Options{Token: ts.token, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
		require.NoError(t, err)
		return fl, c
	}

	for _, status := range []int{http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout} {
		t.Run("GetRetried"+http.StatusText(status), func(t *testing.T) {
			fl, c := newFlaky(t, status, 2)
			_, err := c.ListProjects(ctx)
			require.NoError(t, err)
			assert.Equal(t, int32(3), fl.seen.Load())
		})
	}

	t.Run("GivesUp", func(t *testing.T) {
		fl, c := newFlaky(t, http.StatusServiceUnavailable, 100)
		_, err := c.ListProjects(ctx)
		assert.Equal(t, http.StatusServiceUnavailable, client.StatusCode(err))
		assert.Equal(t, int32(1+client.DefaultMaxRetries), fl.seen.Load())
	})

	t.Run("WriteNotRetried", func(t *testing.T) {
		fl, c := newFlaky(t, http.StatusServiceUnavailable, 1)
		_, err := c.CreateProject(ctx, "once")
		assert.Equal(t, http.StatusServiceUnavailable, client.StatusCode(err))
		assert.Equal(t, int32(1), fl.seen.Load())
	})

	t.Run("WriteWithKeyRetried", func(t *testing.T) {
		fl, c := newFlaky(t, http.StatusServiceUnavailable, 1)
		p, err := c.CreateProject(ctx, "keyed", client.WithIdempotencyKey(uuid.NewString()))
		require.NoError(t, err)
		assert.Equal(t, "keyed", p.Name)
		assert.Equal(t, int32(2), fl.seen.Load())
	})

	t.Run("ConnectionRefusedRetriedThenReported", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		addr := srv.URL
		srv.Close()
		c, err := client.New(addr, client.Options{Token: ts.token, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
		require.NoError(t, err)
		_, err = c.ListProjects(ctx)
		require.Error(t, err)
		assert.Zero(t, client.StatusCode(err))
		var ce *client.Error
		assert.False(t, errors.As(err, &ce), "a connection error is not a server answer")
	})

	t.Run("ContextEndsBackoff", func(t *testing.T) {
		fl := &flaky{status: http.StatusServiceUnavailable, failures: 100}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fl.seen.Add(1)
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusServiceUnavailable)
		}))
		t.Cleanup(srv.Close)
		c, err := client.New(srv.URL, client.Options{})
		require.NoError(t, err)
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		_, err = c.ListProjects(cctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "Retry-After is honoured, within the context")
		assert.Equal(t, int32(1), fl.seen.Load())
	})
}
