package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// includeWorld is a project of a full test server whose canvases include
// one another.
type includeWorld struct {
	*fullEnv
	t       *testing.T
	project string
}

func newIncludeWorld(t *testing.T) *includeWorld {
	fe := newFullEnv(t)
	res := fe.Do("POST", "/projects", fe.Admin, map[string]any{"name": "compose"})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	return &includeWorld{fullEnv: fe, t: t, project: res.Map(t)["id"].(string)}
}

// canvas creates a canvas of the project and returns its id.
func (w *includeWorld) canvas(title string) string {
	w.t.Helper()
	res := w.Do("POST", "/prompt", w.Editor, map[string]any{"title": title, "projectId": w.project})
	require.Equal(w.t, http.StatusCreated, res.Status, "%s", res.Body)
	return res.Map(w.t)["id"].(string)
}

// version creates a version of canvasID with one system message and the
// variables, and returns the response.
func (w *includeWorld) version(canvasID, content string, vars ...map[string]any) *testResponse {
	w.t.Helper()
	body := map[string]any{"promptId": canvasID, "configuration": map[string]any{"model": "echo"},
		"message": map[string]any{"role": "system", "content": content}}
	if vars != nil {
		body["variables"] = vars
	}
	return w.Do("POST", "/prompt-version", w.Editor, body)
}

// mustVersion is version requiring a 201; it returns the version id.
func (w *includeWorld) mustVersion(canvasID, content string, vars ...map[string]any) string {
	w.t.Helper()
	res := w.version(canvasID, content, vars...)
	require.Equal(w.t, http.StatusCreated, res.Status, "%s", res.Body)
	return res.Map(w.t)["id"].(string)
}

// publish publishes a version to an environment of its canvas.
func (w *includeWorld) publish(canvasID, envName, versionID string) {
	w.t.Helper()
	res := w.Do("POST", "/environment/publish", w.Editor, map[string]any{"resourceType": "prompt",
		"resourceId": canvasID, "envName": envName, "versionId": versionID})
	require.Contains(w.t, []int{http.StatusOK, http.StatusCreated}, res.Status, "%s", res.Body)
}

func (w *includeWorld) read(canvasID, envName string, resolve bool, headers ...string) *testResponse {
	q := "/environment/version?resourceType=prompt&resourceId=" + canvasID + "&envName=" + envName
	if resolve {
		q += "&resolve=true"
	}
	return w.Do("GET", q, w.Viewer, nil, headers...)
}

