package workflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// includeSpec is input → llm → output, the llm node's messages holding
// system and user (with their {{> ...}} tags).
func includeSpec(system, user string) string {
	return fmt.Sprintf(`{"specVersion": "1", "nodes": [
	{"id": "start", "actionId": "input", "config": {"variables": [{"name": "topic", "type": "text", "required": true},
		{"name": "tone", "type": "text"}]}},
	{"id": "draft", "actionId": "llm", "config": {"model": "fake", "messages": [{"role": "system", "content": %q},
		{"role": "user", "content": %q}]}},
	{"id": "out", "actionId": "output"}],
 "edges": [
	{"from": {"node": "start", "port": "out"}, "to": {"node": "draft", "port": "in"}},
	{"from": {"node": "draft", "port": "out"}, "to": {"node": "out", "port": "in"}}]}`, system, user)
}

// includedCanvas creates a canvas in project projectID ("" for a personal
// draft) with one version holding content, published to production when
// publish is set, and returns the canvas and version ids.
func (h *harness) includedCanvas(ctx context.Context, projectID, content string, publish bool) (string, string) {
	h.t.Helper()
	params := canvas.CreateCanvasParams{Title: "Included"}
	if projectID != "" {
		params.ProjectID = &projectID
	}
	c, err := h.canvases.CreateCanvas(ctx, params)
	require.NoError(h.t, err)
	v, err := h.canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID,
		Variables: []canvas.Variable{{Name: "tone", Type: canvas.VariableText}},
		Message:   &canvas.MessageInput{Role: canvas.RoleUser, Content: content}})
	require.NoError(h.t, err)
	if publish {
		_, _, err := h.envs.Publish(ctx, env.PublishVersionParams{CanvasID: c.ID, EnvName: canvas.ProductionEnvironment,
			VersionID: v.ID})
		require.NoError(h.t, err)
	}
	return c.ID, v.ID
}

