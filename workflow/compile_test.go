package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// fakeAction is an action of the compile tests: a config schema, default
// ports, and a Compile that rejects the config text "bad".
type fakeAction struct {
	schema string
	ports  func(cfg json.RawMessage) []workflow.Port
	// schemaCalls counts ConfigSchema calls.
	schemaCalls atomic.Int32
}

func (a *fakeAction) ConfigSchema() json.RawMessage {
	a.schemaCalls.Add(1)
	if a.schema == "" {
		return nil
	}
	return json.RawMessage(a.schema)
}

func (a *fakeAction) DefaultPorts(cfg json.RawMessage) []workflow.Port { return a.ports(cfg) }

func (a *fakeAction) Compile(n workflow.Node) (workflow.Executor, []canvas.Detail) {
	var cfg struct{ Text string }
	if err := json.Unmarshal(n.Config, &cfg); err != nil {
		return nil, []canvas.Detail{{Path: "/config", Message: "does not decode"}}
	}
	if cfg.Text == "bad" {
		return nil, []canvas.Detail{{Path: "/config/text", Message: "is rejected by the action"}}
	}
	return fakeExecutor{node: n.ID}, nil
}

type fakeExecutor struct{ node string }

func (e fakeExecutor) Execute(context.Context, *workflow.StepInput) (*workflow.Outcome, error) {
	return &workflow.Outcome{Output: e.node}, nil
}

func ports(specs ...string) []workflow.Port {
	var out []workflow.Port
	for _, s := range specs {
		dir, id, _ := strings.Cut(s, ":")
		out = append(out, workflow.Port{ID: id, Dir: dir, Type: workflow.FlowType})
	}
	return out
}

// fakeRegistry holds input (an out port), step (in and out, a strict
// schema), branch (in, and an out port per name its config lists) and
// output (an in port, any config).
func fakeRegistry() (*workflow.Registry, map[string]*fakeAction) {
	actions := map[string]*fakeAction{
		"input": {
			schema: `{"type": "object", "properties": {"variables": {"type": "array"}}, "additionalProperties": false}`,
			ports:  func(json.RawMessage) []workflow.Port { return ports("out:out") },
		},
		"step": {
			schema: `{"type": "object", "properties": {"text": {"type": "string", "maxLength": 20},
				"mode": {"enum": ["a", "b"]}, "count": {"type": ["integer", "null"], "minimum": 1}},
				"additionalProperties": false}`,
			ports: func(json.RawMessage) []workflow.Port { return ports("in:in", "out:out") },
		},
		"branch": {
			schema: `{"type": "object", "required": ["ports"],
				"properties": {"ports": {"type": "array", "items": {"type": "string"}, "minItems": 1}}}`,
			ports: func(cfg json.RawMessage) []workflow.Port {
				var c struct{ Ports []string }
				_ = json.Unmarshal(cfg, &c)
				out := ports("in:in")
				for _, p := range c.Ports {
					out = append(out, workflow.Port{ID: p, Dir: workflow.DirOut})
				}
				return out
			},
		},
		"output": {ports: func(json.RawMessage) []workflow.Port { return ports("in:in") }},
	}
	reg := workflow.NewRegistry()
	for id, a := range actions {
		reg.Register(id, a)
	}
	return reg, actions
}

// wf returns a spec with the given nodes and edges (JSON array contents).
func wf(nodes, edges string) string {
	return `{"specVersion": "1", "nodes": [` + nodes + `], "edges": [` + edges + `]}`
}

func node(id, action string) string { return fmt.Sprintf(`{"id": %q, "actionId": %q}`, id, action) }

func edge(from, fromPort, to, toPort string) string {
	return fmt.Sprintf(`{"from": {"node": %q, "port": %q}, "to": {"node": %q, "port": %q}}`, from, fromPort, to, toPort)
}

// base is the valid line start → a → out that cases add to.
var (
	baseNodes = node("start", "input") + "," + node("a", "step") + "," + node("out", "output")
	baseEdges = edge("start", "out", "a", "in") + "," + edge("a", "out", "out", "in")
)