func TestIncludes_ResolveAndPin(t *testing.T) {
	w := newIncludeWorld(t)
	persona := w.canvas("Persona")
	safety := w.canvas("Safety")
	bot := w.canvas("Bot")
	safetyV1 := w.mustVersion(safety, "Be safe, {{name}}.",
		map[string]any{"name": "name", "type": "text", "required": true})
	w.publish(safety, "production", safetyV1)
	personaV1 := w.mustVersion(persona, "You are kind. {{> "+safety+"}}")
	w.publish(persona, "production", personaV1)
	res := w.Do("POST", "/environment", w.Editor, map[string]any{"resourceType": "prompt", "resourceId": persona, "name": "staging"})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	w.publish(persona, "staging", personaV1)
	botV1 := w.mustVersion(bot, "{{>  "+persona+"@staging }}\nAnswer {{name}}: {{> "+safety+"@v1}}")
	w.publish(bot, "production", botV1)

	t.Run("ResolvedRead", func(t *testing.T) {
		plain := w.read(bot, "production", false)
		require.Equal(t, http.StatusOK, plain.Status, "%s", plain.Body)
		assert.NotContains(t, plain.Map(t), "resolvedMessages")
		res := w.read(bot, "production", true)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		var v struct {
			ResolvedMessages []struct{ Content string }
			Includes         []canvas.Include
		}
		res.JSON(t, &v)
		require.Len(t, v.ResolvedMessages, 1)
		assert.Equal(t, "You are kind. Be safe, {{name}}.\nAnswer {{name}}: Be safe, {{name}}.", v.ResolvedMessages[0].Content)
		assert.ElementsMatch(t, []canvas.Include{
			{CanvasID: persona, Environment: "staging", VersionID: personaV1},
			{CanvasID: safety, Environment: "production", VersionID: safetyV1},
			{CanvasID: safety, VersionID: safetyV1, VersionIndex: 1},
		}, v.Includes)
		assert.Equal(t, plain.Header.Get("ETag"), res.Header.Get("ETag"), "one tag for both reads")
	})

	var runID string
	t.Run("RunRendersAndRecords", func(t *testing.T) {
		res := w.Do("POST", "/v2/chat/completions", w.Editor, map[string]any{"canvas_id": bot})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "the include's required variable: %s", res.Body)
		assert.Contains(t, string(res.Body), "/json/variables/name")

		res = w.Do("POST", "/v2/chat/completions", w.Editor, map[string]any{"canvas_id": bot,
			"variables": map[string]any{"name": "Ada"}})
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		runID = res.Map(t)["id"].(string)
		run := w.Do("GET", "/v2/chat/completions/"+runID, w.Viewer, nil)
		require.Equal(t, http.StatusOK, run.Status, "%s", run.Body)
		var r struct {
			Request struct {
				Messages []struct{ Content string }
			}
			Includes []canvas.Include
		}
		run.JSON(t, &r)
		assert.Equal(t, "You are kind. Be safe, Ada.\nAnswer Ada: Be safe, Ada.", r.Request.Messages[0].Content)
		assert.Len(t, r.Includes, 3)
	})

	t.Run("ETagFollowsIncludedEnvironment", func(t *testing.T) {
		before := w.read(bot, "production", false)
		etag := before.Header.Get("ETag")
		// A long poll on the dependent wakes when a twice-removed include
		// is published anew.
		polled := make(chan *http.Response, 1)
		go func() {
			req, _ := http.NewRequest("GET", w.URL+"/environment/version?resourceType=prompt&resourceId="+bot+
				"&envName=production&resolve=true&wait=20s", nil)
			req.Header.Set("Authorization", "Bearer "+w.Viewer)
			req.Header.Set("If-None-Match", etag)
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			polled <- resp
		}()
		time.Sleep(100 * time.Millisecond)
		safetyV2 := w.mustVersion(safety, "Be very safe, {{name}}.")
		w.publish(safety, "production", safetyV2)
		select {
		case resp := <-polled:
			require.NotNil(t, resp)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.NotEqual(t, etag, resp.Header.Get("ETag"))
		case <-time.After(15 * time.Second):
			t.Fatal("the long poll did not wake")
		}
		after := w.read(bot, "production", true)
		assert.NotEqual(t, etag, after.Header.Get("ETag"))
		assert.Equal(t, after.Header.Get("ETag"), w.read(bot, "production", false).Header.Get("ETag"))
		assert.Contains(t, string(after.Body), "You are kind. Be very safe, {{name}}.")
		assert.Contains(t, string(after.Body), "Answer {{name}}: Be safe, {{name}}.", "@v1 stays")
		assert.Equal(t, http.StatusNotModified, w.read(bot, "production", true, "If-None-Match", after.Header.Get("ETag")).Status)
	})

	t.Run("GenerationUsesPinned", func(t *testing.T) {
		res := w.Do("POST", "/test-case", w.Editor, map[string]any{"promptId": bot,
			"variables": map[string]any{"name": "Bo"}})
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
		tcID := res.Map(t)["id"].(string)
		res = w.Do("POST", "/test-case/"+tcID+"/run", w.Editor, map[string]any{"promptVersionId": botV1})
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		genID := res.Map(t)["generationId"].(string)
		// Published after the generation was asked for: not what it runs.
		safetyV3 := w.mustVersion(safety, "Changed later.")
		w.publish(safety, "production", safetyV3)
		w.RunGenerations(t)
		require.Eventually(t, func() bool {
			g := w.Do("GET", "/test-case/generations/"+genID, w.Viewer, nil).Map(t)
			return g["status"] == "completed"
		}, 10*time.Second, 20*time.Millisecond)
		g := w.Do("GET", "/test-case/generations/"+genID, w.Viewer, nil).Map(t)
		assert.Contains(t, g["output"], "Be very safe, Bo.")
		assert.NotContains(t, g["output"], "Changed later.")
	})
}

