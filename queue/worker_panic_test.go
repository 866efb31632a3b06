package queue_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/promptcanvas/promptcanvas/internal/logtest"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// explode is a handler's helper that panics, so that the logged stack can
// be checked to name the panic's site.
func explode() { panic("index out of range") }

func TestWorker_Panic(t *testing.T) {
	t.Parallel()
	db := mustNewDB(t)
	logs := &logtest.Buffer{}
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

	recs := logs.Records(t, "queue: handler panicked")
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
