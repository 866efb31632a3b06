package queue_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// helperDBEnv names the environment variable that turns TestHelperProcess
// into a worker process on the SQLite file it names.
const helperDBEnv = "QUEUE_HELPER_DB"

// crashLease is the lease of both workers of the crash test: short, so that
// the job is due again soon after its worker dies.
const crashLease = 300 * time.Millisecond

// TestHelperProcess is not a test: run by TestWorker_Run/Crash in a subprocess,
// it runs a worker whose handler announces the job on stdout and then
// blocks until the process is killed.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(helperDBEnv)
	if path == "" {
		t.Skip("helper process of TestWorker_Run/Crash")
	}
	db := mustOpen(t, path)
	w := queue.NewWorker(db, queue.WorkerOptions{Owner: "doomed", Lease: crashLease, PollInterval: 5 * time.Millisecond})
	w.Handle("crash", func(ctx context.Context, j *queue.Job) error {
		fmt.Printf("claimed %s attempt %d\n", j.ID, j.Attempts)
		select {} // killed mid-job
	})
	require.NoError(t, w.Run(context.Background()))
}

// testCrash kills a worker process with SIGKILL while it runs a job, then
// shows that a new worker completes the job once the dead worker's lease
// has expired.
func testCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.db")
	db := mustOpen(t, path)
	j := mustEnqueue(t, db, &queue.Job{Kind: "crash", RefID: "run-1"})

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperDBEnv+"="+path)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	killed := false
	t.Cleanup(func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	lines := bufio.NewScanner(stdout)
	claimed := false
	for !claimed && lines.Scan() {
		claimed = strings.HasPrefix(lines.Text(), "claimed "+j.ID+" attempt 1")
	}
	require.True(t, claimed, "the helper process claimed the job")
	require.NoError(t, cmd.Process.Kill())
	killed = true
	_ = cmd.Wait() // killed: the error reports the signal

	held, err := db.GetJob(context.Background(), j.ID)
	require.NoError(t, err)
	require.Equal(t, queue.StatusRunning, held.Status, "the dead worker still holds the job")
	require.Equal(t, "doomed", held.LeaseOwner)
	require.Equal(t, 1, held.Attempts)

	var ran atomic.Int32
	w := queue.NewWorker(db, queue.WorkerOptions{Owner: "survivor", Lease: crashLease, PollInterval: 10 * time.Millisecond})
	w.Handle("crash", func(ctx context.Context, j *queue.Job) error {
		ran.Add(1)
		return nil
	})
	mustStart(t, w)
	done := mustWaitJob(t, db, j.ID, hasStatus(queue.StatusSucceeded))
	assert.Equal(t, 2, done.Attempts)
	assert.Equal(t, int32(1), ran.Load(), "the handler ran again after the crash")
}
