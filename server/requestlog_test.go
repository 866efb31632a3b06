package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/promptcanvas/promptcanvas/internal/logtest"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func withLogger(l *slog.Logger) envOption {
	return func(_ testing.TB, _ *sqlite.DB, o *server.Options) { o.Logger = l }
}

func TestServer_RequestLog(t *testing.T) {
	t.Parallel()

	t.Run("DebugForAnswered", func(t *testing.T) {
		t.Parallel()
		var logs logtest.Buffer
		e := newTestEnv(t, withLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
		assert.Equal(t, http.StatusOK, e.Do("GET", "/healthz", "", nil).Status)
		assert.Equal(t, http.StatusNotFound, e.Do("GET", "/no-such-route", e.Viewer, nil).Status)
		assert.Equal(t, http.StatusUnauthorized, e.Do("GET", "/projects", "", nil).Status)

		recs := logs.Records(t, "request")
		require.Len(t, recs, 3)
		for _, rec := range recs {
			assert.Equal(t, "DEBUG", rec["level"], "%v", rec)
		}
	})

	t.Run("SilentAtInfo", func(t *testing.T) {
		t.Parallel()
		var logs logtest.Buffer
		e := newTestEnv(t, withLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
		assert.Equal(t, http.StatusOK, e.Do("GET", "/healthz", "", nil).Status)
		assert.Equal(t, http.StatusNotFound, e.Do("GET", "/no-such-route", e.Viewer, nil).Status)
		assert.Empty(t, logs.Records(t, "request"))
	})

	t.Run("ErrorFor5xx", func(t *testing.T) {
		t.Parallel()
		var logs logtest.Buffer
		e := newTestEnv(t, withLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
		require.NoError(t, e.Store.Close()) // the store stops answering
		assert.Equal(t, http.StatusInternalServerError, e.Do("GET", "/healthz", "", nil).Status)

		recs := logs.Records(t, "request")
		require.Len(t, recs, 1)
		assert.Equal(t, "ERROR", recs[0]["level"])
		assert.EqualValues(t, 500, recs[0]["status"])
	})

	t.Run("ClientGoneIsNotAnError", func(t *testing.T) {
		t.Parallel()
		var logs logtest.Buffer
		db, err := sqlite.Open(context.Background(), t.TempDir()+"/canvas.db")
		require.NoError(t, err)
		require.NoError(t, db.Close())
		h, err := server.New(server.Options{Store: db, Ready: db.Ping, Canvases: nil, Environments: nil,
			Auth: server.NewAuthenticator(server.AuthOptions{Store: db, Changes: db}), Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // the client has gone before the answer
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, "GET", "/healthz", nil))
		assert.Equal(t, http.StatusInternalServerError, rec.Code)

		for _, msg := range []string{"request", "client went away"} {
			recs := logs.Records(t, msg)
			require.Len(t, recs, 1, msg)
			assert.Equal(t, "DEBUG", recs[0]["level"], msg)
		}
		assert.Empty(t, logs.Records(t, "request failed"))
	})
}
