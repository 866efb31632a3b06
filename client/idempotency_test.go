package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/idempotency"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClient_KeyInProgress shows that a request whose Idempotency-Key is
// held by a request in progress (409 with Retry-After) is sent again once
// the hold ends, within the call's retries and context, and that a key
// used with a different request (409 without it) is not.
func TestClient_KeyInProgress(t *testing.T) {
	ts := startServer(t)
	target, err := url.Parse(ts.URL)
	require.NoError(t, err)
	ctx := context.Background()
	ws, err := ts.eng.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	require.NoError(t, err)
	task := client.TaskRequest{Prompt: "Hello"}
	body, err := json.Marshal(task)
	require.NoError(t, err)
	// hold reserves key for the request with body, in the name of another
	// process whose lease lasts lease.
	hold := func(t *testing.T, key string, body []byte, lease time.Duration) {
		t.Helper()
		owner := "other-process-" + uuid.NewString()
		require.NoError(t, ts.eng.Store.RenewIdempotencyOwner(ctx, owner, lease))
		existing, err := ts.eng.Store.ReserveIdempotencyKey(ctx, &idempotency.Record{WorkspaceID: ws.ID, Key: key,
			RequestHash: idempotency.Hash(http.MethodPost, "/v1/tasks", body)},
			idempotency.Reservation{TTL: idempotency.TTL, Owner: owner})
		require.NoError(t, err)
		require.Nil(t, existing)
	}
	counted := func(t *testing.T) (*flaky, *client.Client) {
		fl := &flaky{proxy: httputil.NewSingleHostReverseProxy(target)}
		srv := httptest.NewServer(fl)
		t.Cleanup(srv.Close)
		c, err := client.New(srv.URL, client.Options{Token: ts.token})
		require.NoError(t, err)
		return fl, c
	}

	t.Run("RetriedOnceHeldNoMore", func(t *testing.T) {
		fl, c := counted(t)
		key := uuid.NewString()
		hold(t, key, body, time.Second)
		accepted, err := c.CreateTask(ctx, task, client.WithIdempotencyKey(key))
		require.NoError(t, err, "the holder's lease lapsed while the client waited")
		assert.NotEmpty(t, accepted.ID)
		assert.Equal(t, int32(2), fl.seen.Load(), "refused once, then run")
	})
	t.Run("ContextEndsTheWait", func(t *testing.T) {
		fl, c := counted(t)
		key := uuid.NewString()
		hold(t, key, body, time.Hour)
		cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		_, err := c.CreateTask(cctx, task, client.WithIdempotencyKey(key))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, int32(1), fl.seen.Load())
	})
	t.Run("DifferentRequestNotRetried", func(t *testing.T) {
		fl, c := counted(t)
		key := uuid.NewString()
		hold(t, key, []byte(`{"prompt":"Bye"}`), time.Hour)
		_, err := c.CreateTask(ctx, task, client.WithIdempotencyKey(key))
		assert.Equal(t, http.StatusConflict, client.StatusCode(err))
		assert.Equal(t, canvas.ECONFLICT, canvas.ErrorCode(err))
		assert.Equal(t, int32(1), fl.seen.Load(), "waiting would not help")
	})
}
