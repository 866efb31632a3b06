package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
)

// HandleJob executes the run a workflow.run job serves, from where it is:
// steps that completed (or were skipped) before are not run again, and a
// step that was running when its worker stopped runs again. Ready steps
// start in topological order, up to Concurrency at once; each change of a
// step's state is written as it happens (journal). When nothing is left to
// run, the run completes (its output is the last completed leaf step),
// fails (a step failed; steps still running are cancelled), or pauses on a
// waiting review or action step. Past the run's deadline the step in flight
// is cancelled and the run ends in timeout.
//
// A run that has ended, or is paused, is left alone. When the job's context
// ends (a cancellation, a lost lease, a shutdown), the steps in flight stop
// and the error is returned for the worker to act on; a shutdown's job is
// claimed again and the run goes on.
func (s *Service) HandleJob(ctx context.Context, j *queue.Job) error {
	run, err := s.store.GetWorkflowRun(ctx, j.WorkspaceID, j.RefID)
	if canvas.ErrorCode(err) == canvas.ENOTFOUND {
		return nil
	} else if err != nil {
		return err
	}
	if Terminal(run.Status) || Paused(run.Status) {
		return nil
	}
	if run.Status == StatusPending {
		if run, err = s.change(ctx, run, TriggerStart, nil); err != nil {
			return ignoreConflict(err)
		}
	}
	if !s.now().Before(run.Deadline) {
		_, err := s.end(ctx, run, TriggerDeadline, j.ID, timeoutError(run))
		return ignoreConflict(err)
	}
	v, err := s.canvases.GetVersion(ctx, run.WorkspaceID, run.VersionID)
	var w *Workflow
	if err == nil {
		w, err = s.workflow(v)
	}
	switch canvas.ErrorCode(err) {
	case "":
	case canvas.ENOTFOUND, canvas.EINVALID:
		_, err := s.end(ctx, run, TriggerFail, j.ID, &Error{Code: canvas.ErrorCode(err),
			Message: "The workflow version cannot run: " + canvas.ErrorMessage(err)})
		return ignoreConflict(err)
	default:
		return err
	}
	return s.execute(ctx, w, run, j)
}

// HandleDeadline ends the run a workflow.deadline job serves in timeout,
// unless it has ended: its steps that have not ended are cancelled, and its
// other jobs too. It is what times out a paused run, or one whose worker
// died; a worker executing the run ends it at the deadline by itself.
func (s *Service) HandleDeadline(ctx context.Context, j *queue.Job) error {
	run, err := s.store.GetWorkflowRun(ctx, j.WorkspaceID, j.RefID)
	if canvas.ErrorCode(err) == canvas.ENOTFOUND {
		return nil
	} else if err != nil {
		return err
	}
	if Terminal(run.Status) {
		return nil
	}
	if left := run.Deadline.Sub(s.now()); left > 0 {
		return queue.RetryAfter(errors.New("workflow: deadline not reached"), left)
	}
	// A step running in this process stops by itself: its execution's
	// context has the same deadline.
	_, err = s.end(ctx, run, TriggerDeadline, j.ID, timeoutError(run))
	return ignoreConflict(err)
}

// ignoreConflict drops CONFLICT: the run changed meanwhile (it was
// cancelled, or timed out), and there is nothing left to do.
func ignoreConflict(err error) error {
	if canvas.ErrorCode(err) == canvas.ECONFLICT {
		return nil
	}
	return err
}

// execution is the state of one run while a job executes it. Only the
// scheduling goroutine (execute) touches it; executors see their StepInput,
// the journal copies of the steps.
type execution struct {
	s   *Service
	w   *Workflow
	run *Run
	// steps are the run's steps by node id, as the execution changes them.
	steps map[string]*Step
	// ended holds the steps that completed or were skipped, for the
	// executors' StepInput; a step is never changed once in it. Executors
	// in flight read the map they were given: shared says that the current
	// map was given out, and own copies it before a write while any
	// executor is in flight (copy on write), so that a linear run never
	// copies it.
	ended  map[string]*Step
	shared bool
	// inflight counts the executors running.
	inflight int
	// remaining counts, by Seq, the edges into each node whose source has
	// not ended.
	remaining []int
	// root is the node the run starts at: the start node, or the start of a
	// partial run.
	root    string
	values  map[string]any
	journal *journal
	results chan stepResult
	// failed is the first step that failed.
	failed *Step
}

