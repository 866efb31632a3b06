package idempotency_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/idempotency"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serviceEnv is two Services on one SQLite store, as two processes of one
// data directory would be, with one still clock that the test moves.
type serviceEnv struct {
	db   *sqlite.DB
	now  time.Time
	a, b *idempotency.Service
}

func newServiceEnv(t *testing.T) *serviceEnv {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "canvas.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	e := &serviceEnv{db: db, now: time.Now().UTC().Truncate(time.Microsecond)}
	db.Now = func() time.Time { return e.now }
	opts := idempotency.Options{Store: db, Lease: 15 * time.Second, Now: db.Now}
	e.a, e.b = idempotency.NewService(opts), idempotency.NewService(opts)
	return e
}

// reserve holds a's lease and reserves key for hash in a's name.
func (e *serviceEnv) reserve(t *testing.T, s *idempotency.Service, key, hash string) (*idempotency.Record, *idempotency.Record) {
	t.Helper()
	release, err := s.Hold(context.Background())
	require.NoError(t, err)
	t.Cleanup(release)
	r := &idempotency.Record{WorkspaceID: "ws", Key: key, RequestHash: hash}
	existing, err := s.Reserve(context.Background(), r)
	require.NoError(t, err)
	return r, existing
}

func TestService_InProgress(t *testing.T) {
	ctx := context.Background()
	t.Run("RetryAfterIsTheLeaseLeft", func(t *testing.T) {
		e := newServiceEnv(t)
		e.reserve(t, e.a, "k1", "h1")
		e.now = e.now.Add(4*time.Second + 500*time.Millisecond)
		_, existing := e.reserve(t, e.b, "k1", "h1")
		require.NotNil(t, existing)
		assert.Equal(t, 10*time.Second+500*time.Millisecond, e.b.RetryAfter(existing))
		err := e.b.InProgress(existing)
		assert.Equal(t, canvas.ECONFLICT, canvas.ErrorCode(err))
		after, ok := canvas.RetryAfter(err)
		assert.True(t, ok)
		assert.Equal(t, 10*time.Second+500*time.Millisecond, after)
	})
	t.Run("AtLeastASecond", func(t *testing.T) {
		e := newServiceEnv(t)
		assert.Equal(t, time.Second, e.a.RetryAfter(&idempotency.Record{}), "a hold of unknown end")
		assert.Equal(t, time.Second, e.a.RetryAfter(&idempotency.Record{HeldUntil: e.now.Add(time.Millisecond)}))
		assert.Equal(t, time.Second, e.a.RetryAfter(&idempotency.Record{HeldUntil: e.now.Add(-time.Hour)}))
	})
	t.Run("CompleteThenReplay", func(t *testing.T) {
		e := newServiceEnv(t)
		r, _ := e.reserve(t, e.a, "k1", "h1")
		r.Status, r.ContentType, r.Body = 202, "application/json", []byte(`{"id":"x"}`)
		require.NoError(t, e.a.Complete(ctx, r))
		_, existing := e.reserve(t, e.b, "k1", "h1")
		require.NotNil(t, existing)
		assert.Equal(t, 202, existing.Status)
	})
	t.Run("ReleaseFrees", func(t *testing.T) {
		e := newServiceEnv(t)
		r, _ := e.reserve(t, e.a, "k1", "h1")
		require.NoError(t, e.a.Release(ctx, r))
		_, existing := e.reserve(t, e.b, "k1", "h2")
		assert.Nil(t, existing)
	})
}

func TestService_ReleaseOthers(t *testing.T) {
	e := newServiceEnv(t)
	e.reserve(t, e.a, "dead", "h1")
	mine, _ := e.reserve(t, e.b, "mine", "h1")
	require.NoError(t, e.b.ReleaseOthers(context.Background()))

	_, existing := e.reserve(t, e.b, "dead", "h2")
	assert.Nil(t, existing, "the other process's key is free at once, without waiting for its lease")
	_, existing = e.reserve(t, e.a, "mine", "h1")
	require.NotNil(t, existing, "the releasing process keeps its own keys")
	assert.True(t, mine.CreatedAt.Equal(existing.CreatedAt))
	assert.False(t, existing.Orphaned)
}
