package server_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// envState is what an environment serves and how long its history is.
type envState struct {
	Active  *string
	History int
}

// protectedState reads what each environment of ids serves, and the
// length of its history.
func protectedState(t *testing.T, e *testEnv, canvasID string, names []string) map[string]envState {
	t.Helper()
	out := map[string]envState{}
	r := e.Do(http.MethodGet, "/environment?resourceType=prompt&resourceId="+canvasID, e.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var list []struct {
		Name            string  `json:"name"`
		ActiveVersionID *string `json:"activeVersionId"`
	}
	r.JSON(t, &list)
	for _, env := range list {
		for _, name := range names {
			if env.Name != name {
				continue
			}
			h := e.Do(http.MethodGet, "/environment/versions?resourceType=prompt&resourceId="+canvasID+"&envName="+name, e.Viewer, nil)
			require.Equal(t, http.StatusOK, h.Status, "%s", h.Body)
			var page struct {
				Meta struct {
					Total int `json:"total"`
				} `json:"meta"`
			}
			h.JSON(t, &page)
			out[name] = envState{Active: env.ActiveVersionID, History: page.Meta.Total}
		}
	}
	require.Len(t, out, len(names))
	return out
}

// protect protects an environment through the API.
func protect(t *testing.T, e *testEnv, envID string, body map[string]any) map[string]any {
	t.Helper()
	r := e.Do(http.MethodPatch, "/environment/"+envID, e.Admin, body)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.Map(t)
}

// TestProtected_EveryWriteRoute sends the request of every write route of
// the server (the route table's, plus each way a write can publish)
// against a world whose every environment is protected: the routes that
// would change what a protected environment serves answer 409
// APPROVAL_REQUIRED pointing at publication requests, the others what
// they always answer, and after each one every protected environment
// serves what it did, with the same history.
func TestProtected_EveryWriteRoute(t *testing.T) {
	e := newFullEnv(t)
	w := newWorld(t, e)
	staging := mustCreate(t, e.testEnv, "/environment", e.Editor, map[string]any{"resourceType": "prompt",
		"resourceId": w.Canvas, "name": "staging"})
	publishTo(t, e.testEnv, w.Canvas, "staging", w.Version)

	// The world's environments, protected; the policy route itself is the
	// admin's and is tested on its own.
	r := e.Do(http.MethodGet, "/environment?resourceType=prompt&resourceId="+w.Canvas, e.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status)
	var envs []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	r.JSON(t, &envs)
	var names []string
	for _, env := range envs {
		got := protect(t, e.testEnv, env.ID, map[string]any{"protected": true, "requiredApprovals": 2})
		assert.Equal(t, true, got["protected"])
		assert.Equal(t, float64(2), got["requiredApprovals"])
		names = append(names, env.Name)
	}
	before := protectedState(t, e.testEnv, w.Canvas, names)

	// Each way a write can change what a protected environment serves.
	other := w.NewVersion(t)
	publishing := []routeCase{
		{"POST /environment/publish", canvas.RoleEditor, true, 409, fixed("/environment/publish", map[string]any{
			"resourceType": "prompt", "resourceId": w.Canvas, "envName": "production", "versionId": other})},
		{"POST /environment/publish", canvas.RoleEditor, true, 409, fixed("/environment/publish", map[string]any{
			"resourceType": "prompt", "resourceId": w.Canvas, "envName": "staging", "versionId": other})},
		{"PATCH /prompt-version/{id}", canvas.RoleEditor, true, 409, fixed("/prompt-version/"+other,
			map[string]any{"promoted": true})},
		{"PATCH /prompt-version/{id}", canvas.RoleEditor, true, 409, fixed("/prompt-version/"+w.Version,
			map[string]any{"promoted": false})},
		{"PATCH /prompt-version/{id}", canvas.RoleEditor, true, 409, fixed("/prompt-version/"+w.Version,
			map[string]any{"content": "Goodbye {{name}}"})},
		{"PATCH /prompt-version/{id}", canvas.RoleEditor, true, 409, fixed("/prompt-version/"+w.Version,
			map[string]any{"configuration": map[string]any{"temperature": 1}})},
		{"PATCH /prompt-version/{id}", canvas.RoleEditor, true, 409, fixed("/prompt-version/"+w.Version,
			map[string]any{"messages": []map[string]any{{"role": "system", "content": "Bye"}}})},
	}
	// The route table's requests that touch the version production and
	// staging serve.
	refused := map[string]bool{
		"POST /environment/publish":           true,
		"POST /prompt-version-message":        true,
		"PATCH /prompt-version-message/{id}":  true,
		"DELETE /prompt-version-message/{id}": true,
	}
	approval := len(publishing)
	cases := routeCases(w)
	requireEveryRoute(t, cases)
	for _, c := range cases {
		if c.method() == http.MethodGet || c.route == "PATCH /environment/{id}" {
			continue
		}
		if refused[c.route] {
			c.ok = http.StatusConflict
		}
		if c.route == "DELETE /prompt-version-message/{id}" {
			// The table's request makes its victim on the served version
			// first, which is refused already: delete one it has.
			c.request = fixed("/prompt-version-message/"+w.Message, nil)
		}
		publishing = append(publishing, c)
	}
	for i, c := range publishing {
		t.Run(c.route, func(t *testing.T) {
			r := c.send(t, e.testEnv, e.Admin)
			require.Equal(t, c.ok, r.Status, "%s", r.Body)
			if i < approval || refused[c.route] {
				b := readError(t, r)
				assert.Equal(t, canvas.EAPPROVALREQUIRED, b.Code)
				assert.Contains(t, b.Message, "POST /publication-requests")
			}
			assert.Equal(t, before, protectedState(t, e.testEnv, w.Canvas, names), "every protected environment is as it was")
		})
	}

	t.Run("ProtectedEnvironmentIsNotDeleted", func(t *testing.T) {
		r := e.Do(http.MethodDelete, "/environment/"+staging["id"].(string), e.Editor, nil)
		require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
		assert.Equal(t, canvas.ECONFLICT, readError(t, r).Code)
	})
}

// TestEnvironment_SetPolicy covers the policy route: who may call it and
// what it refuses.
func TestEnvironment_SetPolicy(t *testing.T) {
	e := newTestEnv(t)
	c := mustCanvas(t, e, mustProjectID(t, e, "p"), "c")
	id := c["id"].(string)
	r := e.Do(http.MethodGet, "/environment?resourceType=prompt&resourceId="+id, e.Viewer, nil)
	require.Equal(t, http.StatusOK, r.Status)
	var envs []map[string]any
	r.JSON(t, &envs)
	prod := envs[0]["id"].(string)
	assert.Equal(t, false, envs[0]["protected"])
	assert.Equal(t, float64(0), envs[0]["requiredApprovals"])
	assert.Nil(t, envs[0]["requiredExperiment"])

	t.Run("EditorIsForbidden", func(t *testing.T) {
		r := e.Do(http.MethodPatch, "/environment/"+prod, e.Editor, map[string]any{"protected": true})
		require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	})
	t.Run("DefaultsToOneApproval", func(t *testing.T) {
		got := protect(t, e, prod, map[string]any{"protected": true})
		assert.Equal(t, float64(1), got["requiredApprovals"])
	})
	t.Run("Invalid", func(t *testing.T) {
		for _, c := range []struct {
			body map[string]any
			path string
		}{
			{map[string]any{"protected": true, "requiredApprovals": 6}, "/json/requiredApprovals"},
			{map[string]any{"protected": true, "requiredApprovals": 0}, "/json/requiredApprovals"},
			{map[string]any{"protected": true, "requiredExperiment": map[string]any{"tagIds": []string{}, "minPassRate": 1.5}},
				"/json/requiredExperiment/minPassRate"},
			{map[string]any{"protected": true, "requiredExperiment": map[string]any{
				"tagIds": []string{"11111111-1111-4111-8111-111111111111"}, "minPassRate": 0.5}}, "/json/requiredExperiment/tagIds/0"},
			{map[string]any{"protected": false, "requiredApprovals": 2}, "/json/requiredApprovals"},
			{map[string]any{"requiredApprovals": 2}, "/json/protected"},
		} {
			r := e.Do(http.MethodPatch, "/environment/"+prod, e.Admin, c.body)
			require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%v: %s", c.body, r.Body)
			b := readError(t, r)
			require.NotEmpty(t, b.Details)
			assert.Equal(t, c.path, b.Details[0].Path, "%v", c.body)
		}
	})
	t.Run("Unprotect", func(t *testing.T) {
		got := protect(t, e, prod, map[string]any{"protected": false})
		assert.Equal(t, false, got["protected"])
		assert.Equal(t, float64(0), got["requiredApprovals"])
	})
	t.Run("NotFound", func(t *testing.T) {
		r := e.Do(http.MethodPatch, "/environment/"+prod, e.KeyIn(mustWorkspace(t, e, "other"), canvas.RoleAdmin),
			map[string]any{"protected": true})
		require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
	})
}

// publishTo publishes a version to a named environment of a canvas.
func publishTo(t *testing.T, e *testEnv, canvasID, envName, versionID string) {
	t.Helper()
	r := e.Do(http.MethodPost, "/environment/publish", e.Editor, map[string]any{"resourceType": "prompt",
		"resourceId": canvasID, "envName": envName, "versionId": versionID})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
}
