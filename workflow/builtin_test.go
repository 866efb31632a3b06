package workflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// mustBuiltinNode compiles a node of a built-in action with reg (Builtins
// without models when nil) and returns it as a compiled node without
// edges.
func mustBuiltinNode(t *testing.T, reg *workflow.Registry, id, actionID, config string) *workflow.CNode {
	t.Helper()
	n, details := compileBuiltinNode(t, reg, workflow.Node{ID: id, Name: id, ActionID: actionID, Config: json.RawMessage(config)})
	require.Empty(t, details)
	return n
}

// compileBuiltinNode compiles node and returns it, or the details Compile
// reported.
func compileBuiltinNode(t *testing.T, reg *workflow.Registry, node workflow.Node) (*workflow.CNode, []canvas.Detail) {
	t.Helper()
	if reg == nil {
		reg = workflow.Builtins(workflow.BuiltinOptions{})
	}
	a, ok := reg.Lookup(node.ActionID)
	require.True(t, ok, "action %q", node.ActionID)
	e, details := a.Compile(node)
	if len(details) > 0 {
		assert.Nil(t, e)
		return nil, details
	}
	require.NotNil(t, e)
	return &workflow.CNode{Node: node, Action: a, Executor: e}, nil
}

// builtinDetails compiles a node of actionID with config and returns the
// details Compile reported.
func builtinDetails(t *testing.T, actionID, config string, ports ...workflow.Port) []canvas.Detail {
	t.Helper()
	_, details := compileBuiltinNode(t, nil, workflow.Node{ID: "n", ActionID: actionID, Config: json.RawMessage(config), Ports: ports})
	return details
}

// linkBuiltin adds an edge from from's port to to's "in" port.
func linkBuiltin(from *workflow.CNode, port string, to *workflow.CNode) {
	l := &workflow.Link{From: from, FromPort: port, To: to, ToPort: workflow.PortIn}
	from.Out = append(from.Out, l)
	to.In = append(to.In, l)
}

// endedStep is a step of a run that has ended with status and output (a
// JSON text, "" for none).
func endedStep(id, status, output string) *workflow.Step {
	s := &workflow.Step{ID: id, Status: status}
	if output != "" {
		s.Output = json.RawMessage(output)
	}
	return s
}

// mustExecute executes n with in (its Node set to n) and returns the
// outcome.
func mustExecute(t *testing.T, n *workflow.CNode, in *workflow.StepInput) *workflow.Outcome {
	t.Helper()
	out, err := execute(n, in)
	require.NoError(t, err)
	require.NotNil(t, out)
	return out
}

func execute(n *workflow.CNode, in *workflow.StepInput) (*workflow.Outcome, error) {
	if in == nil {
		in = &workflow.StepInput{}
	}
	in.Node = n
	return n.Executor.Execute(context.Background(), in)
}

// outputJSON marshals an outcome's output as the engine records it.
func outputJSON(t *testing.T, out *workflow.Outcome) string {
	t.Helper()
	b, err := json.Marshal(out.Output)
	require.NoError(t, err)
	return string(b)
}

// requireCode checks that err is a *canvas.Error with code and, when
// given, exactly the detail paths.
func requireCode(t *testing.T, err error, code string, paths ...string) {
	t.Helper()
	require.Error(t, err)
	var ce *canvas.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, code, ce.Code, ce.Message)
	if len(paths) > 0 {
		assert.Equal(t, paths, detailPaths(ce.Details))
	}
}

func detailPaths(details []canvas.Detail) []string {
	paths := make([]string, len(details))
	for i, d := range details {
		paths[i] = d.Path
	}
	return paths
}

