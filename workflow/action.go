package workflow

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// Built-in action ids.
const (
	ActionInput     = "input"
	ActionLLM       = "llm"
	ActionTemplate  = "template"
	ActionCondition = "condition"
	ActionReview    = "review"
	ActionAction    = "action"
	ActionOutput    = "output"
)

// Action is a kind of node. Embedders register their own in a Registry.
type Action interface {
	// ConfigSchema is the JSON Schema a node's config must match (an
	// absent config is checked as {}); nil accepts any config.
	ConfigSchema() json.RawMessage
	// DefaultPorts are the ports of a node whose spec lists none.
	DefaultPorts(config json.RawMessage) []Port
	// Compile checks a node whose config matches the schema (its
	// expressions, its port names) and returns what executes it. Problems
	// are returned as details whose paths are relative to the node, for
	// example "/config/branches/0/when".
	Compile(node Node) (Executor, []canvas.Detail)
}

// Executor executes one node of a run.
type Executor interface {
	// Execute runs the step. Its context ends when the run is cancelled or
	// times out, or the worker loses the job; an error fails the step and
	// the run.
	Execute(ctx context.Context, in *StepInput) (*Outcome, error)
}

// Resumer is an Executor whose step can pause (Outcome.Pause): Resume
// finishes the paused step with what the caller of Service.Review or
// Service.Resume sent (the request body: {"approved", "comment"} for a
// review, {"input"} for an action). A VALIDATION error refuses the payload
// and leaves the run paused; any other error fails the step and the run.
type Resumer interface {
	Executor
	Resume(ctx context.Context, in *StepInput, payload json.RawMessage) (*Outcome, error)
}

// StepInput is what an executor sees of its run.
type StepInput struct {
	RunID       string
	WorkspaceID string
	// CanvasID is the canvas of the run's workflow version.
	CanvasID string
	// StartedBy is the actor who started the run (Run.CreatedBy).
	StartedBy string
	Node      *CNode
	// Variables are the run's input values by name.
	Variables map[string]any
	// Steps are the run's steps that have ended (completed or skipped), by
	// node id; the executor must not change them.
	Steps map[string]*Step
}

// Outcome is how a step ended.
type Outcome struct {
	// Output is the step's output, any JSON value (a json.RawMessage is
	// kept as it is).
	Output any
	// Ports are the out ports the flow goes on through; nil means every
	// out port.
	Ports []string
	// Pause, when StepWaitingForReview or StepRequiresAction, leaves the
	// step waiting (Output and Ports are ignored) until it is resumed.
	Pause string
	// Input is recorded as the step's input; nil records the outputs of
	// the node's completed predecessors by node id (the run's variables
	// for a node without predecessors).
	Input any
	// Metadata is recorded with the step; "usage" holds
	// {"inputTokens", "outputTokens"} when a model was called.
	Metadata map[string]any
}

// Registry maps action ids to actions. It is safe for concurrent use.
type Registry struct {
	mu      sync.RWMutex
	actions map[string]Action
	// schemas caches the compiled config schema of each action
	// (compile_schema.go).
	schemas sync.Map
}

// NewRegistry returns an empty Registry; Builtins returns one with the
// built-in actions.
func NewRegistry() *Registry { return &Registry{actions: map[string]Action{}} }

// Register adds or replaces the action with the given id.
func (r *Registry) Register(id string, a Action) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.actions[id] = a
}

// Lookup returns the action with the given id.
func (r *Registry) Lookup(id string) (Action, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	a, ok := r.actions[id]
	return a, ok
}

// IDs returns the registered action ids, sorted.
func (r *Registry) IDs() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ids := make([]string, 0, len(r.actions))
	for id := range r.actions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
