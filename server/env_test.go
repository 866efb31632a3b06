package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// envCanvas is a canvas of a project, with versions, for the environment
// tests; it is created through the store so that these tests depend only on
// the environment endpoints.
type envCanvas struct {
	e        *testEnv
	Project  *canvas.Project
	Canvas   *canvas.Canvas
	Versions []*canvas.Version
}

// mustEnvCanvas creates a project, a canvas in it and n versions; version i
// (1-based) has the title "v<i>" and the system prompt "Prompt <i> for
// {{name}}".
func mustEnvCanvas(t testing.TB, e *testEnv, n int) *envCanvas {
	t.Helper()
	ctx := context.Background()
	p := &canvas.Project{Name: "support", WorkspaceID: e.Workspace.ID}
	require.NoError(t, e.Store.CreateProject(ctx, p))
	c := &canvas.Canvas{
		Title: "Support bot", ProjectID: &p.ID, WorkspaceID: e.Workspace.ID,
		InferencesPercentage: "0", LayoutVersion: canvas.LayoutV2, CustomTags: []string{"support"},
		CreatedBy: "tester", UpdatedBy: "tester",
	}
	require.NoError(t, e.Store.CreateCanvas(ctx, c))
	ec := &envCanvas{e: e, Project: p, Canvas: c}
	temp := 0.3
	for i := 1; i <= n; i++ {
		v := &canvas.Version{
			PromptID: c.ID, Title: fmt.Sprintf("v%d", i), WorkspaceID: e.Workspace.ID,
			Configuration: canvas.Configuration{Model: "echo", Type: "chat", Temperature: &temp},
			Variables:     []canvas.Variable{{Name: "name", Type: canvas.VariableText, Required: true, Description: "Who asks"}},
			CreatedBy:     "tester", UpdatedBy: "tester",
			Messages: []canvas.Message{{
				Role: canvas.RoleSystem, Content: fmt.Sprintf("Prompt %d for {{name}}", i),
				CreatedBy: "tester", UpdatedBy: "tester",
			}},
		}
		require.NoError(t, e.Store.CreateVersion(ctx, v))
		ec.Versions = append(ec.Versions, v)
	}
	return ec
}

// target returns the query string that selects an environment of the canvas.
func (ec *envCanvas) target(envName string) string {
	return "resourceType=prompt&resourceId=" + ec.Canvas.ID + "&envName=" + url.QueryEscape(envName)
}

// publish publishes version i (1-based) to envName and returns the response.
func (ec *envCanvas) publish(token, envName string, i int) *testResponse {
	return ec.e.Do("POST", "/environment/publish", token, map[string]any{
		"resourceType": "prompt", "resourceId": ec.Canvas.ID, "envName": envName, "versionId": ec.Versions[i-1].ID,
	})
}

// mustPublish publishes version i and requires a 201.
func (ec *envCanvas) mustPublish(t testing.TB, envName string, i int) map[string]any {
	t.Helper()
	res := ec.publish(ec.e.Editor, envName, i)
	require.Equal(t, http.StatusCreated, res.Status, "publish: %s", res.Body)
	return res.Map(t)
}

// mustCreateEnv creates a custom environment and returns its id.
func (ec *envCanvas) mustCreateEnv(t testing.TB, name string) string {
	t.Helper()
	res := ec.e.Do("POST", "/environment", ec.e.Editor, map[string]any{
		"resourceType": "prompt", "resourceId": ec.Canvas.ID, "name": name,
	})
	require.Equal(t, http.StatusCreated, res.Status, "create environment: %s", res.Body)
	return res.Map(t)["id"].(string)
}

// historyPage is the decoded pagination envelope of a history page.
type historyPage struct {
	Data []map[string]any `json:"data"`
	Meta struct {
		TotalCount    int            `json:"totalCount"`
		Limit         int            `json:"limit"`
		Offset        int            `json:"offset"`
		CurrentPage   int            `json:"currentPage"`
		TotalPages    int            `json:"totalPages"`
		LastReference *int64         `json:"lastReference"`
		Links         map[string]any `json:"links"`
	} `json:"meta"`
}

func (ec *envCanvas) mustHistory(t testing.TB, envName, extra string) historyPage {
	t.Helper()
	res := ec.e.Do("GET", "/environment/versions?"+ec.target(envName)+extra, ec.e.Viewer, nil)
	require.Equal(t, http.StatusOK, res.Status, "history: %s", res.Body)
	var page historyPage
	res.JSON(t, &page)
	return page
}

