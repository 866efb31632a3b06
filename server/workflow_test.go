package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/workflow"
)

const workflowRunsPath = "/workflow/runs"

// node and edge build the parts of a workflow specification.
func node(id, action string, config any) map[string]any {
	n := map[string]any{"id": id, "actionId": action}
	if config != nil {
		n["config"] = config
	}
	return n
}

func edge(from, fromPort, to string) map[string]any {
	return map[string]any{"from": map[string]any{"node": from, "port": fromPort},
		"to": map[string]any{"node": to, "port": "in"}}
}

func spec(nodes []any, edges ...any) map[string]any {
	if edges == nil {
		edges = []any{}
	}
	return map[string]any{"specVersion": workflow.SpecVersion, "nodes": nodes, "edges": edges}
}

// inputNode declares the required text variable name.
var inputNode = node("start", "input", map[string]any{"variables": []any{
	map[string]any{"name": "name", "type": "text", "required": true}}})

// greetSpec is input → template "Hello {{name}}" → output.
var greetSpec = spec([]any{inputNode,
	node("greet", "template", map[string]any{"template": "Hello {{name}}"}),
	node("done", "output", nil)},
	edge("start", "out", "greet"), edge("greet", "out", "done"))

// reviewSpec drafts with the echo model, waits for a review, and ends in
// published on approval or in revise on rejection.
var reviewSpec = spec([]any{inputNode,
	node("draft", "llm", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "Draft for {{name}}"}}}),
	node("check", "review", map[string]any{"instructions": "Is the draft fine?"}),
	node("published", "output", map[string]any{"value": "Published: {{steps.draft.output}}"}),
	node("revise", "output", map[string]any{"value": "Revise it"})},
	edge("start", "out", "draft"), edge("draft", "out", "check"),
	edge("check", "approved", "published"), edge("check", "rejected", "revise"))

// strictReviewSpec fails the run when the review rejects: its rejected port
// leads nowhere.
var strictReviewSpec = spec([]any{inputNode,
	node("check", "review", nil),
	node("done", "output", map[string]any{"value": "Approved for {{name}}"})},
	edge("start", "out", "check"), edge("check", "approved", "done"))

// actionSpec waits for an action whose input is the run's output.
var actionSpec = spec([]any{inputNode,
	node("ask", "action", map[string]any{"instructions": "Send the answer."}),
	node("done", "output", nil)},
	edge("start", "out", "ask"), edge("ask", "out", "done"))

// conditionSpec chooses long or short by the length of name.
var conditionSpec = spec([]any{inputNode,
	node("size", "condition", map[string]any{"branches": []any{
		map[string]any{"port": "long", "when": "len(name) > 3"}}, "default": "short"}),
	node("long", "output", map[string]any{"value": "Long {{name}}"}),
	node("short", "output", map[string]any{"value": "Short {{name}}"})},
	edge("start", "out", "size"), edge("size", "long", "long"), edge("size", "short", "short"))

// slowSpec calls the model "slow", which answers only when cancelled.
var slowSpec = spec([]any{inputNode,
	node("call", "llm", map[string]any{"model": "slow", "messages": []any{map[string]any{"role": "user", "content": "{{name}}"}}}),
	node("after", "template", map[string]any{"template": "after"}),
	node("done", "output", nil)},
	edge("start", "out", "call"), edge("call", "out", "after"), edge("after", "out", "done"))

// workflowCanvas is a canvas created through the API, for workflow
// versions.
type workflowCanvas struct {
	ID string
}

func mustWorkflowCanvas(t *testing.T, e *workflowEnv) *workflowCanvas {
	t.Helper()
	project := mustProjectID(t, e.testEnv, "workflows")
	c := mustCreate(t, e.testEnv, "/prompt", e.Admin, map[string]any{"title": "Flows", "projectId": project})
	return &workflowCanvas{ID: c["id"].(string)}
}

// mustVersion saves a workflow version and returns its id.
func (c *workflowCanvas) mustVersion(t *testing.T, e *workflowEnv, spec map[string]any) string {
	t.Helper()
	v := mustCreate(t, e.testEnv, "/prompt-version", e.Editor, map[string]any{"promptId": c.ID, "workflowSpec": spec})
	require.Equal(t, true, v["isWorkflow"])
	return v["id"].(string)
}

// start starts a preview run and returns it.
func (e *workflowEnv) start(t *testing.T, versionID string, input map[string]any) map[string]any {
	t.Helper()
	r := e.Do(http.MethodPost, workflowRunsPath, e.Editor, map[string]any{"versionId": versionID, "input": input})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.Map(t)
}