func TestCompile_Invalid(t *testing.T) {
	t.Parallel()
	const p = "/json/workflowSpec"
	tests := []struct {
		name string
		spec string
		want []string
		// message, when set, is part of the first detail's message.
		message string
	}{
		{"NotJSON", `{"nodes": [`, []string{p}, "valid JSON"},
		{"NotObject", `[1]`, []string{p}, "must be an object"},
		{"Null", `null`, []string{p}, "must be an object"},
		{"Empty", `{}`, []string{p + "/specVersion", p + "/nodes"}, "is required"},
		{"WrongTypes", `{"specVersion": 1, "timeoutSeconds": "60", "nodes": {}, "edges": 3}`,
			[]string{p + "/specVersion", p + "/timeoutSeconds", p + "/nodes", p + "/edges"}, "must be a string"},
		{"SpecVersion", `{"specVersion": "2", "nodes": [` + node("start", "input") + `]}`,
			[]string{p + "/specVersion"}, `must be "1"`},
		{"TimeoutNegative", `{"specVersion": "1", "timeoutSeconds": -1, "nodes": [` + node("start", "input") + `]}`,
			[]string{p + "/timeoutSeconds"}, "at least 0"},
		{"TimeoutTooLong", `{"specVersion": "1", "timeoutSeconds": 604801, "nodes": [` + node("start", "input") + `]}`,
			[]string{p + "/timeoutSeconds"}, "at most 604800"},
		{"TimeoutHuge", `{"specVersion": "1", "timeoutSeconds": 1e30, "nodes": [` + node("start", "input") + `]}`,
			[]string{p + "/timeoutSeconds"}, "at most 604800"},
		{"TimeoutFraction", `{"specVersion": "1", "timeoutSeconds": 1.5, "nodes": [` + node("start", "input") + `]}`,
			[]string{p + "/timeoutSeconds"}, "an integer"},
		{"NoNodes", wf("", ""), []string{p + "/nodes"}, "at least one node"},
		{"NodeNotObject", wf(node("start", "input")+`, 3`, ""), []string{p + "/nodes/1"}, "must be an object"},
		{"NodeFieldTypes", wf(node("start", "input")+`, {"id": 1, "name": 2, "actionId": true, "ports": {}}`, ""),
			[]string{p + "/nodes/1/id", p + "/nodes/1/name", p + "/nodes/1/actionId", p + "/nodes/1/ports"}, "must be a string"},
		{"NodeIDMissing", wf(node("start", "input")+`, {"actionId": "output"}`, ""), []string{p + "/nodes/1/id"}, "is required"},
		{"NodeIDEmpty", wf(node("start", "input")+","+node("", "output"), ""), []string{p + "/nodes/1/id"}, "must not be empty"},
		{"NodeIDDotted", wf(node("start", "input")+","+node("steps.a", "output"), ""), []string{p + "/nodes/1/id"}, "letters, digits"},
		{"NodeIDDigit", wf(node("start", "input")+","+node("1a", "output"), ""), []string{p + "/nodes/1/id"}, "start with a letter"},
		{"NodeIDDuplicate", wf(baseNodes+","+node("a", "step"), baseEdges), []string{p + "/nodes/3/id"}, "duplicates the id of node 1"},
		{"NameTooLong", wf(node("start", "input")+`, {"id": "a", "actionId": "output", "name": "`+strings.Repeat("é", 257)+`"}`,
			edge("start", "out", "a", "in")), []string{p + "/nodes/1/name"}, "at most 256 characters"},
		{"UnknownAction", wf(baseNodes+","+node("b", "nope"), baseEdges+","+edge("a", "out", "b", "in")),
			[]string{p + "/nodes/3/actionId"}, `"branch", "input", "output", "step"`},
		{"ActionIDMissing", wf(node("start", "input")+`, {"id": "b"}`, edge("start", "out", "b", "in")),
			[]string{p + "/nodes/1/actionId"}, "is required"},
		{"ConfigType", wf(node("start", "input")+`, {"id": "a", "actionId": "step", "config": {"text": 5}}`, edge("start", "out", "a", "in")),
			[]string{p + "/nodes/1/config/text"}, "must be a string"},
		{"ConfigExtraProperty", wf(node("start", "input")+`, {"id": "a", "actionId": "step", "config": {"extra": 1}}`, edge("start", "out", "a", "in")),
			[]string{p + "/nodes/1/config/extra"}, "is not allowed"},
		{"ConfigEnum", wf(node("start", "input")+`, {"id": "a", "actionId": "step", "config": {"mode": "c"}}`, edge("start", "out", "a", "in")),
			[]string{p + "/nodes/1/config/mode"}, `must be one of "a", "b"`},
		{"ConfigMaxLength", wf(node("start", "input")+`, {"id": "a", "actionId": "step", "config": {"text": "`+strings.Repeat("x", 21)+`"}}`, edge("start", "out", "a", "in")),
			[]string{p + "/nodes/1/config/text"}, "at most 20 characters"},
		{"ConfigTypeUnion", wf(node("start", "input")+`, {"id": "a", "actionId": "step", "config": {"count": "x"}}`, edge("start", "out", "a", "in")),
			[]string{p + "/nodes/1/config/count"}, "must be an integer or null"},
		{"ConfigNotObject", wf(node("start", "input")+`, {"id": "a", "actionId": "step", "config": "x"}`, edge("start", "out", "a", "in")),
			[]string{p + "/nodes/1/config"}, "must be an object"},
		{"ConfigAbsentIsEmptyObject", wf(node("start", "input")+","+node("b", "branch"), edge("start", "out", "b", "in")),
			[]string{p + "/nodes/1/config/ports"}, "is required"},
		{"PortFields", wf(node("start", "input")+`, {"id": "a", "actionId": "step", "ports": [
			{"id": "", "dir": "in"}, {"id": "o", "dir": "up"}, {"id": "o", "dir": "out"}, 4, {"dir": "in", "type": 1}]}`, edge("start", "out", "a", "in")),
			[]string{p + "/nodes/1/ports/0/id", p + "/nodes/1/ports/1/dir", p + "/nodes/1/ports/2/id", p + "/nodes/1/ports/3",
				p + "/nodes/1/ports/4/id", p + "/nodes/1/ports/4/type"}, "must not be empty"},
		{"EdgeUnknownNodes", wf(baseNodes, baseEdges+","+edge("x", "out", "a", "in")+","+edge("a", "out", "y", "in")),
			[]string{p + "/edges/2/from/node", p + "/edges/3/to/node"}, `there is no node "x"`},
		{"EdgeUnknownPort", wf(baseNodes, baseEdges+","+edge("start", "nope", "out", "in")),
			[]string{p + "/edges/2/from/port"}, `must be an out port of node "start": "out"`},
		{"EdgeFromInPort", wf(baseNodes, baseEdges+","+edge("a", "in", "out", "in")),
			[]string{p + "/edges/2/from/port"}, `"in" is an in port of node "a"`},
		{"EdgeToOutPort", wf(baseNodes, baseEdges+","+edge("start", "out", "a", "out")),
			[]string{p + "/edges/2/to/port"}, `must be an in port`},
		{"EdgeFieldTypes", wf(baseNodes, baseEdges+`, {"from": "a", "to": {"node": 1}}, 7, {"id": 3, "to": {"node": "a", "port": "in"}}`),
			[]string{p + "/edges/2/from", p + "/edges/2/to/node", p + "/edges/2/to/port", p + "/edges/3", p + "/edges/4/id", p + "/edges/4/from"},
			"must be an object"},
		{"EdgeEmptyNames", wf(baseNodes, baseEdges+`, {"from": {"node": "", "port": "out"}, "to": {"node": "a", "port": ""}}`),
			[]string{p + "/edges/2/from/node", p + "/edges/2/to/port"}, "must not be empty"},
		{"EdgeDuplicate", wf(baseNodes, baseEdges+","+edge("start", "out", "a", "in")), []string{p + "/edges/2"}, "duplicates edge 0"},
		{"EdgeDuplicateID", wf(baseNodes, `{"id": "e", "from": {"node": "start", "port": "out"}, "to": {"node": "a", "port": "in"}},
			{"id": "e", "from": {"node": "a", "port": "out"}, "to": {"node": "out", "port": "in"}}`),
			[]string{p + "/edges/1/id"}, "duplicates the id of edge 0"},
		{"SelfLoop", wf(baseNodes, baseEdges+","+edge("a", "out", "a", "in")), []string{p + "/edges/2"}, `connects node "a" to itself`},
		{"TwoStarts", wf(baseNodes+","+node("b", "step"), baseEdges), []string{p + "/nodes/3"}, `one start node, "start"`},
		{"StartIsTheInputNode", wf(node("b", "step")+","+node("start", "input")+","+node("out", "output"), edge("start", "out", "out", "in")),
			[]string{p + "/nodes/0"}, `one start node, "start"`},
		{"Unreachable", wf(baseNodes+","+node("b", "step")+","+node("c", "step"), baseEdges+","+edge("b", "out", "c", "in")),
			[]string{p + "/nodes/3", p + "/nodes/4"}, `one start node, "start"`},
		{"InputWithIncomingEdge", wf(baseNodes+`, {"id": "again", "actionId": "input", "ports": [{"id": "in", "dir": "in"}]}`,
			baseEdges+","+edge("a", "out", "again", "in")), []string{p + "/nodes/3"}, "an input node is the start"},
		{"OutputWithOutgoingEdge", wf(node("start", "input")+`, {"id": "out", "actionId": "output", "ports": [{"id": "in", "dir": "in"}, {"id": "out", "dir": "out"}]},`+node("a", "step"),
			edge("start", "out", "out", "in")+","+edge("out", "out", "a", "in")), []string{p + "/nodes/1"}, "an output node ends the workflow"},
		{"Cycle", wf(node("start", "input")+","+node("a", "step")+","+node("b", "step")+","+node("c", "step"),
			edge("start", "out", "a", "in")+","+edge("a", "out", "b", "in")+","+edge("b", "out", "c", "in")+","+edge("c", "out", "a", "in")),
			[]string{p + "/edges"}, `"a" → "b" → "c" → "a"`},
		{"CycleWithoutStart", wf(node("a", "step")+","+node("b", "step"), edge("a", "out", "b", "in")+","+edge("b", "out", "a", "in")),
			[]string{p + "/nodes", p + "/edges"}, "one start node"},
		{"ActionCompile", wf(node("start", "input")+`, {"id": "a", "actionId": "step", "config": {"text": "bad"}}`, edge("start", "out", "a", "in")),
			[]string{p + "/nodes/1/config/text"}, "is rejected by the action"},
		{"AllAtOnce", `{"specVersion": "0", "nodes": [` + node("start", "input") + `, {"id": "a b", "actionId": "step"},
			{"id": "c", "actionId": "step", "config": {"mode": 1}}, {"id": "d", "actionId": "what"}],
			"edges": [` + edge("start", "out", "c", "in") + "," + edge("c", "out", "zz", "in") + "," + edge("c", "out", "d", "in") + `]}`,
			[]string{p + "/specVersion", p + "/nodes/1/id", p + "/nodes/2/config/mode", p + "/nodes/3/actionId", p + "/edges/1/to/node"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg, _ := fakeRegistry()
			w, err := workflow.Compile(json.RawMessage(tt.spec), reg)
			require.Error(t, err)
			assert.Nil(t, w)
			var ce *canvas.Error
			require.True(t, errors.As(err, &ce), "%v", err)
			assert.Equal(t, canvas.EINVALID, ce.Code)
			assert.Equal(t, "The workflow specification is invalid.", ce.Message)
			var paths []string
			for _, d := range ce.Details {
				paths = append(paths, d.Path)
			}
			assert.ElementsMatch(t, tt.want, paths, "details: %v", ce.Details)
			if tt.message != "" && len(ce.Details) > 0 {
				assert.Contains(t, ce.Details[0].Message, tt.message)
			}
		})
	}
}