func TestIncludes_Refused(t *testing.T) {
	w := newIncludeWorld(t)
	a := w.canvas("A")
	b := w.canvas("B")
	aV1 := w.mustVersion(a, "A plain")
	w.publish(a, "production", aV1)
	bV1 := w.mustVersion(b, "B includes {{> "+a+"}}")
	w.publish(b, "production", bV1)

	detail := func(t *testing.T, res *testResponse) string {
		t.Helper()
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
		var e struct{ Details []canvas.Detail }
		res.JSON(t, &e)
		require.NotEmpty(t, e.Details)
		return e.Details[0].Path + " " + e.Details[0].Message
	}
	t.Run("CycleAtSave", func(t *testing.T) {
		d := detail(t, w.version(a, "A includes {{> "+b+"}}"))
		assert.Contains(t, d, "/json/message/content")
		assert.Contains(t, d, a+" → "+b+"@production → "+a+"@production")
		assert.Contains(t, d, "cycle")
		assert.Contains(t, detail(t, w.version(a, "self {{> "+a+"@v1}}")), "cycle")
	})
	t.Run("MissingAtSave", func(t *testing.T) {
		assert.Contains(t, detail(t, w.version(b, "{{> 6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f}}")), "does not exist")
		assert.Contains(t, detail(t, w.version(b, "{{> "+a+"@staging}}")), "no staging environment")
		assert.Contains(t, detail(t, w.version(b, "{{> "+a+"@v9}}")), "no version 9")
		assert.Contains(t, detail(t, w.version(b, "{{> not-a-canvas}}")), "is not an include")
	})
	t.Run("DepthAtSave", func(t *testing.T) {
		prev := a
		for i := 0; i < 5; i++ {
			c := w.canvas("D")
			w.publish(c, "production", w.mustVersion(c, "level {{> "+prev+"}}"))
			prev = c
		}
		// prev includes five levels: a sixth is refused.
		top := w.canvas("Top")
		assert.Contains(t, detail(t, w.version(top, "{{> "+prev+"}}")), "deeper than 5")
	})
	t.Run("ForbiddenAtSave", func(t *testing.T) {
		res := w.Do("POST", "/projects", w.Admin, map[string]any{"name": "other"})
		other := res.Map(t)["id"].(string)
		hidden := w.Do("POST", "/prompt", w.Editor, map[string]any{"title": "Hidden", "projectId": other}).Map(t)["id"].(string)
		w.publish(hidden, "production", w.mustVersion(hidden, "secret"))
		restricted := w.Key(canvas.RoleEditor, w.project)
		res = w.Do("POST", "/prompt-version", restricted, map[string]any{"promptId": b,
			"message": map[string]any{"content": "{{> " + hidden + "}}"}})
		assert.Contains(t, detail(t, res), "cannot be read")
	})
	t.Run("CycleAtRun", func(t *testing.T) {
		// Made through the store, past the save check, as an import of
		// an older release could.
		ctx := context.Background()
		v := &canvas.Version{PromptID: a, WorkspaceID: w.Workspace.ID, CreatedBy: "t", UpdatedBy: "t",
			Configuration: canvas.Configuration{Model: "echo"},
			Messages:      []canvas.Message{{Role: canvas.RoleSystem, Content: "A again {{> " + b + "}}", CreatedBy: "t", UpdatedBy: "t"}}}
		require.NoError(t, w.Store.CreateVersion(ctx, v))
		w.publish(a, "production", v.ID)
		d := detail(t, w.Do("POST", "/v2/chat/completions", w.Editor, map[string]any{"canvas_id": b}))
		assert.Contains(t, d, "cycle")
		assert.Contains(t, detail(t, w.read(b, "production", true)), "cycle")
		// The plain read still serves the version.
		assert.Equal(t, http.StatusOK, w.read(b, "production", false).Status)
		w.publish(a, "production", aV1)
	})
}

func TestIncludes_Dependents(t *testing.T) {
	w := newIncludeWorld(t)
	a := w.canvas("A")
	b := w.canvas("B")
	aV1 := w.mustVersion(a, "A plain")
	w.publish(a, "production", aV1)
	res := w.Do("POST", "/environment", w.Editor, map[string]any{"resourceType": "prompt", "resourceId": a, "name": "staging"})
	require.Equal(t, http.StatusCreated, res.Status)
	stagingID := res.Map(t)["id"].(string)
	w.publish(a, "staging", aV1)
	aV2 := w.mustVersion(a, "A two")
	bV1 := w.mustVersion(b, "{{> "+a+"@staging}} {{> "+a+"@v2}}")

	res = w.Do("GET", "/prompt/"+a+"/dependents", w.Viewer, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var deps []canvas.Dependent
	res.JSON(t, &deps)
	assert.Equal(t, []canvas.Dependent{
		{CanvasID: b, VersionID: bV1, VersionIndex: 1, Environment: "staging"},
		{CanvasID: b, VersionID: bV1, VersionIndex: 1, IncludedVersionIndex: 2},
	}, deps)
	res = w.Do("GET", "/prompt/"+b+"/dependents", w.Viewer, nil)
	require.Equal(t, http.StatusOK, res.Status)
	assert.JSONEq(t, "[]", string(res.Body))

	conflict := func(res *testResponse) {
		t.Helper()
		require.Equal(t, http.StatusConflict, res.Status, "%s", res.Body)
		assert.Contains(t, string(res.Body), "/dependents/0")
		assert.Contains(t, string(res.Body), b)
	}
	conflict(w.Do("DELETE", "/environment/"+stagingID, w.Editor, nil))
	conflict(w.Do("DELETE", "/prompt-version/"+aV2, w.Editor, nil))
	conflict(w.Do("DELETE", "/prompt/"+a, w.Editor, nil))
	assert.Equal(t, http.StatusNoContent, w.Do("DELETE", "/prompt-version/"+aV2+"?force=true", w.Editor, nil).Status)
	assert.Equal(t, http.StatusNoContent, w.Do("DELETE", "/environment/"+stagingID+"?force=true", w.Editor, nil).Status)
	// B's includes no longer resolve: a run says so, naming the chain.
	w.publish(b, "production", bV1)
	res = w.Do("POST", "/v2/chat/completions", w.Editor, map[string]any{"canvas_id": b})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	assert.True(t, strings.Contains(string(res.Body), b+" → "+a+"@staging"), "%s", res.Body)
	assert.Equal(t, http.StatusNoContent, w.Do("DELETE", "/prompt/"+a+"?force=true", w.Editor, nil).Status)
}
