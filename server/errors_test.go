package server_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/server"
)

// errorBody is the error body as a client reads it.
type errorBody struct {
	Code      string          `json:"code"`
	Message   string          `json:"message"`
	Details   []canvas.Detail `json:"details"`
	RequestID string          `json:"requestId"`
}

func readError(t *testing.T, r *testResponse) errorBody {
	t.Helper()
	var b errorBody
	r.JSON(t, &b)
	assert.NotEmpty(t, b.Message, "every error has a message")
	assert.Equal(t, r.Header.Get("X-Request-Id"), b.RequestID, "the body carries the request id of the header")
	assert.Equal(t, server.ErrorStatus(b.Code), r.Status, "the status is the one of the code")
	return b
}

func TestServer_Errors(t *testing.T) {
	e := newTestEnv(t)

	t.Run("Unauthorized", func(t *testing.T) {
		r := e.Do(http.MethodGet, "/prompt", "", nil)
		require.Equal(t, http.StatusUnauthorized, r.Status)
		b := readError(t, r)
		assert.Equal(t, canvas.EUNAUTHORIZED, b.Code)
		assert.Empty(t, b.Details)
	})
	t.Run("UnknownRoute", func(t *testing.T) {
		r := e.Do(http.MethodGet, "/no-such-thing", e.Admin, nil)
		require.Equal(t, http.StatusNotFound, r.Status)
		assert.Equal(t, canvas.ENOTFOUND, readError(t, r).Code)
	})
	t.Run("UnknownRouteWithoutToken", func(t *testing.T) {
		r := e.Do(http.MethodGet, "/no-such-thing", "", nil)
		require.Equal(t, http.StatusNotFound, r.Status, "an unknown route is 404 before authentication")
		assert.Equal(t, canvas.ENOTFOUND, readError(t, r).Code)
	})
	t.Run("MethodNotAllowed", func(t *testing.T) {
		r := e.Do(http.MethodPut, "/projects", e.Admin, map[string]any{"name": "p"})
		require.Equal(t, http.StatusMethodNotAllowed, r.Status)
		assert.Equal(t, canvas.EMETHODNOTALLOWED, readError(t, r).Code)
		allow := r.Header.Get("Allow")
		assert.Contains(t, allow, http.MethodGet)
		assert.Contains(t, allow, http.MethodPost)
	})
	t.Run("MalformedJSON", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/projects", e.Admin, `{"name":`)
		require.Equal(t, http.StatusBadRequest, r.Status)
		assert.Equal(t, canvas.EBADREQUEST, readError(t, r).Code)
	})
	t.Run("TrailingGarbage", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/projects", e.Admin, `{"name":"p"} {}`)
		require.Equal(t, http.StatusBadRequest, r.Status)
		assert.Equal(t, canvas.EBADREQUEST, readError(t, r).Code)
	})
	t.Run("PayloadTooLarge", func(t *testing.T) {
		big := `{"name":"` + strings.Repeat("x", server.DefaultMaxBodyBytes+1024) + `"}`
		r := e.Do(http.MethodPost, "/projects", e.Admin, big)
		require.Equal(t, http.StatusRequestEntityTooLarge, r.Status)
		assert.Equal(t, canvas.EPAYLOADTOOLARGE, readError(t, r).Code)
	})
	t.Run("ValidationBody", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/prompt", e.Admin, map[string]any{
			"title":         strings.Repeat("t", 257),
			"layoutVersion": "v9",
			"projectId":     "not-a-uuid",
		})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status)
		b := readError(t, r)
		assert.Equal(t, canvas.EINVALID, b.Code)
		assert.ElementsMatch(t, []canvas.Detail{
			{Path: "/json/layoutVersion", Message: `must be one of "v1", "v2"`},
			{Path: "/json/projectId", Message: "must be a UUID"},
			{Path: "/json/title", Message: "must be at most 256 characters"},
		}, b.Details, "every problem is listed")
	})
	t.Run("ValidationMissingRequired", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/projects", e.Admin, map[string]any{})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status)
		b := readError(t, r)
		assert.Equal(t, canvas.EINVALID, b.Code)
		assert.Equal(t, []canvas.Detail{{Path: "/json/name", Message: "is required"}}, b.Details)
	})
	t.Run("ValidationGoType", func(t *testing.T) {
		// 1.0 is an integer to JSON Schema but not to encoding/json: the
		// detail names the field without Go's own error text.
		canvasID := mustCreate(t, e, "/prompt", e.Admin, map[string]any{
			"title": "c", "projectId": mustCreate(t, e, "/projects", e.Admin, map[string]any{"name": "go-type"})["id"]})["id"]
		versionID := mustCreate(t, e, "/prompt-version", e.Admin, map[string]any{"promptId": canvasID})["id"]
		r := e.Do(http.MethodPost, "/prompt-version-message", e.Admin,
			`{"promptVersionId":"`+versionID.(string)+`","role":"system","content":"hi","index":1.0}`)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status)
		assert.Equal(t, []canvas.Detail{{Path: "/json/index", Message: "has the wrong type"}}, readError(t, r).Details)
	})
	t.Run("ValidationQuery", func(t *testing.T) {
		r := e.Do(http.MethodGet, "/prompt-version", e.Admin, nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status)
		b := readError(t, r)
		assert.Equal(t, canvas.EINVALID, b.Code)
		require.Len(t, b.Details, 1)
		assert.Equal(t, "/query/promptId", b.Details[0].Path)
	})
}