func versionIDs(page historyPage) []string {
	ids := make([]string, len(page.Data))
	for i, item := range page.Data {
		ids[i], _ = item["versionId"].(string)
	}
	return ids
}

func TestEnvironment_History(t *testing.T) {
	t.Run("ProductionOnDemand", func(t *testing.T) {
		e := newTestEnv(t)
		ec := mustEnvCanvas(t, e, 1)
		res := e.Do("GET", "/environment/versions?"+ec.target("production"), e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		body := res.Map(t)
		assert.Equal(t, []any{}, body["data"])
		q := "?" + ec.target("production") + "&limit=20&offset=0"
		assert.Equal(t, map[string]any{
			"totalCount": 0.0, "limit": 20.0, "offset": 0.0, "currentPage": 1.0, "totalPages": 1.0,
			"links": map[string]any{"first": q, "last": q, "next": nil, "previous": nil},
		}, body["meta"], "an empty history is one empty page, without lastReference")
	})
	t.Run("PublishReplaceRollback", func(t *testing.T) {
		e := newTestEnv(t)
		ec := mustEnvCanvas(t, e, 2)
		v1, v2 := ec.Versions[0].ID, ec.Versions[1].ID
		first := ec.mustPublish(t, "production", 1)
		assert.Equal(t, true, first["isActive"])
		assert.Nil(t, first["unpublishedAt"])
		assert.Equal(t, 1.0, first["versionIndex"])
		assert.Equal(t, "production", first["environmentName"])
		assert.Equal(t, true, first["environmentIsSystem"])
		assert.Equal(t, "v1", first["title"])
		assert.Equal(t, ec.Canvas.ID, first["promptId"])
		assert.NotEmpty(t, first["publishedAt"])
		assert.Equal(t, "key:", first["publishedBy"].(string)[:4], "an API key publishes as key:<id>")

		ec.mustPublish(t, "production", 2)
		page := ec.mustHistory(t, "production", "")
		assert.Equal(t, []string{v2, v1}, versionIDs(page), "newest first")
		assert.Equal(t, []any{true, false}, []any{page.Data[0]["isActive"], page.Data[1]["isActive"]})
		assert.Nil(t, page.Data[0]["unpublishedAt"])
		assert.NotNil(t, page.Data[1]["unpublishedAt"], "the replaced publication is unpublished")
		assert.Equal(t, []any{2.0, 1.0}, []any{page.Data[0]["versionIndex"], page.Data[1]["versionIndex"]})
		assert.Equal(t, first["publicationId"], page.Data[1]["publicationId"])

		// Rollback: publishing the older version again makes a new publication.
		rollback := ec.mustPublish(t, "production", 1)
		assert.NotEqual(t, first["publicationId"], rollback["publicationId"])
		page = ec.mustHistory(t, "production", "")
		assert.Equal(t, []string{v1, v2, v1}, versionIDs(page))
		assert.Equal(t, []any{true, false, false}, []any{page.Data[0]["isActive"], page.Data[1]["isActive"], page.Data[2]["isActive"]})
		assert.Equal(t, 3, page.Meta.TotalCount)
		require.NotNil(t, page.Meta.LastReference)
		assert.Equal(t, int64(1), *page.Meta.LastReference, "the last item of the page is the first publication")
	})
	t.Run("PublishNoOp", func(t *testing.T) {
		e := newTestEnv(t)
		ec := mustEnvCanvas(t, e, 1)
		first := ec.mustPublish(t, "production", 1)
		res := ec.publish(e.Editor, "production", 1)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		again := res.Map(t)
		assert.Equal(t, first["publicationId"], again["publicationId"])
		assert.Equal(t, true, again["isActive"])
		assert.Equal(t, 1, ec.mustHistory(t, "production", "").Meta.TotalCount)
	})
	t.Run("CustomEnvironment", func(t *testing.T) {
		e := newTestEnv(t)
		ec := mustEnvCanvas(t, e, 2)
		ec.mustCreateEnv(t, "staging")
		assert.Empty(t, ec.mustHistory(t, "staging", "").Data)
		ec.mustPublish(t, " staging ", 2)
		page := ec.mustHistory(t, "  staging", "")
		require.Len(t, page.Data, 1)
		assert.Equal(t, "staging", page.Data[0]["environmentName"])
		assert.Equal(t, false, page.Data[0]["environmentIsSystem"])
		assert.Equal(t, 2.0, page.Data[0]["versionIndex"])
		assert.Equal(t, "?"+ec.target("staging")+"&limit=20&offset=0", page.Meta.Links["first"], "links carry the trimmed name")
		assert.Empty(t, ec.mustHistory(t, "production", "").Data, "environments keep separate histories")
	})
}

func TestEnvironment_HistoryPaging(t *testing.T) {
	e := newTestEnv(t)
	ec := mustEnvCanvas(t, e, 2)
	// Five publications alternating v1, v2: seq 1..5, newest (seq 5) is v1.
	for i := range 5 {
		ec.mustPublish(t, "production", i%2+1)
	}
	link := func(limit, offset int) string {
		return fmt.Sprintf("?%s&limit=%d&offset=%d", ec.target("production"), limit, offset)
	}
	tests := []struct {
		name                string
		query               string
		wantLimit, wantOff  int
		wantLen, wantPage   int
		wantPages           int
		wantLastRef         int64
		wantNext, wantPrev  any
		wantFirst, wantLast string
	}{
		{"Default", "", 20, 0, 5, 1, 1, 1, nil, nil, link(20, 0), link(20, 0)},
		{"FirstPage", "&limit=2", 2, 0, 2, 1, 3, 4, link(2, 2), nil, link(2, 0), link(2, 4)},
		{"MiddlePage", "&limit=2&offset=2", 2, 2, 2, 2, 3, 2, link(2, 4), link(2, 0), link(2, 0), link(2, 4)},
		{"LastPage", "&limit=2&offset=4", 2, 4, 1, 3, 3, 1, nil, link(2, 2), link(2, 0), link(2, 4)},
		{"UnalignedOffset", "&limit=2&offset=1", 2, 1, 2, 1, 3, 3, link(2, 3), link(2, 0), link(2, 0), link(2, 4)},
		{"LimitZeroClampsToOne", "&limit=0", 1, 0, 1, 1, 5, 5, link(1, 1), nil, link(1, 0), link(1, 4)},
		{"LimitNegativeClampsToOne", "&limit=-4", 1, 0, 1, 1, 5, 5, link(1, 1), nil, link(1, 0), link(1, 4)},
		{"LimitClampsTo100", "&limit=1000", 100, 0, 5, 1, 1, 1, nil, nil, link(100, 0), link(100, 0)},
		{"NegativeOffsetClampsToZero", "&limit=2&offset=-3", 2, 0, 2, 1, 3, 4, link(2, 2), nil, link(2, 0), link(2, 4)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := ec.mustHistory(t, "production", tt.query)
			assert.Len(t, page.Data, tt.wantLen)
			assert.Equal(t, 5, page.Meta.TotalCount)
			assert.Equal(t, tt.wantLimit, page.Meta.Limit)
			assert.Equal(t, tt.wantOff, page.Meta.Offset)
			assert.Equal(t, tt.wantPage, page.Meta.CurrentPage)
			assert.Equal(t, tt.wantPages, page.Meta.TotalPages)
			if assert.NotNil(t, page.Meta.LastReference) {
				assert.Equal(t, tt.wantLastRef, *page.Meta.LastReference)
			}
			assert.Equal(t, map[string]any{
				"first": tt.wantFirst, "last": tt.wantLast, "next": tt.wantNext, "previous": tt.wantPrev,
			}, page.Meta.Links)
		})
	}
	t.Run("Order", func(t *testing.T) {
		v1, v2 := ec.Versions[0].ID, ec.Versions[1].ID
		assert.Equal(t, []string{v1, v2, v1, v2, v1}, versionIDs(ec.mustHistory(t, "production", "")))
		assert.Equal(t, []string{v2, v1}, versionIDs(ec.mustHistory(t, "production", "&limit=2&offset=3")))
	})
	t.Run("PastTheEnd", func(t *testing.T) {
		page := ec.mustHistory(t, "production", "&limit=2&offset=50")
		assert.Empty(t, page.Data)
		assert.Nil(t, page.Meta.LastReference, "no lastReference on an empty page")
		assert.Nil(t, page.Meta.Links["next"])
		assert.Equal(t, link(2, 4), page.Meta.Links["previous"], "previous leads back to the last page")
	})
	t.Run("ObjectLinks", func(t *testing.T) {
		page := ec.mustHistory(t, "production", "&limit=2&offset=2&objectLinks=true")
		obj := func(offset int) map[string]any {
			return map[string]any{
				"limit": 2.0, "offset": float64(offset),
				"resourceType": "prompt", "resourceId": ec.Canvas.ID, "envName": "production",
			}
		}
		assert.Equal(t, map[string]any{
			"first": obj(0), "last": obj(4), "next": obj(4), "previous": obj(0),
		}, page.Meta.Links)
		page = ec.mustHistory(t, "production", "&limit=2&objectLinks=true")
		assert.Nil(t, page.Meta.Links["previous"])
		page = ec.mustHistory(t, "production", "&limit=2&offset=4&objectLinks=true")
		assert.Nil(t, page.Meta.Links["next"])
	})
	t.Run("ObjectLinksFalse", func(t *testing.T) {
		page := ec.mustHistory(t, "production", "&limit=2&objectLinks=false")
		assert.Equal(t, link(2, 0), page.Meta.Links["first"])
	})
}