func TestLLM_Includes(t *testing.T) {
	t.Run("Resolved", func(t *testing.T) {
		h := newHarness(t, harnessOptions{})
		styleID, styleVer := h.includedCanvas(h.ctx, "", "Write in a {{tone}} tone.", true)
		rulesID, rulesVer := h.includedCanvas(h.ctx, "", "Rule one: be brief.", false)
		// The style canvas' production version is the one served; the
		// rules canvas is named by its version index.
		spec := includeSpec("You are a writer. {{> "+styleID+"}}", "About {{topic}}. {{>"+rulesID+"@v1 }} Done.")
		started := h.start(spec, map[string]any{"topic": "owls", "tone": "dry"})
		v := h.await(started.ID, workflow.StatusCompleted)

		draft := stepByID(t, v, "draft")
		var out string
		require.NoError(t, json.Unmarshal(draft.Output, &out))
		assert.Equal(t, "About owls. Rule one: be brief. Done.", out, "the model got the user message with its include")

		var in struct {
			Messages []struct{ Role, Content string }
		}
		require.NoError(t, json.Unmarshal(draft.Input, &in))
		require.Len(t, in.Messages, 2)
		assert.Equal(t, "You are a writer. Write in a dry tone.", in.Messages[0].Content,
			"the included text renders over the run's variables")

		var meta struct{ Includes []canvas.Include }
		require.NoError(t, json.Unmarshal(draft.Metadata, &meta))
		assert.Equal(t, []canvas.Include{
			{CanvasID: styleID, Environment: canvas.ProductionEnvironment, VersionID: styleVer},
			{CanvasID: rulesID, VersionID: rulesVer, VersionIndex: 1},
		}, meta.Includes)
	})

	t.Run("NoIncludesRecordsNone", func(t *testing.T) {
		h := newHarness(t, harnessOptions{})
		v := h.await(h.start(includeSpec("Plain.", "{{topic}}"), map[string]any{"topic": "owls"}).ID, workflow.StatusCompleted)
		assert.NotContains(t, string(stepByID(t, v, "draft").Metadata), "includes")
	})

	t.Run("SaveRefusesUnresolvable", func(t *testing.T) {
		h := newHarness(t, harnessOptions{})
		missing := uuid.NewString()
		_, err := h.canvases.CreateVersion(h.ctx, canvas.CreateVersionParams{PromptID: h.canvasID, IsWorkflow: true,
			WorkflowSpec: json.RawMessage(includeSpec("Fine.", "See {{> "+missing+"}}."))})
		require.Equal(t, canvas.EINVALID, canvas.ErrorCode(err), "%v", err)
		details := canvas.ErrorDetails(err)
		require.Len(t, details, 1)
		assert.Equal(t, "/json/workflowSpec/nodes/1/config/messages/1/content", details[0].Path)
		assert.Contains(t, details[0].Message, missing)
		assert.Contains(t, details[0].Message, "the canvas does not exist")

		// The workflow's own canvas is the root of every chain.
		_, err = h.canvases.CreateVersion(h.ctx, canvas.CreateVersionParams{PromptID: h.canvasID, IsWorkflow: true,
			WorkflowSpec: json.RawMessage(includeSpec("{{> "+h.canvasID+"}}", "{{topic}}"))})
		require.Equal(t, canvas.EINVALID, canvas.ErrorCode(err), "%v", err)
		details = canvas.ErrorDetails(err)
		require.Len(t, details, 1)
		assert.Equal(t, "/json/workflowSpec/nodes/1/config/messages/0/content", details[0].Path)
		assert.Contains(t, details[0].Message, "a cycle")
	})

	t.Run("StartRefusesWhatTheCallerCannotRead", func(t *testing.T) {
		h := newHarness(t, harnessOptions{})
		p := canvas.PrincipalFrom(h.ctx)
		admin := canvas.NewContext(context.Background(), &canvas.Principal{WorkspaceID: p.WorkspaceID, UserID: "ada",
			Role: canvas.RoleAdmin})
		proj, err := h.canvases.CreateProject(admin, canvas.CreateProjectParams{Name: "Private"})
		require.NoError(t, err)
		privateID, _ := h.includedCanvas(admin, proj.ID, "Secret.", true)
		vid := h.version(includeSpec("{{> "+privateID+"}}", "{{topic}}"))

		// An editor restricted to other projects reaches the workflow (a
		// draft of its own) but not the canvas it includes.
		restricted := canvas.NewContext(context.Background(), &canvas.Principal{WorkspaceID: p.WorkspaceID,
			UserID: "ada", Role: canvas.RoleEditor, Projects: []string{uuid.NewString()}})
		_, err = h.svc.Start(restricted, workflow.StartParams{VersionID: vid, Input: map[string]any{"topic": "owls"}})
		require.Equal(t, canvas.EINVALID, canvas.ErrorCode(err), "%v", err)
		details := canvas.ErrorDetails(err)
		require.Len(t, details, 1)
		assert.Equal(t, "/version/workflowSpec/nodes/1/config/messages/0/content", details[0].Path)
		assert.Contains(t, details[0].Message, "cannot be read with this token")

		// A partial run that skips the llm node does not need its includes.
		_, err = h.svc.Start(restricted, workflow.StartParams{VersionID: vid, Input: map[string]any{"topic": "owls"},
			EndNodeID: "start"})
		require.NoError(t, err)

		// The caller who can read it runs it.
		v, err := h.svc.Start(h.ctx, workflow.StartParams{VersionID: vid, Input: map[string]any{"topic": "owls"}})
		require.NoError(t, err)
		got := h.await(v.ID, workflow.StatusCompleted)
		assert.Contains(t, string(stepByID(t, got, "draft").Input), "Secret.")
	})

	t.Run("StepFailsWhenTheIncludeIsGone", func(t *testing.T) {
		h := newHarness(t, harnessOptions{noWorker: true})
		goneID, _ := h.includedCanvas(h.ctx, "", "Soon gone.", true)
		v, err := h.svc.Start(h.ctx, workflow.StartParams{VersionID: h.version(includeSpec("{{> "+goneID+"}}", "{{topic}}")),
			Input: map[string]any{"topic": "owls"}})
		require.NoError(t, err)
		require.NoError(t, h.canvases.DeleteCanvas(h.ctx, goneID, canvas.DeleteOptions{Force: true}))
		h.startWorker()

		got := h.await(v.ID, workflow.StatusFailed)
		draft := stepByID(t, got, "draft")
		assert.Equal(t, workflow.StepFailed, draft.Status)
		require.NotNil(t, draft.Error)
		assert.Equal(t, canvas.EINVALID, draft.Error.Code)
		assert.Contains(t, draft.Error.Message, goneID)
		assert.Contains(t, draft.Error.Message, "the canvas does not exist")
		assert.Zero(t, h.models.calls, "the model was not called")
	})
}

func stepByID(t *testing.T, v *workflow.View, id string) *workflow.Step {
	t.Helper()
	for _, s := range v.Steps {
		if s.ID == id {
			return s
		}
	}
	require.Failf(t, "no step", "run %s has no step %s", v.ID, id)
	return nil
}
