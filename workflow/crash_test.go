package workflow_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// Environment of the crash test's helper process: the database it works on,
// the file it records executions in, and the run it waits for.
const (
	crashDBEnv     = "WORKFLOW_CRASH_DB"
	crashMarksEnv  = "WORKFLOW_CRASH_MARKS"
	crashRunEnv    = "WORKFLOW_CRASH_RUN"
	crashLeaseTime = 300 * time.Millisecond
)

// crashSpec is input → first → gate → second → out; first and second
// record each execution, gate blocks in the helper process.
const crashSpec = `{"specVersion": "1", "nodes": [
	{"id": "start", "actionId": "input"},
	{"id": "first", "actionId": "mark"},
	{"id": "gate", "actionId": "gate"},
	{"id": "second", "actionId": "mark"},
	{"id": "out", "actionId": "output"}],
 "edges": [
	{"from": {"node": "start", "port": "out"}, "to": {"node": "first", "port": "in"}},
	{"from": {"node": "first", "port": "out"}, "to": {"node": "gate", "port": "in"}},
	{"from": {"node": "gate", "port": "out"}, "to": {"node": "second", "port": "in"}},
	{"from": {"node": "second", "port": "out"}, "to": {"node": "out", "port": "in"}}]}`

// mark records each execution of its node as a line of the marks file, and
// outputs the node's id.
type mark struct{ path string }

func (mark) ConfigSchema() json.RawMessage { return nil }
func (mark) DefaultPorts(json.RawMessage) []workflow.Port {
	return []workflow.Port{{ID: "in", Dir: "in", Type: "flow"}, {ID: "out", Dir: "out", Type: "flow"}}
}
func (m mark) Compile(workflow.Node) (workflow.Executor, []canvas.Detail) { return m, nil }
func (m mark) Execute(_ context.Context, in *workflow.StepInput) (*workflow.Outcome, error) {
	f, err := os.OpenFile(m.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "%s %d\n", in.Node.ID, os.Getpid()); err != nil {
		return nil, err
	}
	return &workflow.Outcome{Output: in.Node.ID}, f.Sync()
}

// gate marks its execution and then, in the helper process, waits until
// the step before it is durably completed, says so on standard output and
// blocks until the process is killed.
type gate struct {
	mark
	block func(ctx context.Context, in *workflow.StepInput)
}

func (g gate) Compile(workflow.Node) (workflow.Executor, []canvas.Detail) { return g, nil }
func (g gate) Execute(ctx context.Context, in *workflow.StepInput) (*workflow.Outcome, error) {
	out, err := g.mark.Execute(ctx, in)
	if err == nil && g.block != nil {
		g.block(ctx, in)
	}
	return out, err
}

func crashActions(marks string, block func(context.Context, *workflow.StepInput)) func(*workflow.Registry) {
	return func(r *workflow.Registry) {
		r.Register("mark", mark{marks})
		r.Register("gate", gate{mark{marks}, block})
	}
}

// TestCrashHelperProcess is not a test: run by TestRun_ResumesAfterCrash in
// a subprocess, it runs the run's worker until it is killed in the gate.
func TestCrashHelperProcess(t *testing.T) {
	path := os.Getenv(crashDBEnv)
	if path == "" {
		t.Skip("helper process of TestRun_ResumesAfterCrash")
	}
	var h *harness
	h = newHarness(t, harnessOptions{path: path, lease: crashLeaseTime, noWorker: true,
		register: crashActions(os.Getenv(crashMarksEnv), func(ctx context.Context, in *workflow.StepInput) {
			for {
				v, err := h.svc.Get(h.ctx, os.Getenv(crashRunEnv))
				if err == nil && steps(v)["first"] == workflow.StepCompleted {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			fmt.Println("in the gate")
			select {} // killed here
		})})
	h.startWorker()
	select {}
}

// TestRun_ResumesAfterCrash kills a worker process with SIGKILL while a run
// is in its third step, then shows that a new worker finishes the run once
// the dead worker's lease has expired, running again the step that was in
// flight but not the step that had completed.
func TestRun_ResumesAfterCrash(t *testing.T) {
	dir := t.TempDir()
	path, marks := filepath.Join(dir, "canvas.db"), filepath.Join(dir, "marks")
	h := newHarness(t, harnessOptions{path: path, lease: crashLeaseTime, noWorker: true,
		register: crashActions(marks, nil)})
	run := h.start(crashSpec, nil)

	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDBEnv+"="+path, crashMarksEnv+"="+marks, crashRunEnv+"="+run.ID)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	lines, inGate := bufio.NewScanner(stdout), false
	for !inGate && lines.Scan() {
		inGate = lines.Text() == "in the gate"
	}
	require.True(t, inGate, "the helper process reached the gate")
	require.NoError(t, cmd.Process.Kill())
	killed = true
	_ = cmd.Wait()

	v, err := h.svc.Get(h.ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, workflow.StatusRunning, v.Status, "the dead worker left the run running")
	assert.Equal(t, map[string]string{"start": "completed", "first": "completed", "gate": "running",
		"second": "pending", "out": "pending"}, steps(v))
	firstDone := *step(t, v, "first").CompletedAt

	h.startWorker()
	v = h.await(run.ID, workflow.StatusCompleted)
	assert.Equal(t, "out", v.Output.ID)
	assert.Equal(t, firstDone, *step(t, v, "first").CompletedAt, "the completed step was not run again")

	raw, err := os.ReadFile(marks)
	require.NoError(t, err)
	byNode := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		node, pid, _ := strings.Cut(line, " ")
		byNode[node] = append(byNode[node], pid)
	}
	me := fmt.Sprint(os.Getpid())
	assert.Len(t, byNode["first"], 1, "first ran once, in the killed process")
	assert.NotEqual(t, me, byNode["first"][0])
	require.Len(t, byNode["gate"], 2, "the step in flight ran again")
	assert.Equal(t, me, byNode["gate"][1])
	assert.Equal(t, []string{me}, byNode["second"])
}