func TestCompile_OK(t *testing.T) {
	t.Parallel()
	reg, actions := fakeRegistry()
	// Spec order differs from topological order: out comes first, and the
	// branch's two arms (x before y in spec order) join at out.
	spec := `{"specVersion": "1", "timeoutSeconds": 90, "nodes": [
		{"id": "out", "actionId": "output", "config": {"anything": [1]}},
		{"id": "y", "actionId": "step", "name": "Arm Y", "ports": [{"id": "in", "dir": "in"}, {"id": "out", "dir": "out", "type": "text"}]},
		{"id": "br", "actionId": "branch", "config": {"ports": ["left", "right"]}},
		{"id": "x", "actionId": "step", "config": {"text": "hi", "count": null}},
		{"id": "start", "actionId": "input", "config": {"variables": []}, "extra": "ignored"}
	], "edges": [
		{"id": "e1", "from": {"node": "start", "port": "out"}, "to": {"node": "br", "port": "in"}},
		{"from": {"node": "br", "port": "right"}, "to": {"node": "y", "port": "in"}},
		{"from": {"node": "br", "port": "left"}, "to": {"node": "x", "port": "in"}},
		{"from": {"node": "y", "port": "out"}, "to": {"node": "out", "port": "in"}},
		{"from": {"node": "x", "port": "out"}, "to": {"node": "out", "port": "in"}}
	]}`
	w, err := workflow.Compile(json.RawMessage(spec), reg)
	require.NoError(t, err)

	var order []string
	for i, n := range w.Nodes {
		order = append(order, n.ID)
		assert.Equal(t, i, n.Seq, n.ID)
		assert.Same(t, n, w.Node(n.ID))
		assert.Equal(t, fakeExecutor{node: n.ID}, n.Executor, n.ID)
	}
	assert.Equal(t, []string{"start", "br", "y", "x", "out"}, order)
	assert.Nil(t, w.Node("nope"))
	assert.Same(t, w.Node("start"), w.Start)
	assert.Equal(t, 90*time.Second, w.Timeout)

	br, out := w.Node("br"), w.Node("out")
	assert.Same(t, actions["branch"], br.Action)
	assert.Equal(t, "br", br.Name, "the name defaults to the id")
	assert.Equal(t, "Arm Y", w.Node("y").Name)
	assert.Equal(t, ports("in:in", "out:left", "out:right"), br.Ports, "default ports, flow typed")
	assert.Equal(t, []workflow.Port{{ID: "in", Dir: "in", Type: "flow"}, {ID: "out", Dir: "out", Type: "text"}}, w.Node("y").Ports)
	assert.JSONEq(t, `{"text": "hi", "count": null}`, string(w.Node("x").Config))
	assert.JSONEq(t, `{}`, string(w.Node("y").Config), "an absent config is {}")
	assert.JSONEq(t, `{"anything": [1]}`, string(out.Config))

	link := func(l *workflow.Link) string { return l.From.ID + "." + l.FromPort + "->" + l.To.ID + "." + l.ToPort }
	var outs, ins []string
	for _, l := range br.Out {
		outs = append(outs, link(l))
	}
	for _, l := range out.In {
		ins = append(ins, link(l))
	}
	assert.Equal(t, []string{"br.right->y.in", "br.left->x.in"}, outs, "spec order")
	assert.Equal(t, []string{"y.out->out.in", "x.out->out.in"}, ins, "spec order")
	assert.Empty(t, w.Start.In)
	assert.Empty(t, out.Out)

	// The spec is kept as written; the graph has every node's ports.
	assert.Equal(t, "1", w.Spec.SpecVersion)
	assert.Equal(t, 90, w.Spec.TimeoutSeconds)
	assert.Empty(t, w.Spec.Nodes[2].Ports)
	assert.Empty(t, w.Spec.Nodes[2].Name)
	graph, err := json.Marshal(w.Graph)
	require.NoError(t, err)
	assert.JSONEq(t, `{"nodes": [
		{"id": "out", "name": "out", "actionId": "output", "ports": [{"id": "in", "dir": "in", "type": "flow"}]},
		{"id": "y", "name": "Arm Y", "actionId": "step", "ports": [{"id": "in", "dir": "in", "type": "flow"}, {"id": "out", "dir": "out", "type": "text"}]},
		{"id": "br", "name": "br", "actionId": "branch", "ports": [{"id": "in", "dir": "in", "type": "flow"},
			{"id": "left", "dir": "out", "type": "flow"}, {"id": "right", "dir": "out", "type": "flow"}]},
		{"id": "x", "name": "x", "actionId": "step", "ports": [{"id": "in", "dir": "in", "type": "flow"}, {"id": "out", "dir": "out", "type": "flow"}]},
		{"id": "start", "name": "start", "actionId": "input", "ports": [{"id": "out", "dir": "out", "type": "flow"}]}
	], "edges": [
		{"id": "e1", "from": {"node": "start", "port": "out"}, "to": {"node": "br", "port": "in"}},
		{"from": {"node": "br", "port": "right"}, "to": {"node": "y", "port": "in"}},
		{"from": {"node": "br", "port": "left"}, "to": {"node": "x", "port": "in"}},
		{"from": {"node": "y", "port": "out"}, "to": {"node": "out", "port": "in"}},
		{"from": {"node": "x", "port": "out"}, "to": {"node": "out", "port": "in"}}
	]}`, string(graph))
}

