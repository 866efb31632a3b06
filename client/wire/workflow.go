package wire

import (
	"encoding/json"
	"time"
)

// Workflow run statuses.
const (
	WorkflowPending          = "pending"
	WorkflowRunning          = "running"
	WorkflowCompleted        = "completed"
	WorkflowFailed           = "failed"
	WorkflowRequiresAction   = "requires-action"
	WorkflowCancelled        = "cancelled"
	WorkflowTimeout          = "timeout"
	WorkflowWaitingForReview = "waiting-for-review"
)

// WorkflowRunSummary is a workflow run as a list shows it.
type WorkflowRunSummary struct {
	ID              string         `json:"id"`
	PromptID        string         `json:"promptId"`
	PromptVersionID string         `json:"promptVersionId"`
	Environment     string         `json:"environment"`
	Status          string         `json:"status"`
	StartedAt       time.Time      `json:"startedAt"`
	CompletedAt     *time.Time     `json:"completedAt"`
	Deadline        time.Time      `json:"deadline"`
	StartNodeID     *string        `json:"startNodeId"`
	EndNodeID       *string        `json:"endNodeId"`
	Error           *WorkflowError `json:"error"`
}

// WorkflowRun is a workflow run with its input, steps, output and graph
// (GET /workflow/runs/{id}).
type WorkflowRun struct {
	WorkflowRunSummary
	Input  map[string]WorkflowInput `json:"input"`
	Steps  []*WorkflowStep          `json:"steps"`
	Output *WorkflowStep            `json:"output"`
	Graph  *WorkflowGraph           `json:"graph,omitempty"`
}

// WorkflowError is why a run or a step failed.
type WorkflowError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// WorkflowInput is one input variable of a run.
type WorkflowInput struct {
	Name     string              `json:"name"`
	Type     string              `json:"type"`
	Required bool                `json:"required"`
	Value    any                 `json:"value"`
	Files    []WorkflowInputFile `json:"files"`
}

// WorkflowInputFile is a file given to a file input.
type WorkflowInputFile struct {
	FileURL  string `json:"fileUrl"`
	Name     string `json:"name"`
	MimeType string `json:"mimeType"`
}

// WorkflowStep is one node's execution in a run.
type WorkflowStep struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	ActionID    string          `json:"actionId"`
	Status      string          `json:"status"`
	Input       json.RawMessage `json:"input"`
	Output      json.RawMessage `json:"output"`
	Error       *WorkflowError  `json:"error"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
	StartedAt   *time.Time      `json:"startedAt,omitempty"`
	CompletedAt *time.Time      `json:"completedAt,omitempty"`
}

// WorkflowGraph is a workflow's nodes and edges, with each node's state in
// a run.
type WorkflowGraph struct {
	Nodes []WorkflowGraphNode `json:"nodes"`
	Edges []WorkflowEdge      `json:"edges"`
}

// WorkflowGraphNode is one node of a WorkflowGraph.
type WorkflowGraphNode struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	ActionID string          `json:"actionId"`
	Ports    []WorkflowPort  `json:"ports"`
	Status   string          `json:"status,omitempty"`
	Output   json.RawMessage `json:"output,omitempty"`
	Error    *WorkflowError  `json:"error,omitempty"`
}

// WorkflowPort is a node's input or output port.
type WorkflowPort struct {
	ID   string `json:"id"`
	Dir  string `json:"dir"`
	Type string `json:"type"`
}

// WorkflowEdge joins an output port to an input port.
type WorkflowEdge struct {
	ID   string           `json:"id,omitempty"`
	From WorkflowEndpoint `json:"from"`
	To   WorkflowEndpoint `json:"to"`
}

// WorkflowEndpoint is one end of an edge.
type WorkflowEndpoint struct {
	Node string `json:"node"`
	Port string `json:"port"`
}

// ReviewParams is the body of POST /workflow/runs/{id}/review.
type ReviewParams struct {
	Approved bool   `json:"approved"`
	Comment  string `json:"comment,omitempty"`
	// StepID names the waiting step when several wait.
	StepID string `json:"stepId,omitempty"`
}

// ResumeParams is the body of POST /workflow/runs/{id}/resume.
type ResumeParams struct {
	Input json.RawMessage `json:"input"`
	// StepID names the waiting step when several wait.
	StepID string `json:"stepId,omitempty"`
}
