package workflow

import (
	"context"
	"slices"
	"sync"
	"time"
)

// journal writes the step changes of one execution in order, without
// making the execution wait for each write: changes queue while the
// previous write commits and go to the store together in the next one (a
// change that replaces a queued change of the same step replaces it).
// Writes reach the store in the order of their changes, one batch at a
// time, so what is durable after a crash is always a prefix of what the
// execution did. flush waits until every change so far is durable; the
// execution flushes before each status change of the run, so that no
// status is ever committed ahead of the steps it reports.
type journal struct {
	store       Store
	workspaceID string
	runID       string

	mu      sync.Mutex
	idle    *sync.Cond
	pending map[string]*Step
	writing bool
	err     error
	// failed is closed when a write fails: the execution stops.
	failed chan struct{}
}

func newJournal(store Store, workspaceID, runID string) *journal {
	jr := &journal{store: store, workspaceID: workspaceID, runID: runID, pending: map[string]*Step{},
		failed: make(chan struct{})}
	jr.idle = sync.NewCond(&jr.mu)
	return jr
}

// put queues a copy of st.
func (jr *journal) put(st *Step) {
	c := st.Clone()
	jr.mu.Lock()
	if jr.err != nil {
		jr.mu.Unlock()
		return
	}
	jr.pending[c.ID] = c
	start := !jr.writing
	jr.writing = true
	jr.mu.Unlock()
	if start {
		go jr.drain()
	}
}

// journalWriteTimeout bounds one write of the journal: a store that does
// not answer by then fails the run's execution, which its job retries.
const journalWriteTimeout = 30 * time.Second

// drain writes batches until nothing is queued.
func (jr *journal) drain() {
	for {
		jr.mu.Lock()
		if len(jr.pending) == 0 || jr.err != nil {
			jr.writing = false
			jr.idle.Broadcast()
			jr.mu.Unlock()
			return
		}
		batch := make([]*Step, 0, len(jr.pending))
		for _, st := range jr.pending {
			batch = append(batch, st)
		}
		clear(jr.pending)
		jr.mu.Unlock()
		slices.SortFunc(batch, func(a, b *Step) int { return a.Seq - b.Seq })
		// The writes outlive the job's context: a change the execution
		// made is written even while it stops, within its own deadline.
		ctx, cancel := context.WithTimeout(context.Background(), journalWriteTimeout)
		err := jr.store.SaveWorkflowSteps(ctx, jr.workspaceID, jr.runID, batch)
		cancel()
		if err != nil {
			jr.mu.Lock()
			jr.err = err
			close(jr.failed)
			jr.mu.Unlock()
		}
	}
}

// flush waits until every queued change is durable and returns the first
// write error.
func (jr *journal) flush() error {
	jr.mu.Lock()
	defer jr.mu.Unlock()
	for jr.writing {
		jr.idle.Wait()
	}
	return jr.err
}
