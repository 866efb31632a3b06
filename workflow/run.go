package workflow

import (
	"encoding/json"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// Environments: the surface that started a run.
const (
	EnvTestCase     = "test-case"
	EnvCraftPreview = "craft-preview"
	EnvAPI          = "api"
	EnvWorkstation  = "workstation"
)

// Queue job kinds: JobKindRun executes a run (Service.HandleJob),
// JobKindDeadline ends it in timeout when its deadline passes
// (Service.HandleDeadline). Both serve the run's id (Job.RefID).
const (
	JobKindRun      = "workflow.run"
	JobKindDeadline = "workflow.deadline"
)

// JobKinds are the queue kinds of the Service's handlers.
func JobKinds() []string { return []string{JobKindRun, JobKindDeadline} }

// Run is the record of one execution of a workflow version.
type Run struct {
	// ID is the internal run id; ExternalID is the execution id of a run
	// started through the public interface (completions), "" otherwise.
	// The API shows ExternalID when it is set, and finds a run by either.
	ID          string
	ExternalID  string
	WorkspaceID string
	CanvasID    string
	VersionID   string
	Environment string
	Status      string
	// Input is the run's variables as it started with them, by name.
	Input map[string]InputValue
	// StartNodeID and EndNodeID bound a partial run; "" means the whole
	// graph.
	StartNodeID string
	EndNodeID   string
	// Steps holds one step per node, in topological order.
	Steps []*Step
	// OutputNodeID names the completed leaf step that is the run's
	// output; "" while none has completed.
	OutputNodeID string
	// Error says why a failed (or timed out) run ended.
	Error *Error
	// Notifications: the webhook URL with forwarded headers, and the
	// application whose subscription hears of the run.
	WebhookURL     string
	ForwardHeaders []webhook.Header
	ApplicationID  string
	CreatedBy      string
	// CreatedAt is when the run was accepted (its startedAt), Deadline
	// when it times out.
	CreatedAt   time.Time
	UpdatedAt   time.Time
	CompletedAt *time.Time
	Deadline    time.Time
}

// PublicID is the id the API shows: the external execution id when the run
// has one, else the run id.
func (r *Run) PublicID() string {
	if r.ExternalID != "" {
		return r.ExternalID
	}
	return r.ID
}

// Step returns the run's step of a node, or nil.
func (r *Run) Step(nodeID string) *Step {
	for _, s := range r.Steps {
		if s.ID == nodeID {
			return s
		}
	}
	return nil
}

// InputValue is one variable of a run's input.
type InputValue struct {
	Name     string      `json:"name"`
	Type     string      `json:"type"`
	Required bool        `json:"required"`
	Value    any         `json:"value"`
	Files    []InputFile `json:"files"`
}

// InputFile is a file given as the value of a file variable.
type InputFile struct {
	FileURL  string `json:"fileUrl"`
	Name     string `json:"name"`
	MimeType string `json:"mimeType"`
}

// Step is the state of one node in a run. Its ID is the node's id.
type Step struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	ActionID string          `json:"actionId"`
	Status   string          `json:"status"`
	Input    json.RawMessage `json:"input"`
	Output   json.RawMessage `json:"output"`
	Error    *Error          `json:"error"`
	// Metadata may hold usage ({"inputTokens", "outputTokens"}) and what
	// the action records (a review's comment, a model's name).
	Metadata json.RawMessage `json:"metadata,omitempty"`
	// Seq is the node's topological position; Ports the out ports a
	// completed step selected (nil: all of them).
	Seq         int        `json:"-"`
	Ports       []string   `json:"-"`
	StartedAt   *time.Time `json:"startedAt,omitempty"`
	CompletedAt *time.Time `json:"completedAt,omitempty"`
}

// Clone returns a copy of s that shares no slices with it.
func (s *Step) Clone() *Step {
	c := *s
	c.Input = append(json.RawMessage(nil), s.Input...)
	c.Output = append(json.RawMessage(nil), s.Output...)
	c.Metadata = append(json.RawMessage(nil), s.Metadata...)
	c.Ports = append([]string(nil), s.Ports...)
	if s.Error != nil {
		e := *s.Error
		c.Error = &e
	}
	return &c
}

// Error is the error of a failed step or run as it is recorded: a canvas
// error code (canvas.ETIMEOUT, canvas.ECANCELLED, canvas.EREJECTED and
// canvas.ENOOUTPUT among them) and a message safe to show.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Err returns the error as a *canvas.Error: how a run's or a step's error
// leaves the package.
func (e *Error) Err() error {
	return &canvas.Error{Code: e.Code, Message: e.Message}
}

// View is a run as the API shows it: its Summary, and its input, steps,
// output and (on a read) graph.
type View struct {
	Summary
	Input  map[string]InputValue `json:"input"`
	Steps  []*Step               `json:"steps"`
	Output *Step                 `json:"output"`
	Graph  *Graph                `json:"graph,omitempty"`
}
