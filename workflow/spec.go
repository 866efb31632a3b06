package workflow

import (
	"encoding/json"
	"time"
)

// SpecVersion is the version of the specification format this package
// reads; a spec must carry it.
const SpecVersion = "1"

// DefaultTimeout is the deadline of a run whose spec sets no
// timeoutSeconds; MaxTimeout bounds the ones that do.
const (
	DefaultTimeout = 10 * time.Minute
	MaxTimeout     = 7 * 24 * time.Hour
)

// Port directions, and the type of the ports that carry the flow of
// control.
const (
	DirIn    = "in"
	DirOut   = "out"
	FlowType = "flow"
)

// Spec is a workflow specification as its author writes it, stored as the
// version's workflowSpec.
type Spec struct {
	SpecVersion string `json:"specVersion"`
	// TimeoutSeconds is the deadline of every run, counted from its start;
	// zero means DefaultTimeout.
	TimeoutSeconds int    `json:"timeoutSeconds,omitempty"`
	Nodes          []Node `json:"nodes"`
	Edges          []Edge `json:"edges"`
}

// Node is one step of a workflow: an action with its configuration and
// ports. When Ports is empty, the action's DefaultPorts are used.
type Node struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	ActionID string          `json:"actionId"`
	Config   json.RawMessage `json:"config,omitempty"`
	Ports    []Port          `json:"ports"`
}

// Port is where edges attach to a node.
type Port struct {
	ID   string `json:"id"`
	Dir  string `json:"dir"`
	Type string `json:"type"`
}

// Edge connects an out port of one node to an in port of another.
type Edge struct {
	ID   string   `json:"id,omitempty"`
	From Endpoint `json:"from"`
	To   Endpoint `json:"to"`
}

// Endpoint names a port of a node.
type Endpoint struct {
	Node string `json:"node"`
	Port string `json:"port"`
}

// Graph is the executed graph derived from a spec and stored with the
// version: every node with its ports (defaults filled in), and the edges.
type Graph struct {
	Nodes []GraphNode `json:"nodes"`
	Edges []Edge      `json:"edges"`
}

// GraphNode is a node of a Graph. On a run's graph it is enriched with its
// step's status, output and error.
type GraphNode struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	ActionID string          `json:"actionId"`
	Ports    []Port          `json:"ports"`
	Status   string          `json:"status,omitempty"`
	Output   json.RawMessage `json:"output,omitempty"`
	Error    *Error          `json:"error,omitempty"`
}

// Workflow is a compiled spec: its nodes in topological order, linked by
// their edges, each with the Executor its action compiled for it.
type Workflow struct {
	Spec    Spec
	Timeout time.Duration
	// Nodes are in topological order; between nodes that do not depend on
	// each other, spec order.
	Nodes []*CNode
	// Start is the one node without incoming edges (the input node).
	Start *CNode
	// Graph is what the version stores as its graph.
	Graph Graph
	index map[string]*CNode
}

// Node returns the node with the given id, or nil.
func (w *Workflow) Node(id string) *CNode { return w.index[id] }

// CNode is a compiled node.
type CNode struct {
	Node
	// Seq is the node's position in Workflow.Nodes.
	Seq int
	// In and Out are the edges arriving at and leaving the node, in spec
	// order.
	In  []*Link
	Out []*Link
	// Action is the node's action; Executor runs it.
	Action   Action
	Executor Executor
}

// Link is a compiled edge.
type Link struct {
	From     *CNode
	FromPort string
	To       *CNode
	ToPort   string
}
