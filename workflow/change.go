package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
)

// change moves run along trigger: the next status comes from the
// transition table (Next), and the store applies it only if the run is
// still in the status it was read in. When another change got there first,
// the run is read again and the table decides again, so that a trigger
// that has become illegal (a cancel racing a completion) is CONFLICT. fill,
// when set, adds what commits with the change; it sees the run as last
// read. Waiters are woken and the worker notified of new jobs.
func (s *Service) change(ctx context.Context, run *Run, trigger Trigger, fill func(cur *Run, c *Change) error) (*Run, error) {
	cur := run
	for attempt := 0; ; attempt++ {
		to, err := Next(cur.Status, trigger)
		if err != nil {
			return nil, err
		}
		c := &Change{WorkspaceID: cur.WorkspaceID, RunID: cur.ID, From: cur.Status, To: to}
		if fill != nil {
			if err := fill(cur, c); err != nil {
				return nil, err
			}
		}
		out, err := s.store.ChangeWorkflowRun(ctx, c)
		if canvas.ErrorCode(err) == canvas.ECONFLICT && attempt < 3 {
			if cur, err = s.store.GetWorkflowRun(ctx, run.WorkspaceID, run.ID); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		s.waiters.wake(out.ID)
		if len(c.Jobs) > 0 || len(c.Notify) > 0 {
			s.notify()
		}
		return out, nil
	}
}

// end ends run along trigger (cancel, deadline, fail, reject) with runErr:
// steps lists steps to write with it, and every other step that has not
// ended is cancelled; the run's execution jobs are cancelled except the
// caller's own (exceptJob), and the notification's deliveries commit with
// it.
func (s *Service) end(ctx context.Context, run *Run, trigger Trigger, exceptJob string, runErr *Error, steps ...*Step) (*Run, error) {
	return s.change(ctx, run, trigger, func(cur *Run, c *Change) error {
		now := s.now().UTC()
		c.Error, c.CancelKinds, c.ExceptJobID = runErr, JobKinds(), exceptJob
		c.Steps = append(c.Steps, steps...)
		stepErr := &Error{Code: canvas.ECANCELLED, Message: "The step did not finish: the run ended."}
		if trigger == TriggerDeadline {
			stepErr = &Error{Code: canvas.ETIMEOUT, Message: "The step did not finish before the run's deadline."}
		}
		for _, st := range cur.Steps {
			if StepDone(st.Status) || slices.ContainsFunc(steps, func(o *Step) bool { return o.ID == st.ID }) {
				continue
			}
			cs := st.Clone()
			cs.Status, cs.CompletedAt = StepCancelled, &now
			if st.Status == StepRunning || Paused(st.Status) {
				e := *stepErr
				cs.Error = &e
			}
			c.Steps = append(c.Steps, cs)
		}
		notify, err := s.notification(ctx, cur, c.To, "", runErr)
		c.Notify = notify
		return err
	})
}

// timeoutError is the error of a run that passed its deadline.
func timeoutError(run *Run) *Error {
	return &Error{Code: canvas.ETIMEOUT, Message: "The run did not end before its deadline (" +
		run.Deadline.Sub(run.CreatedAt).String() + ")."}
}

// resume finishes the step a paused run waits on with the caller's answer
// (payload), through the step's Resumer, and moves the run along trigger:
// on to running with a new job, or to failed (TriggerReject) when the
// answer fails the step. A VALIDATION error of the Resumer changes nothing.
func (s *Service) resume(ctx context.Context, id string, trigger Trigger, waitStatus, stepID string, payload json.RawMessage) (*View, error) {
	run, err := s.reachable(ctx, canvas.RoleEditor, id)
	if err != nil {
		return nil, err
	}
	if _, err := Next(run.Status, trigger); err != nil {
		return nil, err
	}
	step := waitingStep(run, waitStatus, stepID)
	if step == nil {
		if stepID != "" {
			return nil, canvas.Invalid("No such step waits.", canvas.Detail{Path: "/json/stepId",
				Message: "names no step of the run that is " + waitStatus})
		}
		return nil, canvas.Errorf(canvas.ECONFLICT, "No step of the run is %s.", waitStatus)
	}
	v, err := s.canvases.GetVersion(ctx, run.WorkspaceID, run.VersionID)
	if err != nil {
		return nil, err
	}
	w, err := s.workflow(v)
	if err != nil {
		return nil, err
	}
	node := w.Node(step.ID)
	r, ok := node.Executor.(Resumer)
	if !ok {
		return nil, canvas.Errorf(canvas.EINTERNAL, "The action %q cannot resume.", node.ActionID)
	}
	out, rerr := r.Resume(ctx, stepInput(run, w, node), payload)
	if canvas.ErrorCode(rerr) == canvas.EINVALID {
		return nil, rerr
	}
	now := s.now().UTC()
	st := step.Clone()
	st.CompletedAt = &now
	if rerr != nil {
		st.Status, st.Error = StepFailed, errorOf(rerr)
		run, err = s.end(ctx, run, TriggerReject, "", st.Error, st)
	} else {
		if err := finishStep(st, out, nil); err != nil {
			return nil, err
		}
		run, err = s.change(ctx, run, trigger, func(cur *Run, c *Change) error {
			c.Steps = []*Step{st}
			c.Jobs = []*queue.Job{{WorkspaceID: cur.WorkspaceID, Kind: JobKindRun, RefID: cur.ID}}
			return nil
		})
	}
	if err != nil {
		return nil, err
	}
	return s.view(run, nil), nil
}

// waitingStep returns the step of run in status waitStatus named id, or
// the first such step when id is empty.
func waitingStep(run *Run, waitStatus, id string) *Step {
	for _, st := range run.Steps {
		if st.Status == waitStatus && (id == "" || st.ID == id) {
			return st
		}
	}
	return nil
}

// stepInput is what node's executor sees of run: its variables and its
// ended steps.
func stepInput(run *Run, w *Workflow, node *CNode) *StepInput {
	ended := make(map[string]*Step, len(run.Steps))
	for _, st := range run.Steps {
		if st.Status == StepCompleted || st.Status == StepSkipped {
			ended[st.ID] = st
		}
	}
	return &StepInput{RunID: run.ID, WorkspaceID: run.WorkspaceID, CanvasID: run.CanvasID, StartedBy: run.CreatedBy, Node: node, Variables: run.values(), Steps: ended}
}

// values are the run's variables by name.
func (r *Run) values() map[string]any {
	out := make(map[string]any, len(r.Input))
	for name, in := range r.Input {
		if in.Value != nil {
			out[name] = in.Value
		}
	}
	return out
}

// finishStep records a completed step's outcome on st: output, selected
// ports, metadata and input (defaultInput when the outcome names none).
func finishStep(st *Step, out *Outcome, defaultInput any) error {
	var err error
	if st.Output, err = marshalValue(out.Output); err != nil {
		return err
	}
	in := out.Input
	if in == nil {
		in = defaultInput
	}
	if in != nil {
		if st.Input, err = marshalValue(in); err != nil {
			return err
		}
	}
	if len(out.Metadata) > 0 {
		if st.Metadata, err = json.Marshal(out.Metadata); err != nil {
			return err
		}
	}
	st.Status, st.Ports, st.Error = StepCompleted, out.Ports, nil
	return nil
}

// marshalValue encodes v as JSON, keeping a json.RawMessage as it is.
func marshalValue(v any) (json.RawMessage, error) {
	if raw, ok := v.(json.RawMessage); ok {
		if len(raw) == 0 {
			return json.RawMessage("null"), nil
		}
		return raw, nil
	}
	return json.Marshal(v)
}

// errorOf is the error recorded on a failed step: the canvas error code
// (or one of this package's codes) and a message safe to show.
func errorOf(err error) *Error {
	var ce *canvas.Error
	if errors.As(err, &ce) {
		return &Error{Code: ce.Code, Message: ce.Message}
	}
	return &Error{Code: canvas.EINTERNAL, Message: canvas.ErrorMessage(err)}
}
