package queue_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logBuffer collects the JSON records of a slog logger; it is safe for the
// worker's goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// records returns the records logged so far with message msg.
func (b *logBuffer) records(t *testing.T, msg string) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var got []map[string]any
	lines := bufio.NewScanner(bytes.NewReader(b.buf.Bytes()))
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		var rec map[string]any
		require.NoError(t, json.Unmarshal(lines.Bytes(), &rec))
		if rec["msg"] == msg {
			got = append(got, rec)
		}
	}
	return got
}

// explode is a handler's helper that panics, so that the logged stack can
// be checked to name the panic's site.
func explode() { panic("index out of range") }

func TestWorker_Panic(t *testing.T) {
	t.Parallel()
	db := mustNewDB(t)
	logs := &logBuffer{}
	opts := fastOptions()
	opts.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	w := queue.NewWorker(db, opts)
	var calls atomic.Int32
	w.HandleIn(queue.LaneModel, "fragile", func(ctx context.Context, j *queue.Job) error {
		if calls.Add(1) == 1 {
			explode()
		}
		return nil
	})
	w.HandleIn(queue.LaneDelivery, "broken", func(ctx context.Context, j *queue.Job) error {
		explode()
		return nil
	})
	w.Handle("after", func(ctx context.Context, j *queue.Job) error { return nil })
	mustStart(t, w)
	fragile := mustEnqueue(t, db, &queue.Job{Kind: "fragile"})
	broken := mustEnqueue(t, db, &queue.Job{Kind: "broken", MaxAttempts: 2})

	done := mustWaitJob(t, db, fragile.ID, hasStatus(queue.StatusSucceeded))
	assert.Equal(t, 2, done.Attempts, "a panic is a failed attempt, retried")
	assert.Contains(t, done.LastError, "panicked: index out of range")
	failed := mustWaitJob(t, db, broken.ID, hasStatus(queue.StatusFailed))
	assert.Equal(t, 2, failed.Attempts, "a job that always panics fails after its attempts")
	assert.Contains(t, failed.LastError, "panicked: index out of range")
	after := mustEnqueue(t, db, &queue.Job{Kind: "after"})
	mustWaitJob(t, db, after.ID, hasStatus(queue.StatusSucceeded))

	recs := logs.records(t, "queue: handler panicked")
	require.Len(t, recs, 3, "one record per panic")
	attempts := map[string][]float64{}
	for _, rec := range recs {
		assert.Equal(t, "ERROR", rec["level"])
		assert.Equal(t, "index out of range", rec["panic"])
		stack, _ := rec["stack"].(string)
		assert.Contains(t, stack, "queue_test.explode", "the stack names the panic's site")
		kind, _ := rec["kind"].(string)
		attempt, _ := rec["attempt"].(float64)
		attempts[kind] = append(attempts[kind], attempt)
		switch kind {
		case "fragile":
			assert.Equal(t, fragile.ID, rec["job"])
		case "broken":
			assert.Equal(t, broken.ID, rec["job"])
		default:
			assert.Fail(t, "unexpected kind", "%v", rec)
		}
	}
	assert.Equal(t, map[string][]float64{"fragile": {1}, "broken": {1, 2}}, attempts)
}