func TestCompile_DefaultTimeout(t *testing.T) {
	t.Parallel()
	reg, _ := fakeRegistry()
	w, err := workflow.Compile(json.RawMessage(wf(node("start", "input"), "")), reg)
	require.NoError(t, err)
	assert.Equal(t, workflow.DefaultTimeout, w.Timeout)
	assert.Same(t, w.Start, w.Nodes[0])
	assert.Equal(t, []workflow.Edge{}, w.Graph.Edges)
}

func TestCompile_SchemaCompiledOnce(t *testing.T) {
	t.Parallel()
	reg, actions := fakeRegistry()
	spec := json.RawMessage(wf(baseNodes+","+node("b", "step"), baseEdges+","+edge("start", "out", "b", "in")))
	for range 3 {
		_, err := workflow.Compile(spec, reg)
		require.NoError(t, err)
	}
	assert.Equal(t, int32(1), actions["step"].schemaCalls.Load())
	assert.Equal(t, int32(1), actions["input"].schemaCalls.Load())
}

// brokenAction has a config schema that is not a JSON Schema, or compiles
// nodes without an executor.
type brokenAction struct{ schema string }

func (a brokenAction) ConfigSchema() json.RawMessage { return json.RawMessage(a.schema) }
func (brokenAction) DefaultPorts(json.RawMessage) []workflow.Port {
	return ports("in:in", "out:out")
}
func (brokenAction) Compile(workflow.Node) (workflow.Executor, []canvas.Detail) { return nil, nil }