func TestBuiltins(t *testing.T) {
	reg := workflow.Builtins(workflow.BuiltinOptions{})
	assert.Equal(t, []string{"action", "condition", "input", "llm", "output", "review", "template"}, reg.IDs())

	// Each config is checked against the action's schema as a version's
	// spec is when saved.
	cases := []struct {
		action string
		config string
		ok     bool
	}{
		{"input", `{}`, true},
		{"input", `{"variables": [{"name": "topic", "type": "text", "required": true, "description": "d"}]}`, true},
		{"input", `{"variables": [{"name": "a b"}]}`, false},
		{"input", `{"variables": [{"name": "x", "type": "date"}]}`, false},
		{"llm", `{"messages": [{"role": "user", "content": "hi"}], "model": "echo", "temperature": 0.2, "maxTokens": 10, "topP": 1}`, true},
		{"llm", `{"messages": []}`, false},
		{"llm", `{}`, false},
		{"llm", `{"messages": [{"role": "robot", "content": "hi"}]}`, false},
		{"llm", `{"messages": [{"role": "user", "content": "hi"}], "maxTokens": 0}`, false},
		{"template", `{"template": "Hello {{name}}"}`, true},
		{"template", `{}`, false},
		{"template", `{"template": 3}`, false},
		{"condition", `{"branches": [{"port": "yes", "when": "input.x > 1"}], "default": "no"}`, true},
		{"condition", `{"branches": []}`, false},
		{"condition", `{"branches": [{"port": "", "when": "true"}]}`, false},
		{"review", `{"instructions": "Check the draft."}`, true},
		{"review", `{"instructions": 1}`, false},
		{"action", `{"inputSchema": {"type": "object"}}`, true},
		{"action", `{"inputSchema": "object"}`, false},
		{"output", `{}`, true},
		{"output", `{"value": "{{steps.a.output}}"}`, true},
		{"output", `{"value": false}`, false},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%s/%d", c.action, i), func(t *testing.T) {
			a, ok := reg.Lookup(c.action)
			require.True(t, ok)
			s, err := canvas.CompileSchema("/config", a.ConfigSchema())
			require.NoError(t, err)
			var doc any
			require.NoError(t, json.Unmarshal([]byte(c.config), &doc))
			err = s.Validate(doc)
			if c.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

func TestBuiltins_DefaultPorts(t *testing.T) {
	reg := workflow.Builtins(workflow.BuiltinOptions{})
	in := workflow.Port{ID: "in", Dir: workflow.DirIn, Type: workflow.FlowType}
	out := func(id string) workflow.Port {
		return workflow.Port{ID: id, Dir: workflow.DirOut, Type: workflow.FlowType}
	}
	for _, c := range []struct {
		action, config string
		want           []workflow.Port
	}{
		{"input", `{}`, []workflow.Port{out("out")}},
		{"llm", `{"messages": [{"role": "user", "content": "x"}]}`, []workflow.Port{in, out("out")}},
		{"template", `{"template": ""}`, []workflow.Port{in, out("out")}},
		{"condition", `{"branches": [{"port": "long", "when": "true"}, {"port": "short", "when": "false"}, {"port": "long", "when": "1 > 0"}], "default": "other"}`,
			[]workflow.Port{in, out("long"), out("short"), out("other")}},
		{"review", `{}`, []workflow.Port{in, out("approved"), out("rejected")}},
		{"action", `{}`, []workflow.Port{in, out("out")}},
		{"output", `{}`, []workflow.Port{in}},
	} {
		a, _ := reg.Lookup(c.action)
		assert.Equal(t, c.want, a.DefaultPorts(json.RawMessage(c.config)), c.action)
	}
}

func TestInput(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		n := mustBuiltinNode(t, nil, "start", "input", `{"variables": [{"name": "topic", "required": true}]}`)
		out := mustExecute(t, n, &workflow.StepInput{Variables: map[string]any{"topic": "owls", "n": 3}})
		assert.JSONEq(t, `{"topic": "owls", "n": 3}`, outputJSON(t, out))
		assert.Nil(t, out.Ports)
		assert.Nil(t, out.Input)
	})
	t.Run("NoVariables", func(t *testing.T) {
		n := mustBuiltinNode(t, nil, "start", "input", ``)
		assert.JSONEq(t, `{}`, outputJSON(t, mustExecute(t, n, nil)))
	})
	t.Run("Duplicates", func(t *testing.T) {
		details := builtinDetails(t, "input", `{"variables": [{"name": "a"}, {"name": "b"}, {"name": "a"}, {"name": " "}]}`)
		assert.Equal(t, []canvas.Detail{
			{Path: "/config/variables/2/name", Message: "duplicates the name of another variable"},
			{Path: "/config/variables/3/name", Message: "must not be empty"},
		}, details)
	})
	t.Run("Variables", func(t *testing.T) {
		vars := workflow.InputVariables(workflow.Node{ActionID: "input", Config: json.RawMessage(
			`{"variables": [{"name": "topic", "required": true, "description": "What to write about"}, {"name": "doc", "type": "file"}]}`)})
		assert.Equal(t, []canvas.Variable{
			{Name: "topic", Type: canvas.VariableText, Required: true, Description: "What to write about"},
			{Name: "doc", Type: canvas.VariableFile},
		}, vars)
		assert.Empty(t, workflow.InputVariables(workflow.Node{ActionID: "input"}))
	})
}

