package workflow

import "github.com/promptcanvas/promptcanvas/canvas"

// Run statuses. Completed, cancelled, failed and timeout are terminal;
// waiting-for-review and requires-action are active states in which the run
// is paused for external input.
const (
	StatusPending          = "pending"
	StatusRunning          = "running"
	StatusCompleted        = "completed"
	StatusFailed           = "failed"
	StatusRequiresAction   = "requires-action"
	StatusCancelled        = "cancelled"
	StatusTimeout          = "timeout"
	StatusWaitingForReview = "waiting-for-review"
)

// Step statuses. A step waits in waiting-for-review or requires-action
// while its run is paused on it.
const (
	StepPending          = "pending"
	StepRunning          = "running"
	StepCompleted        = "completed"
	StepFailed           = "failed"
	StepSkipped          = "skipped"
	StepCancelled        = "cancelled"
	StepWaitingForReview = "waiting-for-review"
	StepRequiresAction   = "requires-action"
)

// Terminal reports whether a run status is final.
func Terminal(status string) bool {
	switch status {
	case StatusCompleted, StatusCancelled, StatusFailed, StatusTimeout:
		return true
	}
	return false
}

// Paused reports whether a run status waits for external input.
func Paused(status string) bool {
	return status == StatusWaitingForReview || status == StatusRequiresAction
}

// StepDone reports whether a step status is final within its run.
func StepDone(status string) bool {
	switch status {
	case StepCompleted, StepFailed, StepSkipped, StepCancelled:
		return true
	}
	return false
}

// Trigger is what moves a run from one status to another.
type Trigger string

// Triggers of the transition table.
const (
	// TriggerStart: a worker begins (or, after a crash, goes on) executing
	// the run.
	TriggerStart Trigger = "start"
	// TriggerComplete: no step is left to run and a leaf step completed.
	TriggerComplete Trigger = "complete"
	// TriggerFail: a step failed, or nothing is left to run and no leaf
	// completed.
	TriggerFail Trigger = "fail"
	// TriggerAwaitReview and TriggerAwaitAction: nothing is left to run
	// but a review (action) step waits.
	TriggerAwaitReview Trigger = "await-review"
	TriggerAwaitAction Trigger = "await-action"
	// TriggerReview: POST /workflow/runs/{id}/review answered the review
	// (approved, or rejected with a rejected port to go on through).
	TriggerReview Trigger = "review"
	// TriggerReject: the answer failed the paused step (a review rejected
	// on a node without a rejected port, an action whose input fails it):
	// the run fails.
	TriggerReject Trigger = "reject"
	// TriggerResume: POST /workflow/runs/{id}/resume gave the action its
	// input.
	TriggerResume Trigger = "resume"
	// TriggerCancel: POST /workflow/runs/{id}/cancel.
	TriggerCancel Trigger = "cancel"
	// TriggerDeadline: the run's deadline passed.
	TriggerDeadline Trigger = "deadline"
)

// Transition is one row of the transition table.
type Transition struct {
	From    string
	Trigger Trigger
	To      string
}

// transitions is the status transition table of a run, the one place that
// says which changes are legal; docs/workflows.md prints it (a test keeps
// the two equal). Every pair (From, Trigger) not listed is illegal.
var transitions = []Transition{
	{StatusPending, TriggerStart, StatusRunning},
	{StatusPending, TriggerCancel, StatusCancelled},
	{StatusPending, TriggerDeadline, StatusTimeout},
	{StatusRunning, TriggerStart, StatusRunning},
	{StatusRunning, TriggerComplete, StatusCompleted},
	{StatusRunning, TriggerFail, StatusFailed},
	{StatusRunning, TriggerAwaitReview, StatusWaitingForReview},
	{StatusRunning, TriggerAwaitAction, StatusRequiresAction},
	{StatusRunning, TriggerCancel, StatusCancelled},
	{StatusRunning, TriggerDeadline, StatusTimeout},
	{StatusWaitingForReview, TriggerReview, StatusRunning},
	{StatusWaitingForReview, TriggerReject, StatusFailed},
	{StatusWaitingForReview, TriggerCancel, StatusCancelled},
	{StatusWaitingForReview, TriggerDeadline, StatusTimeout},
	{StatusRequiresAction, TriggerResume, StatusRunning},
	{StatusRequiresAction, TriggerReject, StatusFailed},
	{StatusRequiresAction, TriggerCancel, StatusCancelled},
	{StatusRequiresAction, TriggerDeadline, StatusTimeout},
}

// Transitions returns a copy of the transition table.
func Transitions() []Transition { return append([]Transition(nil), transitions...) }

// Next returns the status a run in status from moves to on trigger, or a
// CONFLICT error when the table has no such transition (every trigger on a
// terminal run, for example).
func Next(from string, trigger Trigger) (string, error) {
	for _, t := range transitions {
		if t.From == from && t.Trigger == trigger {
			return t.To, nil
		}
	}
	if Terminal(from) {
		return "", canvas.Errorf(canvas.ECONFLICT, "The workflow run has already ended (%s).", from)
	}
	return "", canvas.Errorf(canvas.ECONFLICT, "A workflow run that is %s cannot %s.", from, trigger)
}
