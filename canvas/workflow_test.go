package canvas_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// fakeCompiler compiles specs {"nodes": [{"id"}...]} into the graph
// {"nodes": [{"id", "ports": []}...], "edges": []}; a node without an id is
// VALIDATION at its pointer, and a spec {"broken": true} fails as a broken
// compiler would.
type fakeCompiler struct {
	calls atomic.Int32
}

func (c *fakeCompiler) CompileSpec(spec json.RawMessage) (json.RawMessage, error) {
	c.calls.Add(1)
	var s struct {
		Broken bool
		Nodes  []struct{ ID string }
	}
	if err := json.Unmarshal(spec, &s); err != nil {
		return nil, canvas.Invalid("The workflow specification is invalid.",
			canvas.Detail{Path: "/json/workflowSpec", Message: "must be an object"})
	}
	if s.Broken {
		return nil, errors.New("compiler is broken")
	}
	type node struct {
		ID    string   `json:"id"`
		Ports []string `json:"ports"`
	}
	graph := struct {
		Nodes []node   `json:"nodes"`
		Edges []string `json:"edges"`
	}{Nodes: []node{}, Edges: []string{}}
	var details []canvas.Detail
	for i, n := range s.Nodes {
		if n.ID == "" {
			details = append(details, canvas.Detail{Path: "/json/workflowSpec/nodes/" + strconv.Itoa(i) + "/id", Message: "is required"})
		}
		graph.Nodes = append(graph.Nodes, node{ID: n.ID, Ports: []string{}})
	}
	if len(details) > 0 {
		return nil, canvas.Invalid("The workflow specification is invalid.", details...)
	}
	return json.Marshal(graph)
}

// SpecMessages: the fake's specs hold no messages.
func (c *fakeCompiler) SpecMessages(json.RawMessage) []canvas.MessageContent { return nil }

// newWorkflowFixture returns a fixture whose Service compiles workflow
// specifications with a fakeCompiler.
func newWorkflowFixture(t *testing.T) (*fixture, *fakeCompiler) {
	t.Helper()
	f := newFixture(t)
	c := &fakeCompiler{}
	f.Service = canvas.NewService(canvas.Options{Store: f.Store, Workflows: c})
	return f, c
}