// stepResult is what an executor goroutine reports.
type stepResult struct {
	node  *CNode
	out   *Outcome
	err   error
	input any
}

// execute runs w's ready steps until nothing is left to run, then moves the
// run to its next status.
func (s *Service) execute(jobCtx context.Context, w *Workflow, run *Run, j *queue.Job) error {
	ex := &execution{s: s, w: w, run: run, steps: make(map[string]*Step, len(run.Steps)),
		ended: make(map[string]*Step, len(run.Steps)), remaining: make([]int, len(w.Nodes)),
		root: w.Start.ID, values: run.values(), journal: newJournal(s.store, run.WorkspaceID, run.ID),
		results: make(chan stepResult)}
	if run.StartNodeID != "" {
		ex.root = run.StartNodeID
	}
	for i, st := range run.Steps {
		c := st.Clone()
		if c.Status == StepRunning {
			c.Status = StepPending // its worker stopped: it runs again
		}
		run.Steps[i] = c
		ex.steps[c.ID] = c
	}
	var ready []*CNode
	for _, n := range w.Nodes {
		ex.remaining[n.Seq] += len(n.In)
		st := ex.steps[n.ID]
		if st == nil {
			return queue.Permanent(canvas.Errorf(canvas.EINTERNAL, "workflow run %s has no step for node %s", run.ID, n.ID))
		}
		if StepDone(st.Status) {
			if st.Status == StepCompleted || st.Status == StepSkipped {
				ex.ended[st.ID] = st
			}
			if st.Status == StepFailed && ex.failed == nil {
				ex.failed = st
			}
			for _, l := range n.Out {
				ex.remaining[l.To.Seq]--
			}
		}
	}
	for _, n := range w.Nodes {
		if ex.steps[n.ID].Status == StepPending && (ex.remaining[n.Seq] == 0 || n.ID == ex.root) {
			ready = append(ready, n)
		}
	}

	runCtx, cancelRun := context.WithDeadline(jobCtx, run.Deadline)
	defer cancelRun()
	// stepCtx ends the steps in flight when one fails.
	stepCtx, cancelSteps := context.WithCancel(runCtx)
	defer cancelSteps()
	writeFailed := ex.journal.failed
	for {
		var wait []*CNode
		for len(ready) > 0 {
			n := ready[0]
			ready = ready[1:]
			if ex.failed != nil || stepCtx.Err() != nil {
				continue // nothing starts once the run is ending
			}
			if n.ID != ex.root && !ex.active(n) {
				ready = append(ready, ex.skip(n)...)
				continue
			}
			if ex.inflight >= s.conc {
				wait = append(wait, n)
				continue
			}
			ex.start(stepCtx, n)
		}
		ready = wait
		if ex.inflight == 0 {
			break
		}
		select {
		case r := <-ex.results:
			ex.inflight--
			ready = append(ready, ex.finish(r, jobCtx, runCtx, cancelSteps)...)
		case <-writeFailed:
			cancelSteps() // a write failed (the run ended elsewhere): stop
			writeFailed = nil
		}
	}
	if err := jobCtx.Err(); err != nil {
		_ = ex.journal.flush()
		return err
	}
	if err := ex.journal.flush(); err != nil {
		return ignoreConflict(err)
	}
	return ex.conclude(context.WithoutCancel(jobCtx), runCtx, j)
}

