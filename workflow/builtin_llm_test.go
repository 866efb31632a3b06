package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// recordingModels is a ModelCaller that records its requests and answers
// with answer (or fails with err).
type recordingModels struct {
	mu     sync.Mutex
	calls  []model.Request
	spaces []string
	answer model.Result
	err    error
}

func (m *recordingModels) Call(_ context.Context, workspaceID string, req model.Request, _ func(model.Chunk) error) (*model.Result, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, req)
	m.spaces = append(m.spaces, workspaceID)
	if m.err != nil {
		return nil, m.err
	}
	res := m.answer
	return &res, nil
}

func (m *recordingModels) Target(_ context.Context, _ model.Scope, want model.Want) (model.Target, error) {
	return model.Target{Model: want.Model, Provider: want.Provider, CredentialID: want.CredentialID}, nil
}

func (blockingModels) Target(_ context.Context, _ model.Scope, want model.Want) (model.Target, error) {
	return model.Target{Model: want.Model}, nil
}

// blockingModels answers only when its context ends, with the context's
// error wrapped as model.Caller does.
type blockingModels struct{ started chan struct{} }

func (m blockingModels) Call(ctx context.Context, _ string, _ model.Request, _ func(model.Chunk) error) (*model.Result, error) {
	close(m.started)
	<-ctx.Done()
	return nil, &canvas.Error{Code: canvas.ECANCELLED, Message: "The caller went away.", Err: fmt.Errorf("fake: %w", ctx.Err())}
}

// echoModels is a real model.Caller with the echo provider.
func echoModels() *model.Caller {
	return model.NewCaller(model.Options{})
}

func llmRegistry(m workflow.ModelCaller) *workflow.Registry {
	return workflow.Builtins(workflow.BuiltinOptions{Models: m})
}

