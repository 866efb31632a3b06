package clienttest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
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
	task := wire.TaskRequest{Prompt: "Hello"}
	body, err := json.Marshal(task)
	require.NoError(t, err)
	// hold reserves key for the request with body in the name of another
	// process, and returns a function that makes that process's lease end
	// lease from now.
	hold := func(t *testing.T, key string, body []byte) (renew func(lease time.Duration)) {
		t.Helper()
		owner := "other-process-" + uuid.NewString()
		existing, err := ts.eng.Store.ReserveIdempotencyKey(ctx, &idempotency.Record{WorkspaceID: ws.ID, Key: key,
			RequestHash: idempotency.Hash(http.MethodPost, "/v1/tasks", body)},
			idempotency.Reservation{TTL: idempotency.TTL, Owner: owner})
		require.NoError(t, err)
		require.Nil(t, existing)
		return func(lease time.Duration) {
			require.NoError(t, ts.eng.Store.RenewIdempotencyOwner(ctx, owner, lease))
		}
	}
	// counted returns a client whose requests go through a proxy that
	// counts them and calls first before it forwards the first one.
	counted := func(t *testing.T, first func()) (*atomic.Int32, *client.Client) {
		var seen atomic.Int32
		proxy := httputil.NewSingleHostReverseProxy(target)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if seen.Add(1) == 1 {
				first()
			}
			proxy.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		c, err := client.New(srv.URL, client.Options{Token: ts.token})
		require.NoError(t, err)
		return &seen, c
	}

	t.Run("RetriedOnceHeldNoMore", func(t *testing.T) {
		key := uuid.NewString()
		renew := hold(t, key, body)
		// The holder's lease is renewed for the last time as the first
		// request goes out: it is refused, and its retry, once the lease
		// has lapsed, runs.
		seen, c := counted(t, func() { renew(3 * time.Second) })
		accepted, err := c.CreateTask(ctx, task, client.WithIdempotencyKey(key))
		require.NoError(t, err, "the holder's lease lapsed while the client waited")
		assert.NotEmpty(t, accepted.ID)
		assert.Equal(t, int32(2), seen.Load(), "refused once, then run")
	})
	t.Run("ContextEndsTheWait", func(t *testing.T) {
		key := uuid.NewString()
		hold(t, key, body)(time.Hour)
		seen, c := counted(t, func() {})
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := c.CreateTask(cctx, task, client.WithIdempotencyKey(key))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, int32(1), seen.Load())
	})
	t.Run("DifferentRequestNotRetried", func(t *testing.T) {
		key := uuid.NewString()
		hold(t, key, []byte(`{"prompt":"Bye"}`))(time.Hour)
		seen, c := counted(t, func() {})
		_, err := c.CreateTask(ctx, task, client.WithIdempotencyKey(key))
		assert.Equal(t, http.StatusConflict, client.StatusCode(err))
		assert.Equal(t, wire.CodeConflict, client.ErrorCode(err))
		assert.Equal(t, int32(1), seen.Load(), "waiting would not help")
	})
}