func TestServer_RequestID(t *testing.T) {
	e := newTestEnv(t)

	t.Run("Echoed", func(t *testing.T) {
		r := e.Do(http.MethodGet, "/prompt", "", nil, "X-Request-Id", "client-id_1.2")
		assert.Equal(t, "client-id_1.2", r.Header.Get("X-Request-Id"))
		assert.Equal(t, "client-id_1.2", readError(t, r).RequestID)
	})
	t.Run("Generated", func(t *testing.T) {
		r := e.Do(http.MethodGet, "/healthz", "", nil)
		require.Equal(t, http.StatusOK, r.Status)
		assert.Regexp(t, regexp.MustCompile(`^[0-9a-f]{24}$`), r.Header.Get("X-Request-Id"))
	})
	t.Run("Unique", func(t *testing.T) {
		a := e.Do(http.MethodGet, "/healthz", "", nil).Header.Get("X-Request-Id")
		b := e.Do(http.MethodGet, "/healthz", "", nil).Header.Get("X-Request-Id")
		assert.NotEqual(t, a, b)
	})
	t.Run("UnsafeReplaced", func(t *testing.T) {
		r := e.Do(http.MethodGet, "/prompt", "", nil, "X-Request-Id", "bad id<script>")
		id := r.Header.Get("X-Request-Id")
		assert.NotEqual(t, "bad id<script>", id)
		assert.Regexp(t, regexp.MustCompile(`^[0-9a-f]{24}$`), id)
		assert.Equal(t, id, readError(t, r).RequestID)
	})
}

func TestServer_InternalError(t *testing.T) {
	e := newTestEnv(t)
	token := e.Admin
	// A closed store fails every query with a driver error: the caller must
	// see the generic message, never the cause.
	require.NoError(t, e.Store.Close())

	t.Run("HidesInternals", func(t *testing.T) {
		r := e.Do(http.MethodGet, "/prompt", token, nil)
		require.Equal(t, http.StatusInternalServerError, r.Status)
		b := readError(t, r)
		assert.Equal(t, canvas.EINTERNAL, b.Code)
		assert.Equal(t, "Internal error.", b.Message)
		assert.Empty(t, b.Details)
		body := strings.ToLower(string(r.Body))
		for _, leak := range []string{"sql", "database", "closed", "driver"} {
			assert.NotContains(t, body, leak)
		}
	})
	t.Run("Health", func(t *testing.T) {
		r := e.Do(http.MethodGet, "/healthz", "", nil)
		require.Equal(t, http.StatusInternalServerError, r.Status)
		assert.Equal(t, canvas.EINTERNAL, readError(t, r).Code)
	})
}

func TestServer_OpenAPI(t *testing.T) {
	e := newTestEnv(t)

	t.Run("OK", func(t *testing.T) {
		r := e.Do(http.MethodGet, "/openapi.json", "", nil)
		require.Equal(t, http.StatusOK, r.Status)
		assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
		doc := r.Map(t)
		assert.Equal(t, "3.1.0", doc["openapi"])
		info, _ := doc["info"].(map[string]any)
		assert.Equal(t, "1.0.0", info["version"])
		assert.NotEmpty(t, r.Header.Get("ETag"))
	})
	t.Run("NotModified", func(t *testing.T) {
		etag := e.Do(http.MethodGet, "/openapi.json", "", nil).Header.Get("ETag")
		r := e.Do(http.MethodGet, "/openapi.json", "", nil, "If-None-Match", etag)
		assert.Equal(t, http.StatusNotModified, r.Status)
		assert.Empty(t, r.Body)
	})
}