func TestLLM(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		models := &recordingModels{answer: model.Result{Text: "A poem.", Model: "gpt-x-2026",
			Usage: model.Usage{InputTokens: 12, OutputTokens: 3}}}
		n := mustBuiltinNode(t, llmRegistry(models), "draft", "llm", `{"model": "gpt-x", "temperature": 0.5, "maxTokens": 50, "topP": 0.9,
			"messages": [{"role": "system", "content": "You write about {{topic}}."}, {"role": "user", "content": "Outline: {{steps.plan.output}}"}]}`)
		out := mustExecute(t, n, &workflow.StepInput{WorkspaceID: "ws1", Variables: map[string]any{"topic": "owls"},
			Steps: map[string]*workflow.Step{"plan": endedStep("plan", workflow.StepCompleted, `"three parts"`)}})

		require.Len(t, models.calls, 1)
		assert.Equal(t, []string{"ws1"}, models.spaces)
		req := models.calls[0]
		want := []model.Message{{Role: "system", Content: "You write about owls."}, {Role: "user", Content: "Outline: three parts"}}
		assert.Equal(t, want, req.Messages)
		assert.Equal(t, "gpt-x", req.Model)
		assert.Equal(t, 0.5, *req.Temperature)
		assert.Equal(t, 50, *req.MaxTokens)
		assert.Equal(t, 0.9, *req.TopP)

		assert.Equal(t, "A poem.", out.Output)
		assert.Nil(t, out.Ports)
		assert.Equal(t, map[string]any{"messages": want, "model": "gpt-x"}, out.Input)
		meta, err := json.Marshal(out.Metadata)
		require.NoError(t, err)
		assert.JSONEq(t, `{"usage": {"inputTokens": 12, "outputTokens": 3}, "model": "gpt-x-2026", "cost": null}`, string(meta))
	})
	t.Run("Echo", func(t *testing.T) {
		n := mustBuiltinNode(t, llmRegistry(echoModels()), "draft", "llm", `{"messages": [{"role": "user", "content": "Write on {{topic}}"}]}`)
		out := mustExecute(t, n, &workflow.StepInput{Variables: map[string]any{"topic": "owls"}})
		assert.Equal(t, "Write on owls", out.Output)
		meta, _ := json.Marshal(out.Metadata)
		assert.JSONEq(t, `{"usage": {"inputTokens": 3, "outputTokens": 3}, "model": "echo",
			"cost": {"input": 0, "output": 0, "total": 0, "currency": "USD"}}`, string(meta))
		assert.Equal(t, "echo", out.Input.(map[string]any)["model"], "no model means the echo model")
	})
	t.Run("StructuredOutput", func(t *testing.T) {
		n := mustBuiltinNode(t, llmRegistry(echoModels()), "judge", "llm", `{"messages": [{"role": "user", "content": "{\"score\": {{score}}, \"ok\": true}"}],
			"structuredOutput": {"enabled": true, "schema": {"type": "object", "required": ["score"], "properties": {"score": {"type": "number"}}}}}`)
		out := mustExecute(t, n, &workflow.StepInput{Variables: map[string]any{"score": json.Number("7.50")}})
		assert.Equal(t, json.RawMessage(`{"score": 7.50, "ok": true}`), out.Output, "the JSON value as the model wrote it")

		_, err := execute(n, &workflow.StepInput{Variables: map[string]any{"score": `"high"`}})
		requireCode(t, err, canvas.EPROVIDER, "/output/score")
	})
	t.Run("StructuredOutputNotJSON", func(t *testing.T) {
		n := mustBuiltinNode(t, llmRegistry(echoModels()), "judge", "llm", `{"messages": [{"role": "user", "content": "not json"}],
			"structuredOutput": {"enabled": true}}`)
		_, err := execute(n, nil)
		requireCode(t, err, canvas.EPROVIDER)
	})
	t.Run("UnknownModel", func(t *testing.T) {
		n := mustBuiltinNode(t, llmRegistry(echoModels()), "draft", "llm", `{"model": "nobody", "messages": [{"role": "user", "content": "x"}]}`)
		_, err := execute(n, nil)
		requireCode(t, err, canvas.EINVALID)
	})
	t.Run("ProviderError", func(t *testing.T) {
		models := &recordingModels{err: &canvas.Error{Code: canvas.EPROVIDER, Message: "The model back end failed."}}
		n := mustBuiltinNode(t, llmRegistry(models), "draft", "llm", `{"messages": [{"role": "user", "content": "x"}]}`)
		_, err := execute(n, nil)
		requireCode(t, err, canvas.EPROVIDER)
	})
	t.Run("NoModels", func(t *testing.T) {
		n := mustBuiltinNode(t, nil, "draft", "llm", `{"messages": [{"role": "user", "content": "x"}]}`)
		_, err := execute(n, nil)
		requireCode(t, err, canvas.EPROVIDER)
		assert.Contains(t, canvas.ErrorMessage(err), "No model back end")
	})
	t.Run("IncludesWithoutResolver", func(t *testing.T) {
		models := &recordingModels{}
		n := mustBuiltinNode(t, llmRegistry(models), "draft", "llm",
			`{"messages": [{"role": "user", "content": "{{> 0194b5b0-0000-7000-8000-000000000001}}"}]}`)
		_, err := execute(n, nil)
		requireCode(t, err, canvas.EINVALID)
		assert.Contains(t, canvas.ErrorMessage(err), "resolves no includes")
		assert.Empty(t, models.calls, "the tag is not sent as it is")
	})
	t.Run("Cancelled", func(t *testing.T) {
		models := blockingModels{started: make(chan struct{})}
		n := mustBuiltinNode(t, llmRegistry(models), "draft", "llm", `{"messages": [{"role": "user", "content": "x"}]}`)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-models.started
			cancel()
		}()
		_, err := n.Executor.Execute(ctx, &workflow.StepInput{Node: n})
		assert.Equal(t, context.Canceled, err, "the context's error as it is")
	})
	t.Run("Deadline", func(t *testing.T) {
		n := mustBuiltinNode(t, llmRegistry(echoModels()), "draft", "llm", `{"messages": [{"role": "user", "content": "x"}]}`)
		ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
		defer cancel()
		_, err := n.Executor.Execute(ctx, &workflow.StepInput{Node: n})
		assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	})
	t.Run("FileVariables", func(t *testing.T) {
		// The run's file variables, declared by the input node the llm node
		// descends from, render as file references for the model call.
		models := &recordingModels{answer: model.Result{Text: "ok"}}
		start := mustBuiltinNode(t, nil, "start", "input", `{"variables": [{"name": "doc", "type": "file", "required": true}, {"name": "data", "type": "json"}]}`)
		mid := mustBuiltinNode(t, nil, "mid", "template", `{"template": "x"}`)
		n := mustBuiltinNode(t, llmRegistry(models), "read", "llm", `{"messages": [{"role": "user", "content": "Read {{doc}} with {{data}}"}]}`)
		linkBuiltin(start, "out", mid)
		linkBuiltin(mid, "out", n)
		mustExecute(t, n, &workflow.StepInput{Variables: map[string]any{
			"doc": map[string]any{"file_url": "vault://f1"}, "data": map[string]any{"k": "v"}}})
		require.Len(t, models.calls, 1)
		msg := models.calls[0].Messages[0]
		assert.Equal(t, `Read [file: vault://f1] with {"k":"v"}`, msg.Content)
		assert.Equal(t, []model.FileRef{{Variable: "doc", URL: "vault://f1", Start: 5, End: 5 + len("[file: vault://f1]")}}, msg.FileRefs)
	})
	t.Run("Compile", func(t *testing.T) {
		details := builtinDetails(t, "llm", `{"messages": [{"role": "user", "content": "x"}, {"role": "robot", "content": "y"}],
			"structuredOutput": {"enabled": true, "schema": {"type": "nothing"}}}`)
		paths := detailPaths(details)
		require.NotEmpty(t, paths)
		assert.Equal(t, "/config/messages/1/role", paths[0])
		for _, p := range paths[1:] {
			assert.Contains(t, p, "/config/structuredOutput/schema")
		}
		assert.Equal(t, []string{"/config/messages"}, detailPaths(builtinDetails(t, "llm", `{"messages": []}`)))
		// A disabled structured output is not compiled.
		assert.Empty(t, builtinDetails(t, "llm", `{"messages": [{"role": "user", "content": "x"}],
			"structuredOutput": {"enabled": false, "schema": {"type": "nothing"}}}`))
	})
}