func TestCompile_BrokenAction(t *testing.T) {
	t.Parallel()
	for name, schema := range map[string]string{"Schema": `{"type": 5}`, "NoExecutor": `{"type": "object"}`} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			reg, _ := fakeRegistry()
			reg.Register("broken", brokenAction{schema: schema})
			_, err := workflow.Compile(json.RawMessage(wf(node("start", "input")+","+node("b", "broken"),
				edge("start", "out", "b", "in"))), reg)
			assert.Equal(t, canvas.EINTERNAL, canvas.ErrorCode(err), "a fault of the action, not of the spec: %v", err)
		})
	}
}

// exampleSpec is the example of docs/workflows.md: an llm drafts, a
// condition sends a non-empty draft to review, and the output finishes.
const exampleSpec = `{
	"specVersion": "1",
	"timeoutSeconds": 600,
	"nodes": [
		{"id": "start", "name": "Start", "actionId": "input",
			"config": {"variables": [{"name": "topic", "type": "text", "required": true}]}},
		{"id": "draft", "name": "Draft", "actionId": "llm",
			"config": {"model": "echo", "messages": [
				{"role": "system", "content": "You write short announcements."},
				{"role": "user", "content": "Write about {{topic}}."}]}},
		{"id": "check", "name": "Long enough?", "actionId": "condition",
			"config": {"branches": [{"port": "review", "when": "len(steps.draft.output) > 20"}], "default": "short"}},
		{"id": "review", "name": "Editor review", "actionId": "review",
			"config": {"instructions": "Approve the draft or reject it."}},
		{"id": "rewrite", "name": "Rewrite", "actionId": "template",
			"config": {"template": "Too short: {{steps.draft.output}}"}},
		{"id": "result", "name": "Result", "actionId": "output",
			"config": {"value": "{{steps.draft.output}}"}}
	],
	"edges": [
		{"from": {"node": "start", "port": "out"}, "to": {"node": "draft", "port": "in"}},
		{"from": {"node": "draft", "port": "out"}, "to": {"node": "check", "port": "in"}},
		{"from": {"node": "check", "port": "review"}, "to": {"node": "review", "port": "in"}},
		{"from": {"node": "check", "port": "short"}, "to": {"node": "rewrite", "port": "in"}},
		{"from": {"node": "review", "port": "approved"}, "to": {"node": "result", "port": "in"}},
		{"from": {"node": "rewrite", "port": "out"}, "to": {"node": "result", "port": "in"}}
	]
}`

