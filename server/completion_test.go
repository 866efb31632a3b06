package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sse "github.com/tmaxmax/go-sse"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/model"
)

const completionsPath = "/v2/chat/completions"

// completionText returns the assistant text of a completion response.
func completionText(t *testing.T, body map[string]any) string {
	t.Helper()
	choices, ok := body["choices"].([]any)
	require.True(t, ok, "choices: %v", body)
	require.Len(t, choices, 1)
	msg := choices[0].(map[string]any)["message"].(map[string]any)
	assert.Equal(t, canvas.RoleAssistant, msg["role"])
	return msg["content"].(map[string]any)["text"].(string)
}

// mustStructuredVersion creates, through the API, a version of canvasID
// whose structured output schema requires {"answer": string} and whose
// prompt is prompt.
func mustStructuredVersion(t *testing.T, e *testEnv, canvasID, prompt string) string {
	t.Helper()
	return mustCreate(t, e, "/prompt-version", e.Editor, map[string]any{
		"promptId": canvasID,
		"configuration": map[string]any{"model": "echo", "structuredOutput": map[string]any{
			"enabled": true,
			"schema": map[string]any{"type": "object", "required": []string{"answer"},
				"properties": map[string]any{"answer": map[string]any{"type": "string"}}},
		}},
		"message": map[string]any{"role": "system", "content": prompt},
	})["id"].(string)
}