func TestService_CreateVersion_Workflow(t *testing.T) {
	const spec = `{"nodes": [{"id": "start"}, {"id": "end"}]}`
	const graph = `{"nodes": [{"id": "start", "ports": []}, {"id": "end", "ports": []}], "edges": []}`

	t.Run("OK", func(t *testing.T) {
		f, c := newWorkflowFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		cv := f.MustCanvas(ctx, "c", &f.Project.ID)
		v := f.MustVersion(ctx, canvas.CreateVersionParams{PromptID: cv.ID, IsWorkflow: true, WorkflowSpec: json.RawMessage(spec)})
		assert.True(t, v.IsWorkflow)
		assert.JSONEq(t, spec, string(v.WorkflowSpec))
		assert.JSONEq(t, graph, string(v.Graph))
		assert.Equal(t, int32(1), c.calls.Load())

		got, err := f.Service.GetVersion(ctx, v.ID)
		require.NoError(t, err)
		assert.True(t, got.IsWorkflow)
		assert.JSONEq(t, graph, string(got.Graph))
	})
	t.Run("SpecMakesAWorkflow", func(t *testing.T) {
		f, _ := newWorkflowFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		cv := f.MustCanvas(ctx, "c", &f.Project.ID)
		v := f.MustVersion(ctx, canvas.CreateVersionParams{PromptID: cv.ID, WorkflowSpec: json.RawMessage(spec)})
		assert.True(t, v.IsWorkflow, "isWorkflow is set from the spec")
		assert.JSONEq(t, graph, string(v.Graph))
	})
	t.Run("NoSpec", func(t *testing.T) {
		f, c := newWorkflowFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		cv := f.MustCanvas(ctx, "c", &f.Project.ID)
		v := f.MustVersion(ctx, canvas.CreateVersionParams{PromptID: cv.ID, WorkflowSpec: json.RawMessage("null")})
		assert.False(t, v.IsWorkflow)
		assert.Nil(t, v.WorkflowSpec)
		assert.Nil(t, v.Graph)
		assert.Zero(t, c.calls.Load(), "no spec, nothing to compile")
	})
	t.Run("InvalidSpec", func(t *testing.T) {
		f, _ := newWorkflowFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		cv := f.MustCanvas(ctx, "c", &f.Project.ID)
		_, err := f.Service.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: cv.ID, IsWorkflow: true,
			WorkflowSpec: json.RawMessage(`{"nodes": [{"id": "a"}, {}, {}]}`)})
		assertInvalid(t, err, "/json/workflowSpec/nodes/1/id", "/json/workflowSpec/nodes/2/id")
		var ce *canvas.Error
		require.True(t, errors.As(err, &ce))
		assert.Equal(t, "The workflow specification is invalid.", ce.Message, "the compiler's error as it is")
		list, err := f.Service.ListVersions(ctx, canvas.ListVersionsParams{PromptID: cv.ID})
		require.NoError(t, err)
		assert.Empty(t, list, "nothing is stored")
	})
	t.Run("InvalidSpecAndFields", func(t *testing.T) {
		f, _ := newWorkflowFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		cv := f.MustCanvas(ctx, "c", &f.Project.ID)
		_, err := f.Service.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: cv.ID, Title: strings.Repeat("界", 257),
			WorkflowSpec: json.RawMessage(`{"nodes": [{}]}`)})
		assertInvalid(t, err, "/json/title", "/json/workflowSpec/nodes/0/id")
	})
	t.Run("CheckedBeforeTheStore", func(t *testing.T) {
		f, _ := newWorkflowFixture(t)
		// The canvas does not exist: the invalid spec is reported first.
		_, err := f.Service.CreateVersion(f.Key(canvas.RoleEditor), canvas.CreateVersionParams{PromptID: uuid.NewString(),
			WorkflowSpec: json.RawMessage(`{"nodes": [{}]}`)})
		assertInvalid(t, err, "/json/workflowSpec/nodes/0/id")
	})
	t.Run("WorkflowWithoutSpec", func(t *testing.T) {
		f, c := newWorkflowFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		cv := f.MustCanvas(ctx, "c", &f.Project.ID)
		_, err := f.Service.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: cv.ID, IsWorkflow: true})
		assertInvalid(t, err, "/json/workflowSpec")
		assert.Zero(t, c.calls.Load())
	})
	t.Run("CompilerFails", func(t *testing.T) {
		f, _ := newWorkflowFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		cv := f.MustCanvas(ctx, "c", &f.Project.ID)
		_, err := f.Service.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: cv.ID, Title: strings.Repeat("界", 257),
			WorkflowSpec: json.RawMessage(`{"broken": true}`)})
		assertCode(t, canvas.EINTERNAL, err)
		list, err := f.Service.ListVersions(ctx, canvas.ListVersionsParams{PromptID: cv.ID})
		require.NoError(t, err)
		assert.Empty(t, list)
	})
	t.Run("Duplicate", func(t *testing.T) {
		f, c := newWorkflowFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		cv := f.MustCanvas(ctx, "c", &f.Project.ID)
		origin := f.MustVersion(ctx, canvas.CreateVersionParams{PromptID: cv.ID, WorkflowSpec: json.RawMessage(spec)})

		dup := f.MustVersion(ctx, canvas.CreateVersionParams{PromptID: cv.ID, OriginVersionID: origin.ID})
		assert.True(t, dup.IsWorkflow)
		assert.JSONEq(t, spec, string(dup.WorkflowSpec))
		assert.JSONEq(t, graph, string(dup.Graph))
		assert.Equal(t, int32(1), c.calls.Load(), "the origin's graph is copied, not compiled again")

		other := f.MustVersion(ctx, canvas.CreateVersionParams{PromptID: cv.ID, OriginVersionID: origin.ID,
			WorkflowSpec: json.RawMessage(`{"nodes": [{"id": "only"}]}`)})
		assert.JSONEq(t, `{"nodes": [{"id": "only", "ports": []}], "edges": []}`, string(other.Graph))
		assert.Equal(t, int32(2), c.calls.Load())
	})
	t.Run("WithoutCompiler", func(t *testing.T) {
		f := newFixture(t)
		ctx := f.Key(canvas.RoleEditor)
		cv := f.MustCanvas(ctx, "c", &f.Project.ID)
		_, err := f.Service.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: cv.ID,
			WorkflowSpec: json.RawMessage(`{"nodes": [{}]}`)})
		assertInvalid(t, err, "/json/workflowSpec")
	})
}
