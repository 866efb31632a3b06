package server_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/vault"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// listPage is a page of a list route: its items and meta.
type listPage struct {
	Data []map[string]any `json:"data"`
	Meta struct {
		TotalCount int `json:"totalCount"`
		Links      struct {
			Next *string `json:"next"`
		} `json:"links"`
	} `json:"meta"`
}

// mustList reads a page of a list route as token.
func mustList(t *testing.T, e *testEnv, path, token string, headers ...string) listPage {
	t.Helper()
	r := e.Do(http.MethodGet, path, token, nil, headers...)
	require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
	var p listPage
	r.JSON(t, &p)
	return p
}

// itemIDs returns the ids of a page's items.
func itemIDs(p listPage) []string {
	out := make([]string, len(p.Data))
	for i, it := range p.Data {
		out[i], _ = it["id"].(string)
	}
	return out
}

// mustComplete runs version v of ec synchronously and returns the run id.
func mustComplete(t *testing.T, e *testEnv, ec *envCanvas, v int, name string) string {
	t.Helper()
	r := e.Do(http.MethodPost, "/v2/chat/completions", e.Editor, map[string]any{
		"canvas_id": ec.Canvas.ID, "version_id": ec.Versions[v-1].ID, "variables": map[string]any{"name": name}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.Map(t)["id"].(string)
}

func TestListRoutes_Completions(t *testing.T) {
	e := newFullEnv(t)
	ec := mustEnvCanvas(t, e.testEnv, 2)
	first := mustComplete(t, e.testEnv, ec, 1, "Ada")
	second := mustComplete(t, e.testEnv, ec, 1, "Bob")
	third := mustComplete(t, e.testEnv, ec, 2, "Cy")
	task := e.Do(http.MethodPost, "/v1/tasks", e.Editor, map[string]any{"prompt": "Hello"})
	require.Equal(t, http.StatusAccepted, task.Status, "%s", task.Body)

	t.Run("NewestFirstWithRenderedMessages", func(t *testing.T) {
		p := mustList(t, e.testEnv, "/v2/chat/completions", e.Viewer)
		assert.Equal(t, 3, p.Meta.TotalCount)
		assert.Equal(t, []string{third, second, first}, itemIDs(p))
		run := p.Data[2]
		assert.Equal(t, "completion", run["kind"])
		assert.Equal(t, "completed", run["status"])
		assert.Equal(t, ec.Versions[0].ID, run["versionId"])
		msgs := run["request"].(map[string]any)["messages"].([]any)
		assert.Equal(t, "Prompt 1 for Ada", msgs[0].(map[string]any)["content"], "the rendered prompt")
		one := e.Do(http.MethodGet, "/v2/chat/completions/"+first, e.Viewer, nil)
		require.Equal(t, http.StatusOK, one.Status)
		assert.Equal(t, run, one.Map(t), "an item is the run as its read answers it")
	})
	t.Run("Filters", func(t *testing.T) {
		p := mustList(t, e.testEnv, "/v2/chat/completions?versionId="+ec.Versions[1].ID, e.Viewer)
		assert.Equal(t, []string{third}, itemIDs(p))
		p = mustList(t, e.testEnv, "/v2/chat/completions?canvasId="+ec.Canvas.ID+"&status=completed&limit=1", e.Viewer)
		assert.Equal(t, 3, p.Meta.TotalCount)
		assert.Equal(t, []string{third}, itemIDs(p))
		require.NotNil(t, p.Meta.Links.Next)
		assert.Contains(t, *p.Meta.Links.Next, "canvasId="+ec.Canvas.ID, "links repeat the filters")
		assert.Contains(t, *p.Meta.Links.Next, "status=completed")
		p = mustList(t, e.testEnv, "/v2/chat/completions?status=failed", e.Viewer)
		assert.Empty(t, p.Data)
		future := url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
		assert.Empty(t, mustList(t, e.testEnv, "/v2/chat/completions?since="+future, e.Viewer).Data)
		assert.Len(t, mustList(t, e.testEnv, "/v2/chat/completions?until="+future, e.Viewer).Data, 3)
	})
	t.Run("Invalid", func(t *testing.T) {
		past := url.QueryEscape(time.Now().Add(-time.Hour).UTC().Format(time.RFC3339))
		now := url.QueryEscape(time.Now().UTC().Format(time.RFC3339))
		r := e.Do(http.MethodGet, "/v2/chat/completions?status=done&canvasId=x&since="+now+"&until="+past+"&limit=500", e.Viewer, nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		body := string(r.Body)
		for _, path := range []string{"/query/status", "/query/canvasId", "/query/until", "/query/limit"} {
			assert.Contains(t, body, path)
		}
		r = e.Do(http.MethodGet, "/v1/tasks?since=yesterday&status=done&limit=0x", e.Viewer, nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status)
		for _, path := range []string{"/query/since", "/query/status", "/query/limit"} {
			assert.Contains(t, string(r.Body), path, "a malformed parameter is reported with the others' problems")
		}
		r = e.Do(http.MethodGet, "/v2/chat/completions?canvasId="+uuid.NewString(), e.Viewer, nil)
		assert.Equal(t, http.StatusNotFound, r.Status, "an unknown canvas")
	})
	t.Run("Tasks", func(t *testing.T) {
		p := mustList(t, e.testEnv, "/v1/tasks", e.Viewer)
		require.Equal(t, []string{task.Map(t)["id"].(string)}, itemIDs(p))
		assert.Equal(t, "task", p.Data[0]["kind"])
		assert.Equal(t, "queued", p.Data[0]["status"])
		assert.Empty(t, mustList(t, e.testEnv, "/v1/tasks?status=completed", e.Viewer).Data)
	})
	t.Run("ProjectScoped", func(t *testing.T) {
		other := &canvas.Project{Name: "other", WorkspaceID: e.Workspace.ID}
		require.NoError(t, e.Store.CreateProject(context.Background(), other))
		outside := e.Key(canvas.RoleEditor, other.ID)
		assert.Empty(t, mustList(t, e.testEnv, "/v2/chat/completions", outside).Data, "no run of another project")
		assert.Empty(t, mustList(t, e.testEnv, "/v1/tasks", outside).Data, "no task of someone else")
		own := e.Do(http.MethodPost, "/v1/tasks", outside, map[string]any{"prompt": "Mine"})
		require.Equal(t, http.StatusAccepted, own.Status)
		assert.Equal(t, []string{own.Map(t)["id"].(string)}, itemIDs(mustList(t, e.testEnv, "/v1/tasks", outside)))
		r := e.Do(http.MethodGet, "/v2/chat/completions?canvasId="+ec.Canvas.ID, outside, nil)
		assert.Equal(t, http.StatusForbidden, r.Status)
		inside := e.Key(canvas.RoleViewer, ec.Project.ID)
		assert.Len(t, mustList(t, e.testEnv, "/v2/chat/completions", inside).Data, 3)
	})
}

func TestListRoutes_WorkflowRunsAcrossCanvases(t *testing.T) {
	e := newWorkflowEnv(t)
	c := mustWorkflowCanvas(t, e)
	greet := c.mustVersion(t, e, greetSpec)
	review := c.mustVersion(t, e, reviewSpec)
	a := e.start(t, greet, map[string]any{"name": "Ada"})["id"].(string)
	b := e.start(t, review, map[string]any{"name": "Bob"})["id"].(string)
	e.waitStatus(t, b, workflow.StatusWaitingForReview)

	p := mustList(t, e.testEnv, "/workflow/runs", e.Viewer)
	assert.Equal(t, []string{b, a}, itemIDs(p), "every reachable canvas's runs, newest first")
	p = mustList(t, e.testEnv, "/workflow/runs?versionId="+review, e.Viewer)
	assert.Equal(t, []string{b}, itemIDs(p))
	p = mustList(t, e.testEnv, "/workflow/runs?promptId="+c.ID+"&status="+workflow.StatusWaitingForReview, e.Viewer)
	assert.Equal(t, []string{b}, itemIDs(p))
	future := url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	assert.Empty(t, mustList(t, e.testEnv, "/workflow/runs?since="+future, e.Viewer).Data)

	other := mustProjectID(t, e.testEnv, "elsewhere")
	assert.Empty(t, mustList(t, e.testEnv, "/workflow/runs", e.Key(canvas.RoleViewer, other)).Data,
		"a key of another project reaches none")
	r := e.Do(http.MethodGet, "/workflow/runs?versionId=nope", e.Viewer, nil)
	require.Equal(t, http.StatusUnprocessableEntity, r.Status)
	assert.Contains(t, string(r.Body), "/query/versionId")
	r = e.Do(http.MethodGet, "/workflow/runs?until=soon&versionId=nope&offset=-1", e.Viewer, nil)
	require.Equal(t, http.StatusUnprocessableEntity, r.Status)
	for _, path := range []string{"/query/until", "/query/versionId", "/query/offset"} {
		assert.Contains(t, string(r.Body), path, "a malformed parameter is reported with the others' problems")
	}
}

func TestListRoutes_Files(t *testing.T) {
	e := newFullEnv(t)
	w := &world{e: e}
	date := []string{"x-compatibility-date", compatDate}
	uploaded := w.NewFile(t)
	pending := e.Do(http.MethodPost, "/v3/files", e.Editor, map[string]any{"fileName": "later.pdf"}, date...)
	require.Equal(t, http.StatusCreated, pending.Status)
	pendingID := pending.Map(t)["id"].(string)

	p := mustList(t, e.testEnv, "/v3/files", e.Viewer, date...)
	assert.Equal(t, []string{pendingID, uploaded}, itemIDs(p), "newest first")
	assert.Equal(t, vault.StatusPending, p.Data[0]["status"])
	assert.Equal(t, vault.StatusUploaded, p.Data[1]["status"])
	assert.Equal(t, float64(len("secret notes")), p.Data[1]["size"])
	assert.Equal(t, []string{uploaded}, itemIDs(mustList(t, e.testEnv, "/v3/files?status=uploaded", e.Viewer, date...)))

	r := e.Do(http.MethodGet, "/v3/files", e.Viewer, nil)
	assert.Equal(t, http.StatusBadRequest, r.Status, "the compatibility date is required")
	r = e.Do(http.MethodGet, "/v3/files?status=gone", e.Viewer, nil, date...)
	require.Equal(t, http.StatusUnprocessableEntity, r.Status)
	assert.Contains(t, string(r.Body), "/query/status")

	other := mustProjectID(t, e.testEnv, "other")
	restricted := e.Key(canvas.RoleEditor, other)
	assert.Empty(t, mustList(t, e.testEnv, "/v3/files", restricted, date...).Data, "a restricted key lists only its own files")
}

func TestAPIKeys_Routes(t *testing.T) {
	e := newFullEnv(t)
	project := mustProjectID(t, e.testEnv, "p")

	created := e.Do(http.MethodPost, "/api-keys", e.Admin, map[string]any{"role": "editor", "projects": []string{project, project},
		"name": "  Ada's laptop "})
	require.Equal(t, http.StatusCreated, created.Status, "%s", created.Body)
	key := created.Map(t)
	token, _ := key["token"].(string)
	id, _ := key["id"].(string)
	require.True(t, canvas.IsAPIKeyToken(token), token)
	assert.Equal(t, "editor", key["role"])
	assert.Equal(t, []any{project}, key["projects"], "projects once each")
	assert.Equal(t, "Ada's laptop", key["name"], "trimmed")
	assert.NotContains(t, string(created.Body), canvas.HashToken(token), "never the hash")

	t.Run("TokenWorks", func(t *testing.T) {
		assert.Equal(t, http.StatusOK, e.Do(http.MethodGet, "/prompt", token, nil).Status)
	})
	t.Run("ListedWithoutSecret", func(t *testing.T) {
		r := e.Do(http.MethodGet, "/api-keys", e.Admin, nil)
		require.Equal(t, http.StatusOK, r.Status)
		assert.NotContains(t, string(r.Body), token)
		assert.NotContains(t, string(r.Body), canvas.HashToken(token))
		assert.NotContains(t, string(r.Body), `"token"`)
		var p listPage
		r.JSON(t, &p)
		assert.Equal(t, 4, p.Meta.TotalCount, "the env's three keys and the new one")
		assert.Contains(t, itemIDs(p), id)
		p = mustList(t, e.testEnv, "/api-keys?limit=1&offset=3", e.Admin)
		assert.Equal(t, []string{id}, itemIDs(p), "oldest first, paged")
		assert.Equal(t, "Ada's laptop", p.Data[0]["name"])
		p = mustList(t, e.testEnv, "/api-keys?limit=1", e.Admin)
		assert.Equal(t, "", p.Data[0]["name"], "a key made without a name")
	})
	t.Run("Invalid", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/api-keys", e.Admin, map[string]any{"role": "owner", "projects": []string{}})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		assert.Contains(t, string(r.Body), "/json/role")
		for _, name := range []any{" \u00a0", strings.Repeat("n", 101), "a\u0007b", 5} {
			r = e.Do(http.MethodPost, "/api-keys", e.Admin, map[string]any{"role": "viewer", "name": name})
			requireInvalidAt(t, r, "/json/name")
		}
		r = e.Do(http.MethodPost, "/api-keys", e.Admin, map[string]any{"role": "viewer", "projects": []string{uuid.NewString()}})
		assert.Equal(t, http.StatusNotFound, r.Status, "a project of no one")
		r = e.Do(http.MethodGet, "/api-keys?limit=0&offset=-1", e.Admin, nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	})
	t.Run("Forbidden", func(t *testing.T) {
		restricted := e.Key(canvas.RoleAdmin, project)
		for _, tok := range []string{e.Editor, restricted} {
			assert.Equal(t, http.StatusForbidden, e.Do(http.MethodGet, "/api-keys", tok, nil).Status)
			assert.Equal(t, http.StatusForbidden, e.Do(http.MethodPost, "/api-keys", tok, map[string]any{"role": "admin"}).Status)
		}
	})
	t.Run("Revoke", func(t *testing.T) {
		other := &canvas.Workspace{Name: "other"}
		require.NoError(t, e.Store.CreateWorkspace(context.Background(), other))
		stranger := e.KeyIn(other.ID, canvas.RoleAdmin)
		assert.Equal(t, http.StatusNotFound, e.Do(http.MethodDelete, "/api-keys/"+id, stranger, nil).Status,
			"a key of another workspace does not exist")

		r := e.Do(http.MethodDelete, "/api-keys/"+id, e.Admin, nil)
		require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
		assert.Equal(t, http.StatusUnauthorized, e.Do(http.MethodGet, "/prompt", token, nil).Status, "a revoked key is refused")
		assert.Equal(t, http.StatusNoContent, e.Do(http.MethodDelete, "/api-keys/"+id, e.Admin, nil).Status, "again: a no-op")
		p := mustList(t, e.testEnv, "/api-keys?limit=1&offset=3", e.Admin)
		require.Len(t, p.Data, 1)
		assert.NotNil(t, p.Data[0]["revokedAt"])

		self, err := e.Store.GetAPIKeyByHash(context.Background(), canvas.HashToken(e.Admin))
		require.NoError(t, err)
		r = e.Do(http.MethodDelete, "/api-keys/"+self.ID, e.Admin, nil)
		assert.Equal(t, http.StatusConflict, r.Status, "the request's own key")
		assert.True(t, strings.Contains(string(r.Body), "another admin key"), "%s", r.Body)
	})
}