func TestCompletion_Create(t *testing.T) {
	e := newCompletionEnv(t, false)
	ec := mustEnvCanvas(t, e.testEnv, 2)
	ec.mustPublish(t, "production", 1)
	stagingID := ec.mustCreateEnv(t, "staging")
	require.NotEmpty(t, stagingID)
	ec.mustPublish(t, "staging", 2)
	ec.mustCreateEnv(t, "empty")
	vars := map[string]any{"name": "Ada"}
	other := mustEnvCanvas(t, e.testEnv, 1)

	body := func(fields map[string]any) map[string]any {
		return merged(map[string]any{"canvas_id": ec.Canvas.ID, "variables": vars}, fields)
	}

	t.Run("OK", func(t *testing.T) {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(nil))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		got := r.Map(t)
		assert.Equal(t, "chat.completion", got["object"])
		assert.Equal(t, "Prompt 1 for Ada", completionText(t, got), "the promoted version, rendered")
		assert.Equal(t, ec.Versions[0].ID, got["versionId"])
		assert.Equal(t, map[string]any{"inputTokens": 4.0, "outputTokens": 4.0}, got["usage"])

		run := e.Do(http.MethodGet, completionsPath+"/"+got["id"].(string), e.Viewer, nil)
		require.Equal(t, http.StatusOK, run.Status, "%s", run.Body)
		rec := run.Map(t)
		assert.Equal(t, completion.StatusCompleted, rec["status"], "the sync run is recorded")
		assert.Equal(t, ec.Versions[0].ID, rec["versionId"])
		assert.Equal(t, "echo", rec["model"])
		assert.Equal(t, false, rec["async"])
		assert.Equal(t, got["usage"], rec["usage"])
		assert.NotNil(t, rec["completedAt"])
		assert.Equal(t, "Prompt 1 for Ada", completionText(t, rec["result"].(map[string]any)))
	})
	t.Run("Messages", func(t *testing.T) {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(map[string]any{
			"messages": []map[string]any{{"content": "first {{name}}"}, {"content": "second"}}}))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, "Prompt 1 for Ada\nfirst {{name}}\nsecond", completionText(t, r.Map(t)),
			"the request's messages follow the version's, as written")
	})
	t.Run("VersionID", func(t *testing.T) {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(map[string]any{"version_id": ec.Versions[1].ID}))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		got := r.Map(t)
		assert.Equal(t, "Prompt 2 for Ada", completionText(t, got))
		assert.Equal(t, ec.Versions[1].ID, got["versionId"])
	})
	t.Run("EnvironmentName", func(t *testing.T) {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(map[string]any{"environment_name": " staging "}))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		got := r.Map(t)
		assert.Equal(t, "Prompt 2 for Ada", completionText(t, got))
		rec := e.Do(http.MethodGet, completionsPath+"/"+got["id"].(string), e.Editor, nil).Map(t)
		assert.Equal(t, "staging", rec["environmentName"])

		r = e.Do(http.MethodPost, completionsPath, e.Editor, body(map[string]any{"environment_name": "production"}))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, "Prompt 1 for Ada", completionText(t, r.Map(t)))
	})
	t.Run("SettingsOverride", func(t *testing.T) {
		rec := newRecordingProvider(model.NewEcho(model.EchoOptions{}))
		e.Providers.Register("recorder", rec)
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(map[string]any{
			"settings": map[string]any{"model": "recorder", "temperature": 0.9, "maxTokens": 7, "topP": 0.5}}))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		last := rec.Last()
		assert.Equal(t, "recorder", last.Model)
		require.NotNil(t, last.Temperature)
		assert.Equal(t, 0.9, *last.Temperature)
		require.NotNil(t, last.MaxTokens)
		assert.Equal(t, 7, *last.MaxTokens)
		require.NotNil(t, last.TopP)
		assert.Equal(t, 0.5, *last.TopP)

		r = e.Do(http.MethodPost, completionsPath, e.Editor, body(map[string]any{
			"settings": map[string]any{"model": "recorder", "maxTokens": 3}}))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		last = rec.Last()
		require.NotNil(t, last.Temperature)
		assert.Equal(t, 0.3, *last.Temperature, "what the override leaves out comes from the configuration")
		assert.Equal(t, 3, *last.MaxTokens)
	})
	t.Run("StructuredOutput", func(t *testing.T) {
		good := mustStructuredVersion(t, e.testEnv, ec.Canvas.ID, `{"answer": "{{name}}"}`)
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(map[string]any{"version_id": good}))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.JSONEq(t, `{"answer": "Ada"}`, completionText(t, r.Map(t)))

		bad := mustStructuredVersion(t, e.testEnv, ec.Canvas.ID, `{"reply": "{{name}}"}`)
		r = e.Do(http.MethodPost, completionsPath, e.Editor, body(map[string]any{"version_id": bad}))
		require.Equal(t, http.StatusBadGateway, r.Status, "%s", r.Body)
		got := readError(t, r)
		assert.Equal(t, canvas.EPROVIDER, got.Code)
		require.NotEmpty(t, got.Details)
		assert.Equal(t, "/output", got.Details[0].Path, "the details point into the model's output")
	})
	t.Run("StructuredOutputSettings", func(t *testing.T) {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(map[string]any{
			"settings": map[string]any{"structuredOutput": map[string]any{"enabled": true, "schema": map[string]any{"type": "object"}}}}))
		require.Equal(t, http.StatusBadGateway, r.Status, "plain text is not the object the override asks for: %s", r.Body)

		r = e.Do(http.MethodPost, completionsPath, e.Editor, body(map[string]any{
			"settings": map[string]any{"structuredOutput": map[string]any{"enabled": true, "schema": map[string]any{"type": 12}}}}))
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		for _, d := range readError(t, r).Details {
			assert.True(t, strings.HasPrefix(d.Path, "/json/settings/structuredOutput/schema"), d.Path)
		}
	})

	errCases := []struct {
		name   string
		token  string
		body   map[string]any
		status int
		code   string
		paths  []string
	}{
		{"BadEnvironmentName", e.Editor, body(map[string]any{"environment_name": "Not_Valid"}), 400, canvas.EINVALIDENVNAME, nil},
		{"MissingEnvironment", e.Editor, body(map[string]any{"environment_name": "nope"}), 404, canvas.ENOTFOUND, nil},
		{"NothingPublished", e.Editor, body(map[string]any{"environment_name": "empty"}), 404, canvas.ENOTFOUND, nil},
		{"EnvironmentWithVersion", e.Editor, body(map[string]any{"environment_name": "staging", "version_id": ec.Versions[0].ID}), 422, canvas.EINVALID, []string{"/json/environment_name"}},
		{"EnvironmentWithApplication", e.Editor, body(map[string]any{"environment_name": "staging", "application_id": uuid.NewString()}), 422, canvas.EINVALID, []string{"/json/environment_name"}},
		{"VersionOfAnotherCanvas", e.Editor, body(map[string]any{"version_id": other.Versions[0].ID}), 404, canvas.ENOTFOUND, nil},
		{"UnknownVersion", e.Editor, body(map[string]any{"version_id": uuid.NewString()}), 404, canvas.ENOTFOUND, nil},
		{"UnknownApplication", e.Editor, body(map[string]any{"application_id": uuid.NewString()}), 404, canvas.ENOTFOUND, nil},
		{"NoPromotedVersion", e.Editor, map[string]any{"canvas_id": other.Canvas.ID, "variables": vars}, 404, canvas.ENOTFOUND, nil},
		{"UnknownCanvas", e.Editor, map[string]any{"canvas_id": uuid.NewString()}, 404, canvas.ENOTFOUND, nil},
		{"MissingCanvasID", e.Editor, map[string]any{"variables": vars}, 422, canvas.EINVALID, []string{"/json/canvas_id"}},
		{"MissingVariable", e.Editor, body(map[string]any{"variables": map[string]any{}}), 422, canvas.EINVALID, []string{"/json/variables/name"}},
		{"WrongKind", e.Editor, body(map[string]any{"variables": map[string]any{"name": 5}}), 422, canvas.EINVALID, []string{"/json/variables/name"}},
		{"UnknownModel", e.Editor, body(map[string]any{"settings": map[string]any{"model": "no-such-model"}}), 422, canvas.EINVALID, []string{"/json/settings/model"}},
		{"Unauthorized", "", body(nil), 401, canvas.EUNAUTHORIZED, nil},
		{"ForbiddenViewer", e.Viewer, body(nil), 403, canvas.EFORBIDDEN, nil},
		{"ForbiddenProject", e.Key(canvas.RoleEditor, uuid.NewString()), body(nil), 403, canvas.EFORBIDDEN, nil},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do(http.MethodPost, completionsPath, tc.token, tc.body)
			require.Equal(t, tc.status, r.Status, "%s", r.Body)
			got := readError(t, r)
			assert.Equal(t, tc.code, got.Code)
			if tc.paths != nil {
				var paths []string
				for _, d := range got.Details {
					paths = append(paths, d.Path)
				}
				assert.Equal(t, tc.paths, paths)
			}
		})
	}
	t.Run("MissingVariablesListed", func(t *testing.T) {
		v := &canvas.Version{PromptID: ec.Canvas.ID, WorkspaceID: e.Workspace.ID, Title: "two", CreatedBy: "tester",
			Configuration: canvas.Configuration{Model: "echo"},
			Variables: []canvas.Variable{{Name: "a", Type: canvas.VariableText, Required: true},
				{Name: "b", Type: canvas.VariableNumber, Required: true}, {Name: "c", Type: canvas.VariableText}},
			Messages: []canvas.Message{{Role: canvas.RoleSystem, Content: "{{a}} {{b}} {{c}}"}}}
		require.NoError(t, e.Store.CreateVersion(context.Background(), v))
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body(map[string]any{"version_id": v.ID, "variables": map[string]any{}}))
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		var paths []string
		for _, d := range readError(t, r).Details {
			paths = append(paths, d.Path)
		}
		assert.ElementsMatch(t, []string{"/json/variables/a", "/json/variables/b"}, paths)
	})
}