// active reports whether the flow reaches n: some edge into it comes from a
// completed step that selected the edge's port.
func (ex *execution) active(n *CNode) bool {
	for _, l := range n.In {
		st := ex.steps[l.From.ID]
		if st.Status == StepCompleted && (st.Ports == nil || slices.Contains(st.Ports, l.FromPort)) {
			return true
		}
	}
	return false
}

// skip marks n skipped and returns the nodes that became ready.
func (ex *execution) skip(n *CNode) []*CNode {
	st := ex.steps[n.ID]
	now := ex.s.now().UTC()
	st.Status, st.CompletedAt = StepSkipped, &now
	ex.journal.put(st)
	ex.own()
	ex.ended[n.ID] = st
	return ex.release(n)
}

// release counts n as ended for its successors and returns those that
// became ready.
func (ex *execution) release(n *CNode) []*CNode {
	var ready []*CNode
	for _, l := range n.Out {
		ex.remaining[l.To.Seq]--
		if ex.remaining[l.To.Seq] == 0 && ex.steps[l.To.ID].Status == StepPending {
			ready = append(ready, l.To)
		}
	}
	return ready
}

// start marks n running and executes it in a goroutine.
func (ex *execution) start(ctx context.Context, n *CNode) {
	st := ex.steps[n.ID]
	now := ex.s.now().UTC()
	st.Status, st.StartedAt, st.CompletedAt, st.Error = StepRunning, &now, nil, nil
	ex.journal.put(st)
	in := &StepInput{RunID: ex.run.ID, WorkspaceID: ex.run.WorkspaceID, CanvasID: ex.run.CanvasID, StartedBy: ex.run.CreatedBy,
		Node: n, Variables: ex.values,
		Steps: ex.ended}
	ex.shared = true
	ex.inflight++
	input := ex.defaultInput(n)
	go func() {
		out, err := runExecutor(ctx, ex.s.logger, n, in)
		ex.results <- stepResult{node: n, out: out, err: err, input: input}
	}()
}

// runExecutor executes n, turning a panic into an error; the panic is
// logged with its stack, the step's error says only that the action failed.
func runExecutor(ctx context.Context, logger *slog.Logger, n *CNode, in *StepInput) (out *Outcome, err error) {
	defer func() {
		if v := recover(); v != nil {
			logger.ErrorContext(ctx, "workflow action panicked", slog.String("action", n.ActionID),
				slog.String("node", n.ID), slog.String("run", in.RunID), slog.Any("panic", v),
				slog.String("stack", string(debug.Stack())))
			out, err = nil, canvas.Errorf(canvas.EINTERNAL, "The %s action failed.", n.ActionID)
		}
	}()
	out, err = n.Executor.Execute(ctx, in)
	if err == nil && out == nil {
		out = &Outcome{}
	}
	return out, err
}

// defaultInput is the input recorded for n when its outcome names none: the
// outputs of its completed predecessors by node id, or the run's variables
// for the node the run starts at.
func (ex *execution) defaultInput(n *CNode) any {
	if n.ID == ex.root && len(n.In) == 0 {
		return ex.values
	}
	in := make(map[string]json.RawMessage, len(n.In))
	for _, l := range n.In {
		if st := ex.steps[l.From.ID]; st.Status == StepCompleted {
			in[l.From.ID] = st.Output
		}
	}
	return in
}

