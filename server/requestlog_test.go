package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logBuffer collects JSON log lines; it is safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// records returns the logged records whose msg is msg.
func (b *logBuffer) records(t *testing.T, msg string) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

func withLogger(l *slog.Logger) envOption {
	return func(_ testing.TB, _ *sqlite.DB, o *server.Options) { o.Logger = l }
}

func TestServer_RequestLog(t *testing.T) {
	t.Parallel()

	t.Run("DebugForAnswered", func(t *testing.T) {
		t.Parallel()
		var logs logBuffer
		e := newTestEnv(t, withLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
		assert.Equal(t, http.StatusOK, e.Do("GET", "/healthz", "", nil).Status)
		assert.Equal(t, http.StatusNotFound, e.Do("GET", "/no-such-route", e.Viewer, nil).Status)
		assert.Equal(t, http.StatusUnauthorized, e.Do("GET", "/projects", "", nil).Status)

		recs := logs.records(t, "request")
		require.Len(t, recs, 3)
		for _, rec := range recs {
			assert.Equal(t, "DEBUG", rec["level"], "%v", rec)
		}
	})

	t.Run("SilentAtInfo", func(t *testing.T) {
		t.Parallel()
		var logs logBuffer
		e := newTestEnv(t, withLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
		assert.Equal(t, http.StatusOK, e.Do("GET", "/healthz", "", nil).Status)
		assert.Equal(t, http.StatusNotFound, e.Do("GET", "/no-such-route", e.Viewer, nil).Status)
		assert.Empty(t, logs.records(t, "request"))
	})

	t.Run("ErrorFor5xx", func(t *testing.T) {
		t.Parallel()
		var logs logBuffer
		e := newTestEnv(t, withLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
		require.NoError(t, e.Store.Close()) // the store stops answering
		assert.Equal(t, http.StatusInternalServerError, e.Do("GET", "/healthz", "", nil).Status)

		recs := logs.records(t, "request")
		require.Len(t, recs, 1)
		assert.Equal(t, "ERROR", recs[0]["level"])
		assert.EqualValues(t, 500, recs[0]["status"])
	})

	t.Run("ClientGoneIsNotAnError", func(t *testing.T) {
		t.Parallel()
		var logs logBuffer
		db, err := sqlite.Open(context.Background(), t.TempDir()+"/canvas.db")
		require.NoError(t, err)
		require.NoError(t, db.Close())
		h, err := server.New(server.Options{Store: db, Canvases: nil, Environments: nil,
			Auth: server.NewAuthenticator(server.AuthOptions{Store: db, Changes: db}), Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // the client has gone before the answer
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, "GET", "/healthz", nil))
		assert.Equal(t, http.StatusInternalServerError, rec.Code)

		for _, msg := range []string{"request", "client went away"} {
			recs := logs.records(t, msg)
			require.Len(t, recs, 1, msg)
			assert.Equal(t, "DEBUG", recs[0]["level"], msg)
		}
		assert.Empty(t, logs.records(t, "request failed"))
	})
}
