package queue_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
)

// wakingStore is a SQLite store that tells its subscribers of enqueues the
// test announces, as a store shared by several processes tells of the
// enqueues of the others.
type wakingStore struct {
	*sqlite.DB
	mu      sync.Mutex
	wakes   map[int]func()
	next    int
	stopped int
	claims  int
}

// ClaimJobs counts the claims, then claims.
func (s *wakingStore) ClaimJobs(ctx context.Context, owner string, kinds []string, n int, lease time.Duration) ([]*queue.Job, error) {
	s.mu.Lock()
	s.claims++
	s.mu.Unlock()
	return s.DB.ClaimJobs(ctx, owner, kinds, n, lease)
}

// counts returns the subscribers and the claims so far.
func (s *wakingStore) counts() (subscribers, claims int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.wakes), s.claims
}

func (s *wakingStore) WakeOnEnqueue(wake func()) (stop func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.next
	s.next++
	if s.wakes == nil {
		s.wakes = map[int]func(){}
	}
	s.wakes[id] = wake
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.wakes, id)
		s.stopped++
	}
}

// announce calls every subscriber's wake.
func (s *wakingStore) announce() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, wake := range s.wakes {
		wake()
	}
	return len(s.wakes)
}

var _ queue.EnqueueWaker = (*wakingStore)(nil)

// A job another process enqueued (a second DB on the same file) is claimed
// as soon as the store announces it, long before the next poll; the worker
// unsubscribes when Run returns.
func TestWorker_WakeOnEnqueue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.db")
	s := &wakingStore{DB: mustOpen(t, path)}
	other := mustOpen(t, path)
	opts := fastOptions()
	opts.PollInterval = time.Hour
	w := queue.NewWorker(s, opts)
	done := make(chan string, 1)
	w.Handle("k", func(_ context.Context, j *queue.Job) error {
		done <- j.ID
		return nil
	})
	stop := mustStart(t, w)
	// The lane claims once at start, then only when woken or after an hour.
	require.Eventually(t, func() bool {
		subscribers, claims := s.counts()
		return subscribers == 1 && claims == 1
	}, waitFor, tick)

	j := mustEnqueue(t, other, &queue.Job{Kind: "k"})
	_, claims := s.counts()
	require.Equal(t, 1, claims, "nothing claims the job before the store announces it")
	require.Equal(t, 1, s.announce())
	select {
	case id := <-done:
		assert.Equal(t, j.ID, id)
	case <-time.After(waitFor):
		t.Fatal("the announced job was not claimed")
	}
	stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Empty(t, s.wakes, "Run unsubscribes when it returns")
	assert.Equal(t, 1, s.stopped)
}
