package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/testcase"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// assertForbidden checks a 403 FORBIDDEN naming the credential.
func assertForbidden(t *testing.T, r *testResponse, name, id string) {
	t.Helper()
	require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	b := readError(t, r)
	assert.Equal(t, canvas.EFORBIDDEN, b.Code)
	assert.Contains(t, b.Message, `"`+name+`"`)
	assert.Contains(t, b.Message, id)
}

// TestAllowedCredentials_EveryRunPath checks over HTTP, on a server
// running real vendor providers against fake vendors, that a canvas's
// allowedCredentials decides what every run path may use: sync, streamed
// and async completions (with a webhook), test case generations and the
// workflow llm action; and how a run's credential is resolved.
func TestAllowedCredentials_EveryRunPath(t *testing.T) {
	ve := newVendorEnv(t)
	p1 := mustProjectID(t, ve.testEnv, "p1")
	p2 := mustProjectID(t, ve.testEnv, "p2")
	anthropicCred := func(name, key string, projects ...string) string {
		body := map[string]any{"name": name, "provider": "anthropic", "apiKey": key, "baseUrl": ve.Anthropic.URL()}
		if projects != nil {
			body["projectIds"] = projects
		}
		return ve.Credential(t, body)
	}
	const keyA, keyB, keyG, keyL = "sk-ant-api03-ALLOWED-a-0001", "sk-ant-api03-OTHER-b-0002",
		"AIzaSyGEMINI-g-0003", "sk-ant-api03-PROJECT-l-0004"
	credA := anthropicCred("claude-a", keyA)
	credB := anthropicCred("claude-b", keyB)
	credG := ve.Credential(t, map[string]any{"name": "gemini-g", "provider": "gemini", "apiKey": keyG, "baseUrl": ve.Gemini.URL()})
	credL := anthropicCred("claude-p2", keyL, p2)

	c := ve.Create(t, "/prompt", map[string]any{"title": "restricted", "projectId": p1, "allowedCredentials": []string{credA}})
	cv := c["id"].(string)
	const claude = "claude-sonnet-4-5"
	onA := ve.Version(t, cv, map[string]any{"model": claude, "credentialId": credA})
	auto := ve.Version(t, cv, map[string]any{"model": claude})
	onB := ve.Version(t, cv, map[string]any{"model": claude, "credentialId": credB})
	onGemini := ve.Version(t, cv, map[string]any{"model": "gemini-2.5-flash"})
	hook := newHookReceiver(t)

	t.Run("Sync", func(t *testing.T) {
		for _, v := range []string{onA, auto} {
			r := ve.Complete(cv, v, nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			run := ve.Run(t, r.Map(t)["id"].(string))
			assert.Equal(t, credA, run["credentialId"], "the allowed credential answers")
			assert.Equal(t, keyA, ve.Anthropic.Last(t).Header.Get("X-Api-Key"))
		}
		assertForbidden(t, ve.Complete(cv, onB, nil), "claude-b", credB)
		assertForbidden(t, ve.Complete(cv, onA, map[string]any{"settings": map[string]any{"credentialId": credB}}), "claude-b", credB)
		assertForbidden(t, ve.Complete(cv, onGemini, nil), "gemini-g", credG)
	})
	t.Run("Stream", func(t *testing.T) {
		r := ve.Complete(cv, auto, map[string]any{"stream": true})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		id, _, _ := streamed(t, r.Body)
		assert.Equal(t, credA, ve.Run(t, id)["credentialId"])
		assertForbidden(t, ve.Complete(cv, onB, map[string]any{"stream": true}), "claude-b", credB)
		assertForbidden(t, ve.Complete(cv, auto, map[string]any{"stream": true,
			"settings": map[string]any{"credentialId": credB}}), "claude-b", credB)
	})
	t.Run("AsyncAndWebhook", func(t *testing.T) {
		r := ve.Complete(cv, auto, map[string]any{"webhook_url": hook.URL})
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		id := r.Map(t)["id"].(string)
		run := ve.WaitRun(t, id)
		assert.Equal(t, completion.StatusCompleted, run["status"], "%v", run["error"])
		assert.Equal(t, credA, run["credentialId"])
		ev := hook.next(t)
		assert.Equal(t, "completion.succeeded", ev.Event.Type)
		assert.Equal(t, id, ev.Event.Data["id"])

		assertForbidden(t, ve.Complete(cv, onB, map[string]any{"async": true}), "claude-b", credB)
		assertForbidden(t, ve.Complete(cv, onB, map[string]any{"webhook_url": hook.URL}), "claude-b", credB)
		assertForbidden(t, ve.Complete(cv, onGemini, map[string]any{"async": true}), "gemini-g", credG)
	})
	t.Run("TestCases", func(t *testing.T) {
		tc := ve.Create(t, "/test-case", map[string]any{"promptId": cv, "title": "greets",
			"variables": map[string]any{"name": "Ada"}})["id"].(string)
		generation := func(version string) map[string]any {
			r := ve.Do(http.MethodPost, "/test-case/"+tc+"/run", ve.Editor, map[string]any{"promptVersionId": version})
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			id := r.Map(t)["generationId"].(string)
			var g map[string]any
			require.Eventually(t, func() bool {
				r := ve.Do(http.MethodGet, "/test-case/generations/"+id, ve.Viewer, nil)
				g = r.Map(t)
				return g["status"] == testcase.GenerationCompleted || g["status"] == testcase.GenerationFailed
			}, 10*time.Second, 10*time.Millisecond)
			return g
		}
		g := generation(auto)
		assert.Equal(t, testcase.GenerationCompleted, g["status"], "%v", g["error"])
		assert.NotNil(t, g["cost"], "the generation ran on a priced model")

		g = generation(onB)
		require.Equal(t, testcase.GenerationFailed, g["status"])
		e := obj(g["error"])
		assert.Equal(t, canvas.EFORBIDDEN, e["code"])
		assert.Contains(t, e["message"], `"claude-b"`)
		assert.Contains(t, e["message"], credB)
	})
	t.Run("WorkflowLLM", func(t *testing.T) {
		llmSpec := func(cfg map[string]any) map[string]any {
			cfg["messages"] = []any{map[string]any{"role": "user", "content": "Greet {{name}}"}}
			return spec([]any{inputNode, node("ask", "llm", cfg), node("done", "output", nil)},
				edge("start", "out", "ask"), edge("ask", "out", "done"))
		}
		run := func(cfg map[string]any) map[string]any {
			v := ve.Create(t, "/prompt-version", map[string]any{"promptId": cv, "workflowSpec": llmSpec(cfg)})["id"].(string)
			id := ve.Create(t, workflowRunsPath, map[string]any{"versionId": v, "input": map[string]any{"name": "Ada"}})["id"].(string)
			var got map[string]any
			require.Eventually(t, func() bool {
				got = ve.Do(http.MethodGet, workflowRunsPath+"/"+id, ve.Viewer, nil).Map(t)
				return got["status"] == workflow.StatusCompleted || got["status"] == workflow.StatusFailed
			}, 10*time.Second, 10*time.Millisecond)
			for _, s := range got["steps"].([]any) {
				if obj(s)["id"] == "ask" {
					return obj(s)
				}
			}
			require.FailNow(t, "no llm step", "%v", got)
			return nil
		}
		step := run(map[string]any{"model": claude})
		require.Equal(t, workflow.StepCompleted, step["status"], "%v", step["error"])
		assert.Equal(t, credA, obj(step["metadata"])["credentialId"])
		assert.Equal(t, "Hello from anthropic", step["output"])

		for _, cfg := range []map[string]any{{"model": claude, "credentialId": credB}, {"model": "gemini-2.5-flash"}} {
			step = run(cfg)
			require.Equal(t, workflow.StepFailed, step["status"])
			e := obj(step["error"])
			assert.Equal(t, canvas.EFORBIDDEN, e["code"])
			assert.Contains(t, e["message"], "allowedCredentials")
		}
	})
	t.Run("ResolutionPrefersAllowed", func(t *testing.T) {
		onlyB := ve.Create(t, "/prompt", map[string]any{"title": "b only", "projectId": p1,
			"allowedCredentials": []string{credB}})["id"].(string)
		v := ve.Version(t, onlyB, map[string]any{"model": claude})
		r := ve.Complete(onlyB, v, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, credB, ve.Run(t, r.Map(t)["id"].(string))["credentialId"], "B is allowed, though A is older")
	})
	t.Run("Unrestricted", func(t *testing.T) {
		open := mustCanvas(t, ve.testEnv, p1, "open")["id"].(string)
		r := ve.Complete(open, ve.Version(t, open, map[string]any{"model": claude}), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, credA, ve.Run(t, r.Map(t)["id"].(string))["credentialId"], "the oldest anthropic credential")

		r = ve.Complete(open, ve.Version(t, open, map[string]any{"model": claude, "credentialId": credL}), nil)
		require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
		b := readError(t, r)
		assert.Contains(t, b.Message, `"claude-p2"`)
		assert.Contains(t, b.Message, "other projects")

		for _, m := range []string{"gpt-4o", "mistral-large-2"} {
			r = ve.Complete(open, ve.Version(t, open, map[string]any{"model": m}), nil)
			require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
			b := readError(t, r)
			assert.Contains(t, b.Message, `"`+m+`"`)
			require.NotEmpty(t, b.Details)
			assert.Equal(t, "/json/configuration/model", b.Details[0].Path)
		}
	})
	t.Run("Tasks", func(t *testing.T) {
		r := ve.Do(http.MethodPost, "/v1/tasks", ve.Editor, map[string]any{"prompt": "Say hi", "model": claude,
			"webhook_url": hook.URL})
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		id := r.Map(t)["id"].(string)
		run := ve.WaitTask(t, id)
		assert.Equal(t, completion.StatusCompleted, run["status"], "%v", run["error"])
		assert.Equal(t, credA, run["credentialId"])
		assert.Equal(t, "anthropic", run["provider"])
		assert.NotNil(t, run["cost"])
		ev := hook.next(t)
		assert.Equal(t, "task.succeeded", ev.Event.Type)
		assert.Equal(t, id, ev.Event.Data["id"])

		r = ve.Do(http.MethodPost, "/v1/tasks", ve.Editor, map[string]any{"prompt": "Say hi", "model": "mistral-large-2"})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		assert.Contains(t, readError(t, r).Message, `"mistral-large-2"`)
	})
	t.Run("SaveRefusesWhatIsNotACredential", func(t *testing.T) {
		const stranger = "00000000-0000-4000-8000-000000000000"
		r := ve.Do(http.MethodPost, "/prompt", ve.Editor, map[string]any{"title": "x", "projectId": p1,
			"allowedCredentials": []string{credA, stranger}})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		b := readError(t, r)
		require.NotEmpty(t, b.Details)
		assert.Equal(t, "/json/allowedCredentials/1", b.Details[0].Path)
		r = ve.Do(http.MethodPatch, "/prompt/"+cv, ve.Editor, map[string]any{"allowedCredentials": []string{stranger}})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	})
	ve.AssertNoKeys(t, keyA, keyB, keyG, keyL)
}