// finish records a step's result and returns the nodes that became ready.
func (ex *execution) finish(r stepResult, jobCtx, runCtx context.Context, cancelSteps context.CancelFunc) []*CNode {
	st := ex.steps[r.node.ID]
	now := ex.s.now().UTC()
	if r.err != nil {
		switch {
		case jobCtx.Err() != nil, runCtx.Err() != nil:
			// The job stops, or the deadline passed: the step stays
			// running here; a later claim runs it again, or the run's end
			// cancels it.
			return nil
		case ex.failed != nil && errors.Is(r.err, context.Canceled):
			st.Status, st.CompletedAt = StepCancelled, &now
			st.Error = &Error{Code: canvas.ECANCELLED, Message: "The step was stopped: another step failed."}
			ex.journal.put(st)
			return nil
		}
		st.Status, st.CompletedAt, st.Error = StepFailed, &now, errorOf(r.err)
		ex.journal.put(st)
		if ex.failed == nil {
			ex.failed = st
		}
		cancelSteps()
		return nil
	}
	if r.out.Pause == StepWaitingForReview || r.out.Pause == StepRequiresAction {
		st.Status = r.out.Pause
		if r.out.Input != nil || r.input != nil {
			in := r.out.Input
			if in == nil {
				in = r.input
			}
			var err error
			if st.Input, err = marshalValue(in); err != nil {
				ex.s.logger.Error("workflow step input is not JSON", slog.String("run", ex.run.ID),
					slog.String("step", st.ID), slog.Any("error", err))
			}
		}
		if len(r.out.Metadata) > 0 {
			var err error
			if st.Metadata, err = json.Marshal(r.out.Metadata); err != nil {
				ex.s.logger.Error("workflow step metadata is not JSON", slog.String("run", ex.run.ID),
					slog.String("step", st.ID), slog.Any("error", err))
			}
		}
		ex.journal.put(st)
		return nil
	}
	if err := finishStep(st, r.out, r.input); err != nil {
		st.Status, st.Error = StepFailed, &Error{Code: canvas.EINTERNAL, Message: "The step's output is not JSON."}
	}
	st.CompletedAt = &now
	ex.journal.put(st)
	if st.Status == StepFailed {
		if ex.failed == nil {
			ex.failed = st
		}
		cancelSteps()
		return nil
	}
	ex.own()
	ex.ended[st.ID] = st
	return ex.release(r.node)
}

// own makes ex.ended safe to write: a map given to executors still in
// flight is copied first; one whose readers have all returned is not.
func (ex *execution) own() {
	if ex.shared && ex.inflight > 0 {
		ex.ended = maps.Clone(ex.ended)
	}
	ex.shared = false
}

// conclude moves the run on once nothing is left to run: timeout past the
// deadline, failed when a step failed, paused when a step waits, else
// completed with its last completed leaf step as output.
func (ex *execution) conclude(ctx, runCtx context.Context, j *queue.Job) error {
	s, run := ex.s, ex.run
	if errors.Is(runCtx.Err(), context.DeadlineExceeded) {
		_, err := s.end(ctx, run, TriggerDeadline, j.ID, timeoutError(run))
		return ignoreConflict(err)
	}
	if ex.failed != nil {
		_, err := s.end(ctx, run, TriggerFail, j.ID, ex.failed.Error)
		return ignoreConflict(err)
	}
	for _, n := range ex.w.Nodes {
		st := ex.steps[n.ID]
		if !Paused(st.Status) {
			continue
		}
		trigger := TriggerAwaitAction
		if st.Status == StepWaitingForReview {
			trigger = TriggerAwaitReview
		}
		_, err := s.change(ctx, run, trigger, func(cur *Run, c *Change) error {
			notify, err := s.notification(ctx, cur, c.To, "", nil)
			c.Notify = notify
			return err
		})
		return ignoreConflict(err)
	}
	var out *Step
	for _, n := range ex.w.Nodes {
		if st := ex.steps[n.ID]; st.Status == StepCompleted && isLeaf(run, n) {
			out = st
		}
	}
	if out == nil {
		_, err := s.end(ctx, run, TriggerFail, j.ID, &Error{Code: canvas.ENOOUTPUT,
			Message: "The run ended without completing a leaf step."})
		return ignoreConflict(err)
	}
	_, err := s.change(ctx, run, TriggerComplete, func(cur *Run, c *Change) error {
		c.OutputNodeID, c.CancelKinds, c.ExceptJobID = out.ID, JobKinds(), j.ID
		notify, err := s.notification(ctx, cur, c.To, out.ID, nil)
		c.Notify = notify
		return err
	})
	return ignoreConflict(err)
}