func TestCompile_Builtins(t *testing.T) {
	t.Parallel()
	reg := workflow.Builtins(workflow.BuiltinOptions{})
	w, err := workflow.Compile(json.RawMessage(exampleSpec), reg)
	require.NoError(t, err)
	var order []string
	for _, n := range w.Nodes {
		order = append(order, n.ID)
		assert.NotNil(t, n.Executor, n.ID)
	}
	assert.Equal(t, []string{"start", "draft", "check", "review", "rewrite", "result"}, order)
	assert.Equal(t, 10*time.Minute, w.Timeout)
	assert.Equal(t, ports("in:in", "out:review", "out:short"), w.Node("check").Ports)
	assert.Equal(t, ports("in:in", "out:approved", "out:rejected"), w.Node("review").Ports)

	t.Run("Invalid", func(t *testing.T) {
		t.Parallel()
		spec := strings.NewReplacer(`"port": "review", "when": "len(steps.draft.output) > 20"`, `"port": "review", "when": "len(("`,
			`"role": "system"`, `"role": "robot"`).Replace(exampleSpec)
		_, err := workflow.Compile(json.RawMessage(spec), reg)
		assertDetails(t, err, "/json/workflowSpec/nodes/1/config/messages/0/role", "/json/workflowSpec/nodes/2/config/branches/0/when")
	})
}