// waitRun reads the run until done accepts it, and returns it; it fails
// after a bounded wait. It polls on the test's goroutine, so that a failed
// read stops the test.
func (e *workflowEnv) waitRun(t *testing.T, id string, done func(run map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := e.Do(http.MethodGet, workflowRunsPath+"/"+id, e.Viewer, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		run := r.Map(t)
		if done(run) {
			return run
		}
		if time.Now().After(deadline) {
			require.FailNow(t, "the run did not get there in time", "last read: %s", r.Body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitStatus reads the run until its status is one of want, and returns
// it.
func (e *workflowEnv) waitStatus(t *testing.T, id string, want ...string) map[string]any {
	t.Helper()
	return e.waitRun(t, id, func(run map[string]any) bool {
		return slices.Contains(want, run["status"].(string))
	})
}

// steps returns a run's steps by id.
func steps(t *testing.T, run map[string]any) map[string]map[string]any {
	t.Helper()
	list, ok := run["steps"].([]any)
	require.True(t, ok, "steps: %v", run["steps"])
	out := map[string]map[string]any{}
	for _, s := range list {
		m := s.(map[string]any)
		out[m["id"].(string)] = m
	}
	return out
}

// stepStatuses returns the status of each step by id.
func stepStatuses(t *testing.T, run map[string]any) map[string]any {
	t.Helper()
	out := map[string]any{}
	for id, s := range steps(t, run) {
		out[id] = s["status"]
	}
	return out
}

// outputOf returns the output of the run's output step.
func outputOf(t *testing.T, run map[string]any) any {
	t.Helper()
	out, ok := run["output"].(map[string]any)
	require.True(t, ok, "output: %v", run["output"])
	return out["output"]
}

func TestWorkflow_Version(t *testing.T) {
	e := newWorkflowEnv(t)
	c := mustWorkflowCanvas(t, e)

	t.Run("OK", func(t *testing.T) {
		v := mustCreate(t, e.testEnv, "/prompt-version", e.Editor, map[string]any{"promptId": c.ID, "workflowSpec": greetSpec})
		assert.Equal(t, true, v["isWorkflow"], "a spec makes a workflow version")
		graph := v["graph"].(map[string]any)
		nodes := graph["nodes"].([]any)
		require.Len(t, nodes, 3)
		first := nodes[0].(map[string]any)
		assert.Equal(t, "start", first["id"])
		assert.Equal(t, []any{map[string]any{"id": "out", "dir": "out", "type": "flow"}}, first["ports"], "default ports are filled in")
		assert.Len(t, graph["edges"], 2)
		got := e.Do(http.MethodGet, "/prompt-version/"+v["id"].(string), e.Viewer, nil).Map(t)
		assert.Equal(t, graph, got["graph"])
	})
	invalid := func(name string, s map[string]any, paths ...string) {
		t.Run(name, func(t *testing.T) {
			r := e.Do(http.MethodPost, "/prompt-version", e.Editor, map[string]any{"promptId": c.ID, "workflowSpec": s})
			require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
			b := readError(t, r)
			assert.Equal(t, canvas.EINVALID, b.Code)
			var got []string
			for _, d := range b.Details {
				got = append(got, d.Path)
			}
			for _, p := range paths {
				assert.Contains(t, got, p)
			}
		})
	}
	invalid("UnknownAction", spec([]any{inputNode, node("x", "teleport", nil)}, edge("start", "out", "x")),
		"/json/workflowSpec/nodes/1/actionId")
	invalid("DuplicateID", spec([]any{inputNode, node("start", "output", nil)}, edge("start", "out", "start")),
		"/json/workflowSpec/nodes/1/id")
	invalid("BadExpression", spec([]any{inputNode,
		node("size", "condition", map[string]any{"branches": []any{map[string]any{"port": "out", "when": "len(name) >"}}}),
		node("done", "output", nil)},
		edge("start", "out", "size"), edge("size", "out", "done")),
		"/json/workflowSpec/nodes/1/config/branches/0/when")
	invalid("WrongVersion", merged(greetSpec, map[string]any{"specVersion": "0"}), "/json/workflowSpec/specVersion")
	invalid("Cycle", spec([]any{inputNode,
		node("a", "template", map[string]any{"template": "a"}),
		node("b", "template", map[string]any{"template": "b"})},
		edge("start", "out", "a"), edge("a", "out", "b"), edge("b", "out", "a")),
		"/json/workflowSpec/edges")
}

func TestWorkflow_Start(t *testing.T) {
	e := newWorkflowEnv(t)
	c := mustWorkflowCanvas(t, e)
	greet := c.mustVersion(t, e, greetSpec)

	t.Run("OK", func(t *testing.T) {
		run := e.start(t, greet, map[string]any{"name": "Ada"})
		assert.Equal(t, workflow.EnvCraftPreview, run["environment"])
		assert.Equal(t, greet, run["promptVersionId"])
		assert.Equal(t, c.ID, run["promptId"])
		assert.NotContains(t, run, "graph", "only GET shows the graph")
		assert.Contains(t, []any{workflow.StatusPending, workflow.StatusRunning, workflow.StatusCompleted}, run["status"])
		assert.Nil(t, run["startNodeId"])
		assert.Equal(t, "Ada", run["input"].(map[string]any)["name"].(map[string]any)["value"])

		done := e.waitStatus(t, run["id"].(string), workflow.StatusCompleted)
		assert.Equal(t, run["id"], done["id"])
		assert.NotNil(t, done["completedAt"])
		assert.Nil(t, done["error"])
		assert.Equal(t, "Hello Ada", outputOf(t, done))
		assert.Equal(t, "done", done["output"].(map[string]any)["id"])
		assert.Equal(t, map[string]any{"start": "completed", "greet": "completed", "done": "completed"}, stepStatuses(t, done))
		ids := []any{}
		for _, s := range done["steps"].([]any) {
			ids = append(ids, s.(map[string]any)["id"])
		}
		assert.Equal(t, []any{"start", "greet", "done"}, ids, "steps in topological order")

		graph := done["graph"].(map[string]any)
		for _, n := range graph["nodes"].([]any) {
			assert.Equal(t, "completed", n.(map[string]any)["status"], "graph nodes carry their step's status")
		}
	})
	t.Run("Condition", func(t *testing.T) {
		cond := c.mustVersion(t, e, conditionSpec)
		run := e.waitStatus(t, e.start(t, cond, map[string]any{"name": "Ada"})["id"].(string), workflow.StatusCompleted)
		assert.Equal(t, "Short Ada", outputOf(t, run))
		assert.Equal(t, map[string]any{"start": "completed", "size": "completed", "long": "skipped", "short": "completed"},
			stepStatuses(t, run), "the unselected branch is skipped")
		nodes := map[string]any{}
		for _, n := range run["graph"].(map[string]any)["nodes"].([]any) {
			nodes[n.(map[string]any)["id"].(string)] = n.(map[string]any)["status"]
		}
		assert.Equal(t, "skipped", nodes["long"])

		run = e.waitStatus(t, e.start(t, cond, map[string]any{"name": "Grace"})["id"].(string), workflow.StatusCompleted)
		assert.Equal(t, "Long Grace", outputOf(t, run))
	})
	t.Run("Partial", func(t *testing.T) {
		r := e.Do(http.MethodPost, workflowRunsPath, e.Editor, map[string]any{"versionId": greet,
			"input": map[string]any{"name": "Ada"}, "endNodeId": "greet"})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		run := r.Map(t)
		assert.Equal(t, "greet", run["endNodeId"])
		run = e.waitStatus(t, run["id"].(string), workflow.StatusCompleted, workflow.StatusFailed)
		assert.Equal(t, "skipped", stepStatuses(t, run)["done"], "a step outside the range is skipped")
		assert.Equal(t, "completed", stepStatuses(t, run)["greet"])
	})
	t.Run("Forbidden", func(t *testing.T) {
		r := e.Do(http.MethodPost, workflowRunsPath, e.Viewer, map[string]any{"versionId": greet, "input": map[string]any{"name": "Ada"}})
		require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
		assert.Equal(t, canvas.EFORBIDDEN, readError(t, r).Code)
	})
	t.Run("NotFound", func(t *testing.T) {
		r := e.Do(http.MethodPost, workflowRunsPath, e.Editor, map[string]any{"versionId": "6f1c2a3e-7d5b-4c8a-9e0f-1a2b3c4d5e6f"})
		require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
	})
	t.Run("Validation", func(t *testing.T) {
		r := e.Do(http.MethodPost, workflowRunsPath, e.Editor, map[string]any{"input": []any{}})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		var paths []string
		for _, d := range readError(t, r).Details {
			paths = append(paths, d.Path)
		}
		assert.ElementsMatch(t, []string{"/json/versionId", "/json/input"}, paths)
	})
	t.Run("MissingVariable", func(t *testing.T) {
		r := e.Do(http.MethodPost, workflowRunsPath, e.Editor, map[string]any{"versionId": greet, "input": map[string]any{}})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		assert.Equal(t, canvas.EINVALID, readError(t, r).Code)
	})
	t.Run("NotAWorkflow", func(t *testing.T) {
		plain := mustCreate(t, e.testEnv, "/prompt-version", e.Editor, map[string]any{"promptId": c.ID})["id"].(string)
		r := e.Do(http.MethodPost, workflowRunsPath, e.Editor, map[string]any{"versionId": plain})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	})
}

func TestWorkflow_Get(t *testing.T) {
	e := newWorkflowEnv(t)
	c := mustWorkflowCanvas(t, e)
	greet := c.mustVersion(t, e, greetSpec)
	id := e.start(t, greet, map[string]any{"name": "Ada"})["id"].(string)
	e.waitStatus(t, id, workflow.StatusCompleted)

	t.Run("NotFound", func(t *testing.T) {
		r := e.Do(http.MethodGet, workflowRunsPath+"/6f1c2a3e-7d5b-4c8a-9e0f-1a2b3c4d5e6f", e.Viewer, nil)
		require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
		assert.Equal(t, canvas.ENOTFOUND, readError(t, r).Code)
	})
	t.Run("OtherWorkspace", func(t *testing.T) {
		other := &canvas.Workspace{Name: "other"}
		require.NoError(t, e.Store.CreateWorkspace(context.Background(), other))
		r := e.Do(http.MethodGet, workflowRunsPath+"/"+id, e.KeyIn(other.ID, canvas.RoleAdmin), nil)
		require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
	})
	t.Run("MalformedID", func(t *testing.T) {
		r := e.Do(http.MethodGet, workflowRunsPath+"/not-a-uuid", e.Viewer, nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		assert.Equal(t, []canvas.Detail{{Path: "/path/id", Message: "must be a UUID"}}, readError(t, r).Details)
	})
	t.Run("Unauthorized", func(t *testing.T) {
		r := e.Do(http.MethodGet, workflowRunsPath+"/"+id, "", nil)
		require.Equal(t, http.StatusUnauthorized, r.Status, "%s", r.Body)
	})
}

func TestWorkflow_List(t *testing.T) {
	e := newWorkflowEnv(t)
	c := mustWorkflowCanvas(t, e)
	greet := c.mustVersion(t, e, greetSpec)
	var newest []any // run ids, newest first
	for _, name := range []string{"Ada", "Grace", "Alan"} {
		id := e.start(t, greet, map[string]any{"name": name})["id"].(string)
		e.waitStatus(t, id, workflow.StatusCompleted)
		newest = append([]any{id}, newest...)
	}
	waiting := e.start(t, c.mustVersion(t, e, actionSpec), map[string]any{"name": "Ada"})["id"].(string)
	e.waitStatus(t, waiting, workflow.StatusRequiresAction)
	newest = append([]any{waiting}, newest...)
	other := mustWorkflowCanvas(t, e)
	e.start(t, other.mustVersion(t, e, greetSpec), map[string]any{"name": "Ada"})
	list := func(t *testing.T, query, token string, want int) map[string]any {
		t.Helper()
		r := e.Do(http.MethodGet, workflowRunsPath+query, token, nil)
		require.Equal(t, want, r.Status, "%s", r.Body)
		return r.Map(t)
	}
	runIDs := func(page map[string]any) []any {
		var out []any
		for _, r := range page["data"].([]any) {
			out = append(out, r.(map[string]any)["id"])
		}
		return out
	}

	t.Run("OK", func(t *testing.T) {
		page := list(t, "?promptId="+c.ID, e.Viewer, http.StatusOK)
		assert.Equal(t, newest, runIDs(page), "the canvas's runs, newest first")
		first := page["data"].([]any)[0].(map[string]any)
		assert.Equal(t, workflow.StatusRequiresAction, first["status"])
		assert.Equal(t, workflow.EnvCraftPreview, first["environment"])
		assert.Equal(t, c.ID, first["promptId"])
		assert.NotContains(t, first, "steps", "a summary has no steps")
		assert.NotContains(t, first, "graph")
		last := page["data"].([]any)[3].(map[string]any)
		assert.Equal(t, workflow.StatusCompleted, last["status"])
		assert.NotNil(t, last["completedAt"])
		meta := page["meta"].(map[string]any)
		assert.Equal(t, float64(4), meta["totalCount"])
		assert.Equal(t, float64(workflow.DefaultListLimit), meta["limit"])
	})
	t.Run("Paged", func(t *testing.T) {
		page := list(t, "?promptId="+c.ID+"&limit=2&offset=2", e.Viewer, http.StatusOK)
		assert.Equal(t, newest[2:], runIDs(page))
		meta := page["meta"].(map[string]any)
		assert.Equal(t, float64(4), meta["totalCount"])
		assert.Equal(t, float64(2), meta["currentPage"])
		links := meta["links"].(map[string]any)
		assert.Nil(t, links["next"])
		assert.Equal(t, "?promptId="+c.ID+"&limit=2&offset=0", links["previous"])
	})
	t.Run("ByStatus", func(t *testing.T) {
		page := list(t, "?promptId="+c.ID+"&status=requires-action", e.Viewer, http.StatusOK)
		assert.Equal(t, []any{waiting}, runIDs(page))
		assert.Equal(t, "?promptId="+c.ID+"&status=requires-action&limit=20&offset=0",
			page["meta"].(map[string]any)["links"].(map[string]any)["first"], "links keep the filters")
		page = list(t, "?promptId="+c.ID+"&status=waiting-for-review", e.Viewer, http.StatusOK)
		assert.Empty(t, page["data"])
	})
	t.Run("Validation", func(t *testing.T) {
		r := e.Do(http.MethodGet, workflowRunsPath+"?promptId=c1&versionId=v1&status=paused&since=yesterday&limit=500&offset=-1", e.Viewer, nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		var paths []string
		for _, d := range readError(t, r).Details {
			paths = append(paths, d.Path)
		}
		assert.ElementsMatch(t, []string{"/query/since", "/query/promptId", "/query/versionId", "/query/status",
			"/query/limit", "/query/offset"}, paths, "a malformed time is reported with every other problem")
		r = e.Do(http.MethodGet, workflowRunsPath+"?promptId=c1&versionId=v1&status=paused&limit=500&offset=-1", e.Viewer, nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		paths = nil
		for _, d := range readError(t, r).Details {
			paths = append(paths, d.Path)
		}
		assert.ElementsMatch(t, []string{"/query/promptId", "/query/versionId", "/query/status", "/query/limit", "/query/offset"}, paths)
		r = e.Do(http.MethodGet, workflowRunsPath+"?promptId=nope", e.Viewer, nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		assert.Equal(t, []canvas.Detail{{Path: "/query/promptId", Message: "must be a UUID"}}, readError(t, r).Details)
	})
	t.Run("NotFound", func(t *testing.T) {
		r := e.Do(http.MethodGet, workflowRunsPath+"?promptId=6f1c2a3e-7d5b-4c8a-9e0f-1a2b3c4d5e6f", e.Viewer, nil)
		require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
		otherWS := &canvas.Workspace{Name: "other"}
		require.NoError(t, e.Store.CreateWorkspace(context.Background(), otherWS))
		r = e.Do(http.MethodGet, workflowRunsPath+"?promptId="+c.ID, e.KeyIn(otherWS.ID, canvas.RoleAdmin), nil)
		require.Equal(t, http.StatusNotFound, r.Status, "a canvas of another workspace: %s", r.Body)
	})
	t.Run("Forbidden", func(t *testing.T) {
		restricted := e.Key(canvas.RoleViewer, mustProjectID(t, e.testEnv, "elsewhere"))
		r := e.Do(http.MethodGet, workflowRunsPath+"?promptId="+c.ID, restricted, nil)
		require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
		assert.Equal(t, canvas.EFORBIDDEN, readError(t, r).Code)
	})
	t.Run("Unauthorized", func(t *testing.T) {
		r := e.Do(http.MethodGet, workflowRunsPath+"?promptId="+c.ID, "", nil)
		require.Equal(t, http.StatusUnauthorized, r.Status, "%s", r.Body)
	})
}

func TestWorkflow_Review(t *testing.T) {
	e := newWorkflowEnv(t)
	c := mustWorkflowCanvas(t, e)
	review := c.mustVersion(t, e, reviewSpec)
	strict := c.mustVersion(t, e, strictReviewSpec)

	waiting := func(t *testing.T, versionID string) string {
		t.Helper()
		id := e.start(t, versionID, map[string]any{"name": "Ada"})["id"].(string)
		run := e.waitStatus(t, id, workflow.StatusWaitingForReview)
		assert.Nil(t, run["output"], "no leaf has completed")
		assert.Equal(t, workflow.StepWaitingForReview, stepStatuses(t, run)["check"])
		return id
	}
	reviewPath := func(id string) string { return workflowRunsPath + "/" + id + "/review" }

	t.Run("Approve", func(t *testing.T) {
		id := waiting(t, review)
		r := e.Do(http.MethodPost, reviewPath(id), e.Editor, map[string]any{"approved": true, "comment": "Fine"})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.NotContains(t, r.Map(t), "graph")
		run := e.waitStatus(t, id, workflow.StatusCompleted)
		assert.Equal(t, "Published: Draft for Ada", outputOf(t, run))
		assert.Equal(t, "skipped", stepStatuses(t, run)["revise"])
		draft := steps(t, run)["draft"]
		usage := draft["metadata"].(map[string]any)["usage"].(map[string]any)
		assert.Equal(t, float64(3), usage["inputTokens"], "the llm step records the model's usage")
		assert.Equal(t, float64(3), usage["outputTokens"])

		r = e.Do(http.MethodPost, reviewPath(id), e.Editor, map[string]any{"approved": true})
		require.Equal(t, http.StatusConflict, r.Status, "a run that no longer waits for review: %s", r.Body)
		assert.Equal(t, canvas.ECONFLICT, readError(t, r).Code)
	})
	t.Run("RejectThroughPort", func(t *testing.T) {
		id := waiting(t, review)
		r := e.Do(http.MethodPost, reviewPath(id), e.Editor, map[string]any{"approved": false, "comment": "No"})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		run := e.waitStatus(t, id, workflow.StatusCompleted)
		assert.Equal(t, "Revise it", outputOf(t, run))
		assert.Equal(t, "skipped", stepStatuses(t, run)["published"])
	})
	t.Run("RejectFails", func(t *testing.T) {
		id := waiting(t, strict)
		r := e.Do(http.MethodPost, reviewPath(id), e.Editor, map[string]any{"approved": false, "comment": "No"})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		run := e.waitStatus(t, id, workflow.StatusFailed)
		assert.Equal(t, canvas.EREJECTED, run["error"].(map[string]any)["code"])
		assert.Nil(t, run["output"])
	})
	t.Run("Validation", func(t *testing.T) {
		id := waiting(t, strict)
		r := e.Do(http.MethodPost, reviewPath(id), e.Editor, map[string]any{"comment": "No verdict"})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		assert.Equal(t, []canvas.Detail{{Path: "/json/approved", Message: "is required"}}, readError(t, r).Details)
		r = e.Do(http.MethodPost, reviewPath(id), e.Viewer, map[string]any{"approved": true})
		require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
		assert.Equal(t, workflow.StatusWaitingForReview, e.waitStatus(t, id, workflow.StatusWaitingForReview)["status"])
	})
	t.Run("NotWaiting", func(t *testing.T) {
		id := e.start(t, c.mustVersion(t, e, actionSpec), map[string]any{"name": "Ada"})["id"].(string)
		e.waitStatus(t, id, workflow.StatusRequiresAction)
		r := e.Do(http.MethodPost, reviewPath(id), e.Editor, map[string]any{"approved": true})
		require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
	})
}

func TestWorkflow_Resume(t *testing.T) {
	e := newWorkflowEnv(t)
	c := mustWorkflowCanvas(t, e)
	action := c.mustVersion(t, e, actionSpec)
	resumePath := func(id string) string { return workflowRunsPath + "/" + id + "/resume" }

	t.Run("OK", func(t *testing.T) {
		id := e.start(t, action, map[string]any{"name": "Ada"})["id"].(string)
		run := e.waitStatus(t, id, workflow.StatusRequiresAction)
		assert.Equal(t, workflow.StepRequiresAction, stepStatuses(t, run)["ask"])
		r := e.Do(http.MethodPost, resumePath(id), e.Editor, map[string]any{"input": map[string]any{"answer": 42}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.NotContains(t, r.Map(t), "graph")
		run = e.waitStatus(t, id, workflow.StatusCompleted)
		assert.Equal(t, map[string]any{"answer": float64(42)}, outputOf(t, run))

		r = e.Do(http.MethodPost, resumePath(id), e.Editor, map[string]any{"input": 1})
		require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
	})
	t.Run("Validation", func(t *testing.T) {
		id := e.start(t, action, map[string]any{"name": "Ada"})["id"].(string)
		e.waitStatus(t, id, workflow.StatusRequiresAction)
		r := e.Do(http.MethodPost, resumePath(id), e.Editor, map[string]any{"stepId": "ask"})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		assert.Equal(t, []canvas.Detail{{Path: "/json/input", Message: "is required"}}, readError(t, r).Details)
		r = e.Do(http.MethodPost, resumePath("not-a-uuid"), e.Editor, map[string]any{"input": 1})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		assert.Equal(t, "/path/id", readError(t, r).Details[0].Path)
	})
	t.Run("InputSchema", func(t *testing.T) {
		typed := c.mustVersion(t, e, spec([]any{inputNode,
			node("ask", "action", map[string]any{"inputSchema": map[string]any{"type": "object", "required": []any{"answer"}}}),
			node("done", "output", nil)},
			edge("start", "out", "ask"), edge("ask", "out", "done")))
		id := e.start(t, typed, map[string]any{"name": "Ada"})["id"].(string)
		e.waitStatus(t, id, workflow.StatusRequiresAction)
		r := e.Do(http.MethodPost, resumePath(id), e.Editor, map[string]any{"input": map[string]any{"other": 1}})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		for _, d := range readError(t, r).Details {
			assert.Regexp(t, `^/json/input`, d.Path)
		}
		assert.Equal(t, workflow.StatusRequiresAction, e.waitStatus(t, id, workflow.StatusRequiresAction)["status"], "the run stays paused")
		r = e.Do(http.MethodPost, resumePath(id), e.Editor, map[string]any{"input": map[string]any{"answer": "yes"}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, map[string]any{"answer": "yes"}, outputOf(t, e.waitStatus(t, id, workflow.StatusCompleted)))
	})
}

// slowProvider answers nothing until its context ends, and says when a
// call has started and when it has returned.
type slowProvider struct {
	model.Provider
	started  chan struct{}
	returned chan struct{}
}

func newSlowProvider() *slowProvider {
	return &slowProvider{Provider: model.NewEcho(model.EchoOptions{}),
		started: make(chan struct{}, 4), returned: make(chan struct{}, 4)}
}

func (p *slowProvider) Complete(ctx context.Context, req model.Request) (*model.Result, error) {
	return p.Stream(ctx, req, nil)
}

func (p *slowProvider) Stream(ctx context.Context, _ model.Request, _ func(model.Chunk) error) (*model.Result, error) {
	p.started <- struct{}{}
	<-ctx.Done()
	p.returned <- struct{}{}
	return nil, &canvas.Error{Code: canvas.EPROVIDER, Message: "stopped", Err: ctx.Err()}
}

func TestWorkflow_Cancel(t *testing.T) {
	e := newWorkflowEnv(t)
	c := mustWorkflowCanvas(t, e)
	cancelPath := func(id string) string { return workflowRunsPath + "/" + id + "/cancel" }

	t.Run("Paused", func(t *testing.T) {
		id := e.start(t, c.mustVersion(t, e, actionSpec), map[string]any{"name": "Ada"})["id"].(string)
		e.waitStatus(t, id, workflow.StatusRequiresAction)
		r := e.Do(http.MethodPost, cancelPath(id), e.Editor, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		run := r.Map(t)
		assert.Equal(t, workflow.StatusCancelled, run["status"])
		assert.NotContains(t, run, "graph", "the cancel answer has no graph")
		assert.NotNil(t, run["completedAt"])

		r = e.Do(http.MethodPost, cancelPath(id), e.Editor, nil)
		require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
		assert.Equal(t, canvas.ECONFLICT, readError(t, r).Code)
		r = e.Do(http.MethodPost, workflowRunsPath+"/"+id+"/resume", e.Editor, map[string]any{"input": 1})
		require.Equal(t, http.StatusConflict, r.Status, "a cancelled run cannot be resumed: %s", r.Body)
	})
	t.Run("SlowModelCall", func(t *testing.T) {
		slow := newSlowProvider()
		e.Providers.Register("slow", slow)
		id := e.start(t, c.mustVersion(t, e, slowSpec), map[string]any{"name": "Ada"})["id"].(string)
		select {
		case <-slow.started:
		case <-time.After(10 * time.Second):
			require.FailNow(t, "the model was never called")
		}
		r := e.Do(http.MethodPost, cancelPath(id), e.Editor, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, workflow.StatusCancelled, r.Map(t)["status"])
		select {
		case <-slow.returned:
		case <-time.After(5 * time.Second):
			require.FailNow(t, "the model call in flight was not cancelled")
		}
		// The call's step ends cancelled; nothing after it ever ran.
		run := e.waitRun(t, id, func(run map[string]any) bool {
			return stepStatuses(t, run)["call"] != workflow.StepRunning
		})
		assert.Equal(t, workflow.StatusCancelled, run["status"])
		assert.NotContains(t, []any{"completed", "running"}, stepStatuses(t, run)["after"])
		assert.Nil(t, run["output"])
	})
	t.Run("Completed", func(t *testing.T) {
		id := e.start(t, c.mustVersion(t, e, greetSpec), map[string]any{"name": "Ada"})["id"].(string)
		e.waitStatus(t, id, workflow.StatusCompleted)
		r := e.Do(http.MethodPost, cancelPath(id), e.Editor, nil)
		require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
		assert.Equal(t, workflow.StatusCompleted, e.waitStatus(t, id, workflow.StatusCompleted)["status"])
	})
	t.Run("NotFound", func(t *testing.T) {
		r := e.Do(http.MethodPost, cancelPath("6f1c2a3e-7d5b-4c8a-9e0f-1a2b3c4d5e6f"), e.Editor, nil)
		require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
	})
	t.Run("Forbidden", func(t *testing.T) {
		id := e.start(t, c.mustVersion(t, e, actionSpec), map[string]any{"name": "Ada"})["id"].(string)
		r := e.Do(http.MethodPost, cancelPath(id), e.Viewer, nil)
		require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	})
}

func TestWorkflow_Completion(t *testing.T) {
	e := newWorkflowEnv(t)
	c := mustWorkflowCanvas(t, e)
	greet := c.mustVersion(t, e, greetSpec)
	review := c.mustVersion(t, e, strictReviewSpec)
	body := func(versionID string, fields map[string]any) map[string]any {
		return merged(map[string]any{"canvas_id": c.ID, "version_id": versionID, "variables": map[string]any{"name": "Ada"}}, fields)
	}

	t.Run("Sync", func(t *testing.T) {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(greet, nil))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		res := r.Map(t)
		assert.Equal(t, "Hello Ada", completionText(t, res))
		run := e.waitStatus(t, res["id"].(string), workflow.StatusCompleted)
		assert.Equal(t, res["id"], run["id"], "the run is read by its execution id, which it shows")
		assert.Equal(t, workflow.EnvAPI, run["environment"])
		assert.Equal(t, greet, run["promptVersionId"])
	})
	t.Run("SyncPaused", func(t *testing.T) {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(review, nil))
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		got := r.Map(t)
		assert.Equal(t, "workflow.run", got["object"])
		assert.Equal(t, workflow.StatusWaitingForReview, got["status"])
		assert.Equal(t, got["id"], got["executionId"])
		id := got["executionId"].(string)

		r = e.Do(http.MethodPost, workflowRunsPath+"/"+id+"/review", e.Editor, map[string]any{"approved": true})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		run := e.waitStatus(t, id, workflow.StatusCompleted)
		assert.Equal(t, "Approved for Ada", outputOf(t, run))
		assert.Equal(t, workflow.EnvAPI, run["environment"])
	})
	t.Run("Stream", func(t *testing.T) {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(greet, map[string]any{"stream": true}))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, "text/event-stream", r.Header.Get("Content-Type"))
		events := sseEvents(t, r.Body)
		require.Len(t, events, 3, "one chunk with the output, the last chunk, then [DONE]")
		var chunk streamChunk
		require.NoError(t, json.Unmarshal([]byte(events[0].Data), &chunk), events[0].Data)
		assert.Equal(t, "chat.completion.chunk", chunk.Object)
		require.Len(t, chunk.Choices, 1)
		assert.Equal(t, "Hello Ada", chunk.Choices[0].Delta.Content.Text)
		var last map[string]any
		require.NoError(t, json.Unmarshal([]byte(events[1].Data), &last), events[1].Data)
		assert.Equal(t, "stop", last["choices"].([]any)[0].(map[string]any)["finishReason"])
		assert.Equal(t, "[DONE]", events[2].Data)
		assert.Equal(t, workflow.StatusCompleted, e.waitStatus(t, chunk.ID, workflow.StatusCompleted)["status"])
	})
	t.Run("StreamPaused", func(t *testing.T) {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(review, map[string]any{"stream": true}))
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		assert.Equal(t, "application/json", r.Header.Get("Content-Type"), "no stream was started")
		got := r.Map(t)
		assert.Equal(t, workflow.StatusWaitingForReview, got["status"])
		e.waitStatus(t, got["executionId"].(string), workflow.StatusWaitingForReview)
	})
	t.Run("Webhook", func(t *testing.T) {
		hook := newHookReceiver(t)
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(greet, map[string]any{"webhook_url": hook.URL}),
			"X-Svc-Forward-Tenant", "acme")
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		got := r.Map(t)
		assert.Equal(t, completion.AsyncObject, got["object"])
		assert.Equal(t, completion.StatusQueued, got["status"])
		id := got["id"].(string)

		n := hook.next(t)
		assert.Equal(t, "workflow_run.completed", n.Event.Type)
		assert.Equal(t, "acme", n.Header.Get("Tenant"), "forwarded headers reach the notification")
		assert.Equal(t, id, n.Event.Data["id"])
		assert.Equal(t, workflow.StatusCompleted, e.waitStatus(t, id, workflow.StatusCompleted)["status"])
		r = e.Do(http.MethodGet, completionsPath+"/"+id, e.Editor, nil)
		require.Equal(t, http.StatusOK, r.Status, "the completion is read back as completions are: %s", r.Body)
		run := r.Map(t)
		assert.Equal(t, completion.KindWorkflow, run["kind"])
		assert.Equal(t, completion.StatusCompleted, run["status"])
		assert.Equal(t, workflow.StatusCompleted, run["workflowStatus"])
		assert.NotEmpty(t, run["result"])
	})
	t.Run("WebhookPausedThenCancelled", func(t *testing.T) {
		hook := newHookReceiver(t)
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(c.mustVersion(t, e, actionSpec), map[string]any{"webhook_url": hook.URL}))
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		id := r.Map(t)["id"].(string)
		n := hook.next(t)
		assert.Equal(t, "workflow_run.paused", n.Event.Type)
		assert.Equal(t, id, n.Event.Data["id"])
		require.Equal(t, http.StatusOK, e.Do(http.MethodPost, workflowRunsPath+"/"+id+"/cancel", e.Editor, nil).Status)
		n = hook.next(t)
		assert.Equal(t, "workflow_run.failed", n.Event.Type, "a run that ends otherwise than completed")
		assert.Equal(t, id, n.Event.Data["id"])
	})
	t.Run("Timeout", func(t *testing.T) {
		slow := newSlowProvider()
		e.Providers.Register("slow", slow)
		timed := c.mustVersion(t, e, merged(slowSpec, map[string]any{"timeoutSeconds": 1}))
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(timed, nil))
		require.Equal(t, http.StatusGatewayTimeout, r.Status, "%s", r.Body)
		assert.Equal(t, canvas.ETIMEOUT, readError(t, r).Code)
	})
	t.Run("MissingVariable", func(t *testing.T) {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(greet, map[string]any{"variables": map[string]any{}}))
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	})
}