func TestCompletion_Get(t *testing.T) {
	e := newCompletionEnv(t, false)
	ec := mustEnvCanvas(t, e.testEnv, 1)
	ec.mustPublish(t, "production", 1)
	r := e.Do(http.MethodPost, "/v1/tasks", e.Editor, map[string]any{"prompt": "hi"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	taskID := r.Map(t)["id"].(string)

	t.Run("NotFound", func(t *testing.T) {
		assert.Equal(t, http.StatusNotFound, e.Do(http.MethodGet, completionsPath+"/"+uuid.NewString(), e.Viewer, nil).Status)
		assert.Equal(t, http.StatusNotFound, e.Do(http.MethodGet, completionsPath+"/"+taskID, e.Viewer, nil).Status,
			"a task is not a completion")
	})
	t.Run("OtherWorkspace", func(t *testing.T) {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, map[string]any{"canvas_id": ec.Canvas.ID, "variables": map[string]any{"name": "x"}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		ws := &canvas.Workspace{Name: "other"}
		require.NoError(t, e.Store.CreateWorkspace(context.Background(), ws))
		got := e.Do(http.MethodGet, completionsPath+"/"+r.Map(t)["id"].(string), e.KeyIn(ws.ID, canvas.RoleAdmin), nil)
		assert.Equal(t, http.StatusNotFound, got.Status)
	})
	t.Run("Validation", func(t *testing.T) {
		assert.Equal(t, http.StatusUnprocessableEntity, e.Do(http.MethodGet, completionsPath+"/not-a-uuid", e.Viewer, nil).Status)
	})
}

// sseEvents parses a text/event-stream body.
func sseEvents(t *testing.T, body []byte) []sse.Event {
	t.Helper()
	var out []sse.Event
	for ev, err := range sse.Read(bytes.NewReader(body), nil) {
		require.NoError(t, err)
		out = append(out, ev)
	}
	return out
}

// streamChunk is one chunk event of a completion stream.
type streamChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
}

func TestCompletion_Stream(t *testing.T) {
	e := newCompletionEnv(t, false)
	ec := mustEnvCanvas(t, e.testEnv, 1)
	ec.mustPublish(t, "production", 1)
	body := map[string]any{"canvas_id": ec.Canvas.ID, "variables": map[string]any{"name": "Ada Lovelace"}, "stream": true}

	t.Run("OK", func(t *testing.T) {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, body)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, "text/event-stream", r.Header.Get("Content-Type"))
		events := sseEvents(t, r.Body)
		require.GreaterOrEqual(t, len(events), 2)
		last := events[len(events)-1]
		assert.Equal(t, "[DONE]", last.Data)
		var text strings.Builder
		var id string
		for _, ev := range events[:len(events)-1] {
			assert.Empty(t, ev.Type)
			var c streamChunk
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &c), ev.Data)
			assert.Equal(t, "chat.completion.chunk", c.Object)
			require.Len(t, c.Choices, 1)
			if id == "" {
				id = c.ID
			}
			assert.Equal(t, id, c.ID, "every chunk carries the run id")
			text.WriteString(c.Choices[0].Delta.Content.Text)
		}
		assert.Len(t, events, 7, "one event per word, the last chunk, then [DONE]")
		assert.Equal(t, "Prompt 1 for Ada Lovelace", text.String())
		rec := e.Do(http.MethodGet, completionsPath+"/"+id, e.Editor, nil).Map(t)
		assert.Equal(t, completion.StatusCompleted, rec["status"])
		assert.Equal(t, "Prompt 1 for Ada Lovelace", completionText(t, rec["result"].(map[string]any)))
		assert.Equal(t, true, rec["stream"], "the run says it was streamed")
		assert.Equal(t, false, rec["async"])

		sync := e.Do(http.MethodPost, completionsPath, e.Editor, merged(body, map[string]any{"stream": false}))
		require.Equal(t, http.StatusOK, sync.Status, "%s", sync.Body)
		rec = e.Do(http.MethodGet, completionsPath+"/"+sync.Map(t)["id"].(string), e.Editor, nil).Map(t)
		assert.Equal(t, false, rec["stream"], "a run answered whole was not streamed")
	})
	t.Run("ErrorBeforeFirstByte", func(t *testing.T) {
		r := e.Do(http.MethodPost, completionsPath, e.Editor, merged(body, map[string]any{"variables": map[string]any{}}))
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		assert.Equal(t, canvas.EINVALID, readError(t, r).Code)
	})
	t.Run("StructuredOutputInvalid", func(t *testing.T) {
		bad := mustStructuredVersion(t, e.testEnv, ec.Canvas.ID, `{"reply": "{{name}}"}`)
		r := e.Do(http.MethodPost, completionsPath, e.Editor, merged(body, map[string]any{"version_id": bad}))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		events := sseEvents(t, r.Body)
		require.NotEmpty(t, events)
		last := events[len(events)-1]
		assert.Equal(t, "error", last.Type)
		var eb errorBody
		require.NoError(t, json.Unmarshal([]byte(last.Data), &eb))
		assert.Equal(t, canvas.EPROVIDER, eb.Code)
		assert.NotEmpty(t, eb.RequestID)
		for _, ev := range events {
			assert.NotEqual(t, "[DONE]", ev.Data)
		}
		var first streamChunk
		require.NoError(t, json.Unmarshal([]byte(events[0].Data), &first))
		rec := e.Do(http.MethodGet, completionsPath+"/"+first.ID, e.Editor, nil).Map(t)
		assert.Equal(t, completion.StatusFailed, rec["status"], "the run is recorded failed")
		assert.Equal(t, canvas.EPROVIDER, rec["error"].(map[string]any)["code"])
	})
	t.Run("ClientDisconnects", func(t *testing.T) {
		slow := newRecordingProvider(model.NewEcho(model.EchoOptions{Delay: time.Hour}))
		e.Providers.Register("slow", slow)
		raw, err := json.Marshal(merged(body, map[string]any{"settings": map[string]any{"model": "slow"}}))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL+completionsPath, bytes.NewReader(raw))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+e.Editor)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var first streamChunk
		for ev, err := range sse.Read(resp.Body, nil) {
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &first))
			break // the first word arrived; the next is an hour away
		}
		require.NotEmpty(t, first.ID)
		cancel()

		select {
		case err := <-slow.returned:
			require.ErrorIs(t, err, context.Canceled, "the provider call was cancelled")
		case <-time.After(10 * time.Second):
			require.FailNow(t, "the provider kept running after the client left")
		}
		rec := e.waitRun(t, completionsPath+"/"+first.ID)
		assert.Equal(t, completion.StatusFailed, rec["status"])
		assert.Equal(t, canvas.ECANCELLED, rec["error"].(map[string]any)["code"])
	})
}

// TestVersion_StructuredOutputSchema checks over HTTP that a version never
// saves an invalid structured output schema.
func TestVersion_StructuredOutputSchema(t *testing.T) {
	e := newCompletionEnv(t, false)
	c := mustCanvas(t, e.testEnv, mustProjectID(t, e.testEnv, "p"), "c")
	invalid := map[string]any{"enabled": true, "schema": map[string]any{"type": "no-such-type"}}

	r := e.Do(http.MethodPost, "/prompt-version", e.Editor, map[string]any{"promptId": c["id"],
		"configuration": map[string]any{"structuredOutput": invalid}})
	require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	for _, d := range readError(t, r).Details {
		assert.True(t, strings.HasPrefix(d.Path, "/json/configuration/structuredOutput/schema"), d.Path)
	}

	v := mustCreate(t, e.testEnv, "/prompt-version", e.Editor, map[string]any{"promptId": c["id"]})
	r = e.Do(http.MethodPatch, "/prompt-version/"+v["id"].(string), e.Editor, map[string]any{
		"configuration": map[string]any{"structuredOutput": invalid}})
	require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	assert.Equal(t, canvas.EINVALID, readError(t, r).Code)
}