// assertDetails checks that err is VALIDATION with exactly the given detail
// paths, in any order.
func assertDetails(t *testing.T, err error, paths ...string) {
	t.Helper()
	require.Error(t, err)
	assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err), "%v", err)
	var got []string
	for _, d := range canvas.ErrorDetails(err) {
		got = append(got, d.Path)
	}
	assert.ElementsMatch(t, paths, got, "details: %v", canvas.ErrorDetails(err))
}

// FuzzCompile checks that Compile never panics, that it fails only with
// VALIDATION details under the spec's pointer, and that what it compiles is
// in topological order.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{exampleSpec, wf(baseNodes, baseEdges), `{}`, `[]`, `null`, `{"nodes": [{}]}`,
		wf(node("a", "step")+","+node("b", "step"), edge("a", "out", "b", "in")+","+edge("b", "out", "a", "in")),
		`{"specVersion": "1", "timeoutSeconds": 1e400, "nodes": [{"id": "a", "actionId": "branch", "config": {"ports": ["x", "x"]}}]}`,
	} {
		f.Add([]byte(s))
	}
	reg, _ := fakeRegistry()
	builtins := workflow.Builtins(workflow.BuiltinOptions{})
	for id := range map[string]bool{"step": true, "branch": true} {
		a, _ := reg.Lookup(id)
		builtins.Register(id, a)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := workflow.Compile(data, builtins)
		if err != nil {
			require.Equal(t, canvas.EINVALID, canvas.ErrorCode(err), "%v", err)
			details := canvas.ErrorDetails(err)
			require.NotEmpty(t, details)
			for _, d := range details {
				require.True(t, strings.HasPrefix(d.Path, "/json/workflowSpec"), d.Path)
				require.NotEmpty(t, d.Message)
			}
			return
		}
		seen := map[string]bool{}
		for i, n := range w.Nodes {
			require.Equal(t, i, n.Seq)
			require.NotNil(t, n.Executor)
			for _, l := range n.In {
				require.True(t, seen[l.From.ID], "%s runs before %s", l.From.ID, n.ID)
			}
			seen[n.ID] = true
		}
		require.Len(t, w.Graph.Nodes, len(w.Nodes))
	})
}