func TestEnvironment_Version(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := newTestEnv(t)
		ec := mustEnvCanvas(t, e, 2)
		ec.mustPublish(t, "production", 2)
		res := e.Do("GET", "/environment/version?"+ec.target("production"), e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		v := res.Map(t)
		assert.Equal(t, ec.Versions[1].ID, v["id"])
		assert.Equal(t, ec.Canvas.ID, v["promptId"])
		assert.Equal(t, "v2", v["title"])
		assert.Equal(t, e.Workspace.ID, v["workspaceId"])
		assert.Equal(t, 2.0, v["versionIndex"])
		assert.Equal(t, true, v["promoted"])
		assert.Equal(t, false, v["titleLocked"])
		assert.Equal(t, "Prompt 2 for {{name}}", v["content"])
		assert.Equal(t, []any{"support"}, v["promptCustomTags"])
		assert.Equal(t, map[string]any{"model": "echo", "type": "chat", "temperature": 0.3}, v["configuration"])
		assert.Equal(t, []any{map[string]any{
			"name": "name", "type": "text", "required": true, "description": "Who asks",
			"processingOptions": map[string]any{"allowMultimodal": false},
		}}, v["variables"])
		msg, _ := v["message"].(map[string]any)
		require.NotNil(t, msg)
		assert.Equal(t, "system", msg["role"])
		assert.Equal(t, "Prompt 2 for {{name}}", msg["content"])
		assert.Equal(t, 0.0, msg["index"])
		msgs, _ := v["messages"].([]any)
		require.Len(t, msgs, 1)
		assert.Equal(t, msg, msgs[0])
	})
	t.Run("FollowsPublication", func(t *testing.T) {
		e := newTestEnv(t)
		ec := mustEnvCanvas(t, e, 2)
		ec.mustCreateEnv(t, "staging")
		ec.mustPublish(t, "staging", 1)
		ec.mustPublish(t, "staging", 2)
		ec.mustPublish(t, "staging", 1)
		res := e.Do("GET", "/environment/version?"+ec.target("staging"), e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		v := res.Map(t)
		assert.Equal(t, ec.Versions[0].ID, v["id"], "the rolled-back version is served")
		assert.Equal(t, false, v["promoted"], "staging is not production")
	})
}