func TestTemplate(t *testing.T) {
	n := mustBuiltinNode(t, nil, "t", "template",
		`{"template": "{{topic}} by {{ steps.draft.output.author }} ({{steps.draft.status}}), {{steps.count.output}} words; {{missing}} {{steps.draft.output}}"}`)
	in := &workflow.StepInput{
		Variables: map[string]any{"topic": "Owls"},
		Steps: map[string]*workflow.Step{
			"draft": endedStep("draft", workflow.StepCompleted, `{"author": "Ada", "n": 1.50}`),
			"count": endedStep("count", workflow.StepCompleted, `120000000000000000001`),
		},
	}
	out := mustExecute(t, n, in)
	assert.Equal(t, `Owls by Ada (completed), 120000000000000000001 words; {{missing}} {"author":"Ada","n":1.50}`, out.Output)

	t.Run("Required", func(t *testing.T) {
		assert.Equal(t, []string{"/config/template"}, detailPaths(builtinDetails(t, "template", `{}`)))
	})
	t.Run("NoPlaceholders", func(t *testing.T) {
		n := mustBuiltinNode(t, nil, "t", "template", `{"template": "plain {{ not closed"}`)
		assert.Equal(t, "plain {{ not closed", mustExecute(t, n, nil).Output)
	})
}

func TestOutput(t *testing.T) {
	steps := map[string]*workflow.Step{
		"a": endedStep("a", workflow.StepSkipped, ""),
		"b": endedStep("b", workflow.StepCompleted, `{"text": "B"}`),
		"c": endedStep("c", workflow.StepCompleted, `"C"`),
	}
	graph := func(t *testing.T, config string) *workflow.CNode {
		out := mustBuiltinNode(t, nil, "result", "output", config)
		for _, id := range []string{"a", "b", "c"} {
			linkBuiltin(mustBuiltinNode(t, nil, id, "template", `{"template": ""}`), "out", out)
		}
		return out
	}
	t.Run("Predecessor", func(t *testing.T) {
		out := mustExecute(t, graph(t, `{}`), &workflow.StepInput{Steps: steps})
		assert.JSONEq(t, `{"text": "B"}`, outputJSON(t, out), "the first completed predecessor in edge order")
	})
	t.Run("Value", func(t *testing.T) {
		out := mustExecute(t, graph(t, `{"value": "{{steps.c.output}} and {{steps.b.output.text}}"}`), &workflow.StepInput{Steps: steps})
		assert.Equal(t, "C and B", out.Output)
	})
	t.Run("None", func(t *testing.T) {
		out := mustExecute(t, graph(t, `{}`), &workflow.StepInput{Steps: map[string]*workflow.Step{"a": steps["a"]}})
		assert.Equal(t, "null", outputJSON(t, out))
	})
}