// TestEnvironment_Promoted checks that publishing to production and the
// promoted flag are one fact.
func TestEnvironment_Promoted(t *testing.T) {
	e := newTestEnv(t)
	ec := mustEnvCanvas(t, e, 2)
	promoted := func(i int) any {
		res := e.Do("GET", "/prompt-version/"+ec.Versions[i-1].ID, e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		return res.Map(t)["promoted"]
	}
	assert.Equal(t, []any{false, false}, []any{promoted(1), promoted(2)})
	pub := ec.mustPublish(t, "production", 1)
	assert.Equal(t, true, pub["promoted"])
	assert.Equal(t, []any{true, false}, []any{promoted(1), promoted(2)})
	ec.mustPublish(t, "production", 2)
	assert.Equal(t, []any{false, true}, []any{promoted(1), promoted(2)})

	// The other way: promoting through the version publishes to production.
	res := e.Do("PATCH", "/prompt-version/"+ec.Versions[0].ID, e.Editor, map[string]any{"promoted": true})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	page := ec.mustHistory(t, "production", "")
	require.NotEmpty(t, page.Data)
	assert.Equal(t, ec.Versions[0].ID, page.Data[0]["versionId"])
	assert.Equal(t, true, page.Data[0]["isActive"])

	// A custom environment does not promote.
	ec.mustCreateEnv(t, "staging")
	ec.mustPublish(t, "staging", 2)
	assert.Equal(t, []any{true, false}, []any{promoted(1), promoted(2)})
}

func TestEnvironment_Manage(t *testing.T) {
	e := newTestEnv(t)
	ec := mustEnvCanvas(t, e, 1)
	list := func() []map[string]any {
		res := e.Do("GET", "/environment?resourceType=prompt&resourceId="+ec.Canvas.ID, e.Viewer, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		var envs []map[string]any
		res.JSON(t, &envs)
		return envs
	}
	envs := list()
	require.Len(t, envs, 1, "production exists on demand")
	assert.Equal(t, "production", envs[0]["name"])
	assert.Equal(t, true, envs[0]["isSystem"])
	assert.Nil(t, envs[0]["activeVersionId"])
	productionID := envs[0]["id"].(string)

	res := e.Do("POST", "/environment", e.Editor, map[string]any{"resourceType": "prompt", "resourceId": ec.Canvas.ID, "name": " qa-1 "})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	created := res.Map(t)
	assert.Equal(t, "qa-1", created["name"])
	assert.Equal(t, false, created["isSystem"])
	assert.Equal(t, ec.Canvas.ID, created["resourceId"])
	assert.Equal(t, "prompt", created["resourceType"])
	assert.Nil(t, created["activeVersionId"])

	ec.mustPublish(t, "qa-1", 1)
	envs = list()
	require.Len(t, envs, 2)
	assert.Equal(t, []any{"production", "qa-1"}, []any{envs[0]["name"], envs[1]["name"]})
	assert.Equal(t, ec.Versions[0].ID, envs[1]["activeVersionId"])

	res = e.Do("POST", "/environment", e.Editor, map[string]any{"resourceType": "prompt", "resourceId": ec.Canvas.ID, "name": "qa-1"})
	assert.Equal(t, http.StatusConflict, res.Status, "duplicate name")
	assert.Equal(t, "CONFLICT", res.Code(t))

	res = e.Do("DELETE", "/environment/"+productionID, e.Editor, nil)
	assert.Equal(t, http.StatusConflict, res.Status, "production cannot be deleted")
	res = e.Do("DELETE", "/environment/"+created["id"].(string), e.Viewer, nil)
	assert.Equal(t, http.StatusForbidden, res.Status, "viewers cannot delete")

	res = e.Do("DELETE", "/environment/"+created["id"].(string), e.Editor, nil)
	require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Body)
	assert.Empty(t, res.Body)
	assert.Len(t, list(), 1)
	res = e.Do("GET", "/environment/versions?"+ec.target("qa-1"), e.Viewer, nil)
	assert.Equal(t, http.StatusNotFound, res.Status, "a deleted environment's history is gone")
	res = e.Do("DELETE", "/environment/"+created["id"].(string), e.Editor, nil)
	assert.Equal(t, http.StatusNotFound, res.Status, "deleting twice")
}

func TestEnvironment_Errors(t *testing.T) {
	e := newTestEnv(t)
	ec := mustEnvCanvas(t, e, 1)
	ec.mustCreateEnv(t, "empty")
	otherProject := &canvas.Project{Name: "other", WorkspaceID: e.Workspace.ID}
	require.NoError(t, e.Store.CreateProject(context.Background(), otherProject))
	restricted := e.Key(canvas.RoleAdmin, otherProject.ID)
	allowed := e.Key(canvas.RoleViewer, ec.Project.ID)
	foreignWS := &canvas.Workspace{Name: "elsewhere"}
	require.NoError(t, e.Store.CreateWorkspace(context.Background(), foreignWS))
	foreign := e.KeyIn(foreignWS.ID, canvas.RoleAdmin)
	missing := "7d3a1c9e-2b4f-4e6a-9c8d-0f1e2d3c4b5a"
	v1 := ec.Versions[0].ID

	publish := func(canvasID, envName, versionID string) map[string]any {
		return map[string]any{"resourceType": "prompt", "resourceId": canvasID, "envName": envName, "versionId": versionID}
	}
	create := func(name string) map[string]any {
		return map[string]any{"resourceType": "prompt", "resourceId": ec.Canvas.ID, "name": name}
	}
	hist := "/environment/versions?"
	ver := "/environment/version?"
	tests := []struct {
		name       string
		method     string
		path       string
		token      string
		body       any
		wantStatus int
		wantCode   string
		wantPaths  []string // detail paths of a 422
	}{
		// 400: invalid environment name, in every endpoint that takes one.
		{"HistoryReservedName", "GET", hist + ec.target("latest"), e.Viewer, nil, 400, "INVALID_ENVIRONMENT_NAME", nil},
		{"HistoryUppercase", "GET", hist + ec.target("Staging"), e.Viewer, nil, 400, "INVALID_ENVIRONMENT_NAME", nil},
		{"HistoryUUIDName", "GET", hist + ec.target(missing), e.Viewer, nil, 400, "INVALID_ENVIRONMENT_NAME", nil},
		{"HistoryTooLong", "GET", hist + ec.target(strings.Repeat("a", 65)), e.Viewer, nil, 400, "INVALID_ENVIRONMENT_NAME", nil},
		{"VersionDoubleHyphen", "GET", ver + ec.target("qa--1"), e.Viewer, nil, 400, "INVALID_ENVIRONMENT_NAME", nil},
		{"PublishReserved", "POST", "/environment/publish", e.Editor, publish(ec.Canvas.ID, "draft", v1), 400, "INVALID_ENVIRONMENT_NAME", nil},
		{"PublishBlank", "POST", "/environment/publish", e.Editor, publish(ec.Canvas.ID, "  ", v1), 400, "INVALID_ENVIRONMENT_NAME", nil},
		{"CreateProduction", "POST", "/environment", e.Editor, create("production"), 400, "INVALID_ENVIRONMENT_NAME", nil},
		{"CreateTrailingHyphen", "POST", "/environment", e.Editor, create("qa-"), 400, "INVALID_ENVIRONMENT_NAME", nil},
		{"CreateUUID", "POST", "/environment", e.Editor, create(missing), 400, "INVALID_ENVIRONMENT_NAME", nil},
		{"MalformedJSON", "POST", "/environment/publish", e.Editor, `{"resourceType":`, 400, "BAD_REQUEST", nil},

		// 401: missing or invalid key.
		{"HistoryNoToken", "GET", hist + ec.target("production"), "", nil, 401, "UNAUTHORIZED", nil},
		{"HistoryUnknownKey", "GET", hist + ec.target("production"), missing, nil, 401, "UNAUTHORIZED", nil},
		{"PublishNoToken", "POST", "/environment/publish", "", publish(ec.Canvas.ID, "production", v1), 401, "UNAUTHORIZED", nil},
		{"VersionGarbageToken", "GET", ver + ec.target("production"), "not-a-token", nil, 401, "UNAUTHORIZED", nil},

		// 403: role too weak, or the canvas' project out of reach.
		{"PublishViewer", "POST", "/environment/publish", e.Viewer, publish(ec.Canvas.ID, "production", v1), 403, "FORBIDDEN", nil},
		{"CreateViewer", "POST", "/environment", e.Viewer, create("qa"), 403, "FORBIDDEN", nil},
		{"PublishRestrictedKey", "POST", "/environment/publish", restricted, publish(ec.Canvas.ID, "production", v1), 403, "FORBIDDEN", nil},
		{"HistoryRestrictedKey", "GET", hist + ec.target("production"), restricted, nil, 403, "FORBIDDEN", nil},
		{"VersionRestrictedKey", "GET", ver + ec.target("production"), restricted, nil, 403, "FORBIDDEN", nil},
		{"ListRestrictedKey", "GET", "/environment?resourceType=prompt&resourceId=" + ec.Canvas.ID, restricted, nil, 403, "FORBIDDEN", nil},
		{"HistoryProjectKey", "GET", hist + ec.target("production"), allowed, nil, 200, "", nil},

		// 404: missing canvas, missing custom environment, nothing published.
		{"HistoryMissingCanvas", "GET", hist + "resourceType=prompt&envName=production&resourceId=" + missing, e.Viewer, nil, 404, "NOT_FOUND", nil},
		{"HistoryOtherWorkspace", "GET", hist + ec.target("production"), foreign, nil, 404, "NOT_FOUND", nil},
		{"HistoryMissingCustom", "GET", hist + ec.target("staging"), e.Viewer, nil, 404, "NOT_FOUND", nil},
		{"VersionMissingCustom", "GET", ver + ec.target("staging"), e.Viewer, nil, 404, "NOT_FOUND", nil},
		{"VersionNothingPublished", "GET", ver + ec.target("production"), e.Viewer, nil, 404, "NOT_FOUND", nil},
		{"VersionCustomNothingPublished", "GET", ver + ec.target("empty"), e.Viewer, nil, 404, "NOT_FOUND", nil},
		{"PublishMissingCustom", "POST", "/environment/publish", e.Editor, publish(ec.Canvas.ID, "staging", v1), 404, "NOT_FOUND", nil},
		{"PublishMissingCanvas", "POST", "/environment/publish", e.Editor, publish(missing, "production", v1), 404, "NOT_FOUND", nil},
		{"PublishMissingVersion", "POST", "/environment/publish", e.Editor, publish(ec.Canvas.ID, "production", missing), 404, "NOT_FOUND", nil},
		{"CreateMissingCanvas", "POST", "/environment", e.Editor, map[string]any{"resourceType": "prompt", "resourceId": missing, "name": "qa"}, 404, "NOT_FOUND", nil},
		{"ListMissingCanvas", "GET", "/environment?resourceType=prompt&resourceId=" + missing, e.Viewer, nil, 404, "NOT_FOUND", nil},
		{"DeleteMissing", "DELETE", "/environment/" + missing, e.Editor, nil, 404, "NOT_FOUND", nil},

		// 422: query and body validation, every problem listed.
		{"HistoryNoParams", "GET", hist, e.Viewer, nil, 422, "VALIDATION", []string{"/query/resourceType", "/query/resourceId", "/query/envName"}},
		{"HistoryWrongType", "GET", hist + "resourceType=agent&resourceId=" + ec.Canvas.ID + "&envName=production", e.Viewer, nil, 422, "VALIDATION", []string{"/query/resourceType"}},
		{"HistoryBadUUID", "GET", hist + "resourceType=prompt&resourceId=abc&envName=production", e.Viewer, nil, 422, "VALIDATION", []string{"/query/resourceId"}},
		{"HistoryBadPaging", "GET", hist + ec.target("production") + "&limit=ten&offset=x&objectLinks=maybe", e.Viewer, nil, 422, "VALIDATION", []string{"/query/limit", "/query/offset", "/query/objectLinks"}},
		{"VersionNoEnvName", "GET", ver + "resourceType=prompt&resourceId=" + ec.Canvas.ID, e.Viewer, nil, 422, "VALIDATION", []string{"/query/envName"}},
		{"ListNoResource", "GET", "/environment?resourceType=prompt", e.Viewer, nil, 422, "VALIDATION", []string{"/query/resourceId"}},
		{"DeleteBadID", "DELETE", "/environment/nope", e.Editor, nil, 422, "VALIDATION", []string{"/path/id"}},
		{"PublishEmptyBody", "POST", "/environment/publish", e.Editor, map[string]any{}, 422, "VALIDATION", []string{"/json/resourceType", "/json/resourceId", "/json/envName", "/json/versionId"}},
		{"PublishWrongTypes", "POST", "/environment/publish", e.Editor, map[string]any{"resourceType": "agent", "resourceId": "abc", "envName": 5, "versionId": ec.Canvas.ID}, 422, "VALIDATION", []string{"/json/resourceType", "/json/resourceId", "/json/envName"}},
		{"CreateNoName", "POST", "/environment", e.Editor, map[string]any{"resourceType": "prompt", "resourceId": ec.Canvas.ID}, 422, "VALIDATION", []string{"/json/name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.Do(tt.method, tt.path, tt.token, tt.body)
			require.Equal(t, tt.wantStatus, res.Status, "%s", res.Body)
			if tt.wantCode == "" {
				return
			}
			body := res.Map(t)
			assert.Equal(t, tt.wantCode, body["code"])
			assert.NotEmpty(t, body["message"])
			assert.NotEmpty(t, body["requestId"])
			if tt.wantPaths != nil {
				var got []string
				details, _ := body["details"].([]any)
				for _, d := range details {
					got = append(got, d.(map[string]any)["path"].(string))
				}
				assert.ElementsMatch(t, tt.wantPaths, got, "details: %v", details)
			}
		})
	}
}
